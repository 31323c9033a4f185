package io.gpusync.examples.device;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Backend discovery: CUDA, then Vulkan, then OpenCL, then the simulated device on the CPU timeline (which
 * always works). Each backend's adapter is looked up by name ({@code io.gpusync.examples.device.<Name>DeviceProvider}),
 * so the demo builds and runs whatever backends this build has; every backend tried and skipped leaves a
 * note saying why.
 */
public final class Devices {
    /** The backends in order of preference. */
    public static final List<String> ORDER = List.of("cuda", "vulkan", "opencl", "cpu");
    /** Backends opened only by name, never by discovery ({@code d3d12}: vkd3d runs on the device {@code vulkan} finds). */
    public static final List<String> BY_NAME_ONLY = List.of("d3d12");

    private Devices() {
    }

    /**
     * The result of discovery.
     *
     * @param device the device opened
     * @param notes  one line per backend tried before it and why it was skipped
     */
    public record Discovery(Device device, List<String> notes) {
    }

    /**
     * Opens the first backend that works, in {@link #ORDER}, skipping software implementations of GPU APIs.
     * With {@code backend} other than {@code auto}, opens exactly that one (software implementations
     * allowed) or throws why not.
     *
     * @throws IllegalArgumentException for an unknown backend name
     * @throws IllegalStateException    when the backend asked for cannot be opened
     */
    public static Discovery open(String backend, DeviceOptions options) {
        String wanted = backend.toLowerCase(Locale.ROOT);
        if (!wanted.equals("auto")) {
            if (!ORDER.contains(wanted) && !BY_NAME_ONLY.contains(wanted)) {
                throw new IllegalArgumentException("unknown backend '" + backend + "': one of auto, " + String.join(", ", ORDER)
                        + ", " + String.join(", ", BY_NAME_ONLY));
            }
            try {
                return new Discovery(provider(wanted).open(options.withAllowSoftware(true)), List.of());
            } catch (Exception e) {
                throw new IllegalStateException("backend " + wanted + " is not available: " + reason(e), e);
            }
        }
        List<String> notes = new ArrayList<>();
        for (String name : ORDER) {
            try {
                return new Discovery(provider(name).open(options.withAllowSoftware(false)), List.copyOf(notes));
            } catch (Exception | LinkageError e) {
                notes.add(name + ": " + reason(e));
            }
        }
        throw new IllegalStateException("no backend could be opened: " + notes); // unreachable: cpu always opens
    }

    /** The provider of {@code backend}, found by name. */
    static DeviceProvider provider(String backend) throws ReflectiveOperationException {
        String cls = Devices.class.getPackageName() + "." + switch (backend) {
            case "cuda" -> "Cuda";
            case "vulkan" -> "Vulkan";
            case "opencl" -> "OpenCl";
            case "d3d12" -> "D3D12";
            default -> "Cpu";
        } + "DeviceProvider";
        try {
            return (DeviceProvider) Class.forName(cls).getConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new ClassNotFoundException("no adapter in this build (" + cls + ")", e);
        }
    }

    private static String reason(Throwable e) {
        Throwable t = e instanceof InvocationTargetException ite && ite.getCause() != null ? ite.getCause() : e;
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }
}
