package io.gpusync.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Slots that a native upcall completes, keyed by a {@code long} that travels through the driver as
 * {@code user_data} — the registry behind CUDA stream callbacks and OpenCL event callbacks, which both use
 * <em>one</em> upcall stub for the whole process (allocated once in the global arena, so the driver can
 * never call freed code).
 *
 * <p><b>Fire or cancel, exactly once.</b> Whoever removes a key owns its slot: the upcall ({@link #fire}),
 * a canceller ({@link #cancel}) or a sweep ({@link #take}). Each slot is therefore fired or cancelled
 * exactly once, never both. A late upcall for a cancelled key finds nothing and returns (neither API can
 * withdraw a launched stream callback or a registered callback).
 *
 * <p><b>The upcall only hands over.</b> {@link #fire} runs the slot inside a scope in which
 * {@link #inUpcall()} is true (so releases triggered there move to {@link Housekeeping}) and never lets a
 * throwable escape: one escaping an upcall would end the JVM. Slots must not call back into the driver.
 *
 * <p>Thread-safe and lock-free (a {@link ConcurrentHashMap}). Internal: not exported.
 *
 * @param <S> what a key completes
 */
public final class UpcallRegistry<S> {
    private static final System.Logger LOG = System.getLogger(UpcallRegistry.class.getName());
    private static final ScopedValue<Boolean> IN_UPCALL = ScopedValue.newInstance();

    private final String name;
    private final ConcurrentHashMap<Long, S> slots = new ConcurrentHashMap<>();
    private final AtomicLong nextKey = new AtomicLong(1);

    /** An empty registry; {@code name} (e.g. "OpenCL event callback") appears in logs. */
    public UpcallRegistry(String name) {
        this.name = name;
    }

    /** Whether the calling thread is inside an upcall of any registry (a driver-owned thread). */
    public static boolean inUpcall() {
        return IN_UPCALL.isBound();
    }

    /** Registers {@code slot} under a fresh key (never 0). */
    public long register(S slot) {
        long key = nextKey.getAndIncrement();
        slots.put(key, slot);
        return key;
    }

    /** Removes {@code key}. @return whether this call removed it (the slot then never fires) */
    public boolean cancel(long key) {
        return slots.remove(key) != null;
    }

    /** Removes {@code key}. @return its slot if this call removed it (the caller now owns it), else null */
    public S remove(long key) {
        return slots.remove(key);
    }

    /** Removes {@code key} if it still maps to {@code slot}. @return whether this call removed it: the caller now completes it */
    public boolean take(long key, S slot) {
        return slots.remove(key, slot);
    }

    /** The slot of {@code key} if it is still registered (it stays registered), else null. */
    public S peek(long key) {
        return slots.get(key);
    }

    /** Whether {@code key} is registered: neither fired nor cancelled yet. */
    public boolean isPending(long key) {
        return slots.containsKey(key);
    }

    /** Slots neither fired nor cancelled. */
    public int pending() {
        return slots.size();
    }

    /** Visits the pending slots (weakly consistent: concurrent changes may or may not be seen). */
    public void forEachPending(BiConsumer<Long, S> action) {
        for (Map.Entry<Long, S> e : slots.entrySet()) {
            action.accept(e.getKey(), e.getValue());
        }
    }

    /**
     * The body of an upcall: removes {@code key} and, if this call removed it, runs {@code fire} on its slot
     * with {@link #inUpcall()} true. Never throws.
     */
    public void fire(long key, Consumer<? super S> fire) {
        try {
            S slot = slots.remove(key);
            if (slot != null) {
                ScopedValue.where(IN_UPCALL, Boolean.TRUE).run(() -> fire.accept(slot));
            }
        } catch (Throwable t) {
            try {
                LOG.log(System.Logger.Level.ERROR, "a gpusync " + name + " upcall failed", t);
            } catch (Throwable ignored) {
                // nothing may escape into the driver
            }
        }
    }

    @Override
    public String toString() {
        return "UpcallRegistry[" + name + ", " + slots.size() + " pending]";
    }
}
