package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;

import java.time.Duration;

/**
 * Run by {@link MicrometerOptionalTest} in a child JVM without Micrometer's jars: reports whether Micrometer's
 * observation API is there, then waits through a built engine and the default engine.
 */
public final class MicrometerOptionalProbe {
    private MicrometerOptionalProbe() {
    }

    public static void main(String[] args) {
        try {
            Class.forName("io.micrometer.observation.ObservationRegistry");
            System.out.println("micrometer: present");
        } catch (ClassNotFoundException absent) {
            System.out.println("micrometer: (none)");
        }
        SyncEngine engine = GpuSync.builder().name("plain").build();
        try {
            for (SyncEngine e : new SyncEngine[] {engine, GpuSync.defaultEngine()}) {
                CpuTimeline timeline = new CpuTimeline();
                Thread signaller = Thread.ofPlatform().start(() -> {
                    while (timeline.pendingWaits() == 0) {
                        Thread.onSpinWait();
                    }
                    timeline.signal(1);
                });
                e.await(timeline.at(1), Duration.ofSeconds(10)).block();
                System.out.println(e.name() + ": " + e.pathFor(timeline.at(1).waiter()) + " completed");
                signaller.join();
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            engine.dispose();
        }
        System.out.println("done");
    }
}
