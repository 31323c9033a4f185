package io.gpusync.testsuite;

import io.gpusync.BackendKind;
import io.gpusync.CudaEventWaiter;
import io.gpusync.DeviceLostException;
import io.gpusync.SyncTimeoutException;
import io.gpusync.SyncWaiter;

import io.gpusync.kit.NativeAnchor;
import io.gpusync.kit.ProbeLoop;
import io.gpusync.spi.Timeouts;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** Hand-written waiters that exercise the contract (no driver involved: these test the contract itself). */
public final class TestWaiters {
    private TestWaiters() {
    }

    /** Turns signalled after {@code n} probes; {@code await} probes through {@link ProbeLoop}. */
    public static final class SignalledAfterProbes implements SyncWaiter {
        public final AtomicInteger probes = new AtomicInteger();
        private final int n;

        public SignalledAfterProbes(int n) {
            this.n = n;
        }

        @Override
        public boolean isSignaled() {
            return probes.incrementAndGet() > n;
        }

        @Override
        public void await(Duration timeout) {
            ProbeLoop.await(this, timeout);
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }
    }

    /** Never signalled: {@code await} sleeps out its timeout, as a blocking API would. */
    public static final class NeverSignalled implements SyncWaiter {
        @Override
        public void await(Duration timeout) {
            Timeouts.requireValid(timeout);
            if (!timeout.isZero()) {
                try {
                    Thread.sleep(timeout);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            throw new SyncTimeoutException(BackendKind.CPU, "never signalled");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.CPU;
        }
    }

    /** A waiter whose driver reports device loss on every call. */
    public static final class LostDevice implements SyncWaiter {
        @Override
        public void await(Duration timeout) {
            throw new DeviceLostException(BackendKind.VULKAN, "VK_ERROR_DEVICE_LOST");
        }

        @Override
        public BackendKind backend() {
            return BackendKind.VULKAN;
        }
    }

    /**
     * A CUDA-event-shaped waiter over a fake primitive whose release is counted; records foreign-stream
     * waits instead of calling the driver (the real one lives in io.gpusync.cuda).
     */
    public static final class CountingCudaEventWaiter implements CudaEventWaiter {
        public final List<MemorySegment> streams = new ArrayList<>();
        private final NativeAnchor.Claim claim;

        public CountingCudaEventWaiter(AtomicInteger releases) {
            this.claim = NativeAnchor.adopt("test CUevent", releases::incrementAndGet).claim(this);
        }

        @Override
        public void await(Duration timeout) {
            claim.enter();
            claim.exit();
        }

        @Override
        public void waitOnForeignStream(MemorySegment foreignStream) {
            streams.add(foreignStream);
        }

        @Override
        public void close() {
            claim.close();
        }
    }

    /** A value-carrying waiter that records what it was rebound to. */
    public record ValueWaiter(long value) implements SyncWaiter {
        @Override
        public void await(Duration timeout) {
        }

        @Override
        public BackendKind backend() {
            return BackendKind.VULKAN;
        }

        @Override
        public Optional<SyncWaiter> rebindToValue(long newValue) {
            return Optional.of(new ValueWaiter(newValue));
        }
    }
}
