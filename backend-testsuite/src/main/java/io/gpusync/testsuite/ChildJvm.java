package io.gpusync.testsuite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tests' one launcher of child JVMs: for what must not happen in the test JVM itself (sticky CUDA faults
 * poison the process; a crash is the expected outcome; a native environment such as glibc's malloc checker must
 * be in place from the start). The child gets this JVM's {@code java}, class path and native-access flag, plus
 * the given options and environment; its output (stdout and stderr) goes to a file, so a chatty child never
 * blocks on a full pipe. A child still running after 120 s gets a thread dump into its output and is ended.
 */
public final class ChildJvm {
    private static final long LIMIT_SECONDS = 120;

    /** How a child ended: its exit status ({@code -1}: a crash gives the signal's 128 + n) and its output. */
    public record Result(int exitCode, String output) {
    }

    private ChildJvm() {
    }

    /** glibc's malloc checker, preloaded into a checked child. */
    public static final Path MALLOC_DEBUG = Path.of("/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0");

    /**
     * The JVM options a child under the malloc checker needs to take all of its native memory from the checker.
     * Netty 4.2 on JDK 24+ (its Unsafe use off by default) links {@code malloc} and {@code free} through
     * {@code Linker.nativeLinker().defaultLookup()}, whose scope is libc and its own dependencies, not the preloaded
     * checker: its buffers (an epoll loop's event array among them) then come from libc's own allocator, which grows
     * and trims the same {@code sbrk} heap as the checker with nothing between the two, so each overwrites the other's
     * chunks ("malloc: top chunk is corrupt"). With Unsafe allowed, Netty allocates through the JVM, whose
     * {@code malloc} is the checker's. {@link #run} adds them to every child whose environment preloads the checker.
     */
    public static final List<String> MALLOC_CHECKED_JVM_OPTIONS =
            List.of("-Dio.netty.noUnsafe=false", "--sun-misc-unsafe-memory-access=allow");

    /**
     * The environment that runs a child under glibc's malloc checker, freed memory filled with {@code perturb}
     * (1-255), so a use after free reads garbage at once; empty where glibc's debug library is missing. The JVM's
     * libjsig comes first, so drivers that install signal handlers chain to the JVM's. A child not started by
     * {@link #run} needs {@link #MALLOC_CHECKED_JVM_OPTIONS} too. Where a driver of this machine bypasses the
     * checker ({@link #checkerBypass()}), the child gets glibc's own allocator instead, with the same
     * {@code perturb} and glibc's always-on consistency checks: the checker beside such a driver corrupts the heap
     * by itself.
     */
    public static Map<String, String> mallocChecked(int perturb) {
        return mallocChecked(perturb, checkerBypass(System.getenv(), DRIVER_MANIFEST_DIRS));
    }

    static Map<String, String> mallocChecked(int perturb, Optional<String> bypass) {
        Path debug = MALLOC_DEBUG;
        if (!Files.exists(debug)) {
            return Map.of();
        }
        String jsig = Path.of(System.getProperty("java.home"), "lib", "libjsig.so").toString();
        if (bypass.isPresent()) {
            return Map.of("LD_PRELOAD", jsig, "MALLOC_PERTURB_", Integer.toString(perturb));
        }
        return Map.of("LD_PRELOAD", jsig + ":" + debug, "MALLOC_CHECK_", "3",
                "MALLOC_PERTURB_", Integer.toString(perturb));
    }

    /**
     * The driver of this machine that takes its allocator from libc itself, past a preloaded malloc checker, as
     * {@code "manifest -> library"}; empty if none. NVIDIA's Vulkan ICD and EGL vendor library load
     * {@code libnvidia-glcore} and {@code libnvidia-eglcore}, whose {@code malloc}, {@code free}, {@code realloc}
     * and aligned allocations bind to {@code libc.so.6} ({@code LD_DEBUG=bindings} shows it). Beside the checker,
     * the two allocators then grow one {@code sbrk} heap and overwrite each other's chunks ("malloc: top chunk is
     * corrupt"). Read from the loaders' manifests: the files the environment names, else the standard folders.
     */
    public static Optional<String> checkerBypass() {
        return checkerBypass(System.getenv(), DRIVER_MANIFEST_DIRS);
    }

    /** Where the Vulkan loader and glvnd look for driver manifests when the environment names none. */
    static final Map<String, List<Path>> DRIVER_MANIFEST_DIRS = Map.of(
            "VK_DRIVER_FILES", List.of(Path.of("/usr/share/vulkan/icd.d"), Path.of("/usr/local/share/vulkan/icd.d"),
                    Path.of("/etc/vulkan/icd.d")),
            "__EGL_VENDOR_LIBRARY_FILENAMES", List.of(Path.of("/usr/share/glvnd/egl_vendor.d"),
                    Path.of("/etc/glvnd/egl_vendor.d")));

    private static final Pattern LIBRARY_PATH = Pattern.compile("\"library_path\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern BYPASSING_LIBRARY = Pattern.compile("(?i)nvidia");

    static Optional<String> checkerBypass(Map<String, String> env, Map<String, List<Path>> defaultDirs) {
        List<Path> manifests = new ArrayList<>();
        for (Map.Entry<String, List<Path>> kind : defaultDirs.entrySet()) {
            String named = env.getOrDefault(kind.getKey(),
                    kind.getKey().startsWith("VK_") ? env.getOrDefault("VK_ICD_FILENAMES", "") : "");
            if (!named.isEmpty()) {
                Stream.of(named.split(":")).filter(f -> !f.isEmpty()).map(Path::of).forEach(manifests::add);
                continue;
            }
            for (Path dir : kind.getValue()) {
                try (Stream<Path> files = Files.list(dir)) {
                    files.filter(f -> f.toString().endsWith(".json")).sorted().forEach(manifests::add);
                } catch (IOException absent) {
                    // no such folder on this machine
                }
            }
        }
        for (Path manifest : manifests) {
            try {
                Matcher m = LIBRARY_PATH.matcher(Files.readString(manifest));
                if (m.find() && BYPASSING_LIBRARY.matcher(Path.of(m.group(1)).getFileName().toString()).find()) {
                    return Optional.of(manifest + " -> " + m.group(1));
                }
            } catch (IOException unreadable) {
                // a manifest the loader cannot read either
            }
        }
        return Optional.empty();
    }

    /**
     * Runs {@code main} and returns its output once it has exited with status 0; fails the test with that output
     * otherwise.
     */
    public static String runOk(Class<?> main, List<String> jvmOptions, Map<String, String> environment,
                               String... args) throws IOException, InterruptedException {
        Result r = run(main, jvmOptions, environment, args);
        assertThat(r.exitCode()).as("child exit status; its output:%n%s", r.output()).isZero();
        return r.output();
    }

    /** {@link #runOk(Class, List, Map, String...)} with this JVM's environment. */
    public static String runOk(Class<?> main, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        return runOk(main, jvmOptions, Map.of(), args);
    }

    /**
     * Runs {@code main} to its end, whatever its exit status, and prints its output. {@code environment} is added
     * to this JVM's environment (an entry replaces the inherited one).
     */
    public static Result run(Class<?> main, List<String> jvmOptions, Map<String, String> environment,
                             String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        if (environment.getOrDefault("LD_PRELOAD", "").contains(MALLOC_DEBUG.getFileName().toString())) {
            cmd.addAll(MALLOC_CHECKED_JVM_OPTIONS);
        }
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        Path log = Files.createTempFile("gpusync-child-", ".log");
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(log.toFile());
            builder.environment().putAll(environment);
            Process child = builder.start();
            boolean exited = child.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS);
            if (!exited) { // a thread dump into its output, then end it
                new ProcessBuilder("kill", "-3", Long.toString(child.pid())).start().waitFor(5, TimeUnit.SECONDS);
                Thread.sleep(2_000);
                child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8); // hs_err may not be UTF-8
            System.out.println(out);
            assertThat(exited).as("child finished within %d s; output:%n%s", LIMIT_SECONDS, out).isTrue();
            return new Result(child.exitValue(), out);
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
