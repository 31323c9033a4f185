/* Two malloc implementations on one brk heap: the LD_PRELOADed libc_malloc_debug (MALLOC_CHECK_=3) serves
 * malloc/free; thread "real" calls libc.so.6's own malloc/free, found with dlsym on a libc handle (what the JDK's
 * Linker.nativeLinker().defaultLookup() returns, through libsyslookup.so). Both grow and trim the heap with sbrk.
 * No JVM, no driver, no gpusync: what the soak's start-up aborts were (results/soak.md). With CONTROL set, both threads
 * use the checked malloc.
 *
 *   gcc -O2 -o /tmp/two_allocs benchmarks/probes/two_allocs.c -ldl -lpthread
 *   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 MALLOC_CHECK_=3 MALLOC_PERTURB_=141 /tmp/two_allocs 8
 *   (9 of 19 runs aborted or crashed here; with CONTROL=1, 0 of 8) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static volatile int stop;

static void *real_thread(void *arg) {
    void *p[16];
    for (long r = 0; !stop; r++) {
        for (int i = 0; i < 16; i++) { p[i] = real_malloc(48 * 1024); memset(p[i], 0x5a, 48 * 1024); }
        for (int i = 15; i >= 0; i--) real_free(p[i]);
    }
    return NULL;
}

static void *debug_thread(void *arg) {
    void *p[64];
    for (long r = 0; !stop; r++) {
        for (int i = 0; i < 64; i++) { p[i] = malloc(24 * 1024 + i * 8); memset(p[i], 0x33, 24 * 1024); }
        for (int i = 63; i >= 0; i--) free(p[i]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 10;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
    real_malloc = getenv("CONTROL") ? malloc : (void *(*)(size_t))dlsym(libc, "malloc");
    real_free = getenv("CONTROL") ? free : (void (*)(void *))dlsym(libc, "free");
    printf("malloc (global) %p, libc's own %p\n", (void *)malloc, (void *)real_malloc);
    pthread_t a, b;
    /* the real allocator's first caller owns its main (sbrk) arena: make it the real thread's */
    pthread_create(&a, NULL, real_thread, NULL);
    usleep(1000);
    pthread_create(&b, NULL, debug_thread, NULL);
    sleep(seconds);
    stop = 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("no crash in %d s\n", seconds);
    return 0;
}
