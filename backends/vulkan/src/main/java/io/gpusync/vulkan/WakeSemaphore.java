package io.gpusync.vulkan;

import java.util.concurrent.atomic.AtomicInteger;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * The companion timeline semaphore of one {@code VkDevice} that wakes threads blocked in a
 * {@link TimelineSemaphoreWaiter}'s {@code await}: each slice of such a wait is one {@code vkWaitSemaphores}
 * with {@code VK_SEMAPHORE_WAIT_ANY_BIT} over the point's (semaphore, value) and this semaphore at the value
 * after its counter when the wait {@linkplain #enter() entered}; {@link #wake()} signals that next value from
 * the host ({@code vkSignalSemaphore}), so every wait entered before it returns.
 *
 * <p><b>Protocol.</b> Only this object signals the semaphore, under {@code lock}, so its counter equals
 * {@code signalled} and only ever increases (signalling a value ≤ the current one loses the device on
 * lavapipe). {@link #enter()} reads {@code signalled + 1} and counts the thread in, under the same lock; a
 * {@code wake} that finds no thread counted in makes no driver call, so the engine's wake at the end of a
 * signalled wait costs one volatile read. A wake reaches every thread that entered before it: one that
 * entered after it waits for a later value.
 *
 * <p>Distinct from the {@link DeviceWaitSet}'s wake-up semaphore, whose wake-ups stay pending until consumed.
 * Created on first use, destroyed with the device state. Thread-safe; {@link #wake()} never blocks beyond
 * one host signal under an uncontended lock.
 */
final class WakeSemaphore {
    private final DeviceState state;
    private final Object lock = new Object();
    private final AtomicInteger entered = new AtomicInteger();
    private long semaphore;     // guarded by lock; 0 until first use
    private long signalled;     // guarded by lock: the semaphore's counter
    private boolean destroyed;  // guarded by lock

    WakeSemaphore(DeviceState state) {
        this.state = state;
    }

    /** What a wait entered with: the semaphore and the value that wakes it. */
    record Entry(long semaphore, long value) {
    }

    /**
     * Counts the calling thread in as blocked until {@link #exit()}; the caller holds the device.
     *
     * @throws IllegalStateException if the device state has been released
     */
    Entry enter() {
        synchronized (lock) {
            if (destroyed) {
                throw new IllegalStateException("the wake semaphore of " + state + " has been released");
            }
            if (semaphore == 0) {
                semaphore = state.fns.createSemaphore(true, 0);
            }
            entered.incrementAndGet();
            return new Entry(semaphore, signalled + 1);
        }
    }

    /** Whether a wake has reached {@code entry}'s value. */
    boolean woke(Entry entry) {
        synchronized (lock) {
            return Long.compareUnsigned(signalled, entry.value) >= 0;
        }
    }

    /** Counts the calling thread out. */
    void exit() {
        entered.decrementAndGet();
    }

    /**
     * Wakes every wait entered before this call (none: no driver call). Never throws: a failed signal is
     * logged and remembered as the device's loss where it is one.
     */
    void wake() {
        if (entered.get() == 0) {
            return;
        }
        synchronized (lock) {
            if (destroyed || semaphore == 0) {
                return;
            }
            long next = signalled + 1;
            int r = state.fns.signalSemaphore(semaphore, next);
            if (r != VkResults.SUCCESS) {
                System.getLogger(WakeSemaphore.class.getName()).log(System.Logger.Level.WARNING,
                        "waking blocked waits failed", state.failure(r, "vkSignalSemaphore(wake VkSemaphore "
                                + hex(semaphore) + ", " + Long.toUnsignedString(next) + ") on " + state));
                return;
            }
            signalled = next;
        }
    }

    /** How many threads are counted in (a test hook: a thread counted in is reached by the next wake). */
    int entered() {
        return entered.get();
    }

    /** Called once, when the device's last hold drops (no wait in progress). */
    void destroy() {
        synchronized (lock) {
            destroyed = true;
            if (semaphore != 0) {
                state.fns.destroySemaphore(semaphore);
                semaphore = 0;
            }
        }
    }

    @Override
    public String toString() {
        return "WakeSemaphore[" + state + "]";
    }
}
