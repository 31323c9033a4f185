package io.gpusync.reactor;

import io.gpusync.internal.ProcessServices;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What this process has found out about its Netty that every engine shares: whether netty-common links (an old one
 * lacking the methods {@link NonBlockingThreads} calls counts as absent once a call fails), and whether the warning
 * about native access denied to epoll, or about epoll modules left unresolved on the module path, has been logged
 * (once per process). One instance per process, held by
 * {@link ProcessServices}. Thread-safe, never blocks.
 */
final class NettyFindings {
    /** Whether netty-common is there and links. */
    volatile boolean commonLinks = NettyPresence.COMMON;
    /** Set by whoever logs the native-access warning. */
    final AtomicBoolean warnedDeniedAccess = new AtomicBoolean();
    /** Set by whoever checks for Netty modules on the module path but unresolved ({@link UnresolvedNetty}). */
    final AtomicBoolean checkedModulePath = new AtomicBoolean();

    static NettyFindings inThisProcess() {
        return ProcessServices.get().service(NettyFindings.class, NettyFindings::new);
    }
}
