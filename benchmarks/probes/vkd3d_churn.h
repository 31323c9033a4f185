// The soak's D3D12 pattern through vkd3d, for the probes: signaller threads each own a fence of one shared D3D12
// device and signal it from the queue (ID3D12CommandQueue_Signal, as the soak's d3d12-queue tickets and the demo do),
// then poll GetCompletedValue until it is reached; every FENCE_VALUES values the fence is released and a fresh one made
// (as the soak's tickets come and go). Optionally a thread creates and releases whole D3D12 devices. The including
// file defines COBJMACROS, INITGUID and WIDL_C_INLINE_WRAPPERS, includes <vkd3d.h> and probe_threads.h first.
#ifndef GPUSYNC_PROBES_VKD3D_CHURN_H
#define GPUSYNC_PROBES_VKD3D_CHURN_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FENCE_VALUES 200

static struct vkd3d_instance *d3d_instance;
static ID3D12Device *shared_device;
static ID3D12CommandQueue *shared_queue;

// No event is ever registered (the signallers poll), but vkd3d refuses an instance without the callback
static HRESULT signal_event(HANDLE event) {
    (void) event;
    return S_OK;
}

static HRESULT d3d_create_device(ID3D12Device **device) {
    struct vkd3d_device_create_info info;
    memset(&info, 0, sizeof(info));
    info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
    info.instance = d3d_instance;
    return vkd3d_create_device(&info, &IID_ID3D12Device, (void **) device);
}

static void *d3d_signaller_main(void *arg) {
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

static void *d3d_device_churn_main(void *arg) {
    int me = (int) (long) arg;
    while (!stop) {
        ID3D12Device *device;
        in_call[me] = "vkd3d_create_device";
        if (FAILED(d3d_create_device(&device))) { fprintf(stderr, "vkd3d_create_device\n"); exit(1); }
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

// Creates the instance, the shared device and its queue, and starts `signallers` signaller threads (and the D3D12
// device churn with `dchurn`), each registered with reg(); threads go to t[*k].
static void d3d_start(int signallers, int dchurn, pthread_t *t, int *k) {
    struct vkd3d_instance_create_info ii;
    memset(&ii, 0, sizeof(ii));
    ii.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ii.wchar_size = sizeof(WCHAR);
    ii.pfn_signal_event = signal_event;
    if (FAILED(vkd3d_create_instance(&ii, &d3d_instance))) { fprintf(stderr, "vkd3d_create_instance\n"); exit(1); }
    if (FAILED(d3d_create_device(&shared_device))) { fprintf(stderr, "vkd3d_create_device\n"); exit(1); }
    D3D12_COMMAND_QUEUE_DESC qd;
    memset(&qd, 0, sizeof(qd));
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    if (FAILED(ID3D12Device_CreateCommandQueue(shared_device, &qd, &IID_ID3D12CommandQueue, (void **) &shared_queue))) {
        fprintf(stderr, "CreateCommandQueue\n");
        exit(1);
    }
    for (int i = 0; i < signallers; i++)
        pthread_create(&t[(*k)++], NULL, d3d_signaller_main, (void *) (long) reg("d3d12-signaller"));
    if (dchurn) pthread_create(&t[(*k)++], NULL, d3d_device_churn_main, (void *) (long) reg("d3d12-churn"));
}
#endif
