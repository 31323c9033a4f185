package io.gpusync.benchmarks.backends;

import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.gl.EglReusableSync;
import io.gpusync.gl.GlSemaphores;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.cuda.CudaExternalSemaphore;
import io.gpusync.test.cuda.CudaWorkQueue;
import io.gpusync.test.vulkan.ExportingVulkanDevice;
import io.gpusync.bindings.d3d12.D3d12Shim;
import io.gpusync.d3d12.D3D12Fences;
import io.gpusync.test.d3d12.D3D12Device;
import io.gpusync.linux.EventFd;
import io.gpusync.test.opencl.OpenClContext;
import io.gpusync.test.opencl.OpenClUserEvent;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.test.vulkan.VulkanContext;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Wake latency per backend — signal → the waiter knows — through {@code GpuSync.await} next to a raw
 * platform thread blocked in the same native wait ({@code SyncWaiter.await(FOREVER)}: vkWaitSemaphores,
 * clWaitForEvents, eglClientWaitSync, poll, a parked thread; for D3D12 {@code vkd3d_wait_event}). Issue 4's table.
 * {@code -Dwake.only=D3D12,eventfd} measures only the rows whose name contains one of the texts.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp <the benchmarks class path> io.gpusync.benchmarks.backends.BackendWakeLatency 300 wake.md   (JDK 25; or with a packed runtime in .device/:)
 * bash .device/setup && .device/java io.gpusync.benchmarks.backends.BackendWakeLatency 300 wake.md
 * </pre>
 *
 * Each iteration makes a fresh unsignalled point, lets the waiter settle into its wait (1 ms: pollers have
 * parked, blocked threads are in the kernel), takes t0, signals, and takes t1 where the waiter sees it (the
 * raw thread after its wait returns; gpusync inside {@code onComplete}). Host signals come from the measuring
 * thread; "queue" signals go through the driver's queue (a submit that signals, a marker behind a gate).
 * A backend whose driver is missing is listed as such.
 */
public final class BackendWakeLatency {

    private BackendWakeLatency() {
    }

    /**
     * A fresh unsignalled point and the action that signals it; {@code rawWait}, when not null, is the raw thread's
     * native blocking wait (else it blocks in {@code point.await(FOREVER)}).
     */
    record Trial(SyncPoint point, Runnable signal, Runnable cleanup, Runnable rawWait) {
        Trial(SyncPoint point, Runnable signal, Runnable cleanup) {
            this(point, signal, cleanup, null);
        }
    }

    record Subject(String name, Supplier<Trial> trials, AutoCloseable resource) {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        Path out = args.length > 1 ? Path.of(args[1]) : null;
        SyncEngine engine = GpuSync.defaultEngine();
        List<Subject> subjects = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        subjects.add(cpuTimeline());
        subjects.add(eventFd());
        tryAdd(subjects, missing, "Vulkan", BackendWakeLatency::vulkan);
        tryAdd(subjects, missing, "OpenCL", BackendWakeLatency::openCl);
        tryAdd(subjects, missing, "EGL", BackendWakeLatency::egl);
        tryAdd(subjects, missing, "OpenGL semaphore", BackendWakeLatency::glSemaphore);
        tryAdd(subjects, missing, "CUDA external semaphore", BackendWakeLatency::cudaExternalSemaphore);
        tryAdd(subjects, missing, "D3D12 (vkd3d)", BackendWakeLatency::d3d12);
        String only = System.getProperty("wake.only"); // -Dwake.only=D3D12,eventfd: rows whose name has one of them
        if (only != null && !only.isBlank()) {
            List<String> wanted = List.of(only.split(","));
            for (var it = subjects.iterator(); it.hasNext(); ) {
                Subject s = it.next();
                if (wanted.stream().noneMatch(s.name::contains)) {
                    s.resource.close();
                    it.remove();
                }
            }
            missing.removeIf(m -> wanted.stream().noneMatch(m::contains));
        }

        StringBuilder md = new StringBuilder();
        md.append("Wake latency, signal → waiter sees it; ").append(iterations).append(" iterations each; ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores; JDK ")
                .append(Runtime.version()).append("; ").append(java.time.LocalDate.now()).append("\n\n");
        md.append("| backend · signal | gpusync path | raw thread p50 µs | raw p99 µs | GpuSync p50 µs | GpuSync p99 µs | p50 ratio |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|\n");
        for (Subject s : subjects) {
            Trial probe = s.trials.get();
            String path = engine.pathFor(probe.point.waiter()).name();
            probe.signal.run();
            probe.cleanup.run();
            long[] raw = measure(s, iterations, BackendWakeLatency::rawThread);
            long[] viaEngine = measure(s, iterations, t -> viaGpuSync(engine, t));
            md.append(String.format("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f |%n", s.name, path, pct(raw, .5),
                    pct(raw, .99), pct(viaEngine, .5), pct(viaEngine, .99), pct(viaEngine, .5) / pct(raw, .5)));
            System.err.printf("%-40s raw p50 %.1f µs, GpuSync p50 %.1f µs%n", s.name, pct(raw, .5), pct(viaEngine, .5));
            s.resource.close();
        }
        for (String m : missing) {
            md.append("| ").append(m).append(" | – | not measured: driver missing | | | | |\n");
        }
        RAW.shutdown();
        System.out.print(md);
        if (out != null) {
            Files.writeString(out, md.toString());
        }
        System.exit(0);
    }

    interface Method {
        long once(Trial trial) throws Exception;
    }

    private static long[] measure(Subject s, int iterations, Method m) throws Exception {
        for (int i = 0; i < Math.max(200, iterations); i++) { // JIT: the engine path is longer than a raw wait
            run(s, m); // warm-up (as many as measured)
        }
        long[] samples = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            samples[i] = run(s, m);
        }
        Arrays.sort(samples);
        return samples;
    }

    private static long run(Subject s, Method m) throws Exception {
        Trial t = s.trials.get();
        try {
            return m.once(t);
        } finally {
            t.cleanup.run();
        }
    }

    private static void settle() {
        LockSupport.parkNanos(1_000_000);
    }

    /** One platform thread that blocks in the native wait, reused across iterations. */
    private static final class RawWaiter implements Runnable {
        final SynchronousQueue<Object[]> work = new SynchronousQueue<>();
        final Thread thread = Thread.ofPlatform().daemon(true).name("raw-waiter").start(this);

        @Override
        public void run() {
            while (true) {
                try {
                    Object[] job = work.take();
                    if (job.length == 0) {
                        return;
                    }
                    Trial trial = (Trial) job[0];
                    if (trial.rawWait != null) {
                        trial.rawWait.run();
                    } else {
                        trial.point.await(SyncPoint.FOREVER);
                    }
                    ((AtomicLong) job[1]).set(System.nanoTime());
                    ((CountDownLatch) job[2]).countDown();
                } catch (InterruptedException e) {
                    return;
                } catch (SyncException e) {
                    e.printStackTrace();
                }
            }
        }

        void shutdown() {
            work.offer(new Object[0]);
        }
    }

    private static final RawWaiter RAW = new RawWaiter();

    private static long rawThread(Trial t) throws InterruptedException {
        AtomicLong seen = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        RAW.work.put(new Object[] {t, seen, done});
        settle();
        long t0 = System.nanoTime();
        t.signal.run();
        done.await();
        return seen.get() - t0;
    }

    private static long viaGpuSync(SyncEngine engine, Trial t) throws InterruptedException {
        AtomicLong seen = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        engine.await(t.point, Duration.ofSeconds(30)).subscribe(v -> { }, e -> {
            e.printStackTrace();
            done.countDown();
        }, () -> {
            seen.set(System.nanoTime());
            done.countDown();
        });
        settle();
        long t0 = System.nanoTime();
        t.signal.run();
        done.await();
        return seen.get() - t0;
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))] / 1000.0;
    }

    private interface Opener {
        List<Subject> open() throws Exception;
    }

    private static void tryAdd(List<Subject> subjects, List<String> missing, String what, Opener opener) {
        try {
            subjects.addAll(opener.open());
        } catch (Exception | LinkageError e) {
            missing.add(what + " (" + e.getMessage() + ")");
        }
    }

    private static Subject cpuTimeline() {
        CpuTimeline timeline = new CpuTimeline();
        long[] v = {0};
        return new Subject("CpuTimeline · host signal", () -> {
            long value = ++v[0];
            return new Trial(timeline.at(value), () -> timeline.signal(value), () -> { });
        }, () -> { });
    }

    private static Subject eventFd() {
        return new Subject("eventfd · host write", () -> {
            EventFd fd = EventFd.create();
            SyncPoint p = fd.point();
            return new Trial(p, fd::signal, () -> {
                p.waiter().close();
                fd.close();
            });
        }, () -> { });
    }

    private static List<Subject> vulkan() {
        VulkanContext vk = VulkanContext.create();
        SyncPoint.Vulkan host = vk.device().createTimelineSemaphore(0);
        SyncPoint.Vulkan queue = vk.device().createTimelineSemaphore(0);
        long[] v = {0, 0};
        String dev = " (" + vk.deviceName() + ")";
        Subject h = new Subject("Vulkan timeline · vkSignalSemaphore" + dev, () -> {
            long value = ++v[0];
            return new Trial(host.withValue(value), () -> vk.device().hostSignal(host.semaphore(), value), () -> { });
        }, () -> { });
        Subject q = new Subject("Vulkan timeline · vkQueueSubmit signal" + dev, () -> {
            long value = ++v[1];
            return new Trial(queue.withValue(value), () -> vk.signalOnQueue(queue.semaphore(), value), () -> { });
        }, vk::close);
        return List.of(h, q);
    }

    private static List<Subject> openCl() {
        OpenClContext cl = OpenClContext.createDefault();
        String dev = " (" + cl.deviceName() + ")";
        Subject h = new Subject("OpenCL user event · clSetUserEventStatus" + dev, () -> {
            OpenClUserEvent e = cl.newUserEvent();
            SyncPoint p = e.newPoint();
            return new Trial(p, e::complete, () -> {
                p.waiter().close();
                e.close();
            });
        }, () -> { });
        Subject q = new Subject("OpenCL marker behind a gate · queue" + dev, () -> {
            OpenClUserEvent gate = cl.newUserEvent();
            SyncPoint.OpenCl gatePoint = gate.newPoint();
            SyncPoint marker = cl.enqueueMarker(gatePoint);
            return new Trial(marker, gate::complete, () -> {
                marker.waiter().close();
                gatePoint.waiter().close();
                gate.close();
            });
        }, cl::close);
        return List.of(h, q);
    }

    private static List<Subject> egl() {
        EglProducer producer = EglProducer.openSurfaceless();
        Subject h = new Subject("EGL reusable sync · eglSignalSyncKHR", () -> {
            EglReusableSync sync = producer.reusableSync();
            SyncPoint p = sync.point();
            return new Trial(p, sync::signal, () -> {
                p.waiter().close();
                sync.close();
            });
        }, producer::close);
        return List.of(h);
    }

    /**
     * A Vulkan timeline semaphore exported as an opaque fd and imported into GL ({@link GlSemaphores}); each trial
     * rebinds the GL point to the next value (a new {@code glWaitSemaphoreEXT} + fence) and the host signals it
     * with {@code vkSignalSemaphore}. Refused where GL cannot import Vulkan fds (Mesa).
     */
    private static List<Subject> glSemaphore() {
        EglProducer producer = EglProducer.openSurfaceless();
        ExportingVulkanDevice vk;
        try {
            vk = ExportingVulkanDevice.open(null);
        } catch (RuntimeException e) {
            producer.close();
            throw e;
        }
        long semaphore = vk.createSemaphore(true, 0);
        SyncPoint.OpenGL base;
        try {
            base = GlSemaphores.importFd(producer.shareGroup(), vk.exportOpaqueFd(semaphore), VulkanSemaphoreKind.TIMELINE, 1);
        } catch (RuntimeException e) {
            vk.destroySemaphore(semaphore);
            vk.close();
            producer.close();
            throw e;
        }
        long[] v = {0};
        Subject h = new Subject("OpenGL semaphore (Vulkan timeline fd) · vkSignalSemaphore", () -> {
            long value = ++v[0];
            SyncPoint p = base.withValue(value);
            return new Trial(p, () -> vk.hostSignal(semaphore, value), () -> p.waiter().close());
        }, () -> {
            base.waiter().close();
            vk.destroySemaphore(semaphore);
            vk.close();
            producer.close();
        });
        return List.of(h);
    }

    /**
     * A Vulkan timeline semaphore imported into CUDA ({@link CudaExternalSemaphore}); each trial's point is a
     * stream wait at the next value followed by an event the CPU awaits, and the host signals it with
     * {@code vkSignalSemaphore}. One GPU: the first Vulkan device is CUDA device 0.
     */
    private static List<Subject> cudaExternalSemaphore() {
        CudaWorkQueue queue = CudaWorkQueue.open(0);
        ExportingVulkanDevice vk;
        try {
            vk = ExportingVulkanDevice.open(null);
        } catch (RuntimeException e) {
            queue.close();
            throw e;
        }
        long semaphore = vk.createSemaphore(true, 0);
        CudaExternalSemaphore imported;
        try {
            imported = CudaExternalSemaphore.importTimelineFd(vk.exportOpaqueFd(semaphore), queue.context());
        } catch (RuntimeException e) {
            vk.destroySemaphore(semaphore);
            vk.close();
            queue.close();
            throw e;
        }
        long[] v = {0};
        Subject h = new Subject("CUDA external semaphore (Vulkan timeline fd) · vkSignalSemaphore (" + queue.deviceName() + ")",
                () -> {
                    long value = ++v[0];
                    SyncPoint p = imported.point(queue.stream(), value);
                    return new Trial(p, () -> vk.hostSignal(semaphore, value), () -> p.waiter().close());
                }, () -> {
                    queue.synchronize();
                    imported.close();
                    vk.destroySemaphore(semaphore);
                    vk.close();
                    queue.close();
                });
        return List.of(h);
    }

    /**
     * D3D12 fences through vkd3d (lavapipe or NVIDIA's Vulkan): a host {@code ID3D12Fence::Signal} and
     * a queue {@code ID3D12CommandQueue::Signal}. The raw thread blocks where a D3D12 program on vkd3d would: in
     * {@code vkd3d_wait_event(event, INFINITE)} on a vkd3d-utils event registered with {@code SetEventOnCompletion};
     * GpuSync watches the point's eventfd on its epoll loop.
     */
    private static List<Subject> d3d12() {
        D3D12Device device = D3D12Device.open();
        MemorySegment hostFence = device.createFence(0);
        MemorySegment queueFence = device.createFence(0);
        SyncPoint.D3D12 host = D3D12Fences.adopt(hostFence, 0);
        SyncPoint.D3D12 queue = D3D12Fences.adopt(queueFence, 0);
        long[] v = {0, 0};
        Subject h = new Subject("D3D12 fence · ID3D12Fence::Signal (vkd3d)", () -> {
            long value = ++v[0];
            return d3d12Trial(host.withValue(value), hostFence, value, () -> device.signal(hostFence, value));
        }, () -> host.waiter().close());
        Subject q = new Subject("D3D12 fence · ID3D12CommandQueue::Signal (vkd3d)", () -> {
            long value = ++v[1];
            return d3d12Trial(queue.withValue(value), queueFence, value, () -> device.queueSignal(queueFence, value));
        }, () -> {
            queue.waiter().close();
            device.close();
        });
        return List.of(h, q);
    }

    private static Trial d3d12Trial(SyncPoint point, MemorySegment fence, long value, Runnable signal) {
        MemorySegment event = D3d12Shim.utilsEventCreate();
        return new Trial(point, signal, () -> {
            point.waiter().close();
            D3d12Shim.eventForget(event);
        }, () -> {
            int hr = D3d12Shim.fenceSetEventOnCompletion(fence, value, event);
            if (hr < 0) {
                throw new IllegalStateException("SetEventOnCompletion: 0x" + Integer.toHexString(hr));
            }
            D3d12Shim.utilsEventWaitForever(event);
        });
    }
}
