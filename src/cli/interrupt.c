/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interrupt.c - the signals that end a run (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2,
 * SIGXCPU), and fatal signals.
 *
 * Each of the signals that end a process by default and that a terminal, a pipe or a scheduler sends (a
 * closed terminal or ssh session: SIGHUP; Ctrl-\: SIGQUIT; the reader of a pipe gone, as `| head` does:
 * SIGPIPE; a batch system's warning: SIGUSR1, SIGUSR2, SIGXCPU) is handled as SIGINT is.  The handler only
 * records the signal; the job's progress callback, called after every block of work, returns nonzero
 * then, and the library cancels the run, removes its temporary files (or keeps a resumable run's state)
 * and returns H5SHUF_ECANCELED.  A second signal does not wait: the handler unlinks the temporary files
 * (their names copied from the job as it reports making them; unlink is async-signal-safe) and exits 128
 * + signal.  SIGPIPE is never that second signal: after the first one the handler ignores it, so the
 * writes that follow (the tool's last lines, to a pipe nobody reads) fail with EPIPE instead of ending
 * the cleanup.  SIGXFSZ (a write past `ulimit -f`) is ignored: the write then fails with EFBIG, and the
 * run fails and cleans up as on any write error.  A signal ignored when the tool started (nohup's SIGHUP,
 * a script's background job's SIGINT and SIGQUIT, an ignored SIGPIPE) stays ignored: the run goes on.
 * A fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL: a crash, in h5shuf or in a library or filter
 * plugin it runs) removes them too, then kills the process with the same signal, so the exit status and
 * a core dump are what they would have been.
 */
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_signal;
static struct progress *g_progress; /* the display of the run in progress, for the callback */
static const h5shuf_job *g_job;     /* the job being run, for its temporary files */

/* The run's temporary files (the outputs, shards or splits, and the scratch file), copied from the job
 * as the library reports making them (H5SHUF_PHASE_CREATE), for the handlers.  An entry is stored
 * before the count that shows it grows; a larger array is filled before it is swapped in. */
static char **volatile g_temp;
static volatile size_t g_ntemp;
static size_t g_cap;
static int g_have[2];        /* temporary files 0 and 1 are in the list */
static char **g_retired[64]; /* arrays replaced by larger ones: a handler on another thread may still read
                              * one, so they are freed only when the run is over */
static int g_nretired;

static void remove_temps(void)
{
    char **v = g_temp;
    size_t n = g_ntemp;
    for (size_t i = 0; v && i < n; i++)
        unlink(v[i]);
}

static void on_signal(int sig)
{
    if (sig == SIGPIPE) {
        /* Nobody reads stdout or stderr any more: cancel, and let later writes fail with EPIPE. */
        struct sigaction ign;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        sigaction(SIGPIPE, &ign, NULL);
        if (!g_signal)
            g_signal = sig;
        return;
    }
    if (g_signal) {
        /* A second signal: stop at once, removing what the library would have removed. */
        remove_temps();
        _exit(128 + sig);
    }
    g_signal = sig;
}

/* A fatal signal (a crash): remove the temporary files, then die of the signal as the default action
 * would (the handler was installed with SA_RESETHAND). */
static void on_fatal(int sig)
{
    remove_temps();
    raise(sig);
}

static void free_temps(void)
{
    char **v = g_temp;
    size_t n = g_ntemp;
    g_ntemp = 0;
    g_temp = NULL;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    for (int i = 0; i < g_nretired; i++)
        free(g_retired[i]);
    g_nretired = 0;
    g_cap = 0;
    g_have[0] = g_have[1] = 0;
}

/* Add name to the list (an allocation failure loses it: the handlers then remove less). */
static void add_temp(const char *name)
{
    if (g_ntemp == g_cap) {
        size_t cap = g_cap ? 2 * g_cap : 8;
        char **v = malloc(cap * sizeof *v);
        if (!v)
            return;
        for (size_t i = 0; i < g_ntemp; i++)
            v[i] = g_temp[i];
        char **old = g_temp;
        g_temp = v; /* the same entries, the same count: a handler sees either array whole */
        g_cap = cap;
        if (old)
            g_retired[g_nretired++] = old;
    }
    char *copy = strdup(name);
    if (!copy)
        return;
    g_temp[g_ntemp] = copy;
    g_ntemp = g_ntemp + 1;
}

/* The library reports each file it makes before pass 1 (k of them so far): the output, the scratch file
 * (temporary files 0 and 1), and the k-th output file (k >= 2). */
static void note_temps(const h5shuf_job *job, uint64_t k)
{
    for (int i = 0; i < 2; i++) {
        const char *name = g_have[i] ? NULL : h5shuf_job_temp_file(job, i);
        if (name) {
            add_temp(name);
            g_have[i] = 1;
        }
    }
    const char *name = k >= 2 && k <= INT32_MAX ? h5shuf_job_temp_file(job, (int)k) : NULL;
    if (name)
        add_temp(name);
}

int interrupt_progress(void *user, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    (void)user;
    if (g_job && (phase == H5SHUF_PHASE_CREATE || !g_have[0]))
        note_temps(g_job, phase == H5SHUF_PHASE_CREATE ? done : 0);
    if (g_progress)
        progress_update(g_progress, phase, done, total);
    return g_signal != 0;
}

void interrupt_catch(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGXCPU};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        /* a signal the caller ignores (nohup, a background job's SIGINT and SIGQUIT) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    /* A write past the file size limit (ulimit -f) fails with EFBIG instead of killing the process. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, NULL);
    /* A crash must not leave partial files behind either. */
    struct sigaction fa;
    memset(&fa, 0, sizeof fa);
    fa.sa_handler = on_fatal;
    fa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&fa.sa_mask);
    const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        sigaction(fatal[i], &fa, NULL);
}

int interrupt_signal(void)
{
    return g_signal;
}

void interrupt_show(struct progress *prog)
{
    g_progress = prog;
}

int interrupt_run(h5shuf_job *job, int (*fn)(h5shuf_job *), struct progress *prog)
{
    g_progress = prog;
    g_job = job;
    int st = fn(job);
    g_job = NULL;
    free_temps();
    g_progress = NULL;
    return st;
}
