package io.gpusync.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncNotSupportedException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/** The CUresult table and classification; runs without a driver (the table never initializes {@code Cuda}). */
class CudaResultsTest {

    @Test
    void tableComesFromTheGeneratedConstants() throws Exception {
        Map<Integer, String> table = CudaResults.table();
        assertThat(table).containsEntry(0, "CUDA_SUCCESS").containsEntry(600, "CUDA_ERROR_NOT_READY")
                .containsEntry(700, "CUDA_ERROR_ILLEGAL_ADDRESS").containsEntry(719, "CUDA_ERROR_LAUNCH_FAILED");
        // every CUDA_ERROR_* constant in the generated source is in the table with its value
        Path source = Path.of("..", "..", "bindings", "bindings-cuda", "src", "generated", "java", "io", "gpusync",
                "bindings", "cuda", "Cuda.java");
        if (Files.exists(source)) {
            Matcher m = Pattern.compile("private static final int (CUDA_(?:ERROR_\\w+|SUCCESS)) = \\(int\\)(\\d+)L;")
                    .matcher(Files.readString(source));
            Map<Integer, String> fromSource = new LinkedHashMap<>();
            while (m.find()) {
                fromSource.putIfAbsent(Integer.parseInt(m.group(2)), m.group(1));
            }
            assertThat(fromSource).hasSizeGreaterThan(90);
            assertThat(table).isEqualTo(fromSource);
        }
    }

    @Test
    void namesFallBackToTheTableAndThenToTheNumber() {
        assertThat(CudaResults.tableName(716)).hasValue("CUDA_ERROR_MISALIGNED_ADDRESS");
        assertThat(CudaResults.tableName(123456)).isEmpty();
        // without a driver name() uses the table; with one, the driver's name (the same for these codes)
        assertThat(CudaResults.name(710)).isEqualTo("CUDA_ERROR_ASSERT");
        assertThat(CudaResults.name(123456)).isEqualTo("CUresult 123456");
    }

    @Test
    void theLiteralCodesOfEachClassNameWhatTheyClaim() {
        Map<Integer, String> expectedFatal = Map.ofEntries(
                Map.entry(214, "CUDA_ERROR_ECC_UNCORRECTABLE"), Map.entry(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"),
                Map.entry(226, "CUDA_ERROR_CONTAINED"), Map.entry(700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
                Map.entry(702, "CUDA_ERROR_LAUNCH_TIMEOUT"), Map.entry(710, "CUDA_ERROR_ASSERT"),
                Map.entry(714, "CUDA_ERROR_HARDWARE_STACK_ERROR"), Map.entry(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
                Map.entry(716, "CUDA_ERROR_MISALIGNED_ADDRESS"), Map.entry(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"),
                Map.entry(718, "CUDA_ERROR_INVALID_PC"), Map.entry(719, "CUDA_ERROR_LAUNCH_FAILED"),
                Map.entry(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"), Map.entry(810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"),
                Map.entry(911, "CUDA_ERROR_EXTERNAL_DEVICE"), Map.entry(916, "CUDA_ERROR_KEY_ROTATION"));
        expectedFatal.forEach((code, name) -> {
            assertThat(CudaResults.tableName(code)).as("code %d", code).hasValue(name);
            assertThat(CudaResults.isStickyError(code)).as(name).isTrue();
            assertThat(CudaResults.kindOf(code)).isEqualTo(ErrorKind.FATAL);
        });
        long sticky = CudaResults.table().keySet().stream().filter(CudaResults::isStickyError).count();
        assertThat(sticky).isEqualTo(expectedFatal.size());
        assertThat(CudaResults.tableName(4)).hasValue("CUDA_ERROR_DEINITIALIZED");
        assertThat(CudaResults.tableName(709)).hasValue("CUDA_ERROR_CONTEXT_IS_DESTROYED");
        assertThat(CudaResults.isFatal(4)).isTrue();
        assertThat(CudaResults.isFatal(709)).isTrue();
        assertThat(CudaResults.tableName(801)).hasValue("CUDA_ERROR_NOT_SUPPORTED");
        assertThat(CudaResults.tableName(34)).hasValue("CUDA_ERROR_STUB_LIBRARY");
        assertThat(CudaResults.tableName(36)).hasValue("CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER");
        assertThat(CudaResults.tableName(100)).hasValue("CUDA_ERROR_NO_DEVICE");
        assertThat(CudaResults.tableName(803)).hasValue("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
        assertThat(CudaResults.tableName(804)).hasValue("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
        assertThat(CudaResults.tableName(2)).hasValue("CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(CudaResults.tableName(701)).hasValue("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
        assertThat(CudaResults.tableName(909)).hasValue("CUDA_ERROR_TIMEOUT");
        assertThat(CudaResults.tableName(999)).hasValue("CUDA_ERROR_UNKNOWN");
        assertThat(CudaResults.tableName(CudaResults.INVALID_CONTEXT)).hasValue("CUDA_ERROR_INVALID_CONTEXT");
    }

    @Test
    void everyCodeOfTheHeaderHasTheKindAndExceptionOfTheJavadocTable() {
        Map<String, ErrorKind> kinds = new LinkedHashMap<>();
        Map<String, Class<? extends SyncException>> types = new LinkedHashMap<>();
        for (String n : java.util.List.of("DEINITIALIZED", "CONTEXT_IS_DESTROYED", "UNKNOWN", "LAUNCH_FAILED",
                "ILLEGAL_ADDRESS", "KEY_ROTATION")) {
            kinds.put(n, ErrorKind.FATAL);
            types.put(n, DeviceLostException.class);
        }
        for (String n : java.util.List.of("STUB_LIBRARY", "NO_DEVICE", "NOT_SUPPORTED", "NO_BINARY_FOR_GPU",
                "JIT_COMPILER_NOT_FOUND", "UNSUPPORTED_PTX_VERSION", "CDP_NOT_SUPPORTED", "SYSTEM_NOT_READY",
                "DEVICE_NOT_LICENSED", "PEER_ACCESS_UNSUPPORTED")) {
            kinds.put(n, ErrorKind.CONFIGURATION);
            types.put(n, SyncNotSupportedException.class);
        }
        for (String n : java.util.List.of("OUT_OF_MEMORY", "DEVICE_UNAVAILABLE", "LAUNCH_OUT_OF_RESOURCES", "TIMEOUT",
                "MPS_CONNECTION_FAILED", "MPS_SERVER_NOT_READY", "MPS_MAX_CLIENTS_REACHED")) {
            kinds.put(n, ErrorKind.RECOVERABLE);
            types.put(n, SyncBackendException.class);
        }
        for (String n : java.util.List.of("INVALID_VALUE", "INVALID_CONTEXT", "INVALID_HANDLE", "ILLEGAL_STATE",
                "NOT_PERMITTED", "STREAM_CAPTURE_INVALIDATED", "INVALID_DEVICE", "NOT_INITIALIZED")) {
            kinds.put(n, ErrorKind.CONFIGURATION);
            types.put(n, SyncBackendException.class);
        }
        Map<String, Integer> byName = new LinkedHashMap<>();
        CudaResults.table().forEach((code, name) -> byName.put(name, code));
        kinds.forEach((n, kind) -> {
            Integer code = byName.get("CUDA_ERROR_" + n);
            assertThat(code).as(n).isNotNull();
            SyncException e = CudaResults.exception(code, "x");
            assertThat(e.kind()).as(n).isEqualTo(kind);
            assertThat(e.getClass()).as(n).isEqualTo(types.get(n));
        });
        // every code of the header is classified without throwing, and FATAL exactly when isFatal
        CudaResults.table().keySet().stream().filter(c -> c != 0).forEach(c ->
                assertThat(CudaResults.exception(c, "x").kind() == ErrorKind.FATAL).as("code %d", c)
                        .isEqualTo(CudaResults.isFatal(c)));
    }

    @Test
    void anInvalidContextIsFatalOnlyForAContextGpusyncHolds() {
        assertThat(CudaResults.exception(CudaResults.INVALID_CONTEXT, "cuStreamCreate(caller's context)").kind())
                .isEqualTo(ErrorKind.CONFIGURATION);
        SyncException gone = CudaResults.contextGone(CudaResults.INVALID_CONTEXT, "health check of a held context");
        assertThat(gone).isInstanceOf(DeviceLostException.class);
        assertThat(gone.kind()).isEqualTo(ErrorKind.FATAL);
        assertThat(gone.getMessage()).contains("destroyed");
        assertThat(CudaResults.contextGone(2, "x").kind()).isEqualTo(ErrorKind.RECOVERABLE);
    }

    @Test
    void exceptionsCarryKindCodeAndName() {
        SyncException sticky = CudaResults.exception(700, "cuEventQuery(x)");
        assertThat(sticky).isInstanceOf(DeviceLostException.class);
        assertThat(sticky.kind()).isEqualTo(ErrorKind.FATAL);
        assertThat(sticky.getMessage()).contains("cuEventQuery(x)", "CUDA_ERROR_ILLEGAL_ADDRESS", "700");
        assertThat(sticky.getCause()).isInstanceOfSatisfying(SyncBackendException.class, c -> {
            assertThat(c.nativeCode()).isEqualTo(700);
            assertThat(c.nativeCodeName()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS");
        });
        assertThat(CudaResults.exception(801, "x")).isInstanceOf(SyncNotSupportedException.class);
        assertThat(CudaResults.exception(2, "x")).isInstanceOfSatisfying(SyncBackendException.class,
                e -> assertThat(e.kind()).isEqualTo(ErrorKind.RECOVERABLE));
        assertThat(CudaResults.exception(400, "x")).isInstanceOfSatisfying(SyncBackendException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.CONFIGURATION);
            assertThat(e.nativeCodeName()).isEqualTo("CUDA_ERROR_INVALID_HANDLE");
        });
    }
}
