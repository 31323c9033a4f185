package io.gpusync.linux;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How one {@code poll(2)} slice's timeout is chosen. */
class FdPollTest {

    @Test
    void aSliceBeyondPollsRangeIsCappedAndNeverBecomesInfinite() {
        // 2^31 ms and more do not fit poll's int timeout; they used to become -1, i.e. wait forever
        assertThat(FdPoll.sliceMillis((1L << 31) * 1_000_000L)).isEqualTo(Integer.MAX_VALUE);
        assertThat(FdPoll.sliceMillis(Long.MAX_VALUE - 1)).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void onlyAnEndlessSliceWaitsForeverZeroProbesAndSubMillisecondSlicesRoundUp() {
        assertThat(FdPoll.sliceMillis(Long.MAX_VALUE)).isEqualTo(-1);
        assertThat(FdPoll.sliceMillis(0)).isZero();
        assertThat(FdPoll.sliceMillis(1)).isEqualTo(1); // never a 0 that would spin
        assertThat(FdPoll.sliceMillis(1_000_000)).isEqualTo(1);
        assertThat(FdPoll.sliceMillis(1_000_001)).isEqualTo(2);
    }
}
