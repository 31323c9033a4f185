// Waits that overflow the BLOCKING pool onto the adaptive poller: N waits from virtual threads (SyncEngine.block),
// half on eventfds and half on CpuTimeline values, each signalled 300 ms after it starts, on an engine with
// WAITER_THREADS BLOCKING threads, a 50 us spin budget and no Netty (the spring-mvc consumer's set-up). Prints each
// wait that timed out with its point signalled, and a summary line. Figures (this 2-core box, 400 waits, 1 waiter
// thread): before AdaptiveProbePass.runCold counted the waits it moves back, 7 of 10 runs lost 25-168 eventfd waits;
// after, 0 of 10 (and 0 of 8 with 16 waiter threads).
//   java --enable-native-access=ALL-UNNAMED -cp "$CP" benchmarks/probes/EventFdProbeOverflow.java 400 1
// with the classes of api, backend-kit, backends/linux, backends/cpu, reactor-adapter, bindings/bindings-libc,
// reactor-core, reactive-streams and micrometer-observation/-commons on $CP (no Netty).
import io.gpusync.SyncPoint;
import io.gpusync.SyncTimeoutException;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class EventFdProbeOverflow {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int waiterThreads = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        SyncEngine engine = GpuSync.builder().name("probe").spinBudget(Duration.ofNanos(50_000))
                .waiterThreads(waiterThreads).eventLoopThreads(1).build();
        ScheduledExecutorService device = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger lost = new AtomicInteger();
        long t0 = System.nanoTime();
        try (ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                boolean onEventFd = i % 2 == 1;
                requests.submit(() -> {
                    EventFd fd = onEventFd ? EventFd.create() : null;
                    CpuTimeline timeline = onEventFd ? null : new CpuTimeline();
                    SyncPoint point = onEventFd ? fd.point() : timeline.at(1);
                    device.schedule(onEventFd ? fd::signal : () -> timeline.signal(1), 300, TimeUnit.MILLISECONDS);
                    try {
                        engine.block(point, Duration.ofSeconds(3));
                    } catch (SyncTimeoutException e) {
                        lost.incrementAndGet();
                        System.out.println("LOST " + point + " signalled=" + point.waiter().isSignaled());
                    } finally {
                        if (fd != null) {
                            fd.close();
                        }
                    }
                });
                if (i % 50 == 49) {
                    System.gc(); // the Cleaner then closes earlier eventfds: their numbers are reused
                }
            }
        }
        System.out.println("n=" + n + " waiterThreads=" + waiterThreads + " lost=" + lost + " in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
        System.exit(0);
    }
}
