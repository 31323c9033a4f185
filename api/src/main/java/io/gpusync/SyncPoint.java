package io.gpusync;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A point on a GPU (or host) timeline that work will signal — gpu-handle-types' {@code SyncPoint}: one record per
 * API, each carrying the raw handles a consumer needs to stage a GPU-side wait, plus the
 * {@link SyncWaiter} that waits on it from the CPU and anchors the native primitive's lifetime.
 *
 * <p>Values (timeline values, keys, submission indices) are {@code long}s with <em>unsigned</em> meaning:
 * compare them with {@link Long#compareUnsigned}; values ≥ 2<sup>63</sup> are valid.
 *
 * <p><b>Threading and blocking.</b> Points are immutable and thread-safe. {@link #await()} and
 * {@link #await(Duration)} block the calling thread; {@link #isSignaled()} does not. For non-blocking
 * waits use the reactor adapter ({@code GpuSync.await(point)}), which cancels by deregistering.
 *
 * <p>Every point has a waiter: {@link #CPU} and {@link #NOOP} use {@link SyncWaiter#SIGNALLED}.
 */
public sealed interface SyncPoint {

    /** The default timeout of {@link #await()}: 10 seconds, as in gpu-handle-types. */
    Duration DEFAULT_WAIT_TIMEOUT = Duration.ofSeconds(10);

    /** Waits forever: the largest {@link Duration}; maps to each API's native infinite sentinel. */
    Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

    /** Work already complete on the CPU. */
    SyncPoint CPU = new Cpu();

    /** Nothing to wait for. */
    SyncPoint NOOP = new Noop();

    /** The API this point belongs to. */
    BackendKind backend();

    /** The waiter that waits on this point from the CPU and anchors its primitive. */
    SyncWaiter waiter();

    /** Blocks up to {@link #DEFAULT_WAIT_TIMEOUT}; see {@link SyncWaiter#await}. */
    default void await() {
        waiter().await(DEFAULT_WAIT_TIMEOUT);
    }

    /** Blocks until signalled or {@code timeout}; see {@link SyncWaiter#await}. */
    default void await(Duration timeout) {
        waiter().await(timeout);
    }

    /** Non-blocking probe; driver errors propagate. See {@link SyncWaiter#isSignaled()}. */
    default boolean isSignaled() {
        return waiter().isSignaled();
    }

    /**
     * This point at {@code value} on the same primitive, with the waiter from
     * {@link SyncWaiter#rebindToValue}, so the GPU-side value and the CPU-side wait can never disagree.
     *
     * @throws SyncInvalidArgumentException if this variant carries no value, or its waiter cannot rebind
     */
    default SyncPoint withValue(long value) {
        throw new SyncInvalidArgumentException(backend(),
                getClass().getSimpleName() + " carries no value; withValue(" + Long.toUnsignedString(value)
                        + ") is not possible");
    }

    private static SyncWaiter rebind(SyncPoint point, long value) {
        return point.waiter().rebindToValue(value).orElseThrow(() -> new SyncInvalidArgumentException(
                point.backend(), "the waiter of " + point.getClass().getSimpleName() + " (" + point.waiter()
                        + ") cannot rebind to value " + Long.toUnsignedString(value)));
    }

    private static <T> T handle(T handle, String name) {
        return Objects.requireNonNull(handle, name);
    }

    /** A Vulkan semaphore; {@code value} is ignored for {@link VulkanSemaphoreKind#BINARY}. */
    record Vulkan(long semaphore, VulkanSemaphoreKind kind, long value, MemorySegment device, SyncWaiter waiter)
            implements SyncPoint {
        public Vulkan {
            handle(kind, "kind");
            handle(device, "device");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.VULKAN;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            if (kind == VulkanSemaphoreKind.BINARY) {
                throw new SyncInvalidArgumentException(BackendKind.VULKAN,
                        "a binary Vulkan semaphore carries no value; withValue is only for timeline semaphores");
            }
            return new Vulkan(semaphore, kind, newValue, device, rebind(this, newValue));
        }
    }

    /**
     * A D3D12 fence ({@code ID3D12Fence*}) reaching {@code value} (unsigned); minted by
     * {@code io.gpusync.d3d12.D3D12Fences} ({@code borrow}/{@code adopt}).
     */
    record D3D12(MemorySegment fence, long value, SyncWaiter waiter) implements SyncPoint {
        public D3D12 {
            handle(fence, "fence");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.D3D12;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            return new D3D12(fence, newValue, rebind(this, newValue));
        }
    }

    /**
     * A D3D11 keyed mutex ({@code IDXGIKeyedMutex*}) to be acquired at {@code key}; minted by
     * {@code io.gpusync.d3d11.D3D11KeyedMutexes} (Windows only).
     */
    record D3D11(MemorySegment keyedMutex, long key, SyncWaiter waiter) implements SyncPoint {
        public D3D11 {
            handle(keyedMutex, "keyedMutex");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.D3D11;
        }

        @Override
        public SyncPoint withValue(long newKey) {
            return new D3D11(keyedMutex, newKey, rebind(this, newKey));
        }
    }

    /**
     * A CUDA sync object: {@code event} is a {@code CUevent} (no value) or, with a value, a host-memory
     * timeline or external semaphore that the backend documents.
     */
    record Cuda(MemorySegment event, OptionalLong value, SyncWaiter waiter) implements SyncPoint {
        public Cuda {
            handle(event, "event");
            handle(value, "value");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CUDA;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            if (value.isEmpty()) {
                return SyncPoint.super.withValue(newValue);
            }
            return new Cuda(event, OptionalLong.of(newValue), rebind(this, newValue));
        }
    }

    /**
     * A recorded {@code CUevent} with its owning {@code CUcontext} and device ordinal; its waiter is a
     * {@link CudaEventWaiter}.
     */
    record CudaEvent(MemorySegment event, MemorySegment context, int device, SyncWaiter waiter) implements SyncPoint {
        public CudaEvent {
            handle(event, "event");
            handle(context, "context");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CUDA;
        }
    }

    /**
     * An OpenCL {@code cl_event} ({@code io.gpusync.opencl.OpenClEvents}) or binary {@code cl_semaphore_khr}
     * ({@code io.gpusync.opencl.OpenClSemaphores}; its waiter is an
     * {@code OpenClSemaphoreWaiter}). Neither carries a value (gpu-handle-types lists both
     * among the primitives with nothing to rebind), so {@link #withValue} is refused.
     */
    record OpenCl(MemorySegment event, SyncWaiter waiter) implements SyncPoint {
        public OpenCl {
            handle(event, "event");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.OPENCL;
        }
    }

    /**
     * A Metal {@code MTLSharedEvent} at {@code value}; minted by {@code io.gpusync.metal.MetalSharedEvents}
     * (macOS only).
     */
    record Metal(MemorySegment event, long value, SyncWaiter waiter) implements SyncPoint {
        public Metal {
            handle(event, "event");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.METAL;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            return new Metal(event, newValue, rebind(this, newValue));
        }
    }

    /**
     * An OpenGL semaphore object (EXT_semaphore), with a value when it imports a timeline; minted by
     * {@code io.gpusync.gl.GlSemaphores}.
     */
    record OpenGL(int semaphore, OptionalLong value, MemorySegment context, SyncWaiter waiter) implements SyncPoint {
        public OpenGL {
            handle(value, "value");
            handle(context, "context");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.OPENGL;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            if (value.isEmpty()) {
                return SyncPoint.super.withValue(newValue);
            }
            return new OpenGL(semaphore, OptionalLong.of(newValue), context, rebind(this, newValue));
        }
    }

    /** An OpenGL fence sync ({@code GLsync}) created in a context of {@code platform}. */
    record OpenGLSync(MemorySegment glsync, GlBackend platform, SyncWaiter waiter) implements SyncPoint {
        public OpenGLSync {
            handle(glsync, "glsync");
            handle(platform, "platform");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.OPENGL;
        }
    }

    /** A wgpu submission index; minted by {@code io.gpusync.wgpu.WgpuSubmissions}. */
    record Wgpu(long submissionIndex, SyncWaiter waiter) implements SyncPoint {
        public Wgpu {
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.WGPU;
        }

        @Override
        public SyncPoint withValue(long newIndex) {
            return new Wgpu(newIndex, rebind(this, newIndex));
        }
    }

    /**
     * A value on a {@link SoftwareTimeline} (gpusync's is {@code io.gpusync.cpu.CpuTimeline}). Backend
     * {@link BackendKind#CPU}.
     */
    record HostTimeline(SoftwareTimeline timeline, long value, SyncWaiter waiter) implements SyncPoint {
        public HostTimeline {
            handle(timeline, "timeline");
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }

        @Override
        public SyncPoint withValue(long newValue) {
            return new HostTimeline(timeline, newValue, rebind(this, newValue));
        }
    }

    /** A Linux file descriptor that becomes readable when signalled (an eventfd, a sync_file). */
    record SyncFd(int fd, SyncWaiter waiter) implements SyncPoint {
        public SyncFd {
            if (fd < 0) {
                throw new SyncInvalidArgumentException(BackendKind.LINUX, "SyncFd needs a valid fd, got " + fd);
            }
            handle(waiter, "waiter");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.LINUX;
        }
    }

    /** Work already complete on the CPU ({@link #CPU}); its waiter is {@link SyncWaiter#SIGNALLED}. */
    record Cpu() implements SyncPoint {
        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }

        @Override
        public SyncWaiter waiter() {
            return SyncWaiter.SIGNALLED;
        }
    }

    /** Nothing to wait for ({@link #NOOP}); its waiter is {@link SyncWaiter#SIGNALLED}. */
    record Noop() implements SyncPoint {
        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }

        @Override
        public SyncWaiter waiter() {
            return SyncWaiter.SIGNALLED;
        }
    }
}
