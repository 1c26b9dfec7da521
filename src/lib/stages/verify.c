/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify.c - is an output a permutation of its inputs, with the datasets shuffled together still
 * aligned?  Checked in one streamed pass over each side, in bounded memory, with multiset hashes:
 * for every row the 128-bit XXH3 hash of each dataset's row bytes (seeded by the dataset's index) and of
 * the row's tuple of those hashes; the sums of these (mod 2^64, per half) do not depend on the order.
 * A changed, missing or duplicated row changes its dataset's sum; a pairing broken between datasets
 * leaves those sums alone and changes the tuple sum.  Sums of random 128-bit values collide for two
 * different multisets with probability about 2^-64 per half (Clarke et al., "Incremental multiset hash
 * functions", ASIACRYPT 2003, the additive construction).
 *
 * With the seed and an index in the output (--index), the order is checked too, still in one pass: the
 * index must be sorted by (K(seed, id), id), strictly (so its ids are distinct, hence a permutation when
 * they are all below N), and the multiset of (id, row tuple) pairs must be the inputs' (so output row r
 * is input row index[r]).  Together that is exactly the contract's order.
 *
 * A row of references is hashed by what its references point at (refcanon.c): their bytes are addresses
 * in their own file, and h5shuf makes each one anew for the output.
 *
 * A set of files (shards, splits: outset.h) is checked as the one output they concatenate to: its files'
 * rows are hashed one file after the other into the same sums, and the order check runs on across them.
 * A head of R of the inputs' N rows (alone, or cut into shards or splits) must hold the rows of the first
 * R of the shuffle: the input side then hashes only the rows whose (K(seed, i), i) is at most the R-th
 * smallest (head.h, from the output's seed), which is exactly the set of rows the head chose.  A
 * stratified set's order is checked with its stratified keys (strata.h, from h5shuf_stratify).
 */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "attrget.h"
#include "chunkio.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "head.h"
#include "inputs.h"
#include "keys.h"
#include "outset.h"
#include "piles.h"
#include "plan.h"
#include "refcanon.h"
#include "slabs.h"
#include "strata.h"
#include "verify.h"
#include "vlen.h"

/*-*************************************
*  Hashing rows
***************************************/

struct sums {
    uint64_t lo, hi;
};

static void add(struct sums *s, XXH128_hash_t h)
{
    s->lo += h.low64;
    s->hi += h.high64;
}

/* The exact-order check on the output side, run on from one file of a set to the next. */
struct order {
    uint64_t seed;
    const struct h5shuf_strata *strata; /* a stratified set's, or NULL */
    hid_t index;        /* the index dataset of the output file being hashed */
    const char *path;   /* its path, for messages */
    uint64_t base;      /* the set's row of that file's row 0 */
    int have_prev;
    uint64_t prev_key, prev_id;
    uint64_t bad_row;   /* first row of the set out of order, or UINT64_MAX */
    int out_of_range;   /* an id >= N */
};

/* What every hashing of rows shares: the datasets, slabs, progress (rows hashed of both sides, reported
 * as H5SHUF_PHASE_VERIFY), references, and which input rows count (a head's). */
struct hasher {
    struct h5shuf_chunkio *cio;
    const struct h5shuf_datasets *dss;
    uint64_t slab;
    const struct h5shuf_progress *progress;
    uint64_t done, total;
    struct h5shuf_refcanon *rc;          /* rows of references: hashed by what they point at; or NULL */
    uint64_t all_rows;                   /* N: an index naming a row at or past it is out of range */
    const struct h5shuf_keyidx *head;    /* only input rows with (K(seed, id), id) <= *head; NULL: all */
    uint64_t seed;
    unsigned char **buf;                 /* a slab of each dataset, and ids */
    XXH128_hash_t *h;                    /* a row's hash of each dataset */
    XXH3_state_t *xs;                    /* vlen rows' */
    uint64_t *keys;                      /* a head's keys of a slab */
};

/* One side hashed: input f of from (its rows in the permutation), or (from NULL) an output file. */
struct side {
    const struct h5shuf_inputs *from;
    size_t f;
    const hid_t *dsets;
    const char *file;
    const char *const *paths;
    uint64_t rows;
    uint64_t first_id; /* an input's global id of its row 0 */
    struct order *ord; /* an output with an index: the (id, tuple) pairs and the order */
};

/* Read rows [start, start + n) of every dataset of side sd into hs->buf (and the index's into ids). */
static int read_slab(struct hasher *hs, const struct side *sd, uint64_t start, uint64_t n, size_t *nread,
                     struct h5shuf_err *err)
{
    char cause[256];
    const struct h5shuf_datasets *dss = hs->dss;
    const uint64_t limit = dss->vlen_read_limit;
    for (size_t d = 0; d < dss->n; d++, *nread = d)
        if ((sd->from       ? h5shuf__input_rows_read(hs->cio, sd->from, sd->f, &dss->ds[d], sd->dsets[d], limit, start,
                                                      n, hs->buf[d])
             : dss->ds[d].vlen ? h5shuf__vlen_read(&dss->ds[d], sd->dsets[d], start, n, limit, hs->buf[d])
                               : h5shuf__chunkio_read(hs->cio, sd->dsets[d], dss->ds[d].ftype, start, n,
                                                      hs->buf[d])) < 0)
            return h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot read rows %llu..%llu: %s", sd->file, sd->paths[d],
                                (unsigned long long)start, (unsigned long long)(start + n - 1),
                                h5shuf__hdf5_cause(cause, sizeof cause));
    for (size_t d = 0; hs->rc && d < dss->n; d++) /* references: by what they point at */
        if (!dss->ds[d].vlen && h5shuf__type_has_refs(dss->ds[d].ftype)) {
            char where[600];
            snprintf(where, sizeof where, "%s:%s", sd->file, sd->paths[d]);
            int st = h5shuf__refcanon_rows(hs->rc, dss->ds[d].ftype, hs->buf[d],
                                           (size_t)(n * (dss->ds[d].row_bytes / H5Tget_size(dss->ds[d].ftype))), where, err);
            if (st != H5SHUF_OK)
                return st;
        }
    if (sd->ord && h5shuf__chunkio_read(hs->cio, sd->ord->index, H5T_NATIVE_UINT64, start, n, hs->buf[dss->n]) < 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot read the index: %s", sd->file, sd->ord->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    if (sd->from && hs->head) /* which of these rows the head holds */
        h5shuf__keys(hs->seed, NULL, sd->first_id + start, n, hs->keys);
    return H5SHUF_OK;
}

/* The hash of row r of the slab in dataset d. */
static XXH128_hash_t row_hash(struct hasher *hs, size_t d, uint64_t r)
{
    const struct h5shuf_dsinfo *ds = &hs->dss->ds[d];
    uint64_t rb = ds->row_bytes;
    if (!ds->vlen)
        return XXH3_128bits_withSeed(hs->buf[d] + r * rb, rb, d + 1);
    XXH3_128bits_reset_withSeed(hs->xs, d + 1); /* the elements' payloads, each with its length */
    for (uint64_t e = 0; e < ds->elems; e++) {
        if (ds->vlen == H5SHUF_VLEN_REC && e % ds->nslot == 0) { /* an element's fixed members */
            const unsigned char *rec = hs->buf[d] + r * rb + e / ds->nslot * ds->rec_bytes;
            for (size_t k = 0; k < ds->nrun; k++)
                XXH3_128bits_update(hs->xs, rec + ds->run[k].off, ds->run[k].len);
        }
        uint64_t bytes;
        const void *p = h5shuf__vlen_elem(ds, hs->buf[d] + r * rb, e, &bytes);
        XXH3_128bits_update(hs->xs, &bytes, sizeof bytes);
        XXH3_128bits_update(hs->xs, p, bytes);
    }
    return XXH3_128bits_digest(hs->xs);
}

/* The order check of output row start + r of this file, id its index entry. */
static void order_row(struct order *ord, uint64_t all_rows, uint64_t row, uint64_t id)
{
    uint64_t key;
    if (id >= all_rows) {
        ord->out_of_range = 1;
        return;
    }
    h5shuf__order_keys(ord->seed, ord->strata, &id, 0, 1, &key);
    if (ord->have_prev && ord->bad_row == UINT64_MAX &&
        (key < ord->prev_key || (key == ord->prev_key && id <= ord->prev_id)))
        ord->bad_row = ord->base + row;
    ord->have_prev = 1;
    ord->prev_key = key;
    ord->prev_id = id;
}

/* Hash side sd's rows in slabs into sums[d] per dataset, sums[n] the tuples and, with pairs, sums[n + 1]
 * the (id, tuple) pairs: ids are first_id + r on the input side, the index on the output side.  An input
 * row a head does not hold is skipped.  Progress every H5SHUF_SCAN_STEP_ROWS rows and after each slab. */
static int hash_rows(struct hasher *hs, const struct side *sd, struct sums *sums, int pairs, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dss = hs->dss;
    int st = H5SHUF_OK;
    for (uint64_t start = 0; start < sd->rows && st == H5SHUF_OK; start += hs->slab) {
        uint64_t n = sd->rows - start < hs->slab ? sd->rows - start : hs->slab;
        size_t nread = 0;
        st = read_slab(hs, sd, start, n, &nread, err);
        const uint64_t *ids = (const uint64_t *)hs->buf[dss->n];
        for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
            if ((r + 1) % H5SHUF_SCAN_STEP_ROWS == 0 &&
                (st = h5shuf__progress(hs->progress, err, H5SHUF_PHASE_VERIFY, hs->done + r, hs->total)) != H5SHUF_OK)
                break;
            uint64_t id = sd->ord ? ids[r] : sd->first_id + start + r;
            if (sd->from && hs->head &&
                (hs->keys[r] > hs->head->key || (hs->keys[r] == hs->head->key && id > hs->head->idx)))
                continue; /* not a row of the head */
            for (size_t d = 0; d < dss->n; d++)
                add(&sums[d], hs->h[d] = row_hash(hs, d, r));
            XXH128_hash_t t = XXH3_128bits(hs->h, dss->n * sizeof *hs->h);
            add(&sums[dss->n], t);
            if (!pairs)
                continue;
            struct {
                uint64_t id;
                XXH128_hash_t tuple;
            } pair = {id, t};
            add(&sums[dss->n + 1], XXH3_128bits(&pair, sizeof pair));
            if (sd->ord)
                order_row(sd->ord, hs->all_rows, start + r, id);
        }
        for (size_t d = 0; d < nread; d++)
            if (dss->ds[d].vlen)
                h5shuf__vlen_reclaim(&dss->ds[d], n, hs->buf[d]);
        hs->done += n;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(hs->progress, err, H5SHUF_PHASE_VERIFY, hs->done, hs->total);
    }
    return st;
}

/*-*************************************
*  The output's files
***************************************/

/* Open the datasets of output file out (open as file) into dsets and check their type and shape against
 * the inputs', with rows rows (those of its range when ranged, else the inputs'). */
static int open_output(const struct h5shuf_datasets *dss, uint64_t rows, const char *out, hid_t file, hid_t *dsets,
                       int ranged, struct h5shuf_err *err)
{
    char cause[256];
    for (size_t d = 0; d < dss->n; d++) {
        const struct h5shuf_dsinfo *ds = &dss->ds[d];
        if (H5Lexists(file, ds->out_path, H5P_DEFAULT) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: no such dataset in the output", out, ds->out_path);
        }
        dsets[d] = H5Dopen2(file, ds->out_path, H5P_DEFAULT);
        if (dsets[d] < 0)
            return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", out, ds->out_path,
                                h5shuf__hdf5_cause(cause, sizeof cause));
        hid_t t = H5Dget_type(dsets[d]), s = H5Dget_space(dsets[d]);
        hsize_t dims[H5S_MAX_RANK];
        int rank = H5Sget_simple_extent_ndims(s);
        int same = H5Tequal(t, ds->ftype) > 0 && rank == ds->rank;
        if (same) {
            H5Sget_simple_extent_dims(s, dims, NULL);
            for (int k = 1; k < rank; k++)
                same &= dims[k] == ds->dims[k];
        }
        H5Tclose(t);
        H5Sclose(s);
        if (!same)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: datatype or row shape differs from the input's", out,
                                ds->out_path);
        if (dims[0] != rows)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: has %llu rows, %s %llu", out, ds->out_path,
                                (unsigned long long)dims[0], ranged ? "its h5shuf_row_range" : "the inputs",
                                (unsigned long long)rows);
    }
    return H5SHUF_OK;
}

/* The output file's index path into *path (caller frees), when it names one (h5shuf_index) that is (rows,)
 * of integers; else NULL.  An h5shuf_index of another shape or type than one string is refused (outf names
 * the file). */
static int output_index(hid_t file, const char *outf, uint64_t rows, char **path, struct h5shuf_err *err)
{
    char *value = NULL, why[H5SHUF_ATTR_WHY_MAX];
    *path = NULL;
    int got = h5shuf__attr_get_texts(file, "h5shuf_index", 1, 0, &value, why, sizeof why);
    if (got < 0)
        return got == H5SHUF_ATTR_NOMEM ? h5shuf__fail(err, H5SHUF_ENOMEM, "%s: attribute /h5shuf_index: out of memory", outf)
                                        : h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: attribute /h5shuf_index %s", outf, why);
    if (got == H5SHUF_ATTR_READ && value[0] == '/') {
        hid_t d = H5Lexists(file, value, H5P_DEFAULT) > 0 ? H5Dopen2(file, value, H5P_DEFAULT) : H5I_INVALID_HID;
        if (d >= 0) {
            hid_t s = H5Dget_space(d), dt = H5Dget_type(d);
            hsize_t n = 0;
            if (H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1 && n == rows &&
                H5Tget_class(dt) == H5T_INTEGER)
                *path = strdup(value);
            H5Tclose(dt);
            H5Sclose(s);
            H5Dclose(d);
        }
    }
    free(value);
    H5Eclear2(H5E_DEFAULT);
    return H5SHUF_OK;
}

/* The sums of the inputs' rows (those a head holds): per dataset in sums[0..n), row tuples in sums[n],
 * (id, tuple) pairs in sums[n + 1]. */
static int hash_inputs(struct hasher *hs, const struct h5shuf_inputs *in, struct sums *sums, struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dss = hs->dss;
    const char **paths = malloc((dss->n ? dss->n : 1) * sizeof *paths);
    int st = paths ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; f < in->n && st == H5SHUF_OK; f++) {
        const struct h5shuf_input *inp = &in->v[f];
        const struct h5shuf_spec *names = inp->spec.npaths ? &inp->spec : &in->v[0].spec;
        const hid_t *src = h5shuf__input_dsets(in, dss, f, err);
        if (!src) {
            st = err->status;
            break;
        }
        for (size_t d = 0; d < dss->n; d++)
            paths[d] = names->paths[d];
        if (hs->rc && (st = h5shuf__refcanon_input(hs->rc, inp->file, src, err)) != H5SHUF_OK)
            break;
        const struct side sd = {in, f, src, inp->spec.file, paths, inp->rows, inp->first_row, NULL};
        st = hash_rows(hs, &sd, sums, 1, err);
    }
    free(paths);
    return st;
}

/* The verdict from the sums of both sides (and the order check when the output has an index); out names
 * the output (a set: its first and last file), whose the rows it should hold. */
static int compare(const struct h5shuf_datasets *dss, uint64_t rows, const char *out, const char *whose,
                   const struct sums *in, const struct sums *o, const struct order *ord, const char *index_path,
                   struct h5shuf_err *err)
{
    size_t n = dss->n;
    for (size_t d = 0; d < n; d++)
        if (in[d].lo != o[d].lo || in[d].hi != o[d].hi)
            return h5shuf__fail(err, H5SHUF_EMISMATCH,
                                "%s:%s: rows differ from %s (a row altered, missing or duplicated)", out,
                                dss->ds[d].out_path, whose);
    if (in[n].lo != o[n].lo || in[n].hi != o[n].hi)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s: datasets misaligned: each dataset's rows match %s, but not row by row across "
                            "%s and the others",
                            out, whose, dss->ds[0].out_path);
    if (!index_path)
        return H5SHUF_OK;
    if (ord->out_of_range)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: the index names rows beyond the inputs' %llu", out, index_path,
                            (unsigned long long)rows);
    if (ord->bad_row != UINT64_MAX)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s:%s: the order differs from the one seed %llu defines (from output row %llu)", out,
                            index_path, (unsigned long long)ord->seed, (unsigned long long)ord->bad_row);
    if (in[n + 1].lo != o[n + 1].lo || in[n + 1].hi != o[n + 1].hi)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s:%s: rows do not match their index (a row moved, or the index altered)", out, index_path);
    return H5SHUF_OK;
}

/* The samples of the weighted inputs' sampled copies, drawn from the output's seed when the run that
 * made it did not draw them (h5shuf verify). */
static int draw_samples(struct h5shuf_inputs *in, const struct h5shuf_datasets *dss, const struct h5shuf_outset *set,
                        const char *outf, struct h5shuf_err *err)
{
    int drawn = 1;
    for (size_t f = 0; f < in->n; f++)
        drawn &= !in->v[f].frac_den || in->v[f].sample != NULL;
    if (drawn)
        return H5SHUF_OK;
    if (!set->has_seed)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s: has no h5shuf_seed, which the samples of the weighted inputs are drawn from", outf);
    return h5shuf__inputs_draw(in, dss, set->seed, err);
}

/* The rows output file k of set holds: its range's, or a whole output's all (the inputs'). */
static uint64_t part_rows(const struct h5shuf_outset *set, size_t k, uint64_t all)
{
    return set->kind == H5SHUF_OUT_WHOLE ? all : set->v[k].rows;
}

/* Open output file k of set and its datasets (checked, rows rows) into *file and dsets, and its index into
 * ord (H5I_INVALID_HID when it has none; *index_path: its path, caller frees). */
static int open_part(const struct h5shuf_datasets *dss, const struct h5shuf_outset *set, size_t k, uint64_t rows,
                     hid_t *file, hid_t *dsets, struct order *ord, char **index_path, struct h5shuf_err *err)
{
    const char *path = set->v[k].path;
    *file = H5I_INVALID_HID;
    for (size_t d = 0; d < dss->n; d++)
        dsets[d] = H5I_INVALID_HID;
    ord->index = H5I_INVALID_HID;
    free(*index_path);
    *index_path = NULL;
    int st = h5shuf__outset_open(path, path, file, err);
    if (st == H5SHUF_OK)
        st = open_output(dss, rows, path, *file, dsets, set->kind != H5SHUF_OUT_WHOLE, err);
    if (st == H5SHUF_OK)
        st = output_index(*file, path, rows, index_path, err);
    if (st == H5SHUF_OK && *index_path) {
        ord->path = *index_path;
        ord->base = set->v[k].first;
        if ((ord->index = H5Dopen2(*file, *index_path, H5P_DEFAULT)) < 0)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open the index", path, *index_path);
    }
    return st;
}

static void close_part(const struct h5shuf_datasets *dss, hid_t *file, hid_t *dsets, struct order *ord)
{
    for (size_t d = 0; dsets && d < dss->n; d++)
        if (dsets[d] >= 0)
            H5Dclose(dsets[d]);
    if (ord->index >= 0)
        H5Dclose(ord->index);
    ord->index = H5I_INVALID_HID;
    if (*file >= 0)
        H5Fclose(*file);
    *file = H5I_INVALID_HID;
}

/*-*************************************
*  The check
***************************************/

/* What a set holds in words, into said: which files, and which rows (all, or a head's of the seed). */
static void describe(const struct h5shuf_outset *set, uint64_t rows, uint64_t all, int ordered, char *said, size_t cap)
{
    char what[160], files[2 * 4096 + 64] = "";
    if (rows == all)
        snprintf(what, sizeof what, "a permutation of the inputs' rows");
    else
        snprintf(what, sizeof what, "the first %llu rows of the shuffle of the inputs' %llu (seed %llu)",
                 (unsigned long long)rows, (unsigned long long)all, (unsigned long long)set->seed);
    if (set->n > 1)
        snprintf(files, sizeof files, "%zu %s, %s .. %s: together ", set->n,
                 set->kind == H5SHUF_OUT_SHARDS ? "shards" : "splits", set->v[0].path, set->v[set->n - 1].path);
    snprintf(said, cap, "%s%s, datasets aligned%s", files, what, ordered && set->kind != H5SHUF_OUT_WHOLE
                                                                    ? ", in the seed's order" : "");
}

int h5shuf__verify_set(struct h5shuf_chunkio *cio, struct h5shuf_inputs *inputs, const struct h5shuf_datasets *dss,
                       const struct h5shuf_outset *set, uint64_t mem, const struct h5shuf_progress *progress,
                       char *said, size_t said_cap, struct h5shuf_err *err)
{
    const uint64_t all = inputs->rows, rows = set->kind == H5SHUF_OUT_WHOLE ? all : set->rows;
    char name[2 * 4096 + 8], whose[128];
    snprintf(name, sizeof name, set->n > 1 ? "%s .. %s" : "%s", set->v[0].path, set->v[set->n - 1].path);
    if (rows == all)
        snprintf(whose, sizeof whose, "the inputs'");
    else
        snprintf(whose, sizeof whose, "those of the first %llu of the shuffle", (unsigned long long)rows);
    uint64_t slab_bytes = mem / 2 < H5SHUF_SLAB_BYTES_MAX ? mem / 2 : H5SHUF_SLAB_BYTES_MAX;
    struct hasher hs = {cio, dss, slab_bytes / (dss->row_bytes + sizeof(uint64_t)), progress, 0, all + rows, NULL, all,
                        NULL, set->seed, NULL, NULL, NULL, NULL};
    if (hs.slab == 0)
        hs.slab = 1;
    /* [n]: the tuples; [n + 1]: the (id, tuple) pairs of the exact-order check */
    struct sums *in = calloc(dss->n + 2, sizeof *in), *out = calloc(dss->n + 2, sizeof *out);
    struct order ord = {.seed = set->seed, .index = H5I_INVALID_HID, .bad_row = UINT64_MAX};
    struct h5shuf_strata strata, *stp = NULL;
    struct h5shuf_keyidx head;
    struct h5shuf_refcanon canon;
    char *index_path = NULL;
    hid_t *dsets = calloc(dss->n ? dss->n : 1, sizeof *dsets), file = H5I_INVALID_HID;
    const char **paths = malloc((dss->n ? dss->n : 1) * sizeof *paths);
    int st = in && out && dsets && paths ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory"), indexed = 0;
    for (size_t d = 0; dsets && d < dss->n; d++)
        dsets[d] = H5I_INVALID_HID;
    if (st == H5SHUF_OK && rows > all)
        st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: the set holds %llu rows, the inputs %llu", name,
                          (unsigned long long)rows, (unsigned long long)all);
    size_t lines = 1; /* the run's inputs, when it says */
    for (const char *p = set->inputs; p && *p; p++)
        lines += *p == '\n';
    if (st == H5SHUF_OK && rows < all && set->inputs && lines != inputs->nsrc)
        st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: holds %llu rows of the shuffle of %zu input%s (h5shuf_inputs), "
                                                 "not of these %zu",
                          name, (unsigned long long)rows, lines, lines == 1 ? "" : "s", inputs->nsrc);
    if (st == H5SHUF_OK && (rows < all || set->stratify) && !set->has_seed)
        st = h5shuf__fail(err, H5SHUF_EMISMATCH,
                          "%s: has no h5shuf_seed, which says which of the inputs' %llu rows it holds", name,
                          (unsigned long long)all);
    for (size_t d = 0; st == H5SHUF_OK && !hs.rc && d < dss->n; d++)
        if (!dss->ds[d].vlen && h5shuf__type_has_refs(dss->ds[d].ftype))
            hs.rc = &canon;
    if (hs.rc && set->n > 1 && st == H5SHUF_OK) {
        st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s:%s: rows of references are verified in one output file, not a "
                                                    "set of %zu", name, dss->ds[0].out_path, set->n);
        hs.rc = NULL;
    }
    /* every output file opened and checked first: a FIFO, a missing dataset or a wrong shape fails at once,
     * not after the inputs' rows were read; one file stays open */
    for (size_t k = 0; st == H5SHUF_OK && k < set->n; k++) {
        if ((st = open_part(dss, set, k, part_rows(set, k, all), &file, dsets, &ord, &index_path, err)) ==
                H5SHUF_OK && k > 0 &&
            (ord.index >= 0) != indexed)
            st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: %s an index where %s %s", set->v[k].path,
                              indexed ? "has no" : "has", set->v[0].path, indexed ? "has one" : "has none");
        indexed = k == 0 ? ord.index >= 0 : indexed;
        if (set->n > 1 || st != H5SHUF_OK)
            close_part(dss, &file, dsets, &ord);
    }
    if (st == H5SHUF_OK && hs.rc && (st = h5shuf__refcanon_open(hs.rc, file, dss, name, err)) != H5SHUF_OK)
        hs.rc = NULL; /* (freed below) */
    if (st == H5SHUF_OK)
        st = draw_samples(inputs, dss, set, name, err);
    if (st == H5SHUF_OK && rows < all &&
        (st = h5shuf__head_bound(set->seed, all, rows, mem, &head, progress, err)) == H5SHUF_OK) {
        hs.head = &head;
        if (!(hs.keys = malloc(hs.slab * sizeof *hs.keys)))
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    if (st == H5SHUF_OK && set->stratify && (st = h5shuf__outset_strata(set, inputs, &strata, err)) == H5SHUF_OK)
        ord.strata = stp = &strata;
    if (st == H5SHUF_OK) {
        hs.buf = h5shuf__bufs_alloc(dss, hs.slab, err);
        hs.h = malloc((dss->n ? dss->n : 1) * sizeof *hs.h);
        hs.xs = dss->nvlen ? XXH3_createState() : NULL;
        if (!hs.buf || !hs.h || (!hs.xs && dss->nvlen))
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    if (st == H5SHUF_OK)
        st = hash_inputs(&hs, inputs, in, err);
    for (size_t d = 0; paths && d < dss->n; d++)
        paths[d] = dss->ds[d].out_path;
    for (size_t k = 0; st == H5SHUF_OK && k < set->n; k++) {
        if (set->n > 1) /* (one file stayed open from the check above) */
            st = open_part(dss, set, k, part_rows(set, k, all), &file, dsets, &ord, &index_path, err);
        if (st == H5SHUF_OK && hs.rc)
            h5shuf__refcanon_output(hs.rc, file);
        const struct side sd = {NULL, 0, dsets, set->v[k].path, paths, part_rows(set, k, all), 0,
                                ord.index >= 0 ? &ord : NULL};
        if (st == H5SHUF_OK)
            st = hash_rows(&hs, &sd, out, indexed, err);
        if (set->n > 1)
            close_part(dss, &file, dsets, &ord);
    }
    if (st == H5SHUF_OK)
        st = compare(dss, all, name, whose, in, out, &ord, indexed ? index_path : NULL, err);
    if (st == H5SHUF_OK && said)
        describe(set, rows, all, indexed, said, said_cap);
    close_part(dss, &file, dsets, &ord);
    if (hs.rc)
        h5shuf__refcanon_free(hs.rc);
    if (stp)
        h5shuf__strata_free(stp);
    h5shuf__bufs_free(dss, hs.buf);
    free(hs.h);
    XXH3_freeState(hs.xs);
    free(hs.keys);
    free(index_path);
    free(in);
    free(out);
    free(dsets);
    free(paths);
    return st;
}

int h5shuf__verify_file(struct h5shuf_chunkio *cio, struct h5shuf_inputs *inputs, const struct h5shuf_datasets *dss,
                        const char *path, const char *outf, uint64_t mem, const struct h5shuf_progress *progress,
                        struct h5shuf_err *err)
{
    /* --check: the finished file at its temporary path, named outf in messages; its seed for the samples */
    struct h5shuf_outpart part = {(char *)path, 0, inputs->rows};
    struct h5shuf_outset set = {H5SHUF_OUT_WHOLE, 1, &part, 0, 0, 0, NULL, NULL, 0};
    hid_t file = H5I_INVALID_HID;
    char why[H5SHUF_ATTR_WHY_MAX];
    int st = h5shuf__outset_open(path, outf, &file, err);
    if (st == H5SHUF_OK)
        set.has_seed =
            h5shuf__attr_get_u64s_or_text(file, "h5shuf_seed", 1, &set.seed, why, sizeof why) == H5SHUF_ATTR_READ;
    if (file >= 0)
        H5Fclose(file);
    if (st == H5SHUF_OK)
        st = h5shuf__verify_set(cio, inputs, dss, &set, mem, progress, NULL, 0, err);
    if (st != H5SHUF_OK && strncmp(err->msg, path, strlen(path)) == 0) { /* name the output, not its temporary */
        char msg[H5SHUF_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s%s", outf, err->msg + strlen(path));
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return st;
}
