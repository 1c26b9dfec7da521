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

/* h5shuf verify OPTIONS INPUT... OUTPUT. */
int cmd_verify(const struct cli_options *o, char **pos, int npos);

#endif
