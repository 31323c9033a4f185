package io.gpusync.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Whether this JVM runs with the JDK's signal-chaining library, {@code libjsig}, preloaded (read from
 * {@code /proc/self/maps}). Drivers such as PoCL's LLVM and NVIDIA's install their own SIGSEGV handlers; without
 * libjsig a safepoint poll in that window kills the JVM (README, "Drivers that replace the JVM's signal handlers").
 */
final class SignalChaining {
    private SignalChaining() {
    }

    /** True if libjsig is mapped into this process; false if not, or if this is not Linux. */
    static boolean preloaded() {
        Path maps = Path.of("/proc/self/maps");
        if (!Files.isReadable(maps)) {
            return false;
        }
        try (Stream<String> lines = Files.lines(maps)) {
            return lines.anyMatch(l -> l.endsWith("/libjsig.so"));
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    /** One line for the demo's header. */
    static String describe() {
        return preloaded() ? "libjsig preloaded (drivers that install signal handlers chain to the JVM's)"
                : "libjsig not preloaded; with PoCL or NVIDIA drivers run with LD_PRELOAD=$JAVA_HOME/lib/libjsig.so";
    }
}
