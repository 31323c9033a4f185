package io.gpusync.reactor;

import reactor.core.scheduler.Schedulers;

/**
 * Which threads must never block: Reactor's {@link reactor.core.scheduler.NonBlocking} threads
 * ({@link Schedulers#isInNonBlockingThread()}: {@code parallel}, Reactor Netty's loops) and Netty's event loops
 * (BlockHound's rule for Netty: a {@code FastThreadLocalThread} that does not permit blocking calls, or any thread
 * running a Netty event executor, the engine's own loops included). Netty is looked at only when it is there.
 */
final class NonBlockingThreads {
    private NonBlockingThreads() {
    }

    /** Whether the calling thread must not block. */
    static boolean isCurrent() {
        if (Schedulers.isInNonBlockingThread()) {
            return true;
        }
        NettyFindings netty = NettyFindings.inThisProcess();
        if (netty.commonLinks) {
            try {
                return NettyThreads.inEventLoop();
            } catch (LinkageError tooOld) { // an old netty-common without the methods used here counts as absent
                netty.commonLinks = false;
            }
        }
        return false;
    }

    /** The Netty side, in a class of its own: loaded only when netty-common (4.1 or 4.2) is on the class path. */
    private static final class NettyThreads {
        static boolean inEventLoop() {
            if (Thread.currentThread() instanceof io.netty.util.concurrent.FastThreadLocalThread f
                    && !f.permitBlockingCalls()) {
                return true;
            }
            // a thread without Netty's thread-local map runs no Netty executor; asking would give it one
            return io.netty.util.internal.InternalThreadLocalMap.getIfSet() != null
                    && io.netty.util.internal.ThreadExecutorMap.currentExecutor() != null;
        }
    }
}
