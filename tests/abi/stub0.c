/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stub0.c - the link-time stand-in of the first release's library, libh5shuf.so.0 (tests/abi.sh): the
 * functions old_caller.c calls, with 0.1.0's prototypes, so that old_caller records libh5shuf.so.0 as a
 * program linked in 0.1.0's days did.  It is never loaded: tests/abi.sh runs old_caller with the new
 * library's directory only, and each function aborts should it be reached.
 */
#include "h5shuf-0.1.0.h"

#include <stdlib.h>

#define NEVER abort()

void h5shuf_options_init(h5shuf_options *opts) { (void)opts; NEVER; }
h5shuf_job *h5shuf_job_create(const h5shuf_options *opts) { (void)opts; NEVER; }
void h5shuf_job_free(h5shuf_job *job) { (void)job; NEVER; }
int h5shuf_job_add_input(h5shuf_job *job, const char *spec) { (void)job, (void)spec; NEVER; }
int h5shuf_job_set_output(h5shuf_job *job, const char *spec) { (void)job, (void)spec; NEVER; }
int h5shuf_job_plan(h5shuf_job *job, h5shuf_plan *plan) { (void)job, (void)plan; NEVER; }
int h5shuf_run(h5shuf_job *job) { (void)job; NEVER; }
uint64_t h5shuf_job_seed(const h5shuf_job *job) { (void)job; NEVER; }
const char *h5shuf_errmsg(const h5shuf_job *job) { (void)job; NEVER; }
