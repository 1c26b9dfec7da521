/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.h - the command line: the subcommand and every option, read from one static table
 * (options.c, after curl's tool_getparam.c), wherever on the line they stand.
 */
#ifndef H5SHUF_CLI_OPTIONS_H
#define H5SHUF_CLI_OPTIONS_H

#include <stdint.h>

#include "h5shuf.h"

enum { EXIT_USAGE = 2 };

/* What the command line asks for: a shuffle, one of its passes, or a check of an output. */
enum cli_command { CMD_SHUFFLE = 0, CMD_SCATTER, CMD_GATHER, CMD_VERIFY };

/* The test knobs (--debug-pile-bound, --debug-no-space-check), set on the job through h5shuf_debug.h:
 * they are no public option (h5shuf_options). */
struct cli_debug {
    uint64_t pile_bound_rows;
    int skip_space_check;
};

/* The options, parsed.  The library's strings point into argv or into the buffers here. */
struct cli_options {
    h5shuf_options lib;
    struct cli_debug debug;
    int verbose;             /* 0 with -q, 1 by default, 2 with -v */
    int plan_only, json;
    int progress_when;       /* --progress: 0 auto, 1 always, 2 never */
    uint64_t mixing_window;  /* --mixing-window, 0 when not given */
    char chunk_rows[32];     /* --chunk-rows N as a chunk shape */
    char repack_spec[96];    /* h5repack's -f filters as a --compression spec */
};

/* The name of a command as the tool prints it ("" for the shuffle). */
const char *cli_command_name(enum cli_command cmd);

/*
 * Read argv: the subcommand (the first argument that is no option and no option's value, when it is
 * "scatter", "gather" or "verify"; options may stand before it or after) and the options, which must be
 * ones the command takes.  On success returns -1, with *cmd set and the positional arguments (the
 * subcommand left out) in (*pos)[0 .. *npos), pointers into argv (which it reorders).  Otherwise it has
 * printed what it had to (--help, --version, or a usage error) and returns the exit status: 0 or
 * EXIT_USAGE.
 */
int cli_parse(int argc, char **argv, enum cli_command *cmd, struct cli_options *o, char ***pos, int *npos);

/* Print "h5shuf: " fmt (with arg) and "Try 'h5shuf --help' for more information." on stderr; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

#endif
