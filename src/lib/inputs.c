/*
 * inputs.c - the input files: opened read-only, the shuffled datasets found by path or, in whole-file
 * mode, discovered (every dataset whose dim 0 is the N most datasets share), and each checked against
 * the first input's (datatype, row shape, filters that can be loaded).
 *
 * Rows are moved as raw bytes of the file datatype, so any fixed-size type works (big-endian floats,
 * compounds, strings, opaque...); variable-length sequences and strings are moved by vlen.c; references,
 * vlen data nested in other types and scalars are refused with a message naming the dataset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "inputs.h"
#include "job.h"
#include "vlen.h"

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

size_t h5shuf__input_of(const h5shuf_job *job, uint64_t id)
{
    size_t lo = 0, hi = job->ninputs; /* the last input whose first_row <= id */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (job->inputs[mid].first_row <= id)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int h5shuf__input_append(h5shuf_job *job, const char *spec)
{
    struct h5shuf_input *v = realloc(job->inputs, (job->ninputs + 1) * sizeof *v);
    if (!v)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->inputs = v;
    struct h5shuf_input *in = &v[job->ninputs];
    memset(in, 0, sizeof *in);
    in->file = H5I_INVALID_HID;
    int st = h5shuf__spec_parse(spec, &in->spec, &job->err);
    if (st == H5SHUF_OK)
        job->ninputs++;
    return st;
}
