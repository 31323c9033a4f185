package io.gpusync;

import java.nio.file.Files;
import java.nio.file.Path;

/** The checkout the tests run in, for tests that read sources (Maven runs them in the module's directory). */
final class Checkout {
    private Checkout() {
    }

    /** The first directory at or above the working directory that holds core's sources. */
    static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("core/src/main/java/module-info.java"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout (core/src/main/java/module-info.java) above "
                + Path.of("").toAbsolutePath());
    }
}
