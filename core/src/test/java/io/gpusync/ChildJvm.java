package io.gpusync;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Test support: runs a {@code main} class in a child JVM, for scenarios that can end the process (a driver that aborts,
 * a sticky CUDA fault). The child gets this JVM's {@code java}, class path and environment (the build's
 * {@code LD_PRELOAD} of {@code libjsig.so} and {@code VK_DRIVER_FILES} included), plus
 * {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * Runs {@code main} with {@code jvmOptions} and {@code args} and returns its output (stdout and stderr) once it has
     * exited with status 0. A child still running after 120 s gets a thread dump into its output and is ended; the
     * test then fails with that output, as it does for a non-zero status (SIGABRT: 134).
     */
    public static String run(Class<?> main, List<String> jvmOptions, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        boolean exited = child.waitFor(120, TimeUnit.SECONDS);
        if (!exited) { // a thread dump into its output, then end it: its output ends with it, and is read below
            new ProcessBuilder("kill", "-3", Long.toString(child.pid())).start().waitFor(5, TimeUnit.SECONDS);
            Thread.sleep(2_000);
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        System.out.println(out);
        assertThat(exited).as("child finished; output:%n%s", out).isTrue();
        assertThat(child.exitValue()).as("child's exit status; output:%n%s", out).isZero();
        return out;
    }
}
