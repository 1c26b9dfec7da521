/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * commands.c - what each command of the tool does with its parsed options, over the public API only:
 * build the job, plan it, run it with a progress display, and report (one error line on stderr, the plan
 * and summaries with -v, the mixing report, the --json object on stdout).
 */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "h5shuf_debug.h"
#include "interrupt.h"
#include "progress.h"
#include "report.h"

h5shuf_job *cmd_make_job(const h5shuf_options *opts, const struct cli_debug *debug, char *const *inputs, int ninputs,
                         const char *output, const char *piles, int *rc)
{
    h5shuf_job *job = h5shuf_job_create(opts);
    if (!job) {
        fputs("h5shuf: out of memory\n", stderr);
        *rc = 1;
        return NULL;
    }
    int st = H5SHUF_OK;
    if (debug && debug->pile_bound_rows)
        st = h5shuf_job_set_debug(job, H5SHUF_DEBUG_PILE_BOUND_ROWS, debug->pile_bound_rows);
    if (st == H5SHUF_OK && debug && debug->skip_space_check)
        st = h5shuf_job_set_debug(job, H5SHUF_DEBUG_SKIP_SPACE_CHECK, 1);
    for (int i = 0; i < ninputs && st == H5SHUF_OK; i++)
        st = h5shuf_job_add_input(job, inputs[i]);
    if (st == H5SHUF_OK && output)
        st = h5shuf_job_set_output(job, output);
    if (st == H5SHUF_OK && piles)
        st = h5shuf_job_set_piles(job, piles);
    if (st == H5SHUF_OK)
        return job;
    if (st == H5SHUF_EINVAL) { /* a malformed spec is a usage error; running out of memory is not */
        *rc = cli_usage_error("%s", h5shuf_errmsg(job));
    } else {
        fprintf(stderr, "h5shuf: %s\n", h5shuf_errmsg(job));
        *rc = 1;
    }
    h5shuf_job_free(job);
    return NULL;
}

/* Whether to draw the bar: only on a terminal (or when asked), never with -q. */
static int draw_bar(const struct cli_options *o)
{
    return o->verbose && (o->progress_when == 1 || (o->progress_when == 0 && isatty(STDERR_FILENO)));
}

/* h5shuf verify over files given as specs, its progress drawn as a run's; prints the outcome; returns 0 ok,
 * 1 mismatch/failure, 2 usage, 128 + signal when interrupted. */
static int verify_files(const struct cli_options *co, char *const *inputs, int ninputs, const char *output)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.mem_limit_bytes = co->lib.mem_limit_bytes;
    o.threads = co->lib.threads;
    o.allow_external = co->lib.allow_external;
    o.progress = interrupt_progress;
    int rc;
    h5shuf_job *job = cmd_make_job(&o, NULL, inputs, ninputs, output, NULL, &rc);
    if (!job)
        return rc;
    struct progress prog;
    progress_init(&prog, stderr, draw_bar(co), co->verbose > 1, 0);
    interrupt_show(&prog);
    int st = h5shuf_verify(job);
    interrupt_show(NULL);
    progress_finish(&prog);
    rc = st == H5SHUF_OK ? 0 : 1;
    if (st == H5SHUF_ECANCELED && interrupt_signal())
        rc = 128 + interrupt_signal();
    else if (st != H5SHUF_OK)
        fprintf(stderr, "h5shuf: verify: %s\n", h5shuf_errmsg(job));
    else if (co->verbose)
        fprintf(stderr, "h5shuf: verify: %s: %s\n", output, h5shuf_job_verify_text(job));
    h5shuf_job_free(job);
    return rc;
}

int cmd_verify(const struct cli_options *o, char **pos, int npos)
{
    if (npos < 2)
        return cli_usage_error("%s", "verify: missing INPUT or OUTPUT");
    interrupt_catch();
    return verify_files(o, pos, npos - 1, pos[npos - 1]);
}

int cmd_check_usage(enum cli_command cmd, const struct cli_options *o, int npos)
{
    const char *name = cmd == CMD_SCATTER ? "scatter: " : cmd == CMD_GATHER ? "gather: " : "";
    if (cmd == CMD_SHUFFLE && npos < 2)
        return cli_usage_error("%s", npos == 0 ? "missing INPUT and OUTPUT" : "missing OUTPUT");
    if (cmd == CMD_SCATTER && npos < 2)
        return cli_usage_error("%s", npos == 0 ? "scatter: missing INPUT and PILES.h5" : "scatter: missing PILES.h5");
    if (cmd == CMD_GATHER && npos != 2)
        return cli_usage_error("%s", npos < 2 ? "gather: needs PILES.h5 and OUTPUT" : "gather: takes only PILES.h5 and OUTPUT");
    if (cmd != CMD_SHUFFLE && o->lib.check)
        return cli_usage_error("%s--check: run h5shuf verify on the gathered output", name);
    if (o->lib.check && (o->lib.shards || o->lib.split || o->lib.head_set))
        return cli_usage_error("%s", "--check verifies one whole output; it cannot be combined with --shards, --split "
                                     "or --head");
    if (o->lib.shards && o->lib.split)
        return cli_usage_error("%s", "--shards and --split cannot be combined");
    return -1;
}

int cmd_report_run(enum cli_command cmd, const struct cli_options *o, h5shuf_job *job, const h5shuf_plan *plan,
                      int st, int check_st, char **pos, int npos, const struct progress *prog, double seconds)
{
    int rc = 0, ninputs = npos - 1; /* a gather's: the pile file */
    if (st == H5SHUF_OK && !o->plan_only && o->verbose > 1 && plan->strategy == H5SHUF_STRATEGY_DIRECT)
        fprintf(stderr, "h5shuf: done: %" PRIu64 " rows, direct, %" PRIu64 " window%s of keys, no scratch\n", plan->rows,
                plan->direct_windows, plan->direct_windows == 1 ? "" : "s");
    else if (st == H5SHUF_OK && !o->plan_only && o->verbose > 1)
        fprintf(stderr, "h5shuf: %sdone: %" PRIu64 " rows, %" PRIu64 " piles, %" PRIu64 " restarts, %" PRIu64
                        " piles split, %" PRIu64 " %s bytes\n",
                cmd == CMD_SHUFFLE ? "" : cmd == CMD_SCATTER ? "scatter: " : "gather: ", plan->rows, plan->piles,
                plan->restarts, plan->splits, plan->scratch_bytes, cmd == CMD_SHUFFLE ? "scratch" : "pile file");
    if (st == H5SHUF_ECANCELED && interrupt_signal()) {
        rc = 128 + interrupt_signal();
        if (o->verbose)
            fprintf(stderr, "h5shuf: interrupted; scratch and partial output removed\n");
    } else if (st != H5SHUF_OK) {
        fprintf(stderr, "h5shuf: %s\n", h5shuf_errmsg(job));
        rc = 1;
    }
    /* The mixing report: with several inputs and -v (or --mixing-window), from the keys alone. */
    h5shuf_mixing mix[2];
    h5shuf_mixing_windows windows;
    h5shuf_mixing_init(&mix[0]);
    h5shuf_mixing_init(&mix[1]);
    h5shuf_mixing_windows_init(&windows);
    int have_mix = 0, mix_st = -1;
    if ((st == H5SHUF_OK || (o->plan_only && h5shuf_job_output_file(job, 0, NULL, NULL))) && ninputs > 1 &&
        (o->verbose > 1 || o->mixing_window) &&
        (mix_st = h5shuf_job_mixing(job, o->mixing_window, &mix[0], &mix[1])) == H5SHUF_OK &&
        (mix_st = h5shuf_job_mixing_windows(job, o->mixing_window, &windows)) == H5SHUF_OK) {
        have_mix = 1;
        if (!o->json && o->verbose) {
            report_mixing_text(o->plan_only ? stdout : stderr, pos, mix);
            report_windows_text(o->plan_only ? stdout : stderr, &windows);
        }
    } else if (mix_st == H5SHUF_ECANCELED && interrupt_signal()) { /* the report's scan of keys, interrupted */
        rc = 128 + interrupt_signal();
    }
    if (o->json)
        report_json(stdout, job, st == H5SHUF_OK || o->plan_only ? plan : NULL, pos, ninputs, pos[npos - 1],
                    o->plan_only ? NULL : prog, seconds, st, h5shuf_errmsg(job), check_st, have_mix ? mix : NULL,
                    have_mix ? &windows : NULL);
    return rc;
}

int cmd_run(enum cli_command cmd, const struct cli_options *o, char **pos, int npos)
{
    int rc = cmd_check_usage(cmd, o, npos);
    if (rc >= 0)
        return rc;
    interrupt_catch();
    h5shuf_options opts = o->lib;
    opts.progress = interrupt_progress;
    h5shuf_job *job = cmd == CMD_SCATTER  ? cmd_make_job(&opts, &o->debug, pos, npos - 1, NULL, pos[npos - 1], &rc)
                      : cmd == CMD_GATHER ? cmd_make_job(&opts, &o->debug, NULL, 0, pos[1], pos[0], &rc)
                                          : cmd_make_job(&opts, &o->debug, pos, npos - 1, pos[npos - 1], NULL, &rc);
    if (!job)
        return rc;
    double t0 = progress_now();
    /* The bar only on a terminal (or when asked), never with -q; summaries with the bar or -v.  The plan's
     * scan of keys (--head over many rows) is drawn too. */
    int draw = draw_bar(o);
    struct progress prog;
    progress_init(&prog, stderr, draw, o->verbose > 1 || draw, 0);
    h5shuf_plan plan;
    h5shuf_plan_init(&plan);
    interrupt_show(&prog);
    int st = h5shuf_job_plan(job, &plan);
    interrupt_show(NULL);
    progress_finish(&prog);
    if (st == H5SHUF_EINVAL) { /* a bad option value, found once the datasets are known */
        rc = cli_usage_error("%s", h5shuf_errmsg(job));
        h5shuf_job_free(job);
        return rc;
    }
    if (st == H5SHUF_OK && !o->json && (o->plan_only || o->verbose > 1))
        report_plan_text(o->plan_only ? stdout : stderr, job, &plan,
                         o->plan_only && !o->lib.seed_set && !*h5shuf_job_resume_text(job));
    else if (st == H5SHUF_OK && o->verbose > 0 && *h5shuf_job_resume_text(job)) /* what a resume takes over */
        fprintf(stderr, "h5shuf: %s\n", h5shuf_job_resume_text(job));
    prog.row_bytes = st == H5SHUF_OK ? plan.row_bytes : 0;
    int check_st = -1;
    if (st == H5SHUF_OK && !o->plan_only) {
        st = interrupt_run(job, cmd == CMD_SCATTER ? h5shuf_run_scatter : cmd == CMD_GATHER ? h5shuf_run_gather : h5shuf_run,
                           &prog);
        progress_finish(&prog);
        if (st == H5SHUF_OK) /* the run's figures (restarts, splits, scratch bytes); keeps an error intact */
            h5shuf_job_plan(job, &plan);
        if (o->lib.check) /* verified before the rename: a mismatch left nothing in place */
            check_st = st == H5SHUF_OK ? H5SHUF_OK : st == H5SHUF_EMISMATCH ? H5SHUF_EMISMATCH : -1;
        if (st == H5SHUF_OK && o->lib.check && o->verbose)
            fprintf(stderr, "h5shuf: verify: %s: a permutation of the inputs' rows, datasets aligned\n", pos[npos - 1]);
    }
    /* What the options let change, said once the output (or, with --plan, the plan) holds it: a failed run
     * prints its one-line error only. */
    for (size_t k = 0; st == H5SHUF_OK && h5shuf_job_warning(job, k); k++)
        fprintf(stderr, "h5shuf: warning: %s\n", h5shuf_job_warning(job, k));
    rc = cmd_report_run(cmd, o, job, &plan, st, check_st, pos, npos, &prog, progress_now() - t0);
    h5shuf_job_free(job);
    return rc;
}
