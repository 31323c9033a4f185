package io.gpusync.reactor;

import io.gpusync.ErrorKind;
import io.gpusync.SyncNotSupportedException;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Netty is optional: with no Netty, or with Netty 4.1 (Spring Boot 3), every wait path but EPOLL works — fd
 * waits then block on a pool thread — and only handing gpusync an event loop group fails, clearly. Child
 * JVMs run {@link NettyOptionalProbe} on this test's class path minus its Netty jars.
 */
class NettyOptionalTest {

    @Test
    void withNoNettyTheDefaultEngineWaitsOnCpuTimelinesAndOnFdsThroughBlockingThreads() throws Exception {
        Child run = runProbe(List.of());
        assertThat(run.exitCode).as(run.output).isZero();
        assertThat(run.output).contains("netty: (none)", "cpu: CALLBACK completed", "eventfd: BLOCKING completed", "done")
                .doesNotContain("NoClassDefFoundError");
    }

    @Test
    void withNetty41EveryPathButEpollWorksAndAnEventLoopGroupFailsNamingTheVersionAndTheFix() throws Exception {
        Path netty41 = Path.of(System.getProperty("gpusync.test.netty41.dir", "target/netty-4.1"));
        assumeTrue(Files.isDirectory(netty41), "the Netty 4.1 jars are copied to " + netty41
                + " by this module's pom (mvn verify); this run has no Maven build");
        List<Path> jars;
        try (Stream<Path> files = Files.list(netty41)) {
            // one jar per artifact (a build that prepends group ids may have left both spellings there)
            jars = files.filter(f -> f.getFileName().toString().endsWith(".jar"))
                    .collect(Collectors.toMap(f -> NETTY_JAR.matcher(f.getFileName().toString()).replaceFirst("netty-"),
                            f -> f, (a, b) -> a, java.util.TreeMap::new))
                    .values().stream().toList();
        }
        assertThat(jars).as("Netty 4.1 jars copied by the pom to " + netty41).hasSize(4);

        Child run = runProbe(jars, "group");
        assertThat(run.exitCode).as(run.output).isZero();
        assertThat(run.output).contains("netty: 4.1.", "cpu: CALLBACK completed", "eventfd: BLOCKING completed", "done")
                .doesNotContain("NoClassDefFoundError");
        String group = run.output.lines().filter(l -> l.startsWith("group: ")).findFirst().orElseThrow();
        System.out.println(group);
        assertThat(group).startsWith("group: SyncNotSupportedException (CONFIGURATION): ")
                .contains("Netty 4.1.", "Netty 4.2", "reactor-netty 1.3", "Spring Boot 4", "IoEventLoopGroup",
                        "BLOCKING");
    }

    @Test
    void aNetty42GroupThatDoesNotRunEpollIsRefusedClearly() {
        MultiThreadIoEventLoopGroup nio = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            assertThatThrownBy(() -> GpuSync.builder().eventLoopGroup(nio))
                    .isInstanceOf(SyncNotSupportedException.class)
                    .satisfies(e -> assertThat(((SyncNotSupportedException) e).kind()).isEqualTo(ErrorKind.CONFIGURATION))
                    .hasMessageContaining("EpollIoHandler")
                    .hasMessageContaining("netty-transport-native-epoll");
        } finally {
            nio.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
    }

    private record Child(int exitCode, String output) {
    }

    /** Netty's jars as Maven names them ({@code netty-…}) or with their group prepended ({@code io.netty.netty-…}). */
    private static final Pattern NETTY_JAR = Pattern.compile("(io\\.netty\\.)?netty-");

    /** A class path entry {@code dir/*} (as java's launcher takes it) stands for every jar in {@code dir}. */
    private static Stream<String> expandWildcard(String entry) {
        if (!entry.endsWith("*")) {
            return Stream.of(entry);
        }
        try (Stream<Path> files = Files.list(Path.of(entry.substring(0, entry.length() - 1)))) {
            return files.map(Path::toString).filter(f -> f.endsWith(".jar")).sorted().toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs the probe on this JVM's test class path without Netty, plus {@code extraJars}. */
    private static Child runProbe(List<Path> extraJars, String... args) throws IOException, InterruptedException {
        String testClassPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> entries = Arrays.stream(testClassPath.split(File.pathSeparator))
                .flatMap(NettyOptionalTest::expandWildcard)
                .filter(e -> !NETTY_JAR.matcher(Path.of(e).getFileName().toString()).lookingAt())
                .collect(Collectors.toCollection(ArrayList::new));
        assertThat(entries).as("the test class path").anyMatch(e -> e.contains("reactor-core"));
        extraJars.forEach(j -> entries.add(j.toString()));

        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xshare:auto",
                "-cp", String.join(File.pathSeparator, entries), NettyOptionalProbe.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        return new Child(p.exitValue(), output);
    }
}
