package io.gpusync.reactor;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Requires;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adapter's module descriptor says what a JPMS user gets: it exports only {@code io.gpusync.reactor}; it
 * passes on the contract and Reactor ({@code requires transitive}) but reads Netty and Micrometer only
 * {@code static} (optional: the EPOLL path, the metrics binder and the observations) and the bindings without {@code transitive}
 * — which holds because no public member of its public types names a binding type, and a Netty type only where
 * the caller brings Netty anyway ({@link #NETTY_ON_PURPOSE}: sharing a server's loops).
 */
class EngineModuleTest {
    private static final Path CLASSES = classes();

    /** The public members that take a Netty type on purpose: the caller already has Netty's loops to share. */
    static final Set<String> NETTY_ON_PURPOSE = Set.of("io.gpusync.reactor.SyncEngine$Builder.eventLoopGroup");

    @Test
    void exportsOnlyTheReactorPackage() throws IOException {
        ModuleDescriptor module = descriptor();
        assertThat(module.name()).isEqualTo("io.gpusync.reactor");
        assertThat(module.exports()).extracting(ModuleDescriptor.Exports::source).containsExactly("io.gpusync.reactor");
        assertThat(module.exports()).noneMatch(ModuleDescriptor.Exports::isQualified);
        assertThat(module.opens()).isEmpty();
    }

    @Test
    void readsNettyAndMicrometerOnlyStaticallyAndTheBindingsNonTransitively() throws IOException {
        Map<String, Set<Requires.Modifier>> requires = descriptor().requires().stream()
                .collect(Collectors.toMap(Requires::name, Requires::modifiers));
        List<String> netty = requires.keySet().stream().filter(n -> n.startsWith("io.netty")).toList();
        assertThat(netty).as("the Netty modules the EPOLL path reads").isNotEmpty();
        for (String optional : Stream.concat(netty.stream(), Stream.of("micrometer.core", "micrometer.observation",
                "micrometer.commons")).toList()) {
            assertThat(requires.get(optional)).as("requires %s", optional).containsExactly(Requires.Modifier.STATIC);
        }
        assertThat(requires.get("io.gpusync.api")).contains(Requires.Modifier.TRANSITIVE);
        assertThat(requires.get("reactor.core")).contains(Requires.Modifier.TRANSITIVE);
        assertThat(requires.get("io.gpusync.bindings.libc")).as("requires io.gpusync.bindings.libc")
                .isNotNull().doesNotContain(Requires.Modifier.TRANSITIVE, Requires.Modifier.STATIC);
    }

    @Test
    void noPublicSignatureNamesANettyOrBindingType() throws IOException {
        List<String> offending = new ArrayList<>();
        for (Class<?> type : publicTypes()) {
            for (Method m : type.getDeclaredMethods()) {
                check(type, m, m.getReturnType(), offending);
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                check(type, c, void.class, offending);
            }
            for (Field f : type.getDeclaredFields()) {
                if (Modifier.isPublic(f.getModifiers()) || Modifier.isProtected(f.getModifiers())) {
                    String member = type.getName() + "." + f.getName();
                    named(f.getType()).filter(n -> hidden(member, n)).ifPresent(n -> offending.add(member + ": " + n));
                }
            }
        }
        assertThat(offending).as("public members naming types a module reader may not have").isEmpty();
    }

    private static void check(Class<?> type, Executable e, Class<?> returned, List<String> offending) {
        if (!Modifier.isPublic(e.getModifiers()) && !Modifier.isProtected(e.getModifiers())) {
            return;
        }
        String member = type.getName() + "." + (e instanceof Constructor<?> ? "<init>" : e.getName());
        Stream.concat(Stream.of(returned), Stream.of(e.getParameterTypes()))
                .map(EngineModuleTest::named).flatMap(java.util.Optional::stream).filter(n -> hidden(member, n))
                .forEach(n -> offending.add(member + ": " + n));
    }

    private static java.util.Optional<String> named(Class<?> c) {
        Class<?> k = c;
        while (k.isArray()) {
            k = k.getComponentType();
        }
        return k.isPrimitive() ? java.util.Optional.empty() : java.util.Optional.of(k.getName());
    }

    private static boolean hidden(String member, String type) {
        return type.startsWith("io.gpusync.bindings.")
                || type.startsWith("io.netty.") && !NETTY_ON_PURPOSE.contains(member);
    }

    /** The public classes of io.gpusync.reactor whose enclosing classes are public too. */
    private static List<Class<?>> publicTypes() throws IOException {
        Path dir = CLASSES.resolve("io/gpusync/reactor");
        Function<Path, Class<?>> load = p -> {
            String name = "io.gpusync.reactor." + p.getFileName().toString().replace(".class", "");
            try {
                return Class.forName(name, false, EngineModuleTest.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new AssertionError(name, e);
            }
        };
        try (Stream<Path> files = Files.list(dir)) {
            List<Class<?>> types = files.filter(p -> p.toString().endsWith(".class")).map(load)
                    .filter(EngineModuleTest::publiclyReachable).toList();
            assertThat(types).as("public types of io.gpusync.reactor").isNotEmpty();
            return types;
        }
    }

    private static boolean publiclyReachable(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isSynthetic()) {
                return false;
            }
        }
        return true;
    }

    private static ModuleDescriptor descriptor() throws IOException {
        try (InputStream in = Files.newInputStream(CLASSES.resolve("module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }

    /** The adapter's compiled main classes: this module's target/classes, or the root of its jar. */
    private static Path classes() {
        try {
            Path location = Path.of(SyncEngine.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            // a packaged run (the H200 suite runs from jars): the jar's file system, open for the JVM's life
            return Files.isDirectory(location) ? location
                    : java.nio.file.FileSystems.newFileSystem(location).getPath("/");
        } catch (URISyntaxException | IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
