package io.gpusync.metal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The three messages gpusync sends to an {@code MTLSharedEvent}, through the Objective-C runtime
 * ({@code objc_msgSend} called with each method's exact prototype, as arm64 requires). <b>The macOS seam:</b>
 * loaded on first use only, and only on macOS (the factories refuse elsewhere before anything here runs).
 */
final class ObjC {
    private static final String LIBOBJC = "/usr/lib/libobjc.A.dylib";

    private ObjC() {
    }

    private static final class Runtime {
        static final SymbolLookup LOOKUP = SymbolLookup.libraryLookup(LIBOBJC, Arena.global());
        static final MemorySegment MSG_SEND = LOOKUP.findOrThrow("objc_msgSend");
        static final MethodHandle SEL_REGISTER_NAME = Linker.nativeLinker().downcallHandle(
                LOOKUP.findOrThrow("sel_registerName"),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        static final MethodHandle SEND_U64 = Linker.nativeLinker().downcallHandle(MSG_SEND,
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        static final MethodHandle SEND_WAIT = Linker.nativeLinker().downcallHandle(MSG_SEND,
                FunctionDescriptor.of(ValueLayout.JAVA_BYTE, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        static final MethodHandle SEND_VOID = Linker.nativeLinker().downcallHandle(MSG_SEND,
                FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        static final MemorySegment SIGNALED_VALUE = selector("signaledValue");
        static final MemorySegment WAIT = selector("waitUntilSignaledValue:timeoutMS:");
        static final MemorySegment RELEASE = selector("release");

        private static MemorySegment selector(String name) {
            try (Arena arena = Arena.ofConfined()) {
                return (MemorySegment) SEL_REGISTER_NAME.invokeExact(arena.allocateFrom(name));
            } catch (Throwable t) {
                throw new IllegalStateException("sel_registerName(" + name + ")", t);
            }
        }
    }

    /** {@code [event signaledValue]} (unsigned). */
    static long signaledValue(MemorySegment event) {
        try {
            return (long) Runtime.SEND_U64.invokeExact(event, Runtime.SIGNALED_VALUE);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code [event waitUntilSignaledValue:value timeoutMS:ms]}: whether the value was reached. */
    static boolean waitUntilSignaledValue(MemorySegment event, long value, long timeoutMs) {
        try {
            return (byte) Runtime.SEND_WAIT.invokeExact(event, Runtime.WAIT, value, timeoutMs) != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code [event release]}. */
    static void release(MemorySegment event) {
        try {
            Runtime.SEND_VOID.invokeExact(event, Runtime.RELEASE);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
