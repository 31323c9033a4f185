package io.gpusync.reactor;

import io.gpusync.cpu.CpuTimeline;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's "Pipelines" example, compiled and run as written there; the test also checks that the README
 * shows exactly the lines between the markers below.
 */
class ReadmePipelineExampleTest {

    @Test
    void theReadmePipelineExampleRuns() {
        // --- README pipeline example: begin ---
        CpuTimeline queue = new CpuTimeline();              // stands in for a GPU queue's timeline

        List<Integer> done = Flux.range(1, 100)
                .map(batch -> {                             // "submit" a kernel that signals `batch` when done
                    Schedulers.single().schedule(() -> queue.signal(batch), 1, TimeUnit.MILLISECONDS);
                    return batch;
                })
                .transform(GpuSync.awaitEach(batch -> queue.at(batch), 16, Duration.ofSeconds(1)))
                .collectList()                              // ≤ 16 submitted and not yet done; in order
                .block();
        // --- README pipeline example: end ---

        assertThat(done).isEqualTo(IntStream.rangeClosed(1, 100).boxed().toList());
    }

    @Test
    void theReadmeShowsExactlyThisExample() throws IOException {
        Path self = Path.of("src/test/java/io/gpusync/reactor/ReadmePipelineExampleTest.java");
        List<String> lines = Files.readAllLines(self);
        int begin = lines.indexOf("        // --- README pipeline example: begin ---");
        int end = lines.indexOf("        // --- README pipeline example: end ---");
        String snippet = lines.subList(begin + 1, end).stream()
                .map(l -> l.length() >= 8 ? l.substring(8) : l.strip())
                .collect(Collectors.joining("\n"));
        assertThat(Files.readString(Path.of("../README.md"))).contains("```java\n" + snippet + "\n```");
    }
}
