/**
 * The CPU backend: {@link io.gpusync.cpu.CpuTimeline}, a software timeline semaphore (gpusync's embedded default
 * and the host-side model of a GPU timeline), with waiters that park threads or complete listeners on the
 * signalling thread.
 *
 * <p><b>Native boundary.</b> None: nothing here calls a driver, holds a native pointer or destroys a native handle,
 * so a waiter's {@code close()} releases nothing.
 */
package io.gpusync.cpu;
