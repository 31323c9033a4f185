package io.gpusync.reactor.soak;

import io.gpusync.linux.EventFd;
import io.gpusync.reactor.GpuSync;
import io.gpusync.reactor.SyncEngine;
import io.gpusync.testsuite.ChildJvm;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A child JVM under glibc's malloc checker takes all of its native memory from the checker. Found in the soak of
 * every backend (1 to 2 starts in 20 died with "malloc: top chunk is corrupt", before any driver was loaded): Netty
 * 4.2 on JDK 25 linked {@code malloc} and {@code free} through the FFM default lookup, which is libc's own allocator
 * and not the preloaded checker, and the two allocators shared one {@code sbrk} heap. The dynamic linker's own
 * record of every binding ({@code LD_DEBUG=bindings}) shows which allocator each library's {@code malloc} reaches.
 */
class MallocCheckedChildTest {
    /** A binding of an allocator symbol: the file whose reference it is, the file that serves it, the symbol. */
    private static final Pattern BINDING = Pattern.compile(
            "binding file (\\S+) \\[\\d+\\] to (\\S+) \\[\\d+\\]: normal symbol `(malloc|free|calloc|realloc)'");

    @Test
    void anEngineWithNettyLoopsUnderTheMallocCheckerTakesEveryMallocFromTheChecker() throws Exception {
        assumeTrue(Files.isRegularFile(ChildJvm.MALLOC_DEBUG), "glibc's malloc checker is not installed");
        assumeTrue(ChildJvm.checkerBypass().isEmpty(), () -> "checked children run on glibc's own allocator here: "
                + ChildJvm.checkerBypass().orElseThrow());
        Path dir = Files.createTempDirectory("gpusync-ld-bindings");
        try {
            Map<String, String> env = new HashMap<>(ChildJvm.mallocChecked(141));
            env.put("LD_DEBUG", "bindings");
            env.put("LD_DEBUG_OUTPUT", dir.resolve("ld").toString());
            String out = ChildJvm.runOk(EngineOnNettyLoops.class, List.of("-Xmx128m"), env);
            assertThat(out).contains("AWAITED ON A NETTY LOOP");

            List<String> bypasses = allocatorBindings(dir).stream()
                    .filter(b -> b[1].endsWith("/libc.so.6") && !b[0].contains("libc_malloc_debug"))
                    .map(b -> b[0] + " -> " + b[1] + " " + b[2]).distinct().toList();
            assertThat(allocatorBindings(dir)).as("bindings of malloc and free seen").isNotEmpty();
            assertThat(bypasses).as("allocator symbols bound past the checker, to libc's own allocator").isEmpty();
        } finally {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private static List<String[]> allocatorBindings(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.flatMap(f -> {
                try {
                    return Files.readAllLines(f).stream();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).map(BINDING::matcher).filter(Matcher::find)
                    .map(m -> new String[] {m.group(1), m.group(2), m.group(3)}).toList();
        }
    }

    /** The child: an engine on Netty epoll loops (whose event arrays Netty allocates) awaits an eventfd. */
    public static final class EngineOnNettyLoops {
        public static void main(String[] args) {
            SyncEngine engine = GpuSync.builder().name("malloc-checked").build();
            try (EventFd fd = EventFd.create()) {
                Thread.ofPlatform().start(() -> { // after the wait is on the loop
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    fd.signal();
                });
                engine.await(fd.point(), Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
                System.out.println("AWAITED ON A NETTY LOOP");
            } finally {
                engine.dispose();
            }
        }
    }
}
