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
 */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <xxhash.h>

#include "filter_builtin.h"
#include "internal.h"

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

/* Hash rows [0, rows) of dsets[0..nds) in slabs into per[d] and *tuple.  When pairs is not NULL, also
 * the (id, tuple) pairs: ids are first_id + r on the input side, the index on the output side (ord). */
static int hash_rows(h5shuf_job *job, const hid_t *dsets, uint64_t rows, uint64_t slab, struct sums *per,
                     struct sums *tuple, const char *file, const char *const *paths, struct sums *pairs,
                     uint64_t first_id, struct order *ord)
{
    char cause[256];
    unsigned char **buf = h5shuf__bufs_alloc(job, slab);
    XXH128_hash_t *h = malloc((job->nds ? job->nds : 1) * sizeof *h);
    XXH3_state_t *xs = job->nvlen ? XXH3_createState() : NULL;
    int st = buf && h && (xs || !job->nvlen) ? H5SHUF_OK : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (uint64_t start = 0; start < rows && st == H5SHUF_OK; start += slab) {
        uint64_t n = rows - start < slab ? rows - start : slab;
        size_t nread = 0;
        for (size_t d = 0; d < job->nds && st == H5SHUF_OK; d++, nread = d)
            if ((job->ds[d].vlen ? h5shuf__vlen_read(&job->ds[d], dsets[d], start, n, buf[d])
                                 : h5shuf__chunkio_read(job->cio, dsets[d], job->ds[d].ftype, start, n, buf[d])) < 0)
                st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot read rows %llu..%llu: %s", file, paths[d],
                                  (unsigned long long)start, (unsigned long long)(start + n - 1),
                                  h5shuf__hdf5_cause(cause, sizeof cause));
        const uint64_t *ids = (const uint64_t *)buf[job->nds];
        if (st == H5SHUF_OK && ord && h5shuf__chunkio_read(job->cio, ord->index, H5T_NATIVE_UINT64, start, n, buf[job->nds]) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot read the index: %s", file, ord->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        for (uint64_t r = 0; r < n && st == H5SHUF_OK; r++) {
            for (size_t d = 0; d < job->nds; d++) {
                const struct h5shuf_dsinfo *ds = &job->ds[d];
                uint64_t rb = ds->row_bytes;
                if (ds->vlen) { /* the elements' payloads, each with its length */
                    XXH3_128bits_reset_withSeed(xs, d + 1);
                    for (uint64_t e = 0; e < ds->elems; e++) {
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
            XXH128_hash_t t = XXH3_128bits(h, job->nds * sizeof *h);
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
                if (pair.id >= job->rows)
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
            if (job->ds[d].vlen)
                h5shuf__vlen_reclaim(&job->ds[d], n, buf[d]);
    }
    h5shuf__bufs_free(job, buf);
    free(h);
    XXH3_freeState(xs);
    return st;
}

/* Open the output's datasets and check their type and shape against the inputs'. */
static int open_output(h5shuf_job *job, hid_t file, hid_t *dsets)
{
    const char *out = job->out_spec.file;
    char cause[256];
    for (size_t d = 0; d < job->nds; d++) {
        const struct h5shuf_dsinfo *ds = &job->ds[d];
        if (H5Lexists(file, ds->out_path, H5P_DEFAULT) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: no such dataset in the output", out, ds->out_path);
        }
        dsets[d] = H5Dopen2(file, ds->out_path, H5P_DEFAULT);
        if (dsets[d] < 0)
            return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", out, ds->out_path,
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
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: datatype or row shape differs from the input's", out,
                                ds->out_path);
        if (dims[0] != job->rows)
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: has %llu rows, the inputs %llu", out, ds->out_path,
                                (unsigned long long)dims[0], (unsigned long long)job->rows);
    }
    return H5SHUF_OK;
}

/* The output's index path (caller frees) and seed, when it has both and the index is (rows,) of
 * integers; else NULL. */
static char *output_index(hid_t file, uint64_t rows, uint64_t *seed)
{
    char *path = NULL;
    if (H5Aexists(file, "h5shuf_seed") <= 0 || H5Aexists(file, "h5shuf_index") <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return NULL;
    }
    hid_t a = H5Aopen(file, "h5shuf_seed", H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Aread(a, H5T_NATIVE_UINT64, seed);
    if (a >= 0)
        H5Aclose(a);
    a = H5Aopen(file, "h5shuf_index", H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    char *value = NULL;
    if (r >= 0 && t >= 0 && H5Tis_variable_str(t) > 0 && H5Aread(a, t, &value) >= 0 && value && value[0] == '/') {
        hid_t d = H5Lexists(file, value, H5P_DEFAULT) > 0 ? H5Dopen2(file, value, H5P_DEFAULT) : H5I_INVALID_HID;
        if (d >= 0) {
            hid_t s = H5Dget_space(d), dt = H5Dget_type(d);
            hsize_t n = 0;
            if (H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &n, NULL) == 1 && n == rows &&
                H5Tget_class(dt) == H5T_INTEGER)
                path = strdup(value);
            H5Tclose(dt);
            H5Sclose(s);
            H5Dclose(d);
        }
    }
    if (value)
        H5free_memory(value);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return path;
}

static int verify(h5shuf_job *job)
{
    char cause[256];
    int st = h5shuf__register_builtin_filters();
    if (st != H5SHUF_OK)
        return h5shuf__fail(&job->err, st, "cannot register the built-in filters (zstd, lzf, bitshuffle) with HDF5");
    if (!job->out_spec.file || job->ninputs == 0)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "verify needs inputs and an output");
    if ((st = h5shuf__inputs_open(job)) != H5SHUF_OK)
        return st;
    uint64_t slab_bytes = job->opts.mem_limit_bytes / 2 < H5SHUF_SLAB_BYTES_MAX ? job->opts.mem_limit_bytes / 2
                                                                                 : H5SHUF_SLAB_BYTES_MAX;
    uint64_t slab = slab_bytes / (job->row_bytes + sizeof(uint64_t));
    if (slab == 0)
        slab = 1;
    /* [nds]: the tuples; [nds + 1]: the (id, tuple) pairs of the exact-order check */
    struct sums *in = calloc(job->nds + 2, sizeof *in), *out = calloc(job->nds + 2, sizeof *out);
    struct order ord = {.index = H5I_INVALID_HID, .bad_row = UINT64_MAX};
    char *index_path = NULL;
    hid_t *dsets = malloc(job->nds * sizeof *dsets);
    const char **paths = malloc(job->nds * sizeof *paths);
    hid_t file = H5I_INVALID_HID;
    if (!in || !out || !dsets || !paths)
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; f < job->ninputs && st == H5SHUF_OK; f++) {
        const struct h5shuf_input *inp = &job->inputs[f];
        const struct h5shuf_spec *names = inp->spec.npaths ? &inp->spec : &job->inputs[0].spec;
        for (size_t d = 0; d < job->nds; d++) {
            dsets[d] = inp->src[d].dset;
            paths[d] = names->paths[d];
        }
        st = hash_rows(job, dsets, inp->rows, slab, in, &in[job->nds], inp->spec.file, paths, &in[job->nds + 1],
                       inp->first_row, NULL);
    }
    for (size_t d = 0; dsets && d < job->nds; d++)
        dsets[d] = H5I_INVALID_HID;
    if (st == H5SHUF_OK) {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
        if (H5Fis_hdf5(job->out_spec.file) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            st = h5shuf__fail(&job->err, H5SHUF_ENOTHDF5, "%s: missing or not an HDF5 file", job->out_spec.file);
        } else if ((file = H5Fopen(job->out_spec.file, H5F_ACC_RDONLY, fapl)) < 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot open: %s", job->out_spec.file,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        }
        H5Pclose(fapl);
    }
    if (st == H5SHUF_OK)
        st = open_output(job, file, dsets);
    if (st == H5SHUF_OK && (index_path = output_index(file, job->rows, &ord.seed)) != NULL) {
        ord.path = index_path;
        ord.index = H5Dopen2(file, index_path, H5P_DEFAULT);
    }
    if (st == H5SHUF_OK) {
        for (size_t d = 0; d < job->nds; d++)
            paths[d] = job->ds[d].out_path;
        st = hash_rows(job, dsets, job->rows, slab, out, &out[job->nds], job->out_spec.file, paths,
                       ord.index >= 0 ? &out[job->nds + 1] : NULL, 0, ord.index >= 0 ? &ord : NULL);
    }
    for (size_t d = 0; st == H5SHUF_OK && d < job->nds; d++)
        if (in[d].lo != out[d].lo || in[d].hi != out[d].hi)
            st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH,
                              "%s:%s: rows differ from the inputs' (a row altered, missing or duplicated)",
                              job->out_spec.file, job->ds[d].out_path);
    if (st == H5SHUF_OK && (in[job->nds].lo != out[job->nds].lo || in[job->nds].hi != out[job->nds].hi))
        st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH,
                          "%s: datasets misaligned: each dataset's rows match the inputs', but not row by row across "
                          "%s and the others",
                          job->out_spec.file, job->ds[0].out_path);
    if (st == H5SHUF_OK && ord.index >= 0 && ord.out_of_range)
        st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: the index names rows beyond the inputs' %llu",
                          job->out_spec.file, index_path, (unsigned long long)job->rows);
    if (st == H5SHUF_OK && ord.index >= 0 && ord.bad_row != UINT64_MAX)
        st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH,
                          "%s:%s: the order differs from the one seed %llu defines (from output row %llu)",
                          job->out_spec.file, index_path, (unsigned long long)ord.seed, (unsigned long long)ord.bad_row);
    if (st == H5SHUF_OK && ord.index >= 0 &&
        (in[job->nds + 1].lo != out[job->nds + 1].lo || in[job->nds + 1].hi != out[job->nds + 1].hi))
        st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH,
                          "%s:%s: rows do not match their index (a row moved, or the index altered)", job->out_spec.file,
                          index_path);
    if (ord.index >= 0)
        H5Dclose(ord.index);
    free(index_path);
    for (size_t d = 0; dsets && d < job->nds; d++)
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

int h5shuf_verify(h5shuf_job *job)
{
    h5shuf__err_clear(job);
    struct h5shuf_quiet q;
    h5shuf__quiet_begin(&q);
    int st = job->planned ? h5shuf__fail(&job->err, H5SHUF_EINVAL, "verify needs a job that was not planned") : H5SHUF_OK;
    if (st == H5SHUF_OK) { /* decompression on h5shuf_options.threads threads, as in a run */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned threads = job->opts.threads ? job->opts.threads : cpus > 0 ? (unsigned)cpus : 1;
        if ((st = h5shuf__chunkio_create(threads, &job->cio)) != H5SHUF_OK)
            h5shuf__fail(&job->err, st, "out of memory for %u threads", threads);
    }
    if (st == H5SHUF_OK)
        st = verify(job);
    h5shuf__chunkio_free(job->cio);
    job->cio = NULL;
    h5shuf__quiet_end(&q);
    return st;
}
