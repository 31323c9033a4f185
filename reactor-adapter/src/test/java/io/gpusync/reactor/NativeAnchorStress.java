package io.gpusync.reactor;

import io.gpusync.kit.NativeAnchor;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

import java.util.concurrent.atomic.AtomicInteger;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

/**
 * jcstress tests of {@link NativeAnchor} claims (run by {@link ConcurrencyStressTest}): a wait in progress
 * ({@code enter}/{@code exit}), a new claim and the closing of the last claim race; the primitive is released
 * exactly once, and never while a wait is entered.
 */
final class NativeAnchorStress {
    private NativeAnchorStress() {
    }

    /** Counts releases, and releases that happened while a wait was inside its enter/exit bracket. */
    static final class Primitive {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger releases = new AtomicInteger();
        final AtomicInteger releasedWhileEntered = new AtomicInteger();
        final NativeAnchor anchor = NativeAnchor.adopt("stress primitive", this::release);

        private void release() {
            releases.incrementAndGet();
            if (inside.get() > 0) {
                releasedWhileEntered.incrementAndGet();
            }
        }

        void waitOnce(NativeAnchor.Claim claim) {
            try {
                claim.enter();
            } catch (IllegalStateException closed) {
                return; // closed first: the wait is refused, which is fine
            }
            inside.incrementAndGet();
            inside.decrementAndGet();
            claim.exit();
        }
    }

    // Two actors per test: jcstress runs a test only with a CPU per actor, and CI machines may have two.

    @JCStressTest
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "released once, after the wait left")
    @Outcome(expect = FORBIDDEN, desc = "not released, released twice, or released under a wait")
    @State
    public static class WaitRacesClose {
        final Primitive p = new Primitive();
        final Object owner = new Object();
        final NativeAnchor.Claim claim = p.anchor.claim(owner);

        @Actor
        public void waitInProgress() {
            p.waitOnce(claim);
        }

        @Actor
        public void close() {
            claim.close();
            claim.close(); // idempotent
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = p.releases.get();
            r.r2 = p.releasedWhileEntered.get();
        }
    }

    @JCStressTest
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "released once, after every view closed and every wait left")
    @Outcome(expect = FORBIDDEN, desc = "not released, released twice, or released under a wait")
    @State
    public static class NewViewRacesLastClose {
        final Primitive p = new Primitive();
        final Object owner = new Object();
        final Object secondOwner = new Object();
        final NativeAnchor.Claim claim = p.anchor.claim(owner);

        @Actor
        public void anotherView() {
            NativeAnchor.Claim c;
            try {
                c = p.anchor.claim(secondOwner);
            } catch (IllegalStateException released) {
                return; // the primitive was already released: no new view, which is fine
            }
            p.waitOnce(c);
            c.close();
        }

        @Actor
        public void close() {
            claim.close();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = p.releases.get();
            r.r2 = p.releasedWhileEntered.get();
        }
    }
}
