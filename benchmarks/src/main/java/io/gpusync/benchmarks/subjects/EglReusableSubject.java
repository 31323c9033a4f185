package io.gpusync.benchmarks.subjects;

import io.gpusync.SyncWaiter;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.gl.EglReusableSync;

import java.util.ArrayList;
import java.util.List;

/**
 * One host-signalled EGL sync per point ({@code EGL_KHR_reusable_sync} on Mesa's surfaceless display, through
 * {@link EglProducer#reusableSync()}), signalled by {@code eglSignalSyncKHR(EGL_SIGNALED_KHR)}. EGL offers
 * only a blocking client wait, so the engine serves these by BLOCKING (a pool thread per wait in progress,
 * in slices). One producer shared by all streams, opened on first use.
 */
public final class EglReusableSubject implements Subject {
    private static EglProducer producer;
    private static String unavailable;

    private static synchronized EglProducer producer() {
        if (producer == null) {
            producer = EglProducer.openSurfaceless();
        }
        return producer;
    }

    @Override
    public String name() {
        return "egl-reusable";
    }

    @Override
    public String description() {
        return "one EGL reusable sync per point (EGL_KHR_reusable_sync, surfaceless Mesa display), signalled by "
                + "eglSignalSyncKHR(EGL_SIGNALED_KHR); the engine serves them by BLOCKING";
    }

    @Override
    public String unavailableReason() {
        synchronized (EglReusableSubject.class) {
            if (producer == null && unavailable == null) {
                try {
                    producer().reusableSync().close(); // the display must offer EGL_KHR_reusable_sync too
                } catch (RuntimeException | LinkageError e) {
                    unavailable = "no EGL reusable syncs here: " + e.getMessage();
                }
            }
            return unavailable;
        }
    }

    @Override
    public Stream newStream() {
        return new SyncStream(producer());
    }

    private static final class SyncStream implements Stream {
        private final EglProducer producer;
        private final List<EglReusableSync> syncs = new ArrayList<>();
        private final List<SyncWaiter> waiters = new ArrayList<>();

        SyncStream(EglProducer producer) {
            this.producer = producer;
        }

        @Override
        public Point next() {
            EglReusableSync sync = producer.reusableSync();
            SyncWaiter waiter = sync.point().waiter();
            synchronized (this) {
                syncs.add(sync);
                waiters.add(waiter);
            }
            return new Point() {
                @Override
                public SyncWaiter waiter() {
                    return waiter;
                }

                @Override
                public void signal() {
                    sync.signal(); // signalling a signalled reusable sync again is allowed (no-op)
                }

                @Override
                public void reset() {
                    sync.unsignal();
                }
            };
        }

        @Override
        public synchronized void signalAll() {
            syncs.forEach(EglReusableSync::signal);
        }

        @Override
        public long registrations() {
            return -1;
        }

        @Override
        public synchronized void close() {
            // signalled first (a blocking wait still in progress returns), then destroyed once both holds are dropped
            syncs.forEach(EglReusableSync::signal);
            waiters.forEach(SyncWaiter::close);
            syncs.forEach(EglReusableSync::close);
            waiters.clear();
            syncs.clear();
        }
    }
}
