// The probes' watchdog: every second, each registered thread's progress; every 10 s a line of them (after `label`'s
// own text); if a thread inside a driver call (not "idle" or "queue full") makes no progress for 15 s, "STALL" with
// the call each thread is in, 30 s to take native stacks (with each thread's progress every 5 s meanwhile: a stack
// dump's ptrace stops can wake a thread that missed a wake-up), and exit 2; else "NO STALL" and exit 0 after `seconds`.
// The including file includes probe_threads.h first.
#ifndef GPUSYNC_PROBES_WATCHDOG_H
#define GPUSYNC_PROBES_WATCHDOG_H
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void watchdog(int seconds, void (*label)(void)) {
    long last[THREADS] = {0};
    int idle[THREADS] = {0};
    for (int s = 1; s <= seconds; s++) {
        sleep(1);
        int stalled = -1;
        for (int i = 0; i < nthreads; i++) {
            long p = progress[i];
            idle[i] = p == last[i] ? idle[i] + 1 : 0;
            last[i] = p;
            // a thread with nothing to do is idle, not stalled: only count threads inside a driver call
            if (idle[i] >= 15 && strcmp(in_call[i], "idle") != 0 && strcmp(in_call[i], "queue full") != 0) stalled = i;
        }
        if (s % 10 == 0 || stalled >= 0) {
            printf("t=%ds", s);
            if (label) label();
            for (int i = 0; i < nthreads; i++) printf(" %s=%ld", names[i], last[i]);
            printf("\n");
            fflush(stdout);
        }
        if (stalled >= 0) {
            printf("STALL at t=%ds (pid %d): %s made no progress for 15 s\n", s, getpid(), names[stalled]);
            for (int i = 0; i < nthreads; i++) printf("  %s: %s (idle %d s)\n", names[i], in_call[i], idle[i]);
            fflush(stdout);
            for (int w = 5; w <= 30; w += 5) { // time for a native stack dump; does anything move again after it?
                sleep(5);
                printf("after the stall, +%ds:", w);
                for (int i = 0; i < nthreads; i++) printf(" %s=%ld", names[i], (long) progress[i]);
                printf("\n");
                fflush(stdout);
            }
            _exit(2);
        }
    }
    printf("NO STALL in %d s\n", seconds);
    fflush(stdout);
    _exit(0);
}
#endif
