package io.gpusync.benchmarks.backends;

import io.gpusync.SyncPoint;
import io.gpusync.test.gl.EglProducer;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.IntFunction;

/**
 * What a GL fence wait costs in this process's fence-wait mode ({@code -Dio.gpusync.gl.fenceWaits=driver|probe}):
 * for EGL fence syncs and {@code GLsync}s, the time from a fence's creation (after {@code CLEARS} queued clears) to
 * the return of {@code await(FOREVER)} on a thread with no GL context, and the process's CPU time per fence. The
 * rasteriser's work is the same in both modes, so the difference between two runs is what the wait itself adds.
 * Prints one Markdown row per fence kind.
 *
 * <pre>
 * for m in driver probe; do java -Dio.gpusync.gl.fenceWaits=$m --enable-native-access=ALL-UNNAMED \
 *     -cp <the benchmarks class path> io.gpusync.benchmarks.backends.GlFenceWaitCost 300 4; done
 * </pre>
 */
public final class GlFenceWaitCost {
    private GlFenceWaitCost() {
    }

    public static void main(String[] args) {
        int fences = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int clears = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        String mode = System.getProperty("io.gpusync.gl.fenceWaits", "auto");
        try (EglProducer producer = EglProducer.openSurfaceless(512, 512)) {
            measure("EGL fence sync", mode, fences, clears, producer::eglFence);
            measure("GLsync", mode, fences, clears, producer::fence);
        }
    }

    private static void measure(String kind, String mode, int fences, int clears,
                                IntFunction<SyncPoint.OpenGLSync> fence) {
        for (int i = 0; i < fences / 10; i++) { // warm-up: the JIT, the EGL threads, the pooled contexts
            await(fence.apply(clears));
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long[] micros = new long[fences];
        long cpu0 = os.getProcessCpuTime();
        for (int i = 0; i < fences; i++) {
            long t0 = System.nanoTime();
            await(fence.apply(clears));
            micros[i] = (System.nanoTime() - t0) / 1_000;
        }
        long cpuPerFence = (os.getProcessCpuTime() - cpu0) / 1_000 / fences;
        Arrays.sort(micros);
        System.out.printf(Locale.ROOT, "| %s | %s | %d | %d | %d | %d | %d |%n", kind, mode, fences,
                micros[fences / 2], micros[fences * 9 / 10], micros[fences * 99 / 100], cpuPerFence);
    }

    private static void await(SyncPoint.OpenGLSync point) {
        try {
            point.await(SyncPoint.FOREVER);
        } finally {
            point.waiter().close();
        }
    }
}
