/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interrupt.h - the signals that end a run (interrupt.c: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
 * SIGUSR1, SIGUSR2, SIGXCPU): the first cancels the run through the job's progress callback, so the
 * library cleans up and returns; a second (not SIGPIPE) removes the run's temporary files at once and
 * exits.  A fatal signal (a crash) removes them and dies of the signal.
 */
#ifndef H5SHUF_CLI_INTERRUPT_H
#define H5SHUF_CLI_INTERRUPT_H

#include "h5shuf.h"
#include "progress.h"

/* Catch SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 and SIGXCPU (a signal the caller
 * ignores, as nohup does, stays ignored), ignore SIGXFSZ (an oversized write fails with EFBIG), and catch
 * the fatal signals SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL. */
void interrupt_catch(void);

/* The signal caught (0: none), for the exit status 128 + signal. */
int interrupt_signal(void);

/* The progress callback of every job the tool runs (h5shuf_options.progress): draws prog (set by
 * interrupt_run) and returns nonzero once a signal was caught. */
int interrupt_progress(void *user, h5shuf_phase phase, uint64_t done, uint64_t total);

/* Draw the progress of the calls made outside interrupt_run (h5shuf_job_plan's scan of keys for --head,
 * h5shuf_verify) on prog; NULL: draw nothing.  prog must outlive the calls. */
void interrupt_show(struct progress *prog);

/* Run the job with fn (h5shuf_run, _run_scatter or _run_gather), its progress drawn on prog, its
 * temporary files known to the signal handler while it runs.  Returns fn's status. */
int interrupt_run(h5shuf_job *job, int (*fn)(h5shuf_job *), struct progress *prog);

#endif
