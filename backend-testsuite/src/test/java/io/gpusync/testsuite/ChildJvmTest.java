package io.gpusync.testsuite;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Which allocator a checked child gets. NVIDIA's GL core libraries take {@code malloc} from libc itself; under the
 * preloaded checker beside them, the soak of every backend died on an H200 and an H100 ("malloc: top chunk is
 * corrupt", "corrupted top size", glibc's arena assertion in {@code __libc_malloc}) within seconds of its start.
 */
class ChildJvmTest {
    @TempDir
    Path dir;

    @Test
    void aMachineWithNvidiasVulkanDriverRunsCheckedChildrenOnGlibcsOwnAllocatorWithThePerturbation()
            throws IOException {
        Path vulkan = folderWith("icd.d", "nvidia_icd.json", "{\"ICD\": {\"library_path\": \"libGLX_nvidia.so.0\"}}");
        Optional<String> bypass = ChildJvm.checkerBypass(Map.of(), Map.of("VK_DRIVER_FILES", List.of(vulkan)));
        assertThat(bypass).hasValueSatisfying(b -> assertThat(b).endsWith("nvidia_icd.json -> libGLX_nvidia.so.0"));

        assumeTrue(Files.isRegularFile(ChildJvm.MALLOC_DEBUG), "glibc's malloc checker is not installed");
        Map<String, String> env = ChildJvm.mallocChecked(7, bypass);
        assertThat(env).containsEntry("MALLOC_PERTURB_", "7").doesNotContainKey("MALLOC_CHECK_");
        assertThat(env.get("LD_PRELOAD")).endsWith("libjsig.so").doesNotContain("libc_malloc_debug");
    }

    @Test
    void nvidiasEglVendorLibraryNamedByTheEnvironmentBypassesTheChecker() throws IOException {
        Path egl = folderWith("egl_vendor.d", "10_nvidia.json",
                "{\"file_format_version\": \"1.0.0\", \"ICD\": {\"library_path\": \"libEGL_nvidia.so.0\"}}");
        assertThat(ChildJvm.checkerBypass(Map.of("__EGL_VENDOR_LIBRARY_FILENAMES",
                        egl.resolve("10_nvidia.json").toString()),
                Map.of("__EGL_VENDOR_LIBRARY_FILENAMES", List.of(dir.resolve("absent")))))
                .hasValueSatisfying(b -> assertThat(b).endsWith("-> libEGL_nvidia.so.0"));
    }

    @Test
    void manifestsTheEnvironmentNamesReplaceTheStandardFolders() throws IOException {
        Path nvidia = folderWith("icd.d", "nvidia_icd.json", "{\"ICD\": {\"library_path\": \"libGLX_nvidia.so.0\"}}");
        Path lvp = folderWith("own", "lvp_icd.json",
                "{\"ICD\": {\"library_path\": \"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"}}");
        Map<String, List<Path>> folders = Map.of("VK_DRIVER_FILES", List.of(nvidia));

        assertThat(ChildJvm.checkerBypass(Map.of("VK_ICD_FILENAMES", lvp.resolve("lvp_icd.json").toString()),
                folders)).isEmpty();
        assertThat(ChildJvm.checkerBypass(Map.of(), folders)).isPresent();
    }

    @Test
    void cpuDriversKeepTheChecker() throws IOException {
        Path vulkan = folderWith("icd.d", "lvp_icd.json",
                "{\"ICD\": {\"library_path\": \"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"}}");
        Path egl = folderWith("egl_vendor.d", "50_mesa.json", "{\"ICD\": {\"library_path\": \"libEGL_mesa.so.0\"}}");
        Optional<String> bypass = ChildJvm.checkerBypass(Map.of(),
                Map.of("VK_DRIVER_FILES", List.of(vulkan), "__EGL_VENDOR_LIBRARY_FILENAMES", List.of(egl)));
        assertThat(bypass).isEmpty();

        assumeTrue(Files.isRegularFile(ChildJvm.MALLOC_DEBUG), "glibc's malloc checker is not installed");
        Map<String, String> env = ChildJvm.mallocChecked(7, bypass);
        assertThat(env).containsEntry("MALLOC_CHECK_", "3").containsEntry("MALLOC_PERTURB_", "7");
        assertThat(env.get("LD_PRELOAD")).contains("libjsig.so").endsWith("libc_malloc_debug.so.0");
    }

    private Path folderWith(String folder, String name, String json) throws IOException {
        Path f = Files.createDirectories(dir.resolve(folder));
        Files.writeString(f.resolve(name), json);
        return f;
    }
}
