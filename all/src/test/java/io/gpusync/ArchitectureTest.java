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
import java.util.ArrayList;
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
 * The shape of gpusync's public surface, as rules over the compiled classes of the API, the backend kit and every
 * backend module (ArchUnit) and over their module descriptors:
 * <ul>
 *   <li><b>layering</b> — api ← kit ← backends: the contract ({@code io.gpusync}) depends on nothing of gpusync
 *       but itself; the SPI only on the contract; the kit ({@code io.gpusync.kit}, {@code io.gpusync.internal})
 *       on the API and itself; a backend package ({@code cpu}, {@code cuda}, {@code vulkan},
 *       … and any added later, such as {@code d3d12}) on the contract, the SPI, {@code internal}, the bindings
 *       and itself, never on another backend unless the bridge is listed in {@link #BRIDGES}; no package cycles;
 *       nothing in core depends on Reactor, Netty or Micrometer;</li>
 *   <li><b>modules</b> — the API exports {@code io.gpusync} and {@code io.gpusync.spi}; the kit exports its
 *       packages only to gpusync's modules; each backend module exports exactly its package and requires the API,
 *       the kit, its own bindings and nothing else (bridges aside); no unqualified export outside {@link #EXPORTED};
 *       the bindings are read without {@code transitive}, which holds because no public member of a public
 *       type of an exported package names a binding type;</li>
 *   <li><b>producers</b> — a public class that makes GPU work of gpusync's own (creates devices, contexts, queues,
 *       user events, launches kernels, exports semaphores) belongs to the test kit ({@code gpusync-test}), not to a
 *       backend: no application-visible class of a backend calls such an entry point. What the application hands
 *       gpusync to submit for it ({@code VulkanDevice.submit}, {@code OpenClQueue.enqueue}) is the application's
 *       work, not gpusync's;</li>
 *   <li><b>one ownership vocabulary</b> — public factories say {@code adopt…}/{@code borrow…}, never
 *       {@code owned}/{@code borrowed}, and no public signature takes an ownership enum.</li>
 * </ul>
 */
class ArchitectureTest {
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

    private static final Set<String> NOT_BACKENDS = Set.of("io.gpusync", "io.gpusync.spi", "io.gpusync.internal",
            "io.gpusync.kit", "io.gpusync.test", "io.gpusync.testsuite");

    /** One class of each module these rules read (api, kit, the backends): where it was loaded from is the module. */
    static final List<Class<?>> MODULE_MARKERS = List.of(SyncPoint.class, io.gpusync.kit.WaitLoop.class,
            io.gpusync.cpu.CpuTimeline.class, io.gpusync.linux.EventFd.class, io.gpusync.cuda.CudaEvents.class,
            io.gpusync.vulkan.VulkanDevice.class, io.gpusync.opencl.OpenClEvents.class, io.gpusync.gl.EglSyncs.class,
            io.gpusync.d3d12.D3D12Fences.class, io.gpusync.d3d11.D3D11KeyedMutexes.class,
            io.gpusync.metal.MetalSharedEvents.class, io.gpusync.wgpu.WgpuSubmissions.class);

    /** The main classes of the API, the kit and every backend (after MODULE_MARKERS, which it reads). */
    private static final JavaClasses CORE = importCore();

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
    void theSpiDependsOnlyOnTheContract() {
        classes().that().resideInAPackage("io.gpusync.spi")
                .should().onlyDependOnClassesThat().resideInAnyPackage("io.gpusync", "io.gpusync.spi", "java..")
                .because("the SPI is part of the API module, which has no kit and no backend")
                .check(CORE);
    }

    @Test
    void theKitDependsOnlyOnTheApiAndItself() {
        classes().that().resideInAnyPackage("io.gpusync.kit", "io.gpusync.internal")
                .should().onlyDependOnClassesThat().resideInAnyPackage("io.gpusync", "io.gpusync.spi",
                        "io.gpusync.kit", "io.gpusync.internal", "java..", "jdk.internal..")
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
                .because("the API, the kit and the backends are usable with no reactive library at all; the engine builds on them")
                .check(CORE);
    }

    @Test
    void eachModuleExportsItsApiPackageAndReadsOnlyWhatItMay() throws IOException {
        Set<String> allExported = new TreeSet<>();
        for (Class<?> marker : MODULE_MARKERS) {
            ModuleDescriptor module = descriptor(marker);
            String pkg = marker.getPackageName();
            Set<String> exported = module.exports().stream().filter(e -> !e.isQualified())
                    .map(ModuleDescriptor.Exports::source).collect(Collectors.toCollection(TreeSet::new));
            allExported.addAll(exported);
            module.exports().stream().filter(ModuleDescriptor.Exports::isQualified).forEach(e ->
                    assertThat(e.targets()).as("%s exports %s to", module.name(), e.source())
                            .allMatch(t -> t.startsWith("io.gpusync.")));
            Set<String> gpusyncRequires = module.requires().stream().map(ModuleDescriptor.Requires::name)
                    .filter(n -> n.startsWith("io.gpusync.")).collect(Collectors.toCollection(TreeSet::new));
            module.requires().stream().filter(r -> r.name().startsWith("io.gpusync.bindings."))
                    .forEach(r -> assertThat(r.modifiers()).as("%s requires %s", module.name(), r.name())
                            .doesNotContain(ModuleDescriptor.Requires.Modifier.TRANSITIVE));
            switch (pkg) {
                case "io.gpusync" -> {
                    assertThat(module.name()).isEqualTo("io.gpusync.api");
                    assertThat(exported).containsExactlyInAnyOrder("io.gpusync", "io.gpusync.spi");
                    assertThat(gpusyncRequires).isEmpty();
                }
                case "io.gpusync.kit" -> {
                    assertThat(module.name()).isEqualTo("io.gpusync.backend.kit");
                    assertThat(exported).as("the kit exports nothing to applications").isEmpty();
                    assertThat(gpusyncRequires).containsExactly("io.gpusync.api");
                }
                default -> {
                    assertThat(module.name()).isEqualTo(pkg);
                    assertThat(exported).containsExactly(pkg);
                    Set<String> allowed = new TreeSet<>(Set.of("io.gpusync.api", "io.gpusync.backend.kit"));
                    allowed.addAll(BRIDGES.getOrDefault(pkg, Set.of()));
                    assertThat(gpusyncRequires).as("what %s reads of gpusync", pkg)
                            .allMatch(n -> allowed.contains(n) || n.startsWith("io.gpusync.bindings."))
                            .contains("io.gpusync.api");
                    assertThat(gpusyncRequires.stream().filter(n -> n.startsWith("io.gpusync.bindings.")))
                            .as("%s reads at most its own bindings", pkg).hasSizeLessThanOrEqualTo(1);
                }
            }
        }
        assertThat(allExported).as("application-visible packages").isEqualTo(new TreeSet<>(EXPORTED));
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

    /** The test kit's producers, where the rule below must find every kind of work-making call it knows. */
    static final List<Class<?>> TEST_KIT_PRODUCERS = List.of(io.gpusync.test.cuda.CudaWorkQueue.class,
            io.gpusync.test.vulkan.VulkanContext.class, io.gpusync.test.vulkan.ExportingVulkanDevice.class,
            io.gpusync.test.opencl.OpenClContext.class, io.gpusync.test.opencl.OpenClUserEvent.class,
            io.gpusync.test.gl.EglProducer.class, io.gpusync.test.d3d12.D3D12Device.class);

    @Test
    void noApplicationVisibleClassOfABackendMakesGpuWork() {
        Set<String> found = new TreeSet<>();
        ArchCondition<JavaClass> makesNoWork = makesNoWork(found);
        classes().that(DescribedPredicate.describe("are publicly reachable", ArchitectureTest::isPubliclyReachable))
                .should(makesNoWork).check(CORE);
        assertThat(found).as("producers left in the backends").isEmpty();

        JavaClasses kit = new ClassFileImporter().importClasses(TEST_KIT_PRODUCERS);
        Set<String> inKit = new TreeSet<>();
        classes().should(makesNoWork(inKit)).allowEmptyShould(true).evaluate(kit);
        assertThat(inKit).as("the rule recognises the test kit's producers by the calls they make")
                .containsExactlyInAnyOrder("CudaWorkQueue", "VulkanContext", "ExportingVulkanDevice", "OpenClContext",
                        "OpenClUserEvent", "EglProducer", "D3D12Device");
    }

    /** Violated by a class that calls a native entry point making GPU work; {@code found} collects their names. */
    private static ArchCondition<JavaClass> makesNoWork(Set<String> found) {
        return new ArchCondition<>("call no native entry point that makes GPU work (producers live in gpusync-test)") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                Optional<String> call = type.getCodeUnits().stream()
                        .flatMap(u -> u.getCallsFromSelf().stream())
                        .filter(c -> makesWork(c.getTarget().getName())
                                || makesWork(c.getTargetOwner().getSimpleName()))
                        .map(c -> c.getTarget().getFullName()).findFirst();
                if (call.isPresent()) {
                    found.add(type.getSimpleName());
                    events.add(SimpleConditionEvent.violated(type, type.getName() + " calls " + call.get()
                            + ": producers of GPU work live in the test kit (gpusync-test)"));
                }
            }
        };
    }

    @Test
    void noBackendHasAProducersHolder() {
        noClasses().should().haveSimpleNameEndingWith("Producers").check(CORE);
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

    /** The main classes of the API, the kit and every backend (not tests, not the bindings, not the test kit). */
    static JavaClasses importCore() {
        ClassFileImporter importer = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS);
        List<java.net.URL> locations = new ArrayList<>();
        for (Class<?> marker : MODULE_MARKERS) {
            Path location = location(marker);
            try {
                locations.add(location.toUri().toURL());
            } catch (java.net.MalformedURLException e) {
                throw new IllegalStateException(e);
            }
        }
        return importer.importUrls(locations); // target/classes, or jars (the H200 suite runs from jars)
    }

    /** A module's compiled descriptor, next to its classes or inside its jar. */
    static ModuleDescriptor descriptor(Class<?> marker) throws IOException {
        Path location = location(marker);
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

    /** Where a module's classes were loaded from: target/classes, or a jar. */
    private static Path location(Class<?> marker) {
        try {
            return Path.of(marker.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
