package io.gpusync.benchmarks.cuda;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time by thread group, to say where a measurement's CPU went: the calling thread ("measuring thread"), and
 * every other live thread under its name with trailing digits dropped (an engine's loop threads count as one
 * group), plus the whole process, whose threads the JVM does not know (the driver's) make the difference.
 */
final class ThreadCpu {
    private final Map<String, Long> groups;
    private final long process;

    private ThreadCpu(Map<String, Long> groups, long process) {
        this.groups = groups;
        this.process = process;
    }

    /** The CPU time of every live thread group and of the process, now. */
    static ThreadCpu now() {
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> groups = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            long c = threads.getThreadCpuTime(t.threadId());
            String group = t == Thread.currentThread() ? "measuring thread" : t.getName().replaceAll("[-#]?\\d+$", "");
            groups.merge(group, Math.max(0, c), Long::sum);
        }
        long process = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
        return new ThreadCpu(groups, process);
    }

    /**
     * What each group spent since {@code before}, in µs per {@code per} (iterations, completions), the groups that
     * spent at least 1 µs per unit, largest first, then the rest of the process (driver and JVM threads unknown to
     * Java, threads that ended).
     */
    String since(ThreadCpu before, long per) {
        Map<String, Long> spent = new HashMap<>();
        groups.forEach((g, c) -> spent.put(g, c - before.groups.getOrDefault(g, 0L)));
        long known = spent.values().stream().mapToLong(Long::longValue).sum();
        StringBuilder b = new StringBuilder();
        spent.entrySet().stream().filter(e -> e.getValue() >= per * 1_000L)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> b.append(b.isEmpty() ? "" : ", ").append(e.getKey()).append(' ')
                        .append(String.format("%.2f", e.getValue() / 1e3 / per)));
        if (process >= 0 && before.process >= 0) {
            b.append(b.isEmpty() ? "" : ", ").append("rest of the process ")
                    .append(String.format("%.2f", Math.max(0, process - before.process - known) / 1e3 / per));
        }
        return b.toString();
    }
}
