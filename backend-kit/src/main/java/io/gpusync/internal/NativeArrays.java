package io.gpusync.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Arrays that a struct points to with a bare pointer and a count (a {@code VkSubmitInfo}'s semaphores), copied out.
 * The read is the restricted {@code reinterpret}, kept here so that a backend which only calls its bindings needs no
 * native access of its own. The caller vouches that the pointer addresses at least {@code count} elements for the
 * duration of the call (the application's struct, read while the application's call is in progress).
 *
 * <p>Stateless and thread-safe; never blocks.
 */
public final class NativeArrays {
    private NativeArrays() {
    }

    /** The {@code count} 64-bit values at {@code array}; none when {@code count} is 0 or {@code array} is NULL. */
    public static long[] longs(MemorySegment array, int count) {
        if (count <= 0 || array.equals(MemorySegment.NULL)) {
            return new long[0];
        }
        // read-only and copied out at once, while the caller's call (and so its struct) is in progress
        return array.reinterpret(ValueLayout.JAVA_LONG.byteSize() * count).toArray(ValueLayout.JAVA_LONG);
    }
}
