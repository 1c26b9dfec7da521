/*
 * main.c - the h5shuf command-line tool, over the public API only (include/h5shuf.h).
 *
 * Parses options with one static getopt_long table, builds a job, runs it and reports: errors as one
 * line "h5shuf: FILE:/dataset: what is wrong" on stderr; usage errors add "Try 'h5shuf --help'".
 * Exit status: 0 success, 1 failure, 2 usage, 130/143 when interrupted by SIGINT/SIGTERM (the job's
 * progress callback sees the signal, the library cleans up, and then we exit).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5shuf.h"
#include "progress.h"
#include "report.h"

enum { EXIT_USAGE = 2 };

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

static int on_progress(void *user, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    const h5shuf_job *job = g_job;
    if (job && !g_temp && h5shuf_job_temp_file(job, 0))
        copy_temps(job);
    (void)user;
    if (g_progress)
        progress_update(g_progress, phase, done, total);
    return g_signal != 0;
}

static void catch_signals(void)
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

static void usage(FILE *to)
{
    fputs("Usage: h5shuf [OPTIONS] INPUT... OUTPUT\n"
          "       h5shuf scatter [OPTIONS] INPUT... PILES.h5\n"
          "       h5shuf gather [OPTIONS] PILES.h5 OUTPUT\n"
          "Shuffle the rows (axis 0) of HDF5 datasets larger than memory, reproducibly from a seed.\n"
          "\n"
          "  INPUT   FILE.h5[:/path[,/path...]]  several inputs are concatenated along axis 0\n"
          "  OUTPUT  FILE.h5[:/path[,/path...]]  dataset paths default to the input paths\n"
          "\n"
          "  A FILE.h5 input without paths shuffles together every dataset whose dim 0 is the common N\n"
          "  and copies the other objects unchanged.\n"
          "\n"
          "Options:\n"
          "  -s, --seed N            seed of the permutation, decimal or 0x hex (default: random,\n"
          "                          printed with -v,\n"
          "                          stored in the output as the attribute /h5shuf_seed)\n"
          "  -m, --memory SIZE       memory budget for buffers, K/M/G/T suffixes (default 1G)\n"
          "  -t, --tmpdir DIR        directory of the scratch file (default $TMPDIR, else the\n"
          "                          output's directory)\n"
          "      --on-oversize MODE  a pile over its bound: recurse (split it, default) or restart\n"
          "  -c, --compression SPEC  output filters: keep (default: the first input's), none, or\n"
          "                          gzip[:0-9] / zstd[:LEVEL], with +shuffle and +fletcher32,\n"
          "                          e.g. zstd:3+shuffle (zstd is HDF5 filter 32015)\n"
          "      --chunk-rows N      rows per output chunk (default: keep; else about 1 MiB)\n"
          "      --scratch-compression SPEC  filters of the scratch piles\n"
          "                          (default zstd:1+shuffle; none)\n"
          "  -j, --threads N         threads that (de)compress chunks (default: the number of CPUs;\n"
          "                          the output is the same for every N)\n"
          "  -f FILTER, -l CHUNK=DIMS  h5repack's spellings, also accepted: -f SHUF, -f GZIP=4,\n"
          "                          -f UD=32015,0,1,3 (zstd level 3), -f FLET, -f NONE, -l CHUNK=64x256\n"
          "      --plan              print the plan (piles, memory, disk) and exit without writing\n"
          "      --progress=WHEN     a live progress bar on stderr: auto (when it is a terminal),\n"
          "                          always, never\n"
          "      --json              print a machine-readable report of the run on stdout\n"
          "      --check             verify the output against the inputs after the shuffle\n"
          "      --index PATH        also write dataset PATH (N,) uint64: the input row of each output\n"
          "                          row (rows numbered over all inputs); verify then checks the order\n"
          "      --source-index PATH  also write dataset PATH (N,) uint16 (uint32 past 65535 inputs):\n"
          "                          the input file (0-based, command-line order) of each output row\n"
          "      --shards K          write K files OUT-00000-of-0000K.h5 ... (or replace {shard} and\n"
          "                          {shards} in OUTPUT's name); shard s holds output rows\n"
          "                          floor(s*N/K) .. floor((s+1)*N/K)-1\n"
          "      --split NAME=F,...  one file OUT-NAME.h5 per name (or replace {split}) holding\n"
          "                          consecutive ranges of the shuffle, e.g. train=0.9,val=0.1\n"
          "  -n, --head N            write only the first N rows of the shuffle (one pass, keys of\n"
          "                          N rows in memory); the same seed and N pick the same rows\n"
          "      --mixing-window W   rows of the first and last window of the mixing report that -v\n"
          "                          prints with several inputs (default min(N, 10000))\n"
          "  -f, --force             replace an existing output file\n"
          "  -q, --quiet             print nothing but errors\n"
          "  -v, --verbose           print the plan, the seed and a summary of each pass\n"
          "  -h, --help              print this help and exit\n"
          "  -V, --version           print the version (with HDF5's and zstd's) and exit\n"
          "\n"
          "\n"
          "  h5shuf scatter [OPTIONS] INPUT... PILES.h5\n"
          "                          pass 1 only: leave the piles in PILES.h5 (a self-describing pile\n"
          "                          file: docs/lazy.md); the output options are recorded for gather\n"
          "  h5shuf gather [OPTIONS] PILES.h5 OUTPUT\n"
          "                          pass 2 only: write OUTPUT from the piles (the inputs must still be\n"
          "                          there, unchanged); scatter + gather = the one-shot output, byte for\n"
          "                          byte; PILES.h5 is only read\n"
          "  h5shuf verify [-m SIZE] [-q] INPUT... OUTPUT\n"
          "                          check that OUTPUT holds a permutation of the inputs' rows, with\n"
          "                          datasets shuffled together still aligned (exit 0, else 1)\n"
          "\n"
          "Examples:\n"
          "  h5shuf train.h5 shuffled.h5\n"
          "  h5shuf -s 42 -m 256M in.h5:/x out.h5:/x\n"
          "  h5shuf a.h5:/x b.h5:/x c.h5:/x out.h5\n"
          "\n"
          "The output is the rows sorted by a per-row key from the seed, so the same seed and input give\n"
          "the same bytes for any memory budget.  Exit status: 0 success, 1 failure, 2 usage error.\n",
          to);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("h5shuf: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'h5shuf --help' for more information.\n", stderr);
    return EXIT_USAGE;
}

/* getopt's '?': an unknown short option (optopt), or a long one unknown or given a value it takes not. */
static int bad_option(const char *arg)
{
    char text[8];
    if (optopt > 0 && optopt < 128 && arg[0] == '-' && arg[1] != '-') {
        snprintf(text, sizeof text, "-%c", optopt);
        arg = text;
    }
    if (strncmp(arg, "--", 2) == 0 && strchr(arg, '='))
        return usage_error("unknown option, or one that takes no value: '%s'", arg);
    return usage_error("unknown option '%s'", arg);
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    errno = 0;
    char *end;
    /* decimal, or hexadecimal with 0x; never octal: "010" is ten, not eight */
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned long long x = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
    if (hex && !s[2])
        return -1;
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

/*
 * h5repack's filter spellings, translated to a --compression spec: SHUF, FLET, NONE, GZIP=L and
 * UD=ID,FLAGS,N,V... for ids 1 (deflate), 2 (shuffle), 3 (fletcher32) and 32015 (zstd).  Accumulates into
 * *spec ("" at first); returns 0, or -1 for what we do not support.
 */
struct repack_filters {
    int none, shuffle, fletcher32;
    char codec[32];
};

static int repack_filter(const char *arg, struct repack_filters *rf)
{
    unsigned long v[8];
    int n = 0;
    if (strcmp(arg, "SHUF") == 0)
        return rf->shuffle = 1, 0;
    if (strcmp(arg, "FLET") == 0)
        return rf->fletcher32 = 1, 0;
    if (strcmp(arg, "NONE") == 0)
        return rf->none = 1, 0;
    if (strncmp(arg, "GZIP=", 5) == 0) {
        char *end;
        unsigned long level = strtoul(arg + 5, &end, 10);
        if (!arg[5] || *end || level > 9)
            return -1;
        snprintf(rf->codec, sizeof rf->codec, "gzip:%lu", level);
        return 0;
    }
    if (strncmp(arg, "UD=", 3) != 0)
        return -1;
    for (const char *p = arg + 3; *p && n < 8;) {
        char *end;
        errno = 0;
        v[n++] = strtoul(p, &end, 10);
        if (errno || end == p || (*end && *end != ','))
            return -1;
        p = *end ? end + 1 : end;
    }
    /* UD=ID,FLAGS,COUNT,VALUES... */
    if (n < 3 || (unsigned long)n != 3 + v[2])
        return -1;
    if (v[0] == 32015) {
        snprintf(rf->codec, sizeof rf->codec, "zstd:%d", v[2] ? (int)(unsigned)v[3] : 3);
    } else if (v[0] == 1) {
        snprintf(rf->codec, sizeof rf->codec, "gzip:%lu", v[2] ? v[3] : 4);
    } else if (v[0] == 2) {
        rf->shuffle = 1;
    } else if (v[0] == 3) {
        rf->fletcher32 = 1;
    } else {
        return -1;
    }
    return 0;
}

enum command { CMD_SHUFFLE, CMD_SCATTER, CMD_GATHER };

/* Run job with the progress display as the callback's user data. */
static int run_with_progress(h5shuf_job *job, struct progress *prog, enum command cmd)
{
    g_progress = prog;
    g_job = job;
    int st = cmd == CMD_SCATTER ? h5shuf_run_scatter(job) : cmd == CMD_GATHER ? h5shuf_run_gather(job) : h5shuf_run(job);
    g_job = NULL;
    free_temps();
    g_progress = NULL;
    return st;
}

/* A job over INPUT... OUTPUT specs (output or piles may be NULL: a scatter has no output, a gather no
 * inputs).  Returns it, or NULL after printing why and setting *rc (2 for a malformed spec, 1 otherwise). */
static h5shuf_job *make_job(const h5shuf_options *opts, char *const *inputs, int ninputs, const char *output,
                            const char *piles, int *rc)
{
    h5shuf_job *job = h5shuf_job_create(opts);
    if (!job) {
        fputs("h5shuf: out of memory\n", stderr);
        *rc = 1;
        return NULL;
    }
    int st = H5SHUF_OK;
    for (int i = 0; i < ninputs && st == H5SHUF_OK; i++)
        st = h5shuf_job_add_input(job, inputs[i]);
    if (st == H5SHUF_OK && output)
        st = h5shuf_job_set_output(job, output);
    if (st == H5SHUF_OK && piles)
        st = h5shuf_job_set_piles(job, piles);
    if (st == H5SHUF_OK)
        return job;
    if (st == H5SHUF_EINVAL) { /* a malformed spec is a usage error; running out of memory is not */
        *rc = usage_error("%s", h5shuf_errmsg(job));
    } else {
        fprintf(stderr, "h5shuf: %s\n", h5shuf_errmsg(job));
        *rc = 1;
    }
    h5shuf_job_free(job);
    return NULL;
}

/* h5shuf verify over files given as specs; prints the outcome; returns 0 ok, 1 mismatch/failure, 2 usage. */
static int verify_files(char *const *inputs, int ninputs, const char *output, uint64_t mem, unsigned threads, int verbose)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.mem_limit_bytes = mem;
    o.threads = threads;
    int rc;
    h5shuf_job *job = make_job(&o, inputs, ninputs, output, NULL, &rc);
    if (!job)
        return rc;
    int st = h5shuf_verify(job);
    if (st != H5SHUF_OK)
        fprintf(stderr, "h5shuf: verify: %s\n", h5shuf_errmsg(job));
    else if (verbose)
        fprintf(stderr, "h5shuf: verify: %s: a permutation of the inputs' rows, datasets aligned\n", output);
    h5shuf_job_free(job);
    return st == H5SHUF_OK ? 0 : 1;
}

/* h5shuf verify [-m SIZE] [-q] [-h] INPUT... OUTPUT */
static int verify_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"memory", required_argument, NULL, 'm'}, {"quiet", no_argument, NULL, 'q'},
        {"threads", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    uint64_t mem = UINT64_C(1) << 30;
    unsigned threads = 0;
    int verbose = 1, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': {
            uint64_t n;
            if (parse_u64(optarg, &n) != 0 || n == 0 || n > 1024)
                return usage_error("invalid --threads '%s' (1 to 1024)", optarg);
            threads = (unsigned)n;
            break;
        }
        case 'm':
            if (h5shuf_parse_size(optarg, &mem) != H5SHUF_OK || mem == 0)
                return usage_error("invalid memory size '%s' (e.g. 512M, 2G)", optarg);
            break;
        case 'q':
            verbose = 0;
            break;
        case 'h':
            puts("Usage: h5shuf verify [-m SIZE] [-j N] [-q] INPUT... OUTPUT\n"
                 "Check that OUTPUT holds a permutation of the rows of the INPUTs (same syntax as the shuffle),\n"
                 "with datasets shuffled together still aligned.  Exit 0 when it does, 1 otherwise.");
            return 0;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return bad_option(argv[optind - 1]);
        }
    }
    if (argc - optind < 2)
        return usage_error("%s", "verify: missing INPUT or OUTPUT");
    catch_signals();
    return verify_files(argv + optind, argc - optind - 1, argv[argc - 1], mem, threads, verbose);
}

int main(int argc, char **argv)
{
    enum { OPT_ON_OVERSIZE = 256, OPT_PLAN, OPT_DEBUG_PILE_BOUND, OPT_CHUNK_ROWS, OPT_SCRATCH, OPT_FILTER,
           OPT_PROGRESS, OPT_JSON, OPT_CHECK, OPT_DEBUG_NO_SPACE_CHECK, OPT_INDEX,
           OPT_SOURCE_INDEX, OPT_SHARDS, OPT_SPLIT, OPT_MIXING_WINDOW };
    static const struct option longopts[] = {
        {"seed", required_argument, NULL, 's'},
        {"memory", required_argument, NULL, 'm'},
        {"tmpdir", required_argument, NULL, 't'},
        {"on-oversize", required_argument, NULL, OPT_ON_OVERSIZE},
        {"plan", no_argument, NULL, OPT_PLAN},
        {"compression", required_argument, NULL, 'c'},
        {"chunk-rows", required_argument, NULL, OPT_CHUNK_ROWS},
        {"scratch-compression", required_argument, NULL, OPT_SCRATCH},
        {"threads", required_argument, NULL, 'j'},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"layout", required_argument, NULL, 'l'},
        {"progress", required_argument, NULL, OPT_PROGRESS},
        {"json", no_argument, NULL, OPT_JSON},
        {"check", no_argument, NULL, OPT_CHECK},
        {"index", required_argument, NULL, OPT_INDEX},
        {"source-index", required_argument, NULL, OPT_SOURCE_INDEX},
        {"shards", required_argument, NULL, OPT_SHARDS},
        {"split", required_argument, NULL, OPT_SPLIT},
        {"head", required_argument, NULL, 'n'},
        {"mixing-window", required_argument, NULL, OPT_MIXING_WINDOW},
        {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        /* For tests: lower every pile's oversize bound to force recursion or restarts on small data. */
        {"debug-pile-bound", required_argument, NULL, OPT_DEBUG_PILE_BOUND},
        {"debug-no-space-check", no_argument, NULL, OPT_DEBUG_NO_SPACE_CHECK},
        {NULL, 0, NULL, 0},
    };
    h5shuf_options opts;
    h5shuf_options_init(&opts);
    opts.progress = on_progress;
    if (argc > 1 && strcmp(argv[1], "verify") == 0)
        return verify_main(argc - 1, argv + 1);
    /* scatter and gather take the shuffle's options: parse them with the same table, after the word */
    enum command cmd = CMD_SHUFFLE;
    const char *cmd_name = "";
    if (argc > 1 && (strcmp(argv[1], "scatter") == 0 || strcmp(argv[1], "gather") == 0)) {
        cmd = argv[1][0] == 's' ? CMD_SCATTER : CMD_GATHER;
        cmd_name = cmd == CMD_SCATTER ? "scatter: " : "gather: ";
        argc--;
        argv++;
    }
    int verbose = 1, plan_only = 0, json = 0, check = 0, progress_when = 0, c; /* 0 auto, 1 always, 2 never */
    uint64_t mixing_window = 0;
    struct repack_filters rf = {0};
    int have_rf = 0;
    char chunk_rows[32];
    /* "-f FILTER" is h5repack's; our -f is --force.  An -f followed by an h5repack filter word is the
     * former: rewrite it as --filter=FILTER before getopt sees it. */
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        const char *n = argv[i + 1];
        if (strcmp(argv[i], "-f") == 0 &&
            (!strcmp(n, "SHUF") || !strcmp(n, "FLET") || !strcmp(n, "NONE") || !strncmp(n, "GZIP=", 5) ||
             !strncmp(n, "UD=", 3) || !strncmp(n, "SZIP=", 5) || !strcmp(n, "NBIT") || !strncmp(n, "SOFF=", 5))) {
            argv[i] = "--filter";
            i++;
        }
    }
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:m:t:c:l:j:n:fqvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_u64(optarg, &opts.seed) != 0)
                return usage_error("invalid seed '%s' (an integer from 0 to 2^64-1)", optarg);
            opts.seed_set = 1;
            break;
        case 'm':
            if (h5shuf_parse_size(optarg, &opts.mem_limit_bytes) != H5SHUF_OK || opts.mem_limit_bytes == 0)
                return usage_error("invalid memory size '%s' (e.g. 512M, 2G)", optarg);
            break;
        case 't':
            opts.tmpdir = optarg;
            break;
        case 'j': {
            uint64_t n;
            if (parse_u64(optarg, &n) != 0 || n == 0 || n > 1024)
                return usage_error("invalid --threads '%s' (1 to 1024)", optarg);
            opts.threads = (unsigned)n;
            break;
        }
        case OPT_ON_OVERSIZE:
            if (strcmp(optarg, "recurse") == 0)
                opts.on_oversize = H5SHUF_OVERSIZE_RECURSE;
            else if (strcmp(optarg, "restart") == 0)
                opts.on_oversize = H5SHUF_OVERSIZE_RESTART;
            else
                return usage_error("invalid --on-oversize '%s' (recurse or restart)", optarg);
            break;
        case OPT_PLAN:
            plan_only = 1;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_DEBUG_NO_SPACE_CHECK:
            opts.debug_skip_space_check = 1;
            break;
        case OPT_CHECK:
            check = 1;
            break;
        case OPT_INDEX:
            opts.index_path = optarg;
            break;
        case OPT_SOURCE_INDEX:
            opts.source_index_path = optarg;
            break;
        case OPT_SHARDS:
            if (parse_u64(optarg, &opts.shards) != 0 || opts.shards == 0 || opts.shards > 1000000)
                return usage_error("invalid --shards '%s' (1 to 1000000)", optarg);
            break;
        case OPT_SPLIT:
            opts.split = optarg;
            break;
        case 'n':
            if (parse_u64(optarg, &opts.head_rows) != 0)
                return usage_error("invalid --head '%s' (a number of rows)", optarg);
            opts.head_set = 1;
            break;
        case OPT_MIXING_WINDOW:
            if (parse_u64(optarg, &mixing_window) != 0 || mixing_window == 0)
                return usage_error("invalid --mixing-window '%s' (a number of rows, at least 1)", optarg);
            break;
        case OPT_PROGRESS:
            if (strcmp(optarg, "auto") == 0)
                progress_when = 0;
            else if (strcmp(optarg, "always") == 0)
                progress_when = 1;
            else if (strcmp(optarg, "never") == 0)
                progress_when = 2;
            else
                return usage_error("invalid --progress '%s' (auto, always or never)", optarg);
            break;
        case 'c':
            opts.compression = optarg;
            break;
        case OPT_SCRATCH:
            opts.scratch_compression = optarg;
            break;
        case OPT_CHUNK_ROWS: {
            uint64_t rows;
            if (parse_u64(optarg, &rows) != 0 || rows == 0 || rows > UINT32_MAX)
                return usage_error("invalid --chunk-rows '%s' (1 to 2^32-1)", optarg);
            snprintf(chunk_rows, sizeof chunk_rows, "%" PRIu64, rows);
            opts.chunk_shape = chunk_rows;
            break;
        }
        case 'l':
            if (strncmp(optarg, "CHUNK=", 6) != 0 || !optarg[6])
                return usage_error("unsupported layout '%s' (only h5repack's CHUNK=DIMxDIM...)", optarg);
            opts.chunk_shape = optarg + 6;
            break;
        case OPT_FILTER:
            if (repack_filter(optarg, &rf) != 0)
                return usage_error("unsupported filter '%s' (SHUF, FLET, NONE, GZIP=0-9, "
                                   "UD=32015,0,1,LEVEL or UD=1|2|3,...)",
                                   optarg);
            have_rf = 1;
            break;
        case OPT_DEBUG_PILE_BOUND:
            if (parse_u64(optarg, &opts.debug_pile_bound_rows) != 0 || opts.debug_pile_bound_rows == 0)
                return usage_error("invalid --debug-pile-bound '%s'", optarg);
            break;
        case 'f':
            opts.force = 1;
            break;
        case 'q':
            verbose = 0;
            break;
        case 'v':
            verbose = 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("h5shuf %s (HDF5 %s, zstd %s)\n", h5shuf_version(), h5shuf_hdf5_version(), h5shuf_zstd_version());
            return 0;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return bad_option(argv[optind - 1]);
        }
    }
    char repack_spec[96];
    if (have_rf) {
        if (opts.compression)
            return usage_error("%s", "give either -c or h5repack's -f filters, not both");
        if (rf.none && (rf.shuffle || rf.fletcher32 || rf.codec[0]))
            return usage_error("%s", "-f NONE cannot be combined with other filters");
        snprintf(repack_spec, sizeof repack_spec, "%s%s%s%s%s", rf.none ? "none" : rf.codec,
                 rf.shuffle && (rf.codec[0]) ? "+" : "", rf.shuffle ? "shuffle" : "",
                 rf.fletcher32 && (rf.codec[0] || rf.shuffle) ? "+" : "", rf.fletcher32 ? "fletcher32" : "");
        opts.compression = repack_spec;
    }
    int npos = argc - optind;
    if (cmd == CMD_SHUFFLE && npos < 2)
        return usage_error("%s", npos == 0 ? "missing INPUT and OUTPUT" : "missing OUTPUT");
    if (cmd == CMD_SCATTER && npos < 2)
        return usage_error("%s", npos == 0 ? "scatter: missing INPUT and PILES.h5" : "scatter: missing PILES.h5");
    if (cmd == CMD_GATHER && npos != 2)
        return usage_error("%s", npos < 2 ? "gather: needs PILES.h5 and OUTPUT" : "gather: takes only PILES.h5 and OUTPUT");
    if (cmd != CMD_SHUFFLE && check)
        return usage_error("%s--check: run h5shuf verify on the gathered output", cmd_name);
    if (check && (opts.shards || opts.split || opts.head_set))
        return usage_error("%s", "--check verifies one whole output; it cannot be combined with --shards, --split "
                                 "or --head");
    if (opts.shards && opts.split)
        return usage_error("%s", "--shards and --split cannot be combined");

    catch_signals();
    int rc = 0;
    h5shuf_job *job = cmd == CMD_SCATTER  ? make_job(&opts, argv + optind, npos - 1, NULL, argv[argc - 1], &rc)
                      : cmd == CMD_GATHER ? make_job(&opts, NULL, 0, argv[argc - 1], argv[optind], &rc)
                                          : make_job(&opts, argv + optind, npos - 1, argv[argc - 1], NULL, &rc);
    if (!job)
        return rc;
    int st;
    double t0 = progress_now();
    h5shuf_plan plan;
    st = h5shuf_job_plan(job, &plan);
    if (st == H5SHUF_EINVAL) { /* a bad option value, found once the datasets are known */
        int rc = usage_error("%s", h5shuf_errmsg(job));
        h5shuf_job_free(job);
        return rc;
    }
    if (st == H5SHUF_OK && !json && (plan_only || verbose > 1))
        report_plan_text(plan_only ? stdout : stderr, job, &plan);

    /* The bar only on a terminal (or when asked), never with -q; summaries with the bar or -v. */
    int draw = verbose && (progress_when == 1 || (progress_when == 0 && isatty(STDERR_FILENO)));
    struct progress prog;
    progress_init(&prog, stderr, draw, verbose > 1 || draw, st == H5SHUF_OK ? plan.row_bytes : 0);
    int check_st = -1;
    if (st == H5SHUF_OK && !plan_only) {
        /* The callback gets the display through the job's options: set it on a job made for the run. */
        st = run_with_progress(job, &prog, cmd);
        progress_finish(&prog);
        if (st == H5SHUF_OK) /* the run's figures (restarts, splits, scratch bytes); keeps an error intact */
            h5shuf_job_plan(job, &plan);
        if (st == H5SHUF_OK && verbose > 1)
            fprintf(stderr, "h5shuf: %sdone: %" PRIu64 " rows, %" PRIu64 " piles, %" PRIu64 " restarts, %" PRIu64
                            " piles split, %" PRIu64 " %s bytes\n",
                    cmd_name, plan.rows, plan.piles, plan.restarts, plan.splits, plan.scratch_bytes,
                    cmd == CMD_SHUFFLE ? "scratch" : "pile file");
        if (st == H5SHUF_OK && check) {
            check_st = verify_files(argv + optind, argc - optind - 1, argv[argc - 1], opts.mem_limit_bytes, opts.threads,
                                    verbose);
        }
    }
    if (st == H5SHUF_ECANCELED && g_signal) {
        rc = 128 + g_signal;
        if (verbose)
            fprintf(stderr, "h5shuf: interrupted; scratch and partial output removed\n");
    } else if (st != H5SHUF_OK) {
        fprintf(stderr, "h5shuf: %s\n", h5shuf_errmsg(job));
        rc = 1;
    } else if (check_st > 0) {
        rc = 1;
    }
    /* The mixing report: with several inputs and -v (or --mixing-window), from the keys alone. */
    h5shuf_mixing mix[2];
    int have_mix = 0;
    if ((st == H5SHUF_OK || (plan_only && h5shuf_job_output_file(job, 0, NULL, NULL))) && argc - optind - 1 > 1 &&
        (verbose > 1 || mixing_window) && h5shuf_job_mixing(job, mixing_window, &mix[0], &mix[1]) == H5SHUF_OK) {
        have_mix = 1;
        if (!json && verbose)
            report_mixing_text(plan_only ? stdout : stderr, argv + optind, mix);
    }
    if (json)
        report_json(stdout, job, st == H5SHUF_OK || plan_only ? &plan : NULL, argv + optind, argc - optind - 1,
                    argv[argc - 1], plan_only ? NULL : &prog, progress_now() - t0, st, h5shuf_errmsg(job), check_st,
                    have_mix ? mix : NULL);
    h5shuf_job_free(job);
    return rc;
}
