package io.gpusync.reactor;

import io.gpusync.SyncPoint;
import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's "await a SyncPoint in a Flux pipeline" example, compiled and run as written there. */
class ReadmeExampleTest {

    @Test
    void theReadmePipelineRuns() {
        // --- README example: begin ---
        CpuTimeline queue = new CpuTimeline();              // stands in for a GPU queue's timeline

        List<String> results = Flux.range(1, 5)
                .concatMap(batch -> {
                    SyncPoint done = queue.at(batch);          // the value the "kernel" signals when done
                    Schedulers.parallel().schedule(() -> queue.signal(batch), 2, TimeUnit.MILLISECONDS);
                    return GpuSync.await(done, Duration.ofSeconds(1))   // no thread blocks while waiting
                            .thenReturn("batch " + batch + " ready");
                })
                .collectList()
                .block();
        // --- README example: end ---

        assertThat(results).containsExactly("batch 1 ready", "batch 2 ready", "batch 3 ready", "batch 4 ready",
                "batch 5 ready");
    }
}
