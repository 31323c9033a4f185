package io.gpusync.bindings.d3d12;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Hand-written FFM downcalls to gpusync's D3D12 shim, {@code libgpusync_d3d12.so} (source
 * {@code bindings/bindings-d3d12/src/main/c/gpusync_d3d12.c}, built by {@code build-shim.sh} during this module's Maven
 * build). They are hand-written, not jextract output, because the shim is gpusync's own small header-less
 * library and no jextract is installed where it was added; they follow the generated bindings' conventions
 * (pointers are {@link MemorySegment}s, {@code uint64_t} is {@code long}, {@code HRESULT} is {@code int}).
 *
 * <p><b>Why a shim.</b> On x86-64 Linux, vkd3d's {@code <vkd3d_windows.h>} declares every COM vtable method (and
 * {@code D3D12CreateDevice}) {@code ms_abi}, which FFM's Linux linker cannot call; the shim re-exports the few
 * calls gpusync makes as System V functions. On Windows the same calls would go straight through the vtables.
 *
 * <p><b>Where the library comes from.</b> The build puts it in this module's classes at
 * {@code io/gpusync/bindings/d3d12/linux-x86_64/libgpusync_d3d12.so}, so it travels inside the jar; on first use it
 * is copied to a temporary file (deleted on exit) and loaded from there. {@code -Dgpusync.d3d12.shim=/path/to.so}
 * loads another copy instead. Where the build skipped the shim (no C compiler, no vkd3d headers) a
 * {@code libgpusync_d3d12.skipped} resource says why, and {@link #unavailableReason()} reports it. The shim links
 * {@code libvkd3d.so.1} and {@code libvkd3d-utils.so.1} (Debian {@code libvkd3d1 libvkd3d-utils1}).
 *
 * <p>Thread-safe: every function may be called from any thread (vkd3d's fences are thread-safe; the event table
 * is locked).
 */
public final class D3d12Shim {
    /** The shim's ABI version this class binds. */
    public static final int ABI_VERSION = 1;

    private static final String RESOURCE = "linux-x86_64/libgpusync_d3d12.so";
    private static final String SKIPPED = "linux-x86_64/libgpusync_d3d12.skipped";

    private D3d12Shim() {
    }

    /** {@code null} when the shim loaded, else why not (the build skipped it, a library is missing, …). */
    public static String unavailableReason() {
        return Holder.REASON;
    }

    /** Whether the shim is loaded and every function below may be called. */
    public static boolean isAvailable() {
        return Holder.REASON == null;
    }

    private static final class Holder {
        static final String REASON;
        static final MethodHandle CREATE_DEVICE;
        static final MethodHandle CREATE_FENCE;
        static final MethodHandle COMPLETED_VALUE;
        static final MethodHandle FENCE_SIGNAL;
        static final MethodHandle SET_EVENT_ON_COMPLETION;
        static final MethodHandle QUEUE_SIGNAL;
        static final MethodHandle DEVICE_REMOVED_REASON;
        static final MethodHandle FENCE_IS_OURS;
        static final MethodHandle UTILS_CREATE_DEVICE;
        static final MethodHandle ADD_REF;
        static final MethodHandle RELEASE;
        static final MethodHandle EVENT_FROM_EVENTFD;
        static final MethodHandle EVENT_FORGET;
        static final MethodHandle UTILS_EVENT_CREATE;
        static final MethodHandle UTILS_EVENT_WAIT_FOREVER;

        static {
            String reason = null;
            SymbolLookup lookup = null;
            try {
                lookup = load();
                MethodHandle version = downcall(lookup, "gs_d3d12_abi_version", FunctionDescriptor.of(ValueLayout.JAVA_INT));
                int v = (int) version.invokeExact();
                if (v != ABI_VERSION) {
                    reason = "libgpusync_d3d12.so has ABI version " + v + ", these bindings expect " + ABI_VERSION;
                }
            } catch (Unavailable e) {
                reason = e.getMessage();
            } catch (IllegalArgumentException | IllegalCallerException | UnsatisfiedLinkError e) {
                reason = "libgpusync_d3d12.so cannot be loaded (" + e.getMessage()
                        + "); it needs libvkd3d.so.1 and libvkd3d-utils.so.1 (Debian: libvkd3d1 libvkd3d-utils1)";
            } catch (Throwable t) {
                reason = "libgpusync_d3d12.so cannot be loaded: " + t;
            }
            REASON = reason;
            boolean ok = reason == null;
            var A = ValueLayout.ADDRESS;
            var I = ValueLayout.JAVA_INT;
            var J = ValueLayout.JAVA_LONG;
            CREATE_DEVICE = ok ? downcall(lookup, "gs_d3d12_create_device", FunctionDescriptor.of(I, A, A)) : null;
            CREATE_FENCE = ok ? downcall(lookup, "gs_d3d12_create_fence", FunctionDescriptor.of(I, A, J, A)) : null;
            COMPLETED_VALUE = ok ? downcall(lookup, "gs_d3d12_fence_completed_value", FunctionDescriptor.of(J, A)) : null;
            FENCE_SIGNAL = ok ? downcall(lookup, "gs_d3d12_fence_signal", FunctionDescriptor.of(I, A, J)) : null;
            SET_EVENT_ON_COMPLETION = ok ? downcall(lookup, "gs_d3d12_fence_set_event_on_completion",
                    FunctionDescriptor.of(I, A, J, A)) : null;
            QUEUE_SIGNAL = ok ? downcall(lookup, "gs_d3d12_queue_signal", FunctionDescriptor.of(I, A, A, J)) : null;
            DEVICE_REMOVED_REASON = ok ? downcall(lookup, "gs_d3d12_fence_device_removed_reason",
                    FunctionDescriptor.of(I, A)) : null;
            UTILS_CREATE_DEVICE = ok ? downcall(lookup, "gs_d3d12_utils_create_device", FunctionDescriptor.of(I, A)) : null;
            FENCE_IS_OURS = ok ? downcall(lookup, "gs_d3d12_fence_is_ours", FunctionDescriptor.of(I, A)) : null;
            ADD_REF = ok ? downcall(lookup, "gs_d3d12_add_ref", FunctionDescriptor.of(I, A)) : null;
            RELEASE = ok ? downcall(lookup, "gs_d3d12_release", FunctionDescriptor.of(I, A)) : null;
            EVENT_FROM_EVENTFD = ok ? downcall(lookup, "gs_d3d12_event_from_eventfd", FunctionDescriptor.of(A, I)) : null;
            EVENT_FORGET = ok ? downcall(lookup, "gs_d3d12_event_forget", FunctionDescriptor.ofVoid(A)) : null;
            UTILS_EVENT_CREATE = ok ? downcall(lookup, "gs_d3d12_utils_event_create", FunctionDescriptor.of(A)) : null;
            UTILS_EVENT_WAIT_FOREVER = ok ? downcall(lookup, "gs_d3d12_utils_event_wait_forever",
                    FunctionDescriptor.of(I, A)) : null;
        }

        private static SymbolLookup load() throws IOException {
            String override = System.getProperty("gpusync.d3d12.shim");
            if (override != null && !override.isBlank()) {
                return SymbolLookup.libraryLookup(Path.of(override), Arena.global());
            }
            try (InputStream so = D3d12Shim.class.getResourceAsStream(RESOURCE)) {
                if (so == null) {
                    throw new Unavailable(skippedReason());
                }
                Path tmp = Files.createTempFile("libgpusync_d3d12-", ".so");
                tmp.toFile().deleteOnExit();
                Files.copy(so, tmp, StandardCopyOption.REPLACE_EXISTING);
                return SymbolLookup.libraryLookup(tmp, Arena.global());
            }
        }

        private static String skippedReason() throws IOException {
            try (InputStream why = D3d12Shim.class.getResourceAsStream(SKIPPED)) {
                if (why != null) {
                    return "the D3D12 shim was not built: " + new String(why.readAllBytes(), StandardCharsets.UTF_8).trim();
                }
            }
            return "the D3D12 shim (io/gpusync/bindings/d3d12/" + RESOURCE + ") is not in gpusync-bindings-d3d12; "
                    + "it is built on Linux x86-64 with a C compiler and libvkd3d-dev, or set -Dgpusync.d3d12.shim";
        }

        private static MethodHandle downcall(SymbolLookup lookup, String name, FunctionDescriptor fd) {
            MemorySegment symbol = lookup.find(name)
                    .orElseThrow(() -> new UnsatisfiedLinkError("libgpusync_d3d12.so has no symbol " + name));
            return Linker.nativeLinker().downcallHandle(symbol, fd);
        }
    }

    private static final class Unavailable extends RuntimeException {
        Unavailable(String message) {
            super(message);
        }
    }

    private static void requireAvailable() {
        if (Holder.REASON != null) {
            throw new IllegalStateException(Holder.REASON);
        }
    }

    /**
     * {@code HRESULT gs_d3d12_create_device(void **device, void **queue)}: an {@code ID3D12Device*} on a vkd3d
     * instance of its own (whose event handles are the shim's) and one direct {@code ID3D12CommandQueue*}.
     *
     * @param deviceOut receives the device (one {@code ADDRESS} slot)
     * @param queueOut  receives the queue
     */
    public static int createDevice(MemorySegment deviceOut, MemorySegment queueOut) {
        requireAvailable();
        try {
            return (int) Holder.CREATE_DEVICE.invokeExact(deviceOut, queueOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code HRESULT gs_d3d12_create_fence(ID3D12Device*, UINT64 initial, ID3D12Fence **out)}. */
    public static int createFence(MemorySegment device, long initialValue, MemorySegment fenceOut) {
        requireAvailable();
        try {
            return (int) Holder.CREATE_FENCE.invokeExact(device, initialValue, fenceOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code UINT64 ID3D12Fence::GetCompletedValue()}; {@code -1L} ({@code UINT64_MAX}) once the device is removed. */
    public static long fenceCompletedValue(MemorySegment fence) {
        requireAvailable();
        try {
            return (long) Holder.COMPLETED_VALUE.invokeExact(fence);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code HRESULT ID3D12Fence::Signal(UINT64)}: sets the fence's value from the CPU. */
    public static int fenceSignal(MemorySegment fence, long value) {
        requireAvailable();
        try {
            return (int) Holder.FENCE_SIGNAL.invokeExact(fence, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code HRESULT ID3D12Fence::SetEventOnCompletion(UINT64, HANDLE)} with a shim event handle. A NULL event (a
     * blocking wait in D3D12, a crash in vkd3d 1.2) is refused with {@code E_INVALIDARG} by the shim.
     */
    public static int fenceSetEventOnCompletion(MemorySegment fence, long value, MemorySegment event) {
        requireAvailable();
        try {
            return (int) Holder.SET_EVENT_ON_COMPLETION.invokeExact(fence, value, event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code HRESULT ID3D12CommandQueue::Signal(ID3D12Fence*, UINT64)}: the GPU sets the value after prior work. */
    public static int queueSignal(MemorySegment queue, MemorySegment fence, long value) {
        requireAvailable();
        try {
            return (int) Holder.QUEUE_SIGNAL.invokeExact(queue, fence, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ID3D12Device::GetDeviceRemovedReason()} of the fence's device: {@code S_OK} (0) while it is alive. */
    public static int fenceDeviceRemovedReason(MemorySegment fence) {
        requireAvailable();
        try {
            return (int) Holder.DEVICE_REMOVED_REASON.invokeExact(fence);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code HRESULT gs_d3d12_fence_is_ours(ID3D12Fence*)}: 1 if the fence's device was made by {@link #createDevice}
     * (on the shim's vkd3d instance, whose events write eventfds), 0 if it was made elsewhere (vkd3d-utils'
     * {@code D3D12CreateDevice}: events of the shim would reach a callback that does not know them), or a failed
     * {@code HRESULT}.
     */
    public static int fenceIsOurs(MemorySegment fence) {
        requireAvailable();
        try {
            return (int) Holder.FENCE_IS_OURS.invokeExact(fence);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code HRESULT gs_d3d12_utils_create_device(ID3D12Device **out)}: a device made by vkd3d-utils'
     * {@code D3D12CreateDevice}, as a program using vkd3d directly has one (its fences are not
     * {@linkplain #fenceIsOurs ours}).
     */
    public static int utilsCreateDevice(MemorySegment deviceOut) {
        requireAvailable();
        try {
            return (int) Holder.UTILS_CREATE_DEVICE.invokeExact(deviceOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code IUnknown::AddRef}; returns the new count (unsigned). */
    public static int addRef(MemorySegment unknown) {
        requireAvailable();
        try {
            return (int) Holder.ADD_REF.invokeExact(unknown);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code IUnknown::Release}; returns the new count (unsigned). */
    public static int release(MemorySegment unknown) {
        requireAvailable();
        try {
            return (int) Holder.RELEASE.invokeExact(unknown);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * A shim event {@code HANDLE} whose signal writes 1 to {@code eventFd}; {@code NULL} when the shim's table (65,536
     * live handles) is full. The caller keeps {@code eventFd} and closes it only after {@link #eventForget}.
     */
    public static MemorySegment eventFromEventFd(int eventFd) {
        requireAvailable();
        try {
            return (MemorySegment) Holder.EVENT_FROM_EVENTFD.invokeExact(eventFd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Makes every later signal of {@code event} a no-op and frees its slot (idempotent; stale handles are ignored). */
    public static void eventForget(MemorySegment event) {
        requireAvailable();
        try {
            Holder.EVENT_FORGET.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A shim event backed by a vkd3d-utils event (auto-reset), for {@link #utilsEventWaitForever}; NULL on failure. */
    public static MemorySegment utilsEventCreate() {
        requireAvailable();
        try {
            return (MemorySegment) Holder.UTILS_EVENT_CREATE.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Blocks in {@code vkd3d_wait_event(e, VKD3D_INFINITE)} (vkd3d 1.2 takes only 0 or infinite); returns 0
     * ({@code WAIT_OBJECT_0}) when signalled, {@code 0xFFFFFFFF} for a handle that is no utils event.
     */
    public static int utilsEventWaitForever(MemorySegment event) {
        requireAvailable();
        try {
            return (int) Holder.UTILS_EVENT_WAIT_FOREVER.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException re) {
            return re;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
