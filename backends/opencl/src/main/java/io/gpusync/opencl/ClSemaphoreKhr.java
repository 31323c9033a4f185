package io.gpusync.opencl;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;
import io.gpusync.bindings.opencl.OpenCl;
import io.gpusync.internal.ProcessServices;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The {@code cl_khr_semaphore} entry points of one platform. They are extension functions, absent from the
 * generated bindings and from the ICD loader's exports, so they are looked up with
 * {@code clGetExtensionFunctionAddressForPlatform} and called through hand-declared
 * {@link FunctionDescriptor}s (prototypes from {@code cl_ext.h}). The two core calls the generated bindings
 * lack ({@code clGetExtensionFunctionAddressForPlatform}, {@code clGetCommandQueueInfo}) are declared the same
 * way. Resolved once per platform; thread-safe.
 */
final class ClSemaphoreKhr {
    static final String EXTENSION = "cl_khr_semaphore";
    static final long CL_SEMAPHORE_TYPE_KHR = 0x203D;
    static final long CL_SEMAPHORE_TYPE_BINARY_KHR = 1;
    private static final int CL_QUEUE_DEVICE = 0x1091;

    private static final Linker LINKER = Linker.nativeLinker();

    final MethodHandle create;   // cl_semaphore_khr (cl_context, const cl_semaphore_properties_khr*, cl_int*)
    final MethodHandle waitFor;  // cl_int (queue, cl_uint, const sema*, const payload*, cl_uint, const cl_event*, cl_event*)
    final MethodHandle signal;   // same prototype
    final MethodHandle retain;   // cl_int (cl_semaphore_khr)
    final MethodHandle release;  // cl_int (cl_semaphore_khr)

    private ClSemaphoreKhr(MemorySegment platform) {
        FunctionDescriptor enqueue = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS);
        create = bind(platform, "clCreateSemaphoreWithPropertiesKHR",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        waitFor = bind(platform, "clEnqueueWaitSemaphoresKHR", enqueue);
        signal = bind(platform, "clEnqueueSignalSemaphoresKHR", enqueue);
        retain = bind(platform, "clRetainSemaphoreKHR", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        release = bind(platform, "clReleaseSemaphoreKHR", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /**
     * The entry points for the platform of {@code device}.
     *
     * @throws SyncNotSupportedException naming {@code cl_khr_semaphore} if the device does not list it, or
     *                                   the platform does not resolve its functions
     */
    static ClSemaphoreKhr forDevice(MemorySegment device) {
        String extensions = deviceString(device, OpenCl.CL_DEVICE_EXTENSIONS());
        if (!(" " + extensions + " ").contains(" " + EXTENSION + " ")) {
            throw new SyncNotSupportedException(BackendKind.OPENCL, "the OpenCL device "
                    + deviceString(device, OpenCl.CL_DEVICE_NAME()) + " does not support " + EXTENSION
                    + " (its extensions: " + extensions.trim() + ")");
        }
        MemorySegment platform = devicePlatform(device);
        return ByPlatform.process().resolved.computeIfAbsent(platform.address(), p -> new ClSemaphoreKhr(platform));
    }

    /** The entry points resolved in this process, by platform: a {@link ProcessServices} service. */
    private static final class ByPlatform {
        final ConcurrentHashMap<Long, ClSemaphoreKhr> resolved = new ConcurrentHashMap<>();

        static ByPlatform process() {
            return ProcessServices.get().service(ByPlatform.class, ByPlatform::new);
        }
    }

    /** The device of {@code queue} ({@code clGetCommandQueueInfo(CL_QUEUE_DEVICE)}). */
    static MemorySegment queueDevice(MemorySegment queue) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) Core.GET_COMMAND_QUEUE_INFO.invokeExact(queue, CL_QUEUE_DEVICE, ADDRESS.byteSize(), out,
                    MemorySegment.NULL);
            ClErrors.check(rc, "clGetCommandQueueInfo(CL_QUEUE_DEVICE)", "cl_command_queue " + Cl.hex(queue));
            return out.get(ADDRESS, 0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MemorySegment devicePlatform(MemorySegment device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            ClErrors.check(OpenCl.clGetDeviceInfo(device, OpenCl.CL_DEVICE_PLATFORM(), ADDRESS.byteSize(), out,
                    MemorySegment.NULL), "clGetDeviceInfo(CL_DEVICE_PLATFORM)", "device");
            return out.get(ADDRESS, 0);
        }
    }

    private static String deviceString(MemorySegment device, int param) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment size = a.allocate(JAVA_LONG);
            ClErrors.check(OpenCl.clGetDeviceInfo(device, param, 0, MemorySegment.NULL, size), "clGetDeviceInfo",
                    "device");
            MemorySegment value = a.allocate(size.get(JAVA_LONG, 0) + 1);
            ClErrors.check(OpenCl.clGetDeviceInfo(device, param, value.byteSize(), value, MemorySegment.NULL),
                    "clGetDeviceInfo", "device");
            return value.getString(0);
        }
    }

    private static MethodHandle bind(MemorySegment platform, String name, FunctionDescriptor descriptor) {
        MemorySegment address;
        try (Arena a = Arena.ofConfined()) {
            address = (MemorySegment) Core.GET_EXTENSION_FUNCTION.invokeExact(platform, a.allocateFrom(name));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (address.address() == 0) {
            throw new SyncNotSupportedException(BackendKind.OPENCL, "the OpenCL platform lists " + EXTENSION
                    + " but clGetExtensionFunctionAddressForPlatform does not resolve " + name);
        }
        return LINKER.downcallHandle(address, descriptor);
    }

    /** Core OpenCL calls that the generated bindings do not include, from the ICD loader. */
    private static final class Core {
        static final SymbolLookup LOADER = SymbolLookup.libraryLookup(Cl.LIBRARY, Arena.global());
        static final MethodHandle GET_EXTENSION_FUNCTION = LINKER.downcallHandle(
                LOADER.findOrThrow("clGetExtensionFunctionAddressForPlatform"),
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        static final MethodHandle GET_COMMAND_QUEUE_INFO = LINKER.downcallHandle(
                LOADER.findOrThrow("clGetCommandQueueInfo"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS));
    }

    static int invokeInt(MethodHandle handle, MemorySegment arg) {
        try {
            return (int) handle.invokeExact(arg);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code clEnqueue{Wait,Signal}SemaphoresKHR(queue, 1, &semaphore, NULL, 0, NULL, event)}. */
    static int enqueue(MethodHandle handle, MemorySegment queue, MemorySegment semaphore, MemorySegment eventOut) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment list = a.allocate(ADDRESS);
            list.set(ADDRESS, 0, semaphore);
            return (int) handle.invokeExact(queue, 1, list, MemorySegment.NULL, 0, MemorySegment.NULL, eventOut);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** A new binary semaphore in {@code context}. */
    MemorySegment createBinary(MemorySegment context) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment props = a.allocate(JAVA_LONG, 3);
            props.setAtIndex(JAVA_LONG, 0, CL_SEMAPHORE_TYPE_KHR);
            props.setAtIndex(JAVA_LONG, 1, CL_SEMAPHORE_TYPE_BINARY_KHR);
            props.setAtIndex(JAVA_LONG, 2, 0);
            MemorySegment err = a.allocate(JAVA_INT);
            MemorySegment semaphore = (MemorySegment) create.invokeExact(context, props, err);
            ClErrors.check(err.get(JAVA_INT, 0), "clCreateSemaphoreWithPropertiesKHR", "context " + Cl.hex(context));
            return semaphore;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
