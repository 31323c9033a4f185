package io.gpusync.internal;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JVM that denies native access ({@code --illegal-native-access=deny} without {@code --enable-native-access})
 * gets a CONFIGURATION error naming both flag forms — never "the driver is not installed" — and the same
 * program works once the class-path flag is given. Child JVMs run {@link NativeAccessProbe}.
 */
class NativeAccessDiagnosisTest {

    @Test
    void deniedNativeAccessIsAConfigurationErrorThatNamesBothFlags() throws Exception {
        String out = runProbe("--illegal-native-access=deny");
        assertThat(out).contains("cpu: ok"); // pure-Java waits need no native access
        for (String step : List.of("eventfd", "vulkan")) {
            String line = out.lines().filter(l -> l.startsWith(step + ": ")).findFirst().orElseThrow(
                    () -> new AssertionError(step + " printed nothing:\n" + out));
            System.out.println(line);
            assertThat(line).as(out)
                    .startsWith(step + ": SyncNotSupportedException (CONFIGURATION): ")
                    .contains("--enable-native-access=ALL-UNNAMED")
                    .contains(NativeAccess.MODULE_PATH_FLAG)
                    .doesNotContainIgnoringCase("driver")
                    .doesNotContain("not installed");
        }
    }

    @Test
    void theClassPathFlagGrantsIt() throws Exception {
        String out = runProbe("--illegal-native-access=deny", NativeAccess.CLASS_PATH_FLAG);
        assertThat(out).contains("cpu: ok", "eventfd: ok").doesNotContain("native access");
    }

    /** Restricted calls (JEP 454): a module that makes one needs native access on the module path. */
    private static final Pattern RESTRICTED = Pattern.compile(
            "\\.reinterpret\\(|downcallHandle\\(|upcallStub\\(|libraryLookup\\(|System\\.load(?:Library)?\\(");
    /** Programs, not libraries: they say what they need themselves. */
    private static final Set<String> NOT_LIBRARIES = Set.of("benchmarks", "examples", "integration-tests");

    @Test
    void theModulePathFlagNamesTheRealModules() throws IOException {
        Path root = projectRoot();
        Set<String> needNativeAccess = new TreeSet<>();
        List<Path> descriptors;
        try (Stream<Path> files = Files.walk(root)) {
            descriptors = files.filter(p -> p.endsWith(Path.of("src/main/java/module-info.java")))
                    .filter(p -> !root.relativize(p).toString().contains("target/")
                            && !root.relativize(p).startsWith(".device")
                            && !NOT_LIBRARIES.contains(root.relativize(p).getName(0).toString()))
                    .toList();
        }
        for (Path descriptor : descriptors) {
            Path module = descriptor.getParent().getParent().getParent().getParent();
            boolean restricted = false;
            for (Path sources : List.of(module.resolve("src/main/java"), module.resolve("src/generated/java"))) {
                if (!Files.isDirectory(sources)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(sources)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        restricted |= RESTRICTED.matcher(Files.readString(f)).find();
                    }
                }
            }
            if (restricted) {
                needNativeAccess.add(moduleName(descriptor));
            }
        }
        String prefix = "--enable-native-access=";
        assertThat(NativeAccess.MODULE_PATH_FLAG).startsWith(prefix).doesNotContain("netty");
        List<String> named = List.of(NativeAccess.MODULE_PATH_FLAG.substring(prefix.length()).split(","));
        assertThat(new TreeSet<>(named)).as("the gpusync modules that make restricted calls").isEqualTo(needNativeAccess);
        assertThat(NativeAccess.ENGINE_MODULE_PATH_FLAG.substring(prefix.length()).split(",")).isSubsetOf(named);
        assertThat(NativeAccess.NETTY_EPOLL_MODULE_PATH_FLAGS)
                .startsWith(NativeAccess.ENGINE_MODULE_PATH_FLAG + ",io.netty.common ");
    }

    @Test
    void theReadmeGivesTheModulePathLinesAndPerBackendModulesThatAddUpToTheWholeList() throws IOException {
        String readme = Files.readString(projectRoot().resolve("README.md"));
        assertThat(readme).contains("\n" + NativeAccess.ENGINE_MODULE_PATH_FLAG + "\n")
                .contains("\n" + NativeAccess.NETTY_EPOLL_MODULE_PATH_FLAGS + "\n");
        // README's table "| backend | add to the list |": the engine's modules and every backend's add up to the list
        String prefix = "--enable-native-access=";
        Set<String> fromReadme = new TreeSet<>(List.of(NativeAccess.ENGINE_MODULE_PATH_FLAG.substring(prefix.length())
                .split(",")));
        Matcher rows = Pattern.compile("(?m)^\\| `gpusync-[a-z0-9]+` \\| `([^`]*)` \\|$").matcher(readme);
        int backends = 0;
        while (rows.find()) {
            backends++;
            fromReadme.addAll(List.of(rows.group(1).split(",")));
        }
        assertThat(backends).as("README's per-backend rows").isGreaterThanOrEqualTo(8);
        assertThat(fromReadme).isEqualTo(new TreeSet<>(List.of(NativeAccess.MODULE_PATH_FLAG.substring(prefix.length())
                .split(","))));
    }

    /** The checkout's root: the parent of the module directory under Maven, the working directory elsewhere. */
    private static Path projectRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("bom/pom.xml")) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout (bom/pom.xml) above " + Path.of("").toAbsolutePath());
    }

    private static String moduleName(Path descriptor) throws IOException {
        Matcher m = Pattern.compile("(?m)^\\s*(?:open\\s+)?module\\s+([\\w.]+)").matcher(Files.readString(descriptor));
        assertThat(m.find()).as(descriptor.toString()).isTrue();
        return m.group(1);
    }

    private static String runProbe(String... jvmFlags) throws IOException, InterruptedException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(jvmFlags));
        command.addAll(List.of("-Xshare:auto", "-cp", classPath, NativeAccessProbe.class.getName()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
