package io.gpusync.internal;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;

import java.util.Locale;

/**
 * The operating system the JVM runs on, for backends that exist on one platform only (D3D11 on Windows,
 * Metal on macOS): their factories refuse elsewhere with a {@link SyncNotSupportedException} naming the
 * platform they need. Stateless and thread-safe.
 */
public final class Platform {
    private static final String OS = System.getProperty("os.name", "unknown");

    private Platform() {
    }

    /** The JVM's {@code os.name}. */
    public static String osName() {
        return OS;
    }

    /** Whether this is Windows. */
    public static boolean isWindows() {
        return OS.toLowerCase(Locale.ROOT).startsWith("windows");
    }

    /** Whether this is macOS. */
    public static boolean isMacOs() {
        String os = OS.toLowerCase(Locale.ROOT);
        return os.startsWith("mac") || os.startsWith("darwin");
    }

    /**
     * @throws SyncNotSupportedException naming {@code needed} and this platform when {@code present} is false
     */
    public static void require(boolean present, BackendKind backend, String what, String needed) {
        if (!present) {
            throw new SyncNotSupportedException(backend, what + " exist only on " + needed + "; this JVM runs on "
                    + OS + " (" + System.getProperty("os.arch", "?") + ")");
        }
    }
}
