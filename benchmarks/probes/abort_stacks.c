/* Preloaded into a JVM under glibc's malloc checker: when something aborts (the checker finding a corrupt heap), the
 * aborting thread's own frames, then every thread's native stack from GPUSYNC_NATIVE_STACKS (eu-stack), go to stderr
 * before the process dies. The aborting thread waits in the handler meanwhile, so its frames show where the checker
 * noticed. Nothing here allocates: the heap is what is broken.
 * Build: gcc -O2 -shared -fPIC -o abort_stacks.so abort_stacks.c */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *tool;

static void say(const char *s) { ssize_t ignored = write(2, s, strlen(s)); (void) ignored; }

static void decimal(char *buf, long v) {
    char tmp[24]; int n = 0;
    do { tmp[n++] = (char) ('0' + v % 10); v /= 10; } while (v > 0);
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
}

static void on_abort(int sig) {
    char tid[24], pid[24];
    decimal(tid, syscall(SYS_gettid));
    decimal(pid, getpid());
    say("\nABORT in thread "); say(tid); say(": its frames\n");
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    if (tool != NULL) {
        say("ABORT: every thread's native stack\n");
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        pid_t child = vfork();
        if (child == 0) {
            dup2(2, 1);
            execl(tool, tool, "-m", "-p", pid, (char *) NULL);
            _exit(127);
        }
        if (child > 0) waitpid(child, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void install(void) {
    void *warm[2];
    backtrace(warm, 2); /* loads libgcc_s now, not inside the handler */
    tool = getenv("GPUSYNC_NATIVE_STACKS");
    signal(SIGABRT, on_abort);
}
