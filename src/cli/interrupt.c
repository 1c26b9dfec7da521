/*
 * interrupt.c - SIGINT and SIGTERM during a run.
 *
 * The handler only records the signal; the job's progress callback, called after every block of work,
 * returns nonzero then, and the library cancels the run, removes its temporary files and returns
 * H5SHUF_ECANCELED.  A second signal does not wait: the handler unlinks the temporary files (their names
 * copied from the job at the first progress report; unlink is async-signal-safe) and exits 128 + signal.
 */
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t g_signal;
static struct progress *g_progress; /* the display of the run in progress, for the callback */
static const h5shuf_job *g_job;     /* the job being run, for its temporary files */

/* The run's temporary files (the outputs, shards or splits, and the scratch file), copied from the job
 * on the first progress report, for the handler. */
static char **g_temp;
static size_t g_ntemp;
static volatile sig_atomic_t g_temp_ready;

static void on_signal(int sig)
{
    if (g_signal) {
        /* A second signal: stop at once, removing what the library would have removed. */
        if (g_temp_ready)
            for (size_t i = 0; i < g_ntemp; i++)
                unlink(g_temp[i]);
        _exit(128 + sig);
    }
    g_signal = sig;
}

static void free_temps(void)
{
    g_temp_ready = 0;
    for (size_t i = 0; i < g_ntemp; i++)
        free(g_temp[i]);
    free(g_temp);
    g_temp = NULL;
    g_ntemp = 0;
}

/* Copy the job's temporary file names (0, 1, then 2.. for further outputs) for the signal handler. */
static void copy_temps(const h5shuf_job *job)
{
    size_t n = 2;
    while (h5shuf_job_temp_file(job, (int)n))
        n++;
    g_temp = calloc(n, sizeof *g_temp);
    size_t want = 0;
    for (size_t i = 0; g_temp && i < n; i++) {
        const char *name = h5shuf_job_temp_file(job, (int)i); /* a gather has no scratch file: [1] is NULL */
        if (!name)
            continue;
        want++;
        if ((g_temp[g_ntemp] = strdup(name)) == NULL)
            break;
        g_ntemp++;
    }
    g_temp_ready = g_temp && g_ntemp == want;
}

int interrupt_progress(void *user, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    const h5shuf_job *job = g_job;
    if (job && !g_temp && h5shuf_job_temp_file(job, 0))
        copy_temps(job);
    (void)user;
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
    const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++)
        /* a signal the caller ignores (nohup, a background job's SIGINT) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}

int interrupt_signal(void)
{
    return g_signal;
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
