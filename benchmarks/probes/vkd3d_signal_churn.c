// Does vkd3d on a Vulkan driver stall under the soak's D3D12 pattern, with no gpusync and no JVM in the process?
// Signaller threads each own a fence of one shared D3D12 device and signal it from the queue (ID3D12CommandQueue_Signal,
// as the soak's d3d12-queue tickets and the demo do), then poll GetCompletedValue until it is reached; every 200
// values the fence is released and a fresh one made (as the soak's tickets come and go). With "dchurn", a thread
// also creates and releases whole D3D12 devices; with "vk", one churns Vulkan instances and devices, as the soak's
// device churn does.
//
//   gcc -O2 -I/usr/include/vkd3d -o vkd3d_signal_churn vkd3d_signal_churn.c -lvkd3d -lvulkan -lpthread
//   ./vkd3d_signal_churn SECONDS [dchurn] [vk]
//
// A watchdog prints each thread's progress every 10 s; if a thread makes no progress for 15 s inside a call, it
// prints "STALL" with the call each thread is in, waits 30 s (time for a native stack dump) and exits 2. Exit 0:
// no stall. (Same output shape as gl_share_group_waits.c, so h200-calls reads both the same way.)
#include <stdint.h>
#define COBJMACROS
#define INITGUID
#define WIDL_C_INLINE_WRAPPERS
#include <vulkan/vulkan.h>
#include <vkd3d.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIGNALLERS 4
#define THREADS 8
#define FENCE_VALUES 200

#include "probe_threads.h"

static struct vkd3d_instance *instance;
static ID3D12Device *shared_device;
static ID3D12CommandQueue *shared_queue;

// No event is ever registered (the signallers poll), but vkd3d refuses an instance without the callback
static HRESULT signal_event(HANDLE event) {
    (void) event;
    return S_OK;
}

static HRESULT create_device(ID3D12Device **device) {
    struct vkd3d_device_create_info info;
    memset(&info, 0, sizeof(info));
    info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
    info.instance = instance;
    return vkd3d_create_device(&info, &IID_ID3D12Device, (void **) device);
}

static void *signaller_main(void *arg) {
    int me = (int) (long) arg;
    while (!stop) {
        ID3D12Fence *fence;
        in_call[me] = "CreateFence";
        if (FAILED(ID3D12Device_CreateFence(shared_device, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence,
                (void **) &fence))) { fprintf(stderr, "CreateFence\n"); exit(1); }
        for (uint64_t v = 1; v <= FENCE_VALUES && !stop; v++) {
            in_call[me] = "queue Signal";
            if (FAILED(ID3D12CommandQueue_Signal(shared_queue, fence, v))) { fprintf(stderr, "Signal\n"); exit(1); }
            in_call[me] = "GetCompletedValue (polling)";
            while (ID3D12Fence_GetCompletedValue(fence) < v && !stop) usleep(20);
            progress[me]++;
        }
        in_call[me] = "fence Release";
        ID3D12Fence_Release(fence);
    }
    return NULL;
}

static void *device_churn_main(void *arg) {
    int me = (int) (long) arg;
    while (!stop) {
        ID3D12Device *device;
        in_call[me] = "vkd3d_create_device";
        if (FAILED(create_device(&device))) { fprintf(stderr, "vkd3d_create_device\n"); exit(1); }
        ID3D12Fence *fence;
        in_call[me] = "CreateFence (churned device)";
        if (SUCCEEDED(ID3D12Device_CreateFence(device, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **) &fence))) {
            in_call[me] = "fence Signal (churned device)";
            ID3D12Fence_Signal(fence, 1);
            ID3D12Fence_Release(fence);
        }
        usleep(100000);
        in_call[me] = "device Release";
        ID3D12Device_Release(device);
        progress[me]++;
    }
    return NULL;
}


#include "vk_churn.h"
#include "watchdog.h"

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    int dchurn = 0, vk = 0;
    for (int i = 2; i < argc; i++) {
        dchurn |= strcmp(argv[i], "dchurn") == 0;
        vk |= strcmp(argv[i], "vk") == 0;
    }
    struct vkd3d_instance_create_info ii;
    memset(&ii, 0, sizeof(ii));
    ii.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ii.wchar_size = sizeof(WCHAR);
    ii.pfn_signal_event = signal_event;
    if (FAILED(vkd3d_create_instance(&ii, &instance))) { fprintf(stderr, "vkd3d_create_instance\n"); return 1; }
    if (FAILED(create_device(&shared_device))) { fprintf(stderr, "vkd3d_create_device\n"); return 1; }
    D3D12_COMMAND_QUEUE_DESC qd;
    memset(&qd, 0, sizeof(qd));
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    if (FAILED(ID3D12Device_CreateCommandQueue(shared_device, &qd, &IID_ID3D12CommandQueue, (void **) &shared_queue))) {
        fprintf(stderr, "CreateCommandQueue\n");
        return 1;
    }
    printf("vkd3d: %d queue signallers on one device (a fresh fence every %d values)%s%s\n", SIGNALLERS, FENCE_VALUES,
           dchurn ? ", D3D12 device churn" : "", vk ? ", Vulkan device churn" : "");
    pthread_t t[THREADS];
    int k = 0;
    for (int i = 0; i < SIGNALLERS; i++) pthread_create(&t[k++], NULL, signaller_main, (void *) (long) reg("signaller"));
    if (dchurn) pthread_create(&t[k++], NULL, device_churn_main, (void *) (long) reg("d3d12-churn"));
    if (vk) pthread_create(&t[k++], NULL, vk_churn_main, (void *) (long) reg("vk-churn"));
    watchdog(seconds, NULL);
}
