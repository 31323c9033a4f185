package io.gpusync.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** README's "Testing your code" example is {@link TestingYourCodeExampleTest}, which runs in the build. */
class TestingYourCodeReadmeTest {
    @Test
    void theReadmesExampleIsTheTestThatRuns() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(root.resolve("examples")) || !Files.isRegularFile(root.resolve("README.md"))) {
            root = root.getParent(); // the module directory under Maven, the checkout elsewhere
        }
        String readme = Files.readString(root.resolve("README.md"));
        String test = Files.readString(root.resolve(
                "examples/src/test/java/io/gpusync/examples/TestingYourCodeExampleTest.java"));
        String body = test.substring(test.indexOf("import "));

        assertThat(readme).as("README.md's Testing your code snippet").contains("```java\n" + body + "```\n");
    }
}
