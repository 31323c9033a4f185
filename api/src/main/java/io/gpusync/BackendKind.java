package io.gpusync;

/**
 * The API a {@link SyncPoint} or {@link SyncWaiter} belongs to, for routing decisions on the consumer
 * side (gpu-handle-types' {@code BackendKind}). {@link #CPU} covers host-side points ({@link SyncPoint#CPU},
 * {@link SyncPoint#NOOP}, {@link SyncPoint.HostTimeline}); {@link #LINUX} covers Linux fds
 * ({@link SyncPoint.SyncFd}).
 */
public enum BackendKind {
    CPU, WGPU, VULKAN, D3D12, D3D11, METAL, OPENGL, OPENCL, CUDA, LINUX
}
