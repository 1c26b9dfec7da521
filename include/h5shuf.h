/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h5shuf.h - the public API of libh5shuf.
 *
 * h5shuf globally shuffles the rows (indices along axis 0) of HDF5 datasets that are far larger than
 * memory, with the 2-pass "piles" algorithm: pass 1 scatters every row into one of M pile datasets in a
 * scratch HDF5 file, pass 2 loads each pile, sorts it in memory and appends it to the output file; rows of
 * a MiB or more are copied straight into output order instead (the direct path, h5shuf_strategy).
 *
 * The permutation contract (docs/algorithm.md): every input row i = 0 .. N-1 (numbered globally over all
 * inputs in the order they were added) gets the 64-bit key K(seed, i) = h5shuf_key(seed, i), and the
 * output is the rows sorted by (key, i).  Nothing else decides the order, so for a given seed and input
 * the output bytes never depend on the memory budget, the pile count, recursion or restarts.
 *
 * Conventions: every function returning int returns an h5shuf_status (H5SHUF_OK = 0 on success).  The
 * library never prints and never exits; on failure h5shuf_errmsg(job) holds a one-line message naming
 * the file, the dataset and the cause.  A job is not safe to use from two threads at once; separate jobs
 * share no state of their own (a thread-safe HDF5 serialises calls behind its global lock; with one that
 * is not, the library's calls of separate jobs take turns: h5shuf_hdf5_threadsafe).
 *
 * The ABI.  A program built with this header runs with this library and every later one of the same SONAME,
 * libh5shuf.so.1.  The structs a release may extend (h5shuf_options, h5shuf_plan, h5shuf_mixing,
 * h5shuf_mixing_windows) begin with struct_size: the sizeof of the struct in the header the program was
 * built with, set by the struct's init macro (h5shuf_options_init, h5shuf_plan_init, h5shuf_mixing_init,
 * h5shuf_mixing_windows_init), never by hand.  A release appends fields only, at the end, and a struct
 * ends without padding (the library checks it when it is compiled), so a program's struct_size ends at a
 * field of its own header: the library reads options only as far as struct_size (the fields past it keep
 * their defaults) and writes a plan or a mixing report only as far as struct_size (never past it).  A
 * struct larger than the library's (a program built with a newer header than the library it runs with)
 * is read as far as the library knows, refused when a byte past that is not zero (an option this library
 * cannot honour), and filled as far as the library knows, its struct_size then lowered to say how far.
 * Why this and not a new SONAME for every change: a release that adds an option (most of them) would
 * otherwise make every program be rebuilt, and a SONAME gives no defaults for what a program never set.
 * The structs of the first release, 0.1.0 (SONAME libh5shuf.so.0, tests/abi/h5shuf-0.1.0.h.gz), have no
 * struct_size, so no library can tell them from today's: that change took the SONAME to libh5shuf.so.1,
 * and a program built with 0.1.0 does not load this library (tests/abi.sh checks both).  Functions may be
 * added; none is removed or changes its parameters without a new SONAME.
 */
#ifndef H5SHUF_H
#define H5SHUF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define H5SHUF_VERSION_MAJOR 0
#define H5SHUF_VERSION_MINOR 1
#define H5SHUF_VERSION_PATCH 0
#define H5SHUF_VERSION_STRING "0.1.0"
/* The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100), for the preprocessor
 * (zstd.h's ZSTD_VERSION_NUMBER); h5shuf_version_number() is the library's, so a program can compare the
 * header it was built with and the library it runs with. */
#define H5SHUF_VERSION_NUMBER (H5SHUF_VERSION_MAJOR * 10000 + H5SHUF_VERSION_MINOR * 100 + H5SHUF_VERSION_PATCH)
/* Nonzero when this header is version x.y.z or later (curlver.h's CURL_AT_LEAST_VERSION):
 * #if H5SHUF_AT_LEAST_VERSION(0, 2, 0) ... #endif. */
#define H5SHUF_AT_LEAST_VERSION(x, y, z) (H5SHUF_VERSION_NUMBER >= ((x) * 10000 + (y) * 100 + (z)))

#if defined(H5SHUF_STATIC_DEFINE)
#define H5SHUF_API
#elif defined(H5SHUF_BUILDING)
#define H5SHUF_API __attribute__((visibility("default")))
#else
#define H5SHUF_API
#endif

/* Status codes.  The numbers are stable: new codes are only ever appended. */
#define H5SHUF_STATUS_LIST(X)                                                        \
    X(H5SHUF_OK, 0, "success")                                                       \
    X(H5SHUF_EINVAL, 1, "invalid argument")                                          \
    X(H5SHUF_ENOMEM, 2, "out of memory")                                             \
    X(H5SHUF_ENOENT, 3, "no such file or dataset")                                   \
    X(H5SHUF_ENOTHDF5, 4, "not an HDF5 file")                                        \
    X(H5SHUF_EUNSUPPORTED, 5, "unsupported dataset")                                 \
    X(H5SHUF_EMISMATCH, 6, "inputs do not match")                                    \
    X(H5SHUF_EEXIST, 7, "output exists")                                             \
    X(H5SHUF_EAMBIGUOUS, 8, "ambiguous datasets")                                    \
    X(H5SHUF_EBUDGET, 9, "memory budget too small")                                  \
    X(H5SHUF_EIO, 10, "I/O error")                                                   \
    X(H5SHUF_EHDF5, 11, "HDF5 library error")                                        \
    X(H5SHUF_ECANCELED, 12, "canceled")                                              \
    X(H5SHUF_ESAMEFILE, 13, "output is an input")                                    \
    X(H5SHUF_EINTERNAL, 14, "internal error")                                       \
    X(H5SHUF_ENOSPC, 15, "not enough disk space")

typedef enum h5shuf_status {
#define H5SHUF_ENUM_(name, value, text) name = value,
    H5SHUF_STATUS_LIST(H5SHUF_ENUM_)
#undef H5SHUF_ENUM_
} h5shuf_status;

/* What to do when a pile exceeds its bound s + 6*sqrt(s) rows after pass 1 (docs/design.md section 3). */
typedef enum h5shuf_oversize {
    H5SHUF_OVERSIZE_RECURSE = 0, /* split that pile's key range into sub-piles, on disk (default) */
    H5SHUF_OVERSIZE_RESTART = 1  /* redo pass 1 with more piles */
} h5shuf_oversize;

/* How the rows reach output order: AUTO is DIRECT for rows of 1 MiB or more read alone (chunks of one row)
 * or when only it fits the budget, else TWO_PASS (piles on a scratch file, sequential reads); DIRECT reads
 * rows in output order straight from the inputs, no scratch (the one-shot shuffle only).  Same bytes. */
typedef enum h5shuf_strategy { H5SHUF_STRATEGY_AUTO, H5SHUF_STRATEGY_TWO_PASS, H5SHUF_STRATEGY_DIRECT } h5shuf_strategy;

/* The phases reported to the progress callback. */
typedef enum h5shuf_phase {
    H5SHUF_PHASE_SCATTER = 1, /* pass 1: rows read from the inputs into piles */
    H5SHUF_PHASE_SPLIT = 2,   /* oversize recursion: rows re-scattered into sub-piles */
    H5SHUF_PHASE_GATHER = 3,  /* pass 2: rows sorted and written to the output */
    H5SHUF_PHASE_CREATE = 4,  /* before pass 1: each output file and the scratch file named (rows_done: files
                               * so far, of rows_total), before HDF5 writes to it: its temporary name is
                               * known (h5shuf_job_temp_file), e.g. for a handler of fatal signals */
    H5SHUF_PHASE_SELECT = 5,  /* the keys of all N rows scanned, no data read: --head's last row (in
                               * h5shuf_job_plan) and the mixing report's windows (h5shuf_job_mixing) */
    H5SHUF_PHASE_VERIFY = 6   /* h5shuf_verify or --check: rows hashed, the inputs' then the output's
                               * (rows_total: N + the output's rows, 2 N but for a head) */
} h5shuf_phase;

/*
 * Progress callback: called from the thread running h5shuf_run() after every block of work (a slab of
 * pass 1 or of a pile being split, a band of output rows in pass 2: a few MiB each; at most 2^20 rows of
 * a scan over all rows, so a cancel is seen within about 0.1 s), with the rows done so far of the phase's
 * total.  Also from h5shuf_job_plan, h5shuf_job_mixing and h5shuf_verify, which can cancel the same way.
 * Return 0 to go on; any other value cancels the run, which then cleans up and returns H5SHUF_ECANCELED
 * (this is how the CLI stops on SIGINT/SIGTERM).
 */
typedef int (*h5shuf_progress_fn)(void *user, h5shuf_phase phase, uint64_t rows_done, uint64_t rows_total);

/* Options of a job.  Initialise with h5shuf_options_init(); h5shuf_job_create() copies it. */
typedef struct h5shuf_options {
    size_t struct_size;       /* sizeof(h5shuf_options) of the program's header: set by h5shuf_options_init */
    uint64_t seed;            /* the permutation's seed; used when seed_set != 0 */
    int seed_set;             /* 0: draw a random seed from the OS (getrandom) */
    uint64_t mem_limit_bytes; /* memory budget for buffers of both passes, bytes (default 1 GiB) */
    const char *tmpdir;       /* directory of the scratch file; NULL: $TMPDIR, else the output's dir */
    h5shuf_oversize on_oversize; /* default H5SHUF_OVERSIZE_RECURSE */
    int force;                /* nonzero: replace an existing output file */
    h5shuf_progress_fn progress; /* may be NULL */
    void *progress_user;
    /* Filters of the output datasets: NULL or "keep" (the first input's), "none", or '+'-joined parts:
     * one codec "gzip[:LEVEL]" (deflate, 0-9, default 4) or "zstd[:LEVEL]" (filter 32015, zstd's levels,
     * default 3), "shuffle" (byte shuffle, applied first), "fletcher32" (checksum, applied last).
     * E.g. "zstd:3+shuffle".  Invalid specs make h5shuf_job_plan fail with H5SHUF_EINVAL. */
    const char *compression;
    /* Chunk shape of the output datasets: NULL (the first input's; an unchunked input that gets filters
     * is chunked in about 1 MiB of rows), "ROWS" (rows per chunk, other chunk dims kept or full), or the
     * whole shape "D0xD1x..." (rank must match every dataset's).  Copied by h5shuf_job_create. */
    const char *chunk_shape;
    /* When not NULL: the path of a dataset (N,) uint64 written in the output, index[r] = the global input row
     * (0 .. N-1 over all inputs in order) that output row r came from; its path is stored in the root
     * attribute h5shuf_index, and h5shuf_verify then also checks that the order is exactly the seed's. */
    const char *index_path;
    /* Filters of the scratch piles, same syntax as compression ("keep" excluded); NULL: "none" when the
     * scratch (N rows + 8 bytes each) takes at most half of the memory available (it stays in the page
     * cache, where compressing costs only time; the rows' 8-byte ids are still packed with zstd-1 +
     * shuffle), else "zstd:1+shuffle" (2.45x smaller on float32).  The ids get shuffle + the spec's codec
     * at level 1, or nothing for "none". */
    const char *scratch_compression;
    /* Threads that (de)compress chunks, the calling thread included; 0: the number of online CPUs.  Only
     * pipelines of shuffle, deflate, zstd, lzf, lzo, bitshuffle and fletcher32 on chunks of whole rows run
     * in parallel (others go through HDF5, on one core).  The output bytes are the same for every value. */
    unsigned threads;
    /* When not NULL: the path of a dataset (N,) in the output, source_index[r] = the input (0-based, in the
     * order added) that output row r came from; uint16 when there are at most 65535 inputs, else uint32.
     * Allowed with one input too (all zeros), so scripts need not special-case it.  With weights (an input
     * "SPEC@W" other than @1) a compound {input, copy (uint16: which copy of its input row, the sample
     * last), row (uint64: the row of that input)} instead.  Root attribute h5shuf_source_index holds its
     * path. */
    const char *source_index_path;
    /* Output shards: 0 writes one output file; K >= 1 writes K files, named from the output's file name
     * (h5shuf_job_output_file).  Shard s holds output rows [floor(s*R/K), floor((s+1)*R/K)) of the R output
     * rows, every dataset (and the index) split identically; each shard is a complete file (datasets,
     * attributes, copied objects, provenance) with root attributes h5shuf_shard, h5shuf_shards and
     * h5shuf_row_range ([first, end) in the whole output).  At most 1,000,000 shards. */
    uint64_t shards;
    /* Splits: NULL, or "NAME=FRACTION[,NAME=FRACTION...]" (e.g. "train=0.9,val=0.1"): one output file per
     * name, holding consecutive ranges of the output order.  A fraction is an exact rational: a decimal
     * ("0.1", "1e-6") or a ratio ("1/3"), at most 18 significant digits (numerator and denominator at
     * most 10^18 in lowest terms, their denominators' least common multiple too).  Fractions are positive
     * and must sum to 1 within 1e-6 (checked exactly); they are normalised, and split k holds rows
     * [b_k, b_{k+1}) with b_k = floor(R * (f_0 + ... + f_{k-1}) / (f_0 + ... + f_{n-1})) computed exactly
     * (0.9/0.1 of 200000 rows: 180000/20000), b_n = R.  Names use letters, digits, '_', '-' and '.', and
     * are unique.  Excludes shards (H5SHUF_EINVAL). */
    const char *split;
    /* A head: when head_set, write only the first head_rows rows of the shuffle (all of them when there are
     * fewer): the head_rows smallest (key, i), in the same order as the full output's first rows.  The
     * selection comes from the keys alone, before any data is read (16 bytes a selected row, within
     * mem_limit_bytes); then one pass over the inputs scatters only those rows.  Shards and splits then
     * divide the head. */
    uint64_t head_rows;
    int head_set;
    /* References in the output's attributes and copied datasets point at the output's objects.  One to an
     * object the output does not hold (dataset mode: neither named nor a scale of a named dataset), or a
     * region of a shuffled dataset, fails h5shuf_job_plan with H5SHUF_EUNSUPPORTED naming the attribute
     * and the target; nonzero: written null instead, one warning per attribute (h5shuf_job_warning). */
    int drop_references;
    /* "keep" re-encodes the shuffled rows through the input's filters.  One that may be lossy (ZFP, SZ,
     * SZ3, fpzip, JPEG, SPERR, BitGroom...: docs/h5shuf.1) fails h5shuf_job_plan with H5SHUF_EUNSUPPORTED;
     * nonzero: allowed, with a warning, and recorded in the output's root attribute h5shuf_lossy. */
    int allow_lossy;
    /* Nonzero: h5shuf_run verifies the output against the inputs (as h5shuf_verify does) before it is moved
     * into place; a mismatch fails the run with H5SHUF_EMISMATCH and leaves nothing at the output's name.
     * One whole output only (not with shards, splits or a head: H5SHUF_EINVAL). */
    int check;
    h5shuf_strategy strategy; /* default H5SHUF_STRATEGY_AUTO; the same output bytes either way */
    /* A dataset whose rows HDF5 keeps in another file (external raw storage, H5Pset_external; a virtual
     * dataset with a source in another file) makes h5shuf read a file the input names: whoever writes the
     * input chooses it, so a file the runner can read would reach an output others can read.  Such a
     * dataset, shuffled or copied, fails h5shuf_job_plan (and h5shuf_verify) with H5SHUF_EUNSUPPORTED
     * naming it and the file; nonzero: read (a copied one keeps its reference to the file), one warning. */
    int allow_external;
    /* Checkpoints, so that a run killed at any instant (SIGKILL, a node lost, a time limit) can be
     * continued by the same command with resume set (docs/guide.md, "Long runs").  A one-shot shuffle of
     * more than checkpoint_bytes of rows (or any, with resume) keeps its state in "h5shuf-resume-NAME-HASH-uidU"
     * in the scratch directory until it finishes; pass 1 checkpoints every checkpoint_bytes of input read
     * or checkpoint_seconds (whichever comes first), pass 2 closes and syncs each output file every
     * checkpoint_bytes of rows of it (rounded to whole chunks) and at its end.  Default 1 GiB and 60 s
     * (h5shuf_options_init); checkpoint_bytes 0: no checkpoints and no state.  A resume must use the same
     * checkpoint_bytes (the output's bytes may depend on it).  A scatter and a gather checkpoint alike. */
    uint64_t checkpoint_bytes;
    double checkpoint_seconds;
    /* Nonzero: continue the interrupted run of the same command (its state, above), with any memory budget
     * and threads; refused with H5SHUF_EMISMATCH when the inputs or the options that decide the output
     * changed.  With no state to continue, the run starts from the beginning and checkpoints whatever its
     * size, and a cancelled run (H5SHUF_ECANCELED: SIGINT, SIGTERM...) keeps its state too.  Without it, a
     * run that finds such a state fails with H5SHUF_EEXIST and touches nothing.  A checkpointing run whose
     * disk fills up (H5SHUF_ENOSPC, "no space left on DIR: N MiB more needed") or fails (an I/O error)
     * keeps its state, resume set or not, for a resume once there is room. */
    int resume;
    /* Nonzero: every checkpoint is synced to the disk (fsync), so that it survives a crash of the machine
     * too, not only the death of the process; 0 (default): it survives a kill (SIGKILL, the OOM killer, a
     * scheduler), whose written data the kernel keeps, and a resume after the machine restarted is refused
     * (the journal records the boot).  Syncing costs the disk's time to write the scratch file: a third of
     * a run on uncompressed data here (docs/benchmark.md). */
    int checkpoint_sync;
    /* A mixture of named domains (docs/guide.md, "Mixtures"): "NAME=P[,NAME=P...]" (names of letters,
     * digits, '_', '-' and '.'; proportions decimal >= 0, at most 9 digits after the point, normalised by
     * their sum), every input added as "NAME=SPEC" for one of the names (several inputs may share one;
     * none may carry a weight "@W" of its own).  The plan opens the inputs, gives domain NAME exactly its
     * share of the output's rows (largest remainders: the rows add up) spread over its inputs in
     * proportion to their rows, and turns each input's rows into its weight; h5shuf_job_mix_text says what
     * it chose.  The output: mix_rows rows when mix_rows_set, else the most the proportions allow without
     * repeating a row.  A domain that needs more rows than its inputs have is refused (H5SHUF_EINVAL)
     * unless allow_repeat.  NULL (default): no mixture. */
    const char *mix;
    uint64_t mix_rows;
    int mix_rows_set;
    int allow_repeat;
    /* Nonzero: a stratified order (docs/algorithm.md, "Stratified mixtures"): every output file (each
     * shard, each split) holds every group's share of its rows within one row, the floor or the ceiling of
     * n_t L / R for a group of n_t of the R rows and a file of L, each group's counts summing to its rows;
     * the groups are mix's domains, else the inputs as given.  Which rows of a group go to which file is a
     * seeded permutation of the group's rows; within a file the rows keep the contract's key order.  Needs
     * shards or split; not with a head, scatter or gather (H5SHUF_EINVAL).  The output bytes are the same for
     * every budget, strategy, thread count and rank count, as always, but differ from the unstratified
     * order's.  0 (default): the contract's uniform order. */
    int stratify;
    /* 0 (h5shuf_options_init): keeps the struct's end free of padding (see "The ABI" above); the next option
     * of an int's size takes its place, with 0 as its default. */
    int reserved0;
} h5shuf_options;

/* The plan of a job (docs/design.md section 3), filled by h5shuf_job_plan() and kept up to date by a run.
 * Set struct_size with h5shuf_plan_init before the first call. */
typedef struct h5shuf_plan {
    size_t struct_size;       /* sizeof(h5shuf_plan) of the program's header (h5shuf_plan_init); the library
                               * fills the plan as far as it reaches, at most its own sizeof, and lowers it
                               * to that */
    uint64_t rows;            /* N: rows over all inputs */
    uint64_t row_bytes;       /* bytes of one row over all shuffled datasets (file datatype sizes) */
    uint64_t total_bytes;     /* rows * row_bytes: uncompressed data to shuffle */
    uint64_t ndatasets;       /* datasets shuffled together */
    uint64_t piles;           /* M, piles of pass 1 (the latest pass 1 if it was restarted) */
    uint64_t pile_target_rows; /* s: expected rows per pile */
    uint64_t pile_bound_rows; /* s + 6*sqrt(s) (or the debug bound): the most rows a pile may hold */
    uint64_t slab_rows;       /* rows read per input slab in pass 1 */
    uint64_t pile_buffer_rows; /* rows buffered per pile in pass 1 before a flush (= scratch chunk rows) */
    uint64_t mem_limit_bytes; /* the budget the plan was made for */
    uint64_t mem_planned_bytes; /* the larger of pass 1's and pass 2's buffer bytes under this plan */
    uint64_t seed;
    uint64_t restarts;        /* pass-1 restarts done by the run (on_oversize = restart) */
    uint64_t splits;          /* piles split by recursion during the run */
    uint64_t scratch_bytes;   /* size of the scratch file after pass 1 and any splits (its peak), bytes */
    /* Variable-length rows only (else 0): the most bytes a pile may need in pass 2 (its rows, their sort
     * records and their payload); a pile over it is split like a pile over pile_bound_rows.  row_bytes
     * then counts an estimate of the payload per row (from a sample of the inputs' rows). */
    uint64_t pile_bound_bytes;
    /* Disk estimates, bytes: the inputs' stored (compressed) size; the scratch file (the data, stored size
     * when scratch is compressed, plus 8-byte ids) and the output (stored size when the filters are kept,
     * else the raw size): upper-bound-minded guesses, since compression ratios are unknown in advance. */
    uint64_t input_stored_bytes;
    uint64_t scratch_estimate_bytes;
    uint64_t output_estimate_bytes;
    uint64_t scratch_free_bytes; /* free space (for unprivileged users) where the scratch file goes */
    uint64_t output_free_bytes;  /* and where the output goes */
    int same_filesystem;         /* both on one filesystem: they need the sum */
    unsigned threads;          /* threads that (de)compress chunks (h5shuf_options.threads, resolved) */
    int pipelined;             /* the passes overlap reading with work (threads > 1, no variable-length rows);
                                * the plan then counts two slabs and two piles */
    /* The path the run takes (H5SHUF_STRATEGY_TWO_PASS or _DIRECT; why: h5shuf_job_strategy_why).  Direct:
     * the fields of piles and slabs are 0; windows of keys (scans of the N keys), rows in flight (one
     * written, the others read ahead), and the smallest budget of the direct path (0 when not planned). */
    int strategy;
    uint64_t direct_windows, direct_slots, direct_min_bytes;
    /* Pass 1: bytes of the decoded chunk rows kept for datasets whose chunks do not tile the slabs (each
     * chunk is then decoded once, not once per slab it meets); counted in mem_planned_bytes. */
    uint64_t slab_cache_bytes;
    /* h5shuf-mpi only (else 0): bytes pass 2 sent between processes (rows, ids, vlen lengths and payload),
     * summed over all processes, counted by the run. */
    uint64_t exchanged_bytes;
} h5shuf_plan;

/* An opaque job: the inputs, the output and the options of one shuffle. */
typedef struct h5shuf_job h5shuf_job;

/* Fill *opts with the defaults (random seed, 1 GiB budget, recurse on oversize, strategy auto) and its
 * struct_size with the caller's sizeof(h5shuf_options): a macro over h5shuf_options_init_size, which
 * writes the first size bytes of *opts only (the defaults this library knows, zeros past them). */
#define h5shuf_options_init(opts) h5shuf_options_init_size((opts), sizeof(h5shuf_options))
H5SHUF_API void h5shuf_options_init_size(h5shuf_options *opts, size_t size);
/* Set the struct_size of a plan, a mixing report or a report of windows before the library fills it. */
#define h5shuf_plan_init(plan) ((void)((plan)->struct_size = sizeof(h5shuf_plan)))
#define h5shuf_mixing_init(mixing) ((void)((mixing)->struct_size = sizeof(h5shuf_mixing)))
#define h5shuf_mixing_windows_init(windows) ((void)((windows)->struct_size = sizeof(h5shuf_mixing_windows)))

/* Create a job.  opts may be NULL for the defaults; it and its strings are copied, as far as its
 * struct_size (see "The ABI" above).  Options whose struct_size no h5shuf_options_init set, or that set
 * what this library does not know, make h5shuf_job_plan, h5shuf_run and h5shuf_verify fail with
 * H5SHUF_EINVAL.  Returns NULL only when out of memory. */
H5SHUF_API h5shuf_job *h5shuf_job_create(const h5shuf_options *opts);

/* Free a job and everything it owns.  NULL is a no-op. */
H5SHUF_API void h5shuf_job_free(h5shuf_job *job);

/*
 * Add an input, in command-line syntax: "FILE.h5" or "FILE.h5:/path[,/path...]".  The file name ends at
 * the first ":/".  Inputs are concatenated along axis 0 in the order added.  An input without paths uses
 * the paths of the first input; if the first input has none, its datasets are discovered when the job
 * runs (every dataset whose dim 0 is the common N; other objects are copied to the output unchanged).
 * A weight "@W" at the end (W >= 0 in decimal, at most 18 digits after the point, ceil(W) < 65536) makes
 * the input contribute floor(W) copies of each of its n rows plus exactly round(frac(W) x n) more (half
 * up), chosen uniformly without replacement from the seed: "a.h5:/tok@0.25" is an exact 25% sample,
 * "@2.5" every row twice and half of them a third time; every copy is its own row of the permutation
 * (docs/algorithm.md, "Mixtures").  Returns H5SHUF_OK, or H5SHUF_EINVAL for a malformed spec or weight
 * (see h5shuf_errmsg).
 */
H5SHUF_API int h5shuf_job_add_input(h5shuf_job *job, const char *spec);

/* After h5shuf_job_plan with a mixture (h5shuf_options.mix): what the plan chose, a line per domain
 * ("NAME: P of R rows = T rows, from I inputs of H rows") and per input ("  FILE: n rows, weight W: c
 * rows"), lines ended by '\n'; "" without a mixture.  Owned by the job, valid until it is freed. */
H5SHUF_API const char *h5shuf_job_mix_text(const h5shuf_job *job);

/* Set the output, "FILE.h5" or "FILE.h5:/path[,/path...]" (paths default to the input paths; when given
 * there must be one per shuffled dataset).  Returns H5SHUF_OK or H5SHUF_EINVAL. */
H5SHUF_API int h5shuf_job_set_output(h5shuf_job *job, const char *spec);

/*
 * Open the inputs, check them and make the plan, without writing anything.  *plan is filled on success
 * as far as plan->struct_size (h5shuf_plan_init; plan may be NULL).  h5shuf_run() calls this itself when
 * it has not been called.  Returns H5SHUF_OK or an error status; the message names the file and dataset
 * (H5SHUF_EINVAL, the job left unplanned, for a plan whose struct_size no h5shuf_plan_init set).
 */
H5SHUF_API int h5shuf_job_plan(h5shuf_job *job, h5shuf_plan *plan);

/*
 * Run the shuffle: pass 1, oversize handling, pass 2 (or the direct path: h5shuf_strategy).  The output is
 * written under a temporary name in its directory and renamed into place only on success; the scratch file
 * is removed on every return.
 * Inputs are opened read-only.  Before writing anything the plan's disk estimates are checked against
 * the free space (H5SHUF_ENOSPC); a write that finds a disk full fails with H5SHUF_ENOSPC too, its message
 * "no space left on DIR: N MiB more needed (...)".  Returns H5SHUF_OK or an error status (see
 * h5shuf_errmsg).
 */
H5SHUF_API int h5shuf_run(h5shuf_job *job);

/*
 * Verify instead of shuffling: check that the job's output (an existing file, set with
 * h5shuf_job_set_output) holds a permutation of the rows of its inputs, and that datasets shuffled
 * together are still aligned row by row.  One streamed pass over inputs and output with 128-bit additive
 * multiset hashes (XXH3), memory bounded by mem_limit_bytes.  When the output carries its seed and an
 * index (h5shuf_options.index_path), it also checks that the order is exactly the one the seed defines:
 * the index sorted by (key, id), and each output row equal to the input row its index names.
 * An output file of shards or splits is checked with the other files of its set, as the one output they
 * concatenate to: those added last as inputs that say (by their root attributes) they belong to its set
 * are taken as its files, and a file still missing is looked for beside it under the name h5shuf gives
 * it; a set with a file missing fails naming it.  A head (--head R, alone or cut into files) must hold the
 * rows of the first R of the shuffle of its seed.  Inputs added without weights get the weights the run
 * gave them (weights and --mix's, from the output's h5shuf_inputs) when there are as many as the run had.
 * Call it on a job that has not been planned or run.  Returns H5SHUF_OK (h5shuf_job_verify_text then
 * says what was checked), H5SHUF_EMISMATCH with a one-line reason naming the file and dataset ("rows
 * differ", "misaligned", row counts, types, a missing file of a set), or another error.
 */
H5SHUF_API int h5shuf_verify(h5shuf_job *job);

/*
 * The lazy second pass: a shuffle's two passes as two runs through a pile file (docs/lazy.md).
 *
 * Scatter: a job with inputs and options (no output), h5shuf_job_set_piles(job, "piles.h5"), then
 * h5shuf_run_scatter(job) runs pass 1 and the oversize handling, exactly as h5shuf_run does, and leaves
 * the pile file: pile j (j = 0 .. M-1, in key order) is the group /piles/NNNNNN (j in 6 digits or more)
 * holding "d0", "d1", ... (rows of the shuffled datasets, in increasing global row id) and "index" (those
 * ids, uint64); root attributes record the seed, N, M, the inputs and datasets, and /pile_table each
 * pile's key range and rows.  Sorting pile j by (h5shuf_key(seed, id), id) gives output rows
 * offset_j .. offset_j + rows_j - 1 of the one-shot shuffle.
 *
 * Gather: a job with no inputs, h5shuf_job_set_piles(job, "piles.h5") and an output
 * (h5shuf_job_set_output), then h5shuf_run_gather(job) runs pass 2 and writes the output, byte for byte
 * the one h5shuf_run writes with the same inputs, seed and output options.  The inputs, seed, and the
 * output options the scatter was given (compression, chunk_shape, index_path) come from the pile file;
 * output options set on the gather job replace the recorded ones.  A seed set on the gather job must be
 * the pile file's.  The inputs must still be in place, unchanged (size, modification time and rows are
 * checked: H5SHUF_EMISMATCH otherwise): the output's metadata is read from them, its rows from the piles.
 * The pile file is opened read-only and may be gathered any number of times.
 *
 * h5shuf_job_plan works on both kinds of job; h5shuf_run refuses them (H5SHUF_EINVAL).
 */

/* Set the pile file a scatter writes (the job has inputs) or a gather reads (the job has none), before
 * the job is planned.  path is copied.  Returns H5SHUF_OK, H5SHUF_EINVAL (empty, or already planned) or
 * H5SHUF_ENOMEM. */
H5SHUF_API int h5shuf_job_set_piles(h5shuf_job *job, const char *path);

/*
 * Run pass 1 into the pile file.  It is written as ".NAME.h5shuf-XXXXXX" beside its final name and
 * renamed into place on success (an existing file is replaced only with force, never an input); nothing
 * is left on failure.  Every pile it leaves holds at most the plan's pile_bound_rows rows.
 * Returns H5SHUF_OK or an error status (see h5shuf_errmsg).
 */
H5SHUF_API int h5shuf_run_scatter(h5shuf_job *job);

/*
 * Run pass 2 from the pile file into the output (written and renamed into place as by h5shuf_run).
 * Errors: H5SHUF_ENOENT/H5SHUF_ENOTHDF5 (no pile file), H5SHUF_EUNSUPPORTED (not a pile file, a damaged
 * one, or one of another format version), H5SHUF_EMISMATCH (inputs changed since the scatter),
 * H5SHUF_EBUDGET (the largest pile does not fit mem_limit_bytes), or any error of h5shuf_run.
 */
H5SHUF_API int h5shuf_run_gather(h5shuf_job *job);

/* The seed of the job: the one given, or the random one drawn (valid after h5shuf_job_plan/run). */
H5SHUF_API uint64_t h5shuf_job_seed(const h5shuf_job *job);

/* The job's warnings, index 0 .. count-1 (NULL past the end): things it did that the options allowed but
 * a user should know (references written null, a lossy filter re-encoding rows).  Valid after
 * h5shuf_job_plan; owned by the job. */
H5SHUF_API const char *h5shuf_job_warning(const h5shuf_job *job, size_t index);
/* Why the plan took its strategy, one line (valid after a successful plan; owned by the job). */
H5SHUF_API const char *h5shuf_job_strategy_why(const h5shuf_job *job);
/* After a successful h5shuf_verify: what it checked, one line ("a permutation of the inputs' rows,
 * datasets aligned", or "4 shards, o-00000-of-00004.h5 .. o-00003-of-00004.h5: together ..."); else "".
 * Owned by the job. */
H5SHUF_API const char *h5shuf_job_verify_text(const h5shuf_job *job);
/* After h5shuf_job_plan: what a resumed run found and will redo ("resuming from DIR: pass 1 done to row
 * 812345 of 1000000, ...") or "" when it continues no interrupted run.  Owned by the job. */
H5SHUF_API const char *h5shuf_job_resume_text(const h5shuf_job *job);

/* The names of the shuffled datasets (input paths of the first input), valid after a successful plan:
 * index 0 .. count-1; returns NULL past the end.  Owned by the job. */
H5SHUF_API const char *h5shuf_job_dataset(const h5shuf_job *job, size_t index);

/*
 * The job's temporary files while h5shuf_run runs: which = 0, the output under its temporary name; 1, the
 * scratch file (h5shuf_run_scatter: both are the pile file under its temporary name; h5shuf_run_gather and
 * the direct path: 1 is NULL).  NULL when it does not exist (yet, or any more).  The strings stay unchanged while they
 * exist, so a program may copy them (in its progress callback) for a signal handler that has to remove
 * them and exit at once (unlink is async-signal-safe); h5shuf_run removes them itself otherwise.
 */
H5SHUF_API const char *h5shuf_job_temp_file(const h5shuf_job *job, int which);
/* which = 2 + k: output file k + 1 (shards or splits) under its temporary name, k = 0 .. count-2. */

/*
 * The output files of the job (valid after a successful h5shuf_job_plan): index 0 .. count-1, NULL past
 * the end.  One file without shards or splits (the output's file name); with K shards, shard s is named
 * from the output's name: a "{shard}" in it is replaced by s and a "{shards}" by K, both zero-padded to
 * max(5, digits of K) digits, else "-SSSSS-of-KKKKK" goes before the extension ("out.h5" ->
 * "out-00000-of-00016.h5"); with splits, a "{split}" in the name is replaced by the split's name, else
 * "-NAME" goes before the extension ("out.h5" -> "out-train.h5").  *first_row and *rows (may be NULL)
 * receive the file's range of the output order.  Owned by the job.
 */
H5SHUF_API const char *h5shuf_job_output_file(const h5shuf_job *job, size_t index, uint64_t *first_row, uint64_t *rows);

/* The mixing of the inputs in one window of the output (the offline_shuffle_fast idea): how many rows of
 * each input the window holds against its expected share.  Computed from the keys alone (no data read):
 * the first W output rows are the W smallest (key, i). */
typedef struct h5shuf_mixing {
    size_t struct_size;      /* sizeof(h5shuf_mixing) of the program's header (h5shuf_mixing_init) */
    uint64_t window_rows;    /* W: rows in the window (the requested W, at most the output's rows) */
    uint64_t first_row;      /* the window's first output row: 0, or R - W for the last window */
    size_t ninputs;          /* entries of counts and expected */
    const uint64_t *counts;  /* [ninputs]: rows of input f in the window; owned by the job */
    const double *expected;  /* [ninputs]: W * rows_f / N, the expected count under a uniform shuffle */
    double chi2;             /* Pearson's statistic: sum over inputs with rows of (count - expected)^2 / expected */
    uint64_t df;             /* degrees of freedom: inputs with rows, minus 1 */
    double p_value;          /* P(X >= chi2) for X ~ chi-square(df): upper regularised gamma Q(df/2, chi2/2);
                              * 1 when df = 0 */
} h5shuf_mixing;

/* The mixing report of a planned job: the first and the last window of window_rows output rows (0: the
 * default, min(R, 10000)).  With shards or splits, windows of the whole output order.  Streams the N keys
 * once, with two heaps of W entries (16 bytes each).  Call after h5shuf_job_plan or h5shuf_run, with
 * first and last set by h5shuf_mixing_init (filled as far as their struct_size); the arrays stay valid
 * until the next call or h5shuf_job_free.  Returns H5SHUF_OK, H5SHUF_EINVAL (not planned, or a struct_size
 * no h5shuf_mixing_init set) or H5SHUF_ENOMEM. */
H5SHUF_API int h5shuf_job_mixing(h5shuf_job *job, uint64_t window_rows, h5shuf_mixing *first, h5shuf_mixing *last);

/* The mixing of the inputs in every window of the output: the output cut into K = ceil(R / W) windows at
 * fixed keys (window j holds the rows whose key lies in the j-th of K equal key ranges: consecutive output
 * rows, about W of them, the number varying as a binomial), each window's rows of each input compared by
 * Pearson's chi-square with the input's share of the output (its weighted rows / N, the target
 * proportion of a --mix).  Under a uniform shuffle the windows' statistics add up to a chi-square of
 * K x df degrees of freedom, and a window's p-value is below 0.001 in about K / 1000 windows. */
typedef struct h5shuf_mixing_windows {
    size_t struct_size;      /* sizeof(h5shuf_mixing_windows) of the program's header (h5shuf_mixing_windows_init) */
    uint64_t window_rows;    /* R / K: the rows a window holds on average (W doubled until the counts fit 64 MiB) */
    uint64_t windows;        /* K */
    uint64_t rows_min, rows_max; /* the fewest and the most rows of a window */
    double chi2;             /* the sum of the windows' statistics */
    uint64_t df;             /* its degrees of freedom: (inputs with rows - 1) x windows with rows */
    double p_value;          /* P(X >= chi2), X ~ chi-square(df) (Wilson-Hilferty's normal approximation past
                              * 1000 degrees of freedom) */
    double worst_chi2;       /* the largest window statistic */
    uint64_t worst_first_row, worst_rows; /* that window: its first output row and its rows */
    double worst_p_value;    /* its p-value; times K (at most 1) is the Bonferroni bound for the worst of K */
    uint64_t below_001;      /* windows whose p-value is below 0.001 (expected: K / 1000) */
} h5shuf_mixing_windows;

/* The mixing of every window of about window_rows rows (0: the default, min(R, 10000)) of a planned job
 * into *out (set by h5shuf_mixing_windows_init, filled as far as its struct_size).  Streams the N keys once
 * (no data read), counting 8 bytes per window and input.  Returns H5SHUF_OK, H5SHUF_EINVAL (not planned,
 * or a struct_size no h5shuf_mixing_windows_init set), H5SHUF_ENOMEM or H5SHUF_ECANCELED. */
H5SHUF_API int h5shuf_job_mixing_windows(h5shuf_job *job, uint64_t window_rows, h5shuf_mixing_windows *out);

/* The last error's one-line message ("FILE:/dataset: what is wrong"), or "" when there was none.
 * Owned by the job; valid until the next call on it. */
H5SHUF_API const char *h5shuf_errmsg(const h5shuf_job *job);
/* A short static description of a status code; "unknown status" for a number not in the list. */
H5SHUF_API const char *h5shuf_strerror(int status);
/* Register filters h5shuf builds in with the HDF5 library of this process, so that the program's own HDF5
 * calls read and write them without plugins, replacing any of those ids registered or loaded before:
 * zstd (32015) alone, or every one: zstd, h5py's LZF (32000), PyTables' LZO (305; not in a library built
 * with -DH5SHUF_LZO=OFF), bitshuffle (32008, with LZ4 or zstd) and LZ4 (32004; docs/filters.md).  h5shuf_run does it
 * itself.  Idempotent.  Returns H5SHUF_OK or H5SHUF_EHDF5. */
H5SHUF_API int h5shuf_register_zstd(void);
H5SHUF_API int h5shuf_register_filters(void);

/* Versions, "MAJOR.MINOR.PATCH" (static strings): the library's, and those of the HDF5 library and libzstd
 * it runs with. */
H5SHUF_API const char *h5shuf_version(void);
/* The library's version as one number, H5SHUF_VERSION_NUMBER of the header it was built with (MAJOR * 10000
 * + MINOR * 100 + PATCH): h5shuf_version_number() < H5SHUF_VERSION_NUMBER means a program runs with an
 * older library than its header. */
H5SHUF_API unsigned h5shuf_version_number(void);
H5SHUF_API const char *h5shuf_hdf5_version(void);
H5SHUF_API const char *h5shuf_zstd_version(void);
/* 1 when the HDF5 library h5shuf runs with serialises its own calls (built thread-safe, as Debian's is),
 * else 0 (conda's and Homebrew's default builds).  Either way separate jobs may run in separate threads:
 * on an HDF5 that is not thread-safe the library's calls that use HDF5 (h5shuf_job_plan, h5shuf_run and
 * the other runs, h5shuf_verify, h5shuf_job_free) take turns, one job's at a time, so such jobs do not run
 * at once; and the caller's own HDF5 calls (h5py's, in another thread) must not overlap them. */
H5SHUF_API int h5shuf_hdf5_threadsafe(void);

/* The key of row i under seed: word 0 of Philox4x64-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC'11) with counter (i, 0, 0, 0) and key (seed, 0).  The output is the rows
 * sorted by (key, i).  numpy reproduces it: Philox(key=seed, counter=i-1).random_raw(4)[0]. */
H5SHUF_API uint64_t h5shuf_key(uint64_t seed, uint64_t i);

/* Parse a size with an optional binary suffix: "123", "64K", "64KiB", "512M", "2G", "1T" (K = 1024).
 * Returns H5SHUF_OK and sets *bytes, or H5SHUF_EINVAL for an empty string, an unknown suffix, a sign,
 * or a value that overflows 64 bits. */
H5SHUF_API int h5shuf_parse_size(const char *text, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* H5SHUF_H */
