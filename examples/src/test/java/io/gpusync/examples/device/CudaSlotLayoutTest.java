package io.gpusync.examples.device;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CUDA showcase's buffer slots: a request's result (X, then the checksum word) lies wholly inside its own slot, so
 * filling the next slot's input cannot overwrite it, and the copy-out of the last slot stays inside the allocation.
 * (With 48 KiB slots the checksum word was the next slot's first input word: answers read after a later request's
 * fill were wrong, and that request's input was the previous checksum — wrong answers on the H200.)
 */
class CudaSlotLayoutTest {

    @Test
    void aSlotHoldsTheInputAndTheWholeOutputOfOneRequest() {
        assertThat(CudaMatrixWork.OUTPUT_OFFSET).isGreaterThanOrEqualTo(MatrixChain.INPUT_BYTES);
        assertThat(CudaMatrixWork.OUTPUT_OFFSET + MatrixChain.OUTPUT_BYTES).isLessThanOrEqualTo(CudaMatrixWork.SLOT_BYTES);
        assertThat(CudaMatrixWork.SLOT_BYTES % 256).as("slots stay aligned for the copies").isZero();
    }

    @Test
    void fillingTheNextSlotLeavesAFinishedChecksumAndItsOwnInputIntact() {
        int slots = 3;
        long checksumAt = CudaMatrixWork.OUTPUT_OFFSET + MatrixChain.ENTRIES * 4L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(CudaMatrixWork.SLOT_BYTES * slots, 256);
            for (int slot = 0; slot < slots; slot++) { // request k's result lands, then request k + 1 is filled
                MemorySegment s = host.asSlice(slot * CudaMatrixWork.SLOT_BYTES, CudaMatrixWork.SLOT_BYTES);
                MatrixChain.fill(s.asSlice(0, MatrixChain.INPUT_BYTES), 100 + slot);
                s.set(ValueLayout.JAVA_INT, checksumAt, MatrixChain.checksum(100 + slot, 3));
            }
            for (int slot = 0; slot < slots; slot++) {
                MemorySegment s = host.asSlice(slot * CudaMatrixWork.SLOT_BYTES, CudaMatrixWork.SLOT_BYTES);
                assertThat(s.get(ValueLayout.JAVA_INT, checksumAt)).isEqualTo(MatrixChain.checksum(100 + slot, 3));
                assertThat(s.get(ValueLayout.JAVA_INT, 0)).isEqualTo(MatrixChain.element(100 + slot, 0));
            }
        }
    }
}
