// cuda_callbacks: what the CUDA driver does with a stream callback (cuStreamAddCallback) and a host function
// (cuLaunchHostFunc) — after a sticky fault (which of them is called, with what, how soon), on the happy path (what
// each costs), and with many of them behind one event (when the driver blocks the launch). The measurements behind
// gpusync's choice of stream callbacks (io.gpusync.cuda.HostFunctions); results: ../results/cuda-callbacks-h200.txt.
//
// Build (no GPU or libcuda needed here: link against a stub of the symbols, the real libcuda.so.1 is used there):
//   gcc -O2 -c cuda_callbacks.c -I/usr/local/cuda/include -o cb.o
//   nm -u cb.o | awk '/ cu/{print "int "$2"(void){return 0;}"}' > stub.c
//   gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 stub.c && gcc -o cuda_callbacks cb.o ./libcuda.so.1
// Run on the GPU machine, with testkit/src/cuda/resources/io/gpusync/test/cuda/kernels.ptx:
//   ./cuda_callbacks fault cb kernels.ptx; ./cuda_callbacks fault hf kernels.ptx
//   ./cuda_callbacks room x kernels.ptx;   ./cuda_callbacks lat x kernels.ptx
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *n_; cuGetErrorName(r_, &n_); printf("%s -> %s (line %d)\n", #x, n_, __LINE__); } } while (0)

static CUfunction spin, trap;
static char *load(const char *p) {
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(n + 1, 1);
    fread(b, 1, n, f);
    fclose(f);
    return b;
}

typedef struct { const char *name; _Atomic int fired; CUresult status; double at; } slot;
static void CUDA_CB on_cb(CUstream s, CUresult status, void *u) {
    slot *sl = u;
    sl->status = status;
    sl->at = now_us();
    atomic_store(&sl->fired, 1);
}
static void CUDA_CB on_hf(void *u) {
    slot *sl = u;
    sl->status = 0;
    sl->at = now_us();
    atomic_store(&sl->fired, 1);
}
static int use_cb;
static void after(CUstream s, slot *sl) {
    if (use_cb) CK(cuStreamAddCallback(s, on_cb, sl, 0));
    else CK(cuLaunchHostFunc(s, on_hf, sl));
}
static void launch_spin(CUstream s, unsigned long long ns) {
    void *args[] = {&ns};
    CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

int main(int argc, char **argv) {
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuCtxCreate(&ctx, NULL, 0, dev));
    CUmodule mod;
    CK(cuModuleLoadData(&mod, load(argc > 3 ? argv[3] : "kernels.ptx")));
    CK(cuModuleGetFunction(&spin, mod, "spin_ns"));
    CK(cuModuleGetFunction(&trap, mod, "trap_kernel"));
    if (!strcmp(argv[1], "fault")) {
        use_cb = !strcmp(argv[2], "cb");
        CUstream s1, s2, s3, s4, s5;
        CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
        CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
        CK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));
        CK(cuStreamCreate(&s4, CU_STREAM_NON_BLOCKING));
        CK(cuStreamCreate(&s5, CU_STREAM_NON_BLOCKING));
        unsigned int *gate;
        CK(cuMemHostAlloc((void **) &gate, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
        *gate = 0;
        CUdeviceptr dgate;
        CK(cuMemHostGetDevicePointer(&dgate, gate, 0));
        slot sl[6] = {{"same stream, after the trap"}, {"other stream, behind a 2 s kernel"},
                      {"other stream, behind a closed host gate"}, {"private stream waiting on an event after the trap"},
                      {"private stream waiting on an event of a 2 s kernel"}, {"NULL stream (legacy) after nothing"}};
        launch_spin(s1, 300000000ULL);
        CK(cuLaunchKernel(trap, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
        after(s1, &sl[0]);
        launch_spin(s2, 2000000000ULL);
        CUevent e2;
        CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
        CK(cuEventRecord(e2, s2));
        after(s2, &sl[1]);
        CK(cuStreamWaitValue32(s3, dgate, 1, CU_STREAM_WAIT_VALUE_GEQ));
        after(s3, &sl[2]);
        CUevent e1;
        CK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
        CK(cuEventRecord(e1, s1));
        CK(cuStreamWaitEvent(s4, e1, 0));
        after(s4, &sl[3]);
        CK(cuStreamWaitEvent(s5, e2, 0));
        after(s5, &sl[4]);
        CUresult r;
        while ((r = cuStreamQuery(s1)) == CUDA_ERROR_NOT_READY) { }
        double tf = now_us();
        const char *n;
        cuGetErrorName(r, &n);
        printf("[%s] trap seen by cuStreamQuery: %s\n", use_cb ? "cuStreamAddCallback" : "cuLaunchHostFunc", n);
        double end = tf + 3e6;
        while (now_us() < end) usleep(1000);
        for (int i = 0; i < 5; i++) {
            if (atomic_load(&sl[i].fired)) {
                cuGetErrorName(sl[i].status, &n);
                printf("  %-52s fired, status %s, %+.0f us after the trap was seen\n", sl[i].name, n, sl[i].at - tf);
            } else {
                printf("  %-52s NOT fired within 3 s\n", sl[i].name);
            }
        }
        fflush(stdout);
        _exit(0);
    }
    if (!strcmp(argv[1], "room")) {
        for (int m = 0; m < 2; m++) {
            use_cb = m;
            CUstream busy;
            CK(cuStreamCreate(&busy, CU_STREAM_NON_BLOCKING));
            launch_spin(busy, 1500000000ULL);
            CUevent e;
            CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
            CK(cuEventRecord(e, busy));
            static slot sl[200];
            double worst = 0; int at = -1;
            for (int i = 0; i < 200; i++) {
                CUstream p;
                CK(cuStreamCreate(&p, CU_STREAM_NON_BLOCKING));
                CK(cuStreamWaitEvent(p, e, 0));
                double t0 = now_us();
                after(p, &sl[i]);
                double d = now_us() - t0;
                if (d > worst) { worst = d; at = i; }
                CK(cuStreamDestroy(p));
            }
            printf("[%s] 200 callbacks behind an event of a 1.5 s kernel, each on its own private stream: slowest launch %.0f us (#%d)\n",
                   use_cb ? "cuStreamAddCallback" : "cuLaunchHostFunc", worst, at + 1);
            CK(cuStreamSynchronize(busy));
            usleep(100000);
        }
        return 0;
    }
    // happy path latency: launch a kernel of k ns, then a callback / host function; time from the end of the
    // host-side launch to the call, minus nothing (same kernel for both: compare the two). Alternate cb/hf.
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    unsigned long long ks[] = {1000, 100000, 1000000};
    for (int ki = 0; ki < 3; ki++) {
        int n = 2000;
        double *lat[2];
        lat[0] = calloc(n, sizeof(double));
        lat[1] = calloc(n, sizeof(double));
        for (int i = 0; i < 2 * n; i++) {
            use_cb = i & 1;
            slot sl = {"x"};
            double t0 = now_us();
            launch_spin(s, ks[ki]);
            after(s, &sl);
            while (!atomic_load(&sl.fired)) { }
            lat[use_cb][i / 2] = sl.at - t0;
            CK(cuStreamSynchronize(s));
        }
        for (int w = 0; w < 2; w++) {
            // sort
            for (int a = 1; a < n; a++) {
                double v = lat[w][a];
                int b = a - 1;
                while (b >= 0 && lat[w][b] > v) { lat[w][b + 1] = lat[w][b]; b--; }
                lat[w][b + 1] = v;
            }
            printf("kernel %7llu ns  %-20s launch->call p50 %8.1f us  p90 %8.1f  p99 %8.1f\n", ks[ki],
                   w ? "cuStreamAddCallback" : "cuLaunchHostFunc", lat[w][n / 2], lat[w][n * 9 / 10], lat[w][n * 99 / 100]);
        }
    }
    return 0;
}
