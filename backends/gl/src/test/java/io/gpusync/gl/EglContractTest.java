package io.gpusync.gl;

import io.gpusync.SyncWaiter;
import io.gpusync.testsuite.SyncWaiterContract;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.egl.PFNEGLSIGNALSYNCKHRPROC;
import io.gpusync.kit.NativeAnchor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import io.gpusync.test.gl.EglProducer;

/**
 * The backend contract on Mesa's surfaceless EGL (llvmpipe): host-signalled reusable EGL syncs, owned by
 * their points. The signal is made on the raw handle, so it still works once the producer object has been
 * closed; it holds the sync's anchor for the call ({@link SyncWaiterContract.OnceSubject#signalledObject()}), because the wait it
 * ends may release the sync at once and Mesa's {@code eglSignalSyncKHR} still writes to the sync after waking
 * the waiters.
 */
class EglContractTest {
    private static EglProducer producer;

    @BeforeAll
    static void open() {
        producer = GlTestSupport.producer();
    }

    @AfterAll
    static void close() {
        if (producer != null) {
            producer.close();
        }
    }

    @Nested
    class ReusableSync extends SyncWaiterContract {
        @Override
        protected Subject newSubject() {
            EglReusableSync sync = producer.reusableSync();
            return new OnceSubject() {
                @Override
                public SyncWaiter waiter() {
                    return sync.point().waiter();
                }

                @Override
                protected void doSignal() {
                    if (PFNEGLSIGNALSYNCKHRPROC.invoke(EglNative.Khr.SIGNAL_SYNC, producer.display(), sync.handle(),
                            Egl.EGL_SIGNALED_KHR()) == Egl.EGL_FALSE()) {
                        throw EglNative.eglFailure("eglSignalSyncKHR");
                    }
                }

                @Override
                protected NativeAnchor signalledObject() {
                    return ((EglSyncWaiter) sync.point().waiter()).anchor();
                }

                @Override
                public void dropProducerHolds() {
                    sync.close();
                }

                @Override
                public boolean released() {
                    return ((EglSyncWaiter) sync.point().waiter()).anchor().isReleased();
                }

                @Override
                public void close() {
                    sync.close();
                    sync.point().waiter().close();
                }
            };
        }
    }
}
