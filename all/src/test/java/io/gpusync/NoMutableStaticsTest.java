package io.gpusync;

import com.tngtech.archunit.core.domain.JavaClass;
import io.gpusync.internal.ProcessServices;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No main class of the API, the backend kit or a backend (gpusync-all's modules) keeps mutable state in a
 * static field (issue 28): state that the whole process shares
 * lives in an ordinary object obtained from {@link ProcessServices}, and every other static is one of the kinds
 * listed in {@link #ALLOWED}. The one exception is {@code ProcessServices.PROCESS}, the holder itself.
 *
 * <p>A static field of a main class (nested classes included, compiler-made fields not) passes if it is
 * {@code final} and matches one of the rules, read in order; a non-final static never passes. The rules look at
 * the declared type, and at the value only where the type alone cannot tell (a collection, a bare
 * {@code Object}, an interface): the class is then initialized. A class that cannot initialize in this JVM (its
 * native library is absent) holds nothing here; its value checks are skipped and listed on the output.
 */
class NoMutableStaticsTest {
    /** The one mutable static of gpusync's main code: the per-process service object. */
    static final String THE_ONE_HOLDER = ProcessServices.class.getName() + ".PROCESS";

    /** What a static field may be. */
    record Rule(String says, Predicate<Field> allows) {
    }

    static final List<Rule> ALLOWED = List.of(
            new Rule("a constant: a primitive, a String, a boxed primitive, a Class, a Duration",
                    f -> constantType(f.getType())),
            new Rule("an enum constant of an enum whose instance fields are all final and allowed",
                    f -> f.getType().isEnum() && (!f.getType().getName().startsWith("io.gpusync.")
                            || deeplyImmutable(f.getType(), new HashSet<>()))),
            new Rule("a logger (System.Logger)",
                    f -> f.getType() == System.Logger.class),
            new Rule("a native binding: a method handle, a var handle, a field updater, a memory layout, a function"
                    + " descriptor, the linker, a symbol lookup, or a MemorySegment that names a native address"
                    + " (a function, an Objective-C selector, an upcall stub; never a buffer)",
                    f -> nativeBinding(f.getType())),
            new Rule("the class loader that loaded gpusync", f -> f.getType() == ClassLoader.class),
            new Rule("a per-thread key (ThreadLocal, ScopedValue): what it keys belongs to one thread",
                    f -> f.getType() == ThreadLocal.class || f.getType() == ScopedValue.class),
            new Rule("an unmodifiable collection or map (List.of, Set.of, Map.of, copyOf): checked on the value",
                    f -> (Collection.class.isAssignableFrom(f.getType()) || Map.class.isAssignableFrom(f.getType()))
                            && valueIs(f, NoMutableStaticsTest::unmodifiable)),
            new Rule("a sentinel: a plain new Object(), checked on the value",
                    f -> f.getType() == Object.class && valueIs(f, v -> v.getClass() == Object.class)),
            new Rule("a stateless function: a lambda or method reference that captures nothing, checked on the value",
                    f -> f.getType().isInterface() && valueIs(f, NoMutableStaticsTest::capturesNothing)),
            new Rule("an immutable gpusync object: its class (or, for an interface, the value's class) has only"
                    + " final instance fields, each allowed by these rules",
                    NoMutableStaticsTest::immutableGpusyncObject));

    private static final List<String> UNCHECKED = new ArrayList<>();

    @Test
    void everyStaticOfTheMainClassesIsAConstantALoggerANativeBindingOrImmutable() {
        List<String> findings = findings();
        if (!UNCHECKED.isEmpty()) {
            System.out.println("value checks skipped (class cannot initialize here): " + UNCHECKED);
        }
        assertThat(findings).as("static fields that are not final, or of no kind in ALLOWED:%n  %s",
                ALLOWED.stream().map(Rule::says).reduce((a, b) -> a + "\n  " + b).orElseThrow()).isEmpty();
    }

    @Test
    void theCudaBackendIsScannedToo() {
        assertThat(ArchitectureTest.importCore()).as("the CUDA backend's main classes are among those checked")
                .anyMatch(c -> c.getName().equals("io.gpusync.cuda.CudaDriverService"));
    }

    @Test
    void theRulesRejectTheShapesOfSharedState() {
        record Shapes() {
        }
        assertThat(allowedByType(java.util.concurrent.atomic.AtomicBoolean.class)).isFalse();
        assertThat(allowedByType(java.util.concurrent.ConcurrentHashMap.class)).isFalse();
        assertThat(allowedByType(long[].class)).isFalse();
        assertThat(allowedByType(java.lang.ref.Cleaner.class)).isFalse();
        assertThat(allowedByType(java.util.concurrent.ScheduledThreadPoolExecutor.class)).isFalse();
        assertThat(unmodifiable(new java.util.HashMap<>())).isFalse();
        assertThat(unmodifiable(Map.of(1, "a"))).isTrue();
        assertThat(unmodifiable(List.copyOf(new ArrayList<>(List.of(1))))).isTrue();
        assertThat(deeplyImmutable(Shapes.class, new HashSet<>())).isTrue();
        long captured = System.nanoTime();
        assertThat(capturesNothing((java.util.function.LongSupplier) () -> captured)).isFalse();
        assertThat(capturesNothing((java.util.function.LongSupplier) () -> 1L)).isTrue();
    }

    private static List<String> findings() {
        List<String> findings = new ArrayList<>();
        for (JavaClass c : ArchitectureTest.importCore()) {
            if (!c.getPackageName().startsWith("io.gpusync")) {
                continue;
            }
            for (Field f : load(c.getName()).getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) {
                    continue;
                }
                String name = f.getDeclaringClass().getName() + "." + f.getName();
                if (name.equals(THE_ONE_HOLDER)) {
                    continue;
                }
                if (!Modifier.isFinal(f.getModifiers())) {
                    findings.add(name + " (" + f.getType().getSimpleName() + "): not final");
                } else if (ALLOWED.stream().noneMatch(r -> r.allows().test(f))) {
                    findings.add(name + " (" + f.getType().getSimpleName() + "): " + valueDescription(f));
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

    private static boolean nativeBinding(Class<?> t) {
        return t == MethodHandle.class || t == VarHandle.class || MemoryLayout.class.isAssignableFrom(t)
                || t == FunctionDescriptor.class || t == Linker.class || t == SymbolLookup.class
                || t == MemorySegment.class || t == AtomicIntegerFieldUpdater.class
                || t == AtomicLongFieldUpdater.class || t == AtomicReferenceFieldUpdater.class;
    }

    /** Whether a field of type {@code t} is allowed without looking at a value. */
    private static boolean allowedByType(Class<?> t) {
        return constantType(t) || nativeBinding(t) || t == System.Logger.class
                || t == ThreadLocal.class || t == ScopedValue.class
                || (t.getName().startsWith("io.gpusync.") && deeplyImmutable(t, new HashSet<>()));
    }

    /** A gpusync class (or enum) whose instance fields, its superclasses' included, are final and allowed. */
    private static boolean deeplyImmutable(Class<?> t, Set<Class<?>> seen) {
        if (!t.getName().startsWith("io.gpusync.") || t.isInterface()) {
            return false;
        }
        if (!seen.add(t)) {
            return true; // already being checked further up
        }
        for (Class<?> c = t; c != null && c.getName().startsWith("io.gpusync."); c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.isSynthetic() && f.getName().startsWith("this$")) {
                    continue;
                }
                Class<?> type = f.getType();
                boolean ok = Modifier.isFinal(f.getModifiers()) && (constantType(type) || nativeBinding(type)
                        || type.isEnum() || type.getName().startsWith("io.gpusync.") && deeplyImmutable(type, seen));
                if (!ok) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean immutableGpusyncObject(Field f) {
        Class<?> t = f.getType();
        if (t.getName().startsWith("io.gpusync.") && !t.isInterface()) {
            return deeplyImmutable(t, new HashSet<>());
        }
        return t.isInterface() && t.getName().startsWith("io.gpusync.")
                && valueIs(f, v -> deeplyImmutable(v.getClass(), new HashSet<>()));
    }

    static boolean capturesNothing(Object value) {
        Class<?> c = value.getClass();
        return c.isHidden() && c.getName().contains("$$Lambda") && java.util.Arrays.stream(c.getDeclaredFields())
                .allMatch(field -> Modifier.isStatic(field.getModifiers()));
    }

    /** The JDK's unmodifiable collections: List.of/Set.of/Map.of/copyOf, and the empty ones. */
    static boolean unmodifiable(Object value) {
        String n = value.getClass().getName();
        return n.startsWith("java.util.ImmutableCollections$") || n.startsWith("java.util.Collections$Empty");
    }

    private static boolean valueIs(Field f, Predicate<Object> test) {
        Object value;
        try {
            f.setAccessible(true);
            Class.forName(f.getDeclaringClass().getName(), true, f.getDeclaringClass().getClassLoader());
            value = f.get(null);
        } catch (ExceptionInInitializerError | NoClassDefFoundError | ClassNotFoundException e) {
            UNCHECKED.add(f.getDeclaringClass().getName() + "." + f.getName());
            return true; // a class that cannot initialize here holds nothing here
        } catch (IllegalAccessException | RuntimeException e) {
            return false;
        }
        return value == null || test.test(value);
    }

    private static String valueDescription(Field f) {
        try {
            f.setAccessible(true);
            Object v = f.get(null);
            return v == null ? "null" : "holds a " + v.getClass().getName();
        } catch (Throwable t) {
            return "value unreadable: " + t;
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
