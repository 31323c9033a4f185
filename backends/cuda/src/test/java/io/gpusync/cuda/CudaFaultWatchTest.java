package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.SyncException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the CUDA fault watch does per wake-up, without a GPU: a service of the test's own holds registrations on
 * made-up context addresses, and a watch that never starts its thread is asked for one pass
 * ({@link CudaFaultWatch#checkDue}). Its driver checks fail here (no driver) but are counted
 * ({@link CudaFaultWatch#checks()}), which is all this test reads. How much CPU a wake-up costs on a real device is
 * {@code CudaFaultsGpuTest#theFaultWatchOnlyBacksUpTheCallbacksWhileNothingFaults}'s.
 */
class CudaFaultWatchTest {
    private static final long A = 0xa000_0000L;
    private static final long B = 0xb000_0000L;
    private static final long C = 0xc000_0000L;
    private static final long INTERVAL = CudaFaultWatch.FIRST_INTERVAL_NANOS;
    private final CudaDriverService cuda = new CudaDriverService(StreamCallbackBudget.DEFAULT_CAPACITY);
    private final StreamCallbacks callbacks = cuda.callbacks();
    private final List<Long> keys = new ArrayList<>();

    /** A wait's slot that nothing here ever ends. */
    private static final StreamCallbacks.Slot PENDING = new StreamCallbacks.Slot() {
        @Override
        public void fire() {
        }

        @Override
        public void fail(SyncException error) {
        }
    };

    @BeforeEach
    void noDriverHere() {
        CudaTestSupport.assumeNoCudaDriver(); // the checks push the made-up contexts: only where no driver can
    }

    @AfterEach
    void closeTheService() {
        keys.forEach(callbacks::cancel); // nothing registered: the service's own watch ends once closed
        cuda.close();
    }

    private long register(long context) {
        long key = callbacks.register(MemorySegment.ofAddress(context), null, PENDING);
        keys.add(key);
        return key;
    }

    private void register(long context, int waits, boolean oneCallbackInFlight) {
        for (int i = 0; i < waits; i++) {
            long key = register(context);
            if (oneCallbackInFlight && i == 0) {
                callbacks.takingOff(key);
            }
        }
    }

    @Test
    void aPassChecksEachContextThatCannotReportItsFaultsOnceHoweverManyWaitsItHas() {
        register(A, 1_000, false);
        register(B, 3, false);
        CudaFaultWatch watch = new CudaFaultWatch(cuda); // its thread never starts: the test makes the passes
        long now = System.nanoTime();

        int checked = watch.checkDue(callbacks.watchedContexts(), INTERVAL, now);

        assertThat(checked).as("one check per context, not per wait").isEqualTo(2);
        assertThat(watch.checks()).isEqualTo(2);
        assertThat(watch.checkDue(callbacks.watchedContexts(), INTERVAL, now + INTERVAL)).isEqualTo(2);
    }

    @Test
    void aContextWithACallbackInFlightIsCheckedOnlyOnceABackstopIntervalWhateverItsWaits() {
        register(C, 1_000, true); // one callback in flight reports the context's faults; 999 waits behind it
        CudaFaultWatch watch = new CudaFaultWatch(cuda);
        Set<Long> contexts = callbacks.watchedContexts();
        long t0 = System.nanoTime();

        assertThat(watch.checkDue(contexts, INTERVAL, t0)).as("first seen: its callbacks report").isZero();
        assertThat(watch.checkDue(contexts, INTERVAL, t0 + CudaFaultWatch.BACKSTOP_INTERVAL_NANOS / 2)).isZero();
        assertThat(watch.checkDue(contexts, INTERVAL, t0 + CudaFaultWatch.BACKSTOP_INTERVAL_NANOS))
                .as("the backstop: one check of the context").isEqualTo(1);
        assertThat(watch.checks()).isEqualTo(1);
    }

    @Test
    void aContextVouchedForWithinTheIntervalIsNotQueriedAgain() {
        register(A, 10, false);
        CudaFaultWatch watch = new CudaFaultWatch(cuda);
        watch.vouch(A); // a deferred event's probe just succeeded in A
        long now = System.nanoTime();

        assertThat(watch.checkDue(callbacks.watchedContexts(), CudaFaultWatch.MAX_INTERVAL_NANOS, now)).isZero();
        assertThat(watch.checkDue(callbacks.watchedContexts(), INTERVAL, now + 2 * CudaFaultWatch.MAX_INTERVAL_NANOS))
                .as("the vouch has aged past the interval").isEqualTo(1);
    }

    @Test
    void closingTheServiceEndsTheIdleWatchAndANewRegistrationStartsItAgain() throws InterruptedException {
        long key = register(A);
        Thread first = cuda.faultWatch().watchThread();
        assertThat(first).as("the first registration started the watch").isNotNull();
        cuda.close();
        assertThat(first.isAlive()).as("closing abandons nothing: a context is still registered").isTrue();

        callbacks.cancel(key);
        first.join(10_000);
        assertThat(first.isAlive()).as("idle after close: the thread ended").isFalse();

        register(B);
        Thread second = cuda.faultWatch().watchThread();
        assertThat(second).as("a later registration starts a watch again").isNotNull().isNotSameAs(first);
        assertThat(second.isAlive()).isTrue();
    }
}
