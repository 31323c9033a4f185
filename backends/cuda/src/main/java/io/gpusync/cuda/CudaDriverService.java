package io.gpusync.cuda;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.internal.ProcessServices;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The CUDA driver as this process shares it: whether it loaded, the stream callbacks in flight and their room
 * behind event waits, the armer, the sweeper and the fault watch that serve them, the pinned timeline words and their reaper,
 * and the external-semaphore waits that gate semaphore destroys. The driver is one per process, so this state is
 * too: {@link #get()} returns the process's service (held by {@link ProcessServices}); tests may make fresh ones.
 * Components receive the service they belong to and reach their siblings through it.
 *
 * <p><b>Lifetime.</b> Created on first use; closed by {@link ProcessServices} at shutdown (tests close the services
 * they make). Closing abandons nothing: the armer and the fault-watch threads end as soon as they are idle (nothing
 * deferred, nothing registered), and a later need starts them again. The pinned words stay allocated: the driver
 * may still write them until the process ends.
 *
 * <p><b>Threading.</b> Thread-safe. Creating a service starts nothing: the armer and the fault-watch threads are
 * daemons started on first need that park while idle. Nothing here blocks except loading the driver once;
 * {@link #close()} never blocks.
 */
final class CudaDriverService implements AutoCloseable {
    private final StreamCallbacks callbacks;
    private final StreamCallbackBudget budget;
    private final CudaFaultWatch faultWatch;
    private final EventSweeper sweeper = new EventSweeper(EventSweeper.configuredLinger());
    private final GatedWaits gatedWaits = new GatedWaits();
    private final PinnedReaper reaper = new PinnedReaper();
    private final ConcurrentHashMap<Integer, PinnedWordPool> pinnedPools = new ConcurrentHashMap<>();
    private final Object loading = new Object();
    private volatile boolean driverLoaded;
    private SyncNotSupportedException driverFailure; // guarded by loading

    /** The process's service. */
    static CudaDriverService get() {
        return ProcessServices.get().service(CudaDriverService.class, CudaDriverService::new);
    }

    private CudaDriverService() {
        this(StreamCallbackBudget.configuredCapacity());
    }

    /** A service of its own whose budget has room for {@code capacity} callbacks behind event waits (tests). */
    CudaDriverService(int capacity) {
        this.callbacks = new StreamCallbacks(this);
        this.budget = new StreamCallbackBudget(this, capacity);
        this.faultWatch = new CudaFaultWatch(this);
    }

    StreamCallbacks callbacks() {
        return callbacks;
    }

    StreamCallbackBudget budget() {
        return budget;
    }

    EventSweeper sweeper() {
        return sweeper;
    }

    CudaFaultWatch faultWatch() {
        return faultWatch;
    }

    GatedWaits gatedWaits() {
        return gatedWaits;
    }

    PinnedReaper reaper() {
        return reaper;
    }

    /** The pinned-word pool of {@code device} (created on first use). */
    PinnedWordPool pinnedPool(int device) {
        return pinnedPools.computeIfAbsent(device, PinnedWordPool::new);
    }

    /** Lets the armer and the fault watch end (see the class comment). Idempotent; never blocks. */
    @Override
    public void close() {
        budget.close();
        faultWatch.close();
        sweeper.close();
    }

    /** Whether {@link #ensureDriver()} has succeeded. */
    boolean driverLoaded() {
        return driverLoaded;
    }

    /**
     * Loads the driver and runs {@code cuInit(0)} once ({@link CudaDriver#load()}); a failed {@code cuInit} or bind is
     * remembered and thrown again on every later call.
     *
     * @throws SyncNotSupportedException if the driver is absent or cannot initialize
     */
    void ensureDriver() {
        if (driverLoaded) {
            return;
        }
        synchronized (loading) {
            if (driverLoaded) {
                return;
            }
            if (driverFailure != null) {
                throw new SyncNotSupportedException(BackendKind.CUDA, driverFailure.getMessage(), driverFailure);
            }
            SyncNotSupportedException failure = CudaDriver.load();
            if (failure != null) {
                driverFailure = failure;
                throw failure;
            }
            driverLoaded = true;
        }
    }
}
