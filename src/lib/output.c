/*
 * output.c - an output file's datasets: layout, chunk shape and filters planned once from the first
 * input and the options, then created in each output file with the first input's attributes (and, in
 * whole-file mode, after the first input's other objects are copied), plus the index datasets.
 * Nothing in an output file records a clock: the same input and seed give the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "filters.h"
#include "h5err.h"
#include "objcopy.h"
#include "output.h"
#include "plan.h"
#include "vlen.h"

_Static_assert(H5SHUF_RANK_MAX == H5S_MAX_RANK, "a chunk shape holds as many dims as a dataset");

/* The output chunk shape of ds (rows of the output in all) into cdims: the first input's chunks, or about
 * 1 MiB of rows for an unchunked input, with the dims chunk_shape gives ("ROWS" or "D0xD1x...") over it. */
static int chunk_dims(const struct h5shuf_dsinfo *ds, int in_chunked, uint64_t rows, const char *chunk_shape,
                      const char *where, hsize_t *cdims, struct h5shuf_err *err)
{
    if (in_chunked) {
        H5Pget_chunk(ds->dcpl, H5S_MAX_RANK, cdims);
    } else {
        memcpy(cdims, ds->dims, sizeof ds->dims);
        /* about 1 MiB of rows, as h5py and h5repack pick chunks of that order */
        uint64_t n = (UINT64_C(1) << 20) / ds->row_bytes;
        if (n > rows)
            n = rows; /* no chunk larger than the data (it would also raise maxdims) */
        cdims[0] = n ? n : 1;
    }
    if (chunk_shape) {
        uint64_t given[H5SHUF_RANK_MAX];
        int rank;
        int st = h5shuf__chunk_parse(chunk_shape, given, &rank, err);
        if (st != H5SHUF_OK)
            return st;
        if (rank > 1 && rank != ds->rank)
            return h5shuf__fail(err, H5SHUF_EINVAL,
                                "%s: chunk shape %s has rank %d but the dataset has rank %d (--chunk-rows sets rows only)",
                                where, chunk_shape, rank, ds->rank);
        for (int k = 0; k < rank; k++)
            cdims[k] = given[k];
    }
    for (int k = 1; k < ds->rank; k++) {
        if (cdims[k] > ds->dims[k])
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: chunk dimension %d (%llu) exceeds the dataset's (%llu)", where,
                                k, (unsigned long long)cdims[k], (unsigned long long)ds->dims[k]);
        if (cdims[k] == 0)
            cdims[k] = 1;
    }
    return H5SHUF_OK;
}

/* The filters of the output dataset on dcpl: the first input's pipeline as it is (keep), or f's. */
static int set_filters(const struct h5shuf_dsinfo *ds, const struct h5shuf_filters *f, hid_t dcpl, const char *where,
                       struct h5shuf_err *err)
{
    if (!f->keep) {
        char cause[256];
        if (h5shuf__filters_apply(f, dcpl) < 0)
            return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot set the filters: %s", where,
                                h5shuf__hdf5_cause(cause, sizeof cause));
        return H5SHUF_OK;
    }
    int nf = H5Pget_nfilters(ds->dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[32], cfg;
        size_t ncd = 32;
        char name[64];
        H5Z_filter_t id = H5Pget_filter2(ds->dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &cfg);
        if (id < 0 || H5Pset_filter(dcpl, id, flags, ncd, cd) < 0)
            return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot copy filter %d of the input", where, i);
    }
    return H5SHUF_OK;
}

/* Creation properties of an output dataset: the first input's layout, chunk shape and filters, or
 * those the options ask for, without what must not be carried over (external raw data files, virtual
 * mappings).  Sets ds->out_dcpl, ds->out_maxdims and ds->out_chunk_rows. */
static int output_dcpl(struct h5shuf_dsinfo *ds, uint64_t rows, const struct h5shuf_filters *f, const char *chunk_shape,
                       const char *out_file, struct h5shuf_err *err)
{
    char where[600];
    snprintf(where, sizeof where, "%s:%s", out_file, ds->out_path);
    hsize_t *maxdims = ds->out_maxdims;
    memcpy(maxdims, ds->maxdims, sizeof ds->maxdims);
    if (maxdims[0] != H5S_UNLIMITED && maxdims[0] < rows)
        maxdims[0] = rows;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot make creation properties", where);
    ds->out_dcpl = dcpl;
    H5D_layout_t layout = H5Pget_layout(ds->dcpl);
    int in_chunked = layout == H5D_CHUNKED;
    int want_filters = !f->keep && (f->shuffle || f->fletcher32 || f->codec != H5SHUF_CODEC_NONE);
    if (in_chunked || want_filters || chunk_shape) {
        hsize_t cdims[H5S_MAX_RANK];
        int st = chunk_dims(ds, in_chunked, rows, chunk_shape, where, cdims, err);
        if (st != H5SHUF_OK)
            return st;
        if (H5Pset_chunk(dcpl, ds->rank, cdims) < 0)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: invalid chunk shape", where);
        ds->out_chunk_rows = cdims[0];
        if ((st = set_filters(ds, f, dcpl, where, err)) != H5SHUF_OK)
            return st;
        if (maxdims[0] != H5S_UNLIMITED && maxdims[0] < cdims[0])
            maxdims[0] = cdims[0]; /* a fixed dimension may not be smaller than its chunk */
    } else if (layout == H5D_COMPACT && rows * ds->row_bytes <= 60000) {
        H5Pset_layout(dcpl, H5D_COMPACT); /* compact data must fit the 64 KiB object header */
    } else {
        H5Pset_layout(dcpl, H5D_CONTIGUOUS);
        maxdims[0] = rows; /* only chunked datasets can be extendible */
        for (int k = 1; k < ds->rank; k++)
            maxdims[k] = ds->dims[k];
    }
    /* Keep the fill value (a property users see); never write it, every element is written. */
    H5D_fill_value_t fv;
    /* (not for vlen rows: reading a vlen fill value allocates memory HDF5 would hand over) */
    if (!ds->vlen && H5Pfill_value_defined(ds->dcpl, &fv) >= 0 && fv == H5D_FILL_VALUE_USER_DEFINED) {
        void *buf = calloc(1, H5Tget_size(ds->ftype));
        if (buf && H5Pget_fill_value(ds->dcpl, ds->ftype, buf) >= 0)
            H5Pset_fill_value(dcpl, ds->ftype, buf);
        free(buf);
    }
    /* (HDF5 refuses "never" for vlen types; their default fill is not user-defined, so none is written) */
    H5Pset_fill_time(dcpl, ds->vlen ? H5D_FILL_TIME_IFSET : H5D_FILL_TIME_NEVER);
    H5Pset_obj_track_times(dcpl, 0); /* no clock in the file: same input and seed, same bytes */
    return H5SHUF_OK;
}

int h5shuf__output_plan(struct h5shuf_datasets *dsets, uint64_t rows, const struct h5shuf_filters *f,
                        const char *chunk_shape, const char *out_file, struct h5shuf_err *err)
{
    for (size_t d = 0; d < dsets->n; d++) {
        int st = output_dcpl(&dsets->ds[d], rows, f, chunk_shape, out_file, err);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

/* Create the missing groups on the way to path, without timestamps (H5Pset_create_intermediate_group
 * would give them the default, clock-stamped properties). */
static herr_t make_parents(hid_t out, const char *path)
{
    char *buf = strdup(path);
    if (!buf)
        return -1;
    herr_t r = 0;
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    for (char *p = strchr(buf + 1, '/'); p && r >= 0; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (H5Lexists(out, buf, H5P_DEFAULT) <= 0) {
            hid_t g = H5Gcreate2(out, buf, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            r = g < 0 ? -1 : H5Gclose(g);
        }
        *p = '/';
    }
    H5Pclose(gcpl);
    free(buf);
    return r;
}

hid_t h5shuf__source_type(size_t ninputs)
{
    return ninputs > UINT16_MAX ? H5T_STD_U32LE : H5T_STD_U16LE;
}

/* Create an index-like dataset (n,) of type ftype at path: chunks of at most H5SHUF_INDEX_CHUNK_ROWS,
 * shuffle + deflate (readable everywhere). */
static hid_t index_create(hid_t out, const char *path, hid_t ftype, hsize_t n)
{
    hsize_t chunk = n == 0 ? 1 : n < H5SHUF_INDEX_CHUNK_ROWS ? n : H5SHUF_INDEX_CHUNK_ROWS;
    hsize_t maxn = n > chunk ? n : chunk;
    hid_t dset = H5I_INVALID_HID;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t space = H5Screate_simple(1, &n, &maxn);
    if (dcpl >= 0 && space >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
        H5Pset_deflate(dcpl, 4) >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
        H5Pset_obj_track_times(dcpl, 0) >= 0 && make_parents(out, path) >= 0 && !H5SHUF_FAULT())
        dset = H5Dcreate2(out, path, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return dset;
}

/* Create shuffled dataset ds with rows rows (of the N of) in out, with the first input's attributes from
 * src (a dataset of it); *dset is the new dataset. */
static int dataset_create(const struct h5shuf_dsinfo *ds, uint64_t rows, uint64_t n, hid_t src, hid_t out,
                          const char *ofile, hid_t *dset, struct h5shuf_err *err)
{
    char cause[256];
    int st = H5SHUF_OK;
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    memcpy(dims, ds->dims, sizeof dims);
    memcpy(maxdims, ds->out_maxdims, sizeof maxdims);
    dims[0] = rows;
    if (rows != n) { /* a shard, a split or a head: its own size */
        if (ds->out_chunk_rows == 0)
            maxdims[0] = rows; /* contiguous and compact datasets cannot be extendible */
        else if (maxdims[0] != H5S_UNLIMITED)
            maxdims[0] = rows > ds->out_chunk_rows ? rows : ds->out_chunk_rows;
    }
    hid_t space = H5Screate_simple(ds->rank, dims, maxdims);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    /* Bands cover whole chunks, which HDF5 writes without caching; no cache needed. */
    H5Pset_chunk_cache(dapl, 521, 0, 1.0);
    *dset = space >= 0 && make_parents(out, ds->out_path) >= 0
                ? (H5SHUF_FAULT() ? H5I_INVALID_HID
                                  : H5Dcreate2(out, ds->out_path, ds->ftype, space, H5P_DEFAULT, ds->out_dcpl, dapl))
                : H5I_INVALID_HID;
    if (*dset < 0) {
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create dataset: %s%s", ofile, ds->out_path,
                          h5shuf__hdf5_cause(cause, sizeof cause),
                          ds->vlen && H5Pget_nfilters(ds->out_dcpl) > 0
                              ? " (HDF5 refuses these filters on variable-length data; deflate and shuffle work: try -c gzip)"
                              : "");
    } else {
        char what[512];
        snprintf(what, sizeof what, "%s:%s", ofile, ds->out_path);
        st = h5shuf__attrs_copy(src, *dset, what, err);
    }
    if (dapl >= 0)
        H5Pclose(dapl);
    if (space >= 0)
        H5Sclose(space);
    return st;
}

int h5shuf__output_create(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows, hid_t *out_dsets,
                          struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = of->dsets;
    const struct h5shuf_input *first = &of->inputs->v[0];
    char cause[256];
    int st = H5SHUF_OK;
    struct h5shuf_objcopy cs = {.err = err, .src = first, .dsets = dsets};
    h5shuf__vlen_limit_cache(dsets, out);
    if (of->inputs->whole_file)
        st = h5shuf__objcopy_tree(&cs, out, ofile);
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++)
        st = dataset_create(&dsets->ds[d], rows, of->inputs->rows, first->dset[d], out, ofile, &out_dsets[d], err);
    if (st == H5SHUF_OK && of->index_path) {
        /* index[r]: the input row of output row r */
        out_dsets[dsets->n] = index_create(out, of->index_path, H5T_STD_U64LE, rows);
        if (out_dsets[dsets->n] < 0)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create the index dataset: %s", ofile, of->index_path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK && of->source_index_path) {
        /* source_index[r]: the input file of output row r */
        out_dsets[dsets->n + 1] = index_create(out, of->source_index_path, h5shuf__source_type(of->inputs->n), rows);
        if (out_dsets[dsets->n + 1] < 0)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create the source index dataset: %s", ofile,
                              of->source_index_path, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK)
        st = h5shuf__objcopy_links(&cs, out, ofile);
    h5shuf__objcopy_free(&cs);
    return st;
}
