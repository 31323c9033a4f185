package io.gpusync.reactor.soak;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.bindings.vulkan.PFN_vkCreateFence;
import io.gpusync.bindings.vulkan.PFN_vkCreateSemaphore;
import io.gpusync.bindings.vulkan.PFN_vkDestroyFence;
import io.gpusync.bindings.vulkan.VkFenceCreateInfo;
import io.gpusync.bindings.vulkan.VkSemaphoreCreateInfo;
import io.gpusync.bindings.vulkan.Vulkan;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.d3d12.D3D12Fences;
import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.gl.EglReusableSync;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.linux.EventFd;
import io.gpusync.linux.SyncFds;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import io.gpusync.vulkan.VulkanDevice;
import io.gpusync.test.vulkan.VulkanContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The soak's backends: one {@link Source} per kind of point, on the real drivers found (a missing driver leaves
 * its sources out, said in the report). Producers are opened once and closed by {@link #close()}.
 */
final class TicketSources implements AutoCloseable {
    /** Mints tickets of one kind. */
    record Source(String name, Function<Random, Ticket> mint) {
    }

    private final List<Source> sources = new ArrayList<>();
    private final List<String> missing = new ArrayList<>();
    private final List<AutoCloseable> producers = new ArrayList<>();
    private static volatile java.util.function.Consumer<String> problems = System.err::println;
    /** Opens the gates of gated Vulkan submissions: a thread of its own, so that nothing else can hold them shut. */
    private static final java.util.concurrent.ScheduledExecutorService GATES =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
                    Thread.ofPlatform().name("soak-gates").daemon().factory());

    TicketSources(boolean cuda, java.util.function.Consumer<String> problemSink) {
        problems = problemSink;
        add("cpu", () -> new Source("cpu-timeline", r -> cpu()));
        add("linux", () -> {
            EventFd.create().close();
            return new Source("eventfd", r -> eventFd());
        });
        add("linux", () -> new Source("sync-fd", r -> syncFd()));
        add("vulkan", () -> {
            VulkanContext vk = opened(VulkanContext.create());
            return new Source("vulkan", r -> vulkan(vk, r));
        });
        add("opencl", () -> {
            OpenClContext cl = opened(OpenClContext.createDefault());
            // markers behind user events get a queue of their own: an in-order queue holds every later command
            // behind an unset user event, and fails them all once one fails
            OpenClContext markers = opened(OpenClContext.createDefault());
            return new Source("opencl", r -> openCl(cl, markers, r));
        });
        add("egl", () -> {
            EglProducer egl = opened(EglProducer.openSurfaceless());
            return new Source("egl", r -> egl(egl, r));
        });
        add("d3d12", () -> {
            D3D12Device d3d12 = opened(D3D12Device.open());
            return new Source("d3d12", r -> d3d12(d3d12, r));
        });
        if (cuda) {
            add("cuda", () -> CudaTickets.source(this::opened));
        }
    }

    List<Source> sources() {
        return sources;
    }

    List<String> missing() {
        return missing;
    }

    private void add(String backend, java.util.function.Supplier<Source> open) {
        try {
            sources.add(open.get());
        } catch (SyncNotSupportedException | UnsatisfiedLinkError | ExceptionInInitializerError absent) {
            missing.add(backend + ": " + absent.getMessage());
        }
    }

    <T extends AutoCloseable> T opened(T producer) {
        producers.add(producer);
        return producer;
    }

    @Override
    public void close() {
        for (AutoCloseable p : producers.reversed()) {
            try {
                p.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + p, e);
            }
        }
    }

    // --- one minting method per kind ---

    private static Ticket cpu() {
        CpuTimeline timeline = new CpuTimeline();
        SyncPoint at = timeline.at(1);
        return new OwnedTicket("cpu-timeline", at, at.waiter(), false) {
            @Override
            void doSignal() {
                timeline.signal(1);
            }

            @Override
            public boolean canFail() {
                return true;
            }

            @Override
            void doFail() {
                timeline.fail(new IllegalStateException("soak: injected failure"));
            }

            @Override
            boolean landed() {
                return true;
            }

            @Override
            void release() {
            }
        };
    }

    private static Ticket eventFd() {
        EventFd fd = EventFd.create();
        return onEventFd("eventfd", fd, fd.point());
    }

    /** A sync fd adopted by gpusync: a duplicate of an eventfd the ticket signals (no sync_file on CPU drivers). */
    private static Ticket syncFd() {
        EventFd fd = EventFd.create();
        return onEventFd("sync-fd", fd, SyncFds.adopt(SyncFds.duplicate(fd.fd())));
    }

    /** A point that {@code fd}'s signal makes readable; the ticket closes {@code fd} at the end. */
    private static Ticket onEventFd(String name, EventFd fd, SyncPoint p) {
        return new OwnedTicket(name, p, p.waiter(), false) {
            @Override
            void doSignal() {
                fd.signal();
            }

            @Override
            boolean landed() {
                return true;
            }

            @Override
            void release() {
                fd.close();
            }
        };
    }

    private static Ticket vulkan(VulkanContext vk, Random r) {
        VulkanDevice device = vk.device();
        return switch (r.nextInt(6)) {
            case 5 -> borrowedTimeline(vk);
            case 0 -> timeline(vk, "vulkan-timeline-host", false, false);
            case 1 -> timeline(vk, "vulkan-timeline-queue", true, false);
            case 2 -> timeline(vk, "vulkan-timeline-gated", true, true);
            case 3 -> {
                long fence = VkRaw.fence(device);
                boolean adopt = r.nextBoolean();
                SyncWaiter w = adopt ? device.adoptFence(fence) : device.borrowFence(fence);
                yield new OwnedTicket(adopt ? "vulkan-fence-adopted" : "vulkan-fence-borrowed", null, w, adopt) {
                    @Override
                    void doSignal() {
                        vk.signalFenceOnQueue(fence);
                    }

                    @Override
                    boolean landed() {
                        return VkRaw.fenceSignalled(device, fence);
                    }

                    @Override
                    void release() {
                        if (!adopt) { // a cancelled wait's thread may still be in vkWaitForFences: not before this
                            w.whenReleased().thenRun(() -> VkRaw.destroyFence(device, fence));
                        }
                    }
                };
            }
            default -> {
                long semaphore = VkRaw.binarySemaphore(device);
                long fence = VkRaw.fence(device);
                SyncPoint.Vulkan p = device.adoptBinarySemaphore(semaphore, fence);
                yield new OwnedTicket("vulkan-binary", p, p.waiter(), true) {
                    @Override
                    void doSignal() {
                        vk.signalBinaryOnQueue(semaphore, fence);
                    }

                    @Override
                    boolean landed() {
                        return VkRaw.fenceSignalled(device, fence);
                    }

                    @Override
                    void release() {
                    }
                };
            }
        };
    }

    /**
     * A timeline value signalled by the host, by an empty queue submission, or by a submission that the host
     * releases through a second timeline a few milliseconds later ({@code gated}: the submission is pending on
     * the GPU meanwhile, as real work would be; it signals itself, since the queue is in order and a gate left
     * shut would hold every later submission).
     */
    private static Ticket timeline(VulkanContext vk, String name, boolean onQueue, boolean gated) {
        VulkanDevice device = vk.device();
        SyncPoint.Vulkan base = device.createTimelineSemaphore(0); // the ticket's own view
        SyncPoint.Vulkan gate = gated ? device.createTimelineSemaphore(0) : null;
        if (gated) {
            vk.signalOnQueueAfter(gate.semaphore(), 1, base.semaphore(), 1);
            GATES.schedule(() -> {
                try {
                    device.hostSignal(gate.semaphore(), 1);
                } catch (RuntimeException e) {
                    problems.accept("opening the gate of " + name + ": " + e);
                }
            }, ThreadLocalRandom.current().nextInt(10_000), java.util.concurrent.TimeUnit.MICROSECONDS);
        }
        SyncPoint at = base.withValue(1);
        return new OwnedTicket(name, at, at.waiter(), false) {
            @Override
            public boolean signalsItself() {
                return gated;
            }

            @Override
            void doSignal() {
                if (gated) {
                    return; // the gate opens by itself
                } else if (onQueue) {
                    vk.signalOnQueue(base.semaphore(), 1);
                } else {
                    device.hostSignal(base.semaphore(), 1);
                }
            }

            @Override
            boolean landed() {
                return device.counterValue(base.semaphore()) >= 1;
            }

            @Override
            public String toString() {
                return name + "[VkSemaphore " + Long.toHexString(base.semaphore()) + " at "
                        + device.counterValue(base.semaphore()) + (gate == null ? ""
                        : ", gate at " + device.counterValue(gate.semaphore())) + "]";
            }

            @Override
            void release() {
                base.waiter().close();
                if (gate != null) {
                    gate.waiter().close();
                }
            }
        };
    }

    /** A timeline semaphore the application keeps: destroyed once gpusync has let go of it. */
    private static Ticket borrowedTimeline(VulkanContext vk) {
        VulkanDevice device = vk.device();
        long semaphore = VkRaw.timelineSemaphore(device);
        SyncPoint.Vulkan at = device.borrowTimelineSemaphore(semaphore, 1);
        return new OwnedTicket("vulkan-timeline-borrowed", at, at.waiter(), false) {
            @Override
            void doSignal() {
                device.hostSignal(semaphore, 1);
            }

            @Override
            boolean landed() {
                return true;
            }

            @Override
            void release() {
                at.waiter().whenReleased().thenRun(() -> VkRaw.destroySemaphore(device, semaphore));
            }
        };
    }

    private static Ticket openCl(OpenClContext cl, OpenClContext markers, Random r) {
        switch (r.nextInt(3)) {
            case 0 -> {
                SyncPoint kernel = cl.enqueueSpin(1 + r.nextInt(20_000));
                return selfSignalling("opencl-kernel", kernel);
            }
            case 1 -> {
                OpenClUserEvent user = cl.newUserEvent();
                SyncPoint p = user.newPoint();
                return userEvent("opencl-user-event", user, p, false, () -> p.waiter().close());
            }
            default -> { // a marker behind a user event: failing the event fails the marker (and later ones) too
                OpenClUserEvent user = markers.newUserEvent();
                SyncPoint.OpenCl gate = user.newPoint();
                SyncPoint marker = markers.enqueueMarker(gate);
                return userEvent("opencl-marker", user, marker, true, () -> gate.waiter().close());
            }
        }
    }

    private static Ticket userEvent(String name, OpenClUserEvent user, SyncPoint awaited, boolean onQueue,
                                    Runnable releaseMore) {
        return new OwnedTicket(name, awaited, awaited.waiter(), false) {
            @Override
            public boolean dependsOnOthers() {
                return onQueue;
            }

            @Override
            void doSignal() {
                user.complete();
            }

            @Override
            public boolean canFail() {
                return true;
            }

            @Override
            void doFail() {
                user.fail(-1_000_001);
            }

            @Override
            boolean landed() {
                return true;
            }

            @Override
            void release() {
                releaseMore.run();
                user.close();
            }
        };
    }

    private static Ticket egl(EglProducer egl, Random r) {
        switch (r.nextInt(3)) {
            case 0 -> {
                return selfSignalling("egl-fence", egl.eglFence(1 + r.nextInt(2)));
            }
            case 1 -> {
                return selfSignalling("gl-fence", egl.fence(1 + r.nextInt(2)));
            }
            default -> {
                EglReusableSync sync = egl.reusableSync();
                SyncPoint p = sync.point();
                return new OwnedTicket("egl-reusable", p, p.waiter(), false) {
                    @Override
                    void doSignal() {
                        sync.signal();
                    }

                    @Override
                    boolean landed() {
                        return true;
                    }

                    @Override
                    void release() {
                        sync.close();
                    }
                };
            }
        }
    }

    private static Ticket d3d12(D3D12Device d3d12, Random r) {
        boolean onQueue = r.nextBoolean();
        MemorySegment fence = d3d12.createFence(0);
        SyncPoint.D3D12 base = D3D12Fences.adopt(fence, 1); // the ticket's own view
        SyncPoint at = base.withValue(1);
        return new OwnedTicket(onQueue ? "d3d12-queue" : "d3d12-host", at, at.waiter(), false) {
            @Override
            void doSignal() {
                if (onQueue) {
                    d3d12.queueSignal(fence, 1); // one queue Signal per fence
                } else {
                    d3d12.signal(fence, 1);
                }
            }

            @Override
            boolean landed() {
                return base.waiter().isSignaled();
            }

            @Override
            void release() {
                base.waiter().close();
            }
        };
    }

    /** A point that GPU work signals by itself: "signal" is a no-op, it cannot be left to time out. */
    static Ticket selfSignalling(String name, SyncPoint p) {
        return new OwnedTicket(name, p, p.waiter(), false) {
            @Override
            public boolean signalsItself() {
                return true;
            }

            @Override
            void doSignal() {
            }

            @Override
            boolean landed() {
                return true;
            }

            @Override
            void release() {
            }
        };
    }

    /** Vulkan handles made straight through the bindings, as an application makes the ones it adopts. */
    static final class VkRaw {
        private VkRaw() {
        }

        static long fence(VulkanDevice device) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment fn = proc(device, arena, "vkCreateFence");
                MemorySegment info = VkFenceCreateInfo.allocate(arena);
                VkFenceCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO());
                MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
                check(PFN_vkCreateFence.invoke(fn, device.handle(), info, MemorySegment.NULL, out), "vkCreateFence");
                return out.get(ValueLayout.JAVA_LONG, 0);
            }
        }

        static long binarySemaphore(VulkanDevice device) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment fn = proc(device, arena, "vkCreateSemaphore");
                MemorySegment info = VkSemaphoreCreateInfo.allocate(arena);
                VkSemaphoreCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO());
                MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
                check(PFN_vkCreateSemaphore.invoke(fn, device.handle(), info, MemorySegment.NULL, out),
                        "vkCreateSemaphore");
                return out.get(ValueLayout.JAVA_LONG, 0);
            }
        }

        static long timelineSemaphore(VulkanDevice device) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment type = io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo.allocate(arena);
                io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo.sType(type,
                        Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO());
                io.gpusync.bindings.vulkan.VkSemaphoreTypeCreateInfo.semaphoreType(type,
                        Vulkan.VK_SEMAPHORE_TYPE_TIMELINE());
                MemorySegment info = VkSemaphoreCreateInfo.allocate(arena);
                VkSemaphoreCreateInfo.sType(info, Vulkan.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO());
                VkSemaphoreCreateInfo.pNext(info, type);
                MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
                check(PFN_vkCreateSemaphore.invoke(proc(device, arena, "vkCreateSemaphore"), device.handle(), info,
                        MemorySegment.NULL, out), "vkCreateSemaphore(timeline)");
                return out.get(ValueLayout.JAVA_LONG, 0);
            }
        }

        static void destroySemaphore(VulkanDevice device, long semaphore) {
            try (Arena arena = Arena.ofConfined()) {
                io.gpusync.bindings.vulkan.PFN_vkDestroySemaphore.invoke(proc(device, arena, "vkDestroySemaphore"),
                        device.handle(), MemorySegment.ofAddress(semaphore), MemorySegment.NULL);
            }
        }

        static boolean fenceSignalled(VulkanDevice device, long fence) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment fn = proc(device, arena, "vkGetFenceStatus");
                int r = io.gpusync.bindings.vulkan.PFN_vkGetFenceStatus.invoke(fn, device.handle(),
                        MemorySegment.ofAddress(fence));
                return r == Vulkan.VK_SUCCESS();
            }
        }

        static void destroyFence(VulkanDevice device, long fence) {
            try (Arena arena = Arena.ofConfined()) {
                PFN_vkDestroyFence.invoke(proc(device, arena, "vkDestroyFence"), device.handle(),
                        MemorySegment.ofAddress(fence), MemorySegment.NULL);
            }
        }

        private static MemorySegment proc(VulkanDevice device, Arena arena, String name) {
            return Vulkan.vkGetDeviceProcAddr(device.handle(), arena.allocateFrom(name));
        }

        private static void check(int r, String what) {
            if (r != Vulkan.VK_SUCCESS()) {
                throw new IllegalStateException(what + " returned " + r);
            }
        }
    }
}
