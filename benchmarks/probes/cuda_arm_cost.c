// cuda_arm_cost: what one LOW_CPU wait costs in CPU on the CUDA side, without gpusync: each step of gpusync's arm of a
// stream callback (StreamCallbacks.launchAfterEvent: push the context, create a private non-blocking stream, make it
// wait for the event, add the callback, destroy the stream, pop), the same arm on a reused idle private stream, and
// a callback on the recording stream itself; then whole wait cycles behind a kernel of K us (launch, record, wait):
// a BlockingSync event in cuEventSynchronize against each arm with the waiting thread parked on a condition variable
// that the callback signals. Reports, per step, wall and calling-thread CPU (CLOCK_THREAD_CPUTIME_ID) in us, and per
// cycle the p50 latency, the waiting thread's CPU and the whole process's CPU (getrusage: the driver's threads too).
//
// Build here (no GPU or libcuda needed: link against a stub of the symbols; the real libcuda.so.1 is used there):
//   gcc -O2 -c cuda_arm_cost.c -I/usr/local/cuda/include -o arm.o
//   nm -u arm.o | awk '/ cu/{print "int "$2"(void){return 0;}"}' > stub.c
//   gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 stub.c && gcc -o cuda_arm_cost arm.o ./libcuda.so.1 -lpthread
// Run on the GPU machine, with testkit/src/cuda/resources/io/gpusync/test/cuda/kernels.ptx:
//   ./cuda_arm_cost kernels.ptx 1000 1000      (kernel us, iterations per cycle row)
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { const char *n_; cuGetErrorName(r_, &n_); \
    printf("%s -> %s (line %d)\n", #x, n_, __LINE__); exit(1); } } while (0)

static double wall_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static double thread_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
static double process_cpu_us(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}
static char *load(const char *p) {
    FILE *f = fopen(p, "rb");
    if (!f) { perror(p); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(n + 1, 1);
    if (fread(b, 1, n, f) != (size_t) n) { perror("read"); exit(1); }
    fclose(f);
    return b;
}

static CUcontext ctx;
static CUfunction spin;
static void launch_spin(CUstream s, unsigned long long ns) {
    void *args[] = {&ns};
    CK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

// the waiting thread parks here until the callback signals
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int fired;
static void CUDA_CB on_cb(CUstream s, CUresult status, void *u) {
    (void) s; (void) status; (void) u;
    pthread_mutex_lock(&mu);
    fired = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}
static void park_until_fired(void) {
    pthread_mutex_lock(&mu);
    while (!fired) pthread_cond_wait(&cv, &mu);
    fired = 0;
    pthread_mutex_unlock(&mu);
}

enum arm { ARM_NEW_STREAM, ARM_REUSED_STREAM, ARM_SAME_STREAM };
static const char *arm_name[] = {"private stream per arm (gpusync now)", "reused idle private stream",
                                 "callback on the recording stream"};
static CUstream reused;

static void arm(enum arm how, CUstream recording, CUevent ev) {
    CUcontext popped;
    switch (how) {
    case ARM_NEW_STREAM: {
        CUstream p;
        CK(cuCtxPushCurrent(ctx));
        CK(cuStreamCreate(&p, CU_STREAM_NON_BLOCKING));
        CK(cuStreamWaitEvent(p, ev, 0));
        CK(cuStreamAddCallback(p, on_cb, NULL, 0));
        CK(cuStreamDestroy(p));
        CK(cuCtxPopCurrent(&popped));
        break;
    }
    case ARM_REUSED_STREAM:
        CK(cuCtxPushCurrent(ctx));
        CK(cuStreamWaitEvent(reused, ev, 0));
        CK(cuStreamAddCallback(reused, on_cb, NULL, 0));
        CK(cuCtxPopCurrent(&popped));
        break;
    case ARM_SAME_STREAM:
        CK(cuStreamAddCallback(recording, on_cb, NULL, 0));
        break;
    }
}

// One step's cost, n times on an idle stream whose event is complete: wall and thread CPU per call.
static void steps(CUstream s, int n) {
    double *w = calloc(n, sizeof(double)), *c = calloc(n, sizeof(double));
    const char *names[] = {"cuEventCreate + cuEventRecord + cuEventDestroy", "cuCtxPushCurrent + cuCtxPopCurrent",
                           "cuStreamCreate(NON_BLOCKING)", "cuStreamWaitEvent", "cuStreamAddCallback (private stream)",
                           "cuStreamDestroy (idle)", "cuEventQuery (complete)"};
    printf("\n| step | wall p50 us | wall p90 us | thread CPU p50 us |\n|---|---:|---:|---:|\n");
    for (int step = 0; step < 7; step++) {
        for (int i = 0; i < n; i++) {
            CUevent ev;
            CUstream p;
            CUcontext popped;
            CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
            CK(cuEventRecord(ev, s));
            CK(cuStreamSynchronize(s));
            CK(cuStreamCreate(&p, CU_STREAM_NON_BLOCKING));
            double t0 = wall_us(), c0 = thread_cpu_us();
            switch (step) {
            case 0: { CUevent e2; CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING)); CK(cuEventRecord(e2, s));
                      CK(cuEventDestroy(e2)); break; }
            case 1: CK(cuCtxPushCurrent(ctx)); CK(cuCtxPopCurrent(&popped)); break;
            case 2: { CUstream q; CK(cuStreamCreate(&q, CU_STREAM_NON_BLOCKING)); w[i] = wall_us() - t0;
                      c[i] = thread_cpu_us() - c0; CK(cuStreamDestroy(q)); goto measured; }
            case 3: CK(cuStreamWaitEvent(p, ev, 0)); break;
            case 4: CK(cuStreamAddCallback(p, on_cb, NULL, 0)); break;
            case 5: CK(cuStreamDestroy(p)); p = NULL; break;
            case 6: CK(cuEventQuery(ev)); break;
            }
            w[i] = wall_us() - t0;
            c[i] = thread_cpu_us() - c0;
        measured:
            if (step == 4) park_until_fired();
            if (p) CK(cuStreamDestroy(p));
            CK(cuStreamSynchronize(s));
            CK(cuEventDestroy(ev));
        }
        qsort(w, n, sizeof(double), cmp);
        qsort(c, n, sizeof(double), cmp);
        printf("| %s | %.1f | %.1f | %.1f |\n", names[step], w[n / 2], w[n * 9 / 10], c[n / 2]);
    }
    free(w);
    free(c);
}

// Whole cycles: launch a K us kernel, record an event, wait; p50 latency, waiting-thread and process CPU per cycle.
static void cycles(CUstream s, unsigned long long kernel_ns, int n) {
    CUevent blocking;
    CK(cuEventCreate(&blocking, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING));
    double *lat = calloc(n, sizeof(double));
    printf("\n| %llu us kernel, %d cycles | p50 us | p90 us | waiting thread CPU us/cycle | process CPU us/cycle |\n"
           "|---|---:|---:|---:|---:|\n", kernel_ns / 1000, n);
    for (int way = -1; way < 3; way++) {
        double c0 = thread_cpu_us(), p0 = process_cpu_us();
        for (int i = 0; i < n; i++) {
            double t0 = wall_us();
            launch_spin(s, kernel_ns);
            if (way < 0) {
                CK(cuEventRecord(blocking, s));
                CK(cuEventSynchronize(blocking));
            } else {
                CUevent ev;
                CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
                CK(cuEventRecord(ev, s));
                arm((enum arm) way, s, ev);
                park_until_fired();
                CK(cuEventDestroy(ev));
            }
            lat[i] = wall_us() - t0;
        }
        double cpu = (thread_cpu_us() - c0) / n, proc = (process_cpu_us() - p0) / n;
        qsort(lat, n, sizeof(double), cmp);
        printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", way < 0 ? "BlockingSync event, cuEventSynchronize" : arm_name[way],
               lat[n / 2], lat[n * 9 / 10], cpu, proc);
    }
    free(lat);
    CK(cuEventDestroy(blocking));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s kernels.ptx [kernel_us=1000] [iterations=1000]\n", argv[0]);
        return 2;
    }
    unsigned long long kernel_us = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    int n = argc > 3 ? atoi(argv[3]) : 1000;
    CUdevice dev;
    CUmodule mod;
    CUstream s;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, load(argv[1])));
    CK(cuModuleGetFunction(&spin, mod, "spin_ns"));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&reused, CU_STREAM_NON_BLOCKING));
    char name[256];
    CK(cuDeviceGetName(name, sizeof name, dev));
    printf("cuda_arm_cost on %s, %d iterations per row\n", name, n);
    steps(s, n);
    cycles(s, 1000ULL, n); // 1 us kernels
    cycles(s, kernel_us * 1000ULL, kernel_us >= 1000 ? n / 2 : n);
    return 0;
}
