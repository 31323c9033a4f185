package io.gpusync.testsuite;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The checkout the tests run in, for tests that read sources (Maven runs them in the module's directory). */
public final class Checkout {
    private Checkout() {
    }

    /** The first directory at or above the working directory that holds the API module's sources. */
    public static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("api/src/main/java/module-info.java"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout (api/src/main/java/module-info.java) above "
                + Path.of("").toAbsolutePath());
    }

    /** The main source roots ({@code src/main/java}) of the API, the backend kit and every backend module. */
    public static List<Path> libraryMainSources() {
        Path root = root();
        List<Path> roots = new ArrayList<>(List.of(root.resolve("api/src/main/java"),
                root.resolve("backend-kit/src/main/java")));
        try (Stream<Path> backends = Files.list(root.resolve("backends"))) {
            backends.map(b -> b.resolve("src/main/java")).filter(Files::isDirectory).sorted().forEach(roots::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return roots;
    }

    /** The directory of a package among {@link #libraryMainSources()} (the first that has it). */
    public static Path packageDirectory(String pkg) {
        List<Path> roots = libraryMainSources();
        return roots.stream().map(r -> r.resolve(pkg.replace('.', '/'))).filter(Files::isDirectory).findFirst()
                .orElse(roots.getFirst().resolve(pkg.replace('.', '/')));
    }
}
