package io.gpusync.metal;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.internal.Platform;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class MetalSharedEventsTest {
    private static final MemorySegment SOME_ADDRESS = MemorySegment.ofAddress(0x1000);

    @Test
    void offMacOsEveryFactoryRefusesNamingMacOsAndThisPlatform() {
        assumeFalse(Platform.isMacOs(), "this specification is for platforms without Metal");
        for (var factory : new java.util.function.Supplier<?>[]{
                () -> MetalSharedEvents.adopt(SOME_ADDRESS, 1), () -> MetalSharedEvents.borrow(SOME_ADDRESS, 1)}) {
            assertThatThrownBy(factory::get)
                    .isInstanceOfSatisfying(SyncNotSupportedException.class, e -> {
                        assertThat(e.backend()).contains(BackendKind.METAL);
                        assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
                    })
                    .hasMessageContaining("macOS").hasMessageContaining(Platform.osName());
        }
    }

    @Test
    void badHandlesAreRejectedTheSameEverywhereBeforeThePlatformCheck() {
        assertThatThrownBy(() -> MetalSharedEvents.borrow(null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> MetalSharedEvents.adopt(MemorySegment.NULL, 0))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("NULL");
    }

    @Test
    void subMillisecondTimeoutsRoundUpToOneMillisecondNeverToZero() {
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ZERO)).isZero();
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofNanos(1))).isEqualTo(1);
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofNanos(100_000))).isEqualTo(1); // gpu-handle-types' 100 µs
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofNanos(999_999))).isEqualTo(1);
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofNanos(1_000_001))).isEqualTo(2);
        assertThat(SharedEventTimeouts.timeoutMs(50_000_000L)).isEqualTo(50); // a WaitLoop slice
    }

    @Test
    void foreverIsUint64MaxAndLongFiniteTimeoutsStayFinite() {
        assertThat(SharedEventTimeouts.timeoutMs(SyncPoint.FOREVER)).isEqualTo(-1L); // UINT64_MAX
        assertThat(SharedEventTimeouts.timeoutMs(Long.MAX_VALUE)).isEqualTo(-1L);
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofDays(60))).isEqualTo(Duration.ofDays(60).toMillis());
        assertThat(SharedEventTimeouts.timeoutMs(Duration.ofDays(365L * 1000))).isEqualTo(-1L); // beyond 2^63 ns
    }

    @Test
    void aNegativeTimeoutIsAnIllegalArgument() {
        assertThatThrownBy(() -> SharedEventTimeouts.timeoutMs(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
