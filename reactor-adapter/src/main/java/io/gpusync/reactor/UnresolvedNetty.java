package io.gpusync.reactor;

import java.io.File;
import java.lang.module.ModuleFinder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * On the module path, gpusync reads Netty's modules {@code requires static}: the JVM resolves them only when
 * something else requires them or {@code --add-modules} names them, so an application whose own modules do
 * not require Netty's epoll transport has its jars on the module path and still no {@code EPOLL} path. This
 * class finds that case — the modules are on the module path but not in gpusync's layer — and names the flags
 * that resolve them, for a warning logged once per process when an engine starts without epoll. Never blocks
 * (it reads the module path's descriptors once); thread-safe.
 */
final class UnresolvedNetty {
    /** Netty's epoll classes, and its native library for this machine. */
    static final List<String> EPOLL_MODULES = List.of("io.netty.transport.classes.epoll",
            "io.netty.transport.epoll.linux." + ("aarch64".equals(System.getProperty("os.arch")) ? "aarch_64"
                    : "x86_64"));

    private UnresolvedNetty() {
    }

    /**
     * The {@link #EPOLL_MODULES} that are on the module path but were not resolved into gpusync's layer; empty on
     * the class path, or when there are none.
     */
    static List<String> onTheModulePathButNotResolved() {
        Module self = UnresolvedNetty.class.getModule();
        String modulePath = System.getProperty("jdk.module.path");
        if (!self.isNamed() || self.getLayer() == null || modulePath == null || modulePath.isBlank()) {
            return List.of();
        }
        ModuleFinder finder = ModuleFinder.of(Arrays.stream(modulePath.split(File.pathSeparator))
                .filter(p -> !p.isBlank()).map(Path::of).toArray(Path[]::new));
        List<String> missing = new ArrayList<>();
        for (String name : EPOLL_MODULES) {
            if (self.getLayer().findModule(name).isEmpty() && finder.find(name).isPresent()) {
                missing.add(name);
            }
        }
        return missing;
    }

    /** The warning for {@code missing} (see {@link #onTheModulePathButNotResolved()}). */
    static String warning(List<String> missing) {
        return "Netty's epoll transport is on the module path but not resolved (" + String.join(", ", missing)
                + "): gpusync reads it only if present, so fd waits take the BLOCKING path instead of EPOLL. Add"
                + " --add-modules " + String.join(",", EPOLL_MODULES) + " to the java command, and io.netty.common"
                + " to its --enable-native-access list.";
    }

    /** Logs {@link #warning} once per process if Netty's epoll modules are on the module path but unresolved. */
    static void warnOnce() {
        NettyFindings findings = NettyFindings.inThisProcess();
        if (findings.checkedModulePath.compareAndSet(false, true)) {
            List<String> missing = onTheModulePathButNotResolved();
            if (!missing.isEmpty()) {
                System.getLogger(SyncEngine.class.getName()).log(System.Logger.Level.WARNING, warning(missing));
            }
        }
    }
}
