package io.gpusync;

import io.gpusync.testsuite.Checkout;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every backend package documents its native boundary: a "Native boundary" section in its {@code package-info.java}
 * with a table of the sites where gpusync hands a driver something that may outlive the call or destroys a handle,
 * who owns each, and what keeps it alive until the driver's last use. A new backend package fails this until it has
 * one.
 */
class NativeBoundaryDocsTest {
    @Test
    void everyBackendPackageHasANativeBoundaryTable() throws IOException {
        List<String> missing = new ArrayList<>();
        for (String pkg : ArchitectureTest.EXPORTED) {
            if (Set.of("io.gpusync", "io.gpusync.spi").contains(pkg)) {
                continue;
            }
            Path info = Checkout.packageDirectory(pkg).resolve("package-info.java");
            String text = Files.isRegularFile(info) ? Files.readString(info) : "";
            if (!text.contains("<b>Native boundary.</b>")) {
                missing.add(pkg);
            }
        }
        assertThat(missing).as("backend packages without a \"Native boundary\" section in package-info.java").isEmpty();
    }
}
