package io.gpusync.examples.device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The showcase's computation, on the CPU: the twin of the {@code matrix_chain} kernel ({@code matrix.cu} beside this
 * class's resources). A request's data is two {@value #N}×{@value #N} matrices of unsigned 32-bit integers, A and B,
 * expanded from the request's seed; the device computes X = A·B<sup>rounds</sup> (arithmetic mod 2<sup>32</sup>, so
 * exact) and the checksum Σ<sub>i,j</sub> (2i+1)(2j+1)·X<sub>ij</sub> mod 2<sup>32</sup>.
 *
 * <p>A client checks that checksum without redoing the multiplications: with u<sub>i</sub> = 2i+1 and
 * v<sub>j</sub> = 2j+1 it is u<sup>T</sup>·A·(B<sup>rounds</sup>·v), which takes {@code rounds + 1} matrix-vector
 * products ({@link #checksum}) where the device does {@code rounds} matrix products; {@link #chainOnCpu} does what
 * the kernel does, for tests. Stateless and thread-safe.
 */
public final class MatrixChain {
    /** The matrices' order (the kernel's {@code N}). */
    public static final int N = 64;
    /** Entries of one matrix. */
    public static final int ENTRIES = N * N;
    /** Bytes of one request's input: A then B, row-major. */
    public static final long INPUT_BYTES = 2L * ENTRIES * Integer.BYTES;
    /** Bytes of one request's output: X, then the checksum. */
    public static final long OUTPUT_BYTES = (ENTRIES + 1L) * Integer.BYTES;

    private MatrixChain() {
    }

    /** Entry {@code index} of the input (A's entries, then B's) of the request with {@code seed}. */
    public static int element(long seed, int index) {
        long z = (seed * 0x9E3779B97F4A7C15L) ^ (index * 0xD1B54A32D192ED03L); // cheap: the server fills 8,192 per request
        return (int) ((z * 0xBF58476D1CE4E5B9L) >>> 32);
    }

    /** Writes the input of {@code seed} (A, then B) into {@code input}, which holds at least {@link #INPUT_BYTES}. */
    public static void fill(MemorySegment input, long seed) {
        for (int i = 0; i < 2 * ENTRIES; i++) {
            input.setAtIndex(ValueLayout.JAVA_INT, i, element(seed, i));
        }
    }

    /** The checksum of {@code seed} after {@code rounds} products, by matrix-vector products only. */
    public static int checksum(long seed, int rounds) {
        int[] w = new int[N];
        for (int j = 0; j < N; j++) {
            w[j] = 2 * j + 1;
        }
        int[] next = new int[N];
        for (int r = 0; r < rounds; r++) { // w = B·w
            for (int i = 0; i < N; i++) {
                int s = 0;
                int row = ENTRIES + i * N;
                for (int j = 0; j < N; j++) {
                    s += element(seed, row + j) * w[j];
                }
                next[i] = s;
            }
            int[] t = w;
            w = next;
            next = t;
        }
        int sum = 0;
        for (int i = 0; i < N; i++) { // u·(A·w)
            int s = 0;
            for (int j = 0; j < N; j++) {
                s += element(seed, i * N + j) * w[j];
            }
            sum += (2 * i + 1) * s;
        }
        return sum;
    }

    /** What the kernel computes: X = A·B<sup>rounds</sup> row-major, then the checksum (length {@link #ENTRIES} + 1). */
    public static int[] chainOnCpu(long seed, int rounds) {
        int[] x = new int[ENTRIES];
        int[] b = new int[ENTRIES];
        for (int i = 0; i < ENTRIES; i++) {
            x[i] = element(seed, i);
            b[i] = element(seed, ENTRIES + i);
        }
        int[] y = new int[ENTRIES];
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < N; i++) {
                for (int c = 0; c < N; c++) {
                    int s = 0;
                    for (int j = 0; j < N; j++) {
                        s += x[i * N + j] * b[j * N + c];
                    }
                    y[i * N + c] = s;
                }
            }
            int[] t = x;
            x = y;
            y = t;
        }
        int[] out = new int[ENTRIES + 1];
        int sum = 0;
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                out[i * N + j] = x[i * N + j];
                sum += (2 * i + 1) * (2 * j + 1) * x[i * N + j];
            }
        }
        out[ENTRIES] = sum;
        return out;
    }
}
