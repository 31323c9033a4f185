package io.gpusync;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** README's "Names: what is what": every name it explains is the public type or constant it says. */
class ReadmeGlossaryTest {

    @Test
    void everyGlossaryNameIsAPublicTypeOrConstantOfThatName() throws Exception {
        List<String> names = glossaryNames();
        assertThat(names).contains("io.gpusync.SyncPoint.CPU", "io.gpusync.cpu.CpuTimeline",
                "io.gpusync.SyncPoint.HostTimeline", "io.gpusync.cuda.CudaHostTimeline");
        for (String name : names) {
            assertThat(resolves(name)).as("README's glossary names %s", name).isTrue();
        }
    }

    @Test
    void theOneConstantIsAlreadySignalledAndTheTimelinePointBelongsToACpuTimeline() {
        assertThat(SyncPoint.CPU.waiter()).isSameAs(SyncWaiter.SIGNALLED);
        assertThat(SoftwareTimeline.class).isAssignableFrom(io.gpusync.cpu.CpuTimeline.class);
        assertThat(new io.gpusync.cpu.CpuTimeline().at(1)).isInstanceOf(SyncPoint.HostTimeline.class);
    }

    /** A public class, nested class ({@code Outer.Inner}) or public static field ({@code Type.FIELD}). */
    private static boolean resolves(String name) {
        if (publicClass(name) != null) {
            return true;
        }
        int dot = name.lastIndexOf('.');
        Class<?> owner = publicClass(name.substring(0, dot));
        try {
            return owner != null && Modifier.isStatic(owner.getField(name.substring(dot + 1)).getModifiers());
        } catch (NoSuchFieldException e) {
            return false;
        }
    }

    /** {@code name} as a public top-level or nested class (dots turned into {@code $} from the right), or null. */
    private static Class<?> publicClass(String name) {
        String candidate = name;
        while (true) {
            try {
                Class<?> type = Class.forName(candidate, false, ReadmeGlossaryTest.class.getClassLoader());
                return Modifier.isPublic(type.getModifiers()) ? type : null;
            } catch (ClassNotFoundException e) {
                int last = candidate.lastIndexOf('.');
                if (last < 0) {
                    return null;
                }
                candidate = candidate.substring(0, last) + '$' + candidate.substring(last + 1);
            }
        }
    }

    private static List<String> glossaryNames() throws IOException {
        String readme = Files.readString(root().resolve("README.md"));
        int start = readme.indexOf("**Names: what is what.**");
        assertThat(start).isNotNegative();
        List<String> names = new ArrayList<>();
        for (String line : readme.substring(start).lines().skip(1).toList()) {
            if (line.startsWith("| `")) {
                names.add(line.substring(3, line.indexOf('`', 3)));
            } else if (!names.isEmpty() && !line.startsWith("|")) {
                break;
            }
        }
        return names;
    }

    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("all"))) {
                return dir;
            }
        }
        throw new AssertionError("no checkout above " + Path.of("").toAbsolutePath());
    }
}
