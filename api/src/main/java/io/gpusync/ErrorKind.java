package io.gpusync;

/**
 * How a caller should react to a {@link SyncException}.
 *
 * <ul>
 *   <li>{@link #CANCELLED}: the wait was cancelled or its engine disposed; nothing is wrong with the GPU.</li>
 *   <li>{@link #RECOVERABLE}: this wait failed (a timeout, a transient driver code); retrying may succeed.</li>
 *   <li>{@link #CONFIGURATION}: the request cannot work as made (missing driver, unsupported feature,
 *       invalid argument); retrying the same call fails the same way.</li>
 *   <li>{@link #FATAL}: the device or context is gone (device lost, sticky CUDA error); every later wait on
 *       it fails too, so stop polling it.</li>
 * </ul>
 */
public enum ErrorKind {
    CANCELLED, RECOVERABLE, CONFIGURATION, FATAL
}
