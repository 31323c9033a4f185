package io.gpusync;

import io.gpusync.testsuite.Checkout;

import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A C string that a driver returns as a bare pointer is read through {@code io.gpusync.internal.CStrings} (libc
 * {@code strlen}, then exactly that many bytes), never with {@code getString} on a segment reinterpreted to a
 * made-up length: {@code getString} scans 8 bytes at a time and may read past the terminator, off the end of the
 * driver's allocation. The bindings' own pointer returns count as made-up lengths too: jextract types a returned
 * {@code char *} as an unbounded byte sequence. Checked on core's main sources (the text, so a chain split over
 * lines or through a local variable is caught) and on its classes (no method outside {@code CStrings} both reads a
 * string from a segment and reinterprets one or takes a pointer from a binding function).
 */
class NativeStringReadsTest {
    /** {@code .reinterpret(...)} directly followed by {@code .getString(}, across lines. */
    private static final Pattern CHAINED = Pattern.compile("\\.reinterpret\\s*\\([^;]*?\\)\\s*\\.\\s*getString\\s*\\(");
    /** {@code name = ... .reinterpret(...)}: a local or field that holds a reinterpreted segment. */
    private static final Pattern ASSIGNED = Pattern.compile("\\b(\\w+)\\s*=\\s*[^;=]*?\\.reinterpret\\s*\\(");
    /** A binding function's result read as a string directly: {@code Egl.eglQueryString(...).getString(}. */
    private static final Pattern BINDING_CHAINED = Pattern.compile(
            "\\b(?:Egl|Gles|Cuda|OpenCl|Vulkan|Libc|PFN\\w+)\\.\\w+\\s*\\([^;]*?\\)\\s*\\.\\s*getString\\s*\\(");
    /** The header classes jextract generated: their functions return a {@code char *} as an unbounded segment. */
    private static final Set<String> HEADER_CLASSES = Set.of("Egl", "Gles", "Cuda", "OpenCl", "Vulkan", "Libc");

    @Test
    void noMainSourceReadsAStringFromASegmentReinterpretedToAMadeUpLength() throws IOException {
        Path main = Checkout.root();
        List<String> found = new ArrayList<>();
        List<Path> sources = new ArrayList<>();
        for (Path root : Checkout.libraryMainSources()) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(p -> p.toString().endsWith(".java")).sorted().forEach(sources::add);
            }
        }
        assertThat(sources).as("the main sources of the API, the kit and the backends").hasSizeGreaterThan(50);
        for (Path file : sources) {
            String text = Files.readString(file);
            Matcher chained = CHAINED.matcher(text);
            while (chained.find()) {
                found.add(main.relativize(file) + ":" + line(text, chained.start()) + ": " + chained.group());
            }
            Matcher fromBinding = BINDING_CHAINED.matcher(text);
            while (fromBinding.find()) {
                found.add(main.relativize(file) + ":" + line(text, fromBinding.start()) + ": " + fromBinding.group());
            }
            Matcher assigned = ASSIGNED.matcher(text);
            while (assigned.find()) {
                Matcher use = Pattern.compile("\\b" + Pattern.quote(assigned.group(1)) + "\\s*\\.\\s*getString\\s*\\(")
                        .matcher(text);
                if (use.find(assigned.end())) {
                    found.add(main.relativize(file) + ":" + line(text, use.start()) + ": " + assigned.group(1)
                            + " is reinterpreted at line " + line(text, assigned.start()) + ", then read with getString");
                }
            }
        }
        assertThat(found).as("read these with CStrings.read (exact length) instead").isEmpty();
    }

    @Test
    void onlyCStringsReadsAStringWhereItReinterpretsOrTakesABindingsPointer() {
        List<String> found = new ArrayList<>();
        for (var type : ArchitectureTest.importCore()) {
            if (type.getName().equals("io.gpusync.internal.CStrings")) {
                continue;
            }
            for (JavaCodeUnit unit : type.getCodeUnits()) {
                if (calls(unit, "getString") && (calls(unit, "reinterpret") || takesABindingPointer(unit))) {
                    found.add(unit.getFullName());
                }
            }
        }
        assertThat(found).as("methods that read a string and reinterpret a segment or take a binding's pointer:"
                        + " use CStrings.read")
                .isEmpty();
    }

    private static boolean calls(JavaCodeUnit unit, String method) {
        for (JavaMethodCall call : unit.getMethodCallsFromSelf()) {
            if (call.getTargetOwner().isEquivalentTo(MemorySegment.class) && call.getName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code unit} calls a generated binding function that returns a pointer. */
    private static boolean takesABindingPointer(JavaCodeUnit unit) {
        for (JavaMethodCall call : unit.getMethodCallsFromSelf()) {
            var owner = call.getTargetOwner();
            if (owner.getPackageName().startsWith("io.gpusync.bindings")
                    && (HEADER_CLASSES.contains(owner.getSimpleName()) || owner.getSimpleName().startsWith("PFN"))
                    && call.getTarget().getRawReturnType().isEquivalentTo(MemorySegment.class)) {
                return true;
            }
        }
        return false;
    }

    private static int line(String text, int offset) {
        return (int) text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }
}
