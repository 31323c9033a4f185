package io.gpusync.examples.device;

/**
 * Opens a {@link Device} of one backend. Implementations live in this package, are named
 * {@code <Backend>DeviceProvider} and have a public no-argument constructor; {@link Devices} finds them
 * reflectively, so a build without a backend's adapter still runs (on the next backend).
 */
public interface DeviceProvider {

    /** The backend id ({@code cuda}, {@code vulkan}, {@code opencl}, {@code cpu}, {@code d3d12}). */
    String backend();

    /**
     * Opens a device, or throws why not (no driver, no device, a software-only device when
     * {@link DeviceOptions#allowSoftware()} is false...). Must not leave anything open when it throws.
     */
    Device open(DeviceOptions options) throws Exception;
}
