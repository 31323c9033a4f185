package io.gpusync.internal;

import io.gpusync.SyncException;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.gpusync.vulkan.VulkanDevice;

import java.time.Duration;

/**
 * The child program of {@link NativeAccessDiagnosisTest}: prints, one line each, what a host wait, an eventfd
 * and the Vulkan backend's first call (wrapping a NULL device: the loader is checked before the handle) do in this
 * JVM ({@code ok}, or the error's class, kind and message).
 */
public final class NativeAccessProbe {
    private NativeAccessProbe() {
    }

    public static void main(String[] args) {
        CpuTimeline timeline = new CpuTimeline();
        timeline.signal(1);
        timeline.at(1).await(Duration.ofSeconds(5));
        System.out.println("cpu: ok");
        try (EventFd fd = EventFd.create()) {
            System.out.println("eventfd: ok " + fd.fd());
        } catch (SyncException e) {
            System.out.println("eventfd: " + describe(e));
        }
        try (VulkanDevice vulkan = VulkanDevice.wrap(0L, 0L)) {
            System.out.println("vulkan: ok " + vulkan);
        } catch (SyncException e) {
            System.out.println("vulkan: " + describe(e));
        }
    }

    private static String describe(SyncException e) {
        return e.getClass().getSimpleName() + " (" + e.kind() + "): " + e.getMessage();
    }
}
