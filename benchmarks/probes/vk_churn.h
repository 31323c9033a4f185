// The Vulkan instance and device churn that the probes run beside their own pattern, as the soak's device churn does:
// create an instance and a device with one queue, keep it 100 ms, wait idle, destroy both, count one. The including
// file includes probe_threads.h first (the watchdog's view of each thread).
#ifndef GPUSYNC_PROBES_VK_CHURN_H
#define GPUSYNC_PROBES_VK_CHURN_H
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *vk_churn_main(void *arg) {
    int me = (int) (long) arg;
    while (!stop) {
        VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
        VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
        VkInstance inst;
        in_call[me] = "vkCreateInstance";
        if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) { fprintf(stderr, "vkCreateInstance\n"); exit(1); }
        uint32_t n = 1;
        VkPhysicalDevice pd;
        in_call[me] = "vkEnumeratePhysicalDevices";
        vkEnumeratePhysicalDevices(inst, &n, &pd);
        float prio = 1.0f;
        VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                     .pQueuePriorities = &prio};
        VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                                  .pQueueCreateInfos = &q};
        VkDevice dev;
        in_call[me] = "vkCreateDevice";
        if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) { fprintf(stderr, "vkCreateDevice\n"); exit(1); }
        usleep(100000);
        in_call[me] = "vkDeviceWaitIdle";
        vkDeviceWaitIdle(dev);
        in_call[me] = "vkDestroyDevice";
        vkDestroyDevice(dev, NULL);
        in_call[me] = "vkDestroyInstance";
        vkDestroyInstance(inst, NULL);
        progress[me]++;
    }
    return NULL;
}

#endif
