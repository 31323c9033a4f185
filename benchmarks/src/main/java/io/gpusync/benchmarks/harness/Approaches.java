package io.gpusync.benchmarks.harness;

import io.gpusync.reactor.BackoffIdleStrategy;
import io.gpusync.reactor.BusySpinIdleStrategy;
import io.gpusync.reactor.GpuSync;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Supplier;

/** The approaches compared, by key; each call makes a fresh instance (fresh threads, fresh engine). */
public final class Approaches {
    private Approaches() {
    }

    /** Human descriptions for the report, by key. */
    public static Map<String, String> descriptions() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("a", "Mono.fromCallable(() -> { point.await(t); return true; }).subscribeOn(boundedElastic) — "
                + "a boundedElastic with Reactor's defaults (10 × nproc threads, 100,000 queued tasks per thread)");
        m.put("b", "gpu-handle-types' design: one waiter thread per backend serving a FIFO of waits — probe all; after a "
                + "fruitless pass Thread.yield(), 64 times; then block in the native wait of the oldest wait for a "
                + "10 ms slice, and repeat");
        m.put("c", "CUDA.jl's: each wait probes with 32 Thread.onSpinWait() spins then 256 Thread.yield()s (on a "
                + "virtual thread, as a Julia task), then is handed to one of 4 platform threads that block in the "
                + "native wait (libuv's 4-thread pool behind @threadcall)");
        m.put("d", "gpusync, default engine (GpuSync.builder().build(): 1 event loop, 1 poller with adaptive probe "
                + "scheduling, 16 waiter threads max, 5 ms blocking slice)");
        m.put("d-backoff", "gpusync default engine with the pollers' pre-2026-12 default, "
                + "idleStrategy(BackoffIdleStrategy::defaults) (spin 50 µs, park 20 µs … 1 ms, ≤ 25 % of a core): "
                + "the before of the adaptive probe scheduling, run side by side");
        m.put("e", "gpusync tuned for latency (BusySpinIdleStrategy pollers, 2 event loops, 1 ms blocking slice)");
        m.put("raw", "a platform thread per wait blocked in waiter.await(t) (the reference for wake latency)");
        return m;
    }

    public static Supplier<Approach> byKey(String key) {
        return switch (key) {
            case "a" -> BoundedElasticApproach::new;
            case "b" -> SeedWaiterThreadApproach::new;
            case "c" -> CudaJlApproach::new;
            case "d" -> () -> new GpuSyncApproach("d", "gpusync default", GpuSync.builder().name("bench-d").build());
            case "e" -> () -> new GpuSyncApproach("e", "gpusync tuned", GpuSync.builder().name("bench-e")
                    .idleStrategy(BusySpinIdleStrategy::new)
                    .pollerThreads(1)
                    .eventLoopThreads(2)
                    .blockingSlice(Duration.ofMillis(1))
                    .build());
            case "d-backoff" -> () -> new GpuSyncApproach("d-backoff", "gpusync default, back-off pollers",
                    GpuSync.builder().name("bench-dbackoff").idleStrategy(BackoffIdleStrategy::defaults).build());
            case "raw" -> RawThreadApproach::new;
            default -> throw new NoSuchElementException("no approach " + key + "; known: " + descriptions().keySet());
        };
    }
}
