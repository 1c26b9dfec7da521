/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * jobplan.c - planning a job (h5shuf_job_plan): the options checked, the inputs opened and their
 * datasets described, the output datasets and files planned, the seed drawn, the strategy chosen (the two
 * passes or the direct path) with its plan, the objects copied besides the rows, and the disk estimates.
 * A scatter's and a gather's setup are jobpiles.c's.  run.c runs what is planned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>

#include "abi.h"
#include "addrspace.h"
#include "ckptplan.h"
#include "chunkio.h"
#include "direct.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "filters.h"
#include "h5err.h"
#include "head.h"
#include "job.h"
#include "jobpiles.h"
#include "output.h"
#include "pilefile.h"
#include "plan.h"
#include "pool.h"
#include "strata.h"
#include "targets.h"
#include "vlen.h" /* h5shuf__vlen_read_limit */
#include "writer.h"

/*-*************************************
*  Options, filters and inputs
***************************************/

/* The options that need no file: modes and outputs that go together, paths, the budget. */
static int check_options(h5shuf_job *job)
{
    struct h5shuf_err *err = &job->err;
    if (job->mode == H5SHUF_MODE_SCATTER && (job->opts.shards || job->split || job->source_index_path))
        return h5shuf__fail(err, H5SHUF_EINVAL,
                            "--shards, --split and --source-index shape the output: give them to the gather, not the scatter");
    if (job->mode != H5SHUF_MODE_RUN && job->opts.head_set)
        return h5shuf__fail(err, H5SHUF_EINVAL,
                            "--head chooses the rows before pass 1: it works with the one-shot shuffle only, not with "
                            "scatter or gather");
    if (job->in.n == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "no input given");
    if (!job->out_spec.file)
        return h5shuf__fail(err, H5SHUF_EINVAL, "no output given");
    if (job->opts.mem_limit_bytes == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "memory budget of 0 bytes");
    if (job->index_path && job->index_path[0] != '/')
        return h5shuf__fail(err, H5SHUF_EINVAL, "--index '%s': a dataset path must start with '/'", job->index_path);
    if (job->source_index_path && job->source_index_path[0] != '/')
        return h5shuf__fail(err, H5SHUF_EINVAL, "--source-index '%s': a dataset path must start with '/'",
                            job->source_index_path);
    if (job->source_index_path && job->index_path && strcmp(job->index_path, job->source_index_path) == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--index and --source-index name the same dataset '%s'", job->index_path);
    if (job->opts.tmpdir && !*job->opts.tmpdir)
        return h5shuf__fail(err, H5SHUF_EINVAL, "empty scratch directory name (--tmpdir)");
    if (job->opts.stratify && (job->mode != H5SHUF_MODE_RUN || job->opts.head_set))
        return h5shuf__fail(err, H5SHUF_EINVAL, "--stratify orders the rows of the one-shot shuffle: it cannot be "
                                                "combined with scatter, gather or --head");
    if (job->opts.stratify && !job->opts.shards && !job->split)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--stratify gives every output file each group's share of its rows: "
                                                "give the files with --shards or --split");
    if (job->opts.check && (job->mode != H5SHUF_MODE_RUN || job->opts.shards || job->split || job->opts.head_set))
        return h5shuf__fail(err, H5SHUF_EINVAL, "--check verifies one whole output of a one-shot shuffle; it cannot be "
                                                "combined with scatter, gather, --shards, --split or --head");
    return H5SHUF_OK;
}

/* The scratch filters of the piles' ids (and vlen lengths): byte shuffle + codec at level 1, which shrinks
 * ids that increase by about M from row to row to a few bits each; none for codec none.  The data's codec
 * when scratch compression is on (a pile file made with gzip stays readable without a plugin), but zstd
 * for lz4's rows: the ids are a few bytes a row, which zstd packs tighter. */
static void scratch_ids_packed(h5shuf_job *job, enum h5shuf_codec codec)
{
    if (codec == H5SHUF_CODEC_LZ4)
        codec = H5SHUF_CODEC_ZSTD;
    job->scratch_id_filters = (struct h5shuf_filters){.shuffle = codec != H5SHUF_CODEC_NONE, .codec = codec, .level = 1};
}

/* h5shuf's filters registered with HDF5, and the filter and chunk specs of the options parsed. */
static int parse_filters(h5shuf_job *job)
{
    int st = h5shuf__filters_register();
    if (st != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "cannot register h5shuf's filters with HDF5");
    st = h5shuf__filters_parse(job->compression, "keep", 1, "--compression", &job->out_filters, &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__filters_parse(job->scratch_compression, "zstd:1+shuffle", 0, "--scratch-compression",
                                   &job->scratch_filters, &job->err);
    if (st == H5SHUF_OK)
        scratch_ids_packed(job, job->scratch_filters.codec);
    if (st == H5SHUF_OK && job->chunk_shape) {
        uint64_t dims[H5SHUF_RANK_MAX];
        int rank;
        st = h5shuf__chunk_parse(job->chunk_shape, dims, &rank, &job->err);
    }
    return st;
}

/* An input's file identity and place, sorted to find the same file named twice. */
struct file_id {
    uint64_t dev, ino;
    size_t f; /* the input's index */
};

static int file_id_cmp(const void *a, const void *b)
{
    const struct file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return x->f < y->f ? -1 : x->f > y->f;
}

/* The dataset paths input f is read at (a whole-file input's: the first input's, discovered). */
static const struct h5shuf_spec *input_paths(const struct h5shuf_inputs *in, size_t f)
{
    return in->v[f].spec.npaths ? &in->v[f].spec : &in->v[0].spec;
}

/* A warning for each input that is the same file (st_dev and st_ino, so a second name or a hard link is
 * found too) with the same datasets as an earlier one: its rows are shuffled in twice, which may be meant
 * (oversampling) but is more often a slip, so the run goes on.  A gather's inputs were warned of by its
 * scatter.  O(n log n) for thousands of inputs. */
static int warn_same_inputs(h5shuf_job *job)
{
    const struct h5shuf_inputs *in = &job->in;
    if (job->mode == H5SHUF_MODE_GATHER || in->n < 2)
        return H5SHUF_OK;
    struct file_id *ids = H5SHUF_FAULT() ? NULL : malloc(in->n * sizeof *ids);
    if (!ids)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; f < in->n; f++)
        ids[f] = (struct file_id){in->v[f].dev, in->v[f].ino, f};
    qsort(ids, in->n, sizeof *ids, file_id_cmp);
    int st = H5SHUF_OK;
    for (size_t k = 1, first = 0; k < in->n && st == H5SHUF_OK; k++) {
        if (ids[k].dev != ids[first].dev || ids[k].ino != ids[first].ino) {
            first = k; /* the earliest input of this file */
            continue;
        }
        const struct h5shuf_spec *a = input_paths(in, ids[first].f), *b = input_paths(in, ids[k].f);
        int same = a->npaths == b->npaths && in->v[ids[first].f].src != in->v[ids[k].f].src; /* (a weight's copies are meant) */
        for (size_t d = 0; same && d < a->npaths; d++)
            same = strcmp(a->paths[d], b->paths[d]) == 0;
        if (same)
            st = h5shuf__job_warn(job, "input %zu (%s) is the same file as input %zu (%s): its rows are shuffled in twice",
                      ids[k].f + 1, in->v[ids[k].f].spec.file, ids[first].f + 1, in->v[ids[first].f].spec.file);
    }
    free(ids);
    return st;
}

/*-*************************************
*  Objects, strata and bands
***************************************/

/* What the output files hold besides the rows: the first input's objects (whole-file mode) or the
 * datasets' scales, references checked (objcopy.c); and the warnings the options allowed. */
static int plan_objects(h5shuf_job *job)
{
    const struct h5shuf_input *first = &job->in.v[0];
    char where[600];
    for (size_t d = 0; job->in.n > 1 && d < job->dsets.n; d++) /* (the reference map is the first input's) */
        if (h5shuf__type_has_refs(job->dsets.ds[d].ftype))
            return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED,
                                "%s: rows of references from more than one input file are not supported yet (each "
                                "file's references name its own objects): shuffle each file on its own",
                                h5shuf__where(&job->in, &job->dsets, 1, d, where, sizeof where));
    int st = h5shuf__objcopy_plan(&job->objects, first, &job->dsets, job->in.whole_file,
                                  (const char *const *)job->in.extra, job->in.nextra, job->opts.drop_references,
                                  job->opts.allow_external, &job->err);
    if (st == H5SHUF_OK && job->in.external) /* datasets whose rows are in other files: read (--allow-external) */
        st = h5shuf__job_warn(job, "%s", job->in.external);
    if (st == H5SHUF_OK && job->objects.external)
        st = h5shuf__job_warn(job, "%s; its copy refers to that file as the input's does", job->objects.external);
    const struct h5shuf_drops *drops = &job->objects.drops;
    for (size_t k = 0; st == H5SHUF_OK && k < drops->n; k++) {
        unsigned more = drops->count[k] - 1;
        if (more)
            st = h5shuf__job_warn(job, "%s: written as a null reference, and %u more reference%s there (--drop-references)",
                      drops->note[k], more, more == 1 ? "" : "s");
        else
            st = h5shuf__job_warn(job, "%s: written as a null reference (--drop-references)", drops->note[k]);
    }
    for (size_t d = 0; st == H5SHUF_OK && d < job->dsets.n; d++)
        if (job->dsets.ds[d].lossy)
            st = h5shuf__job_warn(job, "%s:%s: rows re-encoded through the lossy filter %d (%s); recorded in h5shuf_lossy "
                           "(--allow-lossy)",
                      job->out_spec.file, job->dsets.ds[d].out_path, job->dsets.ds[d].lossy, job->dsets.ds[d].lossy_name);
    job->of = (struct h5shuf_outfile){&job->dsets, &job->in, job->index_path, job->source_index_path, job->seed,
                                      &job->objects, job->opts.drop_references, job->strata_text};
    return st;
}

/* --stratify: the groups (--mix's domains, else the inputs as given) and the strata (the output files) of
 * the stratified order (strata.h), once the seed and the weighted inputs' samples are drawn. */
static int plan_strata(h5shuf_job *job)
{
    struct h5shuf_err *err = &job->err;
    const struct h5shuf_inputs *in = &job->in;
    const size_t ngroups = job->mix ? job->mixture.n : in->nsrc;
    h5shuf__strata_free(job->strata); /* (a job planned again) */
    free(job->strata);
    free(job->strata_text);
    uint64_t *rows = malloc((in->n + 1) * sizeof *rows), *ends = malloc((job->out.n + 1) * sizeof *ends);
    size_t *group = malloc((in->n + 1) * sizeof *group);
    size_t cap = 64 + 24 * in->nsrc; /* the head line, and " %zu" an input */
    for (size_t t = 0; job->mix && t < job->mixture.n; t++)
        cap += strlen(job->mixture.names[t]) + 16; /* "; NAME: inputs" (a domain may have none) */
    job->strata = calloc(1, sizeof *job->strata);
    job->strata_text = malloc(cap);
    int st = H5SHUF_OK;
    if (!rows || !ends || !group || !job->strata || !job->strata_text)
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t e = 0; st == H5SHUF_OK && e < in->n; e++) {
        rows[e] = in->v[e].rows;
        group[e] = job->mix ? job->mix_tag[in->v[e].src] : in->v[e].src;
    }
    for (size_t k = 0; st == H5SHUF_OK && k < job->out.n; k++)
        ends[k] = job->out.v[k].first + job->out.v[k].rows;
    if (st == H5SHUF_OK) { /* "web: inputs 0 1; code: inputs 2", or "each input" */
        char *p = job->strata_text;
        p += sprintf(p, "%zu output files; groups: ", job->out.n);
        if (!job->mix)
            p += sprintf(p, "each input");
        for (size_t t = 0; job->mix && t < job->mixture.n; t++) {
            p += sprintf(p, "%s%s: inputs", t ? "; " : "", job->mixture.names[t]);
            for (size_t f = 0; f < job->nmix; f++)
                if (job->mix_tag[f] == t)
                    p += sprintf(p, " %zu", f);
        }
    }
    if (st == H5SHUF_OK) {
        int rc = h5shuf__strata_make(job->strata, job->seed, in->n, rows, group, ngroups, job->out.n, ends);
        if (rc == -2)
            st = h5shuf__fail(err, H5SHUF_EINVAL, "--stratify: %zu groups x %zu output files is more than %llu cells of counts",
                              ngroups, job->out.n, (unsigned long long)H5SHUF_STRATA_CELLS_MAX);
        else if (rc != 0)
            st = h5shuf__fail(err, rc == -1 ? H5SHUF_ENOMEM : H5SHUF_EINVAL,
                              rc == -1 ? "out of memory" : "--stratify: no rounding of the counts was found");
    }
    free(rows);
    free(ends);
    free(group);
    return st;
}

/* The seed given, or a random one from the OS. */
static int draw_seed(h5shuf_job *job)
{
    if (job->opts.seed_set)
        job->seed = job->opts.seed;
    else if (getrandom(&job->seed, sizeof job->seed, 0) != (ssize_t)sizeof job->seed)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "cannot draw a random seed: %s", strerror(errno));
    return H5SHUF_OK;
}

/* The output bands (writer.h): double-buffered when there are codec threads, unless the second buffers
 * would take more than an eighth of the budget (a small budget keeps its bytes for the piles). */
static void plan_bands(h5shuf_job *job)
{
    const unsigned threads = h5shuf__pool_threads_for(job->opts.threads);
    const int index = job->index_path != NULL, source = job->source_index_path != NULL;
    uint64_t one = h5shuf__writer_bytes(&job->dsets, job->out_rows, index, source, 1);
    uint64_t two = h5shuf__writer_bytes(&job->dsets, job->out_rows, index, source, threads);
    job->band_threads = threads > 1 && two - one <= job->opts.mem_limit_bytes / 8 ? threads : 1;
    job->band_bytes = job->band_threads > 1 ? two : one;
}

/*-*************************************
*  Strategy: one pass, two passes, direct
***************************************/

/* Do the rows fit the budget whole, beside the bands (a pass 2 of one pile, not pipelined: each row,
 * its id, key/index pair and radix scratch)?  Then the one-shot shuffle reads them once, sorts them in
 * memory and writes them, without a scratch file: the two passes with one pile whose load is the read.
 * Fixed-size rows of a whole shuffle only (a head's, a scatter's and a gather's piles are kept apart), with
 * the strategy left to the plan (--strategy two-pass asks for a scratch file), and not when the tests
 * bound the piles (--debug-pile-bound forces recursion), nor in a distributed run. */
static int one_pass_fits(const h5shuf_job *job)
{
    if (job->mode != H5SHUF_MODE_RUN || job->opts.strategy != H5SHUF_STRATEGY_AUTO || job->dsets.nvlen ||
        job->out_rows != job->in.rows || job->debug_pile_bound_rows || job->ckpt.ranks)
        return 0; /* (a distributed run's processes scatter their shares and exchange piles: two passes) */
    h5shuf_u128 need = (h5shuf_u128)job->in.rows * (job->dsets.row_bytes + H5SHUF_PASS2_ROW_OVERHEAD) + job->band_bytes;
    return need <= job->opts.mem_limit_bytes;
}

/* The one pass reads the inputs straight into its pile, so its slab is only how many rows are read at a
 * time: whole chunk rows of every dataset (a multiple of their chunk rows' least common multiple, at
 * least the plan's slab), so that no chunk is decoded twice. */
static uint64_t one_pass_slab_rows(const struct h5shuf_datasets *dsets, uint64_t slab, uint64_t rows)
{
    uint64_t l = 1;
    for (size_t d = 0; d < dsets->n; d++) {
        uint64_t a = l, b = dsets->ds[d].in_chunk_rows_max;
        while (b) { /* Euclid's gcd of l and the chunk rows */
            uint64_t t = a % b;
            a = b;
            b = t;
        }
        uint64_t c = dsets->ds[d].in_chunk_rows_max / a;
        if (c && l > rows / c)
            return rows;
        l *= c ? c : 1;
    }
    slab = slab > l ? slab - slab % l : l;
    return slab < rows ? slab : rows;
}

/* The plan of piles and buffers (plan.c) for the opened inputs; its error names the first dataset. */
static int plan_piles(h5shuf_job *job, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = &job->dsets;
    uint64_t *chunk_rows = malloc(2 * (dsets->n ? dsets->n : 1) * sizeof *chunk_rows);
    if (!chunk_rows)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < dsets->n; d++) { /* the slab's chunk cache (plan.h); vlen rows: HDF5's path */
        chunk_rows[d] = dsets->ds[d].vlen ? 0 : dsets->ds[d].in_chunk_rows_max;
        chunk_rows[dsets->n + d] = dsets->ds[d].row_bytes;
    }
    struct h5shuf_plan_in pin = {
        .rows = job->in.rows,
        .row_bytes = dsets->row_bytes,
        .ndatasets = dsets->n,
        .mem_limit_bytes = job->opts.mem_limit_bytes,
        .band_bytes = job->band_bytes,
        .slab_align_rows = dsets->ds[0].chunk_rows,
        .debug_pile_bound_rows = job->debug_pile_bound_rows,
        .threads = h5shuf__pool_threads_for(job->opts.threads),
        .no_pipeline = dsets->nvlen > 0,
        .ranks = job->ckpt.ranks,
        .pile_rows = job->out_rows,
        .row_var = dsets->vlen_var,
        .chunk_rows = chunk_rows,
        .ds_row_bytes = chunk_rows + dsets->n,
    };
    for (size_t d = 0; dsets->nvlen && d < dsets->n; d++) /* vlen rows: plan by bytes too */
        pin.mem_row_bytes += dsets->ds[d].row_bytes;
    memset(&job->plan, 0, sizeof job->plan);
    int st = h5shuf__plan_make(&pin, &job->plan, err);
    job->piles_uncapped = st == H5SHUF_OK ? h5shuf__plan_piles_uncapped(&pin) : 0;
    free(chunk_rows);
    job->one_pass = st == H5SHUF_OK && one_pass_fits(job);
    if (job->one_pass) { /* one pile of every row, loaded by reading the inputs */
        h5shuf_plan *p = &job->plan;
        p->slab_cache_bytes = 0;
        p->slab_rows = one_pass_slab_rows(dsets, p->slab_rows, job->in.rows);
        p->piles = 1;
        p->pile_target_rows = p->pile_bound_rows = job->in.rows;
        p->pile_buffer_rows = h5shuf__plan_pile_buffer_rows(p, 1);
        p->pipelined = 0;
        p->mem_planned_bytes = job->in.rows * (dsets->row_bytes + H5SHUF_PASS2_ROW_OVERHEAD) + job->band_bytes;
    }
    job->plan.seed = job->seed;
    job->plan.strategy = H5SHUF_STRATEGY_TWO_PASS;
    return st;
}

/* The plan of the direct path (direct.h, plan.c) for the opened inputs. */
static int plan_direct(h5shuf_job *job, struct h5shuf_err *err)
{
    free(job->direct_rows.held);
    int st = h5shuf__direct_rows(&job->in, &job->dsets, job->opts.mem_limit_bytes, &job->direct_rows, err);
    struct h5shuf_direct_in din = {
        .rows = job->in.rows,
        .out_rows = job->out_rows,
        .read_row_bytes = job->direct_rows.read_row_bytes,
        .held_bytes = job->direct_rows.held_bytes,
        .band_bytes = job->band_bytes,
        .mem_limit_bytes = job->opts.mem_limit_bytes,
        .threads = h5shuf__pool_threads_for(job->opts.threads),
    };
    if (st == H5SHUF_OK)
        st = h5shuf__plan_direct(&din, &job->direct_plan, err);
    /* the testing knob of the piles' bound bounds the windows too: forces the halving of full ones */
    uint64_t debug = job->debug_pile_bound_rows;
    if (st == H5SHUF_OK && debug && debug < job->direct_plan.window_rows)
        job->direct_plan.window_rows = debug;
    return st;
}

/* The plan's fields for the direct path (the common ones are the two-pass plan's, filled even when it
 * failed). */
static void take_direct(h5shuf_job *job)
{
    h5shuf_plan *p = &job->plan;
    p->piles = p->pile_target_rows = p->pile_bound_rows = p->slab_rows = p->pile_buffer_rows = p->pile_bound_bytes = 0;
    p->strategy = H5SHUF_STRATEGY_DIRECT;
    job->one_pass = 0;
    p->direct_windows = job->direct_plan.windows;
    p->direct_slots = job->direct_plan.slots;
    p->mem_planned_bytes = job->direct_plan.mem_bytes;
    p->pipelined = job->direct_plan.slots > 1;
}

/* Choose the strategy (h5shuf_strategy) and make its plan: the direct path when rows of at least
 * H5SHUF_DIRECT_ROW_BYTES_MIN are read alone (one row a chunk) and it fits the budget, or when it is the
 * only one that fits; else the two passes.  The reason goes to strategy_why; an error names the first
 * dataset and the smallest budget of the path that would be taken. */
static int plan_strategy(h5shuf_job *job)
{
    const h5shuf_strategy want = job->opts.strategy;
    char *why = job->strategy_why;
    const size_t cap = sizeof job->strategy_why;
    struct h5shuf_err e2 = {0}, ed = {0};
    int st2 = H5SHUF_OK, std = H5SHUF_OK, st;
    if (want != H5SHUF_STRATEGY_AUTO && want != H5SHUF_STRATEGY_TWO_PASS && want != H5SHUF_STRATEGY_DIRECT)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "unknown strategy %d", (int)want);
    if (job->mode != H5SHUF_MODE_RUN && want == H5SHUF_STRATEGY_DIRECT)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the direct strategy is the one-shot shuffle's: a scatter or "
                                                      "gather runs the two passes through its pile file");
    st2 = plan_piles(job, &e2);
    if (st2 == H5SHUF_ENOMEM || job->mode != H5SHUF_MODE_RUN || want == H5SHUF_STRATEGY_TWO_PASS) {
        snprintf(why, cap, "two-pass: %s", job->mode != H5SHUF_MODE_RUN ? "a scatter or gather (through a pile file)"
                                                                         : "asked for (--strategy two-pass)");
        st = st2;
        job->err = e2;
    } else {
        std = plan_direct(job, &ed);
        if (std != H5SHUF_OK && std != H5SHUF_EBUDGET) { /* out of memory, an input unreadable: not a choice */
            job->err = ed;
            return std;
        }
        const struct h5shuf_direct_rows *dr = &job->direct_rows;
        int alone = dr->read_row_bytes >= H5SHUF_DIRECT_ROW_BYTES_MIN && dr->chunk_rows == 1;
        int direct = want == H5SHUF_STRATEGY_DIRECT || (std == H5SHUF_OK && (alone || st2 != H5SHUF_OK));
        if (want == H5SHUF_STRATEGY_DIRECT)
            snprintf(why, cap, "direct: asked for (--strategy direct)");
        else if (direct && alone)
            snprintf(why, cap, "direct: rows of %llu bytes are read one at a time (chunks of one row), each byte read "
                               "once and written once, no scratch", (unsigned long long)dr->read_row_bytes);
        else if (direct)
            snprintf(why, cap, "direct: the two passes need more memory than the budget; the direct path fits");
        else if (job->one_pass)
            snprintf(why, cap, "two-pass in one: the rows fit the budget, so they are read once, sorted in memory and "
                               "written, no scratch");
        else if (dr->read_row_bytes < H5SHUF_DIRECT_ROW_BYTES_MIN)
            snprintf(why, cap, "two-pass: rows of %llu bytes (under %u) are read faster in slabs",
                     /* (0 when every dataset is small enough for the direct path to hold whole) */
                     (unsigned long long)(dr->read_row_bytes ? dr->read_row_bytes : job->dsets.row_bytes),
                     H5SHUF_DIRECT_ROW_BYTES_MIN);
        else if (dr->chunk_rows > 1)
            snprintf(why, cap, "two-pass: a row read alone would decode a chunk of %llu rows",
                     (unsigned long long)dr->chunk_rows);
        else
            snprintf(why, cap, "two-pass: the direct path needs %llu bytes, more than the budget",
                     (unsigned long long)job->direct_plan.min_bytes);
        job->plan.direct_min_bytes = job->direct_plan.min_bytes;
        if (direct) {
            st = std;
            job->err = ed;
            take_direct(job);
        } else if (st2 != H5SHUF_OK && alone) { /* the path that would be taken says its minimum */
            st = std;
            job->err = ed;
        } else {
            st = st2;
            job->err = e2;
            if (st2 == H5SHUF_EBUDGET && std == H5SHUF_EBUDGET && job->direct_plan.min_bytes < UINT64_MAX)
                snprintf(job->err.msg + strlen(job->err.msg), sizeof job->err.msg - strlen(job->err.msg),
                         " (the direct path: %llu bytes)", (unsigned long long)job->direct_plan.min_bytes);
        }
    }
    const h5shuf_plan *p = &job->plan;
    if (st == H5SHUF_OK && p->strategy == H5SHUF_STRATEGY_TWO_PASS && !job->one_pass &&
        p->piles > job->piles_uncapped) /* pass 2's cap (plan.h) made the piles smaller than the budget would */
        snprintf(why + strlen(why), cap - strlen(why), "; piles of at most %u MiB in pass 2 (larger ones are no faster): "
                 "%llu piles, not the %llu the budget would hold", (unsigned)(H5SHUF_PASS2_BYTES_MAX >> 20),
                 (unsigned long long)p->piles, (unsigned long long)job->piles_uncapped);
    if (st != H5SHUF_OK) { /* say which datasets the rows come from */
        char where[1024];
        snprintf(where, sizeof where, "%s:%s: ", job->in.v[0].spec.file, job->dsets.ds[0].in_path);
        h5shuf__err_prefix(&job->err, where);
    }
    return st;
}

/*-*************************************
*  Scratch and disk
***************************************/

/* Bytes of memory the system can give without swapping (MemAvailable of /proc/meminfo); 0 when unknown.
 * Tests stand in a smaller machine with H5SHUF_DEBUG_MEM_AVAILABLE (bytes): a run larger than its page
 * cache on files of a few MiB. */
static uint64_t mem_available(void)
{
    const char *debug = getenv("H5SHUF_DEBUG_MEM_AVAILABLE");
    if (debug && *debug)
        return strtoull(debug, NULL, 10);
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kib << 10;
}

/* The scratch file's filters when the options leave them to h5shuf: its pages stay in the page cache when
 * it takes at most half of the memory available (N rows and their ids, uncompressed), and then compressing
 * it only costs time; larger, it goes to the disk, and zstd-1 + shuffle halves what is written and read
 * (docs/design.md section 4).  The ids stay packed (zstd-1 + shuffle): 8 bytes a row are half again the
 * scratch of 16-byte rows, and moving them through the page cache cost more than packing them (measured:
 * docs/benchmark.md, section "The scratch's filters").
 * A scatter's pile file, a product that outlives the run, keeps zstd-1 + shuffle. */
static int plan_scratch_filters(h5shuf_job *job)
{
    h5shuf_u128 raw = (h5shuf_u128)job->in.rows * (job->dsets.row_bytes + sizeof(uint64_t));
    uint64_t avail = mem_available();
    job->beyond_cache = avail > 0 && raw > avail / 2;
    job->scratch_adaptive = 0;
    if (job->scratch_compression || job->mode != H5SHUF_MODE_RUN)
        return H5SHUF_OK;
    job->scratch_adaptive = job->beyond_cache; /* (plan_disk: when the free space holds it uncompressed) */
    if (avail == 0 || raw > avail / 2)
        return H5SHUF_OK;
    scratch_ids_packed(job, H5SHUF_CODEC_ZSTD);
    return h5shuf__filters_parse("none", "none", 0, "--scratch-compression", &job->scratch_filters, &job->err);
}

/* Where the scratch file goes (job->scratch_dir): --tmpdir, else $TMPDIR, else the output's directory; a
 * scatter's scratch file is the pile file itself, written next to its final name. */
static int choose_scratch_dir(h5shuf_job *job)
{
    const char *env = getenv("TMPDIR"), *out = job->out.v[0].path;
    free(job->scratch_dir);
    job->scratch_dir = job->mode == H5SHUF_MODE_SCATTER ? h5shuf__dir_of(out)
                       : job->opts.tmpdir                ? strdup(job->opts.tmpdir)
                       : env && *env                     ? strdup(env)
                                                         : h5shuf__dir_of(out);
    return job->scratch_dir ? H5SHUF_OK : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
}

/* Fill the plan's disk estimates and free space (see h5shuf_plan). */
static int plan_disk(h5shuf_job *job)
{
    h5shuf_plan *p = &job->plan;
    const char *out = job->out.v[0].path;
    char *out_dir = h5shuf__dir_of(out);
    if (!job->scratch_dir || !out_dir) {
        free(out_dir);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    p->input_stored_bytes += job->in.stored_bytes;
    for (size_t d = 0; d < job->dsets.n; d++) /* a vlen dataset's payload is in the global heap: estimate it */
        if (job->dsets.ds[d].vlen)
            p->input_stored_bytes += job->in.rows * job->dsets.ds[d].plan_row_bytes;
    uint64_t stored = p->input_stored_bytes < p->total_bytes ? p->input_stored_bytes : p->total_bytes;
    int scratch_packed = job->scratch_filters.codec != H5SHUF_CODEC_NONE;
    p->scratch_estimate_bytes = (scratch_packed ? stored : p->total_bytes) + 8 * p->rows;
    /* Kept filters: about the input's stored size.  No codec: the raw size.  A new codec: the stored
     * size when the input was compressed too, else (no ratio to go by) the raw size. */
    p->output_estimate_bytes = job->out_filters.keep || job->out_filters.codec != H5SHUF_CODEC_NONE ? stored : p->total_bytes;
    if (job->mode == H5SHUF_MODE_SCATTER) /* the pile file is the scatter's only output */
        p->output_estimate_bytes = 0;
    if (job->mode == H5SHUF_MODE_GATHER || p->strategy == H5SHUF_STRATEGY_DIRECT || job->one_pass) /* piles exist, or none */
        p->scratch_estimate_bytes = 0;
    if (job->out_rows < job->in.rows) /* a head: its share */
        p->output_estimate_bytes = (uint64_t)((long double)p->output_estimate_bytes * job->out_rows / job->in.rows);
    dev_t ds, dout;
    p->scratch_free_bytes = h5shuf__free_bytes(job->scratch_dir, &ds);
    p->output_free_bytes = h5shuf__free_bytes(out_dir, &dout);
    p->same_filesystem = ds != 0 && ds == dout;
    if (job->scratch_adaptive && p->scratch_estimate_bytes) { /* chunks of rows stored as they are, maybe all */
        const uint64_t raw = p->total_bytes + 8 * p->rows, out = p->same_filesystem ? p->output_estimate_bytes : 0;
        if (!p->scratch_free_bytes || raw + out <= p->scratch_free_bytes)
            p->scratch_estimate_bytes = raw;
        else
            job->scratch_adaptive = 0; /* no room for that: every chunk compressed */
    }
    free(out_dir);
    job->out_mode = 0666;
    struct stat sb;
    for (size_t f = 0; f < job->in.n; f++)
        if (stat(h5shuf__input_path(&job->in.v[f]), &sb) == 0)
            job->out_mode &= sb.st_mode;
    if (job->mode == H5SHUF_MODE_GATHER && stat(job->piles_path, &sb) == 0)
        job->out_mode &= sb.st_mode;
    return H5SHUF_OK;
}

/*-*************************************
*  The plan
***************************************/

/* Bytes of chunk buffers a run holds beyond its plan: each codec thread (and the caller) up to 4 chunks
 * (raw and encoded, stage buffers) of the largest chunk of any dataset, input or output, and the encoded
 * chunks of two output bands of each dataset (docs/guide.md section 6: about 24 MiB over -m with 1 MiB
 * chunks and 2 threads, 38 MiB with 16 MiB chunks). */
static uint64_t chunk_buffer_bytes(const struct h5shuf_datasets *dsets, unsigned threads)
{
    uint64_t largest = 0, out = 0;
    for (size_t d = 0; d < dsets->n; d++) {
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        uint64_t in_rows = ds->in_chunk_rows_max > 1 ? ds->in_chunk_rows_max : 0;
        uint64_t rows = in_rows > ds->out_chunk_rows ? in_rows : ds->out_chunk_rows;
        uint64_t bytes = rows * ds->plan_row_bytes;
        largest = bytes > largest ? bytes : largest;
        out += 2 * ds->out_chunk_rows * ds->plan_row_bytes;
    }
    return (uint64_t)threads * 4 * largest + out;
}

int h5shuf__job_make_plan(h5shuf_job *job)
{
    if (job->opts_bad[0]) /* options h5shuf_job_create could not take (abi.c) */
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s", job->opts_bad);
    const unsigned workers = h5shuf__pool_threads_for(job->opts.threads) - 1;
    /* Under an address-space limit (ulimit -v), HDF5 needs room before it opens the first file. */
    int st = h5shuf__addrspace_check(0, 0, job->opts.mem_limit_bytes, 0, &job->err);
    if (st == H5SHUF_OK && job->piles_path) { /* a scatter writes the pile file, a gather reads it */
        job->mode = job->in.n ? H5SHUF_MODE_SCATTER : H5SHUF_MODE_GATHER;
        st = job->mode == H5SHUF_MODE_SCATTER ? h5shuf__job_scatter_setup(job) : h5shuf__job_gather_setup(job);
    }
    if (st == H5SHUF_OK)
        st = check_options(job);
    if (st == H5SHUF_OK)
        st = parse_filters(job);
    if (st == H5SHUF_OK && job->mode != H5SHUF_MODE_GATHER)
        st = h5shuf__job_mix_plan(job);
    job->in.allow_external = job->opts.allow_external;
    job->dsets.vlen_read_limit = h5shuf__vlen_read_limit(job->opts.mem_limit_bytes);
    if (st == H5SHUF_OK)
        st = h5shuf__inputs_open(&job->in, &job->out_spec, &job->dsets, &job->err);
    if (st == H5SHUF_OK)
        st = warn_same_inputs(job);
    job->out_rows = job->opts.head_set && job->opts.head_rows < job->in.rows ? job->opts.head_rows : job->in.rows;
    /* a head written as one file: no chunk larger than it (its maximum dimension is then its rows) */
    const int one_head = job->out_rows < job->in.rows && !job->opts.shards && !job->split;
    if (st == H5SHUF_OK)
        st = h5shuf__output_plan(&job->dsets, job->in.rows, one_head ? job->out_rows : 0,
                                 &job->out_filters, job->chunk_shape, job->opts.allow_lossy, job->in.v[0].spec.file,
                                 job->out_spec.file, &job->err);
    if (st == H5SHUF_OK)
        st = h5shuf__targets_plan(&job->out, job->out_spec.file, job->opts.shards, job->split, job->out_rows,
                                  job->in.rows, &job->err);
    if (st == H5SHUF_OK)
        st = choose_scratch_dir(job);
    if (st == H5SHUF_OK) /* an interrupted run's state: refused, or continued with its seed */
        st = h5shuf__ckpt_plan_find(job);
    if (st == H5SHUF_OK)
        st = draw_seed(job);
    if (st == H5SHUF_OK) /* which rows the weighted inputs' samples hold (their counts do not depend on it) */
        st = h5shuf__inputs_draw(&job->in, &job->dsets, job->seed, &job->err);
    if (st == H5SHUF_OK && job->opts.stratify)
        st = plan_strata(job);
    const struct h5shuf_progress progress = {job->opts.progress, job->opts.progress_user};
    if (st == H5SHUF_OK && job->out_rows < job->in.rows)
        st = h5shuf__head_bound(job->seed, job->in.rows, job->out_rows, job->opts.mem_limit_bytes, &job->head_bound,
                                &progress, &job->err);
    if (st == H5SHUF_OK) {
        plan_bands(job);
        st = plan_strategy(job);
    }
    if (st == H5SHUF_OK) /* this run's identity (compared with an interrupted run's), its checkpoints */
        st = h5shuf__ckpt_plan_check(job);
    if (st == H5SHUF_OK) /* the buffers, HDF5 and the codec threads under the limit: else HDF5 would crash */
        st = h5shuf__addrspace_check(job->plan.mem_planned_bytes, chunk_buffer_bytes(&job->dsets, workers + 1),
                                     job->opts.mem_limit_bytes, workers, &job->err);
    if (st == H5SHUF_OK)
        st = plan_scratch_filters(job);
    if (st == H5SHUF_OK && job->mode == H5SHUF_MODE_GATHER)
        st = h5shuf__job_gather_check(job);
    if (st == H5SHUF_OK)
        st = plan_objects(job);
    if (st == H5SHUF_OK)
        st = plan_disk(job);
    if (st == H5SHUF_OK) /* what interrupted runs left: the run removes what is certainly a dead run's */
        st = h5shuf__job_leftovers_plan(job);
    if (st != H5SHUF_OK)
        return st;
    job->planned = 1;
    return H5SHUF_OK;
}

int h5shuf_job_plan(h5shuf_job *job, h5shuf_plan *plan)
{
    h5shuf__err_reset(&job->err);
    /* the caller's plan is filled only as far as its struct_size (abi.c) */
    if (plan && h5shuf__abi_out_check(plan, "plan", "h5shuf_plan_init", &job->err) != H5SHUF_OK)
        return job->err.status;
    int st = H5SHUF_OK;
    if (!job->planned) {
        struct h5shuf_quiet q;
        h5shuf__quiet_begin(&q);
        st = h5shuf__job_make_plan(job);
        h5shuf__quiet_end(&q);
    }
    if (st == H5SHUF_OK && plan)
        h5shuf__abi_out_put(plan, &job->plan, sizeof job->plan);
    return st;
}
