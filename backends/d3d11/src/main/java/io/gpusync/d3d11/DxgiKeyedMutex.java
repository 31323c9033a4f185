package io.gpusync.d3d11;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The three {@code IDXGIKeyedMutex} methods gpusync calls, through the COM vtable. <b>The Windows seam:</b>
 * on Windows x64 FFM's native linker speaks the Microsoft x64 ABI that COM uses, so each method is a plain
 * downcall to the function pointer in the vtable; nothing here runs elsewhere (the factories refuse first).
 *
 * <p>Vtable slots ({@code dxgi.h}): {@code IUnknown} 0–2 ({@code QueryInterface}, {@code AddRef},
 * {@code Release}), {@code IDXGIObject} 3–6, {@code IDXGIDeviceSubObject} 7 ({@code GetDevice}),
 * {@code IDXGIKeyedMutex} 8 ({@code AcquireSync}), 9 ({@code ReleaseSync}).
 */
final class DxgiKeyedMutex {
    static final int SLOT_RELEASE = 2;
    static final int SLOT_ACQUIRE_SYNC = 8;
    static final int SLOT_RELEASE_SYNC = 9;

    /** {@code S_OK}. */
    static final int S_OK = 0;
    /** {@code WAIT_ABANDONED}: the owner was destroyed while holding the mutex. */
    static final int WAIT_ABANDONED = 0x80;
    /** {@code WAIT_TIMEOUT}, returned by {@code AcquireSync} as an HRESULT value. */
    static final int WAIT_TIMEOUT = 0x102;

    private static final MethodHandle ACQUIRE_SYNC = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle RELEASE_SYNC = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle RELEASE = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));

    private DxgiKeyedMutex() {
    }

    /** {@code AcquireSync(key, dwMilliseconds)}: an HRESULT ({@link #S_OK}, {@link #WAIT_TIMEOUT}, …). */
    static int acquireSync(MemorySegment mutex, long key, int millis) {
        try {
            return (int) ACQUIRE_SYNC.invokeExact(slot(mutex, SLOT_ACQUIRE_SYNC), mutex, key, millis);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ReleaseSync(key)}: an HRESULT. */
    static int releaseSync(MemorySegment mutex, long key) {
        try {
            return (int) RELEASE_SYNC.invokeExact(slot(mutex, SLOT_RELEASE_SYNC), mutex, key);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code IUnknown::Release}: the new reference count. */
    static int release(MemorySegment mutex) {
        try {
            return (int) RELEASE.invokeExact(slot(mutex, SLOT_RELEASE), mutex);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static MemorySegment slot(MemorySegment object, int slot) {
        MemorySegment vtable = object.reinterpret(ValueLayout.ADDRESS.byteSize()).get(ValueLayout.ADDRESS, 0);
        return vtable.reinterpret((slot + 1) * ValueLayout.ADDRESS.byteSize())
                .getAtIndex(ValueLayout.ADDRESS, slot);
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
