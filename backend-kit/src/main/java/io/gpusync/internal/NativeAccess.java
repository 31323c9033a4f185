package io.gpusync.internal;

import io.gpusync.BackendKind;
import io.gpusync.SyncNotSupportedException;

import java.lang.foreign.MemorySegment;

/**
 * Whether this JVM lets gpusync use Java's restricted FFM methods, and the error that says how to allow it.
 * Under {@code --illegal-native-access=deny} (the JDK's future default) a module that was not granted native
 * access gets an {@link IllegalCallerException} from its first restricted call — or, from a binding class's
 * static initializer, an {@link ExceptionInInitializerError} around one; gpusync turns that into a
 * {@link SyncNotSupportedException} ({@link io.gpusync.ErrorKind#CONFIGURATION}) that names the flags, so it
 * is never mistaken for a missing driver. Under the JDK's default ({@code warn}) nothing fails: the JDK prints
 * its warning once and the check passes.
 *
 * <p>The check runs once (a restricted call from this module and the initialization of the
 * bindings' libc class from {@code io.gpusync.bindings.libc}); its result lives in this class's one instance, a
 * {@link ProcessServices} service. Thread-safe; never blocks.
 */
public final class NativeAccess {
    /** The flag for gpusync on the class path. */
    public static final String CLASS_PATH_FLAG = "--enable-native-access=ALL-UNNAMED";
    /**
     * The flag naming every gpusync module that makes restricted calls, for gpusync on the module path. Name only
     * those your JVM resolves: the JVM warns "Unknown module" for any other ({@link #modulePathFlagForThisJvm()}).
     */
    public static final String MODULE_PATH_FLAG = "--enable-native-access=io.gpusync.backend.kit,"
            + "io.gpusync.linux,io.gpusync.cuda,io.gpusync.opencl,io.gpusync.gl,io.gpusync.d3d11,io.gpusync.metal,"
            + "io.gpusync.wgpu,io.gpusync.bindings.libc,io.gpusync.bindings.cuda,io.gpusync.bindings.vulkan,"
            + "io.gpusync.bindings.opencl,io.gpusync.bindings.gl,io.gpusync.bindings.d3d12";
    /**
     * The flag for the engine on the module path, without Netty: the modules that {@code io.gpusync.reactor}
     * always resolves and that make restricted calls (each backend in use adds its own, see README).
     */
    public static final String ENGINE_MODULE_PATH_FLAG =
            "--enable-native-access=io.gpusync.backend.kit,io.gpusync.linux,io.gpusync.bindings.libc";
    /**
     * {@link #ENGINE_MODULE_PATH_FLAG} with Netty 4.2's epoll (x86-64): native access for Netty's native library
     * too, and its modules resolved (gpusync reads them {@code requires static}: only if something resolves them).
     */
    public static final String NETTY_EPOLL_MODULE_PATH_FLAGS = ENGINE_MODULE_PATH_FLAG + ",io.netty.common"
            + " --add-modules io.netty.transport.classes.epoll,io.netty.transport.epoll.linux.x86_64";

    private static final Object PERMITTED = new Object();

    /** {@code null} until checked, then {@link #PERMITTED} or the denial. */
    private volatile Object checked;

    private NativeAccess() {
    }

    /**
     * Succeeds if gpusync may make native calls in this JVM.
     *
     * @param what what needs them, for the message (e.g. {@code "libvulkan.so.1"}, {@code "eventfd"})
     * @throws SyncNotSupportedException ({@link io.gpusync.ErrorKind#CONFIGURATION}) naming both flags if not
     */
    public static void require(BackendKind backend, String what) {
        NativeAccess process = ProcessServices.get().service(NativeAccess.class, NativeAccess::new);
        Object result = process.checked;
        if (result == null) {
            result = check();
            process.checked = result;
        }
        if (result != PERMITTED) {
            throw denied(backend, what, (Throwable) result);
        }
    }

    /** Whether {@code error} (or one of its causes) is the JVM refusing native access. */
    public static boolean isDenial(Throwable error) {
        return denialIn(error) != null;
    }

    /** The CONFIGURATION error for {@code what} denied native access ({@code cause}: the JDK's exception). */
    public static SyncNotSupportedException denied(BackendKind backend, String what, Throwable cause) {
        Throwable denial = denialIn(cause);
        return new SyncNotSupportedException(backend, what + " needs native access (Java's foreign function API),"
                + " which this JVM denies to gpusync (" + (denial != null ? denial.getMessage() : cause) + ")."
                + " Start java with " + CLASS_PATH_FLAG + " when gpusync is on the class path, or with "
                + modulePathFlagForThisJvm() + " when it is on the module path (an executable jar may instead say"
                + " Enable-Native-Access: ALL-UNNAMED in its manifest). This is a JVM setting: the native library"
                + " was not tried.", cause);
    }

    /**
     * {@link #MODULE_PATH_FLAG} narrowed to the gpusync modules resolved in this JVM's layer (naming another makes
     * the JVM warn "Unknown module"); the whole flag on the class path, where no gpusync module is named.
     */
    public static String modulePathFlagForThisJvm() {
        ModuleLayer layer = NativeAccess.class.getModule().getLayer();
        if (layer == null) {
            return MODULE_PATH_FLAG;
        }
        String prefix = "--enable-native-access=";
        return prefix + java.util.Arrays.stream(MODULE_PATH_FLAG.substring(prefix.length()).split(","))
                .filter(name -> layer.findModule(name).isPresent())
                .collect(java.util.stream.Collectors.joining(","));
    }

    private static Object check() {
        try {
            MemorySegment.NULL.reinterpret(1); // restricted, touches nothing
        } catch (IllegalCallerException denied) {
            return denied;
        }
        try {
            Class.forName("io.gpusync.bindings.libc.ErrnoCalls", true, NativeAccess.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            Throwable denied = denialIn(e);
            if (denied != null) {
                return e;
            }
            // another failure: the call that needs the class reports it in its own words
        }
        return PERMITTED;
    }

    private static Throwable denialIn(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IllegalCallerException) {
                return t;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
