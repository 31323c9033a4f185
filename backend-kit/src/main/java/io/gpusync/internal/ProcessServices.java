package io.gpusync.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The per-process service object: owns the state that every gpusync component in this JVM must share because
 * the driver it wraps is shared (one CUDA driver, one PoCL, one table of probed libraries). Each backend keeps
 * such state in an ordinary object of its own type, created here on first use; nothing else in gpusync's main
 * code is a mutable static.
 *
 * <p><b>Threading.</b> {@link #service} is thread-safe and returns the same object for a type for the life of the
 * process; it blocks only while another thread creates a service, and a service's constructor may ask for other
 * services (reentrant). Services live as long as the process: one that owns threads makes them daemons. A service
 * that is {@link AutoCloseable} is closed at shutdown (a JVM shutdown hook, registered with the first such service),
 * the last created first; what it owns must then stop, never wait for the driver.
 *
 * <p>Internal: not exported to applications.
 */
public final class ProcessServices {
    private static final ProcessServices PROCESS = new ProcessServices(); // the one holder of shared state

    private final ConcurrentHashMap<Class<?>, Object> services = new ConcurrentHashMap<>();
    private final Object creating = new Object();
    /** The services to close at shutdown, in creation order (guarded by {@link #creating}). */
    private final List<AutoCloseable> closeAtShutdown = new ArrayList<>();

    private ProcessServices() {
    }

    /** This process's services. */
    public static ProcessServices get() {
        return PROCESS;
    }

    /** The service of {@code type}: made by {@code create} on first use, the same object ever after. */
    public <T> T service(Class<T> type, Supplier<? extends T> create) {
        Object s = services.get(type);
        if (s == null) {
            synchronized (creating) { // one creation at a time; a constructor asking for another service re-enters
                s = services.get(type);
                if (s == null) {
                    s = java.util.Objects.requireNonNull(create.get(), "service " + type.getName());
                    services.put(type, s);
                    if (s instanceof AutoCloseable c) {
                        closeAtShutdown(c);
                    }
                }
            }
        }
        return type.cast(s);
    }

    private void closeAtShutdown(AutoCloseable service) { // holds creating
        if (closeAtShutdown.isEmpty()) {
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(this::closeAll, "gpusync-services-shutdown"));
            } catch (IllegalStateException shuttingDown) {
                return; // the JVM is already shutting down: nothing will be closed, nothing needs to be
            }
        }
        closeAtShutdown.add(service);
    }

    /** Closes the closeable services, the last created first; one that throws does not keep the others open. */
    private void closeAll() {
        List<AutoCloseable> all;
        synchronized (creating) {
            all = new ArrayList<>(closeAtShutdown);
        }
        for (AutoCloseable c : all.reversed()) {
            try {
                c.close();
            } catch (Exception | Error e) {
                System.getLogger(ProcessServices.class.getName()).log(System.Logger.Level.WARNING,
                        "closing " + c + " at shutdown failed", e);
            }
        }
    }
}
