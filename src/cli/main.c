/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - the h5shuf command-line tool, over the public API only (include/h5shuf.h).
 *
 * It reads the command line (options.c: one option table, the subcommand wherever the options leave
 * it) and hands it to the command (commands.c).  Errors are one line "h5shuf: FILE:/dataset: what is
 * wrong" on stderr; usage errors add "Try 'h5shuf --help'".  Exit status: 0 success, 1 failure, 2 usage,
 * 130/143 when interrupted by SIGINT/SIGTERM (interrupt.c).
 */
#include <stdio.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"

#if defined(__SANITIZE_ADDRESS__)
#define CLI_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_LSAN 1
#endif
#endif
#ifdef CLI_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* Exit 1 after a failed command without HDF5's own termination (its atexit handler): after an allocation
 * failed inside HDF5, its free lists may be corrupt, and HDF5 1.10.8 then aborts at exit ("double free or
 * corruption" in H5FL_garbage_coll, exit 134) or prints "HDF5: infinite loop closing library" and a list
 * of its packages under the one-line error.  Nothing is lost: the job closed every HDF5 object it opened
 * and removed its own files before the command returned, and stdio is flushed here.  Sanitizer builds
 * still check for leaks (what HDF5 holds is reachable from its globals, not leaked). */
static int exit_failed(void)
{
    fflush(NULL);
#ifdef CLI_LSAN
    __lsan_do_leak_check();
#endif
    _exit(1);
}

int main(int argc, char **argv)
{
    enum cli_command cmd;
    struct cli_options opts;
    char **pos;
    int npos;
    int rc = cli_parse(argc, argv, &cmd, &opts, &pos, &npos);
    if (rc >= 0)
        return rc;
    rc = cmd == CMD_VERIFY ? cmd_verify(&opts, pos, npos) : cmd_run(cmd, &opts, pos, npos);
    return rc == 1 ? exit_failed() : rc;
}
