package io.gpusync.examples.device;

/** The {@link SimulatedDevice}: always available. */
public final class CpuDeviceProvider implements DeviceProvider {
    @Override
    public String backend() {
        return "cpu";
    }

    @Override
    public Device open(DeviceOptions options) {
        return new SimulatedDevice(options.kernels(), options.queues());
    }
}
