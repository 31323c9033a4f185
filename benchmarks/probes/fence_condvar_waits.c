// Does glibc's condition variable stall under the waits that llvmpipe's fences see in the soak, with no GL, no
// gpusync and no JVM in the process? llvmpipe (Mesa 22.3) signals a fence from each rasteriser thread under the
// fence's mutex, with a broadcast once every thread has; its scene queue holds a few scenes, so the producer waits
// (untimed) for an old scene's fence before it reuses the scene; gpusync's GL waits are timed waits of 5-ms slices on
// the newest fences (eglClientWaitSyncKHR → lp_fence_timedwait), most of which time out. In one soak here the
// rasteriser sat inside pthread_cond_broadcast (the wait for the old group's waiters, __g_refs) for two minutes,
// until a native stack dump's ptrace stops released it.
//
// This program is that pattern on plain pthreads: RASTERISERS threads run scenes (random work, by default 0-3 ms each, then a
// fence signal and a barrier), the producer queues scenes and waits for the fence SCENES back, WAITERS threads take
// the newest fence and wait on it in timed slices (by default 0.5-5.5 ms) until it is signalled. With TARGET "any", a
// waiter takes a random queued fence instead, so its timed slices share a condition variable with the producer's
// untimed wait, as gpusync's waits on an old fence do while the soak's producer waits for a free scene.
//
//   gcc -O2 -o fence_condvar_waits fence_condvar_waits.c -lpthread
//   ./fence_condvar_waits SECONDS [MAX_WORK_US=3000] [MAX_SLICE_US=5000] [TARGET=newest|any]
//
// Smaller values make more broadcasts and more timed-out slices a second.
// Same output and exit codes as the other probes (watchdog.h): "STALL" and exit 2, or "NO STALL" and exit 0.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define RASTERISERS 2
#define WAITERS 6
#define SCENES 4
#define THREADS (RASTERISERS + WAITERS + 1)

#include "probe_threads.h"

typedef struct { // llvmpipe's struct lp_fence, and a reference count
    atomic_int refs;
    pthread_mutex_t mutex;
    pthread_cond_t signalled;
    int rank, count;
} fence_t;

static fence_t *fence_new(void) {
    fence_t *f = calloc(1, sizeof(*f));
    atomic_init(&f->refs, 1);
    pthread_mutex_init(&f->mutex, NULL);
    pthread_cond_init(&f->signalled, NULL);
    f->rank = RASTERISERS;
    return f;
}

static void fence_unref(fence_t *f) {
    if (atomic_fetch_sub(&f->refs, 1) == 1) {
        pthread_cond_destroy(&f->signalled);
        pthread_mutex_destroy(&f->mutex);
        free(f);
    }
}

static void fence_signal(fence_t *f) { // lp_fence_signal
    pthread_mutex_lock(&f->mutex);
    if (++f->count == f->rank) pthread_cond_broadcast(&f->signalled);
    pthread_mutex_unlock(&f->mutex);
}

static void fence_wait(fence_t *f) { // lp_fence_wait
    pthread_mutex_lock(&f->mutex);
    while (f->count < f->rank) pthread_cond_wait(&f->signalled, &f->mutex);
    pthread_mutex_unlock(&f->mutex);
}

static int fence_timedwait(fence_t *f, long nanos) { // lp_fence_timedwait
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += nanos;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&f->mutex);
    while (f->count < f->rank) {
        if (pthread_cond_timedwait(&f->signalled, &f->mutex, &t) != 0) break;
    }
    int done = f->count >= f->rank;
    pthread_mutex_unlock(&f->mutex);
    return done;
}

// The scene queue: the producer fills slots in turn, the rasterisers take them in order
static fence_t *scene[SCENES];
static long queued, taken;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_more = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t scene_done;
static fence_t *newest; // under queue_lock, with a reference of its own
static int raster_slot[RASTERISERS];
static fence_t *current_scene;
static unsigned max_work_us = 3000, max_slice_us = 5000;
static int any_fence; // TARGET "any": waiters take a random queued fence

static void *rasteriser_main(void *arg) {
    int me = (int) (long) arg;
    unsigned seed = (unsigned) me * 7919u;
    while (!stop) {
        if (me == raster_slot[0]) { // thread 0 dequeues the scene, as lp_rast does
            pthread_mutex_lock(&queue_lock);
            in_call[me] = "waiting for a scene";
            while (taken == queued && !stop) pthread_cond_wait(&queue_more, &queue_lock);
            current_scene = scene[taken % SCENES];
            taken++;
            pthread_mutex_unlock(&queue_lock);
        }
        in_call[me] = "barrier (scene start)";
        pthread_barrier_wait(&scene_done);
        if (stop) break;
        in_call[me] = "rasterising";
        usleep(rand_r(&seed) % max_work_us);
        in_call[me] = "fence signal (broadcast)";
        fence_signal(current_scene);
        in_call[me] = "barrier (scene end)";
        pthread_barrier_wait(&scene_done);
        progress[me]++;
    }
    return NULL;
}

static void *producer_main(void *arg) {
    int me = (int) (long) arg;
    for (long n = 0; !stop; n++) {
        fence_t *old = scene[n % SCENES];
        if (old != NULL) { // lp_setup_get_empty_scene: wait until the scene in this slot has been rasterised
            in_call[me] = "fence wait (untimed, for a free scene)";
            fence_wait(old);
        }
        fence_t *f = fence_new();
        atomic_fetch_add(&f->refs, 1); // the newest-fence pointer's reference
        in_call[me] = "queueing";
        pthread_mutex_lock(&queue_lock); // waiters take references to queued fences under this lock
        scene[n % SCENES] = f;
        queued++;
        fence_t *was = newest;
        newest = f;
        pthread_cond_signal(&queue_more);
        pthread_mutex_unlock(&queue_lock);
        if (old != NULL) fence_unref(old);
        if (was != NULL) fence_unref(was);
        progress[me]++;
    }
    return NULL;
}

static void *waiter_main(void *arg) {
    int me = (int) (long) arg;
    unsigned seed = (unsigned) me * 104729u;
    while (!stop) {
        pthread_mutex_lock(&queue_lock);
        fence_t *f = any_fence ? scene[rand_r(&seed) % SCENES] : newest;
        if (f != NULL) atomic_fetch_add(&f->refs, 1);
        pthread_mutex_unlock(&queue_lock);
        if (f == NULL) {
            usleep(1000);
            continue;
        }
        in_call[me] = "fence timed wait (slices)";
        while (!fence_timedwait(f, 1000L * (long) (max_slice_us / 10 + rand_r(&seed) % max_slice_us)) && !stop) {
        }
        fence_unref(f);
        in_call[me] = "idle";
        progress[me]++;
    }
    return NULL;
}

#include "watchdog.h"

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    if (argc > 2) max_work_us = (unsigned) atoi(argv[2]);
    if (argc > 3) max_slice_us = (unsigned) atoi(argv[3]);
    if (argc > 4) any_fence = strcmp(argv[4], "any") == 0;
    if (max_work_us == 0 || max_slice_us < 10) { fprintf(stderr, "MAX_WORK_US > 0, MAX_SLICE_US >= 10\n"); return 1; }
    printf("%d rasterisers (0-%u us of work a scene, a fence broadcast under its mutex, a barrier), a producer waiting"
           " for the fence %d scenes back, %d waiters in timed slices of up to %u us on %s\n", RASTERISERS,
           max_work_us, SCENES, WAITERS, max_slice_us * 11 / 10, any_fence ? "a random queued fence" : "the newest fence");
    pthread_barrier_init(&scene_done, NULL, RASTERISERS);
    pthread_t t[THREADS];
    int k = 0;
    for (int i = 0; i < RASTERISERS; i++) raster_slot[i] = reg("rasteriser");
    for (int i = 0; i < RASTERISERS; i++) pthread_create(&t[k++], NULL, rasteriser_main, (void *) (long) raster_slot[i]);
    pthread_create(&t[k++], NULL, producer_main, (void *) (long) reg("producer"));
    for (int i = 0; i < WAITERS; i++) pthread_create(&t[k++], NULL, waiter_main, (void *) (long) reg("waiter"));
    watchdog(seconds, NULL);
}
