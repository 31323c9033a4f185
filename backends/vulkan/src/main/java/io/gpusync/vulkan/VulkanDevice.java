package io.gpusync.vulkan;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.VulkanSemaphoreKind;
import io.gpusync.internal.NativeLibraries;
import io.gpusync.kit.NativeAnchor;
import io.gpusync.spi.WaitSet;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.Objects;

import static io.gpusync.vulkan.VkResults.hex;

/**
 * gpusync's handle on a {@code VkDevice} someone else created (an LWJGL application, a renderer): the
 * factory of {@link SyncPoint.Vulkan} points and fence waiters on that device.
 *
 * <p>{@link #wrap} resolves the device-level entry points once through {@code vkGetDeviceProcAddr} and
 * caches them per device; wrapping the same device again while a view of it is open shares them, and every
 * waiter of the device shares one {@link #waitSet() WaitSet}. Once every view of a device is closed, a new
 * {@code wrap} of its address starts afresh: a {@code VkDevice} re-created at the same address never
 * inherits the destroyed one's state. Handles are raw, as LWJGL holds them: {@code VkInstance}/{@code VkDevice}
 * as addresses ({@code long} or {@link MemorySegment}), {@code VkSemaphore}/{@code VkFence} as
 * {@code long}s.
 *
 * <p><b>The device.</b> Create it with Vulkan 1.2's {@code timelineSemaphore} feature enabled
 * ({@code VkPhysicalDeviceTimelineSemaphoreFeatures} or {@code VkPhysicalDeviceVulkan12Features} in the
 * {@code pNext} chain of {@code VkDeviceCreateInfo}): timeline points, {@link #hostSignal}, the wait set and the
 * wake-ups of blocked waits all use timeline semaphores, and a device without the feature fails them (Vulkan
 * cannot tell gpusync which features a device was created with). Fences and binary semaphores need nothing.
 *
 * <p><b>Threading.</b> Thread-safe. Minting points and {@link #hostSignal} never block on the GPU.
 * {@link #hostSignal} is {@code vkSignalSemaphore}: Vulkan requires it not to race with other signals of the
 * same semaphore. Nothing here waits: waiting is the job of the points' waiters ({@code await} blocks in the
 * driver and cannot be interrupted once inside it — cancel by waiting in slices, or through the reactor
 * adapter) and of {@link #waitSet()}, whose {@code wakeUp()} ends a blocked {@code awaitAny} from any thread.
 *
 * <p><b>Lifetime.</b> {@link #close()} drops this view's hold (idempotent). gpusync keeps per-device state
 * (the wait set's private wake-up semaphore) until every view and every waiter minted from the device is
 * closed or unreachable and no wait is in progress; adopted semaphores and fences are destroyed before that.
 * gpusync holds an owned semaphore or fence while it has handed it to the driver ({@link #hostSignal},
 * {@link #counterValue}, a {@link #submit} until its batches have completed); batches and signals the
 * application makes itself with an adopted handle, other than through {@link #submit}, are its own to cover: keep
 * a waiter on it open until they have completed (Vulkan forbids destroying a semaphore or fence that a pending batch
 * refers to).
 * The caller destroys a wrapped {@code VkDevice} only after all of that — {@link #whenReleased()} says when;
 * destroying it earlier is undefined behaviour in Vulkan, which gpusync cannot detect. Minting from a closed view throws
 * {@link IllegalStateException}.
 *
 * <p><b>Invalid handles.</b> NULL handles are rejected with {@link SyncInvalidArgumentException}. A non-NULL
 * handle that is not a live object of this device is undefined behaviour in Vulkan (validation layers catch
 * it; drivers may crash), so gpusync cannot turn it into an exception.
 */
public final class VulkanDevice implements AutoCloseable {
    final DeviceState state;
    private final DeviceState.Acquired claims;
    private final NativeAnchor.Claim claim;

    private VulkanDevice(MemorySegment instance, MemorySegment device) {
        this.claims = DeviceState.acquire(this, () -> DeviceFunctions.resolve(instance, device), device.address());
        this.state = claims.state();
        this.claim = claims.claim();
    }

    /**
     * Wraps a device created by the caller. {@code instance} may be NULL (the loader's exported
     * {@code vkGetDeviceProcAddr} is then used, which serves every device created through the system
     * loader); when given, the instance's own {@code vkGetDeviceProcAddr} is used.
     *
     * @throws io.gpusync.SyncNotSupportedException if {@code libvulkan.so.1} cannot be loaded
     * @throws SyncInvalidArgumentException         if {@code device} is NULL
     */
    public static VulkanDevice wrap(MemorySegment instance, MemorySegment device) {
        Objects.requireNonNull(instance, "instance (use MemorySegment.NULL for none)");
        Objects.requireNonNull(device, "device");
        NativeLibraries.require(BackendKind.VULKAN, "libvulkan.so.1");
        requireHandle(device.address(), "VkDevice");
        return new VulkanDevice(instance, device);
    }

    /** {@link #wrap(MemorySegment, MemorySegment)} with raw addresses ({@code instance} may be 0). */
    public static VulkanDevice wrap(long instance, long device) {
        return wrap(MemorySegment.ofAddress(instance), MemorySegment.ofAddress(device));
    }

    /** The raw {@code VkDevice}. */
    public MemorySegment handle() {
        return state.fns.device;
    }

    /**
     * A point on the caller's timeline semaphore {@code semaphore} at {@code value} (unsigned), which gpusync
     * adopts: it destroys the semaphore when the last waiter on it is closed (or unreachable) and no wait on it
     * is in progress. Adopt a handle at most once; mint further points with {@link SyncPoint#withValue}. Its
     * waiter blocks in {@code vkWaitSemaphores}, probes with {@code vkGetSemaphoreCounterValue}, rebinds to
     * other values on the same semaphore, and is a member of {@link #waitSet()}.
     *
     * @throws SyncInvalidArgumentException if {@code semaphore} is {@code VK_NULL_HANDLE}
     * @throws IllegalStateException        if this view is closed
     */
    public SyncPoint.Vulkan adoptTimelineSemaphore(long semaphore, long value) {
        return timelinePoint(semaphore, value, true);
    }

    /**
     * {@link #adoptTimelineSemaphore} for a semaphore the caller keeps: it destroys the semaphore after closing
     * every waiter on it and after every wait on it has returned; gpusync never does.
     */
    public SyncPoint.Vulkan borrowTimelineSemaphore(long semaphore, long value) {
        return timelinePoint(semaphore, value, false);
    }

    private SyncPoint.Vulkan timelinePoint(long semaphore, long value, boolean adopt) {
        requireHandle(semaphore, "timeline VkSemaphore");
        return mint(() -> {
            NativeAnchor anchor = anchor(adopt, "timeline VkSemaphore " + hex(semaphore), semaphore, 0);
            SyncPoint.Vulkan point = new SyncPoint.Vulkan(semaphore, VulkanSemaphoreKind.TIMELINE, value, handle(),
                    new TimelineSemaphoreWaiter(this, semaphore, value, anchor));
            return owning(point, anchor, semaphore, 0);
        });
    }

    /**
     * Creates a timeline semaphore at {@code initialValue} (unsigned) that gpusync owns, and returns the
     * point at {@code initialValue} (already signalled): producers read the raw handle from
     * {@link SyncPoint.Vulkan#semaphore()}, signal it ({@link #hostSignal} or a queue submit) and mint later
     * points with {@link SyncPoint#withValue}. The semaphore is destroyed once this point's waiter and every
     * waiter rebound from it are closed (or unreachable) — keep one open while you still signal it.
     *
     * @throws io.gpusync.SyncNotSupportedException if the device has no timeline semaphores
     */
    public SyncPoint.Vulkan createTimelineSemaphore(long initialValue) {
        return mint(() -> {
            long semaphore = state.fns.createSemaphore(true, initialValue);
            NativeAnchor anchor = HandleRelease.anchor(state, "timeline VkSemaphore " + hex(semaphore), semaphore, 0);
            SyncPoint.Vulkan point = new SyncPoint.Vulkan(semaphore, VulkanSemaphoreKind.TIMELINE, initialValue,
                    handle(), new TimelineSemaphoreWaiter(this, semaphore, initialValue, anchor));
            return owning(point, anchor, semaphore, 0);
        });
    }

    /**
     * A point on a binary semaphore that gpusync adopts (destroys once the last waiter on it is closed), for
     * consumers that stage a GPU-side wait on it. Its waiter anchors the semaphore but cannot wait from the
     * CPU: {@code await}/{@code isSignaled} throw {@link io.gpusync.SyncNotSupportedException} (a host wait
     * would consume the signal — see {@link #adoptBinarySemaphore(long, long)} for the CPU-waitable form).
     */
    public SyncPoint.Vulkan adoptBinarySemaphore(long semaphore) {
        return binaryPoint(semaphore, true);
    }

    /** {@link #adoptBinarySemaphore(long)} for a semaphore the caller keeps and destroys; gpusync never does. */
    public SyncPoint.Vulkan borrowBinarySemaphore(long semaphore) {
        return binaryPoint(semaphore, false);
    }

    /**
     * A point on a binary semaphore whose producer signals {@code signalFence} in the same
     * {@code vkQueueSubmit}: GPU consumers wait on the semaphore, CPU waiters on the fence (waiting does not
     * consume the semaphore's signal). gpusync adopts both handles.
     */
    public SyncPoint.Vulkan adoptBinarySemaphore(long semaphore, long signalFence) {
        return binaryPoint(semaphore, signalFence, true);
    }

    /** {@link #adoptBinarySemaphore(long, long)} for handles the caller keeps and destroys; gpusync never does. */
    public SyncPoint.Vulkan borrowBinarySemaphore(long semaphore, long signalFence) {
        return binaryPoint(semaphore, signalFence, false);
    }

    private SyncPoint.Vulkan binaryPoint(long semaphore, boolean adopt) {
        requireHandle(semaphore, "binary VkSemaphore");
        return mint(() -> {
            NativeAnchor anchor = anchor(adopt, "binary VkSemaphore " + hex(semaphore), semaphore, 0);
            return owning(new SyncPoint.Vulkan(semaphore, VulkanSemaphoreKind.BINARY, 0, handle(),
                    new BinarySemaphoreWaiter(this, semaphore, anchor)), anchor, semaphore, 0);
        });
    }

    private SyncPoint.Vulkan binaryPoint(long semaphore, long signalFence, boolean adopt) {
        requireHandle(semaphore, "binary VkSemaphore");
        requireHandle(signalFence, "VkFence");
        return mint(() -> {
            NativeAnchor anchor = anchor(adopt, "binary VkSemaphore " + hex(semaphore) + " + VkFence "
                    + hex(signalFence), semaphore, signalFence);
            return owning(new SyncPoint.Vulkan(semaphore, VulkanSemaphoreKind.BINARY, 0, handle(),
                    new VulkanFenceWaiter(this, signalFence, anchor)), anchor, semaphore, signalFence);
        });
    }

    /**
     * A waiter on the caller's {@code fence}, which gpusync adopts (destroys once the waiter is closed and no
     * wait on it is in progress). A fence is not a {@link SyncPoint}: no GPU can wait on one.
     *
     * @throws SyncInvalidArgumentException if {@code fence} is {@code VK_NULL_HANDLE}
     */
    public SyncWaiter adoptFence(long fence) {
        return fenceWaiter(fence, true);
    }

    /** {@link #adoptFence} for a fence the caller keeps and destroys; gpusync never does. */
    public SyncWaiter borrowFence(long fence) {
        return fenceWaiter(fence, false);
    }

    private SyncWaiter fenceWaiter(long fence, boolean adopt) {
        requireHandle(fence, "VkFence");
        return mint(() -> {
            NativeAnchor anchor = anchor(adopt, "VkFence " + hex(fence), 0, fence);
            return owning(new VulkanFenceWaiter(this, fence, anchor), anchor, 0, fence);
        });
    }

    /** Creates a fence that gpusync owns (signalled or not) and returns its waiter. */
    public SyncWaiter createFence(boolean signalled) {
        return mint(() -> {
            long fence = state.fns.createFence(signalled);
            NativeAnchor anchor = HandleRelease.anchor(state, "VkFence " + hex(fence), 0, fence);
            return owning(new VulkanFenceWaiter(this, fence, anchor), anchor, 0, fence);
        });
    }

    /**
     * Signals the timeline semaphore to {@code value} from the host ({@code vkSignalSemaphore}); waiters at
     * or below it wake. Refuses a value not above the current counter — Vulkan requires strictly
     * increasing values, and drivers answer a violation with {@code VK_ERROR_DEVICE_LOST} (lavapipe loses
     * the device for good). The check and the signal are not atomic against other signallers of the same
     * semaphore, which Vulkan forbids anyway. A semaphore gpusync owns (adopted or created here) is held for the
     * whole call: the wait that this signal ends may close the last waiter, and a driver may still touch the
     * semaphore after waking its waiters (Mesa does so with an EGL sync), so it is destroyed only after the call
     * has returned. A borrowed semaphore is the caller's to keep alive, and so is an owned one until this call:
     * once every waiter on it is closed, gpusync destroys it and its handle is dead.
     *
     * @throws SyncInvalidArgumentException if {@code value} is not above the current counter (unsigned)
     * @throws IllegalStateException        if gpusync owns the semaphore and is destroying it (its last waiter
     *                                      was just closed); the driver is not called
     * @throws io.gpusync.DeviceLostException if the device is lost
     */
    public void hostSignal(long semaphore, long value) {
        requireHandle(semaphore, "timeline VkSemaphore");
        mint(() -> {
            String what = "vkSignalSemaphore(VkSemaphore " + hex(semaphore) + ", " + Long.toUnsignedString(value)
                    + ") on " + state;
            state.checkNotLost(what);
            return state.holdOwned(semaphore, what, () -> {
                long current = counter(semaphore);
                if (Long.compareUnsigned(value, current) <= 0) {
                    throw new SyncInvalidArgumentException(BackendKind.VULKAN, what + " refused: the counter is "
                            + "already " + Long.toUnsignedString(current) + " and timeline values must strictly increase");
                }
                state.check(state.fns.signalSemaphore(semaphore, value), what);
                return null;
            });
        });
    }

    /**
     * The current counter of a timeline semaphore (unsigned), {@code vkGetSemaphoreCounterValue}; a semaphore
     * gpusync owns is held for the call.
     *
     * @throws IllegalStateException if gpusync owns the semaphore and is destroying it
     */
    public long counterValue(long semaphore) {
        requireHandle(semaphore, "timeline VkSemaphore");
        return mint(() -> state.holdOwned(semaphore, "vkGetSemaphoreCounterValue", () -> counter(semaphore)));
    }

    private long counter(long semaphore) {
        long[] out = new long[1];
        state.check(state.fns.counterValue(semaphore, out),
                "vkGetSemaphoreCounterValue(VkSemaphore " + hex(semaphore) + ") on " + state);
        return out[0];
    }

    /**
     * {@code vkQueueSubmit(queue, submitCount, submits, fence)}, holding every semaphore and fence that gpusync owns
     * (adopted or created here) among those the batches name — their wait and signal semaphores, and {@code fence}
     * — until the batches have completed: Vulkan forbids destroying a handle that a pending batch refers to, and the
     * last waiter on an owned handle may be closed at any time. When the batches name an owned handle, one more
     * empty batch on {@code queue} signals a private timeline semaphore behind them (semaphore signal operations
     * are ordered after every earlier one in submission order); the holds are dropped once it has, by a later
     * submission or on gpusync's housekeeping thread. Borrowed handles stay the caller's to keep alive.
     *
     * <p><b>Threading.</b> Any thread; {@code queue} must be a queue of this device, and the caller synchronises
     * access to it as Vulkan requires (this call may submit to it twice). <b>Blocking.</b> None: the call never
     * waits for the GPU, so there is nothing to cancel. A batch that never completes (it waits on a value nobody
     * signals) keeps its owned handles, and so the device, alive: a leak, never a use after free.
     *
     * @param queue       a {@code VkQueue} of this device
     * @param submitCount how many {@code VkSubmitInfo}s {@code submits} holds
     * @param submits     {@code submitCount} {@code VkSubmitInfo} structs, with their {@code pNext} chains, in a
     *                    segment whose size covers them (as {@code VkSubmitInfo.allocate}/{@code allocateArray}
     *                    make it)
     * @param fence       a {@code VkFence} the batches signal, or 0 ({@code VK_NULL_HANDLE})
     * @throws io.gpusync.DeviceLostException if the device is lost
     * @throws SyncInvalidArgumentException  if {@code submits} is smaller than {@code submitCount} structs
     * @throws io.gpusync.SyncException       if the driver refuses the submission
     * @throws IllegalStateException          if this view is closed, or gpusync owns a named handle and is
     *                                        destroying it (its last waiter was just closed); nothing is submitted
     */
    public void submit(MemorySegment queue, int submitCount, MemorySegment submits, long fence) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(submits, "submits");
        if (submitCount < 0 || submits.byteSize() < (long) submitCount * SubmissionHolds.SUBMIT_INFO_BYTES) {
            throw new SyncInvalidArgumentException(BackendKind.VULKAN, "submits must hold submitCount (" + submitCount
                    + ") VkSubmitInfo structs: its segment has " + submits.byteSize() + " bytes");
        }
        mint(() -> {
            state.submissions.submit(queue, submitCount, submits, fence);
            return null;
        });
    }

    /**
     * The wait set shared by every timeline waiter of this device (equal for all of them, across views):
     * an engine blocks one thread on many of them with {@code VK_SEMAPHORE_WAIT_ANY_BIT}, and wakes it
     * through a private timeline semaphore. Blocking and cancellation: {@code awaitAny} parks in
     * {@code vkWaitSemaphores} for at most its slice and {@code wakeUp()} ends it from any thread (on
     * lavapipe a multi-semaphore wait busy-polls inside the driver: see the note on CPU cost there).
     */
    public WaitSet waitSet() {
        return state.waitSet;
    }

    /** Drops this view's hold on the device state (idempotent); see the class comment. */
    @Override
    public void close() {
        claims.close();
    }

    /**
     * Completes once gpusync has let go of this device: every view of it ({@code wrap}s while one was open
     * share the device) is closed, every waiter minted from it is closed or unreachable, no wait on it is in
     * progress, the semaphores and fences gpusync adopted are destroyed and gpusync's own semaphores on the
     * device too. From then on gpusync makes no call on the {@code VkDevice}: the application may destroy its
     * borrowed semaphores and fences and then the device ({@code vkDestroyDevice}), which before that is
     * undefined behaviour. It completes only after the application has closed its views and the points' waiters
     * ({@code point.waiter().close()}); an engine's finished waits hold nothing.
     *
     * <p>Never blocks. The stage completes on the thread that drops the last hold or on gpusync's housekeeping
     * thread: destroy the device from a thread of your own (join the stage, or {@code thenRunAsync} on your
     * executor), never inside a dependant that runs on gpusync's thread. The stage cannot be completed by its
     * callers.
     */
    public java.util.concurrent.CompletionStage<Void> whenReleased() {
        return state.anchor.whenReleased();
    }

    /**
     * {@code minted}, after recording its non-zero handles as gpusync's when {@code anchor} is adopted (a waiter
     * holds it by now): calls that hand them to the driver hold them ({@link DeviceState#holdIfOwned}).
     */
    private <T> T owning(T minted, NativeAnchor anchor, long semaphore, long fence) {
        if (anchor.isAdopted()) {
            if (semaphore != 0) {
                state.own(semaphore, anchor);
            }
            if (fence != 0) {
                state.own(fence, anchor);
            }
        }
        return minted;
    }

    private NativeAnchor anchor(boolean adopt, String what, long semaphore, long fence) {
        return adopt ? HandleRelease.anchor(state, what, semaphore, fence)
                : NativeAnchor.borrow(VulkanDevice.class, what);
    }

    /** Runs {@code action} with the device held (this view must be open). */
    <T> T mint(java.util.function.Supplier<T> action) {
        try {
            return claim.call(action);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    private static void requireHandle(long handle, String what) {
        if (handle == 0) {
            throw new SyncInvalidArgumentException(BackendKind.VULKAN, what + " is VK_NULL_HANDLE");
        }
    }

    @Override
    public String toString() {
        return "VulkanDevice[" + state + (claim.isClosed() ? ", closed" : "") + "]";
    }
}
