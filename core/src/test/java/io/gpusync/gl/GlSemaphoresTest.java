package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.Test;
import io.gpusync.gl.GlProducers.EglProducer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * GL semaphore points on the driver here (Mesa's llvmpipe, which cannot import external fds): a typed refusal
 * naming the missing extension, argument checks, and the fd left to the caller. The import-and-wait path runs
 * on a driver with {@code GL_EXT_semaphore_fd} (NVIDIA's EGL on the H200).
 */
class GlSemaphoresTest {
    @Test
    void aGlWithoutExternalSemaphoreFdsRefusesNamingTheMissingExtension() {
        try (EglProducer producer = GlTestSupport.producer(); EventFd someFd = EventFd.create()) {
            GlShareGroup group = producer.shareGroup();
            boolean[] has = new boolean[1];
            try (ShareContexts.Binding ignored = group.contexts().bind()) {
                has[0] = GlSemaphores.missingExtensions(true).isEmpty();
            }
            assumeFalse(has[0], "this GL has " + GlSemaphores.EXT_SEMAPHORE_FD + " and " + GlSemaphores.NV_TIMELINE);
            for (VulkanSemaphoreKind kind : VulkanSemaphoreKind.values()) {
                try (ShareContexts.Binding ignored = group.contexts().bind()) {
                    if (GlSemaphores.missingExtensions(kind == VulkanSemaphoreKind.TIMELINE).isEmpty()) {
                        continue;
                    }
                }
                assertThatThrownBy(() -> GlSemaphores.importFd(group, someFd.fd(), kind, 1))
                        .isInstanceOfSatisfying(SyncNotSupportedException.class,
                                e -> assertThat(e.backend()).contains(BackendKind.OPENGL))
                        .hasMessageContaining(kind == VulkanSemaphoreKind.TIMELINE ? "GL_NV_timeline_semaphore"
                                : GlSemaphores.EXT_SEMAPHORE_FD)
                        .hasMessageContaining("lacks");
            }
            someFd.signal(); // the refused import left the fd to us: still ours and usable
            assertThat(someFd.drain()).isEqualTo(1);
        }
    }

    @Test
    void badArgumentsAreRejectedBeforeAnyGlCall() {
        try (EglProducer producer = GlTestSupport.producer()) {
            GlShareGroup group = producer.shareGroup();
            assertThatThrownBy(() -> GlSemaphores.importFd(group, -1, VulkanSemaphoreKind.BINARY, 0))
                    .isInstanceOf(SyncInvalidArgumentException.class);
            assertThatThrownBy(() -> GlSemaphores.importFd(null, 3, VulkanSemaphoreKind.BINARY, 0))
                    .isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> GlSemaphores.importFd(group, 3, null, 0))
                    .isInstanceOf(NullPointerException.class);
        }
    }
}
