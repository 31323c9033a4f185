package io.gpusync.kit;

import io.gpusync.spi.Timeouts;


import io.gpusync.SyncPoint;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TimeoutsTest {
    private static final long VK_INFINITE = -1L; // UINT64_MAX
    private static final long POLL_INFINITE = -1L;

    @Test
    void foreverMapsToTheNativeInfiniteSentinel() {
        assertThat(Timeouts.toNanos(SyncPoint.FOREVER, VK_INFINITE)).isEqualTo(VK_INFINITE);
        assertThat(Timeouts.toMillisCeil(SyncPoint.FOREVER, Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(POLL_INFINITE);
        assertThat(Timeouts.isForever(SyncPoint.FOREVER)).isTrue();
        assertThat(Deadline.after(SyncPoint.FOREVER).isForever()).isTrue();
        assertThat(Deadline.after(SyncPoint.FOREVER).remainingNanos()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void anythingBeyondTheApiRangeClampsToInfiniteWithoutOverflow() {
        Duration huge = Duration.ofDays(365L * 1000); // beyond 2^63 ns
        assertThat(Timeouts.toNanos(huge, VK_INFINITE)).isEqualTo(VK_INFINITE);
        Duration sixtyDays = Duration.ofDays(60); // fits in ns, not in poll's int milliseconds
        assertThat(Timeouts.toNanos(sixtyDays, VK_INFINITE)).isEqualTo(sixtyDays.toNanos());
        assertThat(Timeouts.toMillisCeil(sixtyDays, Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(POLL_INFINITE);
        assertThat(Deadline.after(huge).hasPassed()).isFalse();
        assertThat(Deadline.after(Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L - 1)).hasPassed()).isFalse();
    }

    @Test
    void zeroIsAProbe() {
        assertThat(Timeouts.toNanos(Duration.ZERO, VK_INFINITE)).isZero();
        assertThat(Timeouts.toMillisCeil(Duration.ZERO, Integer.MAX_VALUE, POLL_INFINITE)).isZero();
        assertThat(Deadline.after(Duration.ZERO).hasPassed()).isTrue();
    }

    @Test
    void aPositiveSubMillisecondTimeoutRoundsUpToOneMillisecondNeverDownToZero() {
        assertThat(Timeouts.toMillisCeil(Duration.ofNanos(1), Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(1);
        assertThat(Timeouts.toMillisCeil(Duration.ofNanos(100_000), Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(1);
        assertThat(Timeouts.toMillisCeil(Duration.ofNanos(1_000_001), Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(2);
        assertThat(Timeouts.toMillisCeil(Duration.ofMillis(7), Integer.MAX_VALUE, POLL_INFINITE)).isEqualTo(7);
    }

    @Test
    void nanosecondApisHonourTheDurationExactly() {
        assertThat(Timeouts.toNanos(Duration.ofNanos(1), VK_INFINITE)).isEqualTo(1);
        assertThat(Timeouts.toNanos(Duration.ofMillis(250), VK_INFINITE)).isEqualTo(250_000_000L);
    }

    @Test
    void aNegativeDurationIsAnIllegalArgument() {
        assertThatThrownBy(() -> Timeouts.requireValid(Duration.ofNanos(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> Timeouts.toNanos(Duration.ofMillis(-5), VK_INFINITE))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SyncPoint.CPU.await(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Timeouts.requireValid(null)).isInstanceOf(NullPointerException.class);
    }
}
