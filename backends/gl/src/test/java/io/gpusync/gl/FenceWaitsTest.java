package io.gpusync.gl;

import io.gpusync.SyncPoint;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.internal.CStrings;
import io.gpusync.test.gl.EglProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * On Mesa no gpusync thread sleeps inside the driver's fence wait: Mesa's CPU rasterisers keep each fence in a glibc
 * condition variable, whose lost wake-ups (glibc before 2.41) stalled llvmpipe's rasteriser under the soak. Fences
 * are probed with zero-timeout queries instead; reusable syncs, whose status Mesa reads through a timed wait anyway,
 * keep their driver waits, and so do fences of other vendors' drivers (NVIDIA's).
 */
class FenceWaitsTest {
    private static final int FENCES = 40;
    private static EglProducer producer;
    private static boolean mesa;

    @BeforeAll
    static void open() {
        producer = GlTestSupport.producer(1024, 1024); // larger surfaces make each fence take longer
        mesa = EglThreads.run(() -> CStrings.read(Egl.eglQueryString(producer.display(), Egl.EGL_VENDOR())))
                .contains("Mesa");
    }

    @AfterAll
    static void close() {
        if (producer != null) {
            producer.close();
        }
    }

    @Test
    void fencesAreProbedOnMesaAndWaitedOnInTheDriverElsewhereAndReusableSyncsAlwaysWaitInTheDriver() {
        FenceWaits expected = mesa ? FenceWaits.PROBED : FenceWaits.IN_DRIVER;
        SyncPoint.OpenGLSync eglFence = producer.eglFence(1);
        try (EglReusableSync reusable = producer.reusableSync()) {
            assertThat(((EglSyncWaiter) eglFence.waiter()).fenceWaits()).as("an EGL fence sync").isEqualTo(expected);
            assertThat(((EglSyncWaiter) reusable.point().waiter()).fenceWaits()).as("a reusable sync").isNull();
            assertThat(producer.shareGroup().contexts().fenceWaits).as("the GLsyncs of a share group")
                    .isEqualTo(expected);
            reusable.point().waiter().close();
        } finally {
            eglFence.waiter().close();
        }
    }

    @Test
    void thePropertyChoosesDriverWaitsOrProbesForEveryDisplay() {
        EglThreads.run(() -> {
            assertThat(FenceWaits.of(producer.display(), "driver")).isEqualTo(FenceWaits.IN_DRIVER);
            assertThat(FenceWaits.of(producer.display(), "PROBE")).isEqualTo(FenceWaits.PROBED);
            FenceWaits auto = mesa ? FenceWaits.PROBED : FenceWaits.IN_DRIVER;
            assertThat(FenceWaits.of(producer.display(), "auto")).isEqualTo(auto);
            assertThat(FenceWaits.of(producer.display(), "anything else")).as("auto").isEqualTo(auto);
            return null;
        });
    }

    @Test
    void anEglFenceWaitOnMesaNeverSleepsInsideEglClientWaitSync() {
        assumeTrue(mesa, "not a Mesa display: its fences are waited on in the driver");
        assertHardlyEverInTheDriver(producer::eglFence, "PFNEGLCLIENTWAITSYNCKHRPROC", "invoke");
    }

    @Test
    void aGlSyncWaitOnMesaNeverSleepsInsideGlClientWaitSync() {
        assumeTrue(mesa, "not a Mesa display: its fences are waited on in the driver");
        assertHardlyEverInTheDriver(producer::fence, "io.gpusync.bindings.gles.Gles", "glClientWaitSync");
    }

    /**
     * Waits (forever) on {@link #FENCES} fences of 20 clears each, one after another, while a sampler reads every
     * thread's stack every millisecond: a sleeping driver wait would be on a stack in nearly every sample, a
     * zero-timeout query in hardly any.
     */
    private static void assertHardlyEverInTheDriver(IntFunction<SyncPoint.OpenGLSync> fences, String cls,
                                                    String method) {
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger samples = new AtomicInteger();
        AtomicInteger inDriver = new AtomicInteger();
        Thread sampler = Thread.ofPlatform().daemon().start(() -> {
            while (!done.get()) {
                boolean in = Thread.getAllStackTraces().values().stream()
                        .anyMatch(stack -> Arrays.stream(stack)
                                .anyMatch(f -> f.getClassName().endsWith(cls) && f.getMethodName().equals(method)));
                samples.incrementAndGet();
                if (in) {
                    inDriver.incrementAndGet();
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try {
            for (int i = 0; i < FENCES; i++) {
                SyncPoint.OpenGLSync fence = fences.apply(20);
                try {
                    fence.await(SyncPoint.FOREVER);
                    assertThat(fence.isSignaled()).isTrue();
                } finally {
                    fence.waiter().close();
                }
            }
        } finally {
            done.set(true);
        }
        try {
            sampler.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(samples.get()).as("stack samples").isGreaterThanOrEqualTo(FENCES);
        assertThat(inDriver.get()).as("samples with a thread inside %s.%s, of %d", cls, method, samples.get())
                .isLessThanOrEqualTo(samples.get() / 5);
    }
}
