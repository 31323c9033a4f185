package io.gpusync;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import io.gpusync.cpu.CpuTimeline;
import io.gpusync.linux.EventFd;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.ConstantInstruction;
import java.lang.classfile.instruction.InvokeDynamicInstruction;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A waiter prints as what it is: {@code toString()} of every {@link SyncWaiter} of core starts with the simple
 * name of its class (a log line names the class a reader can look up). Checked on live waiters where this
 * machine can make them, and for every concrete waiter class of core — including those of drivers absent here
 * (Metal, D3D11, wgpu, CUDA) — on the first text its {@code toString} method produces, read from its byte code.
 */
class WaiterNamesTest {

    @Test
    void liveWaitersPrintTheirClassName() throws Exception {
        CpuTimeline timeline = new CpuTimeline();
        try (EventFd fd = EventFd.create()) {
            for (SyncWaiter w : List.of(SyncWaiter.SIGNALLED, timeline.at(1).waiter(), fd.point().waiter())) {
                assertThat(w.toString()).as("toString of a %s", w.getClass().getName())
                        .startsWith(w.getClass().getSimpleName() + "[");
            }
        }
    }

    @Test
    void everyConcreteWaiterClassOfCoreBeginsItsToStringWithItsSimpleName() throws IOException {
        List<JavaClass> waiters = ArchitectureTest.importCore().stream()
                .filter(c -> c.isAssignableTo(SyncWaiter.class) && !c.isInterface()
                        && !c.getModifiers().contains(JavaModifier.ABSTRACT))
                .toList();
        assertThat(waiters).as("core's waiter classes").hasSizeGreaterThanOrEqualTo(15);
        for (JavaClass waiter : waiters) {
            String first = firstTextOfToString(waiter)
                    .orElseThrow(() -> new AssertionError(waiter.getName() + " has no toString of its own that starts "
                            + "with a literal text (it would print Object's class@hash or a superclass's name)"));
            assertThat(first).as("the first text %s.toString() produces", waiter.getName())
                    .startsWith(waiter.getSimpleName());
        }
    }

    /**
     * The first literal text that {@code toString()} of {@code type} (or of the nearest superclass below
     * {@code Object} that declares one) produces: the leading constant of its first {@code StringConcatFactory}
     * recipe, or else its first {@code ldc} of a string.
     */
    private static Optional<String> firstTextOfToString(JavaClass type) throws IOException {
        for (Optional<JavaClass> k = Optional.of(type); k.isPresent() && !k.get().isEquivalentTo(Object.class);
             k = k.get().getRawSuperclass()) {
            ClassModel model = read(k.get());
            for (MethodModel m : model.methods()) {
                if (m.methodName().equalsString("toString") && m.methodType().equalsString("()Ljava/lang/String;")
                        && m.code().isPresent()) {
                    String firstLdc = null;
                    for (CodeElement e : m.code().get()) {
                        if (e instanceof InvokeDynamicInstruction indy
                                && indy.bootstrapMethod().methodName().equals("makeConcatWithConstants")) {
                            String recipe = indy.bootstrapArgs().getFirst().toString();
                            int arg = recipe.indexOf('\u0001');
                            return Optional.of(arg < 0 ? recipe : recipe.substring(0, arg));
                        }
                        if (firstLdc == null && e instanceof ConstantInstruction c
                                && c.constantValue() instanceof String text) {
                            firstLdc = text;
                        }
                    }
                    return Optional.ofNullable(firstLdc);
                }
            }
        }
        return Optional.empty();
    }

    private static ClassModel read(JavaClass type) throws IOException {
        String resource = "/" + type.getName().replace('.', '/') + ".class";
        try (InputStream in = SyncWaiter.class.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return ClassFile.of().parse(in.readAllBytes());
        }
    }
}
