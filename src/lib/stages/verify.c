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
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "attrget.h"
#include "chunkio.h"
#include "verify.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "inputs.h"
#include "piles.h"
#include "plan.h"
#include "refcanon.h"
#include "slabs.h"
#include "vlen.h"

struct sums {
    uint64_t lo, hi;
};

static void add(struct sums *s, XXH128_hash_t h)
{
    s->lo += h.low64;
    s->hi += h.high64;
}

/* The exact-order check on the output side. */
struct order {
    uint64_t seed;
    hid_t index;        /* the output's index dataset */
    const char *path;   /* its path, for messages */
    int have_prev;
    uint64_t prev_key, prev_id;
    uint64_t bad_row;   /* first output row out of order, or UINT64_MAX */
    int out_of_range;   /* an id >= N */
};

/* Rows hashed so far of both sides (2 N), reported to the caller's progress (H5SHUF_PHASE_VERIFY). */
struct hashed {
    const struct h5shuf_progress *progress;
    uint64_t done, total;
};

/* Hash rows [0, rows) of dsets[0..nds) (input f of from's, when from is not NULL: its rows in the
 * permutation, h5shuf__input_rows_read) in slabs into per[d] and *tuple.  When pairs is not NULL, also
 * the (id, tuple) pairs: ids are first_id + r on the input side, the index on the output side (ord).
 * Progress goes to *hp every H5SHUF_SCAN_STEP_ROWS rows and after each slab (H5SHUF_ECANCELED). */
static int hash_rows(struct h5shuf_chunkio *cio, const struct h5shuf_inputs *from, size_t f,
                     const struct h5shuf_datasets *dss, const hid_t *dsets, uint64_t rows,
                     uint64_t slab, struct sums *per, struct sums *tuple, const char *file, const char *const *paths,
                     struct sums *pairs, uint64_t first_id, uint64_t all_rows, struct order *ord, struct hashed *hp,
                     struct h5shuf_refcanon *rc, struct h5shuf_err *err)
{
    char cause[256];
    unsigned char **buf = h5shuf__bufs_alloc(dss, slab, err);
    XXH128_hash_t *h = malloc((dss->n ? dss->n : 1) * sizeof *h);
    XXH3_state_t *xs = dss->nvlen ? XXH3_createState() : NULL;
    int st = buf && h && (xs || !dss->nvlen) ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (uint64_t start = 0; start < rows && st == H5SHUF_OK; start += slab) {
        uint64_t n = rows - start < slab ? rows - start : slab;
        size_t nread = 0;
        for (size_t d = 0; d < dss->n && st == H5SHUF_OK; d++, nread = d)
            if ((from ? h5shuf__input_rows_read(cio, from, f, &dss->ds[d], dsets[d], dss->vlen_read_limit, start, n, buf[d])
                 : dss->ds[d].vlen ? h5shuf__vlen_read(&dss->ds[d], dsets[d], start, n, dss->vlen_read_limit, buf[d])
                                   : h5shuf__chunkio_read(cio, dsets[d], dss->ds[d].ftype, start, n, buf[d])) < 0)
                st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot read rows %llu..%llu: %s", file, paths[d],
                                  (unsigned long long)start, (unsigned long long)(start + n - 1),
                                  h5shuf__hdf5_cause(cause, sizeof cause));
        for (size_t d = 0; rc && d < dss->n && st == H5SHUF_OK; d++) /* references: by what they point at */
            if (!dss->ds[d].vlen && h5shuf__type_has_refs(dss->ds[d].ftype)) {
                char where[600];
                snprintf(where, sizeof where, "%s:%s", file, paths[d]);
                st = h5shuf__refcanon_rows(rc, dss->ds[d].ftype, buf[d],
                                           (size_t)(n * (dss->ds[d].row_bytes / H5Tget_size(dss->ds[d].ftype))), where, err);
            }
        const uint64_t *ids = (const uint64_t *)buf[dss->n];
        if (st == H5SHUF_OK && ord && h5shuf__chunkio_read(cio, ord->index, H5T_NATIVE_UINT64, start, n, buf[dss->n]) < 0)
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: cannot read the index: %s", file, ord->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
            if ((r + 1) % H5SHUF_SCAN_STEP_ROWS == 0 &&
                (st = h5shuf__progress(hp->progress, err, H5SHUF_PHASE_VERIFY, hp->done + r, hp->total)) != H5SHUF_OK)
                break;
            for (size_t d = 0; d < dss->n; d++) {
                const struct h5shuf_dsinfo *ds = &dss->ds[d];
                uint64_t rb = ds->row_bytes;
                if (ds->vlen) { /* the elements' payloads, each with its length */
                    XXH3_128bits_reset_withSeed(xs, d + 1);
                    for (uint64_t e = 0; e < ds->elems; e++) {
                        if (ds->vlen == H5SHUF_VLEN_REC && e % ds->nslot == 0) { /* an element's fixed members */
                            const unsigned char *rec = buf[d] + r * rb + e / ds->nslot * ds->rec_bytes;
                            for (size_t k = 0; k < ds->nrun; k++)
                                XXH3_128bits_update(xs, rec + ds->run[k].off, ds->run[k].len);
                        }
                        uint64_t bytes;
                        const void *p = h5shuf__vlen_elem(ds, buf[d] + r * rb, e, &bytes);
                        XXH3_128bits_update(xs, &bytes, sizeof bytes);
                        XXH3_128bits_update(xs, p, bytes);
                    }
                    h[d] = XXH3_128bits_digest(xs);
                } else {
                    h[d] = XXH3_128bits_withSeed(buf[d] + r * rb, rb, d + 1);
                }
                add(&per[d], h[d]);
            }
            XXH128_hash_t t = XXH3_128bits(h, dss->n * sizeof *h);
            add(tuple, t);
            if (!pairs)
                continue;
            struct {
                uint64_t id;
                XXH128_hash_t tuple;
            } pair = {ord ? ids[r] : first_id + start + r, t};
            add(pairs, XXH3_128bits(&pair, sizeof pair));
            if (ord) {
                uint64_t key = h5shuf_key(ord->seed, pair.id);
                if (pair.id >= all_rows)
                    ord->out_of_range = 1;
                if (ord->have_prev && ord->bad_row == UINT64_MAX &&
                    (key < ord->prev_key || (key == ord->prev_key && pair.id <= ord->prev_id)))
                    ord->bad_row = start + r;
                ord->have_prev = 1;
                ord->prev_key = key;
                ord->prev_id = pair.id;
            }
        }
        for (size_t d = 0; d < nread; d++)
            if (dss->ds[d].vlen)
                h5shuf__vlen_reclaim(&dss->ds[d], n, buf[d]);
        hp->done += n;
        if (st == H5SHUF_OK)
            st = h5shuf__progress(hp->progress, err, H5SHUF_PHASE_VERIFY, hp->done, hp->total);
    }
    h5shuf__bufs_free(dss, buf);
    free(h);
    XXH3_freeState(xs);
    return st;
}

/* Open the output's datasets (file named out) and check their type and shape against the inputs'. */
static int open_output(const struct h5shuf_datasets *dss, uint64_t rows, const char *out, hid_t file, hid_t *dsets,
                       struct h5shuf_err *err)
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
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: has %llu rows, the inputs %llu", out, ds->out_path,
                                (unsigned long long)dims[0], (unsigned long long)rows);
    }
    return H5SHUF_OK;
}

/* A root attribute of the output refused: of another shape or type than h5shuf writes (why), or out of
 * memory. */
static int attr_refused(int got, const char *outf, const char *name, const char *why, struct h5shuf_err *err)
{
    return got == H5SHUF_ATTR_NOMEM ? h5shuf__fail(err, H5SHUF_ENOMEM, "%s: attribute /%s: out of memory", outf, name)
                                    : h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: attribute /%s %s", outf, name, why);
}

/* The output's seed (h5shuf_seed: one integer, or its decimal digits in a netCDF file) into *seed, and
 * *has 1; *has 0 when it has none.  One of another shape or type is refused. */
static int read_seed(hid_t file, const char *outf, int *has, uint64_t *seed, struct h5shuf_err *err)
{
    char why[H5SHUF_ATTR_WHY_MAX], why_text[H5SHUF_ATTR_WHY_MAX], *text = NULL, *end = NULL;
    int got = h5shuf__attr_get_u64s(file, "h5shuf_seed", 1, seed, why, sizeof why);
    if (got == H5SHUF_ATTR_WRONG &&
        h5shuf__attr_get_texts(file, "h5shuf_seed", 1, 0, &text, why_text, sizeof why_text) == H5SHUF_ATTR_READ) {
        errno = 0;
        *seed = strtoull(text, &end, 10);
        if (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0)
            got = H5SHUF_ATTR_READ;
        else
            snprintf(why, sizeof why, "is a string, not the decimal digits of a seed"); /* (not quoted: one line) */
        free(text);
    }
    *has = got == H5SHUF_ATTR_READ;
    return got >= 0 ? H5SHUF_OK : attr_refused(got, outf, "h5shuf_seed", why, err);
}

/* *path: the output's index (h5shuf_index, one string) when it names a (rows,) dataset of integers, else
 * NULL (caller frees).  An h5shuf_index of another shape or type is refused. */
static int read_index(hid_t file, const char *outf, uint64_t rows, char **path, struct h5shuf_err *err)
{
    char why[H5SHUF_ATTR_WHY_MAX], *value = NULL;
    int got = h5shuf__attr_get_texts(file, "h5shuf_index", 1, 0, &value, why, sizeof why);
    *path = NULL;
    if (got < 0)
        return attr_refused(got, outf, "h5shuf_index", why, err);
    if (value && value[0] == '/') {
        hid_t d = H5Lexists(file, value, H5P_DEFAULT) > 0 ? H5Dopen2(file, value, H5P_DEFAULT) : H5I_INVALID_HID;
        if (d >= 0) {
            hid_t s = H5Dget_space(d), dt = H5Dget_type(d);
            hsize_t n = 0;
            if (H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1 && n == rows &&
                H5Tget_class(dt) == H5T_INTEGER)
                *path = value, value = NULL;
            H5Tclose(dt);
            H5Sclose(s);
            H5Dclose(d);
        }
    }
    free(value);
    H5Eclear2(H5E_DEFAULT);
    return H5SHUF_OK;
}

/* The sums of every input's rows: per dataset in sums[0..n), row tuples in sums[n], (id, tuple) pairs in
 * sums[n + 1]; rows of references through rc (NULL: none). */
static int hash_inputs(struct h5shuf_chunkio *cio, const struct h5shuf_inputs *in, const struct h5shuf_datasets *dss,
                       uint64_t slab, struct sums *sums, struct hashed *hp, struct h5shuf_refcanon *rc,
                       struct h5shuf_err *err)
{
    hid_t *dsets = malloc(dss->n * sizeof *dsets);
    const char **paths = malloc(dss->n * sizeof *paths);
    int st = dsets && paths ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; f < in->n && st == H5SHUF_OK; f++) {
        const struct h5shuf_input *inp = &in->v[f];
        const struct h5shuf_spec *names = inp->spec.npaths ? &inp->spec : &in->v[0].spec;
        const hid_t *src = h5shuf__input_dsets(in, dss, f, err);
        if (!src) {
            st = err->status;
            break;
        }
        for (size_t d = 0; d < dss->n; d++) {
            dsets[d] = src[d];
            paths[d] = names->paths[d];
        }
        if (rc && (st = h5shuf__refcanon_input(rc, inp->file, src, err)) != H5SHUF_OK)
            break;
        st = hash_rows(cio, in, f, dss, dsets, inp->rows, slab, sums, &sums[dss->n], inp->spec.file, paths,
                       &sums[dss->n + 1], inp->first_row, in->rows, NULL, hp, rc, err);
    }
    free(dsets);
    free(paths);
    return st;
}

/* The output's verdict from the sums of both sides (and the order check when the output has an index). */
static int compare(const struct h5shuf_datasets *dss, uint64_t rows, const char *out, const struct sums *in,
                   const struct sums *o, const struct order *ord, const char *index_path, struct h5shuf_err *err)
{
    size_t n = dss->n;
    for (size_t d = 0; d < n; d++)
        if (in[d].lo != o[d].lo || in[d].hi != o[d].hi)
            return h5shuf__fail(err, H5SHUF_EMISMATCH,
                                "%s:%s: rows differ from the inputs' (a row altered, missing or duplicated)", out,
                                dss->ds[d].out_path);
    if (in[n].lo != o[n].lo || in[n].hi != o[n].hi)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s: datasets misaligned: each dataset's rows match the inputs', but not row by row across "
                            "%s and the others",
                            out, dss->ds[0].out_path);
    if (ord->index < 0)
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

/* Open the output file at path (named out) read-only (*file), refusing what is not an HDF5 file. */
static int open_file(const char *path, const char *out, hid_t *file, struct h5shuf_err *err)
{
    char cause[256];
    struct stat sb; /* before HDF5 opens it: a FIFO would wait for a writer (a missing file: as HDF5 says) */
    const char *kind = stat(path, &sb) == 0 ? h5shuf__not_regular(sb.st_mode) : NULL;
    if (kind)
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: is %s, not an HDF5 file", out, kind);
    int st = H5SHUF_OK;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    if (H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        st = h5shuf__fd_shortage(path, cause, sizeof cause)
                 ? h5shuf__fail(err, H5SHUF_EIO, "%s: cannot open: %s", out, cause)
                 : h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: missing or not an HDF5 file", out);
    } else if ((*file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        h5shuf__hdf5_cause(cause, sizeof cause);
        h5shuf__fd_shortage(path, cause, sizeof cause);
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot open: %s", out, cause);
    }
    H5Pclose(fapl);
    return st;
}

/* The samples of the weighted inputs' sampled copies, drawn from the output's seed when the run that
 * made it did not draw them (h5shuf verify). */
static int draw_samples(struct h5shuf_inputs *in, const struct h5shuf_datasets *dss, int has_seed, uint64_t seed,
                        const char *outf, struct h5shuf_err *err)
{
    int drawn = 1;
    for (size_t f = 0; f < in->n; f++)
        drawn &= !in->v[f].frac_den || in->v[f].sample != NULL;
    if (drawn)
        return H5SHUF_OK;
    if (!has_seed)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s: has no h5shuf_seed, which the samples of the weighted inputs are drawn from", outf);
    return h5shuf__inputs_draw(in, dss, seed, err);
}

int h5shuf__verify_file(struct h5shuf_chunkio *cio, struct h5shuf_inputs *inputs,
                        const struct h5shuf_datasets *dss, const char *path, const char *outf, uint64_t mem,
                        const struct h5shuf_progress *progress, struct h5shuf_err *err)
{
    const uint64_t rows = inputs->rows;
    uint64_t slab_bytes = mem / 2 < H5SHUF_SLAB_BYTES_MAX ? mem / 2 : H5SHUF_SLAB_BYTES_MAX;
    uint64_t slab = slab_bytes / (dss->row_bytes + sizeof(uint64_t));
    if (slab == 0)
        slab = 1;
    /* [n]: the tuples; [n + 1]: the (id, tuple) pairs of the exact-order check */
    struct sums *in = calloc(dss->n + 2, sizeof *in), *out = calloc(dss->n + 2, sizeof *out);
    struct order ord = {.index = H5I_INVALID_HID, .bad_row = UINT64_MAX};
    char *index_path = NULL;
    hid_t *dsets = malloc(dss->n * sizeof *dsets);
    const char **paths = malloc(dss->n * sizeof *paths);
    hid_t file = H5I_INVALID_HID;
    struct hashed hp = {progress, 0, 2 * rows};
    struct h5shuf_refcanon canon, *rc = NULL; /* rows of references: hashed by what they point at */
    int st = H5SHUF_OK, has_seed = 0;
    for (size_t d = 0; dsets && d < dss->n; d++)
        dsets[d] = H5I_INVALID_HID;
    if (!in || !out || !dsets || !paths)
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    /* the output opened and checked first: a FIFO, a missing dataset or a wrong shape fails at once, not
     * after the inputs' rows were read */
    if (st == H5SHUF_OK)
        st = open_file(path, outf, &file, err);
    if (st == H5SHUF_OK)
        st = open_output(dss, rows, outf, file, dsets, err);
    for (size_t d = 0; st == H5SHUF_OK && !rc && d < dss->n; d++)
        if (!dss->ds[d].vlen && h5shuf__type_has_refs(dss->ds[d].ftype))
            st = h5shuf__refcanon_open(rc = &canon, file, dss, outf, err);
    /* (its provenance too: an attribute of the wrong shape fails before the inputs are read) */
    if (st == H5SHUF_OK)
        st = read_seed(file, outf, &has_seed, &ord.seed, err);
    if (st == H5SHUF_OK && has_seed)
        st = read_index(file, outf, rows, &index_path, err);
    if (st == H5SHUF_OK)
        st = draw_samples(inputs, dss, has_seed, ord.seed, outf, err);
    if (st == H5SHUF_OK)
        st = hash_inputs(cio, inputs, dss, slab, in, &hp, rc, err);
    if (st == H5SHUF_OK && index_path) {
        ord.path = index_path;
        ord.index = H5Dopen2(file, index_path, H5P_DEFAULT);
    }
    if (st == H5SHUF_OK) {
        for (size_t d = 0; d < dss->n; d++)
            paths[d] = dss->ds[d].out_path;
        if (rc)
            h5shuf__refcanon_output(rc, file);
        st = hash_rows(cio, NULL, 0, dss, dsets, rows, slab, out, &out[dss->n], outf, paths,
                       ord.index >= 0 ? &out[dss->n + 1] : NULL, 0, rows, ord.index >= 0 ? &ord : NULL, &hp, rc, err);
    }
    if (st == H5SHUF_OK)
        st = compare(dss, rows, outf, in, out, &ord, index_path, err);
    if (ord.index >= 0)
        H5Dclose(ord.index);
    if (rc)
        h5shuf__refcanon_free(rc);
    free(index_path);
    for (size_t d = 0; dsets && d < dss->n; d++)
        if (dsets[d] >= 0)
            H5Dclose(dsets[d]);
    if (file >= 0)
        H5Fclose(file);
    free(in);
    free(out);
    free(dsets);
    free(paths);
    return st;
}
