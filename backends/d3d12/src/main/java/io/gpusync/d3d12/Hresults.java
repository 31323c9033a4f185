package io.gpusync.d3d12;

import io.gpusync.BackendKind;
import io.gpusync.DeviceLostException;
import io.gpusync.ErrorKind;
import io.gpusync.SyncBackendException;
import io.gpusync.SyncException;

import java.util.Map;

/**
 * {@code HRESULT} names and their mapping to gpusync's exceptions: the DXGI device-removal family
 * ({@code DXGI_ERROR_DEVICE_REMOVED/HUNG/RESET}, {@code DRIVER_INTERNAL_ERROR}) → {@link DeviceLostException};
 * {@code E_OUTOFMEMORY} → {@link ErrorKind#RECOVERABLE}; bad arguments and missing interfaces →
 * {@link ErrorKind#CONFIGURATION}; anything else → {@link ErrorKind#FATAL}; always with the code and its name.
 * Stateless, thread-safe.
 */
final class Hresults {
    static final int S_OK = 0;
    static final int E_INVALIDARG = 0x80070057;
    static final int DXGI_ERROR_DEVICE_REMOVED = 0x887A0005;
    static final int DXGI_ERROR_DEVICE_HUNG = 0x887A0006;
    static final int DXGI_ERROR_DEVICE_RESET = 0x887A0007;
    static final int DXGI_ERROR_DRIVER_INTERNAL_ERROR = 0x887A0020;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(S_OK, "S_OK"),
            Map.entry(1, "S_FALSE"),
            Map.entry(0x80004001, "E_NOTIMPL"),
            Map.entry(0x80004002, "E_NOINTERFACE"),
            Map.entry(0x80004003, "E_POINTER"),
            Map.entry(0x80004005, "E_FAIL"),
            Map.entry(0x8007000E, "E_OUTOFMEMORY"),
            Map.entry(E_INVALIDARG, "E_INVALIDARG"),
            Map.entry(0x887A0001, "DXGI_ERROR_INVALID_CALL"),
            Map.entry(0x887A0004, "DXGI_ERROR_UNSUPPORTED"),
            Map.entry(DXGI_ERROR_DEVICE_REMOVED, "DXGI_ERROR_DEVICE_REMOVED"),
            Map.entry(DXGI_ERROR_DEVICE_HUNG, "DXGI_ERROR_DEVICE_HUNG"),
            Map.entry(DXGI_ERROR_DEVICE_RESET, "DXGI_ERROR_DEVICE_RESET"),
            Map.entry(DXGI_ERROR_DRIVER_INTERNAL_ERROR, "DXGI_ERROR_DRIVER_INTERNAL_ERROR"));

    private Hresults() {
    }

    static boolean failed(int hr) {
        return hr < 0;
    }

    /** The symbolic name of {@code hr}, or {@code HRESULT(0x…)}. */
    static String name(int hr) {
        String n = NAMES.get(hr);
        return n != null ? n : "HRESULT(0x" + Integer.toHexString(hr).toUpperCase(java.util.Locale.ROOT) + ")";
    }

    static boolean isDeviceRemoval(int hr) {
        return hr == DXGI_ERROR_DEVICE_REMOVED || hr == DXGI_ERROR_DEVICE_HUNG || hr == DXGI_ERROR_DEVICE_RESET
                || hr == DXGI_ERROR_DRIVER_INTERNAL_ERROR;
    }

    /** The exception for a failed {@code call} that returned {@code hr}. */
    static SyncException failure(int hr, String call) {
        if (isDeviceRemoval(hr)) {
            return new DeviceLostException(BackendKind.D3D12, call + " failed: the device was removed (" + name(hr)
                    + " = 0x" + Integer.toHexString(hr) + ")");
        }
        ErrorKind kind = switch (hr) {
            case 0x8007000E -> ErrorKind.RECOVERABLE;
            case E_INVALIDARG, 0x80004003, 0x80004002, 0x80004001, 0x887A0001, 0x887A0004 -> ErrorKind.CONFIGURATION;
            default -> ErrorKind.FATAL;
        };
        return new SyncBackendException(kind, BackendKind.D3D12, Integer.toUnsignedLong(hr), name(hr), call + " failed");
    }

    /** Throws {@link #failure} when {@code hr} is a failure code. */
    static void check(int hr, String call) {
        if (failed(hr)) {
            throw failure(hr, call);
        }
    }
}
