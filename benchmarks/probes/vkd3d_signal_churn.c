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

#include "probe_threads.h"

#include "vkd3d_churn.h"
#include "vk_churn.h"
#include "watchdog.h"

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 60;
    int dchurn = 0, vk = 0;
    for (int i = 2; i < argc; i++) {
        dchurn |= strcmp(argv[i], "dchurn") == 0;
        vk |= strcmp(argv[i], "vk") == 0;
    }
    printf("vkd3d: %d queue signallers on one device (a fresh fence every %d values)%s%s\n", SIGNALLERS, FENCE_VALUES,
           dchurn ? ", D3D12 device churn" : "", vk ? ", Vulkan device churn" : "");
    pthread_t t[THREADS];
    int k = 0;
    d3d_start(SIGNALLERS, dchurn, t, &k);
    if (vk) pthread_create(&t[k++], NULL, vk_churn_main, (void *) (long) reg("vk-churn"));
    watchdog(seconds, NULL);
}
