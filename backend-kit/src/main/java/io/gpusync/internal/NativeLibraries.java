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
 * flags ({@link NativeAccess}), never a missing driver. The probe runs once per library per process: the
 * results live in this class's one instance, a {@link ProcessServices} service. Thread-safe.
 */
public final class NativeLibraries {
    private static final Object PRESENT = new Object();

    /** Each library probed in this process: {@link #PRESENT}, the denial, or why it cannot be opened. */
    private final ConcurrentHashMap<String, Object> probed = new ConcurrentHashMap<>();

    private NativeLibraries() {
    }

    private static NativeLibraries process() {
        return ProcessServices.get().service(NativeLibraries.class, NativeLibraries::new);
    }

    private static Object probed(String soname) {
        return process().probed.computeIfAbsent(soname, NativeLibraries::probe);
    }

    /**
     * Succeeds if {@code soname} (e.g. {@code libvulkan.so.1}) can be opened by the dynamic linker.
     *
     * @throws SyncNotSupportedException naming the library and the reason when it cannot; when the JVM denies
     *                                   native access, naming the flags that allow it
     */
    public static void require(BackendKind backend, String soname) {
        NativeAccess.require(backend, soname);
        Object result = probed(soname);
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
        return probed(soname) == PRESENT;
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
