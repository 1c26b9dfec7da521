/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.h - what the tool prints about a job: the plan as text (-v, --plan) and the --json report.
 */
#ifndef H5SHUF_CLI_REPORT_H
#define H5SHUF_CLI_REPORT_H

#include <stdio.h>

#include "h5shuf.h"
#include "progress.h"

/* The plan as text (--plan, -vv).  seed_drawn: --plan drew the seed (no -s, no run to resume), so the
 * line says that a run draws another and which -s runs this plan. */
void report_plan_text(FILE *out, const h5shuf_job *job, const h5shuf_plan *p, int seed_drawn);

/* The --json report: one JSON object on out.  inputs[0..ninputs) and output as given on the command
 * line; prog may be NULL (plan only); status/errmsg: the result. */
void report_json(FILE *out, const h5shuf_job *job, const h5shuf_plan *p, char *const *inputs, int ninputs,
                 const char *output, const struct progress *prog, double seconds, int status, const char *errmsg,
                 int check_status, const h5shuf_mixing *mixing, const h5shuf_mixing_windows *windows);

/* Fields appended to every later --json report (h5shuf-mpi's figures of all processes): text of the form
 * ', "name": value' (kept, not copied; NULL: none). */
void report_json_extra(const char *fields);

/* The output files with their row ranges, when there are several (shards, splits). */
void report_outputs_text(FILE *out, const h5shuf_job *job);

/* The mixing report of mix[0] (first window) and mix[1] (last window); inputs as on the command line. */
void report_mixing_text(FILE *out, char *const *inputs, const h5shuf_mixing *mix);
/* The mixing of every window (h5shuf_mixing_windows): two lines. */
void report_windows_text(FILE *out, const h5shuf_mixing_windows *m);

#endif
