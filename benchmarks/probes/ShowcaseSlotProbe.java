import io.gpusync.SyncPoint;
import io.gpusync.examples.device.*;
import io.gpusync.reactor.GpuSync;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;

/**
 * Where wrong /compute checksums on CUDA came from (issue 29, the H200 at 5f33841): per await path, the checksum read
 * right after the wait and again 20 ms later. Built against .device.lib and run there as a jar in .device/lib:
 *   javac -d /tmp/p -cp "$(ls .device.lib/*.jar | paste -sd:)" benchmarks/probes/ShowcaseSlotProbe.java
 *   jar cf .device/lib/zz-probe.jar -C /tmp/p . ; then on the H200: bash .device/setup && .device/java ShowcaseSlotProbe
 */
public class ShowcaseSlotProbe {
    record R(Computation c, int first, long word, long value, boolean signaledAtEnd) {}

    public static void main(String[] a) throws Exception {
        Device device = Devices.open("cuda", new DeviceOptions(KernelModel.DEFAULT, 4, false, 0,
                DeviceOptions.CudaPoint.TIMELINE, new DeviceOptions.ComputeSizing(Duration.ofNanos(200_000), 0, 64))).device();
        System.out.println(device.computeDescription());
        for (int rep = 0; rep < 2; rep++) {
            run(device, "timeline+engine  conc12", false, 12, "engine");
            run(device, "timeline+waiter  conc12", false, 12, "waiter");
            run(device, "event+cuEventSync conc12", true, 12, "blocking");
            run(device, "event+engine     conc12", true, 12, "engine");
            run(device, "timeline+engine  conc1 ", false, 1, "engine");
            run(device, "event+cuEventSync conc1 ", true, 1, "blocking");
        }
        device.close();
        System.exit(0);
    }

    static long seedBase = 1000;

    static void run(Device device, String name, boolean event, int conc, String how) {
        int n = 72;
        long base = seedBase; seedBase += n;
        List<R> rs = Flux.range(0, n).flatMap(i -> Mono.defer(() -> {
            Computation c = device.compute(base + i, event);
            Mono<Void> w = switch (how) {
                case "engine" -> GpuSync.await(c.point(), Duration.ofSeconds(10));
                case "waiter" -> Mono.fromRunnable(() -> c.point().waiter().await(Duration.ofSeconds(10))).subscribeOn(Schedulers.boundedElastic()).then();
                default -> Mono.fromRunnable(() -> device.awaitBlocking(c.point(), Duration.ofSeconds(10))).subscribeOn(Schedulers.boundedElastic()).then();
            };
            return w.then(Mono.fromCallable(() -> {
                int first = c.checksum();
                long word = -1, value = -1;
                if (c.point() instanceof SyncPoint.Cuda cp && cp.value().isPresent()) {
                    word = cp.event().reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
                    value = cp.value().getAsLong();
                }
                return new R(c, first, word, value, false);
            }));
        }), conc).collectList().block(Duration.ofSeconds(60));
        try { Thread.sleep(20); } catch (InterruptedException e) { throw new RuntimeException(e); }
        int badFirst = 0, badLater = 0, badFirstGoodLater = 0, wordBelow = 0;
        StringBuilder ex = new StringBuilder();
        for (R r : rs) {
            int want = MatrixChain.checksum(r.c.seed(), r.c.rounds());
            int later = r.c.checksum();
            if (r.first != want) badFirst++;
            if (later != want) badLater++;
            if (r.first != want && later == want) badFirstGoodLater++;
            if (r.value >= 0 && r.word < r.value) wordBelow++;
            if ((r.first != want) && ex.length() < 600) ex.append(" seed=").append(r.c.seed()).append(" word=").append(r.word).append(" value=").append(r.value).append(later == want ? " laterOK" : " laterBAD").append(';');
            r.c.release(true);
        }
        System.out.printf("%s: n=%d badFirst=%d badLater=%d fixedByReread=%d wordBelowValueAtWake=%d%s%n", name, rs.size(), badFirst, badLater, badFirstGoodLater, wordBelow, ex);
    }
}
