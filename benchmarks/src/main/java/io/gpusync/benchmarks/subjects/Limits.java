package io.gpusync.benchmarks.subjects;

import java.lang.management.ManagementFactory;

/** Process limits that bound what a subject can do. */
public final class Limits {
    private Limits() {
    }

    /** The open-files limit ({@code ulimit -n}), or -1 if unknown. */
    public static long openFiles() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u) {
            return u.getMaxFileDescriptorCount();
        }
        return -1;
    }
}
