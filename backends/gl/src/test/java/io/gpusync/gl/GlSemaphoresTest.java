package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.linux.EventFd;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import io.gpusync.test.gl.EglProducer;

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

    /**
     * A semaphore object is deleted in one of its group's contexts, on the housekeeping thread, after its last
     * waiter is closed — possibly after the application closed the group. The group's contexts must still exist
     * then. (llvmpipe cannot import a semaphore, so the object here has a name GL never made: its deletion is a
     * no-op, the lifetime of the contexts around it is what is checked.)
     */
    @Test
    void aSemaphoreObjectKeepsItsGroupsContextsUntilItHasBeenDeleted() throws Exception {
        try (EglProducer producer = GlTestSupport.producer()) {
            GlShareGroup group = GlShareGroup.of(producer.display().address(), producer.context().address());
            try (ShareContexts.Binding ignored = group.contexts().bind()) {
                assertThat(group.waitContextsCreated()).isEqualTo(1);
            }
            GlSemaphores.SemaphoreObject object = new GlSemaphores.SemaphoreObject(group, 4242);
            NativeAnchor.Claim waiter = object.anchor.claim(this);
            group.close();
            assertThat(group.waitContextsCreated()).as("the object still needs a context for its deletion")
                    .isEqualTo(1);

            waiter.close(); // the deletion runs on the housekeeping thread, then the contexts go
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (group.waitContextsCreated() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(group.waitContextsCreated()).as("destroyed after the deletion").isZero();
            assertThat(object.anchor.isReleased()).isTrue();
        }
    }
}
