/* PoCL 3.1: a command whose dependencies end at the same time, one failed and one complete, can be
 * both failed and queued to run; its node is then used after it is freed.
 *
 * No gpusync here: an in-order queue of markers, each behind its own user event, and two threads that
 * end the user events at the same time (even ones failed, odd ones completed). Marker i then depends on
 * user event i and on marker i-1. In PoCL 3.1, pocl_update_event_failed() unlocks the event it fails
 * before pocl_update_event_finished() locks it again, so a concurrent broadcast of the other dependency
 * still sees it QUEUED with an empty wait list and pushes its command to the pthread device's work
 * queue. Under MALLOC_PERTURB_ the worker then reads freed memory (SIGSEGV in
 * libpocl-devices-pthread.so, the frame of BackendSoak's one crash on this box); without it, corruption
 * or an abort follows later.
 *
 *   gcc -O2 -pthread pocl_failed_and_completed_dependencies.c -o /tmp/pocl-race -l:libOpenCL.so.1
 *   MALLOC_PERTURB_=228 LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_CHECK_=3 /tmp/pocl-race [rounds [one|shield]]
 *
 * "one": a single thread completes the first k user events of a round and fails the rest, while PoCL's own thread is
 * still completing marker k-1 and broadcasting to marker k: the same race, with PoCL's thread as the second one.
 * "shield": the same, after waiting until marker k-1 has ended and PoCL holds no reference of its own to it.
 *
 * No OpenCL headers are needed: the few calls are declared below.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *cl_platform_id, *cl_device_id, *cl_context, *cl_command_queue, *cl_event;
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define CL_COMPLETE 0
#define CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3
#define CL_EVENT_REFERENCE_COUNT 0x11D2

extern cl_int clGetPlatformIDs(cl_uint, cl_platform_id *, cl_uint *);
extern cl_int clGetDeviceIDs(cl_platform_id, cl_ulong, cl_uint, cl_device_id *, cl_uint *);
extern cl_context clCreateContext(const intptr_t *, cl_uint, const cl_device_id *, void *, void *, cl_int *);
extern cl_command_queue clCreateCommandQueue(cl_context, cl_device_id, cl_ulong, cl_int *);
extern cl_event clCreateUserEvent(cl_context, cl_int *);
extern cl_int clSetUserEventStatus(cl_event, cl_int);
extern cl_int clEnqueueMarkerWithWaitList(cl_command_queue, cl_uint, const cl_event *, cl_event *);
extern cl_int clGetEventInfo(cl_event, cl_uint, size_t, void *, size_t *);
extern cl_int clReleaseEvent(cl_event);

enum { BATCH = 64 };
static cl_event users[BATCH];

static void *end_user_events(void *parity) {
    for (int i = (int) (intptr_t) parity; i < BATCH; i += 2) {
        clSetUserEventStatus(users[i], (i & 1) ? CL_COMPLETE : -1000001);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    int one_thread = argc > 2; /* a second argument: one thread completes the first k user events, then fails the rest */
    int shield = argc > 2 && argv[2][0] == 's'; /* "shield": first waits until marker k-1 is done, as gpusync does */
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL)) {
        fprintf(stderr, "no OpenCL device\n");
        return 2;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    for (long round = 0; round < rounds; round++) {
        cl_event markers[BATCH];
        for (int i = 0; i < BATCH; i++) {
            users[i] = clCreateUserEvent(context, &err);
            clEnqueueMarkerWithWaitList(queue, 1, &users[i], &markers[i]);
        }
        if (one_thread) { /* the PoCL worker completing marker k-1 races this thread failing marker k's user event */
            int k = 1 + (int) (round % (BATCH - 1));
            for (int i = 0; i < k; i++) {
                clSetUserEventStatus(users[i], CL_COMPLETE);
            }
            for (volatile int s = 0; s < (int) (round * 7919 % 4000); s++) { /* a varying moment of marker k-1's end */
            }
            if (shield) { /* gpusync's shield: marker k-1 has ended and PoCL has let go of it (its own reference) */
                cl_int st;
                cl_uint refs;
                do {
                    clGetEventInfo(markers[k - 1], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
                    clGetEventInfo(markers[k - 1], CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL);
                } while (st > CL_COMPLETE || refs > 1);
            }
            for (int i = k; i < BATCH; i++) {
                clSetUserEventStatus(users[i], -1000001);
            }
        } else {
            pthread_t failing, completing;
            pthread_create(&failing, NULL, end_user_events, (void *) 0);
            pthread_create(&completing, NULL, end_user_events, (void *) 1);
            pthread_join(failing, NULL);
            pthread_join(completing, NULL);
        }
        for (int i = 0; i < BATCH; i++) { /* every marker ends: each one's user event has ended */
            cl_int status;
            do {
                clGetEventInfo(markers[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
            } while (status > CL_COMPLETE);
            if (!one_thread) { /* one thread: kept, as gpusync keeps failed commands (releasing them is another hazard) */
                clReleaseEvent(markers[i]);
                clReleaseEvent(users[i]);
            }
        }
        if (round % 1000 == 0) {
            printf("round %ld\n", round);
            fflush(stdout);
        }
    }
    printf("%ld rounds, no crash\n", rounds);
    return 0;
}
