package io.gpusync.gl;

import io.gpusync.BackendKind;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.egl.Egl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The waiting side of one producer context's share group: a pool of small surfaceless contexts created
 * with the producer as {@code share_context}, lent to a thread for the duration of one wait or probe.
 *
 * <p><b>Why a pool and not one context per thread.</b> An EGL context can be current on one thread at a
 * time, and the contract asks every wait to leave the calling thread's binding as it found it — so every
 * call pays an {@code eglMakeCurrent} pair anyway, whichever context it binds. A LIFO pool then gives the
 * same concurrency as thread-affine contexts (N concurrent waits use N contexts, never blocking on each
 * other), bounds the contexts by the <em>peak number of concurrent waits</em> instead of the number of
 * threads that ever waited, and leaks nothing when a pool thread dies (a {@code ThreadLocal} context would
 * be destroyed by nobody). The most recently returned context is reused first, so a steady waiter thread
 * keeps hitting the same warm context.
 *
 * <p>A thread whose current context is already the producer (or one of ours) waits on it directly: no
 * bind at all, and only on the producer is {@code GL_SYNC_FLUSH_COMMANDS_BIT} meaningful (see
 * {@link Binding#onProducer()}).
 *
 * <p>Thread-safe. {@link #destroy()} must only run once nothing can bind any more (the owning
 * {@link GlShareGroup}'s anchor guarantees it).
 */
final class ShareContexts {
    final MemorySegment display;
    final MemorySegment producer;
    /** How the group's {@code GLsync}s are waited on. */
    final FenceWaits fenceWaits;
    private final int api;
    private final MemorySegment config;
    private final MemorySegment attribs;
    private final ConcurrentLinkedDeque<MemorySegment> idle = new ConcurrentLinkedDeque<>();
    private final List<MemorySegment> all = new ArrayList<>();

    private ShareContexts(MemorySegment display, MemorySegment producer, int api, MemorySegment config,
                          MemorySegment attribs) {
        this.display = display;
        this.producer = producer;
        this.fenceWaits = FenceWaits.of(display);
        this.api = api;
        this.config = config;
        this.attribs = attribs;
    }

    /** Reads the producer's client API, version and config so that our contexts can share with it. */
    static ShareContexts of(MemorySegment display, MemorySegment producer) {
        int clientType = EglNative.eglQueryContext(display, producer, Egl.EGL_CONTEXT_CLIENT_TYPE(),
                "EGL_CONTEXT_CLIENT_TYPE");
        if (clientType != Egl.EGL_OPENGL_ES_API() && clientType != Egl.EGL_OPENGL_API()) {
            throw new SyncNotSupportedException(BackendKind.OPENGL, "context " + EglNative.hex(producer)
                    + " is neither an OpenGL nor an OpenGL ES context (client type 0x"
                    + Integer.toHexString(clientType) + "): it has no GLsync objects");
        }
        int configId = EglNative.eglQueryContext(display, producer, Egl.EGL_CONFIG_ID(), "EGL_CONFIG_ID");
        MemorySegment config = Egl.EGL_NO_CONFIG_KHR();
        Arena arena = Arena.ofAuto();
        if (configId != 0) {
            MemorySegment query = arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_CONFIG_ID(), configId,
                    Egl.EGL_NONE());
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment n = arena.allocate(ValueLayout.JAVA_INT);
            if (Egl.eglChooseConfig(display, query, out, 1, n) == Egl.EGL_FALSE()) {
                throw EglNative.eglFailure("eglChooseConfig(EGL_CONFIG_ID " + configId + ")");
            }
            if (n.get(ValueLayout.JAVA_INT, 0) == 1) {
                config = out.get(ValueLayout.ADDRESS, 0);
            }
        }
        MemorySegment attribs;
        if (clientType == Egl.EGL_OPENGL_ES_API()) {
            int major = EglNative.eglQueryContext(display, producer, Egl.EGL_CONTEXT_CLIENT_VERSION(),
                    "EGL_CONTEXT_CLIENT_VERSION");
            attribs = arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_CONTEXT_MAJOR_VERSION(), Math.max(major, 2),
                    Egl.EGL_NONE());
        } else {
            attribs = arena.allocateFrom(ValueLayout.JAVA_INT, Egl.EGL_NONE());
        }
        return new ShareContexts(display, producer, clientType, config, attribs);
    }

    /** Number of contexts created so far (= the peak number of concurrent binds). */
    synchronized int created() {
        return all.size();
    }

    /**
     * Makes a context of the share group current on the calling thread until {@link Binding#close()},
     * which restores the thread's previous binding (context, display, draw and read surfaces, bound API).
     */
    Binding bind() {
        int previousApi = Egl.eglQueryAPI();
        boolean switchApi = previousApi != api;
        if (switchApi && Egl.eglBindAPI(api) == Egl.EGL_FALSE()) {
            throw EglNative.eglFailure("eglBindAPI(0x" + Integer.toHexString(api) + ")");
        }
        try {
            MemorySegment current = Egl.eglGetCurrentContext();
            if (current.equals(producer)) {
                return new Binding(null, null, null, null, null, true, switchApi ? previousApi : 0);
            }
            if (!current.equals(Egl.EGL_NO_CONTEXT()) && isOurs(current)) {
                return new Binding(null, null, null, null, null, false, switchApi ? previousApi : 0);
            }
            MemorySegment prevDisplay = null;
            MemorySegment prevDraw = null;
            MemorySegment prevRead = null;
            if (!current.equals(Egl.EGL_NO_CONTEXT())) {
                prevDisplay = Egl.eglGetCurrentDisplay();
                prevDraw = Egl.eglGetCurrentSurface(Egl.EGL_DRAW());
                prevRead = Egl.eglGetCurrentSurface(Egl.EGL_READ());
            }
            MemorySegment ctx = take();
            if (Egl.eglMakeCurrent(display, Egl.EGL_NO_SURFACE(), Egl.EGL_NO_SURFACE(), ctx) == Egl.EGL_FALSE()) {
                SyncException e = EglNative.eglFailure("eglMakeCurrent(a context shared with "
                        + EglNative.hex(producer) + ")");
                idle.offerFirst(ctx);
                throw e;
            }
            return new Binding(ctx, current, prevDisplay, prevDraw, prevRead, false, switchApi ? previousApi : 0);
        } catch (RuntimeException | Error e) {
            if (switchApi) {
                Egl.eglBindAPI(previousApi);
            }
            throw e;
        }
    }

    /**
     * Runs {@code action} with a context of the group bound ({@link #bind()}), on a thread that may make EGL calls
     * ({@link EglThreads}), and restores that thread's binding.
     */
    <T> T callBound(java.util.function.Function<Binding, T> action) {
        return EglThreads.run(() -> {
            try (Binding b = bind()) {
                return action.apply(b);
            }
        });
    }

    /** {@link #callBound} for an action without a result. */
    void runBound(Runnable action) {
        callBound(b -> {
            action.run();
            return null;
        });
    }

    private synchronized boolean isOurs(MemorySegment ctx) {
        return all.contains(ctx);
    }

    private MemorySegment take() {
        MemorySegment ctx = idle.pollFirst();
        if (ctx != null) {
            return ctx;
        }
        ctx = Egl.eglCreateContext(display, config, producer, attribs);
        if (ctx.equals(Egl.EGL_NO_CONTEXT())) {
            throw EglNative.eglFailure("eglCreateContext(share_context = " + EglNative.hex(producer) + ")");
        }
        synchronized (this) {
            all.add(ctx);
        }
        return ctx;
    }

    /** Destroys every pooled context. Only once no bind can happen any more. */
    synchronized void destroy() {
        for (MemorySegment ctx : all) {
            Egl.eglDestroyContext(display, ctx);
        }
        all.clear();
        idle.clear();
    }

    /** A context of the group current on this thread; {@link #close()} restores what was current before. */
    final class Binding implements AutoCloseable {
        private final MemorySegment pooled;
        private final MemorySegment prevContext;
        private final MemorySegment prevDisplay;
        private final MemorySegment prevDraw;
        private final MemorySegment prevRead;
        private final boolean onProducer;
        private final int restoreApi;

        private Binding(MemorySegment pooled, MemorySegment prevContext, MemorySegment prevDisplay,
                        MemorySegment prevDraw, MemorySegment prevRead, boolean onProducer, int restoreApi) {
            this.pooled = pooled;
            this.prevContext = prevContext;
            this.prevDisplay = prevDisplay;
            this.prevDraw = prevDraw;
            this.prevRead = prevRead;
            this.onProducer = onProducer;
            this.restoreApi = restoreApi;
        }

        /**
         * Whether the current context is the producer itself: only then may a client wait pass
         * {@code GL_SYNC_FLUSH_COMMANDS_BIT} (it flushes the <em>current</em> context, which must be the one
         * that created the fence to make progress).
         */
        boolean onProducer() {
            return onProducer;
        }

        @Override
        public void close() {
            try {
                if (pooled != null) {
                    restore();
                }
            } finally {
                if (restoreApi != 0) {
                    Egl.eglBindAPI(restoreApi);
                }
            }
        }

        private void restore() {
            boolean ok;
            if (prevContext.equals(Egl.EGL_NO_CONTEXT())) {
                ok = Egl.eglMakeCurrent(display, Egl.EGL_NO_SURFACE(), Egl.EGL_NO_SURFACE(),
                        Egl.EGL_NO_CONTEXT()) != Egl.EGL_FALSE();
            } else {
                ok = Egl.eglMakeCurrent(prevDisplay, prevDraw, prevRead, prevContext) != Egl.EGL_FALSE();
            }
            if (ok) {
                idle.offerFirst(pooled);
                return;
            }
            SyncException e = EglNative.eglFailure("eglMakeCurrent restoring the thread's previous context "
                    + EglNative.hex(prevContext));
            // never leave our context current: the pool may lend it to another thread
            if (Egl.eglMakeCurrent(display, Egl.EGL_NO_SURFACE(), Egl.EGL_NO_SURFACE(), Egl.EGL_NO_CONTEXT())
                    != Egl.EGL_FALSE()) {
                idle.offerFirst(pooled);
            }
            throw e;
        }
    }
}
