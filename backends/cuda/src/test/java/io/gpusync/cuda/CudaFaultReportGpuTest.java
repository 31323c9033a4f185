package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.CUuuid;
import io.gpusync.bindings.cuda.Cuda;
import io.gpusync.spi.SignalCallbackWaiter;
import io.gpusync.spi.SignalListener;
import io.gpusync.test.vulkan.ExportingVulkanDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How a sticky fault reaches waits that sit behind gpusync's CUDA callbacks, for the cases the engine-level
 * {@code CudaFaultsGpuTest} does not reach: a wait on an imported external semaphore that nothing will ever signal,
 * and a context whose waits are all deferred for want of callback room (no callback of its own in flight to report
 * the fault). Each case traps in a context of its own ({@code cuCtxCreate}) in a child JVM, which prints one line
 * per wait: how it ended and how long after the fault.
 */
@Tag("gpu")
class CudaFaultReportGpuTest {

    /**
     * The CPU waits on a Vulkan timeline semaphore imported into CUDA ({@code cuWaitExternalSemaphoresAsync} then an
     * event); Vulkan never signals it, so only the fault can end the waits: a listener's and a blocking
     * {@code FOREVER} await's, both with {@link DeviceLostException} within issue 10's 50 ms (the callback behind
     * the semaphore's event is called with the error; measured on the H200: 6.5 ms and 5.3 ms).
     */
    @Test
    void aFaultEndsWaitsOnAnExternalSemaphoreThatNothingSignals() throws Exception {
        CudaTestSupport.assumeCuda();
        String out = child("semaphore");
        assumeFalse(out.contains("SKIP "), () -> out.lines().filter(l -> l.startsWith("SKIP ")).findFirst().orElse(""));
        assertThat(out).as("child output:%n%s", out).contains("LISTENER FATAL", "BLOCKING FATAL");
        assertThat(latencyMicros(out, "LISTENER")).as("fault → listener failed, µs").isLessThanOrEqualTo(50_000);
        assertThat(latencyMicros(out, "BLOCKING")).as("fault → blocking await failed, µs").isLessThanOrEqualTo(50_000);
    }

    /**
     * With room for one callback behind events ({@code gpusync.cuda.streamCallbacksBehindEvents=1}) held by a wait on
     * another context's 5 s kernel, a wait in the faulting context is deferred: no callback of its context is in
     * flight, so the fault watch checks that context closely (every 25 ms at most) and fails the wait within well
     * under 100 ms — the deferred entry's own probes, half its age apart (≈ 500 ms here), would see it far later.
     * The other context's wait ends too, one way or the other (on the H200's driver the trap poisoned the other
     * context of the process as well: its wait failed with {@link DeviceLostException}).
     */
    @Test
    void aContextWhoseWaitsAreAllDeferredIsWatchedClosely() throws Exception {
        CudaTestSupport.assumeCuda();
        String out = child("deferred");
        assertThat(out).as("child output:%n%s", out).contains("DEFERRED 1", "LISTENER FATAL")
                .containsAnyOf("OTHER_CONTEXT OK", "OTHER_CONTEXT FATAL");
        assertThat(latencyMicros(out, "LISTENER")).as("fault → deferred wait failed, µs").isLessThanOrEqualTo(100_000);
    }

    private static long latencyMicros(String out, String what) {
        return out.lines().filter(l -> l.startsWith(what + " FATAL")).mapToLong(l ->
                Long.parseLong(l.replaceAll(".* after=(-?\\d+) us.*", "$1"))).findFirst().orElseThrow();
    }

    private static String child(String scenario) throws Exception {
        return ChildJvm.runOk(Child.class, List.of("-Dgpusync.cuda.streamCallbacksBehindEvents=1"), scenario);
    }

    /** Runs in the child JVM. */
    public static final class Child {
        private static final long MS = 1_000_000L;

        public static void main(String[] args) {
            Thread.ofPlatform().daemon().start(() -> { // never outlive the parent's patience
                try {
                    Thread.sleep(90_000);
                    System.out.println("CHILD TIMEOUT");
                    Thread.getAllStackTraces().forEach((t, st) -> System.out.println(t + " " + java.util.Arrays.toString(st)));
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            int rc;
            try {
                if (Cuda.cuInit(0) != 0) {
                    throw new AssertionError("cuInit");
                }
                rc = args[0].equals("semaphore") ? semaphore() : deferred();
            } catch (Throwable t) {
                t.printStackTrace(System.out);
                rc = 2;
            }
            System.out.flush();
            Runtime.getRuntime().halt(rc); // skip Cleaners and hooks on the poisoned context
        }

        private static int semaphore() throws Exception {
            MemorySegment ctx = CudaTestSupport.createContext();
            byte[] uuid = new byte[16];
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment u = CUuuid.allocate(arena);
                CudaTestSupport.check(Cuda.cuDeviceGetUuid_v2(u, 0), "cuDeviceGetUuid_v2");
                MemorySegment.copy(u, ValueLayout.JAVA_BYTE, 0, uuid, 0, 16);
            }
            ExportingVulkanDevice vk;
            try {
                vk = ExportingVulkanDevice.open(uuid);
            } catch (SyncNotSupportedException e) {
                System.out.println("SKIP no Vulkan device that exports semaphores: " + e.getMessage());
                return 0;
            }
            long semaphore = vk.createSemaphore(true, 0);
            System.out.println("VULKAN device open, semaphore exported");
            CudaTestSupport.push(ctx);
            // loaded before the wait: cuModuleLoadData waits for the context's streams, one of which never ends
            // before the fault (measured: the load blocked for good behind the semaphore wait)
            CudaTestSupport.function("spin_ns");
            CudaTestSupport.function("trap_kernel");
            MemorySegment waitStream = CudaTestSupport.stream();
            MemorySegment trapStream = CudaTestSupport.stream();
            CudaExternalSemaphore imported = CudaExternalSemaphore.importTimelineFd(vk.exportOpaqueFd(semaphore), ctx);
            SyncPoint.Cuda point = imported.point(waitStream, 1); // Vulkan never signals 1
            CompletableFuture<Long> listener = listen(point);
            CompletableFuture<Long> blocking = new CompletableFuture<>();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    point.await(SyncPoint.FOREVER);
                    blocking.complete(-1L);
                } catch (Throwable t) {
                    blocking.completeExceptionally(stamp(t));
                }
            });
            Thread.sleep(50);
            System.out.println("PENDING " + !listener.isDone() + " " + !blocking.isDone());
            long fault = trap(trapStream, 300);
            int rc = report("LISTENER", listener, fault) | report("BLOCKING", blocking, fault);
            CudaTestSupport.pop();
            vk.hostSignal(semaphore, 1); // nothing stays blocked on it while the process exits
            return rc;
        }

        private static int deferred() throws Exception {
            MemorySegment other = CudaTestSupport.createContext();
            CudaTestSupport.push(other);
            MemorySegment slow = CudaTestSupport.stream();
            CudaTestSupport.launch("spin_ns", slow, 5_000 * MS);
            CompletableFuture<Long> otherWait = listen(CudaEvents.record(slow, other)); // takes the only room
            CudaTestSupport.pop();

            MemorySegment ctx = CudaTestSupport.createContext();
            CudaTestSupport.push(ctx);
            MemorySegment stream = CudaTestSupport.stream();
            CudaTestSupport.launch("spin_ns", stream, 1_000 * MS);
            CudaTestSupport.launch("trap_kernel", stream);
            CompletableFuture<Long> listener = listen(CudaEvents.record(stream, ctx));
            CudaDriverService cuda = CudaDriverService.get();
            System.out.println("DEFERRED " + cuda.budget().deferred() + " in flight "
                    + cuda.budget().inFlight() + " reports own faults " + cuda.callbacks().reportsOwnFaults(
                    ctx.address()));
            long fault = faultTime(stream);
            int rc = report("LISTENER", listener, fault);
            CudaTestSupport.pop();
            try {
                long done = otherWait.get(20, TimeUnit.SECONDS);
                System.out.println("OTHER_CONTEXT OK after=" + (done - fault) / 1_000 + " us");
            } catch (java.util.concurrent.ExecutionException e) { // ended, with the fault reaching it too
                report("OTHER_CONTEXT", otherWait, fault);
            } catch (Exception e) {
                System.out.println("OTHER_CONTEXT PENDING " + e);
                rc |= 1;
            }
            return rc;
        }

        /** Launches a spin of {@code spinMs} then a trap on {@code stream}; returns when the fault is seen. */
        private static long trap(MemorySegment stream, long spinMs) {
            CudaTestSupport.launch("spin_ns", stream, spinMs * MS);
            CudaTestSupport.launch("trap_kernel", stream);
            return faultTime(stream);
        }

        /** Spins on {@code cuStreamQuery} until the stream reports its error: the fault's time (nanoTime). */
        private static long faultTime(MemorySegment stream) {
            int r;
            while ((r = Cuda.cuStreamQuery(stream)) == Cuda.CUDA_ERROR_NOT_READY()) {
                Thread.onSpinWait();
            }
            long at = System.nanoTime();
            System.out.println("FAULT " + CudaResults.name(r));
            return at;
        }

        /** Completes with the time it was signalled, or fails with the error stamped with the time it arrived. */
        private static CompletableFuture<Long> listen(SyncPoint point) {
            CompletableFuture<Long> f = new CompletableFuture<>();
            ((SignalCallbackWaiter) point.waiter()).onSignal(new SignalListener() {
                @Override
                public void signalled() {
                    f.complete(System.nanoTime());
                }

                @Override
                public void failed(SyncException error) {
                    f.completeExceptionally(stamp(error));
                }
            });
            return f;
        }

        private static Throwable stamp(Throwable t) {
            return new Stamped(t, System.nanoTime());
        }

        private static int report(String what, CompletableFuture<Long> wait, long fault) {
            try {
                wait.get(20, TimeUnit.SECONDS);
                System.out.println(what + " NO_ERROR");
                return 1;
            } catch (java.util.concurrent.ExecutionException e) {
                Stamped s = (Stamped) e.getCause();
                boolean fatal = s.getCause() instanceof DeviceLostException d && d.kind() == ErrorKind.FATAL;
                System.out.println(what + (fatal ? " FATAL" : " WRONG " + s.getCause()) + " after="
                        + (s.at - fault) / 1_000 + " us :: " + s.getCause().getMessage());
                return fatal ? 0 : 1;
            } catch (Exception e) {
                System.out.println(what + " PENDING " + e);
                return 1;
            }
        }

        /** An error and when it arrived. */
        private static final class Stamped extends RuntimeException {
            final long at;

            Stamped(Throwable cause, long at) {
                super(cause);
                this.at = at;
            }
        }
    }
}
