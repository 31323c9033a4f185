// The demo's real-work kernel (the /compute showcase). Regenerate the PTX with:
//   nvcc -ptx -arch=sm_90 -o matrix.ptx matrix.cu && sed -i 's/^\.version .*/.version 7.8/' matrix.ptx
// (.version lowered so that drivers older than the CUDA 13 toolkit can JIT it; only PTX 7.8 features are used.)
// MatrixChain.java is its CPU twin and holds the same constants.

#define N 64          // matrices are N x N unsigned 32-bit integers (arithmetic mod 2^32, exact)
#define THREADS 256   // one block of THREADS threads; each computes N*N/THREADS entries of one column

// in: A then B (row-major, N*N each). out: X = A * B^rounds (N*N), then the checksum
// sum_{i,j} (2i+1)(2j+1) X[i][j] mod 2^32. One block per request; A, X and B live in shared memory.
extern "C" __global__ void __launch_bounds__(THREADS) matrix_chain(const unsigned *in, unsigned *out, int rounds) {
    __shared__ unsigned X[N * N];
    __shared__ unsigned B[N * N];
    __shared__ unsigned sum;
    const int t = threadIdx.x;
    const int col = t % N;
    const int row0 = t / N;                  // rows row0, row0 + STEP, ...
    const int STEP = THREADS / N;
    const int PER = N * N / THREADS;
    for (int i = t; i < N * N; i += THREADS) {
        X[i] = in[i];
        B[i] = in[N * N + i];
    }
    if (t == 0) {
        sum = 0;
    }
    __syncthreads();
    unsigned acc[PER];
    for (int r = 0; r < rounds; r++) {
        #pragma unroll
        for (int k = 0; k < PER; k++) {
            acc[k] = 0;
        }
        for (int j = 0; j < N; j++) {
            unsigned b = B[j * N + col];
            #pragma unroll
            for (int k = 0; k < PER; k++) {
                acc[k] += X[(row0 + k * STEP) * N + j] * b;
            }
        }
        __syncthreads();                     // every thread has read X
        #pragma unroll
        for (int k = 0; k < PER; k++) {
            X[(row0 + k * STEP) * N + col] = acc[k];
        }
        __syncthreads();                     // X is the next power
    }
    unsigned partial = 0;
    #pragma unroll
    for (int k = 0; k < PER; k++) {
        int row = row0 + k * STEP;
        unsigned x = X[row * N + col];
        out[row * N + col] = x;
        partial += (2u * row + 1u) * (2u * col + 1u) * x;
    }
    atomicAdd(&sum, partial);                // integer adds commute: the sum does not depend on their order
    __syncthreads();
    if (t == 0) {
        out[N * N] = sum;
    }
}
