package io.gpusync.reactor;

import io.gpusync.BackendKind;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.II_Result;
import reactor.core.CoreSubscriber;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * jcstress tests of {@link PendingWait}'s termination protocol (run by {@link ConcurrencyStressTest}): under
 * every race of its terminations, exactly one outcome is reported, the strategy's registration is released
 * exactly once, and always before the outcome is reported.
 */
final class PendingWaitStress {
    private PendingWaitStress() {
    }

    /** Counts what the protocol does to one wait. */
    static final class Probe implements OutcomeSink, Registration {
        final AtomicInteger reports = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        final AtomicInteger reportsBeforeRelease = new AtomicInteger();

        @Override
        public void terminated(PendingWait wait, Throwable outcome) {
            if (releases.get() == 0) {
                reportsBeforeRelease.incrementAndGet();
            }
            reports.incrementAndGet();
        }

        @Override
        public void release() {
            releases.incrementAndGet();
        }

        PendingWait newWait() {
            return new PendingWait(this, WAITER, Duration.ofSeconds(1), null, STRATEGY);
        }
    }

    static final SyncWaiter WAITER = new SyncWaiter() {
        @Override
        public void await(Duration timeout) {
        }

        @Override
        public boolean isSignaled() {
            return false;
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }
    };

    static final WaitStrategy STRATEGY = new WaitStrategy() {
        @Override
        public WaitPath path() {
            return WaitPath.CALLBACK;
        }

        @Override
        public boolean accepts(SyncWaiter waiter) {
            return true;
        }

        @Override
        public void start(PendingWait wait) {
        }
    };

    static final CoreSubscriber<Void> NO_SUBSCRIBER = null;
    static final SyncPoint UNUSED = null;

    /** A terminated wait's counts: one outcome, released once, released before the outcome was reported. */
    abstract static class Race {
        final Probe probe = new Probe();
        final PendingWait wait = probe.newWait();

        Race() {
            wait.attach(probe);
        }

        void counts(III_Result r) {
            r.r1 = probe.reports.get();
            r.r2 = probe.releases.get();
            r.r3 = probe.reportsBeforeRelease.get();
        }
    }

    // Two actors per test: jcstress runs a test only with a CPU per actor, and CI machines may have two.

    @JCStressTest
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "one outcome, released once, released first")
    @Outcome(expect = FORBIDDEN, desc = "an outcome lost or doubled, a double release, or reported before release")
    @State
    public static class SignalRacesCancel extends Race {
        @Actor
        public void signalled() {
            wait.signalled();
        }

        @Actor
        public void cancelled() {
            wait.cancel();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            counts(r);
        }
    }

    @JCStressTest
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "one outcome, released once, released first")
    @Outcome(expect = FORBIDDEN, desc = "an outcome lost or doubled, a double release, or reported before release")
    @State
    public static class FailureRacesTimeout extends Race {
        @Actor
        public void failed() {
            wait.failed(new IllegalStateException("driver failure"));
        }

        @Actor
        public void timedOut() {
            wait.run();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            counts(r);
        }
    }

    @JCStressTest
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "one outcome, released once, released first")
    @Outcome(expect = FORBIDDEN, desc = "an outcome lost or doubled, a double release, or reported before release")
    @State
    public static class TimeoutRacesDispose extends Race {
        @Actor
        public void timedOut() {
            wait.run();
        }

        @Actor
        public void disposed() {
            wait.engineDisposed();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            counts(r);
        }
    }

    @JCStressTest
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "one outcome, released once, released first")
    @Outcome(expect = FORBIDDEN, desc = "an outcome lost or doubled, a double release, or reported before release")
    @State
    public static class SignalRacesDispose extends Race {
        @Actor
        public void signalled() {
            wait.signalled();
        }

        @Actor
        public void disposed() {
            wait.engineDisposed();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            counts(r);
        }
    }

    /**
     * A strategy attaching its registration races with a cancel: the registration is released exactly once,
     * whether it was attached before or after the wait terminated.
     */
    @JCStressTest
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "one outcome, the registration released once")
    @Outcome(expect = FORBIDDEN, desc = "a registration leaked or released twice, or an outcome lost or doubled")
    @State
    public static class AttachRacesCancel {
        final Probe probe = new Probe();
        final PendingWait wait = probe.newWait();

        @Actor
        public void attach() {
            wait.attach(probe);
        }

        @Actor
        public void cancelled() {
            wait.cancel();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = probe.reports.get();
            r.r2 = probe.releases.get();
        }
    }
}
