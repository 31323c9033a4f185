package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;
import io.gpusync.SyncInvalidArgumentException;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.NativeLibraries;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The status-code table and what each code becomes. */
class OpenClErrorsTest {

    @BeforeAll
    static void driver() {
        assumeTrue(NativeLibraries.isAvailable(Cl.LIBRARY), Cl.LIBRARY + " is not installed: no OpenCL on this machine");
    }

    @Test
    void everyNameInTheTableIsTheGeneratedConstantOfThatName() throws Exception {
        for (Map.Entry<Integer, String> e : ClErrors.names().entrySet()) {
            if (e.getKey() == ClErrors.CL_PLATFORM_NOT_FOUND_KHR) {
                continue; // cl_ext.h, not generated
            }
            Method constant = OpenCl.class.getMethod(e.getValue());
            assertThat(constant.invoke(null)).as(e.getValue()).isEqualTo(e.getKey());
        }
    }

    @Test
    void everyGeneratedErrorCodeHasItsName() throws Exception {
        int errors = 0;
        for (Method m : OpenCl.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0 && m.getReturnType() == int.class
                    && m.getName().startsWith("CL_") && !m.getName().startsWith("CL_BUILD_") && !m.getName().startsWith("CL_DEVICE_TYPE_")) {
                // not error codes: CL_BUILD_NONE/ERROR/IN_PROGRESS (-1..-3) are program build states and
                // CL_DEVICE_TYPE_ALL (0xFFFFFFFF) is a bit mask that reads as -1 in a Java int
                int value = (int) m.invoke(null);
                if (value < 0) {
                    errors++;
                    assertThat(ClErrors.name(value)).as("code %d", value).isEqualTo(m.getName());
                }
            }
        }
        assertThat(errors).as("negative CL_ constants in the bindings").isGreaterThanOrEqualTo(60);
        assertThat(ClErrors.name(0)).isEqualTo("CL_SUCCESS");
        assertThat(ClErrors.name(-1001)).isEqualTo("CL_PLATFORM_NOT_FOUND_KHR");
        assertThat(ClErrors.name(-12345)).isEqualTo("CL_UNKNOWN_ERROR");
    }

    @Test
    void aFailedCallCarriesItsCodeAndAKindChosenFromIt() {
        SyncException oom = ClErrors.callFailed(OpenCl.CL_OUT_OF_RESOURCES(), "clEnqueueNDRangeKernel", "q");
        assertThat(oom).isInstanceOf(SyncBackendException.class);
        assertThat(((SyncBackendException) oom).nativeCode()).isEqualTo(-5);
        assertThat(((SyncBackendException) oom).nativeCodeName()).isEqualTo("CL_OUT_OF_RESOURCES");
        assertThat(oom.kind()).isEqualTo(ErrorKind.RECOVERABLE);
        assertThat(oom.backend()).contains(BackendKind.OPENCL);
        assertThat(oom).hasMessageContaining("clEnqueueNDRangeKernel").hasMessageContaining("-5");

        assertThat(ClErrors.callFailed(OpenCl.CL_OUT_OF_HOST_MEMORY(), "c", "x").kind()).isEqualTo(ErrorKind.RECOVERABLE);
        assertThat(ClErrors.callFailed(OpenCl.CL_INVALID_VALUE(), "c", "x").kind()).isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(ClErrors.callFailed(OpenCl.CL_BUILD_PROGRAM_FAILURE(), "c", "x").kind())
                .isEqualTo(ErrorKind.CONFIGURATION);
        assertThat(ClErrors.callFailed(OpenCl.CL_INVALID_EVENT(), "c", "x"))
                .isInstanceOf(SyncInvalidArgumentException.class).hasMessageContaining("CL_INVALID_EVENT");
        assertThat(ClErrors.callFailed(-1001, "clGetPlatformIDs", "x")).isInstanceOf(SyncNotSupportedException.class);
        assertThat(ClErrors.callFailed(OpenCl.CL_DEVICE_NOT_AVAILABLE(), "c", "x"))
                .isInstanceOf(DeviceLostException.class).hasMessageContaining("CL_DEVICE_NOT_AVAILABLE");
    }

    @Test
    void anAbortedCommandIsRecoverableWhateverItsCodeUnlessTheDeviceIsGone() {
        for (int status : new int[] {-1, -5, -14, -30, -9999}) {
            SyncException e = ClErrors.eventFailed(status, "cl_event 0x1");
            assertThat(e).isInstanceOf(SyncBackendException.class);
            assertThat(((SyncBackendException) e).nativeCode()).isEqualTo(status);
            assertThat(e.kind()).isEqualTo(ErrorKind.RECOVERABLE);
        }
        assertThat(ClErrors.eventFailed(-2, "cl_event 0x1")).isInstanceOf(DeviceLostException.class)
                .satisfies(e -> assertThat(((SyncException) e).kind()).isEqualTo(ErrorKind.FATAL));
    }
}
