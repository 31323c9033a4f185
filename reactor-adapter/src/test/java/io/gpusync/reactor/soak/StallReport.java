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
 * waiting on a driver lock as sleeping in {@code futex}. With {@value #NATIVE_STACKS} set, every thread's native
 * stack too.
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
                .filter(e -> e.getKey().getName().startsWith("gpusync-housekeeping"))
                .map(e -> nativeTop(e.getValue())).filter(t -> !t.isEmpty()).sorted().findFirst().orElse("");
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
        virtualThreadsInBindings(b);
        b.append("SOAK OS THREADS (tid name state utime+stime ticks wchan syscall)\n");
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.sorted().forEach(t -> b.append(osThread(t)).append('\n'));
        } catch (IOException e) {
            b.append("  /proc/self/task unreadable: ").append(e).append('\n');
        }
        piLockOwners(b);
        nativeStacks(b);
        out.print(b);
        out.flush();
    }

    /**
     * The virtual threads inside a native binding call, which {@link Thread#getAllStackTraces()} leaves out (the test
     * kit destroys Vulkan devices on one: the stall at {@code 56c36bc} showed only its carrier), from the JDK's thread
     * dump ({@code HotSpotDiagnosticMXBean.dumpThreads}), which writes to a file that must not exist yet.
     */
    private static void virtualThreadsInBindings(StringBuilder b) {
        Path file = null;
        try {
            file = Files.createTempFile("gpusync-threads", ".txt");
            Files.delete(file);
            java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                    .dumpThreads(file.toString(), com.sun.management.HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
            for (String thread : Files.readString(file).split("\n\n")) {
                String header = thread.lines().findFirst().orElse("");
                if (header.startsWith("#") && header.contains("\" virtual ") && thread.contains("io.gpusync.bindings.")) {
                    b.append(thread.strip()).append('\n');
                }
            }
        } catch (IOException | RuntimeException | LinkageError e) { // no jdk.management in a trimmed runtime
            b.append("SOAK VIRTUAL THREADS unavailable: ").append(e).append('\n');
        } finally {
            deleteQuietly(file);
        }
    }

    /** The environment variable that names a native stack dumper ({@code eu-stack}, or a wrapper of it). */
    static final String NATIVE_STACKS = "GPUSYNC_NATIVE_STACKS";

    /**
     * Every thread's native stack, the drivers' own threads and frames included, when {@value #NATIVE_STACKS} names a
     * dumper run as {@code <dumper> -m -p <pid>} (elfutils' {@code eu-stack}): which driver function each thread
     * waits or spins in. The dumper stops every thread of this process while it walks them, so its output goes to a
     * file (a pipe would fill while the reading thread is stopped) and is read once it ends, at most 60 s later.
     */
    private static void nativeStacks(StringBuilder b) {
        String dumper = System.getenv(NATIVE_STACKS);
        if (dumper == null || dumper.isBlank()) {
            return;
        }
        Path file = null;
        try {
            file = Files.createTempFile("gpusync-native-stacks", ".txt");
            Process p = new ProcessBuilder(dumper, "-m", "-p", Long.toString(ProcessHandle.current().pid()))
                    .redirectErrorStream(true).redirectOutput(file.toFile()).start();
            boolean ended = p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
            if (!ended) {
                p.destroyForcibly();
            }
            b.append("SOAK NATIVE STACKS (").append(dumper).append(ended ? "" : ", stopped after 60 s").append(")\n")
                    .append(Files.readString(file));
        } catch (IOException e) {
            b.append("SOAK NATIVE STACKS unavailable: ").append(e).append('\n');
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            deleteQuietly(file);
        }
    }

    private static void deleteQuietly(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temp file left behind
            }
        }
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

    /**
     * For every priority-inheriting lock (a {@code pthread_mutex} of {@code PTHREAD_PRIO_INHERIT}, as NVIDIA's drivers
     * use) that threads are blocked on ({@code futex(FUTEX_LOCK_PI)}): which thread holds it. A PI futex word holds
     * its owner's thread id; it is read through {@code /proc/self/mem}, which answers an error, not a crash, if the
     * word is gone meanwhile. The owner's native stack (above) then shows what it waits for.
     */
    private static void piLockOwners(StringBuilder b) {
        Map<Long, java.util.List<String>> waiters = new java.util.TreeMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> {
                String[] sc = read(t.resolve("syscall")).split(" ");
                if (sc.length > 2 && sc[0].equals("202")) { // x86-64 futex(uaddr, op, ...)
                    int op = (int) Long.decode(sc[2]).longValue() & 0x7f;
                    if (op == 6 || op == 13) { // FUTEX_LOCK_PI, FUTEX_LOCK_PI2
                        waiters.computeIfAbsent(Long.decode(sc[1]), k -> new java.util.ArrayList<>())
                                .add(t.getFileName() + " " + threadName(t));
                    }
                }
            });
        } catch (IOException | RuntimeException e) {
            b.append("SOAK PI LOCKS unreadable: ").append(e).append('\n');
            return;
        }
        if (waiters.isEmpty()) {
            return;
        }
        b.append("SOAK PI LOCKS (futex word: owner tid and name <- waiting threads)\n");
        try (java.io.RandomAccessFile mem = new java.io.RandomAccessFile("/proc/self/mem", "r")) {
            waiters.forEach((addr, ts) -> {
                String owner;
                try {
                    mem.seek(addr);
                    int word = Integer.reverseBytes(mem.readInt()); // little-endian
                    int tid = word & 0x3fffffff; // FUTEX_TID_MASK
                    owner = tid + " " + threadName(Path.of("/proc/self/task", Integer.toString(tid)))
                            + ((word & 0x40000000) != 0 ? " (owner died)" : "");
                } catch (IOException e) {
                    owner = "unreadable (" + e.getMessage() + ")";
                }
                b.append("  0x").append(Long.toHexString(addr)).append(": ").append(owner).append(" <- ")
                        .append(ts.size()).append(' ').append(ts).append('\n');
            });
        } catch (IOException e) {
            b.append("  /proc/self/mem unreadable: ").append(e).append('\n');
        }
    }

    private static String threadName(Path task) {
        String stat = read(task.resolve("stat"));
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        return open >= 0 && close > open ? stat.substring(open + 1, close) : "(gone)";
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
