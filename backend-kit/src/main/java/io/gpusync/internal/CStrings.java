package io.gpusync.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * NUL-terminated strings that a driver returns as a bare pointer ({@code eglQueryString}, {@code glGetString},
 * {@code cuGetErrorName}), read with their exact length: libc's {@code strlen} finds the terminator, then
 * exactly that many bytes are copied. Never {@code reinterpret(someLength).getString(0)}: that scans 8 bytes at
 * a time and may read past the terminator, off the end of the driver's allocation (a guard-page allocator stops
 * the JVM there). A string the caller allocated itself with a known size needs none of this.
 *
 * <p>Stateless and thread-safe; never blocks.
 */
public final class CStrings {
    // size_t strlen(const char *s): reads up to and including the terminator only
    private static final MethodHandle STRLEN = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("strlen")
                    .orElseThrow(() -> new UnsatisfiedLinkError("libc symbol not found: strlen")),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS), Linker.Option.critical(false));

    private CStrings() {
    }

    /** The number of bytes before the terminator of the C string at {@code string} (not NULL). */
    public static long length(MemorySegment string) {
        requireNonNull(string);
        try {
            return (long) STRLEN.invokeExact(string);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("unexpected checked exception from a downcall", t);
        }
    }

    /** The UTF-8 C string at {@code string} (not NULL), read up to its terminator and no further. */
    public static String read(MemorySegment string) {
        long length = length(string);
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("C string of " + length + " bytes is too long for a Java string");
        }
        // exactly the bytes strlen counted, copied at once: the string is the driver's (a static or one it keeps
        // for the object's life), read during the caller's use of that object, and no pointer to it is handed on
        byte[] bytes = string.reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void requireNonNull(MemorySegment string) {
        Objects.requireNonNull(string, "string");
        if (string.equals(MemorySegment.NULL)) {
            throw new IllegalArgumentException("NULL is not a C string");
        }
    }
}
