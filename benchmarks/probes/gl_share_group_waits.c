// Do GL/EGL drivers stall under the pattern gpusync's GL backend uses, with no gpusync in the process? One producer
// thread keeps its context current and submits clears, each batch followed by a GLsync and an EGL fence sync; waiter
// threads wait on the GLsyncs the way GlSyncWaiter does (a context of the producer's share group, taken from a pool,
// made current for the wait, glClientWaitSync in slices, the thread's binding restored) and on the EGL syncs the way
// EglSyncWaiter does (eglClientWaitSyncKHR in slices, no context); a deleter thread releases them the way gpusync's
// housekeeping does (glDeleteSync on a pooled context, eglDestroySyncKHR). With "vk", a thread also churns Vulkan
// instances and devices, as the soak's device churn does, beside it.
//
//   gcc -O2 -o gl_share_group_waits gl_share_group_waits.c -lEGL -lGLESv2 -lvulkan -lpthread
//   EGL_PLATFORM=surfaceless ./gl_share_group_waits SECONDS [vk] [exit]
//
// With "exit", each GL waiter thread ends after 100 waits (without eglReleaseThread) and a fresh one replaces it.
//
// A watchdog prints each thread's progress every 10 s; if a thread makes no progress for 15 s it prints "STALL" with
// the call each thread is in and exits 2 (attach gdb first to see the driver's stacks). Exit 0: no stall.
#define GL_GLEXT_PROTOTYPES
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <vulkan/vulkan.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GL_WAITERS 4
#define EGL_WAITERS 4
#define QUEUE 64
#define SLICE_NS 2000000ull

typedef struct { void *items[QUEUE]; int head, count; pthread_mutex_t lock; pthread_cond_t more, room; } queue_t;
static queue_t gl_q, egl_q, gl_del_q, egl_del_q;
static EGLDisplay dpy;
static EGLConfig config;
static EGLContext producer;
static EGLContext pool[64];
static int pool_n, pool_created;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static PFNEGLCREATESYNCKHRPROC eglCreateSyncKHR_;
static PFNEGLCLIENTWAITSYNCKHRPROC eglClientWaitSyncKHR_;
static PFNEGLDESTROYSYNCKHRPROC eglDestroySyncKHR_;

#define THREADS 16
#include "probe_threads.h"

static void q_init(queue_t *q) {
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->more, NULL);
    pthread_cond_init(&q->room, NULL);
}

static void q_put(queue_t *q, void *v) {
    pthread_mutex_lock(&q->lock);
    while (q->count == QUEUE && !stop) pthread_cond_wait(&q->room, &q->lock);
    q->items[(q->head + q->count++) % QUEUE] = v;
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->lock);
}

static void *q_take(queue_t *q) {
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !stop) pthread_cond_wait(&q->more, &q->lock);
    void *v = NULL;
    if (q->count) {
        v = q->items[q->head];
        q->head = (q->head + 1) % QUEUE;
        q->count--;
        pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->lock);
    return v;
}

static EGLContext take_ctx(int me) {
    pthread_mutex_lock(&pool_lock);
    EGLContext c = pool_n ? pool[--pool_n] : EGL_NO_CONTEXT;
    pthread_mutex_unlock(&pool_lock);
    if (c == EGL_NO_CONTEXT) {
        static const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
        in_call[me] = "eglCreateContext(shared)";
        c = eglCreateContext(dpy, config, producer, attribs);
        if (c == EGL_NO_CONTEXT) { fprintf(stderr, "eglCreateContext: 0x%x\n", eglGetError()); exit(1); }
        pthread_mutex_lock(&pool_lock);
        pool_created++;
        pthread_mutex_unlock(&pool_lock);
    }
    in_call[me] = "eglMakeCurrent(pooled)";
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) { fprintf(stderr, "eglMakeCurrent\n"); exit(1); }
    return c;
}

static void give_ctx(int me, EGLContext c) {
    in_call[me] = "eglMakeCurrent(NO_CONTEXT) restoring";
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    pthread_mutex_lock(&pool_lock);
    pool[pool_n++] = c;
    pthread_mutex_unlock(&pool_lock);
}

static void *producer_main(void *arg) {
    int me = (int) (long) arg;
    static const EGLint pb[] = {EGL_WIDTH, 1024, EGL_HEIGHT, 1024, EGL_NONE};
    EGLSurface surface = eglCreatePbufferSurface(dpy, config, pb);
    eglBindAPI(EGL_OPENGL_ES_API);
    if (!eglMakeCurrent(dpy, surface, surface, producer)) { fprintf(stderr, "producer eglMakeCurrent\n"); exit(1); }
    for (unsigned i = 0; !stop; i++) {
        int clears = 1 + (i % 8);
        for (int k = 0; k < clears; k++) {
            in_call[me] = "glClear";
            glClearColor(k & 1, 0.5f, (k >> 1) & 1, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            in_call[me] = "glFlush";
            glFlush();
        }
        in_call[me] = "glFenceSync";
        GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        in_call[me] = "eglCreateSyncKHR(FENCE)";
        EGLSyncKHR e = eglCreateSyncKHR_(dpy, EGL_SYNC_FENCE_KHR, NULL);
        in_call[me] = "glFlush";
        glFlush();
        in_call[me] = "queue full";
        q_put(&gl_q, s);
        q_put(&egl_q, e);
        progress[me]++;
    }
    return NULL;
}

// With "exit", a GL waiter thread ends after this many waits and a fresh thread takes its place (as the threads of
// gpusync's churned engines do), without eglReleaseThread; 0: one thread for the whole run
static int waits_per_thread;

static void *gl_waiter_main(void *arg) {
    int me = (int) (long) arg;
    eglBindAPI(EGL_OPENGL_ES_API);
    int done = 0;
    for (GLsync s; (waits_per_thread == 0 || done++ < waits_per_thread) && (s = q_take(&gl_q)) != NULL;) {
        EGLContext c = take_ctx(me);
        for (;;) {
            in_call[me] = "glClientWaitSync";
            GLenum r = glClientWaitSync(s, 0, SLICE_NS);
            if (r != GL_TIMEOUT_EXPIRED || stop) break;
        }
        give_ctx(me, c);
        q_put(&gl_del_q, s);
        progress[me]++;
    }
    return NULL;
}

static void *gl_waiter_slot_main(void *arg) { // one slot of GL waiters: a thread at a time, each ending in turn
    while (!stop) {
        pthread_t t;
        in_call[(int) (long) arg] = "pthread_create";
        pthread_create(&t, NULL, gl_waiter_main, arg);
        pthread_join(t, NULL);
    }
    return NULL;
}

static void *egl_waiter_main(void *arg) {
    int me = (int) (long) arg;
    for (EGLSyncKHR s; (s = q_take(&egl_q)) != NULL;) {
        for (;;) {
            in_call[me] = "eglClientWaitSyncKHR";
            EGLint r = eglClientWaitSyncKHR_(dpy, s, 0, SLICE_NS);
            if (r != EGL_TIMEOUT_EXPIRED_KHR || stop) break;
        }
        q_put(&egl_del_q, s);
        progress[me]++;
    }
    return NULL;
}

static void *deleter_main(void *arg) {
    int me = (int) (long) arg;
    eglBindAPI(EGL_OPENGL_ES_API);
    while (!stop) {
        GLsync s = q_take(&gl_del_q);
        if (s) {
            EGLContext c = take_ctx(me);
            in_call[me] = "glDeleteSync";
            glDeleteSync(s);
            give_ctx(me, c);
        }
        EGLSyncKHR e = q_take(&egl_del_q);
        if (e) {
            in_call[me] = "eglDestroySyncKHR";
            eglDestroySyncKHR_(dpy, e);
        }
        progress[me]++;
    }
    return NULL;
}


#include "vk_churn.h"
#include "watchdog.h"

static void pool_label(void) {
    printf(" pooled contexts=%d", pool_created);
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    int vk = argc > 2 && strcmp(argv[2], "vk") == 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "exit") == 0) waits_per_thread = 100;
    }
    eglCreateSyncKHR_ = (PFNEGLCREATESYNCKHRPROC) eglGetProcAddress("eglCreateSyncKHR");
    eglClientWaitSyncKHR_ = (PFNEGLCLIENTWAITSYNCKHRPROC) eglGetProcAddress("eglClientWaitSyncKHR");
    eglDestroySyncKHR_ = (PFNEGLDESTROYSYNCKHRPROC) eglGetProcAddress("eglDestroySyncKHR");
    dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL)) { fprintf(stderr, "no surfaceless display\n"); return 1; }
    static const EGLint ca[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLint n;
    if (!eglChooseConfig(dpy, ca, &config, 1, &n) || n < 1) { fprintf(stderr, "no GLES3 config\n"); return 1; }
    eglBindAPI(EGL_OPENGL_ES_API);
    static const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    producer = eglCreateContext(dpy, config, EGL_NO_CONTEXT, attribs);
    q_init(&gl_q); q_init(&egl_q); q_init(&gl_del_q); q_init(&egl_del_q);
    printf("EGL %s, GL vendor via the producer; %d GL waiters%s, %d EGL waiters, deleter%s\n",
           eglQueryString(dpy, EGL_VENDOR), GL_WAITERS, waits_per_thread ? " (a fresh thread every 100 waits)" : "",
           EGL_WAITERS, vk ? ", Vulkan churn" : "");
    pthread_t t[THREADS];
    int k = 0;
    pthread_create(&t[k++], NULL, producer_main, (void *) (long) reg("producer"));
    for (int i = 0; i < GL_WAITERS; i++)
        pthread_create(&t[k++], NULL, waits_per_thread ? gl_waiter_slot_main : gl_waiter_main, (void *) (long) reg("gl-waiter"));
    for (int i = 0; i < EGL_WAITERS; i++) pthread_create(&t[k++], NULL, egl_waiter_main, (void *) (long) reg("egl-waiter"));
    pthread_create(&t[k++], NULL, deleter_main, (void *) (long) reg("deleter"));
    if (vk) pthread_create(&t[k++], NULL, vk_churn_main, (void *) (long) reg("vk-churn"));
    watchdog(seconds, pool_label);
}
