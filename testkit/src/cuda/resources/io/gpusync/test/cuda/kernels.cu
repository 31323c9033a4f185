// Test kernels for gpusync's CUDA gpu tests. Regenerate the PTX with:
//   nvcc -ptx -arch=sm_90 -o kernels.ptx kernels.cu && sed -i 's/^\.version .*/.version 7.8/' kernels.ptx
// (.version lowered so that drivers older than the CUDA 13 toolkit can JIT it; only PTX 7.8 features are used.)

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins for ns nanoseconds of %globaltimer (one thread is enough).
extern "C" __global__ void spin_ns(unsigned long long ns) {
    unsigned long long start = globaltimer();
    while (globaltimer() - start < ns) { }
}

// Spins for ns, then writes value to *dst (mapped host memory) with a system-scope fence.
extern "C" __global__ void spin_then_write(unsigned long long ns, volatile unsigned long long *dst,
                                           unsigned long long value) {
    unsigned long long start = globaltimer();
    while (globaltimer() - start < ns) { }
    *dst = value;
    __threadfence_system();
}

// Copies *src to *dst (both mapped host memory), volatile, system-scope fence.
extern "C" __global__ void copy_u64(const volatile unsigned long long *src, volatile unsigned long long *dst) {
    *dst = *src;
    __threadfence_system();
}

// Traps: a sticky context error (CUDA_ERROR_LAUNCH_FAILED / ILLEGAL_INSTRUCTION).
extern "C" __global__ void trap_kernel() {
    asm volatile("trap;");
}
