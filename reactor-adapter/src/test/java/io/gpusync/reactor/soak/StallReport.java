package io.gpusync.reactor.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What every thread of the process is doing when a driver call looks stuck: the Java stack of each thread inside a
 * native binding call, and for every OS thread (the drivers' own included) its name, state, CPU time, kernel wait
 * channel and the system call it is in. A thread spinning inside a driver shows as running with growing CPU; one
 * waiting on a driver lock as sleeping in {@code futex}.
 */
final class StallReport {
    private String lastHousekeepingTop = "";
    private int sameTopReports;
    private long lastDump;

    /**
     * Called at each progress report: prints a full report once housekeeping has been in the same native frame for
     * two reports in a row, then at most once a minute while that lasts.
     */
    void check(PrintStream out) {
        String top = Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getName().equals("gpusync-housekeeping"))
                .map(e -> nativeTop(e.getValue())).findFirst().orElse("");
        sameTopReports = !top.isEmpty() && top.equals(lastHousekeepingTop) ? sameTopReports + 1 : 0;
        lastHousekeepingTop = top;
        if (sameTopReports >= 2 && System.nanoTime() - lastDump > 60_000_000_000L) {
            lastDump = System.nanoTime();
            print(out, "housekeeping in " + top + " for " + sameTopReports + " reports");
        }
    }

    static void print(PrintStream out, String why) {
        StringBuilder b = new StringBuilder("SOAK STALL REPORT (" + why + ")\n");
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (!nativeTop(e.getValue()).isEmpty()) {
                b.append("\"").append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
                StackTraceElement[] s = e.getValue();
                for (int i = 0; i < Math.min(s.length, 18); i++) {
                    b.append("\tat ").append(s[i]).append('\n');
                }
            }
        }
        b.append("SOAK OS THREADS (tid name state utime+stime ticks wchan syscall)\n");
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.sorted().forEach(t -> b.append(osThread(t)).append('\n'));
        } catch (IOException e) {
            b.append("  /proc/self/task unreadable: ").append(e).append('\n');
        }
        out.print(b);
        out.flush();
    }

    /** The first binding frame of a stack ({@code Vulkan.vkDestroyDevice}...), or empty when it is in none. */
    private static String nativeTop(StackTraceElement[] stack) {
        for (StackTraceElement f : stack) {
            if (f.getClassName().startsWith("io.gpusync.bindings.")) {
                return f.getClassName() + "." + f.getMethodName();
            }
        }
        return "";
    }

    private static String osThread(Path task) {
        try {
            String stat = Files.readString(task.resolve("stat"));
            int close = stat.lastIndexOf(')');
            String name = stat.substring(stat.indexOf('(') + 1, close);
            String[] f = stat.substring(close + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            String wchan = read(task.resolve("wchan"));
            String syscall = read(task.resolve("syscall"));
            String nr = syscall.split(" ")[0];
            return "  " + task.getFileName() + " " + name + " " + f[0] + " " + ticks + " " + wchan + " " + nr;
        } catch (IOException | RuntimeException e) {
            return "  " + task.getFileName() + " (gone: " + e.getMessage() + ")";
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}
