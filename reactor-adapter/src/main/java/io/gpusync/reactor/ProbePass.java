package io.gpusync.reactor;

import java.util.ArrayList;

/**
 * One pass of probes over a thread's list of waits (the pollers' and the wait-set servers'): probe each
 * live wait once, complete the signalled, fail the erroring (a failed waiter is never probed again), hand
 * spun-out spin-then-callback waits to their callback path, and drop every finished wait from the list.
 */
final class ProbePass {
    /**
     * Unwinds a pass whose thread may no longer touch its lists: a poller's worker retired by the stuck-probe guard
     * while inside a probe (see {@link Poller}). Never delivered to a wait.
     */
    static final Stranded STRANDED = new Stranded();

    private ProbePass() {
    }

    /** How a pass probes a wait: the waiter's own probe, or a poller's guarded one ({@link Poller.Worker}). */
    interface Prober {
        /** The waiter's own probe. */
        Prober DIRECT = w -> w.waiter.isSignaled();

        /** Probes {@code w}'s waiter: whether it is signalled; throws its failure, or {@link ProbePass#STRANDED}. */
        boolean isSignaled(PendingWait w);
    }

    /** The type of {@link #STRANDED}: records nothing (no stack trace, no suppression). */
    static final class Stranded extends RuntimeException {
        private Stranded() {
            super("a stuck poller's pass, taken over", null, false, false);
        }
    }

    /** A pass with the waiters' own probes (a wait-set server's). */
    static int run(ArrayList<PendingWait> waits) {
        return run(waits, Prober.DIRECT);
    }

    /** @return how many waits the pass completed */
    static int run(ArrayList<PendingWait> waits, Prober probes) {
        int completions = 0;
        for (int i = waits.size() - 1; i >= 0; i--) {
            PendingWait w = waits.get(i);
            boolean remove = w.isDone();
            if (!remove) {
                try {
                    if (probes.isSignaled(w)) {
                        w.signalled();
                        completions++;
                        remove = true;
                    } else if (w.polled != null && w.polled.handOverTo != null
                            && System.nanoTime() - w.startNanos > w.polled.handOverAfterNanos) {
                        handOver(w);
                        remove = true;
                    }
                } catch (Throwable e) {
                    if (e == STRANDED) {
                        throw STRANDED;
                    }
                    w.failed(e);
                    remove = true;
                }
            }
            if (remove) { // swap-remove: order does not matter, and the swapped-in wait was already visited
                int last = waits.size() - 1;
                waits.set(i, waits.get(last));
                waits.remove(last);
            }
        }
        return completions;
    }

    /** The spin budget of a spin-then-callback wait is spent: the callback path takes it over. */
    static void handOver(PendingWait w) {
        WaitStrategy next = w.polled.handOverTo;
        w.polled.handOverTo = null;
        w.strategy = next;
        if (!w.isDone()) {
            next.start(w);
        }
    }
}
