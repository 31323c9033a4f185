package io.gpusync.internal;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Guards the jextract-generated bindings, whose header classes open their library in a static initializer
 * (an absent library would surface as {@link ExceptionInInitializerError} on every call). Backends call
 * {@link #require} before touching a generated class; an absent library becomes a
 * {@link SyncNotSupportedException} naming it, and a JVM that denies gpusync native access one naming the
 * flags ({@link NativeAccess}), never a missing driver. The probe runs once per library and is cached.
 * Thread-safe.
 */
public final class NativeLibraries {
    private static final ConcurrentHashMap<String, Object> PROBED = new ConcurrentHashMap<>();
    private static final Object PRESENT = new Object();

    private NativeLibraries() {
    }

    /**
     * Succeeds if {@code soname} (e.g. {@code libvulkan.so.1}) can be opened by the dynamic linker.
     *
     * @throws SyncNotSupportedException naming the library and the reason when it cannot; when the JVM denies
     *                                   native access, naming the flags that allow it
     */
    public static void require(BackendKind backend, String soname) {
        NativeAccess.require(backend, soname);
        Object result = PROBED.computeIfAbsent(soname, NativeLibraries::probe);
        if (result instanceof IllegalCallerException denied) {
            throw NativeAccess.denied(backend, soname, denied);
        }
        if (result != PRESENT) {
            throw new SyncNotSupportedException(backend, soname + " cannot be loaded: the " + backend
                    + " driver is not installed on this machine (" + result + ")");
        }
    }

    /** Whether {@code soname} can be opened (no exception). */
    public static boolean isAvailable(String soname) {
        return PROBED.computeIfAbsent(soname, NativeLibraries::probe) == PRESENT;
    }

    private static Object probe(String soname) {
        try {
            SymbolLookup.libraryLookup(soname, Arena.global());
            return PRESENT;
        } catch (IllegalCallerException denied) {
            return denied;
        } catch (IllegalArgumentException e) {
            return String.valueOf(e.getMessage());
        }
    }
}
