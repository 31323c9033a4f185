package io.gpusync.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * gpusync's one housekeeping thread: where native releases that may block run (a {@code vkDeviceWaitIdle},
 * a release that binds an EGL context), where releases dropped on a thread that must not make them are
 * moved to (a driver's callback thread, the {@code Cleaner} thread), and where backends schedule periodic
 * chores (OpenCL's callback sweep, and its sweep of event releases held back while the driver may still touch the
 * event).
 *
 * <p><b>Threading.</b> One daemon platform thread, started on first use and ended after a second of
 * idleness, runs the tasks one at a time in submission order (so a release queued after another runs after
 * it). A task's exception is logged and ends only that task. Tasks must not wait for the GPU without a
 * bound, nor for each other. {@link #execute} never blocks and never throws for a full queue (the queue is
 * unbounded); only a thread that cannot be started makes it run the task inline.
 *
 * <p>The executor lives in this class's one instance, a {@link ProcessServices} service; the static methods are
 * the API. Internal: exported only to gpusync's own modules (the backends, the engine), which use it.
 */
public final class Housekeeping {
    private static final System.Logger LOG = System.getLogger(Housekeeping.class.getName());
    private static final String THREAD_NAME = "gpusync-housekeeping";

    private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, HousekeepingThread::new);

    private Housekeeping() {
        executor.setKeepAliveTime(1, TimeUnit.SECONDS);
        executor.allowCoreThreadTimeOut(true);
        executor.setRemoveOnCancelPolicy(true);
    }

    private static ScheduledThreadPoolExecutor executor() {
        return ProcessServices.get().service(Housekeeping.class, Housekeeping::new).executor;
    }

    /** Runs {@code task} on the housekeeping thread, soon. */
    public static void execute(Runnable task) {
        Runnable logged = logging(task);
        try {
            executor().execute(logged);
        } catch (RuntimeException | OutOfMemoryError cannotStart) {
            logged.run(); // no thread could be started: better inline than never
        }
    }

    /** Runs {@code task} on the housekeeping thread after {@code delay}. */
    public static ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return executor().schedule(logging(task), delay, unit);
    }

    /** Whether the calling thread is the housekeeping thread. */
    public static boolean isCurrentThread() {
        return Thread.currentThread() instanceof HousekeepingThread;
    }

    private static final class HousekeepingThread extends Thread {
        HousekeepingThread(Runnable task) {
            super(task, THREAD_NAME);
            setDaemon(true);
        }
    }

    private static Runnable logging(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.WARNING, "a gpusync housekeeping task failed: " + task, t);
            }
        };
    }
}
