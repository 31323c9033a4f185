package io.gpusync.wgpu;

import io.gpusync.BackendKind;
import io.gpusync.ErrorKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.internal.NativeLibraries;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** What can be specified without wgpu-native (no registry here serves it): refusal and argument checks. */
class WgpuSubmissionsTest {
    @Test
    void withoutWgpuNativeTheFactoryRefusesNamingTheLibraryAndTheSwitch() {
        assumeFalse(NativeLibraries.isAvailable(WgpuNative.library()), WgpuNative.library() + " is installed here");
        for (int round = 0; round < 2; round++) { // the refusal is stable, nothing poisoned
            assertThatThrownBy(() -> WgpuSubmissions.point(MemorySegment.ofAddress(0x1000), 1))
                    .isInstanceOfSatisfying(SyncNotSupportedException.class, e -> {
                        assertThat(e.backend()).contains(BackendKind.WGPU);
                        assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
                    })
                    .hasMessageContaining("libwgpu_native.so").hasMessageContaining(WgpuNative.LIBRARY_PROPERTY);
        }
    }

    @Test
    void badArgumentsAreRejectedBeforeTheLibraryIsLookedFor() {
        assertThatThrownBy(() -> WgpuSubmissions.point(null, 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> WgpuSubmissions.point(MemorySegment.ofAddress(0x1000), 1, null))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> WgpuSubmissions.point(MemorySegment.NULL, 1))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("WGPUDevice");
    }
}
