package io.gpusync.benchmarks.jmh;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ThreadFactory;

/**
 * The engine's own hand-off, reactor-adapter's package-private {@code io.gpusync.reactor.WaiterThreads}, reached
 * through method handles (the benchmarks run on the class path, where its package is open): the real code, not a
 * copy, with no public surface added for the benchmark. Constant method handles are inlined by the JIT.
 */
final class LockFreeHandOff implements WaiterHandOffBenchmark.HandOff {
    private static final MethodHandle NEW;
    private static final MethodHandle TRY_START;
    private static final MethodHandle SHUTDOWN;

    static {
        try {
            Class<?> c = Class.forName("io.gpusync.reactor.WaiterThreads");
            MethodHandles.Lookup in = MethodHandles.privateLookupIn(c, MethodHandles.lookup());
            NEW = in.findConstructor(c, MethodType.methodType(void.class, int.class, long.class, ThreadFactory.class))
                    .asType(MethodType.methodType(Object.class, int.class, long.class, ThreadFactory.class));
            TRY_START = in.findVirtual(c, "tryStart", MethodType.methodType(boolean.class, Runnable.class))
                    .asType(MethodType.methodType(boolean.class, Object.class, Runnable.class));
            SHUTDOWN = in.findVirtual(c, "shutdown", MethodType.methodType(void.class))
                    .asType(MethodType.methodType(void.class, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Object threads;

    LockFreeHandOff(int maxThreads, long keepAliveNanos, ThreadFactory factory) {
        try {
            this.threads = (Object) NEW.invokeExact(maxThreads, keepAliveNanos, factory);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean tryStart(Runnable task) {
        try {
            return (boolean) TRY_START.invokeExact(threads, task);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void shutdown() {
        try {
            SHUTDOWN.invokeExact(threads);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
