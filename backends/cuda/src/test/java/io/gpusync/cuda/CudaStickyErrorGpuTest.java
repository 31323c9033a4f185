package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.testsuite.ChildJvm;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncPoint;
import io.gpusync.bindings.cuda.Cuda;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A trapping kernel's sticky error must surface as {@link DeviceLostException} ({@link ErrorKind#FATAL}), never
 * as "not signalled yet". A sticky error poisons its context (with a primary context: the device, for the whole
 * process), so the trap runs in a context of its own ({@code cuCtxCreate}) <em>in a child JVM</em>: nothing in
 * the test JVM can be affected, whatever the driver does with other contexts.
 */
@Tag("gpu")
class CudaStickyErrorGpuTest {

    @Test
    void aTrappingKernelIsFatalForEventsAndTimelines() throws Exception {
        CudaTestSupport.assumeCuda();
        String out = ChildJvm.runOk(Child.class, List.of());
        assertThat(out).contains("EVENT_AWAIT FATAL", "EVENT_PROBE FATAL", "TIMELINE_PROBE FATAL", "TIMELINE_AWAIT FATAL");
    }

    /** Runs in the child JVM: traps in a private context and reports how each wait failed. */
    public static final class Child {
        public static void main(String[] args) {
            int rc = 0;
            try {
                if (Cuda.cuInit(0) != 0) {
                    throw new AssertionError("cuInit");
                }
                MemorySegment ctx = CudaTestSupport.createContext();
                CudaTestSupport.push(ctx);
                MemorySegment stream = CudaTestSupport.stream();
                CudaHostTimeline timeline = CudaHostTimeline.create(ctx);
                // everything is enqueued behind a 300 ms spin, so no call below meets the error before the wait
                CudaTestSupport.launch("spin_ns", stream, 300_000_000L);
                CudaTestSupport.launch("trap_kernel", stream);
                SyncPoint.CudaEvent event = CudaEvents.record(stream, ctx);
                SyncPoint.Cuda value = timeline.advance(stream);
                rc |= report("EVENT_AWAIT", () -> event.await(Duration.ofSeconds(20)));
                rc |= report("EVENT_PROBE", () -> event.isSignaled());
                Thread.sleep(5); // let the timeline's health-check interval pass
                rc |= report("TIMELINE_PROBE", () -> {
                    long end = System.nanoTime() + 5_000_000_000L;
                    while (System.nanoTime() < end) {
                        if (value.isSignaled()) {
                            throw new AssertionError("a trapped stream's value reads as signalled");
                        }
                    }
                });
                rc |= report("TIMELINE_AWAIT", () -> timeline.at(1).await(Duration.ofSeconds(20)));
                CudaTestSupport.pop();
            } catch (Throwable t) {
                t.printStackTrace(System.out);
                rc = 2;
            }
            System.out.flush();
            Runtime.getRuntime().halt(rc); // skip Cleaners/hooks on the poisoned context
        }

        private static int report(String what, Runnable wait) {
            try {
                wait.run();
                System.out.println(what + " NO_ERROR");
                return 1;
            } catch (DeviceLostException e) {
                Object code = e.getCause() instanceof SyncBackendException b ? b.nativeCodeName() : "?";
                System.out.println(what + " " + e.kind() + " " + code + " :: " + e.getMessage());
                return e.kind() == ErrorKind.FATAL ? 0 : 1;
            } catch (SyncException e) {
                System.out.println(what + " WRONG_KIND " + e.kind() + " " + e);
                return 1;
            }
        }
    }
}
