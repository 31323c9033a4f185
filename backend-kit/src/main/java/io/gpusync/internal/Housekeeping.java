package io.gpusync.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * gpusync's housekeeping threads: where native releases that may block run (a {@code vkDeviceWaitIdle},
 * a release that binds an EGL context), where releases dropped on a thread that must not make them are
 * moved to (a driver's callback thread, the {@code Cleaner} thread), and where backends schedule periodic
 * chores (OpenCL's callback sweep, and its sweep of event releases held back while the driver may still touch the
 * event).
 *
 * <p><b>Lanes.</b> Each backend has a lane of its own, named by the package of the task (or, for
 * {@link #execute(Object, Runnable)}, of what it releases, or of the class it is given):
 * {@code gpusync-housekeeping-vulkan}, {@code gpusync-housekeeping-opencl}, and so on. A driver call that never
 * returns holds up its own lane only, so another backend's releases and sweeps go on.
 *
 * <p><b>Threading.</b> A lane is one daemon platform thread, started on first use and ended after a second of
 * idleness, that runs its tasks one at a time in submission order (so a release queued after another of the same
 * backend runs after it); lanes run independently of one another. A task's exception is logged and ends only that
 * task. Tasks must not wait for the GPU without a bound, nor for each other. {@link #execute} never blocks and
 * never throws for a full queue (the queues are unbounded); only a thread that cannot be started makes it run the
 * task inline.
 *
 * <p>The lanes live in this class's one instance, a {@link ProcessServices} service; the static methods are
 * the API. Internal: exported only to gpusync's own modules (the backends, the engine), which use it.
 */
public final class Housekeeping {
    private static final System.Logger LOG = System.getLogger(Housekeeping.class.getName());
    private static final String THREAD_NAME = "gpusync-housekeeping";

    private final Map<String, ScheduledThreadPoolExecutor> lanes = new ConcurrentHashMap<>();

    private Housekeeping() {
    }

    private static ScheduledThreadPoolExecutor lane(Object owner) {
        String name = (owner instanceof Class<?> type ? type : owner.getClass()).getPackageName();
        Map<String, ScheduledThreadPoolExecutor> lanes =
                ProcessServices.get().service(Housekeeping.class, Housekeeping::new).lanes;
        ScheduledThreadPoolExecutor lane = lanes.get(name);
        return lane != null ? lane : lanes.computeIfAbsent(name, Housekeeping::newLane);
    }

    private static ScheduledThreadPoolExecutor newLane(String packageName) {
        String thread = THREAD_NAME + "-" + packageName.substring(packageName.lastIndexOf('.') + 1);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                task -> new HousekeepingThread(task, thread));
        executor.setKeepAliveTime(1, TimeUnit.SECONDS);
        executor.allowCoreThreadTimeOut(true);
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** Runs {@code task} soon, in the lane of its own package. */
    public static void execute(Runnable task) {
        execute(task, task);
    }

    /**
     * Runs {@code task} soon, in the lane of {@code releasing}'s package (what the task releases; a {@link Class}
     * names its own package).
     */
    public static void execute(Object releasing, Runnable task) {
        Runnable logged = logging(task);
        try {
            lane(releasing).execute(logged);
        } catch (RuntimeException | OutOfMemoryError cannotStart) {
            logged.run(); // no thread could be started: better inline than never
        }
    }

    /** Runs {@code task} after {@code delay}, in the lane of its own package. */
    public static ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return lane(task).schedule(logging(task), delay, unit);
    }

    /** Whether the calling thread is one of the housekeeping threads. */
    public static boolean isCurrentThread() {
        return Thread.currentThread() instanceof HousekeepingThread;
    }

    private static final class HousekeepingThread extends Thread {
        HousekeepingThread(Runnable task, String name) {
            super(task, name);
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
