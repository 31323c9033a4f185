// Does a Vulkan driver stall when devices are created on one thread and destroyed on another, while a third thread
// submits to a long-lived device? No gpusync in it: plain Vulkan, as the soak's device churn does it (create on the
// soak's thread, vkDeviceWaitIdle + vkDestroyDevice + vkDestroyInstance on gpusync's housekeeping thread).
//
//   gcc -O2 -o vulkan_device_churn vulkan_device_churn.c -lvulkan -lpthread
//   ./vulkan_device_churn SECONDS MODE      MODE: split (create and destroy on two threads, as the soak)
//                                                 same  (each device destroyed by the thread that made it)
//                                                 serial (split, but creation and destruction never overlap)
//
// A watchdog prints each thread's progress once a second; if a thread makes no progress for 15 s it prints
// "STALL" with the call each thread is in and exits 2. Exit 0: no stall in SECONDS.
#include <vulkan/vulkan.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING 4
static VkInstance ring_inst[RING];
static VkDevice ring_dev[RING];
static int ring_head, ring_tail, ring_count;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long created, destroyed, submitted;
static _Atomic(const char *) in_create = "idle", in_destroy = "idle", in_submit = "idle";
static atomic_int stop;
static int mode_split = 1, mode_serial = 0;

static void check(VkResult r, const char *what) {
    if (r != VK_SUCCESS) { fprintf(stderr, "%s failed: %d\n", what, r); exit(1); }
}

static VkInstance make_instance(void) {
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance inst;
    check(vkCreateInstance(&ci, NULL, &inst), "vkCreateInstance");
    return inst;
}

static VkDevice make_device(VkInstance inst, VkQueue *queue) {
    uint32_t n = 1;
    VkPhysicalDevice pd;
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, &pd);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) check(r, "vkEnumeratePhysicalDevices");
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0,
                                 .queueCount = 1, .pQueuePriorities = &prio};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .timelineSemaphore = VK_TRUE};
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &q};
    VkDevice dev;
    check(vkCreateDevice(pd, &ci, NULL, &dev), "vkCreateDevice");
    if (queue) vkGetDeviceQueue(dev, 0, 0, queue);
    return dev;
}

static void destroy(VkInstance inst, VkDevice dev) {
    in_destroy = "vkDeviceWaitIdle";
    vkDeviceWaitIdle(dev);
    in_destroy = "vkDestroyDevice";
    vkDestroyDevice(dev, NULL);
    in_destroy = "vkDestroyInstance";
    vkDestroyInstance(inst, NULL);
    in_destroy = "idle";
    destroyed++;
}

static void *creator(void *arg) {
    (void) arg;
    while (!stop) {
        if (mode_serial) pthread_mutex_lock(&serial_lock);
        in_create = "vkCreateInstance";
        VkInstance inst = make_instance();
        in_create = "vkCreateDevice";
        VkDevice dev = make_device(inst, NULL);
        in_create = "idle";
        if (mode_serial) pthread_mutex_unlock(&serial_lock);
        created++;
        if (!mode_split) { destroy(inst, dev); continue; }
        pthread_mutex_lock(&ring_lock);
        while (ring_count == RING && !stop) pthread_cond_wait(&ring_cond, &ring_lock);
        ring_inst[ring_tail] = inst; ring_dev[ring_tail] = dev; ring_tail = (ring_tail + 1) % RING; ring_count++;
        pthread_cond_broadcast(&ring_cond);
        pthread_mutex_unlock(&ring_lock);
    }
    return NULL;
}

static void *destroyer(void *arg) {
    (void) arg;
    while (!stop) {
        pthread_mutex_lock(&ring_lock);
        while (ring_count == 0 && !stop) pthread_cond_wait(&ring_cond, &ring_lock);
        if (stop) { pthread_mutex_unlock(&ring_lock); break; }
        VkInstance inst = ring_inst[ring_head]; VkDevice dev = ring_dev[ring_head];
        ring_head = (ring_head + 1) % RING; ring_count--;
        pthread_cond_broadcast(&ring_cond);
        pthread_mutex_unlock(&ring_lock);
        if (mode_serial) pthread_mutex_lock(&serial_lock);
        destroy(inst, dev);
        if (mode_serial) pthread_mutex_unlock(&serial_lock);
    }
    return NULL;
}

static void *submitter(void *arg) {
    (void) arg;
    VkInstance inst = make_instance();
    VkQueue queue;
    VkDevice dev = make_device(inst, &queue);
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkSemaphore sem;
    check(vkCreateSemaphore(dev, &sci, NULL, &sem), "vkCreateSemaphore");
    for (uint64_t v = 1; !stop; v++) {
        VkTimelineSemaphoreSubmitInfo t = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                           .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &v};
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &t, .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &sem};
        in_submit = "vkQueueSubmit";
        check(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
        VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                  .pSemaphores = &sem, .pValues = &v};
        in_submit = "vkWaitSemaphores";
        check(vkWaitSemaphores(dev, &wi, 5000000000ull), "vkWaitSemaphores");
        in_submit = "idle";
        submitted++;
    }
    vkDestroySemaphore(dev, sem, NULL);
    destroy(inst, dev);
    return NULL;
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    const char *mode = argc > 2 ? argv[2] : "split";
    mode_split = strcmp(mode, "same") != 0;
    mode_serial = strcmp(mode, "serial") == 0;
    pthread_t c, d, s;
    pthread_create(&s, NULL, submitter, NULL);
    pthread_create(&c, NULL, creator, NULL);
    if (mode_split) pthread_create(&d, NULL, destroyer, NULL);
    long last_c = -1, last_d = -1, last_s = -1;
    int still_c = 0, still_d = 0, still_s = 0;
    for (int t = 1; t <= seconds; t++) {
        sleep(1);
        long cc = created, dd = destroyed, ss = submitted;
        still_c = cc == last_c ? still_c + 1 : 0; still_d = dd == last_d ? still_d + 1 : 0;
        still_s = ss == last_s ? still_s + 1 : 0;
        last_c = cc; last_d = dd; last_s = ss;
        if (t % 10 == 0) printf("t=%ds created=%ld destroyed=%ld submitted=%ld\n", t, cc, dd, ss);
        if (still_c >= 15 || still_d >= 15 || still_s >= 15) {
            printf("STALL at t=%ds (mode %s): creator in %s (still %d s), destroyer in %s (still %d s), submitter in %s"
                   " (still %d s); created=%ld destroyed=%ld submitted=%ld\n", t, mode, (const char *) in_create,
                   still_c, (const char *) in_destroy, still_d, (const char *) in_submit, still_s, cc, dd, ss);
            fflush(stdout);
            _exit(2);
        }
        fflush(stdout);
    }
    printf("NO STALL in %d s (mode %s): created=%ld destroyed=%ld submitted=%ld\n", seconds, mode, (long) created,
           (long) destroyed, (long) submitted);
    fflush(stdout);
    _exit(0);
}
