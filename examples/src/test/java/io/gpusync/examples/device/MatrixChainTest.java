package io.gpusync.examples.device;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The showcase's computation: the client's cheap check agrees with what the kernel computes, and catches errors. */
class MatrixChainTest {

    @Test
    void theClientsCheckAgreesWithTheFullChainOfProducts() {
        for (long seed : new long[]{0, 1, 42, -7, 0x5EED + 34, Long.MAX_VALUE}) {
            for (int rounds : new int[]{0, 1, 2, 5}) {
                int[] kernel = MatrixChain.chainOnCpu(seed, rounds);
                assertThat(MatrixChain.checksum(seed, rounds)).as("seed %d, %d products", seed, rounds)
                        .isEqualTo(kernel[MatrixChain.ENTRIES]);
            }
        }
    }

    @Test
    void aSingleWrongEntryChangesTheChecksum() {
        int[] x = MatrixChain.chainOnCpu(99, 3);
        int good = weighted(x);
        assertThat(good).isEqualTo(x[MatrixChain.ENTRIES]);
        for (int i : new int[]{0, 1, MatrixChain.N + 5, MatrixChain.ENTRIES - 1}) {
            int[] bad = x.clone();
            bad[i] += 1 << (i % 31); // every weight is odd: no single-entry change vanishes mod 2^32
            assertThat(weighted(bad)).as("entry %d changed", i).isNotEqualTo(good);
        }
    }

    @Test
    void differentSeedsAndRoundsGiveDifferentChecksums() {
        assertThat(MatrixChain.checksum(1, 3)).isNotEqualTo(MatrixChain.checksum(2, 3))
                .isNotEqualTo(MatrixChain.checksum(1, 4));
    }

    @Test
    void fillWritesTheInputTheCheckReads() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment input = arena.allocate(MatrixChain.INPUT_BYTES);
            MatrixChain.fill(input, 1234);
            for (int i = 0; i < 2 * MatrixChain.ENTRIES; i += 97) {
                assertThat(input.getAtIndex(ValueLayout.JAVA_INT, i)).isEqualTo(MatrixChain.element(1234, i));
            }
            assertThat(input.getAtIndex(ValueLayout.JAVA_INT, 2 * MatrixChain.ENTRIES - 1))
                    .isEqualTo(MatrixChain.element(1234, 2 * MatrixChain.ENTRIES - 1));
        }
    }

    @Test
    void theShippedKernelMatchesTheCpuTwinsShape() throws IOException {
        String cu = resource("matrix.cu");
        String ptx = resource("matrix.ptx");
        assertThat(define(cu, "N")).isEqualTo(MatrixChain.N);
        assertThat(define(cu, "THREADS")).isEqualTo(256); // CudaMatrixWork launches one block of 256 threads
        assertThat(ptx).contains(".visible .entry matrix_chain(").contains(".version 7.8")
                .contains("matrix_chain_param_0").contains("matrix_chain_param_2").doesNotContain("matrix_chain_param_3");
    }

    private static int weighted(int[] x) {
        int sum = 0;
        for (int i = 0; i < MatrixChain.N; i++) {
            for (int j = 0; j < MatrixChain.N; j++) {
                sum += (2 * i + 1) * (2 * j + 1) * x[i * MatrixChain.N + j];
            }
        }
        return sum;
    }

    private static int define(String source, String name) {
        Matcher m = Pattern.compile("#define " + name + " (\\d+)").matcher(source);
        assertThat(m.find()).as("#define %s in matrix.cu", name).isTrue();
        return Integer.parseInt(m.group(1));
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = MatrixChain.class.getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }
}
