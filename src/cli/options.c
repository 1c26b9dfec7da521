/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.c - the command line, read from one static table (curl's tool_getparam.c pattern): each option
 * once, with the commands it applies to; getopt_long's tables are made from it, and one switch applies a
 * value.  The subcommand is the first word that is neither an option nor an option's value, so options
 * may stand before it ("h5shuf -q scatter ...") as well as after it.
 *
 * Values are checked here as far as they can be without the files (numbers, sizes, keywords); the
 * library checks the rest when it plans the job.  h5repack's spellings (-f FILTER, -l CHUNK=...) are
 * accepted beside ours, -f alone being --force.
 */
#define _POSIX_C_SOURCE 200809L
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"

/* The commands an option applies to. */
#define IN_SHUFFLE (1u << CMD_SHUFFLE)
#define IN_SCATTER (1u << CMD_SCATTER)
#define IN_GATHER (1u << CMD_GATHER)
#define IN_VERIFY (1u << CMD_VERIFY)
#define IN_RUNS (IN_SHUFFLE | IN_SCATTER | IN_GATHER)
#define IN_ALL (IN_RUNS | IN_VERIFY)

/* Options without a short letter. */
enum {
    OPT_ON_OVERSIZE = 256, OPT_PLAN, OPT_DEBUG_PILE_BOUND, OPT_CHUNK_ROWS, OPT_SCRATCH, OPT_FILTER, OPT_PROGRESS,
    OPT_JSON, OPT_CHECK, OPT_DEBUG_NO_SPACE_CHECK, OPT_INDEX, OPT_SOURCE_INDEX, OPT_SHARDS, OPT_SPLIT,
    OPT_MIXING_WINDOW, OPT_DROP_REFERENCES, OPT_ALLOW_LOSSY, OPT_ALLOW_EXTERNAL, OPT_STRATEGY, OPT_RESUME,
    OPT_CHECKPOINT, OPT_MIX, OPT_ROWS, OPT_ALLOW_REPEAT, OPT_STRATIFY
};

struct cli_opt {
    const char *name; /* the long name */
    int key;          /* the short letter, or OPT_* */
    int has_arg;      /* no_argument or required_argument */
    unsigned cmds;    /* IN_* */
};

static const struct cli_opt table[] = {
    {"seed", 's', required_argument, IN_RUNS},
    {"memory", 'm', required_argument, IN_ALL},
    {"tmpdir", 't', required_argument, IN_RUNS},
    {"on-oversize", OPT_ON_OVERSIZE, required_argument, IN_RUNS},
    {"strategy", OPT_STRATEGY, required_argument, IN_SHUFFLE},
    {"plan", OPT_PLAN, no_argument, IN_RUNS},
    {"compression", 'c', required_argument, IN_RUNS},
    {"chunk-rows", OPT_CHUNK_ROWS, required_argument, IN_RUNS},
    {"scratch-compression", OPT_SCRATCH, required_argument, IN_RUNS},
    {"threads", 'j', required_argument, IN_ALL},
    {"filter", OPT_FILTER, required_argument, IN_RUNS},
    {"layout", 'l', required_argument, IN_RUNS},
    {"progress", OPT_PROGRESS, required_argument, IN_RUNS},
    {"json", OPT_JSON, no_argument, IN_RUNS},
    {"check", OPT_CHECK, no_argument, IN_RUNS},
    {"drop-references", OPT_DROP_REFERENCES, no_argument, IN_RUNS},
    {"allow-lossy", OPT_ALLOW_LOSSY, no_argument, IN_RUNS},
    {"allow-external", OPT_ALLOW_EXTERNAL, no_argument, IN_SHUFFLE | IN_SCATTER | IN_VERIFY},
    {"index", OPT_INDEX, required_argument, IN_RUNS},
    {"source-index", OPT_SOURCE_INDEX, required_argument, IN_RUNS},
    {"shards", OPT_SHARDS, required_argument, IN_RUNS},
    {"split", OPT_SPLIT, required_argument, IN_RUNS},
    {"mix", OPT_MIX, required_argument, IN_SHUFFLE | IN_SCATTER},
    {"rows", OPT_ROWS, required_argument, IN_SHUFFLE | IN_SCATTER},
    {"allow-repeat", OPT_ALLOW_REPEAT, no_argument, IN_SHUFFLE | IN_SCATTER},
    {"stratify", OPT_STRATIFY, no_argument, IN_SHUFFLE},
    {"head", 'n', required_argument, IN_RUNS},
    {"mixing-window", OPT_MIXING_WINDOW, required_argument, IN_RUNS},
    {"resume", OPT_RESUME, no_argument, IN_RUNS},
    {"checkpoint", OPT_CHECKPOINT, required_argument, IN_RUNS},
    {"force", 'f', no_argument, IN_RUNS},
    {"quiet", 'q', no_argument, IN_ALL},
    {"verbose", 'v', no_argument, IN_ALL},
    {"help", 'h', no_argument, IN_ALL},
    {"version", 'V', no_argument, IN_ALL},
    /* For tests: lower every pile's oversize bound to force recursion or restarts on small data. */
    {"debug-pile-bound", OPT_DEBUG_PILE_BOUND, required_argument, IN_RUNS},
    {"debug-no-space-check", OPT_DEBUG_NO_SPACE_CHECK, no_argument, IN_RUNS},
};
#define NOPTS (sizeof table / sizeof *table)

/*-*************************************
*  Errors and numbers
***************************************/

const char *cli_command_name(enum cli_command cmd)
{
    static const char *const names[] = {"", "scatter", "gather", "verify"};
    return names[cmd];
}

int cli_usage_error(const char *fmt, const char *arg)
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
        return cli_usage_error("unknown option, or one that takes no value: '%s'", arg);
    return cli_usage_error("unknown option '%s'", arg);
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

/*-*************************************
*  h5repack's filter words
***************************************/

/*
 * h5repack's filter spellings, accumulated into a --compression spec: SHUF, FLET, NONE, GZIP=L and
 * UD=ID,FLAGS,N,V... for ids 1 (deflate), 2 (shuffle), 3 (fletcher32), 32015 (zstd) and 32004 (lz4).
 */
struct repack_filters {
    int given, none, shuffle, fletcher32;
    char codec[32];
};

/* Add one -f FILTER; 0, or -1 for what we do not support. */
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
    if (v[0] == 32015)
        snprintf(rf->codec, sizeof rf->codec, "zstd:%d", v[2] ? (int)(unsigned)v[3] : 3);
    else if (v[0] == 1)
        snprintf(rf->codec, sizeof rf->codec, "gzip:%lu", v[2] ? v[3] : 4);
    else if (v[0] == 32004)
        snprintf(rf->codec, sizeof rf->codec, "lz4");
    else if (v[0] == 2)
        rf->shuffle = 1;
    else if (v[0] == 3)
        rf->fletcher32 = 1;
    else
        return -1;
    return 0;
}

/* "-f" followed by an h5repack filter word is h5repack's -f FILTER, not our --force: rewrite it as
 * --filter before getopt sees it. */
static void rewrite_repack_filters(int argc, char **argv)
{
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
}

/*-*************************************
*  Finding options and the subcommand
***************************************/

static const struct cli_opt *by_key(int key)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (table[i].key == key)
            return &table[i];
    return NULL;
}

/* Does option word a (argv[i], starting with '-') take the next word as its value? */
static int takes_next(const char *a)
{
    if (a[1] == '-') {
        if (strchr(a, '='))
            return 0;
        for (size_t i = 0; i < NOPTS; i++)
            if (strcmp(table[i].name, a + 2) == 0)
                return table[i].has_arg == required_argument;
        return 0;
    }
    for (const char *c = a + 1; *c; c++) {
        const struct cli_opt *o = by_key((unsigned char)*c);
        if (o && o->has_arg == required_argument)
            return c[1] == '\0'; /* "-sVALUE" holds its value; "-s VALUE" takes the next word */
    }
    return 0;
}

/* Find the subcommand word and take it out of argv (shifting the rest down); *argc shrinks by one. */
static enum cli_command take_command(int *argc, char **argv)
{
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return CMD_SHUFFLE;
        if (a[0] == '-' && a[1]) {
            i += takes_next(a);
            continue;
        }
        for (enum cli_command c = CMD_SCATTER; c <= CMD_VERIFY; c++)
            if (strcmp(a, cli_command_name(c)) == 0) {
                memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof *argv); /* argv[argc] is NULL */
                --*argc;
                return c;
            }
        return CMD_SHUFFLE;
    }
    return CMD_SHUFFLE;
}

/* An option the command does not take: a usage error naming it as it is spelled long. */
static int not_here(const struct cli_opt *opt, enum cli_command cmd)
{
    char name[64];
    snprintf(name, sizeof name, "--%s", opt->name);
    if (cmd == CMD_VERIFY)
        return cli_usage_error("verify: option '%s' is not one of verify's (-m, -j, -q, -v)", name);
    return cli_usage_error("option '%s' does not apply here", name);
}

/*-*************************************
*  Applying options
***************************************/

/* --checkpoint's value into lib: SIZE[,SECONDS][,sync] or off.  Returns -1, or the exit status. */
static int checkpoint_option(const char *arg, h5shuf_options *lib)
{
    /* SIZE[,SECONDS] or off */
    if (strcmp(arg, "off") == 0) {
        lib->checkpoint_bytes = 0;
        return -1;
    }
    char size[64], spec[128];
    size_t sl = strlen(arg);
    if (sl >= sizeof spec)
        return cli_usage_error("invalid --checkpoint '%s' (SIZE[,SECONDS][,sync], e.g. 1G,60, or off)", arg);
    memcpy(spec, arg, sl + 1);
    if (sl > 5 && strcmp(spec + sl - 5, ",sync") == 0) { /* synced checkpoints: they survive a machine's crash */
        lib->checkpoint_sync = 1;
        spec[sl - 5] = '\0';
    }
    const char *comma = strchr(spec, ',');
    size_t len = comma ? (size_t)(comma - spec) : strlen(spec);
    char *end = NULL;
    double secs = comma ? strtod(comma + 1, &end) : lib->checkpoint_seconds;
    if (len == 0 || len >= sizeof size || (comma && (end == comma + 1 || *end || secs < 0)))
        return cli_usage_error("invalid --checkpoint '%s' (SIZE[,SECONDS][,sync], e.g. 1G,60, or off)", arg);
    memcpy(size, spec, len);
    size[len] = '\0';
    if (h5shuf_parse_size(size, &lib->checkpoint_bytes) != H5SHUF_OK || lib->checkpoint_bytes == 0)
        return cli_usage_error("invalid --checkpoint '%s' (SIZE[,SECONDS][,sync], e.g. 1G,60, or off)", arg);
    lib->checkpoint_seconds = secs;
    return -1;
}

/* Apply option key with value arg (NULL when it takes none).  Returns -1, or the exit status. */
static int apply(int key, const char *arg, struct cli_options *o, struct repack_filters *rf)
{
    h5shuf_options *lib = &o->lib;
    uint64_t n;
    switch (key) {
    case 's':
        if (parse_u64(arg, &lib->seed) != 0)
            return cli_usage_error("invalid seed '%s' (an integer from 0 to 2^64-1)", arg);
        lib->seed_set = 1;
        break;
    case 'm':
        if (h5shuf_parse_size(arg, &lib->mem_limit_bytes) != H5SHUF_OK || lib->mem_limit_bytes == 0)
            return cli_usage_error("invalid memory size '%s' (e.g. 512M, 2G)", arg);
        break;
    case 't': lib->tmpdir = arg; break;
    case 'j':
        if (parse_u64(arg, &n) != 0 || n == 0 || n > 1024)
            return cli_usage_error("invalid --threads '%s' (1 to 1024)", arg);
        lib->threads = (unsigned)n;
        break;
    case OPT_ON_OVERSIZE:
        if (strcmp(arg, "recurse") == 0)
            lib->on_oversize = H5SHUF_OVERSIZE_RECURSE;
        else if (strcmp(arg, "restart") == 0)
            lib->on_oversize = H5SHUF_OVERSIZE_RESTART;
        else
            return cli_usage_error("invalid --on-oversize '%s' (recurse or restart)", arg);
        break;
    case OPT_STRATEGY:
        if (strcmp(arg, "auto") == 0)
            lib->strategy = H5SHUF_STRATEGY_AUTO;
        else if (strcmp(arg, "two-pass") == 0)
            lib->strategy = H5SHUF_STRATEGY_TWO_PASS;
        else if (strcmp(arg, "direct") == 0)
            lib->strategy = H5SHUF_STRATEGY_DIRECT;
        else
            return cli_usage_error("invalid --strategy '%s' (auto, two-pass or direct)", arg);
        break;
    case OPT_PLAN: o->plan_only = 1; break;
    case OPT_JSON: o->json = 1; break;
    case OPT_DEBUG_NO_SPACE_CHECK: o->debug.skip_space_check = 1; break;
    case OPT_CHECK: lib->check = 1; break;
    case OPT_DROP_REFERENCES: lib->drop_references = 1; break;
    case OPT_ALLOW_LOSSY: lib->allow_lossy = 1; break;
    case OPT_ALLOW_EXTERNAL: lib->allow_external = 1; break;
    case OPT_RESUME: lib->resume = 1; break;
    case OPT_CHECKPOINT: return checkpoint_option(arg, lib);
    case OPT_INDEX: lib->index_path = arg; break;
    case OPT_SOURCE_INDEX: lib->source_index_path = arg; break;
    case OPT_SHARDS:
        if (parse_u64(arg, &lib->shards) != 0 || lib->shards == 0 || lib->shards > 1000000)
            return cli_usage_error("invalid --shards '%s' (1 to 1000000)", arg);
        break;
    case OPT_SPLIT: lib->split = arg; break;
    case OPT_MIX: lib->mix = arg; break;
    case OPT_ROWS:
        if (parse_u64(arg, &lib->mix_rows) != 0)
            return cli_usage_error("invalid --rows '%s' (a number of rows)", arg);
        lib->mix_rows_set = 1;
        break;
    case OPT_ALLOW_REPEAT: lib->allow_repeat = 1; break;
    case OPT_STRATIFY: lib->stratify = 1; break;
    case 'n':
        if (parse_u64(arg, &lib->head_rows) != 0)
            return cli_usage_error("invalid --head '%s' (a number of rows)", arg);
        lib->head_set = 1;
        break;
    case OPT_MIXING_WINDOW:
        if (parse_u64(arg, &o->mixing_window) != 0 || o->mixing_window == 0)
            return cli_usage_error("invalid --mixing-window '%s' (a number of rows, at least 1)", arg);
        break;
    case OPT_PROGRESS:
        if (strcmp(arg, "auto") == 0)
            o->progress_when = 0;
        else if (strcmp(arg, "always") == 0)
            o->progress_when = 1;
        else if (strcmp(arg, "never") == 0)
            o->progress_when = 2;
        else
            return cli_usage_error("invalid --progress '%s' (auto, always or never)", arg);
        break;
    case 'c': lib->compression = arg; break;
    case OPT_SCRATCH: lib->scratch_compression = arg; break;
    case OPT_CHUNK_ROWS:
        if (parse_u64(arg, &n) != 0 || n == 0 || n > UINT32_MAX)
            return cli_usage_error("invalid --chunk-rows '%s' (1 to 2^32-1)", arg);
        snprintf(o->chunk_rows, sizeof o->chunk_rows, "%" PRIu64, n);
        lib->chunk_shape = o->chunk_rows;
        break;
    case 'l':
        if (strncmp(arg, "CHUNK=", 6) != 0 || !arg[6])
            return cli_usage_error("unsupported layout '%s' (only h5repack's CHUNK=DIMxDIM...)", arg);
        lib->chunk_shape = arg + 6;
        break;
    case OPT_FILTER:
        if (repack_filter(arg, rf) != 0)
            return cli_usage_error("unsupported filter '%s' (SHUF, FLET, NONE, GZIP=0-9, UD=32015,0,1,LEVEL or "
                                   "UD=1|2|3,...)",
                                   arg);
        rf->given = 1;
        break;
    case OPT_DEBUG_PILE_BOUND:
        if (parse_u64(arg, &o->debug.pile_bound_rows) != 0 || o->debug.pile_bound_rows == 0)
            return cli_usage_error("invalid --debug-pile-bound '%s'", arg);
        break;
    case 'f': lib->force = 1; break;
    case 'q': o->verbose = 0; break;
    case 'v': o->verbose = 2; break;
    }
    return -1;
}

/* h5repack's -f filters become the --compression spec (they and -c exclude each other). */
static int repack_spec(const struct repack_filters *rf, struct cli_options *o)
{
    if (!rf->given)
        return -1;
    if (o->lib.compression)
        return cli_usage_error("%s", "give either -c or h5repack's -f filters, not both");
    if (rf->none && (rf->shuffle || rf->fletcher32 || rf->codec[0]))
        return cli_usage_error("%s", "-f NONE cannot be combined with other filters");
    snprintf(o->repack_spec, sizeof o->repack_spec, "%s%s%s%s%s", rf->none ? "none" : rf->codec,
             rf->shuffle && rf->codec[0] ? "+" : "", rf->shuffle ? "shuffle" : "",
             rf->fletcher32 && (rf->codec[0] || rf->shuffle) ? "+" : "", rf->fletcher32 ? "fletcher32" : "");
    o->lib.compression = o->repack_spec;
    return -1;
}

/*-*************************************
*  The command line parsed
***************************************/

int cli_parse(int argc, char **argv, enum cli_command *cmd, struct cli_options *o, char ***pos, int *npos)
{
    struct option longopts[NOPTS + 1];
    char shortopts[2 * NOPTS + 2] = ":";
    size_t ns = 1;
    for (size_t i = 0; i < NOPTS; i++) {
        longopts[i] = (struct option){table[i].name, table[i].has_arg, NULL, table[i].key};
        if (table[i].key < 128) {
            shortopts[ns++] = (char)table[i].key;
            if (table[i].has_arg == required_argument)
                shortopts[ns++] = ':';
        }
    }
    shortopts[ns] = '\0';
    longopts[NOPTS] = (struct option){NULL, 0, NULL, 0};

    memset(o, 0, sizeof *o);
    h5shuf_options_init(&o->lib);
    o->verbose = 1;
    struct repack_filters rf = {0};
    rewrite_repack_filters(argc, argv);
    *cmd = take_command(&argc, argv);
    int c, rc = -1;
    opterr = 0;
    while (rc < 0 && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const struct cli_opt *opt = c == '?' || c == ':' ? NULL : by_key(c);
        if (c == ':')
            rc = cli_usage_error("option '%s' needs a value", argv[optind - 1]);
        else if (!opt)
            rc = bad_option(argv[optind - 1]);
        else if (!(opt->cmds & (1u << *cmd)))
            rc = not_here(opt, *cmd);
        else if (c == 'h' || c == 'V')
            rc = c == 'h' ? cli_help(stdout, *cmd) : cli_version(stdout);
        else
            rc = apply(c, optarg, o, &rf);
    }
    if (rc < 0)
        rc = repack_spec(&rf, o);
    *pos = argv + optind;
    *npos = argc - optind;
    return rc;
}
