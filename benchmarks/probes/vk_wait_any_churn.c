// Does a Vulkan driver stall when devices are destroyed after short-lived threads have waited on them, with no gpusync
// and no JVM in the process? The pattern is the soak's device churn as gpusync's engines see it: each churned device
// gets timeline semaphores and a wake-up semaphore, and waiter threads that do what an engine's wait-set thread does
// (vkWaitSemaphores with VK_SEMAPHORE_WAIT_ANY_BIT over the points and the wake-up semaphore, in slices of at most
// 50 ms), while another thread signals points from the host (vkSignalSemaphore) or the queue (an empty batch), and
// wake-ups from the host. The waiters then end, as
// a churned engine's threads do (or, with "linger", stay parked until after the destroy), and the device is waited idle
// and destroyed on another thread, as the test kit's VulkanContext does. NVIDIA's stall report showed driver-made
// threads named after churned engine threads spinning while vkDestroyDevice held the driver's lock.
// With "egl", EGL is initialised (surfaceless) and a thread keeps a GL context busy with fences, as the soak's EGL
// source does; NVIDIA's helper threads in that report were started from its EGL library. With "ctxchurn" that thread
// destroys its context and makes a fresh one every 200 fences: the whole suite hung with eglDestroyContext (a GL test
// class closing its producer) beside vkDestroyDevice (an earlier test's device). With "steady", a second device lives
// for the whole run, as the soak's own Vulkan source's does, with waiter threads that never end inside its
// vkWaitSemaphores and points the signaller signals too: in the soak, a churned device is always destroyed while other
// threads wait on a device that stays (the stall at e81d56d: vkDestroyDevice spinning, every other NVIDIA call queued).
// With "gpuwait" (implies "steady"), the steady device's queue is kept waiting on the GPU for a timeline value that only
// a later host signal gives (1-100 ms on), as the soak's queue tickets and CUDA's and vkd3d's queue waits do: should a
// destroy hold the driver's lock until the GPU is idle, that host signal would queue behind it, and the two would wait
// for each other.
// With "pool", five threads that live for the whole run make the blocking waits that gpusync's BLOCKING pool makes:
// vkWaitForFences on a fence of their own, signalled by an empty batch (on the churned device, under a hold that its
// destroy waits for, or on the steady one), a single timeline point with vkWaitSemaphores, and, with "egl",
// eglClientWaitSyncKHR from a thread without a current context on EGL fence syncs that the GL thread makes. The stall at
// e81d56d had one spinning NVIDIA thread for each such pool thread of each engine (5, 5 and 2), named after it, and
// more for the soak's finisher threads.
// With "glpool", a thread plays GL engines and GL test classes one after another, as the whole suite does: it makes a
// producer context, then GLPOOL fresh threads that each create a context shared with it, make that current, fence and
// glClientWaitSync on it, restore no context and end (without eglReleaseThread), as a GL engine's pool threads do; then
// it destroys the shared contexts (gpusync's share group let go) and the producer (the class's @AfterAll). The suite
// hung at 25fb15a with eglDestroyContext of a GL test's producer beside the test kit's vkDestroyDevice of an earlier
// device, and one spinning NVIDIA thread named after each of the GL engine's 16 pool threads. With "release", each of
// those threads calls eglReleaseThread before it ends.
// With "cudawait" (implies "steady"), a thread does what the soak's CUDA external-semaphore tickets do, on the steady
// device (made with VK_KHR_external_semaphore_fd, as the soak's exporting device is): a fresh exportable timeline
// semaphore, its opaque fd imported into CUDA, a CUDA stream waiting on it on the GPU, an event after the wait, the
// host signal 1-26 ms later, the event waited on, then the import destroyed and the semaphore destroyed; four such
// waits in flight on the one stream. The whole suite passed at 56c36bc while the soak beside it stalled 8 minutes in
// with no thread ending and vkDestroyDevice spinning; the gpuwait modes (a Vulkan queue waiting on the GPU) did not
// stall in 200 s. CUDA is loaded with dlopen: the probe runs without it, and this mode then says so and does nothing.
// With "vkd3d", the soak's D3D12 pattern runs beside (vkd3d_churn.h: queue Signals on fresh fences of one D3D12 device,
// and a D3D12 device churn): on an H100 the soak stalled in vkDestroyDevice with EGL and D3D12 both in the process,
// not with either alone, and "gpuwait pool egl vkd3d" stalled after 290 s, vkd3d's device release spinning in
// vkDestroyDevice at the soak's driver return addresses.
//
//   gcc -O2 -I/usr/local/cuda/include -I/usr/include/vkd3d -o vk_wait_any_churn vk_wait_any_churn.c -lvkd3d -lvulkan
//       -lEGL -lGLESv2 -lpthread -ldl
//   EGL_PLATFORM=surfaceless ./vk_wait_any_churn SECONDS [linger] [steady | gpuwait] [cudawait] [pool] [egl [ctxchurn]]
//       [glpool [release]] [vkd3d]
//
// Same output and exit codes as the other probes (watchdog.h): "STALL" and exit 2, or "NO STALL" and exit 0.
#define _GNU_SOURCE
#define COBJMACROS
#define INITGUID
#define WIDL_C_INLINE_WRAPPERS
#include <vulkan/vulkan.h>
#include <vkd3d.h>
#include <EGL/egl.h>
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 30
#define POINTS 4
#define WAITERS 3
#define POOL 5
#define GLPOOL 16

#include "probe_threads.h"
#include "vkd3d_churn.h"

static void check(VkResult r, const char *what) {
    if (r != VK_SUCCESS && r != VK_TIMEOUT) { fprintf(stderr, "%s: %d\n", what, r); exit(1); }
}

// One churned device, its points, its wake-up semaphore (counter == wake_signalled, under wake_lock) and its waiters.
typedef struct {
    VkInstance inst;
    VkDevice dev;
    VkQueue queue;
    VkSemaphore points[POINTS];
    uint64_t point_values[POINTS];
    VkSemaphore wake;
    PFN_vkWaitSemaphores wait_semaphores;    // device-level entry points: this device's own
    PFN_vkSignalSemaphore signal_semaphore;
    uint64_t wake_signalled;
    pthread_mutex_t wake_lock;
    volatile int waiters_done;    // the waiters stop waiting
    volatile int release_lingers; // with "linger": the waiters may end now (after the destroy)
    int holds;                    // pool waits in progress on this device (under hold_lock); its destroy waits for 0
    int slot[WAITERS];
    pthread_t waiter[WAITERS];
} churned_t;

static int linger, ctx_churn, waiter_slots[WAITERS], steady_slots[WAITERS], destroyer_slot;
static int exporting; // the next device made gets VK_KHR_external_semaphore_fd (the steady one, with "cudawait")

static VkSemaphore timeline(VkDevice dev) {
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkSemaphore s;
    check(vkCreateSemaphore(dev, &sci, NULL, &s), "vkCreateSemaphore");
    return s;
}

static void wake_up(churned_t *c) {
    pthread_mutex_lock(&c->wake_lock);
    VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = c->wake,
                                .value = c->wake_signalled + 1};
    check(c->signal_semaphore(c->dev, &si), "vkSignalSemaphore(wake)");
    c->wake_signalled++;
    pthread_mutex_unlock(&c->wake_lock);
}

static churned_t *current, *steady; // the churned device of the moment; the device that lives for the whole run
static int waiter_index;
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER; // current's changes and the pool's holds on it
static int egl_on; // the GL thread runs, and the pool waits on its EGL syncs too
static EGLDisplay egl_dpy;
static PFNEGLCREATESYNCKHRPROC create_sync;
static PFNEGLCLIENTWAITSYNCKHRPROC client_wait_sync;
static PFNEGLDESTROYSYNCKHRPROC destroy_sync;
static pthread_mutex_t egl_lock = PTHREAD_MUTEX_INITIALIZER;
static EGLSyncKHR egl_sync = EGL_NO_SYNC_KHR; // the GL thread's newest fence sync, for the pool (under egl_lock)
static int egl_users;                          // pool threads inside a wait on it (under egl_lock)

static void *waiter_main(void *arg) { // a churned engine's wait-set thread
    churned_t *c = arg;
    int me = c->slot[__atomic_fetch_add(&waiter_index, 1, __ATOMIC_RELAXED) % WAITERS];
    VkSemaphore sems[POINTS + 1];
    uint64_t values[POINTS + 1];
    while (!c->waiters_done && !stop) {
        pthread_mutex_lock(&c->wake_lock);
        uint64_t target = c->wake_signalled + 1;
        pthread_mutex_unlock(&c->wake_lock);
        for (int i = 0; i < POINTS; i++) {
            sems[i] = c->points[i];
            values[i] = __atomic_load_n(&c->point_values[i], __ATOMIC_RELAXED) + 1;
        }
        sems[POINTS] = c->wake;
        values[POINTS] = target;
        VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .flags = VK_SEMAPHORE_WAIT_ANY_BIT,
                                  .semaphoreCount = POINTS + 1, .pSemaphores = sems, .pValues = values};
        in_call[me] = "vkWaitSemaphores(WAIT_ANY)";
        check(c->wait_semaphores(c->dev, &wi, 50000000ull), "vkWaitSemaphores");
        in_call[me] = "idle";
        progress[me]++;
    }
    while (linger && !c->release_lingers && !stop) usleep(1000);
    return NULL;
}

static void *signaller_main(void *arg) { // host signals of the current device's points, and wake-ups
    int me = (int) (long) arg;
    unsigned seed = 7;
    while (!stop) {
        churned_t *c = steady != NULL && rand_r(&seed) % 2 ? steady : __atomic_load_n(&current, __ATOMIC_ACQUIRE);
        if (c != NULL) {
            int i = rand_r(&seed) % (POINTS + 1);
            if (i == POINTS) {
                in_call[me] = "vkSignalSemaphore(wake)";
                wake_up(c);
            } else if (i < POINTS / 2) { // host-signalled points and queue-signalled ones apart: each only grows
                uint64_t v = __atomic_add_fetch(&c->point_values[i], 1, __ATOMIC_RELAXED);
                VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                            .semaphore = c->points[i], .value = v};
                in_call[me] = "vkSignalSemaphore(point)";
                check(c->signal_semaphore(c->dev, &si), "vkSignalSemaphore");
            } else { // an empty batch that signals the next value from the queue, as the soak's queue tickets do
                uint64_t v = __atomic_add_fetch(&c->point_values[i], 1, __ATOMIC_RELAXED);
                VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                                    .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v};
                VkSubmitInfo sub = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts,
                                    .signalSemaphoreCount = 1, .pSignalSemaphores = &c->points[i]};
                in_call[me] = "vkQueueSubmit(signal point)";
                pthread_mutex_lock(&c->wake_lock); // the queue is externally synchronised: gpuwait submits on it too
                check(vkQueueSubmit(c->queue, 1, &sub, VK_NULL_HANDLE), "vkQueueSubmit");
                pthread_mutex_unlock(&c->wake_lock);
            }
            in_call[me] = "idle";
            progress[me]++;
        }
        usleep(200 + rand_r(&seed) % 2000);
    }
    return NULL;
}

static void *gpu_waiter_main(void *arg) { // the steady queue waits on the GPU for a value a host signal gives later
    int me = (int) (long) arg;
    churned_t *c = steady;
    VkSemaphore gate = timeline(c->dev), after = timeline(c->dev); // the batch waits on gate, then signals after
    unsigned seed = 11;
    for (uint64_t v = 1; !stop; v++) {
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        uint64_t done = v;
        VkTimelineSemaphoreSubmitInfo ts = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                            .waitSemaphoreValueCount = 1, .pWaitSemaphoreValues = &v,
                                            .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &done};
        VkSubmitInfo sub = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts, .waitSemaphoreCount = 1,
                            .pWaitSemaphores = &gate, .pWaitDstStageMask = &stage, .signalSemaphoreCount = 1,
                            .pSignalSemaphores = &after};
        in_call[me] = "vkQueueSubmit(wait on the gate)";
        pthread_mutex_lock(&c->wake_lock); // the queue is externally synchronised: the signaller submits on it too
        check(vkQueueSubmit(c->queue, 1, &sub, VK_NULL_HANDLE), "vkQueueSubmit(gate)");
        pthread_mutex_unlock(&c->wake_lock);
        in_call[me] = "idle";
        usleep(1000 + rand_r(&seed) % 100000); // the queue waits on the GPU meanwhile
        VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = gate, .value = v};
        in_call[me] = "vkSignalSemaphore(gate)";
        check(c->signal_semaphore(c->dev, &si), "vkSignalSemaphore(gate)");
        in_call[me] = "idle";
        progress[me]++;
    }
    return NULL;
}

// A fence of c's own, signalled by an empty batch on c's queue, waited on and destroyed: a BLOCKING fence wait.
static void fence_wait(churned_t *c, int me) {
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence f;
    in_call[me] = "vkCreateFence";
    check(vkCreateFence(c->dev, &fci, NULL, &f), "vkCreateFence");
    VkSubmitInfo sub = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
    in_call[me] = "vkQueueSubmit(fence)";
    pthread_mutex_lock(&c->wake_lock); // the queue is externally synchronised
    check(vkQueueSubmit(c->queue, 1, &sub, f), "vkQueueSubmit(fence)");
    pthread_mutex_unlock(&c->wake_lock);
    in_call[me] = "vkWaitForFences";
    check(vkWaitForFences(c->dev, 1, &f, VK_TRUE, 50000000ull), "vkWaitForFences");
    in_call[me] = "vkDestroyFence";
    vkWaitForFences(c->dev, 1, &f, VK_TRUE, UINT64_MAX); // its batch is done before the destroy
    vkDestroyFence(c->dev, f, NULL);
}

static void *pool_main(void *arg) { // one of gpusync's BLOCKING pool threads: blocking waits, one at a time
    int me = (int) (long) arg;
    unsigned seed = 13 + me;
    while (!stop) {
        int what = rand_r(&seed) % 4;
        if (what == 0) { // a fence of the churned device, under a hold its destroy waits for
            pthread_mutex_lock(&hold_lock);
            churned_t *c = current;
            if (c != NULL) c->holds++;
            pthread_mutex_unlock(&hold_lock);
            if (c != NULL) {
                fence_wait(c, me);
                pthread_mutex_lock(&hold_lock);
                c->holds--;
                pthread_mutex_unlock(&hold_lock);
            }
        } else if (what == 1 && steady != NULL) {
            fence_wait(steady, me);
        } else if (what == 2 && steady != NULL) { // one timeline point, the next value the signaller gives it
            int i = rand_r(&seed) % POINTS;
            uint64_t v = __atomic_load_n(&steady->point_values[i], __ATOMIC_RELAXED) + 1;
            VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                      .pSemaphores = &steady->points[i], .pValues = &v};
            in_call[me] = "vkWaitSemaphores(one point)";
            check(steady->wait_semaphores(steady->dev, &wi, 50000000ull), "vkWaitSemaphores(one point)");
        } else if (what == 3 && egl_on) { // the GL thread's newest fence sync, from a thread without a context
            pthread_mutex_lock(&egl_lock);
            EGLSyncKHR s = egl_sync;
            if (s != EGL_NO_SYNC_KHR) egl_users++;
            pthread_mutex_unlock(&egl_lock);
            if (s != EGL_NO_SYNC_KHR) {
                in_call[me] = "eglClientWaitSyncKHR";
                client_wait_sync(egl_dpy, s, 0, 5000000ull);
                pthread_mutex_lock(&egl_lock);
                egl_users--;
                pthread_mutex_unlock(&egl_lock);
            }
        }
        in_call[me] = "idle";
        progress[me]++;
        usleep(rand_r(&seed) % 2000);
    }
    return NULL;
}

// The GL thread publishes a fresh EGL fence sync for the pool, and destroys the one before once no pool wait holds it.
static void publish_egl_sync(int me) {
    in_call[me] = "eglCreateSyncKHR";
    EGLSyncKHR s = create_sync(egl_dpy, EGL_SYNC_FENCE_KHR, NULL);
    glFlush();
    pthread_mutex_lock(&egl_lock);
    EGLSyncKHR old = egl_sync;
    egl_sync = s;
    while (old != EGL_NO_SYNC_KHR && egl_users > 0) { // waits are bounded (5 ms): the users leave soon
        pthread_mutex_unlock(&egl_lock);
        usleep(200);
        pthread_mutex_lock(&egl_lock);
    }
    pthread_mutex_unlock(&egl_lock);
    if (old != EGL_NO_SYNC_KHR) {
        in_call[me] = "eglDestroySyncKHR";
        destroy_sync(egl_dpy, old);
    }
}

static void *destroy_main(void *arg) { // the test kit's destroying thread
    churned_t *c = arg;
    in_call[destroyer_slot] = "vkDeviceWaitIdle";
    vkDeviceWaitIdle(c->dev);
    for (int i = 0; i < POINTS; i++) {
        in_call[destroyer_slot] = "vkDestroySemaphore";
        vkDestroySemaphore(c->dev, c->points[i], NULL);
    }
    vkDestroySemaphore(c->dev, c->wake, NULL);
    in_call[destroyer_slot] = "vkDestroyDevice";
    vkDestroyDevice(c->dev, NULL);
    in_call[destroyer_slot] = "vkDestroyInstance";
    vkDestroyInstance(c->inst, NULL);
    in_call[destroyer_slot] = "idle";
    progress[destroyer_slot]++;
    return NULL;
}

// A device with its points and wake-up semaphore (calls named in slot me), and WAITERS waiter threads on it.
static churned_t *make_device(int me, const int *slots) {
    churned_t *c = calloc(1, sizeof(churned_t));
    pthread_mutex_init(&c->wake_lock, NULL);
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    in_call[me] = "vkCreateInstance";
    check(vkCreateInstance(&ici, NULL, &c->inst), "vkCreateInstance");
    uint32_t n = 1;
    VkPhysicalDevice pd;
    in_call[me] = "vkEnumeratePhysicalDevices";
    vkEnumeratePhysicalDevices(c->inst, &n, &pd);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                 .pQueuePriorities = &prio};
    VkPhysicalDeviceTimelineSemaphoreFeatures tf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES, .timelineSemaphore = VK_TRUE};
    static const char *const export_fd[] = {"VK_KHR_external_semaphore_fd"};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &tf,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &q,
                              .enabledExtensionCount = exporting ? 1 : 0, .ppEnabledExtensionNames = export_fd};
    in_call[me] = "vkCreateDevice";
    VkResult made = vkCreateDevice(pd, &dci, NULL, &c->dev);
    if (made == VK_ERROR_EXTENSION_NOT_PRESENT && exporting) { // lavapipe: no exportable semaphores
        printf("cudawait: no VK_KHR_external_semaphore_fd on this device: the mode does nothing\n");
        exporting = dci.enabledExtensionCount = 0;
        made = vkCreateDevice(pd, &dci, NULL, &c->dev);
    }
    check(made, "vkCreateDevice");
    vkGetDeviceQueue(c->dev, 0, 0, &c->queue);
    c->wait_semaphores = (PFN_vkWaitSemaphores) vkGetDeviceProcAddr(c->dev, "vkWaitSemaphores");
    c->signal_semaphore = (PFN_vkSignalSemaphore) vkGetDeviceProcAddr(c->dev, "vkSignalSemaphore");
    in_call[me] = "vkCreateSemaphore";
    for (int i = 0; i < POINTS; i++) c->points[i] = timeline(c->dev);
    c->wake = timeline(c->dev);
    memcpy(c->slot, slots, sizeof(c->slot));
    for (int i = 0; i < WAITERS; i++) pthread_create(&c->waiter[i], NULL, waiter_main, c);
    in_call[me] = "idle";
    return c;
}

#define CUDA_IN_FLIGHT 4
#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s: %d\n", #call, r_); exit(1); } } while (0)

static void *cuda_main(void *arg) { // the soak's CUDA external-semaphore tickets, on the steady (exporting) device
    int me = (int) (long) arg;
    churned_t *c = steady;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) { printf("cudawait: no CUDA driver here (%s): the mode does nothing\n", dlerror()); return NULL; }
#define SYM(name) __typeof__(&name) p_##name = (__typeof__(&name)) dlsym(lib, #name)
    SYM(cuInit); SYM(cuDeviceGet); SYM(cuDevicePrimaryCtxRetain); SYM(cuCtxSetCurrent); SYM(cuStreamCreate);
    SYM(cuEventCreate); SYM(cuEventRecord); SYM(cuEventSynchronize); SYM(cuImportExternalSemaphore);
    SYM(cuWaitExternalSemaphoresAsync); SYM(cuDestroyExternalSemaphore);
#undef SYM
    PFN_vkGetSemaphoreFdKHR get_fd = (PFN_vkGetSemaphoreFdKHR) vkGetDeviceProcAddr(c->dev, "vkGetSemaphoreFdKHR");
    if (get_fd == NULL) { fprintf(stderr, "vkGetSemaphoreFdKHR missing\n"); exit(1); }
    if (p_cuInit(0) != CUDA_SUCCESS) { printf("cudawait: cuInit failed: the mode does nothing\n"); return NULL; }
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CU(p_cuDeviceGet(&dev, 0));
    CU(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(p_cuCtxSetCurrent(ctx));
    CU(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    VkSemaphore sem[CUDA_IN_FLIGHT];
    CUexternalSemaphore ext[CUDA_IN_FLIGHT];
    CUevent after[CUDA_IN_FLIGHT];
    for (int i = 0; i < CUDA_IN_FLIGHT; i++) CU(p_cuEventCreate(&after[i], CU_EVENT_DISABLE_TIMING));
    unsigned seed = 17;
    while (!stop) {
        for (int i = 0; i < CUDA_IN_FLIGHT; i++) { // fresh semaphores, imported, waited on by the stream on the GPU
            VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                              .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
            VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .pNext = &ex,
                                              .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
            VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
            in_call[me] = "vkCreateSemaphore(exportable)";
            check(vkCreateSemaphore(c->dev, &sci, NULL, &sem[i]), "vkCreateSemaphore(exportable)");
            VkSemaphoreGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, .semaphore = sem[i],
                                          .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
            int fd;
            in_call[me] = "vkGetSemaphoreFdKHR";
            check(get_fd(c->dev, &gi, &fd), "vkGetSemaphoreFdKHR");
            CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = {.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD,
                                                     .handle.fd = fd};
            in_call[me] = "cuImportExternalSemaphore";
            CU(p_cuImportExternalSemaphore(&ext[i], &d)); // CUDA owns the fd from here
            CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp;
            memset(&wp, 0, sizeof(wp));
            wp.params.fence.value = 1;
            in_call[me] = "cuWaitExternalSemaphoresAsync";
            CU(p_cuWaitExternalSemaphoresAsync(&ext[i], &wp, 1, stream));
            CU(p_cuEventRecord(after[i], stream));
        }
        for (int i = 0; i < CUDA_IN_FLIGHT; i++) { // host signals later, in order; each wait then passes
            in_call[me] = "idle";
            usleep(1000 + rand_r(&seed) % 25000);
            VkSemaphoreSignalInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = sem[i], .value = 1};
            in_call[me] = "vkSignalSemaphore(exported)";
            check(c->signal_semaphore(c->dev, &si), "vkSignalSemaphore(exported)");
        }
        for (int i = 0; i < CUDA_IN_FLIGHT; i++) {
            in_call[me] = "cuEventSynchronize";
            CU(p_cuEventSynchronize(after[i]));
            in_call[me] = "cuDestroyExternalSemaphore";
            CU(p_cuDestroyExternalSemaphore(ext[i]));
            in_call[me] = "vkDestroySemaphore(exported)";
            vkDestroySemaphore(c->dev, sem[i], NULL);
        }
        in_call[me] = "idle";
        progress[me]++;
    }
    return NULL;
}

static void *churn_main(void *arg) { // the soak's device churn
    int me = (int) (long) arg;
    while (!stop) {
        churned_t *c = make_device(me, waiter_slots);
        pthread_mutex_lock(&hold_lock);
        __atomic_store_n(&current, c, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&hold_lock);
        in_call[me] = "idle";
        usleep(500000 + rand() % 1000000); // the device's life, with waits and signals
        pthread_mutex_lock(&hold_lock);
        __atomic_store_n(&current, NULL, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&hold_lock);
        usleep(20000); // a signal in flight finishes with the device still alive
        in_call[me] = "waiting for the pool's holds";
        for (;;) { // gpusync's anchor: no destroy while a wait on the device is in progress
            pthread_mutex_lock(&hold_lock);
            int held = c->holds;
            pthread_mutex_unlock(&hold_lock);
            if (held == 0) break;
            usleep(1000);
        }
        c->waiters_done = 1;
        wake_up(c);
        in_call[me] = "joining waiters";
        if (!linger) for (int i = 0; i < WAITERS; i++) pthread_join(c->waiter[i], NULL);
        else usleep(60000); // the waiters have left vkWaitSemaphores (50 ms slices) and stay alive, parked
        pthread_t d;
        pthread_create(&d, NULL, destroy_main, c);
        in_call[me] = "waiting for the destroy";
        pthread_join(d, NULL);
        if (linger) {
            c->release_lingers = 1;
            for (int i = 0; i < WAITERS; i++) pthread_join(c->waiter[i], NULL);
        }
        free(c);
        in_call[me] = "idle";
        progress[me]++;
    }
    return NULL;
}

static void *gl_main(void *arg) { // the soak's EGL source, reduced: GL fences on a surfaceless context
    int me = (int) (long) arg;
    EGLDisplay dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, NULL, NULL)) { fprintf(stderr, "no surfaceless display\n"); exit(1); }
    static const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLConfig config;
    EGLint n;
    if (!eglChooseConfig(dpy, want, &config, 1, &n) || n < 1) { fprintf(stderr, "no GLES3 config\n"); exit(1); }
    eglBindAPI(EGL_OPENGL_ES_API);
    static const EGLint ca[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext ctx = EGL_NO_CONTEXT;
    egl_dpy = dpy;
    for (long fences = 0; !stop; fences++) {
        if (ctx != EGL_NO_CONTEXT && ctx_churn && fences % 200 == 0) { // a test class closing its EGL producer
            in_call[me] = "eglDestroyContext";
            eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            eglDestroyContext(dpy, ctx);
            ctx = EGL_NO_CONTEXT;
        }
        if (ctx == EGL_NO_CONTEXT) {
            in_call[me] = "eglCreateContext";
            ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ca);
            if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
                fprintf(stderr, "EGL context (surfaceless)\n");
                exit(1);
            }
        }
        in_call[me] = "glFenceSync";
        GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glFlush();
        in_call[me] = "glClientWaitSync";
        glClientWaitSync(s, 0, 1000000000ull);
        glDeleteSync(s);
        if (create_sync != NULL) publish_egl_sync(me);
        in_call[me] = "idle";
        progress[me]++;
        usleep(500);
    }
    return NULL;
}

static EGLDisplay glpool_dpy;
static EGLConfig glpool_config;
static EGLContext glpool_producer;
static EGLContext glpool_shared[GLPOOL];
static int glpool_slot, glpool_release;

static void *glpool_waiter_main(void *arg) { // one of a GL engine's pool threads: a shared context, one wait, the end
    long i = (long) arg;
    static const EGLint ca[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    in_call[glpool_slot] = "eglCreateContext(shared)";
    EGLContext c = eglCreateContext(glpool_dpy, glpool_config, glpool_producer, ca);
    if (c == EGL_NO_CONTEXT) { fprintf(stderr, "eglCreateContext(shared): 0x%x\n", eglGetError()); exit(1); }
    glpool_shared[i] = c;
    in_call[glpool_slot] = "eglMakeCurrent(shared)";
    if (!eglMakeCurrent(glpool_dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) { fprintf(stderr, "eglMakeCurrent\n"); exit(1); }
    in_call[glpool_slot] = "glClientWaitSync";
    GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000ull);
    glDeleteSync(s);
    in_call[glpool_slot] = "eglMakeCurrent(NO_CONTEXT)";
    eglMakeCurrent(glpool_dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (glpool_release) {
        in_call[glpool_slot] = "eglReleaseThread";
        eglReleaseThread();
    }
    in_call[glpool_slot] = "idle";
    progress[glpool_slot]++;
    return NULL;
}

static void *glpool_main(void *arg) { // GL engines and GL test classes, one after another
    int me = (int) (long) arg;
    glpool_dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (glpool_dpy == EGL_NO_DISPLAY || !eglInitialize(glpool_dpy, NULL, NULL)) { fprintf(stderr, "no display\n"); exit(1); }
    static const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_NONE};
    EGLint n;
    if (!eglChooseConfig(glpool_dpy, want, &glpool_config, 1, &n) || n < 1) { fprintf(stderr, "no config\n"); exit(1); }
    eglBindAPI(EGL_OPENGL_ES_API);
    static const EGLint ca[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    while (!stop) {
        in_call[me] = "eglCreateContext(producer)";
        glpool_producer = eglCreateContext(glpool_dpy, glpool_config, EGL_NO_CONTEXT, ca);
        if (glpool_producer == EGL_NO_CONTEXT) { fprintf(stderr, "eglCreateContext(producer)\n"); exit(1); }
        pthread_t w[GLPOOL];
        in_call[me] = "joining a GL engine's pool threads";
        for (long i = 0; i < GLPOOL; i++) pthread_create(&w[i], NULL, glpool_waiter_main, (void *) i);
        for (int i = 0; i < GLPOOL; i++) pthread_join(w[i], NULL);
        in_call[me] = "eglDestroyContext(shared)";
        for (int i = 0; i < GLPOOL; i++) eglDestroyContext(glpool_dpy, glpool_shared[i]);
        in_call[me] = "eglDestroyContext(producer)";
        eglDestroyContext(glpool_dpy, glpool_producer);
        in_call[me] = "idle";
        progress[me]++;
        usleep(100000 + rand() % 400000);
    }
    return NULL;
}

static void label(void) { // the process's threads: NVIDIA's helpers, named after the threads that made them, count too
    int tasks = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) tasks += e->d_name[0] != '.';
    if (d != NULL) closedir(d);
    printf(" tasks=%d", tasks);
}

#include "watchdog.h"

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    int egl = 0, steady_on = 0, gpu_wait = 0, cuda_wait = 0, pool = 0, glpool = 0, vkd3d = 0;
    for (int i = 2; i < argc; i++) {
        linger |= strcmp(argv[i], "linger") == 0;
        egl |= strcmp(argv[i], "egl") == 0;
        ctx_churn |= strcmp(argv[i], "ctxchurn") == 0;
        steady_on |= strcmp(argv[i], "steady") == 0;
        gpu_wait |= strcmp(argv[i], "gpuwait") == 0;
        cuda_wait |= strcmp(argv[i], "cudawait") == 0;
        pool |= strcmp(argv[i], "pool") == 0;
        glpool |= strcmp(argv[i], "glpool") == 0;
        glpool_release |= strcmp(argv[i], "release") == 0;
        vkd3d |= strcmp(argv[i], "vkd3d") == 0;
    }
    steady_on |= gpu_wait | cuda_wait;
    printf("Vulkan device churn, %d WAIT_ANY waiter threads per device (%s), host and queue signals%s%s%s%s%s\n", WAITERS,
           linger ? "parked until after the destroy" : "ended before the destroy",
           steady_on ? ", a steady device waited on throughout" : "",
           gpu_wait ? " (its queue waiting on host-signalled values)" : "",
           cuda_wait ? ", a CUDA stream waiting on its exported semaphores" : "", egl ? ", GL fences on EGL" : "",
           egl && ctx_churn ? " (a fresh context every 200)" : "");
    if (pool) printf("%d pool threads making blocking waits (fences, single points%s)\n", POOL, egl ? ", EGL syncs" : "");
    pthread_t t[THREADS];
    int k = 0;
    for (int i = 0; i < WAITERS; i++) waiter_slots[i] = reg("waiter");
    destroyer_slot = reg("destroyer");
    if (steady_on) {
        for (int i = 0; i < WAITERS; i++) steady_slots[i] = reg("steady-waiter");
        exporting = cuda_wait;
        steady = make_device(reg("steady-device"), steady_slots);
        cuda_wait &= exporting; // still set: the steady device exports
        exporting = 0;
    }
    if (gpu_wait) pthread_create(&t[k++], NULL, gpu_waiter_main, (void *) (long) reg("gpu-waiter"));
    if (cuda_wait) pthread_create(&t[k++], NULL, cuda_main, (void *) (long) reg("cuda-waits"));
    pthread_create(&t[k++], NULL, churn_main, (void *) (long) reg("devices"));
    pthread_create(&t[k++], NULL, signaller_main, (void *) (long) reg("signaller"));
    if (egl && pool) { // the pool waits on the GL thread's EGL syncs, as gpusync's EGL waiter does: the KHR entry points
        create_sync = (PFNEGLCREATESYNCKHRPROC) eglGetProcAddress("eglCreateSyncKHR");
        client_wait_sync = (PFNEGLCLIENTWAITSYNCKHRPROC) eglGetProcAddress("eglClientWaitSyncKHR");
        destroy_sync = (PFNEGLDESTROYSYNCKHRPROC) eglGetProcAddress("eglDestroySyncKHR");
        egl_on = create_sync != NULL && client_wait_sync != NULL && destroy_sync != NULL;
        if (!egl_on) create_sync = NULL;
    }
    if (egl) pthread_create(&t[k++], NULL, gl_main, (void *) (long) reg("gl"));
    for (int i = 0; pool && i < POOL; i++) pthread_create(&t[k++], NULL, pool_main, (void *) (long) reg("pool"));
    if (glpool) {
        printf("GL engines of %d fresh threads on contexts shared with a producer, made and destroyed one after another%s\n",
               GLPOOL, glpool_release ? " (eglReleaseThread before each thread ends)" : "");
        glpool_slot = reg("glpool-waiters");
        pthread_create(&t[k++], NULL, glpool_main, (void *) (long) reg("glpool"));
    }
    if (vkd3d) {
        printf("vkd3d: 4 queue signallers on one D3D12 device (a fresh fence every %d values), a D3D12 device churn\n",
               FENCE_VALUES);
        d3d_start(4, 1, t, &k);
    }
    watchdog(seconds, label);
}
