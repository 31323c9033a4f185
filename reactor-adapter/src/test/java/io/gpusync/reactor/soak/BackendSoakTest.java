package io.gpusync.reactor.soak;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.gpusync.testsuite.ChildJvm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every backend of this machine at once, in one JVM under glibc's malloc checker, for
 * {@code -Dgpusync.soak.seconds} (45 by default): no crash, every wait ends exactly once within its bound, and
 * fds, gpusync's threads and resident memory come back to their baseline ({@link BackendSoak} checks all of
 * it and prints the figures; resident memory from where the drivers' own has settled: {@link RssWindow}).
 * Where a driver bypasses the checker (NVIDIA's: {@link ChildJvm#checkerBypass()}), the child runs on glibc's
 * own allocator with freed memory perturbed, and says so. A run with 50 problems ends there, with every thread's
 * stack, instead of running out its time behind a stuck driver. A longer run:
 * {@code mvn -B -pl reactor-adapter -am verify -Dtest=BackendSoakTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dgpusync.soak.seconds=120}.
 */
class BackendSoakTest {
    /**
     * NVIDIA's drivers (those that bypass the checker) grow the process's RSS by hundreds of MiB over their first
     * minute or so of this workload, so a short run there leaves RSS to the long soaks (results/soak.md).
     */
    private static final long NVIDIA_RSS_SETTLES_AFTER_S = 90;

    @Test
    void everyBackendAtOnceUnderTheMallocCheckerCrashesNothingAndLosesNoWait() throws Exception {
        long seconds = Long.getLong("gpusync.soak.seconds", 45);
        Map<String, String> checked = ChildJvm.mallocChecked(1 + (int) (System.nanoTime() & 0xfe));
        ChildJvm.checkerBypass().ifPresent(b -> System.out.println(
                "SOAK on glibc's own allocator, not the malloc checker, which this driver bypasses: " + b));
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"));
        if (!checked.isEmpty()) {
            cmd.addAll(ChildJvm.MALLOC_CHECKED_JVM_OPTIONS);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
                BackendSoak.class.getName(), "--seconds", Long.toString(seconds), "--give-up-after", "50"));
        if (ChildJvm.checkerBypass().isPresent()) {
            cmd.addAll(List.of("--rss-settles-after", Long.toString(NVIDIA_RSS_SETTLES_AFTER_S)));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LD_PRELOAD", Path.of(System.getProperty("java.home"), "lib", "libjsig.so").toString());
        pb.environment().putAll(checked);
        Process child = pb.start();
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        Thread reader = Thread.ofPlatform().daemon().start(() -> copy(child.getInputStream(), output));
        boolean exited = child.waitFor(seconds + 180, TimeUnit.SECONDS);
        if (!exited) { // a thread dump into its output, then end it
            new ProcessBuilder("kill", "-3", Long.toString(child.pid())).start().waitFor(5, TimeUnit.SECONDS);
            Thread.sleep(2_000);
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(10_000);
        String out = output.toString(StandardCharsets.UTF_8);
        System.out.println(out.lines().filter(l -> !l.startsWith("\t")).limit(400)
                .reduce("", (a, b) -> a + b + "\n"));
        assertThat(exited).as("the soak ended; output:%n%s", out).isTrue();
        assertThat(child.exitValue()).as("the soak's exit status (134: abort, 139: SIGSEGV); output:%n%s", out)
                .isZero();
        assertThat(out).contains("SOAK PASS");
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try {
            in.transferTo(out);
        } catch (java.io.IOException ignored) {
            // the child ended
        }
    }
}
