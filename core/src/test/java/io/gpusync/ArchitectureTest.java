package io.gpusync;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of core's public surface, as rules over its compiled classes (ArchUnit) and its module descriptor:
 * <ul>
 *   <li><b>layering</b> — the contract ({@code io.gpusync}) depends on nothing of gpusync but itself; the SPI
 *       only on the contract and {@code internal}; a backend package ({@code cpu}, {@code cuda}, {@code vulkan},
 *       … and any added later, such as {@code d3d12}) on the contract, the SPI, {@code internal}, the bindings
 *       and itself, never on another backend unless the bridge is listed in {@link #BRIDGES}; no package cycles;
 *       nothing in core depends on Reactor, Netty or Micrometer;</li>
 *   <li><b>exports</b> — {@code module-info} exports exactly {@link #EXPORTED}, and {@code io.gpusync.internal} only
 *       to the engine ({@code io.gpusync.reactor}, which shares the process's services),
 *       and reads the bindings without {@code transitive}, which holds because no public member of a public
 *       type of an exported package names a binding type;</li>
 *   <li><b>producers</b> — a public class that makes GPU work (creates devices, contexts, queues, user events,
 *       launches or submits work, exports semaphores) is a public static nested class of a holder named
 *       {@code *Producers} in its backend's package;</li>
 *   <li><b>one ownership vocabulary</b> — public factories say {@code adopt…}/{@code borrow…}, never
 *       {@code owned}/{@code borrowed}, and no public signature takes an ownership enum.</li>
 * </ul>
 */
class ArchitectureTest {
    private static final JavaClasses CORE = importCore();

    /** The packages core exports: the contract, the SPI and one per backend. */
    static final Set<String> EXPORTED = Set.of("io.gpusync", "io.gpusync.spi", "io.gpusync.cpu",
            "io.gpusync.linux", "io.gpusync.cuda", "io.gpusync.gl", "io.gpusync.opencl", "io.gpusync.vulkan",
            "io.gpusync.d3d11", "io.gpusync.d3d12", "io.gpusync.metal", "io.gpusync.wgpu");

    /**
     * Cross-backend dependencies that are documented bridges (backend package → the backends it may use). D3D12
     * completes through an eventfd of {@code io.gpusync.linux} (vkd3d's event hook writes it, so a D3D12 wait is
     * epoll-able). The CUDA and GL imports of Vulkan semaphores go through raw fds, not through the Vulkan package.
     */
    static final Map<String, Set<String>> BRIDGES = Map.of("io.gpusync.d3d12", Set.of("io.gpusync.linux"));

    private static final Set<String> NOT_BACKENDS = Set.of("io.gpusync", "io.gpusync.spi", "io.gpusync.internal");

    /**
     * Native entry points that make GPU work rather than wait on it (compared in lower case without underscores,
     * against the called method's name and its owner's simple name, e.g. {@code PFN_vkQueueSubmit.invoke}).
     */
    static final List<String> WORK_MAKING_CALLS = List.of("launchkernel", "streamcreate", "moduleload",
            "createinstance", "createdevice", "createcontext", "queuesubmit", "createcommandqueue",
            "enqueuendrangekernel", "createuserevent", "setusereventstatus", "dispatchcompute", "drawarrays",
            "executecommandlists", "getsemaphorefd", "createprogramwithsource");

    @Test
    void theContractDependsOnNoOtherPackageOfGpusync() {
        classes().that().resideInAPackage("io.gpusync")
                .should().onlyDependOnClassesThat().resideInAnyPackage("io.gpusync", "java..")
                .because("the contract is what every backend and adapter builds on: it names no backend and no SPI")
                .check(CORE);
    }

    @Test
    void theSpiDependsOnlyOnTheContractAndInternals() {
        classes().that().resideInAPackage("io.gpusync.spi")
                .should().onlyDependOnClassesThat().resideInAnyPackage("io.gpusync", "io.gpusync.spi",
                        "io.gpusync.internal", "java..")
                .check(CORE);
    }

    @Test
    void backendsDependOnTheContractTheSpiAndTheBindingsButNotOnEachOther() {
        ArchCondition<JavaClass> noForeignBackend = new ArchCondition<>("depend on no other backend package "
                + "(except the bridges listed in ArchitectureTest.BRIDGES)") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                String own = origin.getPackageName();
                origin.getDirectDependenciesFromSelf().forEach(d -> {
                    String target = d.getTargetClass().getPackageName();
                    if (isBackend(target) && !target.equals(own)
                            && !BRIDGES.getOrDefault(own, Set.of()).contains(target)) {
                        events.add(SimpleConditionEvent.violated(d, d.getDescription()));
                    }
                });
            }
        };
        classes().that(inABackendPackage()).should(noForeignBackend).check(CORE);
    }

    @Test
    void corePackagesAreFreeOfCycles() {
        slices().matching("io.gpusync.(*)..").should().beFreeOfCycles().check(CORE);
    }

    @Test
    void coreNeverDependsOnReactorNettyOrMicrometer() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("reactor..", "io.netty..", "io.micrometer..",
                        "io.gpusync.reactor..")
                .because("core is usable with no reactive library at all; the adapter builds on it")
                .check(CORE);
    }

    @Test
    void moduleInfoExportsExactlyTheApiPackagesAndReadsTheBindingsNonTransitively() throws IOException {
        ModuleDescriptor core = descriptor();
        assertThat(core.name()).isEqualTo("io.gpusync.core");
        core.exports().stream().filter(ModuleDescriptor.Exports::isQualified).forEach(e -> assertThat(e.source()
                + " to " + e.targets()).as("the one qualified export").isEqualTo("io.gpusync.internal to ["
                + "io.gpusync.reactor]"));
        Set<String> exported = core.exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toCollection(TreeSet::new));
        Set<String> present = CORE.stream().map(JavaClass::getPackageName).collect(Collectors.toSet());
        assertThat(exported).doesNotContain("io.gpusync.internal")
                .containsExactlyInAnyOrderElementsOf(EXPORTED.stream().filter(present::contains).toList());
        assertThat(present).as("every package of core is exported or is io.gpusync.internal")
                .allMatch(p -> exported.contains(p) || p.equals("io.gpusync.internal"));
        ModuleDescriptor.Requires bindings = core.requires().stream()
                .filter(r -> r.name().equals("io.gpusync.bindings")).findFirst().orElseThrow();
        assertThat(bindings.modifiers()).doesNotContain(ModuleDescriptor.Requires.Modifier.TRANSITIVE);
    }

    @Test
    void noPublicSignatureOfAnExportedPackageNamesABindingType() {
        ArchCondition<JavaClass> noBindingTypes = new ArchCondition<>("name no io.gpusync.bindings type in a "
                + "public or protected member") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                for (JavaMember m : type.getMembers()) {
                    if (!m.getModifiers().contains(JavaModifier.PUBLIC)
                            && !m.getModifiers().contains(JavaModifier.PROTECTED)) {
                        continue;
                    }
                    for (JavaClass named : namedTypes(m)) {
                        if (named.getPackageName().startsWith("io.gpusync.bindings")) {
                            events.add(SimpleConditionEvent.violated(m, m.getFullName() + " names " + named.getName()));
                        }
                    }
                }
            }
        };
        classes().that().arePublic().and(DescribedPredicate.describe("in an exported package",
                        (JavaClass c) -> EXPORTED.contains(c.getPackageName()) && isPubliclyReachable(c)))
                .should(noBindingTypes).check(CORE);
    }

    @Test
    void publicClassesThatMakeGpuWorkAreNestedInAProducersHolder() {
        Set<String> found = new TreeSet<>();
        ArchCondition<JavaClass> nestedInProducers = new ArchCondition<>("be a public static class nested in a "
                + "holder named *Producers, if it calls a native entry point that makes GPU work") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                Optional<String> call = type.getCodeUnits().stream()
                        .flatMap(u -> u.getCallsFromSelf().stream())
                        .filter(c -> makesWork(c.getTarget().getName())
                                || makesWork(c.getTargetOwner().getSimpleName()))
                        .map(c -> c.getTarget().getFullName()).findFirst();
                if (call.isEmpty()) {
                    return;
                }
                found.add(type.getSimpleName());
                Optional<JavaClass> holder = type.getEnclosingClass();
                boolean ok = holder.isPresent() && holder.get().getSimpleName().endsWith("Producers")
                        && holder.get().getEnclosingClass().isEmpty()
                        && holder.get().getPackageName().equals(type.getPackageName())
                        && type.getModifiers().contains(JavaModifier.STATIC);
                events.add(new SimpleConditionEvent(type, ok, type.getName() + " calls " + call.get()
                        + (ok ? " and is nested in " + holder.get().getSimpleName()
                        : " but is not a static nested class of a *Producers holder")));
            }
        };
        classes().that(DescribedPredicate.describe("are publicly reachable", ArchitectureTest::isPubliclyReachable))
                .should(nestedInProducers).check(CORE);
        assertThat(found).as("the rule recognises today's producers by the calls they make")
                .contains("CudaWorkQueue", "VulkanContext", "ExportingVulkanDevice", "OpenClContext", "OpenClUserEvent",
                        "EglProducer");
    }

    @Test
    void producersHoldersHoldOnlyProducers() {
        classes().that().haveSimpleNameEndingWith("Producers").and().areTopLevelClasses()
                .should().bePublic().andShould().haveModifier(JavaModifier.FINAL)
                .andShould(new ArchCondition<>("have no public constructor") {
                    @Override
                    public void check(JavaClass holder, ConditionEvents events) {
                        holder.getConstructors().stream().filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                                .forEach(c -> events.add(SimpleConditionEvent.violated(c, c.getFullName())));
                    }
                })
                .check(CORE);
    }

    @Test
    void ownershipIsSpelledAdoptOrBorrowEverywhere() {
        ArchCondition<JavaClass> vocabulary = new ArchCondition<>("spell ownership adopt/borrow in public members") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                for (JavaMember m : type.getMembers()) {
                    if (!m.getModifiers().contains(JavaModifier.PUBLIC)) {
                        continue;
                    }
                    String name = m.getName().toLowerCase(Locale.ROOT);
                    if (name.startsWith("owned") || name.startsWith("borrowed") || name.equals("isowned")) {
                        events.add(SimpleConditionEvent.violated(m, m.getFullName() + ": say adopt/borrow"));
                    }
                    for (JavaClass named : namedTypes(m)) {
                        if (named.getSimpleName().equals("Ownership")) {
                            events.add(SimpleConditionEvent.violated(m, m.getFullName()
                                    + " takes an Ownership argument: offer adopt…/borrow… factories instead"));
                        }
                    }
                }
            }
        };
        classes().that(DescribedPredicate.describe("are publicly reachable", ArchitectureTest::isPubliclyReachable))
                .should(vocabulary).check(CORE);
        noClasses().should().haveSimpleName("Ownership").check(CORE);
    }

    /** Whether {@code c} is public and so is every class enclosing it. */
    static boolean isPubliclyReachable(JavaClass c) {
        for (Optional<JavaClass> k = Optional.of(c); k.isPresent(); k = k.get().getEnclosingClass()) {
            if (!k.get().getModifiers().contains(JavaModifier.PUBLIC)) {
                return false;
            }
        }
        return true;
    }

    private static DescribedPredicate<JavaClass> inABackendPackage() {
        return DescribedPredicate.describe("are in a backend package", c -> isBackend(c.getPackageName()));
    }

    private static boolean isBackend(String pkg) {
        return pkg.startsWith("io.gpusync.") && !NOT_BACKENDS.contains(pkg) && !pkg.startsWith("io.gpusync.bindings");
    }

    private static boolean makesWork(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace("_", "");
        return WORK_MAKING_CALLS.stream().anyMatch(n::contains);
    }

    /** The types a member's signature names: field type, or parameter and return types (raw). */
    private static Set<JavaClass> namedTypes(JavaMember m) {
        Set<JavaClass> named = new java.util.HashSet<>();
        if (m instanceof com.tngtech.archunit.core.domain.JavaField f) {
            named.add(f.getRawType());
        } else if (m instanceof com.tngtech.archunit.core.domain.JavaCodeUnit u) {
            named.add(u.getRawReturnType());
            named.addAll(u.getRawParameterTypes());
        }
        return named;
    }

    /** Core's main classes (not its tests, not the bindings), from the directory or jar they were loaded from. */
    static JavaClasses importCore() {
        Path location = location();
        ClassFileImporter importer = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS);
        if (Files.isDirectory(location)) {
            return importer.importPath(location);
        }
        try (java.util.jar.JarFile jar = new java.util.jar.JarFile(location.toFile())) {
            return importer.importJar(jar); // a packaged run (the H200 suite runs from jars)
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Core's compiled module descriptor, next to its classes or inside its jar. */
    static ModuleDescriptor descriptor() throws IOException {
        Path location = location();
        if (Files.isDirectory(location)) {
            try (InputStream in = Files.newInputStream(location.resolve("module-info.class"))) {
                return ModuleDescriptor.read(in);
            }
        }
        try (java.nio.file.FileSystem jar = java.nio.file.FileSystems.newFileSystem(location);
             InputStream in = Files.newInputStream(jar.getPath("/module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }

    /** Where core's classes were loaded from: target/classes, or a jar. */
    private static Path location() {
        try {
            return Path.of(SyncPoint.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
