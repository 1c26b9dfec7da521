/*
 * hdf5_io.c - the HDF5 side of the job: opening and checking the inputs, discovering the datasets of a
 * whole file, creating the output (datasets, copied objects, attributes, provenance) and moving rows as
 * raw bytes.
 *
 * Rows are read and written with the file datatype as the memory type, so HDF5 converts nothing and
 * the output's bytes are the input's, bit for bit, whatever the type (big-endian floats, compounds,
 * strings, opaque...).  Variable-length sequences and strings are moved by vlen.c; references, vlen
 * data nested in other types and scalars are refused with a message naming the dataset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Chunk cache of an input dataset: one band of chunks (all chunks of one chunk-row along dim 0), so a
 * chunk that straddles two slabs is decompressed once; at most this many bytes. */
#define INPUT_CACHE_BYTES_MAX (16u << 20)

const char *h5shuf__where(const h5shuf_job *job, size_t f, size_t d, char *buf, size_t cap)
{
    const char *file = f < job->ninputs ? job->inputs[f].spec.file : "?";
    if (d < job->nds)
        snprintf(buf, cap, "%s:%s", file, job->ds[d].in_path);
    else
        snprintf(buf, cap, "%s", file);
    return buf;
}

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- opening -------------------------------------------------------------------------------------- */

static int open_file(h5shuf_job *job, struct h5shuf_input *in)
{
    struct stat st;
    char cause[256];
    const char *path = h5shuf__input_path(in);
    if (stat(path, &st) != 0)
        return h5shuf__fail(&job->err, errno == ENOENT ? H5SHUF_ENOENT : H5SHUF_EIO, "%s: %s", in->spec.file,
                            strerror(errno));
    if (S_ISDIR(st.st_mode))
        return h5shuf__fail(&job->err, H5SHUF_ENOTHDF5, "%s: is a directory, not an HDF5 file", in->spec.file);
    if (access(path, R_OK) != 0)
        return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: %s", in->spec.file, strerror(errno));
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(&job->err, H5SHUF_ENOTHDF5, "%s: not an HDF5 file", in->spec.file);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    in->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (in->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause); /* before H5Pclose clears the stack */
    H5Pclose(fapl);
    if (in->file < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot open: %s", in->spec.file, cause);
    return H5SHUF_OK;
}

/* Check that every link on path exists, so a missing dataset gets "no such dataset" and not HDF5's
 * error.  Returns 1 when it exists, 0 when not, -1 on a broken file. */
static int path_exists(hid_t file, const char *path)
{
    char *buf = strdup(path);
    if (!buf)
        return -1;
    int ok = 1;
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
            if (e > 0 && c != '\0') {
                /* an intermediate link must resolve to a group for the next H5Lexists to be legal */
                H5O_info_t oi;
                if (H5Oget_info_by_name(file, buf, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
                    e = 0;
            }
            *p = c;
            if (e <= 0) {
                H5Eclear2(H5E_DEFAULT);
                ok = e < 0 ? -1 : 0;
                break;
            }
            if (c == '\0')
                break;
        }
    }
    free(buf);
    return ok;
}

/* Why a datatype cannot be shuffled, or NULL when it can. */
static const char *type_unsupported(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_REFERENCE || H5Tdetect_class(t, H5T_REFERENCE) > 0)
        return "reference datatype (references cannot be moved to another file)";
    const char *why = h5shuf__vlen_unsupported(t);
    if (why)
        return why;
    if (H5Tget_size(t) == 0)
        return "datatype of size 0";
    return NULL;
}

/* Open dataset path of input f as shuffled dataset d; check it against the first input's. */
static int open_dataset(h5shuf_job *job, size_t f, size_t d, const char *path)
{
    struct h5shuf_input *in = &job->inputs[f];
    const char *file = in->spec.file;
    char cause[256];
    int st = H5SHUF_OK;
    hid_t ftype = H5I_INVALID_HID, space = H5I_INVALID_HID, dapl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;

    int e = path_exists(in->file, path);
    if (e <= 0)
        return h5shuf__fail(&job->err, e < 0 ? H5SHUF_EHDF5 : H5SHUF_ENOENT, "%s:%s: no such dataset", file, path);
    H5O_info_t oi;
    if (H5Oget_info_by_name(in->file, path, &oi, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(&job->err, H5SHUF_ENOENT, "%s:%s: link does not resolve to an object (dangling link?)",
                            file, path);
    }
    if (oi.type != H5O_TYPE_DATASET)
        return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s:%s: is a %s, not a dataset", file, path,
                            oi.type == H5O_TYPE_GROUP ? "group" : "named datatype");

    hid_t dset = H5Dopen2(in->file, path, H5P_DEFAULT);
    if (dset < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", file, path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    in->src[d].dset = dset;
    ftype = H5Dget_type(dset);
    space = H5Dget_space(dset);
    if (ftype < 0 || space < 0) {
        st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
        goto out;
    }
    const char *why = type_unsupported(ftype);
    if (why) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s:%s: unsupported %s", file, path, why);
        goto out;
    }
    int rank = H5Sget_simple_extent_ndims(space);
    if (H5Sget_simple_extent_type(space) != H5S_SIMPLE || rank < 1) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s:%s: unsupported %s dataspace (rows need rank >= 1)",
                          file, path, H5Sget_simple_extent_type(space) == H5S_NULL ? "null" : "scalar");
        goto out;
    }
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(space, dims, maxdims);
    H5T_class_t tclass = H5Tget_class(ftype);
    int is_vlen = tclass == H5T_VLEN || (tclass == H5T_STRING && H5Tis_variable_str(ftype) > 0);
    /* a vlen row's record in memory is HDF5's: hvl_t or char * per element (vlen.c) */
    uint64_t row_bytes = !is_vlen ? H5Tget_size(ftype) : tclass == H5T_VLEN ? sizeof(hvl_t) : sizeof(char *);
    for (int k = 1; k < rank; k++) {
        if (dims[k] != 0 && row_bytes > UINT64_MAX / dims[k]) {
            st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s:%s: row size overflows 64 bits", file, path);
            goto out;
        }
        row_bytes *= dims[k];
    }
    if (row_bytes == 0) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s:%s: rows are empty (a dimension after the first is 0)",
                          file, path);
        goto out;
    }
    in->src[d].rows = dims[0];

    if (f == 0) {
        struct h5shuf_dsinfo *ds = &job->ds[d];
        ds->ftype = ftype;
        ftype = H5I_INVALID_HID; /* owned by ds now */
        ds->rank = rank;
        memcpy(ds->dims, dims, sizeof dims);
        memcpy(ds->maxdims, maxdims, sizeof maxdims);
        ds->row_bytes = ds->plan_row_bytes = row_bytes;
        if (is_vlen) {
            char where[600];
            snprintf(where, sizeof where, "%s:%s", file, path);
            if ((st = h5shuf__vlen_setup(job, ds, where)) != H5SHUF_OK)
                goto out;
        }
        ds->dcpl = H5Dget_create_plist(dset);
        if (ds->dcpl < 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
            goto out;
        }
        if (H5Pget_layout(ds->dcpl) == H5D_CHUNKED) {
            hsize_t cdims[H5S_MAX_RANK];
            H5Pget_chunk(ds->dcpl, H5S_MAX_RANK, cdims);
            ds->chunk_rows = cdims[0];
        }
    } else {
        const struct h5shuf_dsinfo *ds = &job->ds[d];
        const char *first = job->inputs[0].spec.file;
        if (H5Tequal(ftype, ds->ftype) <= 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: datatype differs from %s:%s", file, path, first,
                              ds->in_path);
            goto out;
        }
        int same = rank == ds->rank;
        for (int k = 1; same && k < rank; k++)
            same = dims[k] == ds->dims[k];
        if (!same) {
            st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: row shape differs from %s:%s", file, path, first,
                              ds->in_path);
            goto out;
        }
    }

    /* Every filter must be loadable to read the chunks: say which one is missing, and where. */
    dcpl = H5Dget_create_plist(dset);
    for (int i = 0, nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0; i < nf; i++) {
        unsigned flags, cfg, cd[16];
        size_t ncd = 16;
        char fname[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, &cfg);
        if (id >= 0 && H5Zfilter_avail(id) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED,
                              "%s:%s: needs HDF5 filter %d%s%s%s, which cannot be loaded here (set HDF5_PLUGIN_PATH "
                              "to the directory of its plugin)",
                              file, path, (int)id, *fname ? " (" : "", fname, *fname ? ")" : "");
            goto out;
        }
    }
    /* Reopen with a chunk cache of one chunk band, now that the layout is known. */
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) {
        hsize_t cdims[H5S_MAX_RANK];
        H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims);
        uint64_t band = cdims[0] * row_bytes;
        if (band > INPUT_CACHE_BYTES_MAX)
            band = INPUT_CACHE_BYTES_MAX;
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        H5Pset_chunk_cache(dapl, 12421, band, 1.0);
        hid_t again = H5Dopen2(in->file, path, dapl);
        if (again >= 0) {
            H5Dclose(dset);
            in->src[d].dset = again;
        }
    }
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (dapl >= 0)
        H5Pclose(dapl);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    return st;
}

/* ---- discovery of a whole file ------------------------------------------------------------------ */

struct found {
    char *path;
    uint64_t rows;
};

struct discovery {
    struct found *v;
    size_t n, cap;
    int oom;
};

static herr_t discover_cb(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    struct discovery *dv = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    hid_t s = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(s);
    hsize_t dims[H5S_MAX_RANK];
    if (rank >= 1 && H5Sget_simple_extent_type(s) == H5S_SIMPLE) {
        H5Sget_simple_extent_dims(s, dims, NULL);
        if (dv->n == dv->cap) {
            size_t cap = dv->cap ? 2 * dv->cap : 16;
            struct found *v = realloc(dv->v, cap * sizeof *v);
            if (!v) {
                dv->oom = 1;
                goto out;
            }
            dv->v = v;
            dv->cap = cap;
        }
        size_t len = strlen(name);
        char *p = malloc(len + 2);
        if (!p) {
            dv->oom = 1;
            goto out;
        }
        p[0] = '/';
        memcpy(p + 1, name, len + 1);
        dv->v[dv->n].path = p;
        dv->v[dv->n].rows = dims[0];
        dv->n++;
    }
out:
    H5Sclose(s);
    H5Dclose(d);
    return dv->oom ? -1 : 0;
}

/* Pick the datasets of the whole-file form: those whose dim 0 is the N held by the most datasets. */
static int discover(h5shuf_job *job)
{
    struct h5shuf_input *in = &job->inputs[0];
    struct discovery dv = {0};
    int st = H5SHUF_OK;
    char cause[256];
    if (H5Ovisit(in->file, H5_INDEX_NAME, H5_ITER_INC, discover_cb, &dv) < 0 && !dv.oom) {
        st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot list objects: %s", in->spec.file,
                          h5shuf__hdf5_cause(cause, sizeof cause));
        goto out;
    }
    if (dv.oom) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "%s: out of memory", in->spec.file);
        goto out;
    }
    if (dv.n == 0) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOENT, "%s: no dataset with rows (rank >= 1) in the file", in->spec.file);
        goto out;
    }
    /* Count datasets per dim 0; the winner must be unique. */
    size_t best = 0, best_count = 0, ties = 0;
    for (size_t i = 0; i < dv.n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < dv.n; j++)
            c += dv.v[j].rows == dv.v[i].rows;
        if (c > best_count) {
            best = i, best_count = c, ties = 0;
        } else if (c == best_count && dv.v[i].rows != dv.v[best].rows) {
            ties++;
        }
    }
    if (ties) {
        char list[600] = "";
        size_t len = 0;
        for (size_t i = 0; i < dv.n && len < sizeof list - 1; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s (%llu rows)", i ? ", " : "", dv.v[i].path,
                                    (unsigned long long)dv.v[i].rows);
        st = h5shuf__fail(&job->err, H5SHUF_EAMBIGUOUS,
                          "%s: cannot tell which datasets hold the rows, candidates: %s; name them as %s:/a,/b",
                          in->spec.file, list, in->spec.file);
        goto out;
    }
    uint64_t n = dv.v[best].rows;
    in->spec.paths = calloc(best_count, sizeof *in->spec.paths);
    if (!in->spec.paths) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "%s: out of memory", in->spec.file);
        goto out;
    }
    for (size_t i = 0; i < dv.n; i++)
        if (dv.v[i].rows == n) {
            in->spec.paths[in->spec.npaths++] = dv.v[i].path;
            dv.v[i].path = NULL;
        }
out:
    for (size_t i = 0; i < dv.n; i++)
        free(dv.v[i].path);
    free(dv.v);
    return st;
}

int h5shuf__inputs_open(h5shuf_job *job)
{
    int st;
    char where[512];
    for (size_t f = 0; f < job->ninputs; f++)
        job->inputs[f].file = H5I_INVALID_HID;
    for (size_t f = 0; f < job->ninputs; f++)
        if ((st = open_file(job, &job->inputs[f])) != H5SHUF_OK)
            return st;

    struct h5shuf_input *first = &job->inputs[0];
    job->whole_file = first->spec.npaths == 0;
    if (job->whole_file && (st = discover(job)) != H5SHUF_OK)
        return st;
    job->ds = calloc(first->spec.npaths, sizeof *job->ds);
    if (!job->ds)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->nds = first->spec.npaths;
    for (size_t d = 0; d < job->nds; d++) /* every id invalid before anything can fail: cleanup closes them */
        job->ds[d].ftype = job->ds[d].dcpl = job->ds[d].out_dcpl = job->ds[d].mtype = job->ds[d].etype = H5I_INVALID_HID;
    for (size_t d = 0; d < job->nds; d++) {
        job->ds[d].in_path = xstrdup(first->spec.paths[d]);
        const char *o = job->out_spec.npaths ? job->out_spec.paths[d] : first->spec.paths[d];
        if (job->out_spec.npaths && job->out_spec.npaths != job->nds)
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: names %zu datasets for %zu shuffled datasets",
                                job->out_spec.file, job->out_spec.npaths, job->nds);
        job->ds[d].out_path = xstrdup(o);
        if (!job->ds[d].in_path || !job->ds[d].out_path)
            return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }

    job->rows = 0;
    job->row_bytes = 0;
    for (size_t f = 0; f < job->ninputs; f++) {
        struct h5shuf_input *in = &job->inputs[f];
        const struct h5shuf_spec *paths = in->spec.npaths ? &in->spec : &first->spec;
        if (paths->npaths != job->nds)
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: names %zu datasets but %s names %zu", in->spec.file,
                                paths->npaths, first->spec.file, job->nds);
        in->src = calloc(job->nds, sizeof *in->src);
        if (!in->src)
            return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        for (size_t d = 0; d < job->nds; d++)
            in->src[d].dset = H5I_INVALID_HID;
        for (size_t d = 0; d < job->nds; d++)
            if ((st = open_dataset(job, f, d, paths->paths[d])) != H5SHUF_OK)
                return st;
        in->rows = in->src[0].rows;
        for (size_t d = 1; d < job->nds; d++)
            if (in->src[d].rows != in->rows)
                return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: %s has %llu rows but %s has %llu", in->spec.file,
                                    paths->paths[d], (unsigned long long)in->src[d].rows, paths->paths[0],
                                    (unsigned long long)in->rows);
        in->first_row = job->rows;
        if (job->rows + in->rows < job->rows)
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: too many rows", h5shuf__where(job, f, 0, where, sizeof where));
        job->rows += in->rows;
    }
    for (size_t f = 0; f < job->ninputs; f++)
        h5shuf__vlen_limit_cache(job, job->inputs[f].file);
    if ((st = h5shuf__vlen_estimate(job)) != H5SHUF_OK)
        return st;
    for (size_t d = 0; d < job->nds; d++) {
        if (job->row_bytes + job->ds[d].plan_row_bytes < job->row_bytes)
            return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: rows of more than 2^64 bytes", job->inputs[0].spec.file);
        job->row_bytes += job->ds[d].plan_row_bytes;
    }
    if (job->row_bytes && job->rows > UINT64_MAX / job->row_bytes)
        return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: more than 2^64 bytes of rows", job->inputs[0].spec.file);
    return H5SHUF_OK;
}

void h5shuf__inputs_close(h5shuf_job *job)
{
    /* Types and property lists first: closing a file with H5F_CLOSE_STRONG also closes a committed
     * datatype opened from it, and a second H5Tclose would then fail (and print, outside a call). */
    for (size_t d = 0; job->ds && d < job->nds; d++) {
        if (job->ds[d].ftype >= 0)
            H5Tclose(job->ds[d].ftype);
        if (job->ds[d].dcpl >= 0)
            H5Pclose(job->ds[d].dcpl);
        if (job->ds[d].out_dcpl >= 0)
            H5Pclose(job->ds[d].out_dcpl);
        if (job->ds[d].mtype >= 0)
            H5Tclose(job->ds[d].mtype);
        if (job->ds[d].etype >= 0)
            H5Tclose(job->ds[d].etype);
        free(job->ds[d].in_path);
        free(job->ds[d].out_path);
    }
    free(job->ds);
    job->ds = NULL;
    for (size_t f = 0; f < job->ninputs; f++) {
        struct h5shuf_input *in = &job->inputs[f];
        if (in->src)
            for (size_t d = 0; d < job->nds; d++)
                if (in->src[d].dset >= 0)
                    H5Dclose(in->src[d].dset);
        free(in->src);
        in->src = NULL;
        if (in->file >= 0)
            H5Fclose(in->file);
        in->file = H5I_INVALID_HID;
    }
    job->nds = 0;
    job->nvlen = 0;
}

/* ---- rows ----------------------------------------------------------------------------------------- */

herr_t h5shuf__extend_rows(hid_t dset, uint64_t rows)
{
    hsize_t dims[H5S_MAX_RANK];
    hid_t s = H5Dget_space(dset);
    if (s < 0)
        return -1;
    int rank = H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    if (rank < 1)
        return -1;
    dims[0] = rows;
    return H5Dset_extent(dset, dims);
}

herr_t h5shuf__select_rows(hid_t dset, uint64_t start, uint64_t count, hid_t *fspace, hid_t *mspace, int extend)
{
    hsize_t dims[H5S_MAX_RANK], off[H5S_MAX_RANK] = {0};
    *fspace = *mspace = H5I_INVALID_HID;
    if (extend && h5shuf__extend_rows(dset, start + count) < 0)
        return -1;
    *fspace = H5Dget_space(dset);
    if (*fspace < 0)
        return -1;
    int rank = H5Sget_simple_extent_ndims(*fspace);
    H5Sget_simple_extent_dims(*fspace, dims, NULL);
    off[0] = start;
    dims[0] = count;
    if (H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, off, NULL, dims, NULL) < 0)
        return -1;
    *mspace = H5Screate_simple(rank, dims, NULL);
    return *mspace < 0 ? -1 : 0;
}

/* Move rows [start, start+count) between dset and buf (raw bytes of ftype): write when buf_in, else read
 * into buf_out. */
static herr_t transfer_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf_out,
                            const void *buf_in, int extend)
{
    if (count == 0)
        return 0;
    hid_t fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    herr_t r = h5shuf__select_rows(dset, start, count, &fs, &ms, extend);
    if (r >= 0 && H5SHUF_FAULT())
        r = -1;
    else if (r >= 0)
        r = buf_in ? H5Dwrite(dset, ftype, ms, fs, H5P_DEFAULT, buf_in) : H5Dread(dset, ftype, ms, fs, H5P_DEFAULT, buf_out);
    return h5shuf__spaces_close(r, fs, ms);
}

herr_t h5shuf__spaces_close(herr_t r, hid_t fs, hid_t ms)
{
    /* Every HDF5 call clears the error stack: keep the failure's for the caller's message. */
    hid_t stack = r < 0 ? H5Eget_current_stack() : H5I_INVALID_HID;
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    if (stack >= 0)
        H5Eset_current_stack(stack);
    return r;
}

herr_t h5shuf__read_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf)
{
    return transfer_rows(dset, ftype, start, count, buf, NULL, 0);
}

herr_t h5shuf__write_rows(hid_t dset, hid_t ftype, uint64_t start, uint64_t count, const void *buf, int extend)
{
    return transfer_rows(dset, ftype, start, count, NULL, buf, extend);
}

/* ---- output -------------------------------------------------------------------------------------- */

struct copy_ctx {
    h5shuf_job *job;
    hid_t dst;
    int failed;
};

/* Copy one attribute as raw values of its own type (variable-length values are read into memory and
 * reclaimed).  Reference attributes would point into the input file and are left out. */
static herr_t copy_attr_cb(hid_t src, const char *name, const H5A_info_t *ainfo, void *data)
{
    (void)ainfo;
    struct copy_ctx *cx = data;
    hid_t a = H5I_INVALID_HID, t = H5I_INVALID_HID, s = H5I_INVALID_HID, b = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    void *buf = NULL;
    int ok = 0, has_vlen = 0;
    a = H5Aopen(src, name, H5P_DEFAULT);
    if (a < 0 || (t = H5Aget_type(a)) < 0 || (s = H5Aget_space(a)) < 0)
        goto out;
    if (H5Tget_class(t) == H5T_REFERENCE || H5Tdetect_class(t, H5T_REFERENCE) > 0) {
        ok = 1;
        goto out;
    }
    has_vlen = H5Tdetect_class(t, H5T_VLEN) > 0 || (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0);
    /* The memory type: the file type itself (no conversion), or its native form when it holds vlen
     * data (HDF5 needs a memory vlen type to hand out pointers). */
    mt = has_vlen ? H5Tget_native_type(t, H5T_DIR_DEFAULT) : H5Tcopy(t);
    if (mt < 0)
        goto out;
    hssize_t npoints = H5Sget_simple_extent_npoints(s);
    size_t sz = H5Tget_size(mt);
    buf = calloc(npoints > 0 ? (size_t)npoints : 1, sz ? sz : 1);
    if (!buf)
        goto out;
    if (H5Aread(a, mt, buf) < 0)
        goto out;
    if (H5Aexists(cx->dst, name) > 0)
        H5Adelete(cx->dst, name);
    b = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Acreate2(cx->dst, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    if (b < 0 || H5Awrite(b, mt, buf) < 0)
        goto out;
    ok = 1;
out:
    if (buf && has_vlen && s >= 0 && mt >= 0)
        H5Dvlen_reclaim(mt, s, H5P_DEFAULT, buf);
    free(buf);
    if (b >= 0)
        H5Aclose(b);
    if (mt >= 0)
        H5Tclose(mt);
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    if (!ok) {
        cx->failed = 1;
        return -1;
    }
    return 0;
}

static int copy_attrs(h5shuf_job *job, hid_t src, hid_t dst, const char *what)
{
    struct copy_ctx cx = {job, dst, 0};
    char cause[256];
    hsize_t idx = 0;
    if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attr_cb, &cx) < 0 || cx.failed)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot copy attributes: %s", what,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* ---- whole-file copy ------------------------------------------------------------------------------
 * Objects are matched by their address in the first input, not by path: a file may reach one object
 * through several hard links (h5py: f['alias'] = f['x']).  Every group is recreated and walked, so no
 * link inside a blindly copied subtree can reach a shuffled dataset; each other object is copied once
 * (H5Ocopy); every further hard link to an object seen before, and every link to a shuffled dataset
 * other than its own path, is recreated as a hard link once the shuffled datasets exist.  Addresses go
 * through a small open-addressing table, so files of many objects stay linear. */

struct objref {
    haddr_t addr;   /* HADDR_UNDEF: empty slot */
    char *out_path; /* where the object is in the output (owned), or NULL for shuffled dataset d */
    size_t d;
};

struct copy_state {
    h5shuf_job *job;
    struct objref *slot;
    size_t cap, used;
    char **link_from, **link_to; /* deferred hard links: link_from[k] -> existing link_to[k] */
    size_t nlinks, links_cap;
    int st;
};

static size_t slot_of(const struct copy_state *cs, haddr_t addr)
{
    uint64_t h = (uint64_t)addr * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 17) & (cs->cap - 1);
    while (cs->slot[i].addr != HADDR_UNDEF && cs->slot[i].addr != addr)
        i = (i + 1) & (cs->cap - 1);
    return i;
}

static struct objref *obj_find(const struct copy_state *cs, haddr_t addr)
{
    size_t i = slot_of(cs, addr);
    return cs->slot[i].addr == addr ? &cs->slot[i] : NULL;
}

static int obj_add(struct copy_state *cs, haddr_t addr, const char *out_path, size_t d)
{
    if (2 * (cs->used + 1) > cs->cap) { /* keep the table at most half full */
        size_t cap = cs->cap ? 2 * cs->cap : 64;
        struct objref *old = cs->slot, *slot = malloc(cap * sizeof *slot);
        if (!slot)
            return h5shuf__fail(&cs->job->err, H5SHUF_ENOMEM, "out of memory");
        for (size_t i = 0; i < cap; i++)
            slot[i].addr = HADDR_UNDEF;
        size_t oldcap = cs->cap;
        cs->slot = slot;
        cs->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].addr != HADDR_UNDEF)
                cs->slot[slot_of(cs, old[i].addr)] = old[i];
        free(old);
    }
    char *p = out_path ? strdup(out_path) : NULL;
    if (out_path && !p)
        return h5shuf__fail(&cs->job->err, H5SHUF_ENOMEM, "out of memory");
    struct objref *r = &cs->slot[slot_of(cs, addr)];
    r->addr = addr;
    r->out_path = p;
    r->d = d;
    cs->used++;
    return H5SHUF_OK;
}

static int defer_link(struct copy_state *cs, const char *from, const char *to)
{
    if (cs->nlinks == cs->links_cap) {
        size_t cap = cs->links_cap ? 2 * cs->links_cap : 16;
        char **a = realloc(cs->link_from, cap * sizeof *a), **b = a ? realloc(cs->link_to, cap * sizeof *b) : NULL;
        if (a)
            cs->link_from = a;
        if (b)
            cs->link_to = b;
        if (!a || !b)
            return h5shuf__fail(&cs->job->err, H5SHUF_ENOMEM, "out of memory");
        cs->links_cap = cap;
    }
    cs->link_from[cs->nlinks] = strdup(from);
    cs->link_to[cs->nlinks] = strdup(to);
    if (!cs->link_from[cs->nlinks] || !cs->link_to[cs->nlinks]) {
        free(cs->link_from[cs->nlinks]);
        free(cs->link_to[cs->nlinks]);
        return h5shuf__fail(&cs->job->err, H5SHUF_ENOMEM, "out of memory");
    }
    cs->nlinks++;
    return H5SHUF_OK;
}

static void copy_state_free(struct copy_state *cs)
{
    for (size_t i = 0; i < cs->cap; i++)
        if (cs->slot[i].addr != HADDR_UNDEF)
            free(cs->slot[i].out_path);
    free(cs->slot);
    for (size_t k = 0; k < cs->nlinks; k++) {
        free(cs->link_from[k]);
        free(cs->link_to[k]);
    }
    free(cs->link_from);
    free(cs->link_to);
}

struct tree_ctx {
    struct copy_state *cs;
    hid_t dst;
    const char *prefix; /* path of the group being copied, "/" for the root */
};

static int copy_group(struct copy_state *cs, hid_t src, hid_t dst, const char *prefix);

static herr_t copy_link_cb(hid_t src, const char *name, const H5L_info_t *li, void *data)
{
    struct tree_ctx *tc = data;
    struct copy_state *cs = tc->cs;
    h5shuf_job *job = cs->job;
    const char *file = job->inputs[0].spec.file;
    char cause[256];
    size_t plen = strlen(tc->prefix);
    char *path = malloc(plen + strlen(name) + 2);
    if (!path) {
        cs->st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        return -1;
    }
    sprintf(path, "%s%s%s", tc->prefix, plen > 1 ? "/" : "", name);

    herr_t r = 0;
    if (li->type == H5L_TYPE_SOFT || li->type == H5L_TYPE_EXTERNAL) {
        /* Links are recreated as links, pointing where they pointed. */
        char *val = malloc(li->u.val_size + 1);
        if (!val || H5Lget_val(src, name, val, li->u.val_size + 1, H5P_DEFAULT) < 0) {
            r = -1;
        } else if (li->type == H5L_TYPE_SOFT) {
            r = H5Lcreate_soft(val, tc->dst, name, H5P_DEFAULT, H5P_DEFAULT);
        } else {
            const char *ef = NULL, *eo = NULL;
            unsigned flags;
            r = H5Lunpack_elink_val(val, li->u.val_size, &flags, &ef, &eo);
            if (r >= 0)
                r = H5Lcreate_external(ef, eo, tc->dst, name, H5P_DEFAULT, H5P_DEFAULT);
        }
        free(val);
    } else if (li->type == H5L_TYPE_HARD) {
        H5O_info_t oi;
        const struct objref *seen = NULL;
        if (H5Oget_info_by_name(src, name, &oi, H5P_DEFAULT) < 0) {
            r = -1;
        } else if ((seen = obj_find(cs, oi.addr)) != NULL) {
            const char *target = seen->out_path ? seen->out_path : job->ds[seen->d].out_path;
            /* a shuffled dataset under its own name is made by the shuffle; any other link is a link */
            if (seen->out_path || strcmp(path, job->ds[seen->d].in_path) != 0)
                cs->st = defer_link(cs, path, target);
            r = cs->st == H5SHUF_OK ? 0 : -2;
        } else if (oi.type == H5O_TYPE_GROUP) {
            hid_t g = H5Gopen2(src, name, H5P_DEFAULT);
            hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
            H5Pset_obj_track_times(gcpl, 0);
            hid_t h = g >= 0 ? H5Gcreate2(tc->dst, name, H5P_DEFAULT, gcpl, H5P_DEFAULT) : H5I_INVALID_HID;
            H5Pclose(gcpl);
            if (g < 0 || h < 0)
                r = -1;
            else if ((cs->st = obj_add(cs, oi.addr, path, 0)) != H5SHUF_OK || (cs->st = copy_group(cs, g, h, path)) != H5SHUF_OK)
                r = -2;
            if (h >= 0)
                H5Gclose(h);
            if (g >= 0)
                H5Gclose(g);
        } else {
            r = H5SHUF_FAULT() ? -1 : H5Ocopy(src, name, tc->dst, name, H5P_DEFAULT, H5P_DEFAULT);
            if (r >= 0 && (cs->st = obj_add(cs, oi.addr, path, 0)) != H5SHUF_OK)
                r = -2;
        }
    }
    if (r == -1)
        cs->st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot copy to the output: %s", file, path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    free(path);
    return r < 0 ? -1 : 0;
}

static int copy_group(struct copy_state *cs, hid_t src, hid_t dst, const char *prefix)
{
    int st = copy_attrs(cs->job, src, dst, cs->job->inputs[0].spec.file);
    if (st != H5SHUF_OK)
        return st;
    struct tree_ctx tc = {cs, dst, prefix};
    hsize_t idx = 0;
    if (H5Literate(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_link_cb, &tc) < 0 && cs->st == H5SHUF_OK) {
        char cause[256];
        cs->st = h5shuf__fail(&cs->job->err, H5SHUF_EHDF5, "%s:%s: cannot list: %s", cs->job->inputs[0].spec.file, prefix,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    return cs->st;
}

/* Creation properties of an output dataset: the first input's layout, chunk shape and filters, or
 * those the options ask for, without what must not be carried over (external raw data files, virtual
 * mappings).  Sets ds->out_maxdims and ds->out_chunk_rows. */
static int output_dcpl(h5shuf_job *job, struct h5shuf_dsinfo *ds)
{
    char where[600];
    snprintf(where, sizeof where, "%s:%s", job->out_spec.file, ds->out_path);
    const struct h5shuf_filters *f = &job->out_filters;
    hsize_t *maxdims = ds->out_maxdims;
    memcpy(maxdims, ds->maxdims, sizeof ds->maxdims);
    if (maxdims[0] != H5S_UNLIMITED && maxdims[0] < job->rows)
        maxdims[0] = job->rows;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot make creation properties", where);
    ds->out_dcpl = dcpl;
    H5D_layout_t layout = H5Pget_layout(ds->dcpl);
    int in_chunked = layout == H5D_CHUNKED;
    int want_filters = !f->keep && (f->shuffle || f->fletcher32 || f->codec != H5SHUF_CODEC_NONE);
    uint64_t total = job->rows * ds->row_bytes;

    if (in_chunked || want_filters || job->chunk_shape) {
        hsize_t cdims[H5S_MAX_RANK];
        if (in_chunked) {
            H5Pget_chunk(ds->dcpl, H5S_MAX_RANK, cdims);
        } else {
            memcpy(cdims, ds->dims, sizeof cdims);
            /* about 1 MiB of rows, as h5py and h5repack pick chunks of that order */
            uint64_t rows = (UINT64_C(1) << 20) / ds->row_bytes;
            if (rows > job->rows)
                rows = job->rows; /* no chunk larger than the data (it would also raise maxdims) */
            cdims[0] = rows ? rows : 1;
        }
        if (job->chunk_shape) {
            hsize_t given[H5S_MAX_RANK];
            int rank;
            int st = h5shuf__chunk_parse(job->chunk_shape, given, &rank, &job->err);
            if (st != H5SHUF_OK)
                return st;
            if (rank > 1 && rank != ds->rank)
                return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: chunk shape %s has rank %d but the dataset has rank %d (--chunk-rows sets rows only)",
                                    where, job->chunk_shape, rank, ds->rank);
            memcpy(cdims, given, (size_t)rank * sizeof *given);
        }
        for (int k = 1; k < ds->rank; k++) {
            if (cdims[k] > ds->dims[k])
                return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: chunk dimension %d (%llu) exceeds the dataset's (%llu)",
                                    where, k, (unsigned long long)cdims[k], (unsigned long long)ds->dims[k]);
            if (cdims[k] == 0)
                cdims[k] = 1;
        }
        if (H5Pset_chunk(dcpl, ds->rank, cdims) < 0)
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: invalid chunk shape", where);
        ds->out_chunk_rows = cdims[0];
        if (f->keep) {
            int nf = H5Pget_nfilters(ds->dcpl);
            for (int i = 0; i < nf; i++) {
                unsigned flags, cd[32], cfg;
                size_t ncd = 32;
                char name[64];
                H5Z_filter_t id = H5Pget_filter2(ds->dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &cfg);
                if (id < 0 || H5Pset_filter(dcpl, id, flags, ncd, cd) < 0)
                    return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot copy filter %d of the input", where, i);
            }
        } else if (h5shuf__filters_apply(f, dcpl) < 0) {
            char cause[256];
            return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot set the filters: %s", where,
                                h5shuf__hdf5_cause(cause, sizeof cause));
        }
        if (maxdims[0] != H5S_UNLIMITED && maxdims[0] < cdims[0])
            maxdims[0] = cdims[0]; /* a fixed dimension may not be smaller than its chunk */
    } else if (layout == H5D_COMPACT && total <= 60000) {
        H5Pset_layout(dcpl, H5D_COMPACT); /* compact data must fit the 64 KiB object header */
    } else {
        H5Pset_layout(dcpl, H5D_CONTIGUOUS);
        maxdims[0] = job->rows; /* only chunked datasets can be extendible */
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

int h5shuf__output_plan(h5shuf_job *job)
{
    for (size_t d = 0; d < job->nds; d++) {
        int st = output_dcpl(job, &job->ds[d]);
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

hid_t h5shuf__source_type(const h5shuf_job *job)
{
    return job->ninputs > UINT16_MAX ? H5T_STD_U32LE : H5T_STD_U16LE;
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

int h5shuf__output_create(h5shuf_job *job, hid_t out, hid_t *out_dsets, uint64_t rows)
{
    const char *ofile = job->out_name;
    char cause[256];
    int st = H5SHUF_OK;
    struct copy_state cs = {.job = job};
    h5shuf__vlen_limit_cache(job, out);
    if (job->whole_file) {
        /* The shuffled datasets first, by address: any other link to them becomes a link. */
        for (size_t d = 0; d < job->nds && st == H5SHUF_OK; d++) {
            H5O_info_t oi;
            st = H5Oget_info(job->inputs[0].src[d].dset, &oi) < 0
                     ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: %s", ofile, h5shuf__hdf5_cause(cause, sizeof cause))
                     : obj_add(&cs, oi.addr, NULL, d);
        }
        hid_t root = H5Gopen2(job->inputs[0].file, "/", H5P_DEFAULT);
        hid_t oroot = H5Gopen2(out, "/", H5P_DEFAULT);
        if (st == H5SHUF_OK)
            st = root < 0 || oroot < 0 ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: %s", ofile,
                                                      h5shuf__hdf5_cause(cause, sizeof cause))
                                       : copy_group(&cs, root, oroot, "/");
        if (root >= 0)
            H5Gclose(root);
        if (oroot >= 0)
            H5Gclose(oroot);
    }
    for (size_t d = 0; d < job->nds && st == H5SHUF_OK; d++) {
        const struct h5shuf_dsinfo *ds = &job->ds[d];
        hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
        memcpy(dims, ds->dims, sizeof dims);
        memcpy(maxdims, ds->out_maxdims, sizeof maxdims);
        dims[0] = rows;
        if (rows != job->rows) { /* a shard, a split or a head: its own size */
            if (ds->out_chunk_rows == 0)
                maxdims[0] = rows; /* contiguous and compact datasets cannot be extendible */
            else if (maxdims[0] != H5S_UNLIMITED)
                maxdims[0] = rows > ds->out_chunk_rows ? rows : ds->out_chunk_rows;
        }
        hid_t space = H5Screate_simple(ds->rank, dims, maxdims);
        hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
        /* Bands cover whole chunks, which HDF5 writes without caching; no cache needed. */
        H5Pset_chunk_cache(dapl, 521, 0, 1.0);
        out_dsets[d] = space >= 0 && make_parents(out, ds->out_path) >= 0
                           ? (H5SHUF_FAULT() ? H5I_INVALID_HID
                                             : H5Dcreate2(out, ds->out_path, ds->ftype, space, H5P_DEFAULT, ds->out_dcpl, dapl))
                           : H5I_INVALID_HID;
        if (out_dsets[d] < 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot create dataset: %s%s", ofile, ds->out_path,
                              h5shuf__hdf5_cause(cause, sizeof cause),
                              ds->vlen && H5Pget_nfilters(ds->out_dcpl) > 0
                                  ? " (HDF5 refuses these filters on variable-length data; deflate and shuffle work: try -c gzip)"
                                  : "");
        } else {
            char what[512];
            snprintf(what, sizeof what, "%s:%s", ofile, ds->out_path);
            st = copy_attrs(job, job->inputs[0].src[d].dset, out_dsets[d], what);
        }
        if (dapl >= 0)
            H5Pclose(dapl);
        if (space >= 0)
            H5Sclose(space);
    }
    if (st == H5SHUF_OK && job->index_path) {
        /* index[r]: the input row of output row r */
        out_dsets[job->nds] = index_create(out, job->index_path, H5T_STD_U64LE, rows);
        if (out_dsets[job->nds] < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot create the index dataset: %s", ofile,
                              job->index_path, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK && job->source_index_path) {
        /* source_index[r]: the input file of output row r */
        out_dsets[job->nds + 1] = index_create(out, job->source_index_path, h5shuf__source_type(job), rows);
        if (out_dsets[job->nds + 1] < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot create the source index dataset: %s", ofile,
                              job->source_index_path, h5shuf__hdf5_cause(cause, sizeof cause));
    }
    for (size_t k = 0; k < cs.nlinks && st == H5SHUF_OK; k++)
        if (H5Lcreate_hard(out, cs.link_to[k], out, cs.link_from[k], H5P_DEFAULT, H5P_DEFAULT) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot link to %s: %s", ofile, cs.link_from[k],
                              cs.link_to[k], h5shuf__hdf5_cause(cause, sizeof cause));
    copy_state_free(&cs);
    return st;
}

herr_t h5shuf__put_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t s = H5Screate(H5S_SCALAR);
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    hid_t a = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, t, &value);
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    return r;
}

int h5shuf__output_provenance(h5shuf_job *job, hid_t out)
{
    char cause[256];
    size_t len = 1;
    for (size_t f = 0; f < job->ninputs; f++) {
        len += strlen(job->inputs[f].spec.file) + 2;
        for (size_t d = 0; d < job->nds; d++)
            len += strlen(job->ds[d].in_path) + 1;
    }
    char *inputs = malloc(len);
    if (!inputs)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    char *p = inputs;
    for (size_t f = 0; f < job->ninputs; f++) {
        const struct h5shuf_spec *paths = job->inputs[f].spec.npaths ? &job->inputs[f].spec : &job->inputs[0].spec;
        p += sprintf(p, "%s%s", f ? "\n" : "", job->inputs[f].spec.file);
        for (size_t d = 0; d < job->nds; d++)
            p += sprintf(p, "%c%s", d ? ',' : ':', paths->paths[d]);
    }
    hid_t root = H5Gopen2(out, "/", H5P_DEFAULT);
    hid_t s = H5Screate(H5S_SCALAR);
    herr_t r = root < 0 || s < 0 ? -1 : 0;
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_version", H5SHUF_VERSION_STRING);
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_inputs", inputs);
    if (r >= 0 && job->index_path)
        r = h5shuf__put_string_attr(root, "h5shuf_index", job->index_path);
    if (r >= 0 && job->source_index_path)
        r = h5shuf__put_string_attr(root, "h5shuf_source_index", job->source_index_path);
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_key",
                            "Philox4x64-10 word 0, counter (i,0,0,0), key (seed,0); rows sorted by (key, i)");
    if (r >= 0) {
        if (H5Aexists(root, "h5shuf_seed") > 0)
            H5Adelete(root, "h5shuf_seed");
        hid_t a = H5Acreate2(root, "h5shuf_seed", H5T_STD_U64LE, s, H5P_DEFAULT, H5P_DEFAULT);
        r = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_UINT64, &job->seed);
        if (a >= 0)
            H5Aclose(a);
    }
    if (s >= 0)
        H5Sclose(s);
    if (root >= 0)
        H5Gclose(root);
    free(inputs);
    if (r < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot write provenance attributes: %s", job->out_name,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}
