/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * help.c - what --help and --version print.
 */
#include "help.h"

#include "h5shuf.h"

static void usage(FILE *to)
{
    fputs("Usage: h5shuf [OPTIONS] INPUT... OUTPUT\n"
          "       h5shuf scatter [OPTIONS] INPUT... PILES.h5\n"
          "       h5shuf gather [OPTIONS] PILES.h5 OUTPUT\n"
          "Shuffle the rows (axis 0) of HDF5 datasets larger than memory, reproducibly from a seed.\n"
          "\n"
          "  INPUT   FILE.h5[:/path[,/path...]][@W]  several inputs are concatenated along axis 0\n"
          "  OUTPUT  FILE.h5[:/path[,/path...]]  dataset paths default to the input paths\n"
          "\n"
          "  A FILE.h5 input without paths shuffles together the datasets of the one length of dim 0\n"
          "  that holds the file's data (its record dimension's, with dimension scales) and copies the\n"
          "  other objects unchanged; when the file leaves that in doubt, it stops and names the\n"
          "  candidates.  A weight @W takes floor(W) copies of each row and exactly round(frac(W) x n)\n"
          "  more, drawn from the seed: a.h5:/x@0.25 is an exact 25% sample, a.h5:/x@2.5 every row\n"
          "  twice and half of them three times.\n"
          "\n"
          "Options:\n"
          "  -s, --seed N            seed of the permutation, decimal or 0x hex (default: random,\n"
          "                          printed with -v,\n"
          "                          stored in the output as the attribute /h5shuf_seed)\n"
          "  -m, --memory SIZE       memory budget for buffers, K/M/G/T suffixes (default 1G)\n"
          "  -t, --tmpdir DIR        directory of the scratch file (default $TMPDIR, else the\n"
          "                          output's directory)\n"
          "      --on-oversize MODE  a pile over its bound: recurse (split it, default) or restart\n"
          "      --strategy S        auto (default; one pass, no scratch, when the rows fit -m),\n"
          "                          two-pass (piles on a scratch file: sequential reads) or direct\n"
          "                          (rows read in output order, no scratch: for rows of a MiB or\n"
          "                          more); the same output either way\n"
          "  -c, --compression SPEC  output filters: keep (default: the first input's), none, or\n"
          "                          gzip[:0-9] / zstd[:LEVEL] / lz4, with +shuffle and +fletcher32,\n"
          "                          e.g. zstd:3+shuffle (zstd is HDF5 filter 32015, lz4 32004)\n"
          "      --chunk-rows N      rows per output chunk (default: keep; else about 1 MiB)\n"
          "      --scratch-compression SPEC  filters of the scratch piles\n"
          "                          (default: none when the scratch fits half the free memory,\n"
          "                          else none while the disk keeps up with the writes and\n"
          "                          zstd:1+shuffle when it does not; a scatter's pile file\n"
          "                          zstd:1+shuffle)\n"
          "  -j, --threads N         threads that (de)compress chunks (default: the number of CPUs;\n"
          "                          the output is the same for every N)\n"
          "  -f FILTER, -l CHUNK=DIMS  h5repack's spellings, also accepted: -f SHUF, -f GZIP=4,\n"
          "                          -f UD=32015,0,1,3 (zstd level 3), -f FLET, -f NONE, -l CHUNK=64x256\n"
          "      --plan              print the plan (piles, memory, disk) and exit without writing\n"
          "                          (without -s its seed is drawn for the plan: it prints the -s\n"
          "                          that runs this plan)\n"
          "      --progress=WHEN     a live progress bar on stderr: auto (when it is a terminal),\n"
          "                          always, never\n"
          "      --json              print a machine-readable report of the run on stdout\n"
          "      --check             verify the output against the inputs before it is renamed into\n"
          "                          place: a failed check leaves nothing at OUTPUT\n"
          "      --drop-references   write null references where an attribute or a dataset's rows refer to\n"
          "                          an object the output does not hold (default: refuse), with a warning\n"
          "      --allow-lossy       keep an input filter that may be lossy (ZFP, SZ, ...; default:\n"
          "                          refuse), with a warning, recorded in h5shuf_lossy\n"
          "      --allow-external    read datasets whose rows HDF5 keeps in another file (external\n"
          "                          storage, a virtual dataset's sources; default: refuse), warning\n"
          "      --index PATH        also write dataset PATH (N,) uint64: the input row of each output\n"
          "                          row (rows numbered over all inputs); verify then checks the order\n"
          "      --source-index PATH  also write dataset PATH (N,) uint16 (uint32 past 65535 inputs):\n"
          "                          the input file (0-based, command-line order) of each output row\n"
          "                          (with weights: a compound of input, copy and the input's row)\n"
          "      --shards K          write K files OUT-00000-of-0000K.h5 ... (or replace {shard} and\n"
          "                          {shards} in OUTPUT's name); shard s holds output rows\n"
          "                          floor(s*N/K) .. floor((s+1)*N/K)-1\n"
          "      --split NAME=F,...  one file OUT-NAME.h5 per name (or replace {split}) holding\n"
          "                          consecutive ranges of the shuffle, e.g. train=0.9,val=0.1;\n"
          "                          split k ends at floor(N*(F_0+...+F_k)/sum F), exactly (F a\n"
          "                          decimal such as 0.1 or 1e-6, or a ratio such as 1/3)\n"
          "      --mix NAME=P,...    a mixture of domains: inputs given as NAME=INPUT, domain NAME\n"
          "                          exactly its proportion P of the output's rows, spread over its\n"
          "                          inputs by their rows (as weights @W; --plan and -v print them)\n"
          "      --rows N            the rows of a --mix output (default: the most the proportions\n"
          "                          allow without repeating a row)\n"
          "      --allow-repeat      let --mix repeat the rows of a domain that has too few\n"
          "      --stratify          with --shards or --split: every output file holds each --mix\n"
          "                          domain's (else each input's) share of its rows within one row\n"
          "  -n, --head N            write only the first N rows of the shuffle (one pass, keys of\n"
          "                          N rows in memory); the same seed and N pick the same rows\n"
          "      --mixing-window W   rows of the first and last window of the mixing report that -v\n"
          "                          prints with several inputs (default min(N, 10000))\n"
          "      --resume            continue the interrupted run of this same command (killed,\n"
          "                          cancelled, out of space, a disk's I/O error) from its last\n"
          "                          checkpoint; the output is the uninterrupted run's, byte for byte\n"
          "                          (-m and -j may differ)\n"
          "      --checkpoint SIZE[,SECONDS][,sync]  how much work a kill may cost at most: a checkpoint\n"
          "                          every SIZE of input or SECONDS (default 1G,60; state kept in\n"
          "                          h5shuf-resume-NAME-HASH-uidU in the scratch directory); sync: each\n"
          "                          synced to the disk (survives a machine's crash too); off: none\n"
          "  -f, --force             replace an existing output file\n"
          "  -q, --quiet             print nothing but errors and warnings\n"
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
          "  h5shuf verify [-m SIZE] [-j N] [-q] INPUT... OUTPUT\n"
          "                          check that OUTPUT holds a permutation of the inputs' rows, with\n"
          "                          datasets shuffled together still aligned (exit 0, else 1); a file\n"
          "                          of shards or splits is checked with the rest of its set (given\n"
          "                          after it, or found beside it), a --head output as the first rows\n"
          "                          of the seed's shuffle; the run's weights are read from OUTPUT\n"
          "\n"
          "Examples:\n"
          "  h5shuf train.h5 shuffled.h5\n"
          "  h5shuf -s 42 -m 256M in.h5:/x out.h5:/x\n"
          "  h5shuf a.h5:/x b.h5:/x c.h5:/x out.h5\n"
          "\n"
          "Options may stand before the subcommand as well as after it.  The output is the rows sorted by a\n"
          "per-row key from the seed, so the same seed and input give the same bytes for any memory budget.\n"
          "Exit status: 0 success, 1 failure, 2 usage error.\n",
          to);
}

int cli_help(FILE *to, enum cli_command cmd)
{
    if (cmd == CMD_VERIFY)
        fputs("Usage: h5shuf verify [-m SIZE] [-j N] [-q] INPUT... OUTPUT\n"
              "Check that OUTPUT holds a permutation of the rows of the INPUTs (same syntax as the shuffle),\n"
              "with datasets shuffled together still aligned.  Exit 0 when it does, 1 otherwise.\n"
              "OUTPUT may be one file of --shards or --split: the whole set is checked, its other files\n"
              "given before OUTPUT (e.g. h5shuf verify in.h5 out-*.h5) or found beside it by their names;\n"
              "a --head N output is checked as the first N rows of its seed's shuffle.  Weights (and\n"
              "--mix's) are taken from OUTPUT when the INPUTs are given without them.\n",
              to);
    else
        usage(to);
    return 0;
}

int cli_version(FILE *to)
{
#ifdef H5SHUF_HAVE_LZO
    const char *lzo = "";
#else
    const char *lzo = "; LZO (305) not built in: through an HDF5 plugin if one is installed";
#endif
    fprintf(to, "h5shuf %s (HDF5 %s%s, zstd %s%s)\n", h5shuf_version(), h5shuf_hdf5_version(),
            h5shuf_hdf5_threadsafe() ? " thread-safe" : " not thread-safe: separate jobs in one process take turns",
            h5shuf_zstd_version(), lzo);
    return 0;
}
