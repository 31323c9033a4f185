// Waits that overflow the BLOCKING pool onto the adaptive poller, half on eventfds signalled 300 ms later, half on
// CpuTimeline values; prints each wait that timed out with its fd readable. Before the fix in AdaptiveProbePass.runCold
// (this 2-core box): 25-168 of 200 eventfd waits lost in 7 of 10 runs; after: 0 in 18 runs. Run with the classes of
// api, backend-kit, backends/linux, backends/cpu, reactor-adapter, bindings/bindings-libc and reactor-core on the class path:
//   java --enable-native-access=ALL-UNNAMED -cp "$CP" benchmarks/probes/EventFdProbeOverflow.java 400
import io.gpusync.linux.EventFd;
import io.gpusync.reactor.SyncEngine;
import java.time.Duration;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;

public class EventFdProbeOverflow {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        boolean close = a.length < 2 || !a[1].equals("noclose");
        SyncEngine engine = io.gpusync.reactor.GpuSync.builder().name("repro").spinBudget(Duration.ofNanos(50_000)).waiterThreads(16).eventLoopThreads(1).build();
        ScheduledExecutorService device = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger bad = new AtomicInteger();
        long t0 = System.nanoTime();
        try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < n; i++) {
                int id = i;
                if (i % 2 == 0) { vts.submit(() -> {
                    io.gpusync.cpu.CpuTimeline tl = new io.gpusync.cpu.CpuTimeline();
                    device.schedule(() -> tl.signal(1), 300, TimeUnit.MILLISECONDS);
                    try { engine.block(tl.at(1), Duration.ofSeconds(5)); } catch (Exception e) { bad.incrementAndGet(); System.out.println("BADTL " + id + " " + e); }
                }); continue; }
                vts.submit(() -> {
                    EventFd fd = EventFd.create();
                    try {
                        var point = fd.point();
                        device.schedule(fd::signal, 300, TimeUnit.MILLISECONDS);
                        try { engine.block(point, Duration.ofSeconds(3)); }
                        catch (io.gpusync.SyncTimeoutException te) { System.out.println("BAD " + id + " readable=" + point.waiter().isSignaled() + " counter=" + fd.drain() + " pending=" + engine.pendingWaits() + " " + te.getMessage()); throw te; }
                    } catch (Exception e) {
                        bad.incrementAndGet();
                    } finally {
                        if (close) fd.close();
                    }
                });
                if (i % 50 == 49) System.gc();
            }
        }
        System.out.println("n=" + n + " bad=" + bad + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        System.exit(0);
    }
}
