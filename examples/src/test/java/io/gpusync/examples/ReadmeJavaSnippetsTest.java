package io.gpusync.examples;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every {@code ```java} block of README.md compiles as shown, with javac, against this module's test class path
 * (gpusync, Reactor, Reactor Netty, Micrometer): a reader can copy it into a file. Nothing is imported for a
 * snippet; it starts with its own {@code import} lines. A block that declares a type ({@code class},
 * {@code record}, {@code interface}, {@code enum}) or starts with {@code package} is compiled as a file of its
 * own; in any other block, the lines after the imports are statements, compiled as the body of a method that may
 * throw. A snippet that does not compile fails with README.md's line number of each error. (Compiled, not run:
 * ReadmeExampleTest and ReadmePipelineExampleTest run the two examples.)
 */
class ReadmeJavaSnippetsTest {
    private static final Path README = readme();

    /** README.md of the checkout: the module directory's parent under Maven, the working directory elsewhere. */
    private static Path readme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("examples"))) {
                return dir.resolve("README.md");
            }
        }
        return Path.of("../README.md");
    }

    private static final Pattern DECLARES_A_TYPE =
            Pattern.compile("(?m)^\\s*(public\\s+|final\\s+|abstract\\s+)*(class|record|interface|enum)\\s+\\w+");

    /** A ```java block: its text and the README line of its first line. */
    record Snippet(int firstLine, String code) {
    }

    static List<Snippet> javaSnippets(List<String> readme) {
        List<Snippet> snippets = new ArrayList<>();
        for (int i = 0; i < readme.size(); i++) {
            if (readme.get(i).strip().equals("```java")) {
                int first = i + 1;
                int end = first;
                while (end < readme.size() && !readme.get(end).strip().equals("```")) {
                    end++;
                }
                assertThat(end).as("README.md:%d: a ```java block that is never closed", i + 1)
                        .isLessThan(readme.size());
                snippets.add(new Snippet(first + 1, String.join("\n", readme.subList(first, end))));
                i = end;
            }
        }
        return snippets;
    }

    @Test
    void theReadmeHasJavaSnippetsToCompile() throws IOException {
        assertThat(javaSnippets(Files.readAllLines(README))).hasSizeGreaterThanOrEqualTo(2);
    }

    @TestFactory
    Stream<DynamicTest> everyJavaSnippetOfTheReadmeCompiles(@TempDir Path work) throws IOException {
        return javaSnippets(Files.readAllLines(README)).stream().map(snippet -> DynamicTest.dynamicTest(
                "README.md line " + snippet.firstLine(), () -> assertThat(compile(snippet, work))
                        .as("the ```java block at README.md:%d does not compile", snippet.firstLine())
                        .isEmpty()));
    }

    @Test
    void aSnippetThatDoesNotCompileIsReportedWithItsReadmeLine(@TempDir Path work) throws IOException {
        Snippet broken = new Snippet(40,
                "import io.gpusync.cpu.CpuTimeline;\n\nCpuTimeline queue = new CpuTimeline();\nqueue.noSuchMethod();");

        assertThat(compile(broken, work)).singleElement().asString().startsWith("README.md:43: ")
                .contains("noSuchMethod");
    }

    @Test
    void aSnippetWithoutItsImportsDoesNotCompile(@TempDir Path work) throws IOException {
        Snippet withoutImports = new Snippet(10, "CpuTimeline queue = new CpuTimeline();\nqueue.signal(1);");

        assertThat(compile(withoutImports, work)).isNotEmpty()
                .allSatisfy(error -> assertThat(error).startsWith("README.md:10: ").contains("CpuTimeline"));
    }

    /** The errors javac reports for {@code snippet}, each as "README.md:line: message"; empty if it compiles. */
    static List<String> compile(Snippet snippet, Path work) throws IOException {
        String name = "ReadmeSnippetAtLine" + snippet.firstLine();
        boolean wholeFile = snippet.code().strip().startsWith("package") || DECLARES_A_TYPE.matcher(snippet.code()).find();
        List<String> lines = new ArrayList<>(snippet.code().lines().toList());
        if (!wholeFile) {
            // the statements after the import lines become a method's body; the wrapper shares their first line,
            // so the snippet's line n is the source's line n
            int body = 0;
            while (body < lines.size() && (lines.get(body).isBlank() || lines.get(body).strip().startsWith("import "))) {
                body++;
            }
            String header = "class " + name + " { void snippet() throws Exception { ";
            if (body < lines.size()) {
                lines.set(body, header + lines.get(body));
            } else {
                lines.add(header);
            }
            lines.add("}}");
        }
        String source = String.join("\n", lines) + "\n";
        Path dir = Files.createDirectories(work.resolve(name));
        Path file = dir.resolve(wholeFile ? firstPublicTypeOr(snippet.code(), name) + ".java" : name + ".java");
        Files.writeString(file, source);

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assumeTrue(javac != null, "this Java runtime has no compiler (jdk.compiler): a jlinked one");
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options = List.of("-proc:none", "-d", Files.createDirectories(dir.resolve("classes")).toString(),
                    "-classpath", testClassPath());
            javac.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file)).call();
        }
        return diagnostics.getDiagnostics().stream()
                .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> "README.md:" + (snippet.firstLine() + d.getLineNumber() - 1) + ": "
                        + d.getMessage(Locale.ROOT))
                .collect(Collectors.toList());
    }

    private static String firstPublicTypeOr(String code, String fallback) {
        var m = Pattern.compile("(?m)^\\s*public\\s+(final\\s+|abstract\\s+)*(class|record|interface|enum)\\s+(\\w+)")
                .matcher(code);
        return m.find() ? m.group(3) : fallback;
    }

    /** Surefire runs tests from a manifest-only jar; it names the real class path in this property. */
    private static String testClassPath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }
}
