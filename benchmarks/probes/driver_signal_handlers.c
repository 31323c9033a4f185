// Which GPU drivers replace a process's fault-signal handlers, and when. A JVM owns SIGSEGV/SIGBUS/SIGFPE/SIGILL
// (safepoint polls, implicit null checks, stack banging): a driver that replaces them breaks it.
// Build: gcc -O1 -o /tmp/driver_signal_handlers benchmarks/probes/driver_signal_handlers.c -ldl
// Run:   EGL_PLATFORM=surfaceless /tmp/driver_signal_handlers opencl|vulkan|egl   (prints the owner of each handler)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

static void mine(int s, siginfo_t *i, void *c) { (void)s; (void)i; (void)c; }
static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGUSR2, SIGXFSZ};
static const char *names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGUSR2", "SIGXFSZ"};

static void report(const char *when) {
    printf("%s:\n", when);
    for (unsigned k = 0; k < sizeof sigs / sizeof *sigs; k++) {
        struct sigaction sa;
        sigaction(sigs[k], NULL, &sa);
        void *h = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
        Dl_info d = {0};
        const char *who = h == (void *)mine ? "ours (unchanged)" : (dladdr(h, &d) && d.dli_fname ? d.dli_fname : "?");
        printf("  %-8s %-40s%s\n", names[k], who, (sa.sa_flags & SA_RESETHAND) ? "  SA_RESETHAND (one-shot)" : "");
    }
}

typedef int32_t cl_int; typedef uint32_t cl_uint; typedef void *ptr;
int main(int argc, char **argv) {
    const char *api = argc > 1 ? argv[1] : "opencl";
    struct sigaction sa = {0};
    sa.sa_sigaction = mine; sa.sa_flags = SA_SIGINFO | SA_RESTART;
    for (unsigned k = 0; k < sizeof sigs / sizeof *sigs; k++) sigaction(sigs[k], &sa, NULL);
    report("before the driver");
    if (!strcmp(api, "opencl")) {
        void *l = dlopen("libOpenCL.so.1", RTLD_NOW);
        if (!l) { printf("no libOpenCL: %s\n", dlerror()); return 2; }
        cl_int (*getPlatforms)(cl_uint, ptr *, cl_uint *) = dlsym(l, "clGetPlatformIDs");
        cl_int (*getDevices)(ptr, uint64_t, cl_uint, ptr *, cl_uint *) = dlsym(l, "clGetDeviceIDs");
        ptr (*createContext)(ptr, cl_uint, ptr *, ptr, ptr, cl_int *) = dlsym(l, "clCreateContext");
        ptr p; cl_uint n = 0;
        if (getPlatforms(1, &p, &n) || !n) { printf("no platform\n"); return 2; }
        report("after clGetPlatformIDs");
        ptr dev; cl_int err;
        getDevices(p, 0xFFFFFFFF, 1, &dev, &n);
        createContext(NULL, 1, &dev, NULL, NULL, &err);
        report("after clCreateContext");
    } else if (!strcmp(api, "vulkan")) {
        void *l = dlopen("libvulkan.so.1", RTLD_NOW);
        if (!l) { printf("no libvulkan\n"); return 2; }
        typedef struct { int sType; const void *next; uint32_t flags; const void *app; uint32_t nl; const char *const *l; uint32_t ne; const char *const *e; } Ici;
        int (*create)(const Ici *, const void *, ptr *) = dlsym(l, "vkCreateInstance");
        int (*enumerate)(ptr, uint32_t *, ptr *) = dlsym(l, "vkEnumeratePhysicalDevices");
        Ici ci = {1, 0, 0, 0, 0, 0, 0, 0};
        ptr inst;
        if (create(&ci, NULL, &inst)) { printf("vkCreateInstance failed\n"); return 2; }
        report("after vkCreateInstance");
        uint32_t n = 1; ptr pd;
        enumerate(inst, &n, &pd);
        report("after vkEnumeratePhysicalDevices");
    } else {
        void *l = dlopen("libEGL.so.1", RTLD_NOW);
        if (!l) { printf("no libEGL\n"); return 2; }
        ptr (*getDisplay)(ptr) = dlsym(l, "eglGetDisplay");
        unsigned (*init)(ptr, int *, int *) = dlsym(l, "eglInitialize");
        ptr d = getDisplay(NULL);
        int ma, mi;
        if (!init(d, &ma, &mi)) { printf("eglInitialize failed\n"); return 2; }
        report("after eglInitialize");
    }
    return 0;
}
