/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * commands.h - the tool's commands, each a function of its own (commands.c): the shuffle and its two
 * passes (scatter, gather) share one, verify has its own.  Both return the exit status.
 */
#ifndef H5SHUF_CLI_COMMANDS_H
#define H5SHUF_CLI_COMMANDS_H

#include "options.h"

/* h5shuf [scatter|gather] OPTIONS ARGS...: pos[0 .. npos) are INPUT... OUTPUT (scatter: INPUT...
 * PILES.h5; gather: PILES.h5 OUTPUT). */
int cmd_run(enum cli_command cmd, const struct cli_options *o, char **pos, int npos);

/* The pieces of cmd_run that h5shuf-mpi (src/mpi/main.c) runs as well: */
/* A job over INPUT... OUTPUT specs (output or piles may be NULL: a scatter has no output, a gather no
 * inputs), with the test knobs of debug (may be NULL).  Returns it, or NULL after printing why and setting
 * *rc (2 for a malformed spec, 1 otherwise). */
h5shuf_job *cmd_make_job(const h5shuf_options *opts, const struct cli_debug *debug, char *const *inputs, int ninputs,
                         const char *output, const char *piles, int *rc);
/* The positional arguments and option combinations each run takes; -1 when they fit, else the exit
 * status of the usage error printed. */
int cmd_check_usage(enum cli_command cmd, const struct cli_options *o, int npos);
/* What a run reports when it ends: the summary (-v), the error, the mixing report, the --json object
 * (plan: the run's figures; check_st: --check's outcome, or -1).  Returns the exit status. */
struct progress;
int cmd_report_run(enum cli_command cmd, const struct cli_options *o, h5shuf_job *job, const h5shuf_plan *plan, int st,
                   int check_st, char **pos, int npos, const struct progress *prog, double seconds);

/* h5shuf verify OPTIONS INPUT... OUTPUT. */
int cmd_verify(const struct cli_options *o, char **pos, int npos);

#endif
