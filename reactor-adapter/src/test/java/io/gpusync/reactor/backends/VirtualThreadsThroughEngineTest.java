package io.gpusync.reactor.backends;

import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.gl.EglReusableSync;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.reactor.WaitPath;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.test.vulkan.VulkanContext;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * 100,000 virtual threads, each blocked in {@link SyncEngine#block} on a point of a real backend, all return once
 * signalled, on the default carrier pool: no carrier is pinned (JFR records no {@code jdk.VirtualThreadPinned}) and
 * no platform thread is added beyond the engine's own (see {@link BlockedVirtualThreads} for the bound).
 */
class VirtualThreadsThroughEngineTest {
    private static final int N = 100_000;
    private final List<AutoCloseable> closing = new ArrayList<>();
    private SyncEngine engine;

    @AfterEach
    void close() throws Exception {
        if (engine != null) {
            engine.dispose();
        }
        for (AutoCloseable c : closing.reversed()) {
            c.close();
        }
    }

    @Test
    void oneHundredThousandVirtualThreadsBlockedOnACpuTimelineNeitherPinNorAddThreads() throws Exception {
        engine = GpuSync.builder().name("vt-cpu").build();
        CpuTimeline timeline = new CpuTimeline();
        assertThat(engine.pathFor(timeline.at(1).waiter())).isEqualTo(WaitPath.CALLBACK);

        BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, N, i -> timeline.at(1 + i % 1000),
                () -> timeline.signal(1000), Duration.ofMinutes(1));

        report.assertNoPinningAndNoThreadPerWait("gpusync-vt-cpu-");
        assertThat(timeline.pendingWaits()).isZero();
    }

    /** 1,000 eventfds (the fd limit here is 20,000, and each watched fd costs two), 100 threads blocked on each. */
    @Test
    void oneHundredThousandVirtualThreadsBlockedOnEventFdsNeitherPinNorAddThreads() throws Exception {
        engine = GpuSync.builder().name("vt-eventfd").build();
        List<EventFd> fds = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            EventFd fd = EventFd.create();
            fds.add(fd);
            closing.add(fd);
        }
        WaitPath path = engine.pathFor(fds.getFirst().point().waiter());
        assertThat(path).isIn(WaitPath.EPOLL, WaitPath.BLOCKING);

        BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, N, i -> fds.get(i % 1000).point(),
                () -> fds.forEach(EventFd::signal), Duration.ofMinutes(1));

        report.assertNoPinningAndNoThreadPerWait("gpusync-vt-eventfd-");
        System.out.println("eventfd path: " + path);
    }

    @Test
    void oneHundredThousandVirtualThreadsBlockedOnAVulkanTimelineNeitherPinNorAddThreads() throws Exception {
        VulkanContext vk = openedOrSkipped(VulkanContext::create, "Vulkan driver");
        engine = GpuSync.builder().name("vt-vulkan").build();
        SyncPoint.Vulkan base = vk.device().createTimelineSemaphore(0);
        closing.add(() -> base.waiter().close());
        assertThat(engine.pathFor(base.withValue(1).waiter())).isEqualTo(WaitPath.WAIT_SET);

        BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, N, i -> base.withValue(1 + i % 1000),
                () -> vk.device().hostSignal(base.semaphore(), 1000), Duration.ofMinutes(1));

        report.assertNoPinningAndNoThreadPerWait("gpusync-vt-vulkan-");
    }

    /**
     * 10,000, not 100,000: of these waits on one host-signalled EGL sync the engine's pool serves 16 on the GL
     * backend's own threads (lent to it, {@code gpusync-egl-N}, never ending), and its pollers probe the rest, each
     * probe handed to one of those threads. They are the only threads the run may add beyond the usual ones, and
     * far fewer than one per wait.
     */
    @Test
    void tenThousandVirtualThreadsBlockedOnAnEglSyncNeitherPinNorAddAThreadPerWait() throws Exception {
        EglProducer producer = openedOrSkipped(EglProducer::openSurfaceless,
                "EGL/GLES driver with the surfaceless platform");
        EglReusableSync sync = producer.reusableSync();
        closing.add(sync);
        SyncPoint point = sync.point();
        closing.add(() -> point.waiter().close());
        engine = GpuSync.builder().name("vt-gl").build();
        assertThat(engine.pathFor(point.waiter())).isEqualTo(WaitPath.BLOCKING);

        BlockedVirtualThreads.Report report = BlockedVirtualThreads.run(engine, 10_000, i -> point, sync::signal,
                Duration.ofMinutes(1));

        // the lent waits (the pool's 16) and the pollers' hand-offs: at most 32 lent in a process, plus callers
        report.assertNoPinningAndNoThreadPerWait("gpusync-vt-gl-", name -> name.startsWith("gpusync-egl-"), 40);
    }

    /** The recording these tests rely on does see a pinned park: a virtual thread parking in a class initializer. */
    @Test
    void theRecordingSeesAPinnedPark() throws Exception {
        try (Recording jfr = new Recording()) {
            jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO);
            jfr.start();
            Thread.ofVirtual().start(ParksWhileInitializing::touch).join();
            jfr.stop();
            Path file = Files.createTempFile("gpusync-vt-", ".jfr");
            try {
                jfr.dump(file);
                assertThat(RecordingFile.readAllEvents(file))
                        .anyMatch(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned"));
            } finally {
                Files.deleteIfExists(file);
            }
        }
    }

    /** What {@code open} returns, closed after the test; the test is skipped where there is no such driver. */
    private <T extends AutoCloseable> T openedOrSkipped(java.util.function.Supplier<T> open, String driver) {
        try {
            T opened = open.get();
            closing.add(opened);
            return opened;
        } catch (SyncNotSupportedException absent) {
            assumeTrue(false, "no " + driver + " here: " + absent.getMessage());
            throw absent; // not reached: the assumption aborts the test
        }
    }

    private static final class ParksWhileInitializing {
        static {
            LockSupport.parkNanos(2_000_000); // a VM frame (<clinit>) on the stack pins the virtual thread
        }

        static void touch() {
        }
    }
}
