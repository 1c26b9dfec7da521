/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - h5shuf-mpi: the shuffle over MPI processes (`mpirun -n P h5shuf-mpi [OPTIONS] INPUT... OUTPUT`,
 * or `srun`), with h5shuf's options and arguments and the serial run's output bytes (dist.c).
 *
 * Every process reads the same command line, plans the same job (process 0 draws the seed when none is
 * given and sends it to the others) and runs its share.  Process 0 prints the plan, the progress (the
 * rows of all processes, allprogress.h), the summary and the --json report, with the run's figures summed over all processes.  A
 * process that fails prints one line "h5shuf-mpi: rank R: FILE:/dataset: cause" and ends the job (comm.h):
 * every process removes its scratch and temporary outputs, and mpirun exits nonzero.  --memory is each
 * process's budget; --tmpdir may hold "%r", replaced by the rank (one scratch directory per process).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/commands.h"
#include "../cli/interrupt.h"
#include "../cli/options.h"
#include "../cli/progress.h"
#include "../cli/report.h"
#include "allprogress.h"
#include "comm.h"
#include "dist.h"

static struct h5shuf_comm g_comm;
static struct h5shuf_allprogress *g_all; /* every process's progress, summed on process 0 */
static int g_saved[2] = {-1, -1}; /* a process other than 0: its stdout and stderr while they are silenced */

/* Silence stdout and stderr (the command line is every process's: only process 0 says what is wrong with
 * it), and give them back. */
static void silence(void)
{
    int null = open("/dev/null", O_WRONLY);
    for (int fd = 1; fd <= 2 && null >= 0; fd++) {
        fflush(fd == 1 ? stdout : stderr);
        g_saved[fd - 1] = dup(fd);
        dup2(null, fd);
    }
    if (null >= 0)
        close(null);
}

static void unsilence(int fd)
{
    if (g_saved[fd - 1] >= 0) {
        fflush(fd == 1 ? stdout : stderr);
        dup2(g_saved[fd - 1], fd);
        close(g_saved[fd - 1]);
        g_saved[fd - 1] = -1;
    }
}

/* Warn (process 0, once) when the launcher bound this process to fewer CPUs than its codec threads: mpirun
 * binds each of 1 or 2 processes to one core by default, and -j threads then share it (a run at P = 1
 * took 2x the serial one). */
static void warn_bound(unsigned threads)
{
    cpu_set_t set;
    if (g_comm.rank != 0 || sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    const int cpus = CPU_COUNT(&set);
    if (cpus > 0 && (unsigned)cpus < threads)
        fprintf(stderr, "h5shuf-mpi: warning: this process may run on %d CPU%s but has %u codec threads (-j): run "
                        "mpirun --bind-to none, or give each process its cores (mpirun --map-by slot:PE=%u, srun "
                        "--cpus-per-task=%u)\n",
                cpus, cpus == 1 ? "" : "s", threads, threads, threads);
}

static struct h5shuf_dist_resume g_resume; /* what the processes agreed on resuming (h5shuf_dist_agree) */
static struct h5shuf_dist_figures g_fig;   /* what this process's run did (h5shuf_dist_run) */
static char g_json[512];                   /* the --json report's figures of all processes */

static int run_dist(h5shuf_job *job)
{
    return h5shuf_dist_run(job, &g_comm, &g_resume, &g_fig);
}

/* This process's bytes through read and write system calls so far (rchar, wchar of /proc/self/io: every
 * file h5shuf reads or writes, page-cache hits included; 0 where there is no such file). */
static void io_bytes(uint64_t *rd, uint64_t *wr)
{
    *rd = *wr = 0;
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (sscanf(line, "rchar: %llu", &v) == 1)
            *rd = v;
        else if (sscanf(line, "wchar: %llu", &v) == 1)
            *wr = v;
    }
    if (f)
        fclose(f);
}

/* The run's figures over all processes (collective, once the run ended well on all), for --json: the
 * messages sent (all, and the most of one process), pass 2's rounds, the bytes of the single output's
 * parts sent to process 0, the bytes read and written (all, and the most of one process), and the
 * largest peak RSS of a process. */
static void all_figures(void)
{
    struct rusage ru;
    const uint64_t rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
    uint64_t rd, wr;
    io_bytes(&rd, &wr);
    uint64_t v[5] = {g_comm.messages, g_fig.assembled_bytes, rd, wr, 0}, s[5], m[5];
    MPI_Allreduce(v, s, 5, MPI_UINT64_T, MPI_SUM, g_comm.comm);
    v[4] = rss;
    MPI_Allreduce(v, m, 5, MPI_UINT64_T, MPI_MAX, g_comm.comm);
    snprintf(g_json, sizeof g_json,
             ", \"processes\": %d, \"messages_sent\": %llu, \"messages_sent_max\": %llu, \"rounds\": %llu"
             ", \"assembled_bytes\": %llu, \"io_read_bytes\": %llu, \"io_read_bytes_max\": %llu"
             ", \"io_written_bytes\": %llu, \"io_written_bytes_max\": %llu, \"peak_rss_bytes_max\": %llu",
             g_comm.size, (unsigned long long)s[0], (unsigned long long)m[0], (unsigned long long)g_fig.rounds,
             (unsigned long long)s[1], (unsigned long long)s[2], (unsigned long long)m[2], (unsigned long long)s[3],
             (unsigned long long)m[3], (unsigned long long)m[4]);
    report_json_extra(g_json);
}

/* The progress callback: the tool's (signals, the bar on process 0, with every process's rows), and
 * another process's failure. */
static int progress(void *user, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    uint64_t gdone, gtotal, pdone = 0, ptotal = 0;
    int prev;
    h5shuf_allprogress_report(g_all, (int)phase, done, total, &gdone, &gtotal, &prev, &pdone, &ptotal);
    if (prev >= 0) /* the phase process 0 just left, with the others' last rows */
        interrupt_progress(user, (h5shuf_phase)prev, pdone, ptotal);
    int stop = interrupt_progress(user, phase, gdone, gtotal);
    return h5shuf_comm_poll(&g_comm) || stop;
}

/* "%r" in a --tmpdir replaced by the rank, into buf; the directory made (0700, this user's) when it does
 * not exist and its parent does, as one scratch directory per process on a node's local disk needs: a
 * directory there already is taken as it is (and checked as any --tmpdir), a missing parent is left to
 * the run to report. */
static const char *rank_dir(const char *dir, int rank, char *buf, size_t size)
{
    const char *at = dir ? strstr(dir, "%r") : NULL;
    if (!at)
        return dir;
    snprintf(buf, size, "%.*s%d%s", (int)(at - dir), dir, rank, at + 2);
    struct stat sb;
    if (lstat(buf, &sb) != 0 && errno == ENOENT)
        (void)mkdir(buf, 0700); /* (EEXIST: another process made it; ENOENT: no parent, the run says so) */
    return buf;
}

/* Every process's status agreed: the lowest rank that failed (or -1). */
static int first_failed(int st)
{
    int mine = st == H5SHUF_OK ? g_comm.size : g_comm.rank, first = g_comm.size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, g_comm.comm);
    return first == g_comm.size ? -1 : first;
}

/* The job ends after a failure: this process's own (it tells the others, waits for them to clean up, and
 * aborts the job), or another's (it acknowledges and waits for the abort). */
static void end_failed(h5shuf_job *job, int st)
{
    if (st == H5SHUF_ECANCELED && g_comm.failed_rank >= 0 && !interrupt_signal()) {
        h5shuf_comm_acknowledge(&g_comm);
        struct timespec ts = {0, 100000000};
        for (int i = 0; i < 300; i++) /* the failed process aborts the job within seconds */
            nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (interrupt_signal())
        fprintf(stderr, "h5shuf-mpi: rank %d: interrupted by signal %d; scratch and partial output removed\n",
                g_comm.rank, interrupt_signal());
    else
        fprintf(stderr, "h5shuf-mpi: rank %d: %s\n", g_comm.rank, h5shuf_errmsg(job));
    fflush(stderr);
    h5shuf_comm_fail(&g_comm, 10.0);
    MPI_Abort(MPI_COMM_WORLD, interrupt_signal() ? 128 + interrupt_signal() : 1);
}

static int shuffle(struct cli_options *o, char **pos, int npos)
{
    const int root = g_comm.rank == 0;
    int rc = -1;
    h5shuf_options opts = o->lib;
    opts.progress = progress;
    char dir[4096];
    opts.tmpdir = rank_dir(opts.tmpdir, g_comm.rank, dir, sizeof dir);
    if (!opts.seed_set) { /* one seed for all: process 0's */
        if (root && getrandom(&opts.seed, sizeof opts.seed, 0) != (ssize_t)sizeof opts.seed)
            opts.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        MPI_Bcast(&opts.seed, 1, MPI_UINT64_T, 0, g_comm.comm);
        opts.seed_set = 1;
    }
    interrupt_catch();
    g_comm.stopped = interrupt_signal; /* a process blocked in MPI notices a signal too */
    h5shuf_job *job = cmd_make_job(&opts, &o->debug, pos, npos - 1, pos[npos - 1], NULL, &rc);
    unsilence(2); /* from here on a process says what went wrong with it */
    if (first_failed(job ? H5SHUF_OK : H5SHUF_EINVAL) >= 0) {
        h5shuf_job_free(job);
        return job ? 1 : rc;
    }
    double t0 = progress_now();
    h5shuf_dist_prepare(job, &g_comm);
    h5shuf_plan plan;
    h5shuf_plan_init(&plan);
    int st = h5shuf_job_plan(job, &plan);
    if (first_failed(st) < 0 && !o->plan_only) /* (collective: only once every process planned) */
        st = h5shuf_dist_agree(job, &g_comm, &g_resume);
    int failed = first_failed(st);
    if (failed >= 0) { /* the same on every process, as a rule: the first says it */
        if (failed == g_comm.rank)
            fprintf(stderr, "h5shuf-mpi: rank %d: %s\n", g_comm.rank, h5shuf_errmsg(job));
        h5shuf_job_free(job);
        return st == H5SHUF_EINVAL ? EXIT_USAGE : 1;
    }
    if (root && !o->json && (o->plan_only || o->verbose > 1)) {
        char line[1024];
        report_plan_text(o->plan_only ? stdout : stderr, job, &plan,
                         o->plan_only && !o->lib.seed_set && !*h5shuf_job_resume_text(job));
        h5shuf_dist_plan_text(job, &g_comm, line, sizeof line);
        fputs(line, o->plan_only ? stdout : stderr);
    }
    else if (root && !o->json && o->verbose > 0 && *h5shuf_job_resume_text(job)) /* what a resume takes over */
        fprintf(stderr, "h5shuf-mpi: %s (process 0's state; each process resumes from its own)\n",
                h5shuf_job_resume_text(job));
    if (root && o->verbose > 1)
        fprintf(stderr, "h5shuf-mpi: %d processes, each with --memory %llu MiB and its share of the rows\n",
                g_comm.size, (unsigned long long)(o->lib.mem_limit_bytes >> 20));
    if (!o->plan_only && o->verbose > 0)
        warn_bound(plan.threads);
    int draw = root && o->verbose && (o->progress_when == 1 || (o->progress_when == 0 && isatty(STDERR_FILENO)));
    struct progress prog;
    progress_init(&prog, stderr, draw, root && (o->verbose > 1 || draw), plan.row_bytes);
    int check_st = -1;
    if (!o->plan_only) {
        uint64_t first, end;
        h5shuf_dist_rows(job, &g_comm, &first, &end);
        g_all = h5shuf_allprogress_new(&g_comm, first, end);
        st = interrupt_run(job, run_dist, root ? &prog : NULL);
        if (st == H5SHUF_OK) { /* the last phase's rows of every process */
            int last;
            uint64_t gdone = 0, gtotal = 0;
            h5shuf_allprogress_end(g_all, &last, &gdone, &gtotal);
            if (root && last >= 0)
                progress_update(&prog, (h5shuf_phase)last, gdone, gtotal);
            all_figures();
        }
        progress_finish(&prog);
        if (st != H5SHUF_OK)
            end_failed(job, st); /* does not return */
        h5shuf_job_plan(job, &plan);
        check_st = o->lib.check ? H5SHUF_OK : -1;
    }
    rc = 0;
    if (root) {
        for (size_t k = 0; h5shuf_job_warning(job, k); k++)
            fprintf(stderr, "h5shuf-mpi: warning: %s\n", h5shuf_job_warning(job, k));
        rc = cmd_report_run(CMD_SHUFFLE, o, job, &plan, st, check_st, pos, npos, &prog, progress_now() - t0);
    }
    h5shuf_job_free(job);
    h5shuf_allprogress_free(g_all);
    g_all = NULL;
    return rc;
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS ||
        h5shuf_comm_init(&g_comm) != MPI_SUCCESS) {
        fputs("h5shuf-mpi: cannot start MPI\n", stderr);
        return 1;
    }
    if (g_comm.rank != 0)
        silence();
    enum cli_command cmd;
    struct cli_options opts;
    char **pos;
    int npos;
    int rc = cli_parse(argc, argv, &cmd, &opts, &pos, &npos);
    if (rc < 0 && cmd != CMD_SHUFFLE)
        rc = cli_usage_error("%s", "h5shuf-mpi runs the shuffle; scatter, gather and verify are h5shuf's");
    if (rc < 0)
        rc = cmd_check_usage(CMD_SHUFFLE, &opts, npos);
    if (rc < 0)
        rc = shuffle(&opts, pos, npos);
    unsilence(1);
    unsilence(2);
    h5shuf_comm_free(&g_comm);
    MPI_Finalize();
    return rc;
}
