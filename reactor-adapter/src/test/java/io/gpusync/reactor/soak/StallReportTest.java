package io.gpusync.reactor.soak;

import io.gpusync.bindings.libc.Libc;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stall report names every thread inside a native binding call with its Java stack, virtual threads included,
 * which {@link Thread#getAllStackTraces()} leaves out (the test kit destroys Vulkan devices on one).
 */
class StallReportTest {

    @Test
    void aVirtualThreadInsideABindingCallIsReportedWithItsStack() throws Exception {
        int fd = Libc.eventfd(0, 0);
        assertThat(fd).isNotNegative();
        Thread stuck = Thread.ofVirtual().name("stuck-in-a-binding").start(() -> {
            try (Arena arena = Arena.ofConfined()) {
                Libc.eventfd_read(fd, arena.allocate(Long.BYTES)); // blocks until the counter is written
            }
        });
        String report;
        try {
            Thread.sleep(300); // into the read (a mounted virtual thread shows as RUNNABLE throughout)
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            StallReport.print(new PrintStream(out, true, StandardCharsets.UTF_8), "a test");
            report = out.toString(StandardCharsets.UTF_8);
        } finally {
            Libc.eventfd_write(fd, 1);
            stuck.join(10_000);
            Libc.close(fd);
        }
        assertThat(stuck.isAlive()).isFalse();
        assertThat(report).contains("SOAK STALL REPORT (a test)")
                .contains("\"stuck-in-a-binding\" virtual")
                .contains("io.gpusync.bindings.libc.Libc.eventfd_read");
    }
}
