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
        Path root = projectRoot();
        Path self = root.resolve("reactor-adapter/src/test/java/io/gpusync/reactor/ReadmePipelineExampleTest.java");
        List<String> lines = Files.readAllLines(self);
        int begin = lines.indexOf("        // --- README pipeline example: begin ---");
        int end = lines.indexOf("        // --- README pipeline example: end ---");
        String snippet = lines.subList(begin + 1, end).stream()
                .map(l -> l.length() >= 8 ? l.substring(8) : l.strip())
                .collect(Collectors.joining("\n"));
        // the README block starts with its imports (ReadmeJavaSnippetsTest compiles it as shown), then these lines
        assertThat(Files.readString(root.resolve("README.md"))).contains("\n\n" + snippet + "\n```");
    }

    /** The checkout's root: the parent of the module directory under Maven, the working directory elsewhere. */
    private static Path projectRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("reactor-adapter"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout (README.md, reactor-adapter/) above " + Path.of("").toAbsolutePath());
    }
}
