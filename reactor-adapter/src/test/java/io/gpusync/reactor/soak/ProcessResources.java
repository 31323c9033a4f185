package io.gpusync.reactor.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the process holds, read from {@code /proc/self}: open fds, native threads (drivers' too), gpusync's own
 * threads by name prefix, and resident memory.
 */
record ProcessResources(int fds, int nativeThreads, TreeMap<String, Integer> gpusyncThreads, long rssKiB) {

    static ProcessResources now() {
        TreeMap<String, Integer> ours = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("gpusync-")) {
                ours.merge(t.getName().replaceAll("-\\d+$", ""), 1, Integer::sum);
            }
        }
        return new ProcessResources(count(Path.of("/proc/self/fd")), count(Path.of("/proc/self/task")), ours,
                status("VmRSS:"));
    }

    int gpusyncThreadCount() {
        return gpusyncThreads.values().stream().mapToInt(Integer::intValue).sum();
    }

    /**
     * gpusync's threads other than the shared default engine's (never disposed; its idle pool and wait-set
     * threads retire on their own timers) and gpusync's process-wide ones (cleaner, housekeeping, the GL
     * backend's EGL threads).
     */
    int engineThreadCount() {
        return gpusyncThreads.entrySet().stream()
                .filter(e -> !e.getKey().startsWith("gpusync-default-") && !e.getKey().equals("gpusync-cleaner")
                        && !e.getKey().startsWith("gpusync-housekeeping") && !e.getKey().equals("gpusync-egl"))
                .mapToInt(Map.Entry::getValue).sum();
    }

    /** The GL backend's EGL threads: they never end, and grow only to the peak number of concurrent EGL calls. */
    int eglThreadCount() {
        return gpusyncThreads.getOrDefault("gpusync-egl", 0);
    }

    /**
     * The open fds by kind, from their {@code /proc/self/fd} links: {@code anon_inode:[eventfd]},
     * {@code anon_inode:sync_file}, {@code socket}, {@code pipe}, a device file without its number
     * ({@code /dev/dri/renderD}), {@code file} for the rest: so that a leak says what leaks.
     */
    static TreeMap<String, Integer> fdKinds() {
        TreeMap<String, Integer> kinds = new TreeMap<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            fds.forEach(fd -> {
                String kind;
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:") || target.startsWith("pipe:")) {
                        kind = target.substring(0, target.indexOf(':'));
                    } else if (target.startsWith("anon_inode:")) {
                        kind = target;
                    } else if (target.startsWith("/dev/")) {
                        kind = target.replaceAll("\\d+$", "");
                    } else {
                        kind = "file";
                    }
                } catch (IOException closedMeanwhile) {
                    return;
                }
                kinds.merge(kind, 1, Integer::sum);
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return kinds;
    }

    private static int count(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return (int) s.count();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long status(String key) {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/status"));
            for (String l : lines) {
                if (l.startsWith(key)) {
                    return Long.parseLong(l.substring(key.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return -1;
    }

    @Override
    public String toString() {
        return "fds=" + fds + " threads=" + nativeThreads + " gpusyncThreads=" + gpusyncThreadCount()
                + " rss=" + rssKiB / 1024 + "MiB";
    }
}
