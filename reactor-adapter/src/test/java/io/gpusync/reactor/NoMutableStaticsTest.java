package io.gpusync.reactor;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No main class of the engine keeps mutable state in a static field (issue 28): what the process shares lives
 * in a {@code io.gpusync.internal.ProcessServices} service. The rules are those of core's {@code io.gpusync.NoMutableStaticsTest}
 * (kept in step with it), less the native-binding kinds the engine does not use: a static field passes if it is
 * {@code final} and one of {@link #ALLOWED}.
 */
class NoMutableStaticsTest {
    record Rule(String says, Predicate<Field> allows) {
    }

    static final List<Rule> ALLOWED = List.of(
            new Rule("a constant: a primitive, a String, a boxed primitive, a Class, a Duration",
                    f -> constantType(f.getType())),
            new Rule("an enum constant", f -> f.getType().isEnum()),
            new Rule("a logger (System.Logger)", f -> f.getType() == System.Logger.class),
            new Rule("a method handle, a var handle or a field updater",
                    f -> f.getType() == MethodHandle.class || f.getType() == VarHandle.class
                            || f.getType() == AtomicIntegerFieldUpdater.class
                            || f.getType() == AtomicLongFieldUpdater.class
                            || f.getType() == AtomicReferenceFieldUpdater.class),
            new Rule("the class loader that loaded gpusync", f -> f.getType() == ClassLoader.class),
            new Rule("a per-thread key (ThreadLocal, ScopedValue): what it keys belongs to one thread",
                    f -> f.getType() == ThreadLocal.class || f.getType() == ScopedValue.class),
            new Rule("an unmodifiable collection or map (List.of, Set.of, Map.of, copyOf): checked on the value",
                    f -> (Collection.class.isAssignableFrom(f.getType()) || Map.class.isAssignableFrom(f.getType()))
                            && value(f).getClass().getName().startsWith("java.util.ImmutableCollections$")),
            new Rule("a stateless function: a lambda or method reference that captures nothing, checked on the value",
                    f -> f.getType().isInterface() && capturesNothing(value(f))),
            new Rule("a marker Throwable that records nothing (no stack trace, suppression off): checked on the value",
                    f -> Throwable.class.isAssignableFrom(f.getType()) && recordsNothing((Throwable) value(f))),
            new Rule("a stateless gpusync object: the value's class, a gpusync class, has no instance fields",
                    f -> value(f).getClass().getName().startsWith("io.gpusync.")
                            && Arrays.stream(value(f).getClass().getDeclaredFields())
                            .allMatch(field -> Modifier.isStatic(field.getModifiers()))));

    @Test
    void everyStaticOfTheEnginesMainClassesIsAConstantALoggerAHandleOrImmutable() {
        List<String> findings = findings();
        assertThat(findings).as("static fields that are not final, or of no kind in ALLOWED").isEmpty();
    }

    private static boolean recordsNothing(Throwable t) {
        t.addSuppressed(new Throwable("probe"));
        return t.getSuppressed().length == 0 && t.getStackTrace().length == 0;
    }

    private static List<String> findings() {
        List<String> findings = new ArrayList<>();
        for (Class<?> c : mainClasses()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) {
                    continue;
                }
                String name = c.getName() + "." + f.getName();
                if (!Modifier.isFinal(f.getModifiers())) {
                    findings.add(name + " (" + f.getType().getSimpleName() + "): not final");
                } else if (ALLOWED.stream().noneMatch(r -> r.allows().test(f))) {
                    findings.add(name + " (" + f.getType().getSimpleName() + "): holds a "
                            + value(f).getClass().getName());
                }
            }
        }
        return findings;
    }

    private static boolean constantType(Class<?> t) {
        return t.isPrimitive() || t == String.class || t == Class.class || t == Duration.class
                || t == Integer.class || t == Long.class || t == Boolean.class || t == Double.class
                || t == Float.class || t == Short.class || t == Byte.class || t == Character.class;
    }

    static boolean capturesNothing(Object value) {
        Class<?> c = value.getClass();
        return c.isHidden() && c.getName().contains("$$Lambda") && Arrays.stream(c.getDeclaredFields())
                .allMatch(field -> Modifier.isStatic(field.getModifiers()));
    }

    private static Object value(Field f) {
        try {
            f.setAccessible(true);
            Object v = f.get(null);
            return v == null ? new Object() { } : v;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The engine's main classes, from target/classes or its jar. */
    private static List<Class<?>> mainClasses() {
        Path location;
        try {
            location = Path.of(GpuSync.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        try (java.nio.file.FileSystem jar = Files.isDirectory(location) ? null
                : java.nio.file.FileSystems.newFileSystem(location);
             Stream<Path> files = Files.walk(jar == null ? location : jar.getPath("/"))) {
            Path root = jar == null ? location : jar.getPath("/");
            return files.map(p -> root.relativize(p).toString())
                    .filter(p -> p.endsWith(".class") && p.startsWith("io/gpusync/reactor/"))
                    .<Class<?>>map(p -> load(p.substring(0, p.length() - ".class".length()).replace('/', '.')))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, NoMutableStaticsTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }
}
