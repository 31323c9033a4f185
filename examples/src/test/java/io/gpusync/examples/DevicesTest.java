package io.gpusync.examples;

import io.gpusync.SyncPoint;
import io.gpusync.examples.device.Device;
import io.gpusync.examples.device.DeviceOptions;
import io.gpusync.examples.device.Devices;
import io.gpusync.examples.device.KernelModel;
import io.gpusync.examples.device.SimulatedDevice;
import io.gpusync.examples.device.Work;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.netty.http.client.HttpClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DevicesTest {

    @Test
    void automaticDiscoveryOpensSomethingAndSaysWhyItSkippedTheBackendsBefore() {
        Devices.Discovery d = Devices.open("auto", DeviceOptions.DEFAULT);
        try (Device device = d.device()) {
            int index = Devices.ORDER.indexOf(device.backend());
            assertThat(index).isNotNegative();
            assertThat(d.notes()).hasSize(index);
            for (int i = 0; i < index; i++) {
                assertThat(d.notes().get(i)).startsWith(Devices.ORDER.get(i) + ": ");
            }
        }
    }

    @Test
    void cpuByNameIsTheSimulatedDeviceAndUnknownNamesAreRejected() {
        try (Device device = Devices.open("cpu", DeviceOptions.DEFAULT).device()) {
            assertThat(device).isInstanceOf(SimulatedDevice.class);
            assertThat(device.description()).contains("4 in-order queues").contains("median 200");
        }
        assertThatThrownBy(() -> Devices.open("metal", DeviceOptions.DEFAULT)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anInOrderQueueCompletesInSubmissionOrderWhateverTheKernelDurations() {
        SyncEngine engine = GpuSync.builder().name("order").build();
        try (SimulatedDevice device = new SimulatedDevice(KernelModel.DEFAULT, 1)) {
            SplittableRandom random = new SplittableRandom(42);
            List<Integer> done = Collections.synchronizedList(new ArrayList<>());
            List<SyncPoint> points = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                // wildly different durations: a later short kernel still finishes after an earlier long one
                points.add(device.submit(new Work(1, Optional.of(Duration.ofNanos(random.nextLong(1, 2_000_000))))));
            }
            Flux.range(0, points.size())
                    .flatMap(i -> engine.await(points.get(i), Duration.ofSeconds(30)).doOnSuccess(v -> done.add(i)), 256)
                    .blockLast(Duration.ofSeconds(60));
            assertThat(done).hasSize(200).isSorted();
        } finally {
            engine.dispose();
        }
    }

    @Test
    void closingTheDeviceFailsWhatIsStillPending() {
        SyncEngine engine = GpuSync.builder().name("close").build();
        try {
            SimulatedDevice device = new SimulatedDevice(KernelModel.fixed(Duration.ofSeconds(60)), 1);
            SyncPoint point = device.submit(Work.DEFAULT);
            var result = engine.await(point, Duration.ofSeconds(60)).toFuture();
            device.close();
            assertThat(result).failsWithin(Duration.ofSeconds(10));
            assertThat(engine.pendingWaits()).isZero();
        } finally {
            engine.dispose();
        }
    }

    /**
     * The demo's D3D12 device queues each unit's Signal on a fence whose previous Signal has landed (vkd3d 1.2 can
     * apply two pending Signals of one fence in the wrong order, stalling the request of the higher value), and every
     * unit of a burst completes.
     */
    @Test
    void theD3D12DeviceNeverQueuesASignalOnAFenceWhosePreviousSignalIsPending() {
        Device device;
        try {
            device = Devices.open("d3d12", DeviceOptions.DEFAULT).device();
        } catch (IllegalStateException notHere) {
            Assumptions.abort(notHere.getMessage());
            return;
        }
        try (device) {
            Map<Long, Long> lastOnFence = new HashMap<>();
            for (int burst = 0; burst < 100; burst++) {
                List<SyncPoint> points = new ArrayList<>();
                for (int k = 0; k < 32; k++) {
                    SyncPoint.D3D12 point = (SyncPoint.D3D12) device.submit(Work.DEFAULT);
                    Long previous = lastOnFence.put(point.fence().address(), point.value());
                    if (previous != null) {
                        SyncPoint before = point.withValue(previous);
                        try {
                            assertThat(before.isSignaled()).as("%s had reached %d", point.fence(), previous).isTrue();
                        } finally {
                            before.waiter().close();
                        }
                    }
                    points.add(point);
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                for (SyncPoint p : points) {
                    while (!p.isSignaled()) {
                        assertThat(System.nanoTime() - deadline).as("%s done", p).isNegative();
                        Thread.onSpinWait();
                    }
                }
            }
        }
    }

    /** The real backends this machine has (PoCL, lavapipe on CI; the H200's drivers there) serve requests. */
    @ParameterizedTest
    @ValueSource(strings = {"opencl", "vulkan", "cuda", "d3d12"})
    void aRequestThroughEachAvailableRealBackend(String backend) {
        Device device;
        try {
            device = Devices.open(backend, DeviceOptions.DEFAULT).device();
        } catch (IllegalStateException notHere) {
            Assumptions.abort(notHere.getMessage());
            return;
        }
        try (device; DemoServer server = DemoServer.start(device, DemoServer.Options.loopback().withDefaultTimeout(Duration.ofSeconds(30)))) {
            HttpClient client = HttpClient.create().baseUrl(server.baseUrl());
            List<String> bodies = Flux.range(0, 20)
                    .flatMap(i -> client.get().uri("/work").responseSingle((res, body) -> body.asString()
                            .map(b -> res.status().code() + " " + b)), 20)
                    .collectList().block(Duration.ofSeconds(60));
            assertThat(bodies).hasSize(20).allSatisfy(b -> assertThat(b).startsWith("200 ").contains("\"backend\":\"" + backend + "\""));
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (server.engine().pendingWaits() > 0 && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            assertThat(server.engine().pendingWaits()).isZero();
            // every unit answered: the device's queue holds nothing unfinished (what /health's stuck check reads)
            assertThat(device.oldestUnfinishedSubmission()).isEmpty();
        }
    }

    @Test
    void theSimulatedDeviceReportsItsOldestUnfinishedWorkUntilItFinishes() throws InterruptedException {
        try (SimulatedDevice device = new SimulatedDevice(KernelModel.fixed(Duration.ofMillis(1)), 2)) {
            assertThat(device.oldestUnfinishedSubmission()).isEmpty();
            long before = System.nanoTime();
            SyncPoint slow = device.submit(new Work(1, Optional.of(Duration.ofMillis(300))));
            device.submit(new Work(1, Optional.of(Duration.ofMillis(1)))); // the other queue: done at once

            assertThat(device.oldestUnfinishedSubmission()).isPresent();
            assertThat(device.oldestUnfinishedSubmission().getAsLong() - before).isNotNegative(); // the slow unit
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!slow.waiter().isSignaled() && System.nanoTime() - deadline < 0) {
                Thread.sleep(5);
            }
            assertThat(device.oldestUnfinishedSubmission()).isEmpty();
        }
    }
}
