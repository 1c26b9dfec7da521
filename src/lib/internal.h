/*
 * internal.h - declarations shared by the modules of libh5shuf; never installed.
 *
 * The library is split by stage: spec (argument syntax), keys (Philox keys, pile of a key), sort (radix
 * sort of key/index pairs), plan (sizes of piles and buffers), hdf5_io (opening and checking inputs,
 * creating the output), piles (the scratch file), scatter (pass 1 and oversize recursion), gather
 * (pass 2), writer (whole-chunk output bands), error (messages), job (the public entry points).
 * keys, sort and plan do not use HDF5, so they are unit-tested on their own.
 */
#ifndef H5SHUF_INTERNAL_H
#define H5SHUF_INTERNAL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "h5shuf.h"

#define H5SHUF_INTERNAL __attribute__((visibility("hidden")))

typedef unsigned __int128 h5shuf_u128;

/* ---- fault.c (test builds only: H5SHUF_FAULT_INJECTION) ---------------------------------------- */
#ifdef H5SHUF_FAULT_INJECTION
H5SHUF_INTERNAL int h5shuf__fault(void);
H5SHUF_INTERNAL int h5shuf__fault_hdf5(void); /* also pushes "injected fault" on HDF5's error stack */
H5SHUF_INTERNAL void *h5shuf__fault_malloc(size_t n);
H5SHUF_INTERNAL void *h5shuf__fault_calloc(size_t n, size_t size);
H5SHUF_INTERNAL void *h5shuf__fault_realloc(void *p, size_t n);
H5SHUF_INTERNAL char *h5shuf__fault_strdup(const char *s);
H5SHUF_INTERNAL char *h5shuf__fault_strndup(const char *s, size_t n);
#ifndef H5SHUF_FAULT_IMPL
#define malloc(n) h5shuf__fault_malloc(n)
#define calloc(n, s) h5shuf__fault_calloc(n, s)
#define realloc(p, n) h5shuf__fault_realloc(p, n)
#define strdup(s) h5shuf__fault_strdup(s)
#define strndup(s, n) h5shuf__fault_strndup(s, n)
#endif
#define H5SHUF_FAULT() h5shuf__fault_hdf5() /* at an HDF5 I/O or creation call: fail it */
#else
#define H5SHUF_FAULT() 0
#endif

/* ---- error.c ------------------------------------------------------------------------------------ */

/* A fixed-size message buffer; errors are formatted "FILE:/dataset: cause". */
#define H5SHUF_ERRMSG_MAX 1024

struct h5shuf_err {
    int status;
    char msg[H5SHUF_ERRMSG_MAX];
};

/* Record an error (printf-style) unless one is already recorded, and return status.  The first error
 * wins: it is the cause; later ones are its consequences during cleanup. */
H5SHUF_INTERNAL int h5shuf__fail(struct h5shuf_err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The innermost message on HDF5's default error stack (e.g. "can't open file"), or "unknown HDF5
 * error"; written into buf of size cap.  Clears the stack. */
H5SHUF_INTERNAL const char *h5shuf__hdf5_cause(char *buf, size_t cap);

/* ---- spec.c ------------------------------------------------------------------------------------- */

/* A parsed "FILE[:/path[,/path...]]". */
struct h5shuf_spec {
    char *file;
    char **paths; /* NULL when none were given */
    size_t npaths;
};

/* Parse text into *spec (caller frees with h5shuf__spec_clear).  Returns H5SHUF_OK or H5SHUF_EINVAL
 * with a message in err. */
H5SHUF_INTERNAL int h5shuf__spec_parse(const char *text, struct h5shuf_spec *spec, struct h5shuf_err *err);
H5SHUF_INTERNAL void h5shuf__spec_clear(struct h5shuf_spec *spec);

/* A parsed filter spec (h5shuf_options.compression). */
enum h5shuf_codec { H5SHUF_CODEC_NONE = 0, H5SHUF_CODEC_GZIP, H5SHUF_CODEC_ZSTD };
struct h5shuf_filters {
    int keep;               /* "keep": the first input's pipeline */
    int shuffle, fletcher32;
    enum h5shuf_codec codec;
    int level;
};

/* Parse a filter spec ("keep" allowed when allow_keep); NULL parses as dflt.  Returns H5SHUF_OK or
 * H5SHUF_EINVAL with a message naming what (e.g. "--compression") is wrong. */
H5SHUF_INTERNAL int h5shuf__filters_parse(const char *text, const char *dflt, int allow_keep, const char *what,
                                          struct h5shuf_filters *f, struct h5shuf_err *err);

/* Add the pipeline f (not keep) to dcpl: shuffle, codec, fletcher32, in that order.  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__filters_apply(const struct h5shuf_filters *f, hid_t dcpl);

/* Parse a chunk shape "ROWS" or "D0xD1x..." into dims (at most H5S_MAX_RANK); *rank = number given.
 * Returns H5SHUF_OK or H5SHUF_EINVAL. */
H5SHUF_INTERNAL int h5shuf__chunk_parse(const char *text, hsize_t *dims, int *rank, struct h5shuf_err *err);

/* Register the zstd filter in this process (idempotent). */
H5SHUF_INTERNAL int h5shuf__zstd_register(void);

/* ---- keys.c ------------------------------------------------------------------------------------- */

/* Philox4x64-10 block: out[0..3] for counter ctr[0..3] and key key[0..1] (Salmon et al., SC'11). */
H5SHUF_INTERNAL void h5shuf__philox4x64_10(const uint64_t ctr[4], const uint64_t key[2], uint64_t out[4]);

/* A key range [lo, hi) of piles, hi <= 2^64. */
struct h5shuf_range {
    h5shuf_u128 lo, hi;
};

/* The first key of part j when range r is cut into m parts: lo + ceil(j * (hi - lo) / m).
 * For r = [0, 2^64) this is the contract's pile boundary: pile(K) = floor(K * m / 2^64). */
H5SHUF_INTERNAL h5shuf_u128 h5shuf__range_cut(struct h5shuf_range r, uint64_t m, uint64_t j);

/* The part of key k (lo <= k < hi) when range r is cut into m parts: floor((k - lo) * m / (hi - lo)). */
static inline uint64_t h5shuf__range_part(struct h5shuf_range r, uint64_t m, uint64_t k)
{
    h5shuf_u128 width = r.hi - r.lo;
    h5shuf_u128 off = (h5shuf_u128)k - r.lo;
    if (width == ((h5shuf_u128)1 << 64))
        return (uint64_t)((off * m) >> 64); /* the top level: the contract's (K * M) >> 64 */
    return (uint64_t)(off * m / width);
}

/* ---- sort.c ------------------------------------------------------------------------------------- */

/* A row's sort record: its key and its index in the pile (indices increase with the global row id). */
struct h5shuf_keyidx {
    uint64_t key;
    uint64_t idx;
};

/* Stable LSD radix sort of a[0..n) by key, 8 bits a pass, skipping passes whose byte is constant (keys
 * of one pile share their top bits).  tmp must hold n records.  Stable, so equal keys keep idx order. */
H5SHUF_INTERNAL void h5shuf__sort_keyidx(struct h5shuf_keyidx *a, struct h5shuf_keyidx *tmp, size_t n);

/* ---- plan.c ------------------------------------------------------------------------------------- */

/* Bytes per row that pass 2 needs besides the row itself: id (8), key/index pair (16), radix tmp (16). */
#define H5SHUF_PASS2_ROW_OVERHEAD 40u
/* Bytes per row that pass 1's pile buffers need besides the row itself: the id. */
#define H5SHUF_PASS1_ROW_OVERHEAD 8u
/* Bytes each pile costs in pass 1 besides its buffered rows (writer, buffer pointers, malloc headers,
 * its record in the pile list), per pile plus per dataset; an upper bound, measured with malloc_usable_size. */
#define H5SHUF_PILE_OVERHEAD 160u
#define H5SHUF_PILE_OVERHEAD_PER_DATASET 24u
/* Fixed buffers outside the per-row arithmetic: the output band of each dataset (at most this many
 * bytes, or one chunk band if larger), counted inside the budget. */
#define H5SHUF_BAND_BYTES_MAX (4u << 20)
/* Rows per chunk of the --index dataset (1 MiB of uint64). */
#define H5SHUF_INDEX_CHUNK_ROWS (UINT64_C(1) << 17)
/* Pass 1 reads slabs of at most this many bytes (tens of MiB, as DESIGN.md section 3 asks). */
#define H5SHUF_SLAB_BYTES_MAX (32u << 20)
/* Spare pile buffer sets per thread in pass 1 (asynchronous flushes; none with one thread). */
#define H5SHUF_SPARE_PILE_BUFFERS 2u
/* Scratch chunks (one pile buffer flush) hold at most this many bytes (all datasets of a row together). */
#define H5SHUF_PILE_CHUNK_BYTES_MAX (1u << 20)

/* Inputs of the planner. */
struct h5shuf_plan_in {
    uint64_t rows;            /* N */
    uint64_t row_bytes;       /* sum of the datasets' row sizes */
    uint64_t ndatasets;
    uint64_t mem_limit_bytes;
    uint64_t band_bytes;      /* the output writer's buffers (all datasets) */
    uint64_t slab_align_rows; /* pass 1 slabs are a multiple of this (the first input's chunk rows) */
    uint64_t debug_pile_bound_rows;
    unsigned threads;         /* chunk codec threads (h5shuf_plan.threads) */
    int no_pipeline;          /* nonzero: never overlap the passes (variable-length rows: HDF5 reads them on
                               * one thread, so a second slab or pile would only cost memory) */
    uint64_t pile_rows;       /* rows that go into piles when fewer than rows (a head); 0: rows */
    uint64_t mem_row_bytes;   /* vlen rows only (else 0): a row's bytes in memory without its payload */
    double row_var;           /* vlen rows only: variance of a row's payload bytes */
};

/* The largest s with s + 6*sqrt(s) <= bound: floor((sqrt(bound + 9) - 3)^2), at least 0. */
H5SHUF_INTERNAL uint64_t h5shuf__pile_target_for_bound(uint64_t bound);

/* The oversize bound of a pile of target s rows: s + ceil(6*sqrt(s)). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_bound_for_target(uint64_t s);

/* Make the plan (fields of h5shuf_plan other than seed/restarts/splits).  Returns H5SHUF_OK or
 * H5SHUF_EBUDGET with a message saying the smallest budget that works. */
H5SHUF_INTERNAL int h5shuf__plan_make(const struct h5shuf_plan_in *in, h5shuf_plan *plan, struct h5shuf_err *err);

/* Bytes one pile costs in pass 1 besides its rows (H5SHUF_PILE_OVERHEAD...). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_overhead(uint64_t ndatasets);

/* Nonzero when the plan overlaps I/O with work (more than one thread): two slabs in pass 1, two piles in
 * pass 2, and the stored chunks of the one being read (DESIGN.md section 4). */
H5SHUF_INTERNAL int h5shuf__plan_pipelined(const h5shuf_plan *plan);
/* Bytes a pile row costs in pass 2, sequential or pipelined (see plan.c). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pass2_row_bytes(uint64_t row_bytes, int pipelined);
/* Bytes of pass 1's slab buffers under the plan (all copies when pipelined). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_slab_bytes(const h5shuf_plan *plan);

/* Spare pile buffer sets of pass 1 under the plan (H5SHUF_SPARE_PILE_BUFFERS per thread, none with one). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_spare_buffers(const h5shuf_plan *plan);

/* Bytes of pass 1's m piles under the plan: buffers (h5shuf__plan_pile_buffer_rows), spare buffers
 * with their encoded chunks, and overhead. */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pass1_pile_bytes(const h5shuf_plan *plan, uint64_t m);

/* Pile buffer rows of pass 1 for m piles under the plan's budget (at least 1). */
H5SHUF_INTERNAL uint64_t h5shuf__plan_pile_buffer_rows(const h5shuf_plan *plan, uint64_t m);

struct h5shuf_chunkio;

/* ---- hdf5_io.c ---------------------------------------------------------------------------------- */

/* One shuffled dataset of one input file. */
struct h5shuf_src {
    hid_t dset;       /* open dataset, or H5I_INVALID_HID */
    uint64_t rows;    /* dims[0] */
};

/* One input file. */
struct h5shuf_input {
    struct h5shuf_spec spec;
    char *open_path;         /* where the file is opened when not NULL (a gather: the name resolved at
                              * scatter time); spec.file stays as given, for provenance and messages */
    hid_t file;
    uint64_t rows;           /* dims[0] of its datasets */
    uint64_t first_row;      /* global id of its first row */
    struct h5shuf_src *src;  /* one per shuffled dataset */
};

/* What describes a shuffled dataset, from the first input. */
struct h5shuf_dsinfo {
    char *in_path;   /* path in the inputs */
    char *out_path;  /* path in the output */
    hid_t ftype;     /* file datatype (a copy); rows move as its raw bytes */
    int rank;
    hsize_t dims[H5S_MAX_RANK];    /* dims of the first input (dims[0] replaced by N for the output) */
    hsize_t maxdims[H5S_MAX_RANK];
    uint64_t row_bytes;            /* H5Tget_size(ftype) * prod(dims[1:]) */
    hid_t dcpl;                    /* creation properties of the first input (a copy) */
    uint64_t chunk_rows;           /* chunk dim 0 of the first input, 0 when not chunked */
    /* Variable-length rows (vlen.c); vlen == H5SHUF_FIXED for fixed-size rows, and then row_bytes is
     * also plan_row_bytes and the other fields are unused. */
    int vlen;                      /* H5SHUF_FIXED, H5SHUF_VLEN_SEQ or H5SHUF_VLEN_STR */
    size_t vslot;                  /* its number among the vlen datasets (scratch payload dataset) */
    hid_t mtype;                   /* memory type of reads and writes: vlen of the file base type, or the
                                    * variable string type; H5I_INVALID_HID for fixed rows */
    hid_t etype;                   /* payload element type in the scratch: the base type, or uint8 */
    uint64_t elems;                /* vlen elements per row: prod(dims[1:]) */
    uint64_t elem_bytes;           /* bytes of one payload element: base type size, or 1 */
    uint64_t mean_bytes;           /* estimated payload bytes per row (h5shuf__vlen_estimate) */
    uint64_t plan_row_bytes;       /* bytes per row the plan counts: row_bytes, plus for vlen rows the
                                    * payload estimate and a per-element allowance */
    hid_t out_dcpl;                /* creation properties of the output dataset (h5shuf__output_plan) */
    hsize_t out_maxdims[H5S_MAX_RANK];
    uint64_t out_chunk_rows;       /* chunk dim 0 of the output, 0 when not chunked */
};

/* What a job does: the one-shot shuffle, or one of its two passes through a pile file (lazy.c). */
enum h5shuf_mode { H5SHUF_MODE_RUN = 0, H5SHUF_MODE_SCATTER, H5SHUF_MODE_GATHER };

struct h5shuf_pilefile; /* lazy.c: what a gather read from its pile file */

/* A job (the public opaque type). */
struct h5shuf_job {
    h5shuf_options opts;
    enum h5shuf_mode mode;         /* set when planned, from piles_path and the inputs */
    char *piles_path;              /* h5shuf_job_set_piles: the pile file a scatter writes or a gather reads */
    struct h5shuf_pilefile *pf;    /* a gather's pile file, open while the job lives */
    char *tmpdir;
    struct h5shuf_err err;
    struct h5shuf_input *inputs;
    size_t ninputs;
    struct h5shuf_spec out_spec;   /* out_spec.file is NULL until an output is set */
    int whole_file;                /* the first input had no paths: copy the other objects */
    struct h5shuf_dsinfo *ds;
    size_t nds;
    uint64_t rows;                 /* N */
    uint64_t row_bytes;            /* planned bytes of a row: sum of ds[].plan_row_bytes */
    size_t nvlen;                  /* datasets with variable-length rows */
    double vlen_var;               /* estimated variance of a row's payload bytes (all vlen datasets) */
    uint64_t seed;
    char *compression, *chunk_shape, *scratch_compression, *index_path; /* copies of the options' strings */
    char *scratch_dir;             /* where the scratch file goes: tmpdir, $TMPDIR or the output's dir */
    const char *temp_file[2];      /* during a run: the output's temporary name, the scratch file */
    struct h5shuf_filters out_filters, scratch_filters;
    int planned;
    h5shuf_plan plan;
    struct h5shuf_chunkio *cio;    /* during a run: the thread pool and chunk buffers */
    /* The output files (outputs.c): one, K shards or the splits; out_rows rows of the output order in all. */
    char *source_index_path, *split;   /* copies of the options' strings */
    struct h5shuf_target *targets;
    size_t ntargets;
    uint64_t out_rows;
    size_t cur_target;             /* the target open for writing in pass 2, when cur_file >= 0 */
    hid_t cur_file;
    hid_t *out_dsets;              /* nds + 2: datasets, index, source index of the open target (or invalid) */
    const char *out_name;          /* the output file being written, for messages */
    uint64_t *mixing_counts;       /* h5shuf_job_mixing's arrays: 2 * ninputs counts, then 2 * ninputs doubles */
    struct h5shuf_keyidx head_bound; /* with a head (out_rows < rows): the largest (key, id) written */
};

/* The path an input is opened by. */
static inline const char *h5shuf__input_path(const struct h5shuf_input *in)
{
    return in->open_path ? in->open_path : in->spec.file;
}

/* Open every input read-only, discover or check the datasets, fill job->ds, job->rows, job->row_bytes.
 * Errors name the file and dataset. */
H5SHUF_INTERNAL int h5shuf__inputs_open(h5shuf_job *job);
H5SHUF_INTERNAL void h5shuf__inputs_close(h5shuf_job *job);

/* Decide each output dataset's layout, chunk shape and filters (ds[d].out_dcpl, out_maxdims,
 * out_chunk_rows) from the first input and the options; errors name the dataset. */
H5SHUF_INTERNAL int h5shuf__output_plan(h5shuf_job *job);

/* Create the output datasets of rows rows (and, in whole-file mode, copy the other objects of the first
 * input) in the open file out (job->out_name); sets out_dsets[0..nds), out_dsets[nds] to the index
 * dataset when index_path is set, out_dsets[nds+1] to the source index when source_index_path is set.
 * Does not write the rows. */
H5SHUF_INTERNAL int h5shuf__output_create(h5shuf_job *job, hid_t out, hid_t *out_dsets, uint64_t rows);
/* The file datatype of the source index: uint16 for at most 65535 inputs, else uint32 (little-endian). */
H5SHUF_INTERNAL hid_t h5shuf__source_type(const h5shuf_job *job);

/* Write the provenance attributes on the output's root group. */
H5SHUF_INTERNAL int h5shuf__output_provenance(h5shuf_job *job, hid_t out);

/* Read rows [start, start+count) of dataset dset (rank, file type ftype) into buf as raw bytes. */
H5SHUF_INTERNAL herr_t h5shuf__read_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf);

/* Write rows [start, start+count) of dset from buf (raw bytes of ftype).  When extend, the dataset is
 * first extended to start+count rows. */
H5SHUF_INTERNAL herr_t h5shuf__write_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                                          const void *buf, int extend);

/* The file dataspace of dset with rows [start, start+count) selected and a memory dataspace of their
 * shape (dset extended to start+count rows first when extend); both H5I_INVALID_HID until made, for
 * the caller to close.  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__select_rows(hid_t dset, uint64_t start, uint64_t count, hid_t *fspace, hid_t *mspace,
                                           int extend);

/* Close dataspaces fs and ms (either may be H5I_INVALID_HID) after an HDF5 call that returned r, keeping
 * its error stack when it failed; returns r. */
H5SHUF_INTERNAL herr_t h5shuf__spaces_close(herr_t r, hid_t fs, hid_t ms);

/* Write the scalar UTF-8 string attribute name on obj (replacing one of that name).  < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__put_string_attr(hid_t obj, const char *name, const char *value);

/* Extend dset's dimension 0 to rows (the other dimensions unchanged).  Returns < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__extend_rows(hid_t dset, uint64_t rows);

/* ---- pool.c ------------------------------------------------------------------------------------- */

/* A unit of work for the pool: run(task, thread) computes only (no HDF5, no library allocation);
 * thread is 0 for the submitting thread, 1..n-1 for workers.  Embed it first in a larger struct. */
enum { H5SHUF_TASK_IDLE = 0, H5SHUF_TASK_QUEUED, H5SHUF_TASK_RUNNING, H5SHUF_TASK_DONE };
struct h5shuf_task {
    void (*run)(struct h5shuf_task *task, unsigned thread);
    struct h5shuf_task *next;
    int state;     /* H5SHUF_TASK_*: read and written under the pool's lock once submitted */
    int submitted; /* set by h5shuf__pool_submit; the submitter's own: it clears it when it has used the result */
};
struct h5shuf_pool;

/* A pool of nthreads threads counting the submitter (nthreads - 1 workers; 0 or 1: none, tasks run at
 * submission).  Returns H5SHUF_OK or H5SHUF_ENOMEM; fewer workers than asked when the system refuses
 * threads.  Free with h5shuf__pool_free (accepts NULL), which joins the workers. */
H5SHUF_INTERNAL int h5shuf__pool_create(unsigned nthreads, struct h5shuf_pool **out);
H5SHUF_INTERNAL void h5shuf__pool_free(struct h5shuf_pool *p);
/* Threads that run tasks, the submitter included (1 for NULL). */
H5SHUF_INTERNAL unsigned h5shuf__pool_threads(const struct h5shuf_pool *p);
/* Queue task (FIFO); with no workers it runs now.  The task must stay alive until waited for. */
H5SHUF_INTERNAL void h5shuf__pool_submit(struct h5shuf_pool *p, struct h5shuf_task *task);
/* Return when task has run, running queued tasks meanwhile.  An idle task returns at once. */
H5SHUF_INTERNAL void h5shuf__pool_wait(struct h5shuf_pool *p, struct h5shuf_task *task);
/* Return when every submitted task has run (tasks' states stay DONE until their owners look). */
H5SHUF_INTERNAL void h5shuf__pool_drain(struct h5shuf_pool *p);

/* ---- chunkio.c ---------------------------------------------------------------------------------- */

/* Most filters in a pipeline h5shuf runs itself. */
#define H5SHUF_PIPELINE_MAX 8

/* A chunked dataset's layout and filter pipeline as chunkio sees it. */
struct h5shuf_pipeline {
    int direct;              /* 1: chunks are read/written raw and (de)coded by h5shuf's threads */
    int rank;
    hsize_t cdims[H5S_MAX_RANK];
    uint64_t row_bytes;      /* bytes of one row (file type size * prod(dims[1:])) */
    uint64_t chunk_rows;     /* cdims[0] */
    size_t chunk_bytes;      /* bytes of a whole chunk before filtering */
    int nfilters;
    struct {
        H5Z_filter_t id;     /* shuffle, deflate, fletcher32, 32015 (zstd), 32000 (lzf) or 32008 (bitshuffle) */
        int level;           /* deflate, zstd */
        size_t elem_size;    /* shuffle */
        unsigned flags;      /* H5Z_FLAG_OPTIONAL: a chunk lzf cannot shrink is stored with the filter skipped */
        size_t ncd;          /* the filter's parameters as stored (bitshuffle), at most 8 */
        unsigned cd[8];
    } f[H5SHUF_PIPELINE_MAX];
};

/* Describe dset's pipeline (pl->direct = 0 when h5shuf cannot run it: not chunked, a chunk that splits
 * rows, a variable-length type, another filter).  Returns < 0 on an HDF5 error. */
H5SHUF_INTERNAL int h5shuf__pipeline_probe(hid_t dset, hid_t ftype, struct h5shuf_pipeline *pl);

/* The job's chunk I/O: its thread pool, per-thread codec contexts and chunk buffers. */
struct h5shuf_chunkio;
/* nthreads as for h5shuf__pool_create.  Returns H5SHUF_OK or H5SHUF_ENOMEM.  Free accepts NULL. */
H5SHUF_INTERNAL int h5shuf__chunkio_create(unsigned nthreads, struct h5shuf_chunkio **out);
H5SHUF_INTERNAL void h5shuf__chunkio_free(struct h5shuf_chunkio *cio);
H5SHUF_INTERNAL unsigned h5shuf__chunkio_threads(const struct h5shuf_chunkio *cio);
/* Bytes chunkio holds for chunks of chunk_bytes with nthreads threads (part of the fixed overhead). */
H5SHUF_INTERNAL uint64_t h5shuf__chunkio_bytes(unsigned nthreads, uint64_t chunk_bytes);

/* As h5shuf__read_rows / h5shuf__write_rows, through raw chunks and the pool when dset's pipeline allows
 * (a write must then start on a chunk boundary; a partial last chunk is stored whole, zero-padded), else
 * through HDF5.  cio may be NULL (HDF5 only).  Errors are left on HDF5's error stack; < 0 on error. */
H5SHUF_INTERNAL herr_t h5shuf__chunkio_read(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                            uint64_t count, void *buf);
H5SHUF_INTERNAL herr_t h5shuf__chunkio_write(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                             uint64_t count, const void *buf, int extend);

/* One chunk encoded by the pool ahead of its write (pass 1's pile flushes, which must not wait). */
struct h5shuf_chunk;
/* NULL when out of memory.  Free waits for a pending encode; accepts NULL. */
H5SHUF_INTERNAL struct h5shuf_chunk *h5shuf__chunk_new(void);
H5SHUF_INTERNAL void h5shuf__chunk_free(struct h5shuf_chunkio *cio, struct h5shuf_chunk *c);
/* Queue the encoding of nrows rows (at most pl->chunk_rows; fewer are zero-padded) as one chunk of a
 * dataset with pipeline pl (direct).  rows must stay unchanged until h5shuf__chunk_write.  -1 when out of
 * memory (HDF5's stack untouched). */
H5SHUF_INTERNAL int h5shuf__chunk_encode_start(struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl,
                                               const void *rows, uint64_t nrows, struct h5shuf_chunk *c);
/* Wait for c's encoding and store it as the chunk at row chunk_row of dset (whose extent must cover it).
 * < 0 on error, with the cause on HDF5's error stack. */
H5SHUF_INTERNAL herr_t h5shuf__chunk_write(struct h5shuf_chunkio *cio, hid_t dset, uint64_t chunk_row,
                                           struct h5shuf_chunk *c);

/* A read that overlaps the caller's work (pipelining, DESIGN.md section 4): start reads the stored chunks
 * of rows [start, start + count) of dset now and queues their decoding into buf; finish waits for it.
 * Datasets chunkio cannot run are read at start, by HDF5.  Raw chunk buffers are kept for the next read.
 * Between start and finish, buf must not be touched.  Both return < 0 on error (cause on HDF5's stack);
 * after a failed start, call finish or free before reusing buf. */
struct h5shuf_prefetch;
H5SHUF_INTERNAL struct h5shuf_prefetch *h5shuf__prefetch_new(void); /* NULL: out of memory */
H5SHUF_INTERNAL void h5shuf__prefetch_free(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf); /* waits */
H5SHUF_INTERNAL herr_t h5shuf__prefetch_start(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start,
                                              uint64_t count, void *buf, struct h5shuf_prefetch *pf);
H5SHUF_INTERNAL herr_t h5shuf__prefetch_finish(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf);
/* ---- outputs.c ---------------------------------------------------------------------------------- */

struct h5shuf_writer;

/* One output file: a range of the output order.  The single output is one target over all rows. */
struct h5shuf_target {
    char *path;        /* the final file name */
    char *tmp_path;    /* its temporary name, while it exists */
    char *label;       /* split name; NULL for a shard or the single output */
    uint64_t first;    /* first row, in the output order */
    uint64_t rows;
};

/* Make job->targets from the options (shards, split) and job->out_rows; at plan time.  Errors are
 * H5SHUF_EINVAL naming the option. */
H5SHUF_INTERNAL int h5shuf__outputs_plan(h5shuf_job *job);
/* Refuse a target that is an input, or exists (without force). */
H5SHUF_INTERNAL int h5shuf__outputs_check(h5shuf_job *job);
/* Create every target under its temporary name: datasets of its rows, copied objects, provenance and
 * its range attributes; each is closed again (pass 2 opens one at a time). */
H5SHUF_INTERNAL int h5shuf__outputs_create(h5shuf_job *job);
/* Pass 2 reached the end of the open target (or starts): close it, open the next target with rows and
 * point the writer at it. */
H5SHUF_INTERNAL int h5shuf__outputs_next(h5shuf_job *job, struct h5shuf_writer *w);
/* Close the open target; st != H5SHUF_OK discards it (emptied first).  Returns the first error. */
H5SHUF_INTERNAL int h5shuf__outputs_close(h5shuf_job *job, int st);
/* Move every finished target into place (all or none), or on st != H5SHUF_OK remove them all. */
H5SHUF_INTERNAL int h5shuf__outputs_finish(h5shuf_job *job, int st);
H5SHUF_INTERNAL void h5shuf__outputs_free(h5shuf_job *job);
/* The input (0-based) holding global row id. */
H5SHUF_INTERNAL size_t h5shuf__input_of(const h5shuf_job *job, uint64_t id);

/* ---- mixing.c ----------------------------------------------------------------------------------- */

/* A head of out_rows < rows rows: find job->head_bound, the out_rows-th smallest (key, id), with a heap
 * of out_rows pairs (16 bytes each, within the budget, else H5SHUF_EBUDGET).  Keys only, no data read. */
H5SHUF_INTERNAL int h5shuf__head_bound(h5shuf_job *job);

/* P(X >= chi2) for X ~ chi-square(df); 1 when df = 0. */
H5SHUF_INTERNAL double h5shuf__chi2_upper(double chi2, uint64_t df);

/* ---- piles.c ------------------------------------------------------------------------------------ */

/* Buffer d of a pile, slab or pass-2 load: d < nds holds rows of shuffled dataset d (its file type),
 * d == nds the global row ids (uint64). */
static inline hid_t h5shuf__buf_type(const h5shuf_job *job, size_t d)
{
    /* a vlen dataset's pile dataset holds the lengths of its elements (vlen.c) */
    return d < job->nds && !job->ds[d].vlen ? job->ds[d].ftype : H5T_NATIVE_UINT64;
}
/* Datasets of a pile: nds shuffled, the index, then one payload dataset per vlen dataset. */
static inline size_t h5shuf__pile_nsets(const h5shuf_job *job)
{
    return job->nds + 1 + job->nvlen;
}
static inline uint64_t h5shuf__buf_row_bytes(const h5shuf_job *job, size_t d)
{
    return d < job->nds ? job->ds[d].row_bytes : sizeof(uint64_t);
}

/* nds + 1 buffers of rows rows each (see h5shuf__buf_type); NULL when out of memory (message
 * recorded).  Free with h5shuf__bufs_free, which accepts NULL. */
H5SHUF_INTERNAL unsigned char **h5shuf__bufs_alloc(h5shuf_job *job, uint64_t rows);
H5SHUF_INTERNAL void h5shuf__bufs_free(const h5shuf_job *job, unsigned char **bufs);

/* A pile on disk: its key range, its group in the scratch file, its rows. */
struct h5shuf_pile {
    struct h5shuf_range range;
    uint64_t number;   /* the group is /piles/<number>, 6 digits or more */
    uint64_t rows;
    uint64_t bytes;    /* payload bytes of its vlen rows (0 without vlen datasets) */
};

/* The scratch file and the piles in it, in key order. */
struct h5shuf_scratch {
    char *path;
    hid_t file;
    struct h5shuf_pile *piles;
    size_t npiles, cap;
    uint64_t next_number;
};

H5SHUF_INTERNAL int h5shuf__scratch_create(h5shuf_job *job, const char *dir, struct h5shuf_scratch *sc);
/* The same at a path made from template (ending in XXXXXX, as for mkstemp). */
H5SHUF_INTERNAL int h5shuf__scratch_create_at(h5shuf_job *job, const char *template_path, struct h5shuf_scratch *sc);
/* Close and remove the scratch file.  Safe on a zeroed or half-made scratch. */
H5SHUF_INTERNAL void h5shuf__scratch_destroy(struct h5shuf_scratch *sc);
/* Drop all piles (for a restart of pass 1): unlinks /piles and makes it anew. */
H5SHUF_INTERNAL int h5shuf__scratch_reset(h5shuf_job *job, struct h5shuf_scratch *sc);

/* A pile being filled: its buffer.  Its group and datasets are opened only while a full buffer is
 * written (created at the first write), so HDF5 holds no state per pile between flushes: memory stays
 * flat however many piles there are. */
struct h5shuf_varena;
struct h5shuf_pile_writer {
    unsigned char **buf; /* nds + 1 buffers of cap rows (index: 8 bytes a row) */
    uint64_t nbuf;       /* rows in the buffers */
    uint64_t written;    /* rows on disk or being encoded */
    int created;         /* the pile's group exists */
    struct h5shuf_varena *va; /* nvlen payload buffers (vlen.c), NULL without vlen datasets */
};

/* A full pile buffer handed to the pool: its chunks are being encoded and are stored later, in order. */
struct h5shuf_pile_flush {
    uint64_t k;                  /* the pile */
    uint64_t offset, rows;       /* rows [offset, offset + rows) of the pile */
    unsigned char **buf;         /* the buffers (a spare set while the pile fills a fresh one) */
    struct h5shuf_chunk **chunk; /* nds + 1 */
    int busy;
};

/* A set of m piles being filled over range, each buffering cap rows (= its chunk rows).  With a pool of
 * several threads a full buffer is swapped for a spare one and encoded while scattering goes on
 * (H5SHUF_SPARE_PILE_BUFFERS per thread); the oldest pending flush is stored when no spare is left. */
struct h5shuf_pileset {
    struct h5shuf_range range;
    uint64_t m;
    uint64_t cap;
    struct h5shuf_pile_writer *w;
    struct h5shuf_scratch *sc;
    uint64_t first_number; /* pile k is number first_number + k */
    struct h5shuf_pile_flush *fl; /* nfl pending-flush slots (a ring), 0 when flushes are synchronous */
    size_t nfl, fl_head, fl_count;
    struct h5shuf_pipeline *pl;   /* nds + 1: the pile datasets' pipelines, from the first pile made */
    int pl_ready;
    uint64_t *vchunk;      /* per vlen dataset: payload elements per scratch chunk (= its buffer) */
};

/* Prepare m piles over range (numbers reserved, buffers allocated; groups made at their first flush). */
H5SHUF_INTERNAL int h5shuf__pileset_open(h5shuf_job *job, struct h5shuf_scratch *sc, struct h5shuf_range range,
                                         uint64_t m, uint64_t cap, struct h5shuf_pileset *ps);
/* Append one row (one pointer per dataset) with global id to pile k; flushes a full buffer. */
H5SHUF_INTERNAL int h5shuf__pileset_append(h5shuf_job *job, struct h5shuf_pileset *ps, uint64_t k,
                                           const unsigned char *const *rows, uint64_t id);
/* Flush every buffer, close the datasets, and record the piles (in key order) in out[0..m). */
H5SHUF_INTERNAL int h5shuf__pileset_finish(h5shuf_job *job, struct h5shuf_pileset *ps, struct h5shuf_pile *out);
/* Free a pileset's buffers (after finish, or on error). */
H5SHUF_INTERNAL void h5shuf__pileset_free(const h5shuf_job *job, struct h5shuf_pileset *ps);

/* Open pile p's datasets: dsets[0..nds] (index last).  Caller closes them with h5shuf__pile_close. */
H5SHUF_INTERNAL int h5shuf__pile_open(h5shuf_job *job, struct h5shuf_scratch *sc, const struct h5shuf_pile *p,
                                      hid_t *group, hid_t *dsets);
H5SHUF_INTERNAL void h5shuf__pile_close(hid_t group, hid_t *dsets, size_t n);
/* Create pile number's group with empty datasets (a pile that received no row has none). */
H5SHUF_INTERNAL int h5shuf__pile_create_empty(h5shuf_job *job, struct h5shuf_scratch *sc, uint64_t number);
/* Remove pile p's group (after it has been consumed). */
H5SHUF_INTERNAL int h5shuf__pile_remove(h5shuf_job *job, struct h5shuf_scratch *sc, const struct h5shuf_pile *p);

/* ---- scatter.c ---------------------------------------------------------------------------------- */

/* Pass 1: read every input in slabs and scatter its rows into plan.piles piles.  On return sc->piles
 * lists them in key order. */
H5SHUF_INTERNAL int h5shuf__scatter(h5shuf_job *job, struct h5shuf_scratch *sc);

/* Oversize handling: split every pile over the bound into sub-piles by key range (recursively).
 * Rewrites sc->piles in key order. */
H5SHUF_INTERNAL int h5shuf__split_oversize(h5shuf_job *job, struct h5shuf_scratch *sc);

/* ---- writer.c ----------------------------------------------------------------------------------- */

/* One output dataset's band: rows collected until they fill whole output chunks, then written. */
struct h5shuf_band {
    hid_t dset;            /* not owned */
    hid_t ftype;           /* not owned */
    uint64_t row_bytes;
    unsigned char *buf;    /* rows rows */
    uint64_t rows;         /* capacity: a multiple of the dataset's chunk rows (h5shuf__band_rows) */
    uint64_t n;            /* rows in buf */
    uint64_t next_row;     /* output row of buf's first row (in the whole output order) */
    uint64_t origin;       /* output row of the open target's row 0: writes go to next_row - origin */
    const struct h5shuf_dsinfo *vds; /* the dataset when its rows are variable-length, else NULL */
    struct h5shuf_varena *va;        /* then: the band's payload (buf holds offsets into it) */
};

/* Buffers rows of every output dataset and writes them in bands of whole output chunks, each dataset
 * on its own: datasets chunked very differently (a /y of 65536-row chunks beside an /X of 100-row
 * chunks) then cost the sum of their bands, not a band of their least common multiple. */
struct h5shuf_writer {
    size_t nds;
    struct h5shuf_band *band; /* nds bands, then the index's, then the source index's */
    int has_index, has_source;
    uint64_t pos;             /* rows put so far */
    uint64_t end;             /* the open target ends before this output row (outputs.c switches then) */
};

/* Band rows of one output dataset: a multiple of its chunk rows (one chunk at least) near its share of
 * H5SHUF_BAND_BYTES_MAX (row_bytes / all_row_bytes of it), at most rows (N).  It depends on the datasets
 * only, never on the budget:
 * the output file's bytes follow from the sequence of writes, which must not change with the budget. */
H5SHUF_INTERNAL uint64_t h5shuf__band_rows(const struct h5shuf_dsinfo *ds, uint64_t all_row_bytes, uint64_t rows);
/* Bytes of all the writer's bands (counted in the pass-2 budget). */
H5SHUF_INTERNAL uint64_t h5shuf__writer_bytes(const h5shuf_job *job);
/* Bands for the datasets, and the index and source index when the job asks for them; no target yet
 * (the first put opens one through h5shuf__outputs_next). */
H5SHUF_INTERNAL int h5shuf__writer_init(h5shuf_job *job, struct h5shuf_writer *w);
/* Point the bands at the open target's datasets dsets[0..nds+2) whose row 0 is output row origin. */
H5SHUF_INTERNAL void h5shuf__writer_retarget(struct h5shuf_writer *w, const hid_t *dsets, uint64_t origin, uint64_t end);
/* Append one row (one pointer per dataset) and its global input row id; writes a band when it is full. */
H5SHUF_INTERNAL int h5shuf__writer_put(h5shuf_job *job, struct h5shuf_writer *w, const unsigned char *const *rows,
                                       uint64_t id);
/* Write what is left. */
H5SHUF_INTERNAL int h5shuf__writer_flush(h5shuf_job *job, struct h5shuf_writer *w);
H5SHUF_INTERNAL void h5shuf__writer_free(struct h5shuf_writer *w);

/* ---- gather.c ----------------------------------------------------------------------------------- */

/* Pass 2: for each pile in key order, load it, sort it by key and stream its rows to the writer. */
H5SHUF_INTERNAL int h5shuf__gather(h5shuf_job *job, struct h5shuf_scratch *sc);

/* ---- vlen.c ------------------------------------------------------------------------------------- */

/* Variable-length rows.  In memory a row of a vlen dataset is HDF5's own memory form: elems hvl_t
 * (sequences) or char * (strings, NUL-terminated), pointing into HDF5's allocations (input reads) or
 * an arena (piles loaded from the scratch).  In the scratch a pile stores, per vlen dataset, the
 * elements' lengths in "dN" (uint64, the dataset's shape; sequences: elements, strings: bytes with the
 * NUL) and their concatenated payload in "dN_data" (1-D, the base type or uint8), so no global heap. */
enum { H5SHUF_FIXED = 0, H5SHUF_VLEN_SEQ = 1, H5SHUF_VLEN_STR = 2 };

/* A growable byte buffer; data == NULL when empty. */
struct h5shuf_varena {
    unsigned char *data;
    uint64_t n, cap;
    uint64_t written; /* a pile buffer's: payload elements already in its scratch dataset */
};

/* Why type t cannot be shuffled as variable-length rows (vlen inside a compound, vlen of vlen...), or
 * NULL when it can (or is not variable-length at all). */
H5SHUF_INTERNAL const char *h5shuf__vlen_unsupported(hid_t t);
/* Fill ds's vlen fields from its file type (called for the first input); H5SHUF_OK or an error. */
H5SHUF_INTERNAL int h5shuf__vlen_setup(h5shuf_job *job, struct h5shuf_dsinfo *ds, const char *where);
/* Estimate the payload bytes per row (mean per dataset, variance of the row's sum) from a sample of
 * the inputs' rows; sets ds[].mean_bytes, ds[].plan_row_bytes and job->vlen_var. */
H5SHUF_INTERNAL int h5shuf__vlen_estimate(h5shuf_job *job);
/* Payload (pointer and bytes, the NUL of a string included) of element e of a row in memory form. */
H5SHUF_INTERNAL const void *h5shuf__vlen_elem(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t e,
                                              uint64_t *bytes);
/* Read rows [start, start+n) of dset into buf (memory form, HDF5's allocations).  buf is zeroed first,
 * so h5shuf__vlen_reclaim is safe after a failure too. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_read(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n, void *buf);
/* Free what h5shuf__vlen_read allocated for n rows (H5Dvlen_reclaim) and zero buf. */
H5SHUF_INTERNAL void h5shuf__vlen_reclaim(const struct h5shuf_dsinfo *ds, uint64_t n, void *buf);
/* Load rows [start, start+n) of a pile's vlen dataset (lengths lens, payload data from element *cursor
 * on, which advances) into buf (memory form) with the payload appended to arena a. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_load(const struct h5shuf_dsinfo *ds, hid_t lens, hid_t data, uint64_t start,
                                         uint64_t n, uint64_t *cursor, unsigned char *buf, struct h5shuf_varena *a);
/* Append a row (memory form) to a pile buffer: its lengths to lens, its payload to a.  < 0: no memory. */
H5SHUF_INTERNAL int h5shuf__vlen_pile_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, uint64_t *lens,
                                          struct h5shuf_varena *a);
/* Write the payload buffered in a to a pile's payload dataset (which holds *written elements): whole
 * chunks of chunk elements, or everything when all; the rest stays in a. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_pile_flush(const struct h5shuf_dsinfo *ds, hid_t data, uint64_t chunk, int all,
                                               uint64_t *written, struct h5shuf_varena *a);
/* Append a row (memory form) to an output band: payload copied into a, desc gets offsets into it. */
H5SHUF_INTERNAL int h5shuf__vlen_band_put(const struct h5shuf_dsinfo *ds, const unsigned char *row, unsigned char *desc,
                                          struct h5shuf_varena *a);
/* Write n band rows (offsets in desc, made pointers here) at output row start. */
H5SHUF_INTERNAL herr_t h5shuf__vlen_band_write(const struct h5shuf_dsinfo *ds, hid_t dset, uint64_t start, uint64_t n,
                                               unsigned char *desc, const struct h5shuf_varena *a);
/* Grow a to hold at least need bytes; < 0: no memory. */
/* Payload elements per scratch chunk (and pile buffer) of vlen dataset ds for piles of cap_rows rows. */
H5SHUF_INTERNAL uint64_t h5shuf__vlen_chunk_elems(const h5shuf_job *job, const struct h5shuf_dsinfo *ds,
                                                  uint64_t cap_rows);
/* Bytes of a pile's payload buffer for chunks of chunk elements: the chunk and a quarter more. */
H5SHUF_INTERNAL uint64_t h5shuf__vlen_arena_bytes(const struct h5shuf_dsinfo *ds, uint64_t chunk);
/* Cap the metadata cache of an input or output file when the job has vlen rows. */
H5SHUF_INTERNAL void h5shuf__vlen_limit_cache(const h5shuf_job *job, hid_t file);
H5SHUF_INTERNAL int h5shuf__varena_reserve(struct h5shuf_varena *a, uint64_t need);
H5SHUF_INTERNAL void h5shuf__varena_free(struct h5shuf_varena *a);
/* Bytes pile p needs in pass 2 (rows with their sort records, plus payload), and whether it is over the
 * plan's bounds (rows, or those bytes for vlen rows). */
H5SHUF_INTERNAL uint64_t h5shuf__pile_mem_bytes(const h5shuf_job *job, const struct h5shuf_pile *p);
H5SHUF_INTERNAL int h5shuf__pile_oversize(const h5shuf_job *job, const struct h5shuf_pile *p);

/* ---- job.c -------------------------------------------------------------------------------------- */

/* The phases of a run, shared by h5shuf_run, h5shuf_run_scatter and h5shuf_run_gather. */

/* Plan (if not done), refuse an output that is an input or exists (without force), check free space. */
H5SHUF_INTERNAL int h5shuf__run_prepare(h5shuf_job *job);

/* The output files are made with h5shuf__outputs_create, closed with h5shuf__outputs_close and moved
 * into place (or removed) with h5shuf__outputs_finish (outputs.c). */
/* Move the finished file tmp_path to the output's name; without force, never replace a file that appeared.
 * (The pile file of a scatter; outputs.c commits the outputs.) */
H5SHUF_INTERNAL int h5shuf__output_commit(h5shuf_job *job, const char *tmp_path);
/* Pass 1 and the oversize handling (recursion or restarts): on return every pile is within its bound. */
H5SHUF_INTERNAL int h5shuf__scatter_all(h5shuf_job *job, struct h5shuf_scratch *sc);
/* The directory part of path ("." when it has none); caller frees; NULL when out of memory. */
H5SHUF_INTERNAL char *h5shuf__dir_of(const char *path);

/* ---- lazy.c ------------------------------------------------------------------------------------- */

/* Planning a scatter: the pile file takes the output's place (out_spec.file). */
H5SHUF_INTERNAL int h5shuf__piles_scatter_setup(h5shuf_job *job);
/* Planning a gather, before the inputs are opened: read the pile file, add its inputs, seed and output
 * options.  Errors name the pile file. */
H5SHUF_INTERNAL int h5shuf__piles_load(h5shuf_job *job);
/* Planning a gather, after the inputs are opened: check they are the ones scattered, unchanged, and that
 * the largest pile fits the budget; put the pile file's figures in the plan. */
H5SHUF_INTERNAL int h5shuf__piles_check(h5shuf_job *job);
/* Release what h5shuf__piles_load kept (the open pile file).  Safe when there is none. */
H5SHUF_INTERNAL void h5shuf__piles_free(h5shuf_job *job);

/* A public run (h5shuf_run, _run_scatter, _run_gather): a clean error, HDF5's printing off, fn, and the
 * job's chunk I/O released whatever fn returned. */
H5SHUF_INTERNAL int h5shuf__public_run(h5shuf_job *job, int (*fn)(h5shuf_job *job));

/* Append input spec to the job (parsed; nothing opened).  H5SHUF_OK, H5SHUF_ENOMEM or H5SHUF_EINVAL. */
H5SHUF_INTERNAL int h5shuf__input_append(h5shuf_job *job, const char *spec);

/* Clear the job's recorded error (each public call starts clean). */
H5SHUF_INTERNAL void h5shuf__err_clear(h5shuf_job *job);

/* HDF5's automatic error printing, switched off for the span of one public call and restored. */
struct h5shuf_quiet {
    H5E_auto2_t func;
    void *data;
};
H5SHUF_INTERNAL void h5shuf__quiet_begin(struct h5shuf_quiet *q);
H5SHUF_INTERNAL void h5shuf__quiet_end(const struct h5shuf_quiet *q);

/* Report progress; returns H5SHUF_ECANCELED (recorded) when the callback asks to stop. */
H5SHUF_INTERNAL int h5shuf__progress(h5shuf_job *job, h5shuf_phase phase, uint64_t done, uint64_t total);

/* "file:/path" of dataset d of input f, for messages (static buffer per call site is not allowed: the
 * caller passes buf). */
H5SHUF_INTERNAL const char *h5shuf__where(const h5shuf_job *job, size_t f, size_t d, char *buf, size_t cap);

#endif /* H5SHUF_INTERNAL_H */
