package io.gpusync.d3d11;

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

class D3D11KeyedMutexesTest {
    private static final MemorySegment SOME_ADDRESS = MemorySegment.ofAddress(0x1000);

    @Test
    void offWindowsEveryFactoryRefusesNamingWindowsAndThisPlatform() {
        assumeFalse(Platform.isWindows(), "this specification is for platforms without DXGI");
        for (var factory : new java.util.function.Supplier<?>[]{
                () -> D3D11KeyedMutexes.adopt(SOME_ADDRESS, 1), () -> D3D11KeyedMutexes.borrow(SOME_ADDRESS, 1)}) {
            assertThatThrownBy(factory::get)
                    .isInstanceOfSatisfying(SyncNotSupportedException.class, e -> {
                        assertThat(e.backend()).contains(BackendKind.D3D11);
                        assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
                    })
                    .hasMessageContaining("Windows").hasMessageContaining(Platform.osName());
        }
    }

    @Test
    void badHandlesAreRejectedTheSameEverywhereBeforeThePlatformCheck() {
        assertThatThrownBy(() -> D3D11KeyedMutexes.borrow(null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> D3D11KeyedMutexes.adopt(MemorySegment.NULL, 0))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("NULL");
        assertThatThrownBy(() -> D3D11KeyedMutexes.borrow(MemorySegment.ofArray(new byte[8]), 0))
                .isInstanceOf(SyncInvalidArgumentException.class);
    }

    @Test
    void acquireSyncTimeoutsRoundSubMillisecondsUpNeverToZero() {
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ZERO)).isZero();
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ofNanos(1))).isEqualTo(1);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ofNanos(100_000))).isEqualTo(1);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ofNanos(1_000_001))).isEqualTo(2);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ofMillis(50))).isEqualTo(50);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(50_000_000L)).isEqualTo(50); // a WaitLoop slice
    }

    @Test
    void foreverAndAnythingBeyondADwordOfMillisecondsIsInfinite() {
        int infinite = 0xFFFF_FFFF;
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(SyncPoint.FOREVER)).isEqualTo(infinite);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Long.MAX_VALUE)).isEqualTo(infinite);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(Duration.ofDays(60))).isEqualTo(infinite); // > 49.7 days
        Duration largestFinite = Duration.ofMillis(0xFFFF_FFFEL);
        assertThat(Integer.toUnsignedLong(KeyedMutexTimeouts.acquireSyncMillis(largestFinite))).isEqualTo(0xFFFF_FFFEL);
        assertThat(KeyedMutexTimeouts.acquireSyncMillis(largestFinite.plusNanos(1))).isEqualTo(infinite);
    }

    @Test
    void aNegativeTimeoutIsAnIllegalArgument() {
        assertThatThrownBy(() -> KeyedMutexTimeouts.acquireSyncMillis(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
