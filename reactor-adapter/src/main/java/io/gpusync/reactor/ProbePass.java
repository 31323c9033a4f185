package io.gpusync.reactor;

import java.util.ArrayList;

/**
 * One pass of probes over a thread's list of waits (the pollers' and the wait-set servers'): probe each
 * live wait once, complete the signalled, fail the erroring (a failed waiter is never probed again), hand
 * spun-out spin-then-callback waits to their callback path, and drop every finished wait from the list.
 */
final class ProbePass {
    private ProbePass() {
    }

    /** @return how many waits the pass completed */
    static int run(ArrayList<PendingWait> waits) {
        int completions = 0;
        for (int i = waits.size() - 1; i >= 0; i--) {
            PendingWait w = waits.get(i);
            boolean remove = w.isDone();
            if (!remove) {
                try {
                    if (w.waiter.isSignaled()) {
                        w.signalled();
                        completions++;
                        remove = true;
                    } else if (w.polled != null && w.polled.handOverTo != null
                            && System.nanoTime() - w.startNanos > w.polled.handOverAfterNanos) {
                        handOver(w);
                        remove = true;
                    }
                } catch (Throwable e) {
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
