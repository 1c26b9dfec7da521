/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.h - the tool's progress display and per-pass timing (the library only reports rows done).
 */
#ifndef H5SHUF_CLI_PROGRESS_H
#define H5SHUF_CLI_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include "h5shuf.h"

/* One pass as it ran: for the summary lines and the --json report. */
struct pass_record {
    h5shuf_phase phase;
    uint64_t rows, bytes; /* rows done, and their uncompressed bytes */
    double seconds;
};

struct progress {
    FILE *out;            /* stderr */
    int draw;             /* live bar (a terminal, or --progress=always) */
    int summaries;        /* one line per finished pass */
    uint64_t row_bytes;   /* to turn rows into bytes */
    h5shuf_phase phase;   /* current phase, 0 before the first report */
    double phase_start, last_draw, run_start;
    uint64_t done, total;
    int drawn;            /* a bar is on the screen (to be cleared) */
    struct pass_record passes[16];
    int npasses;
};

/* Seconds on a monotonic clock. */
double progress_now(void);

void progress_init(struct progress *p, FILE *out, int draw, int summaries, uint64_t row_bytes);

/* Record a report from the library; draws at most ~6 times a second. */
void progress_update(struct progress *p, h5shuf_phase phase, uint64_t done, uint64_t total);

/* Close the current pass (summary line, bar cleared); call when the run returns. */
void progress_finish(struct progress *p);

/* "scatter", "split", "gather", "create", "select" (a scan of keys: shown in rows), "verify". */
const char *progress_phase_name(h5shuf_phase phase);

#endif
