package io.gpusync.metal;

import io.gpusync.BackendKind;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncPoint;
import io.gpusync.internal.Platform;
import io.gpusync.kit.NativeAnchor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * {@link SyncPoint.Metal} points over {@code id<MTLSharedEvent>} handles an application holds; their waiter
 * is a {@code MetalSharedEventWaiter}.
 *
 * <p><b>macOS only.</b> On any other platform every factory throws
 * {@link io.gpusync.SyncNotSupportedException} naming macOS and the platform it runs on, after checking its
 * arguments ({@code null} → {@link NullPointerException}; NULL or a heap segment →
 * {@link SyncInvalidArgumentException}). Messages go through the Objective-C runtime by FFM (see
 * {@code ObjC}).
 *
 * <p>{@link #adopt}: the caller hands over one retain, which gpusync {@code release}s once every waiter of
 * the point is closed and no wait is in progress. {@link #borrow}: the caller keeps the event alive for as
 * long as the point is used. Thread-safe.
 */
public final class MetalSharedEvents {
    private MetalSharedEvents() {
    }

    /** A point at {@code value} on {@code sharedEvent}, taking over one retain. */
    public static SyncPoint.Metal adopt(MemorySegment sharedEvent, long value) {
        MemorySegment event = check(sharedEvent);
        return point(event, value, NativeAnchor.adopt(describe(event), () -> ObjC.release(event)));
    }

    /** A point at {@code value} on {@code sharedEvent}; the caller keeps it alive. */
    public static SyncPoint.Metal borrow(MemorySegment sharedEvent, long value) {
        MemorySegment event = check(sharedEvent);
        return point(event, value, NativeAnchor.borrow(MetalSharedEvents.class, describe(event)));
    }

    private static SyncPoint.Metal point(MemorySegment event, long value, NativeAnchor anchor) {
        return new SyncPoint.Metal(event, value, new MetalSharedEventWaiter(event, value, anchor));
    }

    private static String describe(MemorySegment event) {
        return "MTLSharedEvent 0x" + Long.toHexString(event.address());
    }

    private static MemorySegment check(MemorySegment sharedEvent) {
        Objects.requireNonNull(sharedEvent, "sharedEvent");
        if (!sharedEvent.isNative() || sharedEvent.address() == 0) {
            throw new SyncInvalidArgumentException(BackendKind.METAL,
                    "sharedEvent must be a non-NULL native id<MTLSharedEvent>, got " + sharedEvent);
        }
        Platform.require(Platform.isMacOs(), BackendKind.METAL, "Metal shared events (MTLSharedEvent)", "macOS");
        return MemorySegment.ofAddress(sharedEvent.address());
    }
}
