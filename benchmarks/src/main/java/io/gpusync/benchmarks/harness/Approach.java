package io.gpusync.benchmarks.harness;

import io.gpusync.SyncWaiter;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * One way of turning a {@link SyncWaiter} into a {@code Mono<Void>}: gpusync's engine or one of the
 * alternatives it is compared with. One instance per measurement cell (its threads are counted, then it
 * is closed).
 */
public interface Approach extends AutoCloseable {

    /** The report key: {@code a}…{@code e}, {@code raw}. */
    String key();

    /** What it is, in a few words. */
    String label();

    /** A cold wait on {@code waiter} that fails with the waiter's timeout error after {@code timeout}. */
    Mono<Void> await(SyncWaiter waiter, Duration timeout);

    /** Live threads this approach owns now (by thread name). */
    int threads();

    /**
     * Waits that still hold something of this approach (a queue slot, a thread, a registration). A cancelled
     * wait is <em>freed</em> once this drops.
     */
    long holding();

    @Override
    void close();

    /** Counts live platform threads whose names start with {@code prefix}. */
    static int threadsNamed(String prefix) {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(prefix)) {
                n++;
            }
        }
        return n;
    }
}
