package io.gpusync.internal;

import io.gpusync.testsuite.ChildJvm;
import org.junit.jupiter.api.Test;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link CStrings} reads a driver's C string up to its terminator and not one byte further. The string under test
 * ends on the last byte of a readable page whose next page is {@code PROT_NONE} (what a guard-page allocator
 * such as Electric Fence does to every allocation): any read past the terminator faults.
 */
class CStringsTest {
    /** Lengths 0..17 cover every position of the terminator within an 8-byte word. */
    private static final int LONGEST = 17;

    @Test
    void aStringThatEndsAtAGuardPageIsReadExactly() throws Throwable {
        try (GuardedPage page = GuardedPage.map()) {
            for (int n = 0; n <= LONGEST; n++) {
                String text = "abcdefghijklmnopqrstuvwxyz".substring(0, n);
                MemorySegment s = page.stringAtEnd(text);
                assertThat(CStrings.length(s)).isEqualTo(n);
                assertThat(CStrings.read(s)).isEqualTo(text);
            }
            assertThat(CStrings.read(page.stringAtEnd("EGL_KHR_reusable_sync EGL_MESA_é")))
                    .as("UTF-8").isEqualTo("EGL_KHR_reusable_sync EGL_MESA_é");
        }
    }

    @Test
    void nullIsNoString() {
        assertThatThrownBy(() -> CStrings.read(MemorySegment.NULL)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * What the helper replaces, {@code reinterpret(large).getString(0)}, reads past the terminator into the guard
     * page: the JVM that does it dies. Run in a child JVM, next to the same read through {@link CStrings}.
     */
    @Test
    void theWideReadItReplacesCrossesIntoTheGuardPageAndKillsTheJvm() throws Exception {
        Path errors = Files.createTempDirectory("gpusync-cstrings-");
        List<String> options = List.of("-XX:ErrorFile=" + errors.resolve("hs_err_%p.log"),
                "-XX:-CreateCoredumpOnCrash");
        String exact = ChildJvm.runOk(Child.class, options, Map.of(), "exact");
        assertThat(exact).contains("READ abcde");

        ChildJvm.Result wide = ChildJvm.run(Child.class, options, Map.of(), "wide");
        assertThat(wide.output()).doesNotContain("READ abcde");
        assertThat(wide.exitCode()).as("the wide read ended the JVM").isNotZero();
        assertThat(wide.output()).contains("SIGSEGV");
        try (var logs = Files.list(errors)) {
            for (Path log : logs.toList()) {
                Files.delete(log);
            }
        }
        Files.delete(errors);
    }

    /** Runs in the child JVM: reads "abcde" ending at a guard page, exactly or the old, wide way. */
    public static final class Child {
        public static void main(String[] args) throws Throwable {
            GuardedPage page = GuardedPage.map();
            MemorySegment s = MemorySegment.ofAddress(page.stringAtEnd("abcde").address());
            String read = args[0].equals("wide") ? s.reinterpret(Integer.MAX_VALUE).getString(0) : CStrings.read(s);
            System.out.println("READ " + read);
        }
    }

    /** Two pages from {@code mmap}: the first readable and writable, the second {@code PROT_NONE}. */
    static final class GuardedPage implements AutoCloseable {
        private static final Linker LINKER = Linker.nativeLinker();
        private static final int PROT_NONE = 0;
        private static final int PROT_READ_WRITE = 0x1 | 0x2;
        private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
        private static final MethodHandle MMAP = libc("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        private static final MethodHandle MPROTECT = libc("mprotect", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        private static final MethodHandle MUNMAP = libc("munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        private static final MethodHandle PAGE_SIZE = libc("getpagesize", FunctionDescriptor.of(ValueLayout.JAVA_INT));

        private final MemorySegment base;
        private final long pageSize;

        private GuardedPage(MemorySegment base, long pageSize) {
            this.base = base;
            this.pageSize = pageSize;
        }

        static GuardedPage map() throws Throwable {
            long size = (int) PAGE_SIZE.invokeExact();
            MemorySegment base = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, 2 * size, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (base.address() == -1L) {
                throw new AssertionError("mmap failed");
            }
            base = base.reinterpret(2 * size);
            if ((int) MPROTECT.invokeExact(base.asSlice(size), size, PROT_NONE) != 0) {
                throw new AssertionError("mprotect failed");
            }
            return new GuardedPage(base, size);
        }

        /** Writes {@code text} so that its terminator is the readable page's last byte; a bare pointer to it. */
        MemorySegment stringAtEnd(String text) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            long start = pageSize - bytes.length - 1;
            MemorySegment readable = base.asSlice(0, pageSize);
            MemorySegment.copy(bytes, 0, readable, ValueLayout.JAVA_BYTE, start, bytes.length);
            readable.set(ValueLayout.JAVA_BYTE, pageSize - 1, (byte) 0);
            return MemorySegment.ofAddress(base.address() + start); // as a driver returns it: no size
        }

        @Override
        public void close() {
            int r;
            try {
                r = (int) MUNMAP.invokeExact(base, 2 * pageSize);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            if (r != 0) {
                throw new AssertionError("munmap failed");
            }
        }

        private static MethodHandle libc(String name, FunctionDescriptor descriptor) {
            return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
        }
    }
}
