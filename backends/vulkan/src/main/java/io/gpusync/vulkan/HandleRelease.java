package io.gpusync.vulkan;

import io.gpusync.kit.NativeAnchor;

/**
 * The release action of an owned semaphore and/or fence: forgets them in its device's table of owned handles
 * ({@link DeviceState#holdIfOwned}), destroys the non-zero handles, then drops the hold it keeps on the
 * device (so the device outlives its children). Refers to no waiter, as {@link NativeAnchor} requires;
 * {@code token} is the owner of {@code deviceHold} and must stay reachable as long as this action can run.
 * The destroys may block (NVIDIA's driver takes a process-wide lock in them, and a stuck driver holds it), so the
 * action runs on gpusync's housekeeping thread, never on the thread of a user's {@code close()}.
 */
record HandleRelease(DeviceState state, long semaphore, long fence, Object token, NativeAnchor.Claim deviceHold)
        implements Runnable {

    /** An owned-handle anchor for {@code semaphore} and/or {@code fence} (0 = none) on {@code state}. */
    static NativeAnchor anchor(DeviceState state, String what, long semaphore, long fence) {
        Object token = new Object();
        NativeAnchor.Claim hold = state.anchor.claim(token);
        return NativeAnchor.adoptBlocking(what, new HandleRelease(state, semaphore, fence, token, hold));
    }

    @Override
    public void run() {
        try {
            // before the destroys: a handle value the driver reuses afterwards is not ours
            if (semaphore != 0) {
                state.disown(semaphore);
            }
            if (fence != 0) {
                state.disown(fence);
            }
            if (fence != 0) {
                state.fns.destroyFence(fence);
            }
            if (semaphore != 0) {
                state.fns.destroySemaphore(semaphore);
            }
        } finally {
            deviceHold.close();
        }
    }
}
