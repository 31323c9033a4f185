package io.gpusync.linux;

import io.gpusync.SyncPoint;
import io.gpusync.spi.Deadline;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** How {@code poll(2)} timeouts are chosen for a deadline. */
class FdPollTest {

    @Test
    void aFiniteWaitBeyondPollsRangeWaitsInSlicesAndNeverBecomesInfinite() {
        // 2^31 ms and more do not fit poll's int timeout; they used to become -1, i.e. wait forever
        assertThat(FdPoll.sliceMillis(Deadline.after(Duration.ofMillis(1L << 31)))).isEqualTo(Integer.MAX_VALUE);
        assertThat(FdPoll.sliceMillis(Deadline.after(Duration.ofDays(365)))).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void onlyADeadlineThatNeverPassesWaitsForeverAndSubMillisecondWaitsRoundUp() {
        assertThat(FdPoll.sliceMillis(Deadline.after(SyncPoint.FOREVER))).isEqualTo(-1);
        assertThat(FdPoll.sliceMillis(Deadline.after(Duration.ofNanos(1)))).isBetween(0, 1);
        assertThat(FdPoll.sliceMillis(Deadline.after(Duration.ZERO))).isZero();
    }
}
