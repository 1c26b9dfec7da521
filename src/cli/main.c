/*
 * main.c - the h5shuf command-line tool, over the public API only (include/h5shuf.h).
 *
 * It reads the command line (options.c: one option table, the subcommand wherever the options leave
 * it) and hands it to the command (commands.c).  Errors are one line "h5shuf: FILE:/dataset: what is
 * wrong" on stderr; usage errors add "Try 'h5shuf --help'".  Exit status: 0 success, 1 failure, 2 usage,
 * 130/143 when interrupted by SIGINT/SIGTERM (interrupt.c).
 */
#include "commands.h"
#include "options.h"

int main(int argc, char **argv)
{
    enum cli_command cmd;
    struct cli_options opts;
    char **pos;
    int npos;
    int rc = cli_parse(argc, argv, &cmd, &opts, &pos, &npos);
    if (rc >= 0)
        return rc;
    return cmd == CMD_VERIFY ? cmd_verify(&opts, pos, npos) : cmd_run(cmd, &opts, pos, npos);
}
