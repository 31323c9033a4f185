package io.gpusync.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The README's "Virtual threads" example, compiled from README.md as written there (imports included) and run:
 * 10,000 virtual threads block on a host timeline and all return once it is signalled.
 */
class ReadmeVirtualThreadsExampleTest {

    @Test
    void theReadmeVirtualThreadsExampleRuns(@TempDir Path work) throws Exception {
        assumeTrue(ModuleLayer.boot().findModule("jdk.compiler").isPresent(),
                "this Java runtime has no compiler (jdk.compiler): a jlinked one");
        Path readme = Path.of("").toAbsolutePath();
        while (!Files.isRegularFile(readme.resolve("README.md")) || !Files.isDirectory(readme.resolve("examples"))) {
            readme = readme.getParent();
        }
        ReadmeJavaSnippetsTest.Snippet example = ReadmeJavaSnippetsTest
                .javaSnippets(Files.readAllLines(readme.resolve("README.md"))).stream()
                .filter(s -> s.code().contains("class VirtualThreadRequests")).findFirst().orElseThrow();
        assertThat(ReadmeJavaSnippetsTest.compile(example, work)).isEmpty();

        Path classes = work.resolve("ReadmeSnippetAtLine" + example.firstLine()).resolve("classes");
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                getClass().getClassLoader())) {
            java.lang.reflect.Method serve = loader.loadClass("VirtualThreadRequests").getDeclaredMethod("serve");
            serve.setAccessible(true); // a package-private method of a package-private class, as README shows it
            Object answers = serve.invoke(null);
            assertThat(answers).isEqualTo(IntStream.rangeClosed(1, 10_000).mapToObj(i -> "batch " + i + " ready")
                    .toList());
        }
    }
}
