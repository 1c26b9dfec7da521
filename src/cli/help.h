/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * help.h - the tool's help texts and version line (help.c).
 */
#ifndef H5SHUF_CLI_HELP_H
#define H5SHUF_CLI_HELP_H

#include <stdio.h>

#include "options.h"

/* The usage of cmd (the shuffle's covers scatter and gather) on to; returns 0, the exit status. */
int cli_help(FILE *to, enum cli_command cmd);
/* "h5shuf VERSION (HDF5 ..., zstd ...)" on to; returns 0. */
int cli_version(FILE *to);

#endif
