package io.gpusync.gl;

import io.gpusync.SyncPoint;
import io.gpusync.SyncWaiter;
import io.gpusync.bindings.egl.Egl;
import io.gpusync.bindings.gles.Gles;
import io.gpusync.test.gl.EglProducer;
import io.gpusync.testsuite.SyncWaiterContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The backend contract on {@code GLsync} fences (Mesa llvmpipe, OpenGL ES 3.1): a fence queued behind a draw whose
 * fragments spin until a word of a shader storage buffer is non-zero, so the fence stays unsignalled until the
 * subject writes that word from the host ({@code glMapBufferRange(GL_MAP_UNSYNCHRONIZED_BIT)}, which does not wait
 * for the draw). The point owns its {@code GLsync} ({@link GlShareGroup#adoptGlSync}); every wait runs on a pooled
 * context of the share group. A subject always opens its gate when closed, so no draw is left spinning.
 *
 * <p>llvmpipe ends a shader invocation's loops after 65,535 turns in all (gallivm's guard against endless shaders),
 * so one fragment cannot hold a gate. The draw covers {@value #SIDE}² fragments instead: each spins its 65,535 turns
 * while the gate is shut, which holds the fence for minutes, and each leaves at its first look once the gate is
 * open, so the fence signals a few milliseconds after the subject's signal. llvmpipe rasterises the scenes of every
 * context of the process in order, so a shut gate holds all GL work of this JVM: subjects are made one at a time,
 * and each is opened when the test ends. On other GL drivers the test is skipped: on a GPU the gate buffer may live in
 * device memory, where the host's write could queue behind the spinning draw and never reach it.
 */
class GlFenceContractTest extends SyncWaiterContract {
    private static final int GL_VERTEX_SHADER = 0x8B31;
    private static final int GL_FRAGMENT_SHADER = 0x8B30;
    private static final int GL_COMPILE_STATUS = 0x8B81;
    private static final int GL_LINK_STATUS = 0x8B82;
    private static final int GL_SHADER_STORAGE_BUFFER = 0x90D2;
    private static final int GL_DYNAMIC_DRAW = 0x88E8;
    private static final int GL_MAP_WRITE_BIT = 0x0002;
    private static final int GL_MAP_UNSYNCHRONIZED_BIT = 0x0020;
    private static final int GL_TRIANGLES = 0x0004;
    /** The gated draw covers SIDE × SIDE fragments (the producer's surface). */
    private static final int SIDE = 1024;

    private static final String VERTEX = """
            #version 310 es
            void main() {
                vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
                gl_Position = vec4(p, 0.0, 1.0);
            }
            """;
    /**
     * Each fragment spins until the gate's first word is non-zero: a volatile read, and an atomic increment per turn,
     * so that the compiler neither hoists the read nor drops the loop (on llvmpipe, for 65,535 turns at most).
     */
    private static final String FRAGMENT = """
            #version 310 es
            precision highp float;
            layout(std430, binding = 0) coherent volatile buffer Gate { uint open; uint spins; };
            out vec4 color;
            void main() {
                while (open == 0u) {
                    atomicAdd(spins, 1u);
                }
                color = vec4(1.0);
            }
            """;

    private static EglProducer producer;
    private static Gl gl;
    private static int program;

    @BeforeAll
    static void open() {
        producer = GlTestSupport.producer(SIDE, SIDE);
        producer.runCurrent(() -> {
            gl = new Gl();
            String version = io.gpusync.internal.CStrings.read(Gles.glGetString(Gles.GL_VERSION()));
            assumeTrue(!version.startsWith("OpenGL ES 3.0"), "needs OpenGL ES 3.1 (shader storage buffers): " + version);
            String renderer = io.gpusync.internal.CStrings.read(Gles.glGetString(Gles.GL_RENDERER()));
            // the gate is host memory the draw reads as it runs; on a GPU the buffer may live in device memory and the
            // unsynchronised write queue behind the spinning draw, which would then never end
            assumeTrue(renderer.contains("llvmpipe"), "the host gate needs llvmpipe's buffers (host memory): " + renderer);
            program = gl.program(VERTEX, FRAGMENT);
        });
    }

    @AfterAll
    static void close() {
        if (producer != null) {
            producer.close();
        }
    }

    @Override
    protected Subject newSubject() {
        int[] buffer = new int[1];
        MemorySegment[] sync = new MemorySegment[1];
        producer.runCurrent(() -> {
            buffer[0] = gl.gate();
            gl.call(gl.useProgram, program);
            gl.call(gl.bindBufferBase, GL_SHADER_STORAGE_BUFFER, 0, buffer[0]);
            Gles.glViewport(0, 0, SIDE, SIDE);
            gl.call(gl.drawArrays, GL_TRIANGLES, 0, 3);
            int drawError = Gles.glGetError();
            if (drawError != Gles.GL_NO_ERROR()) {
                throw new AssertionError("the gated draw failed: GL error 0x" + Integer.toHexString(drawError));
            }
            sync[0] = Gles.glFenceSync(Gles.GL_SYNC_GPU_COMMANDS_COMPLETE(), 0);
            Gles.glFlush();
        });
        SyncPoint.OpenGLSync point = producer.shareGroup().adoptGlSync(sync[0]);
        return new OnceSubject() {
            @Override
            public SyncWaiter waiter() {
                return point.waiter();
            }

            @Override
            protected void doSignal() {
                producer.runCurrent(() -> gl.openGate(buffer[0]));
            }

            @Override
            public boolean released() {
                return ((GlSyncWaiter) point.waiter()).anchor().isReleased();
            }

            @Override
            public void close() {
                signal(); // once only: a settled subject ignores it
                point.waiter().close();
                producer.runCurrent(() -> gl.deleteBuffer(buffer[0])); // GL frees it after the draw
            }
        };
    }

    /** The GLES 3.1 entry points the generated bindings leave out, through {@code eglGetProcAddress}. */
    private static final class Gl {
        final MethodHandle createShader = fn("glCreateShader", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        final MethodHandle shaderSource = fn("glShaderSource",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        final MethodHandle compileShader = fn("glCompileShader", FunctionDescriptor.ofVoid(JAVA_INT));
        final MethodHandle getShaderiv = fn("glGetShaderiv", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS));
        final MethodHandle getShaderInfoLog = fn("glGetShaderInfoLog",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
        final MethodHandle createProgram = fn("glCreateProgram", FunctionDescriptor.of(JAVA_INT));
        final MethodHandle attachShader = fn("glAttachShader", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT));
        final MethodHandle linkProgram = fn("glLinkProgram", FunctionDescriptor.ofVoid(JAVA_INT));
        final MethodHandle getProgramiv = fn("glGetProgramiv", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, ADDRESS));
        final MethodHandle useProgram = fn("glUseProgram", FunctionDescriptor.ofVoid(JAVA_INT));
        final MethodHandle genBuffers = fn("glGenBuffers", FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS));
        final MethodHandle deleteBuffers = fn("glDeleteBuffers", FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS));
        final MethodHandle bindBuffer = fn("glBindBuffer", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT));
        final MethodHandle bufferData = fn("glBufferData",
                FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_INT));
        final MethodHandle bindBufferBase = fn("glBindBufferBase", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, JAVA_INT));
        final MethodHandle mapBufferRange = fn("glMapBufferRange",
                FunctionDescriptor.of(ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
        final MethodHandle unmapBuffer = fn("glUnmapBuffer", FunctionDescriptor.of(JAVA_BYTE, JAVA_INT));
        final MethodHandle drawArrays = fn("glDrawArrays", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, JAVA_INT));

        private static MethodHandle fn(String name, FunctionDescriptor descriptor) {
            MemorySegment address;
            try (Arena arena = Arena.ofConfined()) {
                address = Egl.eglGetProcAddress(arena.allocateFrom(name));
            }
            assumeTrue(!address.equals(MemorySegment.NULL), "this GL has no " + name);
            return Linker.nativeLinker().downcallHandle(address, descriptor);
        }

        Object call(MethodHandle fn, Object... args) {
            try {
                return fn.invokeWithArguments(args);
            } catch (Throwable t) {
                throw new AssertionError(fn + " failed", t);
            }
        }

        int program(String vertex, String fragment) {
            int p = (int) call(createProgram);
            call(attachShader, p, shader(GL_VERTEX_SHADER, vertex));
            call(attachShader, p, shader(GL_FRAGMENT_SHADER, fragment));
            call(linkProgram, p);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ok = arena.allocate(JAVA_INT);
                call(getProgramiv, p, GL_LINK_STATUS, ok);
                assumeTrue(ok.get(JAVA_INT, 0) != 0, "the gate program does not link on this GL");
            }
            return p;
        }

        private int shader(int type, String source) {
            int s = (int) call(createShader, type);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment strings = arena.allocateFrom(ADDRESS, arena.allocateFrom(source));
                call(shaderSource, s, 1, strings, MemorySegment.NULL);
                call(compileShader, s);
                MemorySegment ok = arena.allocate(JAVA_INT);
                call(getShaderiv, s, GL_COMPILE_STATUS, ok);
                if (ok.get(JAVA_INT, 0) == 0) {
                    MemorySegment log = arena.allocate(4096);
                    call(getShaderInfoLog, s, 4096, MemorySegment.NULL, log);
                    assumeTrue(false, "the gate shader does not compile on this GL: " + log.getString(0));
                }
            }
            return s;
        }

        /** A new gate: a zeroed two-word shader storage buffer (the gate, a spin count). */
        int gate() {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment id = arena.allocate(JAVA_INT);
                call(genBuffers, 1, id);
                int b = id.get(JAVA_INT, 0);
                call(bindBuffer, GL_SHADER_STORAGE_BUFFER, b);
                call(bufferData, GL_SHADER_STORAGE_BUFFER, 8L, arena.allocate(JAVA_LONG), GL_DYNAMIC_DRAW);
                return b;
            }
        }

        /** Writes 1 into the gate while the draw that spins on it may still run (no wait for the GPU). */
        void openGate(int buffer) {
            call(bindBuffer, GL_SHADER_STORAGE_BUFFER, buffer);
            MemorySegment word = (MemorySegment) call(mapBufferRange, GL_SHADER_STORAGE_BUFFER, 0L, 4L,
                    GL_MAP_WRITE_BIT | GL_MAP_UNSYNCHRONIZED_BIT);
            if (word.equals(MemorySegment.NULL)) {
                throw new AssertionError("glMapBufferRange(gate) failed: GL error 0x"
                        + Integer.toHexString(Gles.glGetError()));
            }
            word.reinterpret(4).get(JAVA_INT, 0); // touch: the mapping is real memory
            word.reinterpret(4).set(JAVA_INT, 0, 1);
            call(unmapBuffer, GL_SHADER_STORAGE_BUFFER);
            Gles.glFlush();
        }

        void deleteBuffer(int buffer) {
            try (Arena arena = Arena.ofConfined()) {
                call(deleteBuffers, 1, arena.allocateFrom(JAVA_INT, buffer));
            }
        }
    }
}
