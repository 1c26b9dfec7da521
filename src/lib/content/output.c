/* SPDX-License-Identifier: BSD-3-Clause */
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

/*-*************************************
*  Creation properties of an output dataset
***************************************/

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
    int rank = 0; /* dims [0, rank) given by chunk_shape */
    if (chunk_shape) {
        uint64_t given[H5SHUF_RANK_MAX];
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
        if (cdims[k] > ds->dims[k] && k >= rank) /* the input's, over an unlimited dim: the output's is fixed */
            cdims[k] = ds->dims[k];
        if (cdims[k] > ds->dims[k])
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: chunk dimension %d (%llu) exceeds the dataset's (%llu)", where,
                                k, (unsigned long long)cdims[k], (unsigned long long)ds->dims[k]);
        if (cdims[k] == 0)
            cdims[k] = 1;
    }
    return H5SHUF_OK;
}

/* The registered filters that change values, or have modes that do (HDF Group's list of registered
 * filter plugins, hdf5_plugins/docs/RegisteredFilterPlugins.md, and each filter's own documentation); a
 * stream does not say which mode wrote it, so any of them may re-encode the rows lossily.  Scale-offset
 * is lossy on floating point only (it rounds to a decimal scale). */
static const struct {
    H5Z_filter_t id;
    const char *name;
} lossy_filters[] = {
    {258, "fpzip"},       {32005, "APAX"},     {32007, "JPEG-XR"}, {32012, "JPEG-LS"}, {32013, "ZFP"},
    {32014, "fpzip"},     {32016, "B3D"},      {32017, "SZ"},      {32019, "JPEG"},    {32021, "FAPEC"},
    {32022, "BitGroom"},  {32023, "Granular BitRound"},            {32024, "SZ3"},     {32028, "SPERR"},
    {32030, "FFmpeg"},
};

/* The name of filter id when it is lossy on ds's type, else NULL. */
static const char *lossy_name(H5Z_filter_t id, const struct h5shuf_dsinfo *ds)
{
    for (size_t i = 0; i < sizeof lossy_filters / sizeof *lossy_filters; i++)
        if (lossy_filters[i].id == id)
            return lossy_filters[i].name;
    if (id == H5Z_FILTER_SCALEOFFSET && H5Tget_class(ds->ftype) == H5T_FLOAT)
        return "scale-offset on floating point";
    return NULL;
}

/* The filters of the output dataset on dcpl: the first input's pipeline as it is (keep), or f's.  Keeping a
 * lossy filter re-encodes the rows through it, changing them: refused unless allow_lossy (ds->lossy). */
static int set_filters(struct h5shuf_dsinfo *ds, const struct h5shuf_filters *f, int allow_lossy, hid_t dcpl,
                       const char *where, const char *in_where, struct h5shuf_err *err)
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
        const char *lossy = id >= 0 ? lossy_name(id, ds) : NULL;
        if (lossy && !allow_lossy)
            return h5shuf__fail(err, H5SHUF_EUNSUPPORTED,
                                "%s: filter %d (%s) may be lossy: re-encoding the shuffled rows through it could change "
                                "their values; choose -c none, gzip or zstd (or --allow-lossy to accept it)",
                                in_where, (int)id, lossy);
        if (lossy) {
            ds->lossy = (int)id;
            snprintf(ds->lossy_name, sizeof ds->lossy_name, "%s", lossy);
        }
        if (id < 0 || H5Pset_filter(dcpl, id, flags, ncd, cd) < 0)
            return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot copy filter %d of the input", where, i);
    }
    return H5SHUF_OK;
}

/* The user-defined fill value of ds's input, if any, on dcpl.  < 0 on an HDF5 error. */
static herr_t copy_fill_value(const struct h5shuf_dsinfo *ds, hid_t dcpl)
{
    H5D_fill_value_t fv;
    if (H5Pfill_value_defined(ds->dcpl, &fv) < 0)
        return -1;
    if (fv != H5D_FILL_VALUE_USER_DEFINED)
        return 0;
    /* a vlen fill value (netCDF gives strings "") is read into memory HDF5 allocates: reclaimed below */
    hid_t mt = ds->vlen ? H5Tget_native_type(ds->ftype, H5T_DIR_DEFAULT) : H5Tcopy(ds->ftype);
    hid_t scalar = H5Screate(H5S_SCALAR);
    void *buf = mt >= 0 ? calloc(1, H5Tget_size(mt)) : NULL;
    herr_t r = buf && scalar >= 0 ? H5Pget_fill_value(ds->dcpl, mt, buf) : -1;
    if (r >= 0) {
        r = H5Pset_fill_value(dcpl, mt, buf);
        if (ds->vlen)
            H5Dvlen_reclaim(mt, scalar, H5P_DEFAULT, buf);
    }
    free(buf);
    if (scalar >= 0)
        H5Sclose(scalar);
    if (mt >= 0)
        H5Tclose(mt);
    return r;
}

/* Creation properties of an output dataset: the first input's layout, chunk shape and filters, or
 * those the options ask for, without what must not be carried over (external raw data files, virtual
 * mappings).  Sets ds->out_dcpl, ds->out_maxdims and ds->out_chunk_rows. */
static int output_dcpl(struct h5shuf_dsinfo *ds, uint64_t rows, uint64_t head_rows, const struct h5shuf_filters *f,
                       const char *chunk_shape, int allow_lossy, const char *in_file, const char *out_file,
                       struct h5shuf_err *err)
{
    char where[600], in_where[600];
    snprintf(where, sizeof where, "%s:%s", out_file, ds->out_path);
    snprintf(in_where, sizeof in_where, "%s:%s", in_file, ds->in_path);
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
        /* a head of fewer rows than the input's chunk (h5py's of a large dataset: thousands of rows): its
         * chunk cut to them, else its fixed maximum dimension would be the chunk's rows, not its own */
        if (head_rows && cdims[0] > head_rows && !chunk_shape && maxdims[0] != H5S_UNLIMITED)
            cdims[0] = head_rows;
        if (H5Pset_chunk(dcpl, ds->rank, cdims) < 0)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: invalid chunk shape", where);
        ds->out_chunk_rows = cdims[0];
        if ((st = set_filters(ds, f, allow_lossy, dcpl, where, in_where, err)) != H5SHUF_OK)
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
    /* The attributes in the order the input's dataset tracks (netCDF-4's variables do). */
    unsigned attr_order = 0;
    if (H5Pget_attr_creation_order(ds->dcpl, &attr_order) >= 0 && attr_order)
        H5Pset_attr_creation_order(dcpl, attr_order);
    /* Keep the fill value (users see it: netCDF's _FillValue, and its _NoFill when none is defined). */
    if (copy_fill_value(ds, dcpl) < 0) {
        char cause[256];
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot keep the fill value: %s", in_where,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    }
    /* Never written: every element is, and HDF5 would write a contiguous dataset's fill over all of it
     * first (h5py asks for fill at allocation).  Not a value: HDF5 refuses "never" for vlen types only. */
    H5Pset_fill_time(dcpl, ds->vlen ? H5D_FILL_TIME_IFSET : H5D_FILL_TIME_NEVER);
    H5Pset_obj_track_times(dcpl, 0); /* no clock in the file: same input and seed, same bytes */
    return H5SHUF_OK;
}

int h5shuf__output_plan(struct h5shuf_datasets *dsets, uint64_t rows, uint64_t head_rows,
                        const struct h5shuf_filters *f, const char *chunk_shape, int allow_lossy, const char *in_file,
                        const char *out_file, struct h5shuf_err *err)
{
    for (size_t d = 0; d < dsets->n; d++) {
        int st = output_dcpl(&dsets->ds[d], rows, head_rows, f, chunk_shape, allow_lossy, in_file, out_file, err);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

/*-*************************************
*  Source index rows
***************************************/

hid_t h5shuf__source_type(const struct h5shuf_inputs *in)
{
    if (in->weighted)
        return in->source_type;
    return in->nsrc > UINT16_MAX ? H5T_STD_U32LE : H5T_STD_U16LE;
}

void h5shuf__source_row(const struct h5shuf_inputs *in, uint64_t id, unsigned char *out, size_t bytes)
{
    const size_t f = h5shuf__input_of(in, id);
    const uint32_t src = (uint32_t)in->v[f].src;
    const size_t isz = bytes == 2 || bytes == 12 ? 2 : 4; /* (bytes: 2, 4, or 12, 14 with weights) */
    const uint16_t s16 = (uint16_t)src, copy = (uint16_t)in->v[f].copy;
    memcpy(out, isz == 2 ? (const void *)&s16 : &src, isz);
    if (bytes > 4) {
        const uint64_t row = h5shuf__input_file_row(in, f, id - in->v[f].first_row);
        memcpy(out + isz, &copy, 2);
        memcpy(out + isz + 2, &row, 8);
    }
}

/*-*************************************
*  Creating the output datasets and files
***************************************/

/* Create an index-like dataset (n,) of type ftype at path: chunks of at most H5SHUF_INDEX_CHUNK_ROWS
 * (of an output of all rows: n, or more for a part), shuffle + deflate (readable everywhere). */
static hid_t index_create(hid_t out, const char *path, hid_t ftype, hsize_t n, hsize_t all)
{
    hsize_t chunk = all == 0 ? 1 : all < H5SHUF_INDEX_CHUNK_ROWS ? all : H5SHUF_INDEX_CHUNK_ROWS;
    hsize_t maxn = n > chunk ? n : chunk;
    hid_t dset = H5I_INVALID_HID;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t space = H5Screate_simple(1, &n, &maxn);
    if (dcpl >= 0 && space >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_shuffle(dcpl) >= 0 &&
        H5Pset_deflate(dcpl, 4) >= 0 && H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 &&
        H5Pset_obj_track_times(dcpl, 0) >= 0 && h5shuf__make_parents(out, path) >= 0 && !H5SHUF_FAULT())
        dset = H5Dcreate2(out, path, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return dset;
}

/* Create shuffled dataset ds with rows rows (of the N of all) in out, without its attributes; *dset is
 * the new dataset. */
static int dataset_create(const struct h5shuf_dsinfo *ds, uint64_t rows, uint64_t n, hid_t out, const char *ofile,
                          hid_t *dset, struct h5shuf_err *err)
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
    *dset = space >= 0 && h5shuf__make_parents(out, ds->out_path) >= 0
                ? (H5SHUF_FAULT() ? H5I_INVALID_HID
                                  : H5Dcreate2(out, ds->out_path, ds->ftype, space, H5P_DEFAULT, ds->out_dcpl, dapl))
                : H5I_INVALID_HID;
    if (*dset < 0)
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create dataset: %s%s", ofile, ds->out_path,
                          h5shuf__hdf5_cause(cause, sizeof cause),
                          ds->vlen && H5Pget_nfilters(ds->out_dcpl) > 0
                              ? " (HDF5 refuses these filters on variable-length data; deflate and shuffle work: try -c gzip)"
                              : "");
    if (dapl >= 0)
        H5Pclose(dapl);
    if (space >= 0)
        H5Sclose(space);
    return st;
}

/* The attributes of plan entry e (its object made in out), references rewritten through rw. */
static int entry_attrs(const struct h5shuf_outfile *of, const struct h5shuf_obj *e, hid_t out, const char *ofile,
                       const hid_t *out_dsets, struct h5shuf_rewrite *rw, struct h5shuf_err *err)
{
    const struct h5shuf_input *first = &of->inputs->v[0];
    if (e->kind == H5SHUF_OBJ_SHUFFLED) {
        char what[600];
        snprintf(what, sizeof what, "%s:%s", ofile, of->dsets->ds[e->d].out_path);
        return h5shuf__attrs_copy(first->dset[e->d], out_dsets[e->d], what, rw, err);
    }
    if (e->kind == H5SHUF_OBJ_GROUP || e->kind == H5SHUF_OBJ_DATASET || e->kind == H5SHUF_OBJ_TYPE)
        return h5shuf__objcopy_attrs(e, e->path, first, out, ofile, rw, err);
    return H5SHUF_OK;
}

/* An index-like dataset at path of n rows (chunked as for all rows), out_dsets[k]. */
static int index_make(hid_t out, const char *ofile, const char *path, hid_t ftype, uint64_t n, uint64_t all,
                      const char *what, hid_t *dset, struct h5shuf_err *err)
{
    char cause[256];
    *dset = index_create(out, path, ftype, n, all);
    if (*dset < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot create the %s dataset: %s", ofile, path, what,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* The index and source index datasets of rows rows, chunked as for all rows. */
static int indexes_make(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows, uint64_t all,
                        hid_t *out_dsets, struct h5shuf_err *err)
{
    const size_t n = of->dsets->n;
    /* index[r]: the input row of output row r; source_index[r]: its input file */
    int st = H5SHUF_OK;
    if (of->index_path)
        st = index_make(out, ofile, of->index_path, H5T_STD_U64LE, rows, all, "index", &out_dsets[n], err);
    if (st == H5SHUF_OK && of->source_index_path)
        st = index_make(out, ofile, of->source_index_path, h5shuf__source_type(of->inputs), rows, all,
                        "source index", &out_dsets[n + 1], err);
    return st;
}

int h5shuf__output_create_part(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows,
                               uint64_t all_rows, hid_t *out_dsets, struct h5shuf_err *err)
{
    int st = H5SHUF_OK;
    for (size_t d = 0; d < of->dsets->n && st == H5SHUF_OK; d++)
        st = dataset_create(&of->dsets->ds[d], rows, all_rows, out, ofile, &out_dsets[d], err);
    return st == H5SHUF_OK ? indexes_make(of, out, ofile, rows, all_rows, out_dsets, err) : st;
}

int h5shuf__output_create(const struct h5shuf_outfile *of, hid_t out, const char *ofile, uint64_t rows, hid_t *out_dsets,
                          struct h5shuf_err *err)
{
    const struct h5shuf_datasets *dsets = of->dsets;
    const struct h5shuf_objcopy *oc = of->objects;
    const struct h5shuf_input *first = &of->inputs->v[0];
    int st = H5SHUF_OK;
    struct h5shuf_rewrite rw = {.map = &oc->map, .src = first->file, .out = out, .drop = of->drop_references};
    h5shuf__vlen_limit_cache(dsets, out);
    /* The objects in the input's order; the attributes that hold references once every object exists. */
    for (size_t i = 0; i < oc->n && st == H5SHUF_OK; i++) {
        const struct h5shuf_obj *e = &oc->v[i];
        if (e->kind == H5SHUF_OBJ_ALIAS)
            continue;
        st = e->kind == H5SHUF_OBJ_SHUFFLED
                 ? dataset_create(&dsets->ds[e->d], rows, of->inputs->rows, out, ofile, &out_dsets[e->d], err)
                 : h5shuf__objcopy_make(e, first, out, ofile, err);
        if (st == H5SHUF_OK && !e->deferred)
            st = entry_attrs(of, e, out, ofile, out_dsets, &rw, err);
    }
    if (st == H5SHUF_OK)
        st = indexes_make(of, out, ofile, rows, rows, out_dsets, err);
    for (size_t i = 0; i < oc->n && st == H5SHUF_OK; i++) /* further hard links, once every object exists */
        if (oc->v[i].kind == H5SHUF_OBJ_ALIAS)
            st = h5shuf__objcopy_make(&oc->v[i], first, out, ofile, err);
    for (size_t i = 0; i < oc->n && st == H5SHUF_OK; i++)
        if (oc->v[i].deferred)
            st = entry_attrs(of, &oc->v[i], out, ofile, out_dsets, &rw, err);
    return st;
}

/*-*************************************
*  Cutting the rows into parts
***************************************/

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t h5shuf__output_cut_rows(const struct h5shuf_datasets *dsets, int index, int source, uint64_t rows)
{
    uint64_t u = 1;
    for (size_t d = 0; d < dsets->n + 2 && u < rows; d++) {
        uint64_t c = d < dsets->n ? dsets->ds[d].out_chunk_rows
                     : (d == dsets->n ? index : source) ? (rows < H5SHUF_INDEX_CHUNK_ROWS ? rows : H5SHUF_INDEX_CHUNK_ROWS)
                                                        : 1;
        c = c ? c : 1;
        u = u / gcd64(u, c) > rows / c ? rows : u / gcd64(u, c) * c;
    }
    return u < rows ? u : rows;
}
