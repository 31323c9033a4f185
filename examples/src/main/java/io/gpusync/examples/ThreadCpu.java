package io.gpusync.examples;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.EnumMap;
import java.util.Map;

/**
 * CPU time of the demo's process by who spent it, so that a load run can say what the engine costs per request:
 * the server's event loops (HTTP, submitting work, and the engine's hand-offs, which run there), gpusync's own
 * threads (pollers, waiter pool, CUDA armer and fault watch, cleaner), the load client's loops, and everything
 * else (JIT, GC, the drivers' own threads). Read from {@link ThreadMXBean} per live Java thread and from the
 * process's total; a thread that ends between two snapshots takes its CPU out of its group (none does during a
 * load run). Called from one thread; each snapshot costs one pass over the live threads.
 */
record ThreadCpu(Map<Group, Long> byGroup, long processNanos) {

    /** Who spent the CPU, by thread name. */
    enum Group {
        SERVER_LOOPS("server loops (HTTP, submissions, engine hand-offs)"),
        GPUSYNC("gpusync threads (pollers, waiter pool, CUDA armer and watch)"),
        LOAD_CLIENT("load client"),
        OTHER("other (JIT, GC, driver threads)");

        final String label;

        Group(String label) {
            this.label = label;
        }

        static Group of(String threadName) {
            if (threadName.startsWith("gpusync-demo-load") || threadName.startsWith("gpusync-demo-progress")) {
                return LOAD_CLIENT;
            }
            if (threadName.startsWith("gpusync-demo")) {
                return SERVER_LOOPS;
            }
            return threadName.startsWith("gpusync-") ? GPUSYNC : OTHER;
        }
    }

    /** A snapshot now. */
    static ThreadCpu now() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<Group, Long> by = new EnumMap<>(Group.class);
        for (Group g : Group.values()) {
            by.put(g, 0L);
        }
        long javaThreads = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            long cpu = Math.max(0, mx.getThreadCpuTime(t.threadId()));
            by.merge(Group.of(t.getName()), cpu, Long::sum);
            javaThreads += cpu;
        }
        long process = ProcessHandle.current().info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(-1L);
        if (process >= 0) { // what no named Java thread spent: the JVM's own threads and the drivers'
            by.merge(Group.OTHER, Math.max(0, process - javaThreads), Long::sum);
        }
        return new ThreadCpu(by, process);
    }

    /** CPU spent since {@code earlier}, by group. */
    ThreadCpu since(ThreadCpu earlier) {
        Map<Group, Long> by = new EnumMap<>(Group.class);
        for (Group g : Group.values()) {
            by.put(g, Math.max(0, byGroup.get(g) - earlier.byGroup.get(g)));
        }
        return new ThreadCpu(by, processNanos - earlier.processNanos);
    }
}
