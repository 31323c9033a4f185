package io.gpusync.reactor;

import io.gpusync.SyncNotSupportedException;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;
import java.util.Properties;

/**
 * Which Netty, if any, is on the class (or module) path — found without loading a Netty class, so that it
 * works with none or with Netty 4.1. The {@link WaitPath#EPOLL} path needs Netty 4.2
 * ({@code io.netty.channel.IoEventLoopGroup}, the line of reactor-netty 1.3 and Spring Boot 4), its epoll
 * transport and the native epoll library for this machine; every other path needs no Netty at all.
 */
final class NettyPresence {
    /** The fix, for error messages. */
    static final String EPOLL_HOW_TO = "The EPOLL wait path needs Netty 4.2 (reactor-netty 1.3, Spring Boot 4) with"
            + " io.netty:netty-transport-classes-epoll and io.netty:netty-transport-native-epoll (classifier"
            + " linux-x86_64 or linux-aarch_64), e.g. a Reactor Netty server's loops from"
            + " LoopResources.create(name, workers, true).onServer(true). Without eventLoopGroup(...), the engine"
            + " needs no Netty: fd waits then take the BLOCKING path.";

    private static final ClassLoader LOADER = NettyPresence.class.getClassLoader();
    /** Netty's common classes (4.1 or 4.2): its event loops' threads can be recognised. */
    static final boolean COMMON = present("io.netty.util.concurrent.FastThreadLocalThread");
    /** Netty 4.2's transport API (absent from 4.1). */
    static final boolean TRANSPORT_4_2 = present("io.netty.channel.IoEventLoopGroup");
    /** The epoll transport's classes (of 4.2: EpollIoHandler is new in 4.2). */
    static final boolean EPOLL_CLASSES = TRANSPORT_4_2 && present("io.netty.channel.epoll.EpollIoHandler");

    private NettyPresence() {
    }

    /** Whether the engine can run its own epoll loops here: Netty 4.2, its epoll transport and native epoll. */
    static boolean epollUsable() {
        if (!EPOLL_CLASSES) {
            UnresolvedNetty.warnOnce();
            return false;
        }
        if (NettyLoops.epollAvailable()) {
            return true;
        }
        UnresolvedNetty.warnOnce();
        if (deniedNativeAccess(NettyLoops.epollUnavailabilityCause())
                && NettyFindings.inThisProcess().warnedDeniedAccess.compareAndSet(false, true)) {
            System.getLogger(SyncEngine.class.getName()).log(System.Logger.Level.WARNING, "Netty's native epoll"
                    + " was denied native access, so gpusync's fd waits take the BLOCKING path instead of EPOLL."
                    + " Start java with --enable-native-access=ALL-UNNAMED (class path) or add io.netty.common to"
                    + " the --enable-native-access list of gpusync's modules (module path).");
        }
        return false;
    }

    private static boolean deniedNativeAccess(Throwable error) {
        for (Throwable t = error; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof IllegalCallerException) {
                return true;
            }
            for (Throwable s : t.getSuppressed()) {
                if (s instanceof IllegalCallerException || s.getCause() instanceof IllegalCallerException) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Checks a user's event loop group for {@link SyncEngine.Builder#eventLoopGroup}.
     *
     * @throws SyncNotSupportedException unless it is a Netty 4.2 IoEventLoopGroup running epoll
     */
    static void requireEpollGroup(Object group) {
        if (!TRANSPORT_4_2) {
            throw new SyncNotSupportedException(null, "an event loop group was given to gpusync, but Netty "
                    + transportVersion() + " is on the class path and gpusync shares only Netty 4.2 event loops"
                    + " (io.netty.channel.IoEventLoopGroup is missing). " + EPOLL_HOW_TO);
        }
        if (!EPOLL_CLASSES) {
            throw new SyncNotSupportedException(null, "an event loop group was given to gpusync, but Netty's epoll"
                    + " transport (io.netty:netty-transport-classes-epoll " + transportVersion()
                    + ") is not on the class path. " + EPOLL_HOW_TO);
        }
        NettyLoops.requireEpollGroup((io.netty.channel.EventLoopGroup) group);
    }

    /** The version of netty-transport found, {@code "(none)"}, or {@code "(unknown version)"}. */
    static String transportVersion() {
        if (!present("io.netty.channel.EventLoopGroup")) {
            return "(none)";
        }
        try {
            Enumeration<URL> files = LOADER != null ? LOADER.getResources("META-INF/io.netty.versions.properties")
                    : ClassLoader.getSystemResources("META-INF/io.netty.versions.properties");
            while (files.hasMoreElements()) {
                Properties p = new Properties();
                try (InputStream in = files.nextElement().openStream()) {
                    p.load(in);
                }
                String v = p.getProperty("netty-transport.version");
                if (v != null) {
                    return v;
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through: the version is only for the message
        }
        return "(unknown version)";
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, LOADER);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
