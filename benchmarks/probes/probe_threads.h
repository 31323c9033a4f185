// The probes' record of their threads, which watchdog.h and vk_churn.h read: each thread registers by name (`reg`),
// and keeps `in_call` (the driver call it is in, "idle" outside one) and `progress` up to date; `stop` ends them all.
// The including file defines THREADS (the most threads it registers) before this include.
#ifndef GPUSYNC_PROBES_PROBE_THREADS_H
#define GPUSYNC_PROBES_PROBE_THREADS_H
#include <stdatomic.h>

static atomic_int stop;
static const char *names[THREADS];
static _Atomic(const char *) in_call[THREADS];
static atomic_long progress[THREADS];
static int nthreads;

static int reg(const char *name) {
    names[nthreads] = name;
    in_call[nthreads] = "idle";
    return nthreads++;
}
#endif
