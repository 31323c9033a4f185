package io.gpusync.examples.device;

/**
 * What a {@link DeviceProvider} needs to open a device.
 *
 * @param kernels       the simulated device's kernel-duration model
 * @param queues        the simulated device's in-order queues
 * @param allowSoftware whether a CPU implementation of a GPU API (PoCL, lavapipe, llvmpipe) counts as a
 *                      device; false for automatic discovery (which then prefers gpusync's own CPU
 *                      timeline), true when a backend is asked for by name
 */
public record DeviceOptions(KernelModel kernels, int queues, boolean allowSoftware) {
    /** The defaults: {@link KernelModel#DEFAULT}, 4 queues, hardware devices only. */
    public static final DeviceOptions DEFAULT = new DeviceOptions(KernelModel.DEFAULT, 4, false);

    public DeviceOptions withAllowSoftware(boolean allow) {
        return new DeviceOptions(kernels, queues, allow);
    }
}
