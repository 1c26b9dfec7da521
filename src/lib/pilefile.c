/*
 * pilefile.c - the pile file: the two passes of a shuffle as separate runs (the lazy second pass).
 *
 * h5shuf_run_scatter (run.c) runs pass 1 and the oversize handling exactly as h5shuf_run does, into a scratch
 * file written next to the pile file's name, then renumbers the piles in key order (/piles/000000 is the
 * pile of the smallest keys), records what a gather needs as attributes and a pile table
 * (docs/lazy.md), and renames the file into place.  h5shuf_run_gather rebuilds the one-shot job from the
 * pile file and runs the same output phases and pass 2 over it, so its output is the one-shot output,
 * byte for byte: the output file is the result of the same sequence of HDF5 calls.
 *
 * A gather reads the metadata of the output (the first input's dataset creation properties and
 * attributes, and in whole-file mode its other objects) from the inputs, which must still be there: a
 * copy through the pile file would be a copy of a copy, whose object headers HDF5 does not promise to
 * keep byte-identical.  So the pile file records each input's size, modification time and rows, and a
 * gather refuses inputs that changed.  The rows themselves come from the piles only.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "inputs.h"
#include "job.h"
#include "pilefile.h"
#include "piles.h"
#include "plan.h"
#include "writer.h"

#define PILES_FORMAT "h5shuf-piles"
#define PILES_FORMAT_VERSION 1u

/* One row of /pile_table (file type: four little-endian uint64, 32 bytes). */
struct table_row {
    uint64_t lo;     /* the pile's first key */
    uint64_t last;   /* its last key (inclusive: hi - 1, so the last pile's 2^64 fits in 64 bits) */
    uint64_t rows;   /* rows in the pile */
    uint64_t offset; /* output row of its first row: the rows of the piles before it */
};

static uint64_t mtime_ns(const struct stat *st)
{
    return (uint64_t)st->st_mtim.tv_sec * UINT64_C(1000000000) + (uint64_t)st->st_mtim.tv_nsec;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- attributes ---------------------------------------------------------------------------------- */

/* Open attribute name of the pile file's root and check it holds n values (n == 0: a scalar).
 * Returns the attribute, or H5I_INVALID_HID with a "damaged pile file" message recorded. */
static hid_t open_attr(h5shuf_job *job, hid_t obj, const char *name, size_t n)
{
    hid_t a = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hssize_t npoints = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    int scalar = s >= 0 && H5Sget_simple_extent_type(s) == H5S_SCALAR;
    if (s >= 0)
        H5Sclose(s);
    if (a >= 0 && ((n == 0 && scalar) || (n > 0 && !scalar && npoints == (hssize_t)n)))
        return a;
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: attribute %s is missing or has the wrong shape",
                 job->piles_path, name);
    return H5I_INVALID_HID;
}

/* Values in attribute name of obj, or -1 when there is none (or not a simple array). */
static hssize_t attr_count(hid_t obj, const char *name)
{
    hid_t a = H5Aexists(obj, name) > 0 ? H5Aopen(obj, name, H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hssize_t n = s >= 0 && H5Sget_simple_extent_type(s) == H5S_SIMPLE ? H5Sget_simple_extent_npoints(s) : -1;
    if (s >= 0)
        H5Sclose(s);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return n;
}

static int get_u64s(h5shuf_job *job, hid_t obj, const char *name, size_t n, uint64_t *v)
{
    hid_t a = open_attr(job, obj, name, n);
    if (a < 0)
        return job->err.status;
    herr_t r = H5Aread(a, H5T_NATIVE_UINT64, v);
    H5Aclose(a);
    if (r < 0) {
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: attribute %s is not integers",
                            job->piles_path, name);
    }
    return H5SHUF_OK;
}

/* Read n strings (n == 0: one, a scalar) into out[0..max(n,1)), each a malloc'd copy. */
static int get_strings(h5shuf_job *job, hid_t obj, const char *name, size_t n, char **out)
{
    size_t count = n ? n : 1;
    for (size_t i = 0; i < count; i++)
        out[i] = NULL;
    hid_t a = open_attr(job, obj, name, n);
    if (a < 0)
        return job->err.status;
    int st = H5SHUF_OK;
    hid_t t = h5shuf__vstring_type();
    hid_t at = H5Aget_type(a);
    char **raw = calloc(count, sizeof *raw);
    if (!raw) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    } else if (t < 0 || at < 0 || H5Tget_class(at) != H5T_STRING || H5Tis_variable_str(at) <= 0 || H5Aread(a, t, raw) < 0) {
        H5Eclear2(H5E_DEFAULT);
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: attribute %s is not strings",
                          job->piles_path, name);
        memset(raw, 0, count * sizeof *raw); /* a failed read leaves nothing to free */
    }
    for (size_t i = 0; raw && i < count; i++) {
        if (st == H5SHUF_OK && !(out[i] = strdup(raw[i] ? raw[i] : "")))
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        if (raw[i])
            H5free_memory(raw[i]);
    }
    free(raw);
    if (at >= 0)
        H5Tclose(at);
    if (t >= 0)
        H5Tclose(t);
    H5Aclose(a);
    if (st != H5SHUF_OK) {
        for (size_t i = 0; i < count; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    }
    return st;
}

static hid_t table_type(int file)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, file ? 32 : sizeof(struct table_row));
    hid_t u = file ? H5T_STD_U64LE : H5T_NATIVE_UINT64;
    if (t >= 0 && (H5Tinsert(t, "lo", file ? 0 : HOFFSET(struct table_row, lo), u) < 0 ||
                   H5Tinsert(t, "last", file ? 8 : HOFFSET(struct table_row, last), u) < 0 ||
                   H5Tinsert(t, "rows", file ? 16 : HOFFSET(struct table_row, rows), u) < 0 ||
                   H5Tinsert(t, "offset", file ? 24 : HOFFSET(struct table_row, offset), u) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* ---- scatter ------------------------------------------------------------------------------------- */

/* Rename the piles /piles/0, 1, ... M-1 in key order (a pile that got no row gets an empty group), so
 * that a reader finds pile j by its number.  Empty key ranges (possible only in theory, when a range of
 * fewer keys than parts is cut) hold no row and are dropped. */
int h5shuf__piles_renumber(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    char from[64], to[64], cause[256];
    size_t n = 0;
    for (size_t j = 0; j < sc->npiles; j++) {
        if (sc->piles[j].range.lo == sc->piles[j].range.hi) {
            if (sc->piles[j].rows)
                return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "rows in an empty key range");
            continue;
        }
        sc->piles[n++] = sc->piles[j];
    }
    sc->npiles = n;
    hid_t g = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Gcreate2(sc->file, "/piles.new", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : H5Gclose(g);
    for (size_t j = 0; j < n && r >= 0; j++) {
        if (sc->piles[j].rows == 0)
            continue;
        snprintf(from, sizeof from, "/piles/%06" PRIu64, sc->piles[j].number);
        snprintf(to, sizeof to, "/piles.new/%06zu", j);
        r = H5SHUF_FAULT() ? -1 : H5Lmove(sc->file, from, sc->file, to, H5P_DEFAULT, H5P_DEFAULT);
    }
    if (r >= 0)
        r = H5SHUF_FAULT() ? -1 : H5Ldelete(sc->file, "/piles", H5P_DEFAULT);
    if (r >= 0)
        r = H5Lmove(sc->file, "/piles.new", sc->file, "/piles", H5P_DEFAULT, H5P_DEFAULT);
    if (r < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot renumber the piles: %s", sc->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    for (size_t j = 0; j < n; j++) {
        sc->piles[j].number = j;
        int st = sc->piles[j].rows ? H5SHUF_OK : h5shuf__pile_create_empty(job, sc, j);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

/* The spec of input f as given ("FILE" or "FILE:/a,/b"): in whole-file mode the first input's paths were
 * discovered, not given, and a gather discovers them again.  Caller frees. */
static char *spec_text(const h5shuf_job *job, size_t f)
{
    const struct h5shuf_spec *s = &job->inputs[f].spec;
    size_t npaths = f == 0 && job->whole_file ? 0 : s->npaths;
    size_t len = strlen(s->file) + 1;
    for (size_t k = 0; k < npaths; k++)
        len += strlen(s->paths[k]) + 1;
    char *t = malloc(len);
    if (!t)
        return NULL;
    char *p = t + sprintf(t, "%s", s->file);
    for (size_t k = 0; k < npaths; k++)
        p += sprintf(p, "%c%s", k ? ',' : ':', s->paths[k]);
    return t;
}

/* Record on the pile file's root and in /pile_table what a gather and a loader need (docs/lazy.md). */
int h5shuf__piles_write_meta(h5shuf_job *job, struct h5shuf_scratch *sc)
{
    char cause[256];
    int st = H5SHUF_OK;
    size_t nin = job->ninputs;
    char **specs = calloc(nin, sizeof *specs), **files = calloc(nin, sizeof *files);
    const char **dsnames = calloc(job->nds ? job->nds : 1, sizeof *dsnames);
    uint64_t *u = calloc(3 * nin, sizeof *u);
    struct table_row *table = calloc(sc->npiles ? sc->npiles : 1, sizeof *table);
    hid_t root = H5I_INVALID_HID, ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID, space = H5I_INVALID_HID,
          dset = H5I_INVALID_HID;
    if (!specs || !files || !dsnames || !u || !table) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t f = 0; f < nin; f++) {
        struct stat sb;
        const char *path = h5shuf__input_path(&job->inputs[f]);
        if (stat(path, &sb) != 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: %s", job->inputs[f].spec.file, strerror(errno));
            goto out;
        }
        specs[f] = spec_text(job, f);
        files[f] = realpath(path, NULL);
        if (!specs[f] || !files[f]) {
            st = h5shuf__fail(&job->err, files[f] || errno == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s: %s",
                              job->inputs[f].spec.file, files[f] ? "out of memory" : strerror(errno));
            goto out;
        }
        u[f] = job->inputs[f].rows;
        u[nin + f] = (uint64_t)sb.st_size;
        u[2 * nin + f] = mtime_ns(&sb);
    }
    for (size_t d = 0; d < job->nds; d++)
        dsnames[d] = job->ds[d].in_path;
    uint64_t offset = 0;
    for (size_t j = 0; j < sc->npiles; j++) {
        table[j].lo = (uint64_t)sc->piles[j].range.lo;
        table[j].last = (uint64_t)(sc->piles[j].range.hi - 1);
        table[j].rows = sc->piles[j].rows;
        table[j].offset = offset;
        offset += sc->piles[j].rows;
    }
    root = H5Gopen2(sc->file, "/", H5P_DEFAULT);
    herr_t r = root < 0 ? -1 : 0;
    uint32_t version = PILES_FORMAT_VERSION;
    uint8_t whole = (uint8_t)job->whole_file;
    if (r >= 0)
        r = h5shuf__put_string(root, "h5shuf_format", PILES_FORMAT);
    if (r >= 0)
        r = h5shuf__put_attr(root, "h5shuf_format_version", H5T_STD_U32LE, H5T_NATIVE_UINT32, 0, &version);
    if (r >= 0)
        r = h5shuf__put_string(root, "h5shuf_version", H5SHUF_VERSION_STRING);
    if (r >= 0)
        r = h5shuf__put_string(root, "h5shuf_key", "Philox4x64-10 word 0, counter (i,0,0,0), key (seed,0); rows sorted by (key, i)");
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_seed", job->seed);
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_rows", job->rows);
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_piles", sc->npiles);
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_pile_bound_rows", job->plan.pile_bound_rows);
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_splits", job->plan.splits);
    if (r >= 0)
        r = h5shuf__put_u64(root, "h5shuf_restarts", job->plan.restarts);
    if (r >= 0)
        r = h5shuf__put_attr(root, "h5shuf_whole_file", H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, &whole);
    if (r >= 0)
        r = h5shuf__put_strings(root, "h5shuf_datasets", dsnames, job->nds);
    if (r >= 0)
        r = h5shuf__put_strings(root, "h5shuf_input_specs", (const char *const *)specs, nin);
    if (r >= 0)
        r = h5shuf__put_strings(root, "h5shuf_input_files", (const char *const *)files, nin);
    if (r >= 0)
        r = h5shuf__put_attr(root, "h5shuf_input_rows", H5T_STD_U64LE, H5T_NATIVE_UINT64, nin, u);
    if (r >= 0)
        r = h5shuf__put_attr(root, "h5shuf_input_bytes", H5T_STD_U64LE, H5T_NATIVE_UINT64, nin, u + nin);
    if (r >= 0)
        r = h5shuf__put_attr(root, "h5shuf_input_mtime_ns", H5T_STD_U64LE, H5T_NATIVE_UINT64, nin, u + 2 * nin);
    if (r >= 0 && job->compression)
        r = h5shuf__put_string(root, "h5shuf_compression", job->compression);
    if (r >= 0 && job->chunk_shape)
        r = h5shuf__put_string(root, "h5shuf_chunk_shape", job->chunk_shape);
    if (r >= 0 && job->index_path)
        r = h5shuf__put_string(root, "h5shuf_index", job->index_path);
    if (r >= 0) {
        hsize_t m = sc->npiles;
        ftype = table_type(1);
        mtype = table_type(0);
        space = H5Screate_simple(1, &m, NULL);
        dset = ftype >= 0 && mtype >= 0 && space >= 0 && !H5SHUF_FAULT()
                   ? H5Dcreate2(sc->file, "/pile_table", ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                   : H5I_INVALID_HID;
        r = dset < 0 ? -1 : H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, table);
    }
    if (r < 0)
        st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot write the pile file's attributes: %s", sc->path,
                          h5shuf__hdf5_cause(cause, sizeof cause));
out:
    if (dset >= 0)
        H5Dclose(dset);
    if (space >= 0)
        H5Sclose(space);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (mtype >= 0)
        H5Tclose(mtype);
    if (root >= 0)
        H5Gclose(root);
    free_strings(specs, specs ? nin : 0);
    free_strings(files, files ? nin : 0);
    free(dsnames);
    free(u);
    free(table);
    return st;
}

/* ---- gather -------------------------------------------------------------------------------------- */

void h5shuf__piles_free(h5shuf_job *job)
{
    struct h5shuf_pilefile *pf = job->pf;
    if (!pf)
        return;
    if (pf->file >= 0)
        H5Fclose(pf->file);
    free(pf->piles);
    free(pf->in_rows);
    free(pf->in_bytes);
    free(pf->in_mtime_ns);
    free_strings(pf->datasets, pf->nds);
    free(pf);
    job->pf = NULL;
}

/* Add input f of the pile file: spec as given, opened by its absolute name. */
static int add_input(h5shuf_job *job, const char *spec, const char *file)
{
    int st = h5shuf__input_append(job, spec);
    if (st == H5SHUF_ENOMEM)
        return st;
    if (st != H5SHUF_OK) {
        job->err.status = H5SHUF_OK; /* say where the bad spec came from */
        return h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: input spec '%s'", job->piles_path, spec);
    }
    struct h5shuf_input *in = &job->inputs[job->ninputs - 1];
    if (!(in->open_path = strdup(file)))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    return H5SHUF_OK;
}

/* An output option the gather was not given: the one recorded at scatter time, if any. */
static int recorded_option(h5shuf_job *job, hid_t root, const char *name, char **opt)
{
    if (*opt || H5Aexists(root, name) <= 0)
        return H5SHUF_OK;
    return get_strings(job, root, name, 0, opt);
}

static int read_table(h5shuf_job *job, struct h5shuf_pilefile *pf)
{
    const char *pfile = job->piles_path;
    int st = H5SHUF_OK;
    hid_t mtype = table_type(0), space = H5I_INVALID_HID;
    hid_t dset = H5Lexists(pf->file, "/pile_table", H5P_DEFAULT) > 0 ? H5Dopen2(pf->file, "/pile_table", H5P_DEFAULT)
                                                                     : H5I_INVALID_HID;
    struct table_row *t = calloc(pf->npiles ? pf->npiles : 1, sizeof *t);
    pf->piles = calloc(pf->npiles ? pf->npiles : 1, sizeof *pf->piles);
    if (!t || !pf->piles) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        goto out;
    }
    space = dset >= 0 ? H5Dget_space(dset) : H5I_INVALID_HID;
    if (mtype < 0 || space < 0 || H5Sget_simple_extent_ndims(space) != 1 ||
        H5Sget_simple_extent_npoints(space) != (hssize_t)pf->npiles ||
        H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0) {
        H5Eclear2(H5E_DEFAULT);
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: no readable /pile_table of %zu piles",
                          pfile, pf->npiles);
        goto out;
    }
    /* The ranges must partition [0, 2^64) in order, and the rows add up. */
    uint64_t sum = 0;
    for (size_t j = 0; j < pf->npiles && st == H5SHUF_OK; j++) {
        h5shuf_u128 lo = t[j].lo, hi = (h5shuf_u128)t[j].last + 1;
        h5shuf_u128 want = j ? pf->piles[j - 1].range.hi : 0;
        if (lo != want || hi <= lo || t[j].offset != sum || t[j].rows > pf->rows - sum)
            st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: /pile_table row %zu", pfile, j);
        pf->piles[j].range.lo = lo;
        pf->piles[j].range.hi = hi;
        pf->piles[j].rows = t[j].rows;
        pf->piles[j].number = j;
        sum += t[j].rows;
    }
    if (st == H5SHUF_OK && (sum != pf->rows || pf->npiles == 0 || pf->piles[pf->npiles - 1].range.hi != (h5shuf_u128)1 << 64))
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: /pile_table does not cover all keys and rows",
                          pfile);
out:
    free(t);
    if (space >= 0)
        H5Sclose(space);
    if (dset >= 0)
        H5Dclose(dset);
    if (mtype >= 0)
        H5Tclose(mtype);
    return st;
}

int h5shuf__piles_load(h5shuf_job *job)
{
    const char *pfile = job->piles_path;
    char cause[256];
    struct stat sb;
    if (!job->out_spec.file)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "no output given");
    if (stat(pfile, &sb) != 0)
        return h5shuf__fail(&job->err, errno == ENOENT ? H5SHUF_ENOENT : H5SHUF_EIO, "%s: %s", pfile, strerror(errno));
    if (S_ISDIR(sb.st_mode) || H5Fis_hdf5(pfile) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(&job->err, H5SHUF_ENOTHDF5, "%s: not an HDF5 file, so not a pile file (made by h5shuf scatter)",
                            pfile);
    }
    struct h5shuf_pilefile *pf = calloc(1, sizeof *pf);
    if (!pf)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    job->pf = pf;
    pf->file_bytes = (uint64_t)sb.st_size;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    pf->file = H5Fopen(pfile, H5F_ACC_RDONLY, fapl); /* read-only: a gather never changes the pile file */
    if (pf->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    H5Pclose(fapl);
    if (pf->file < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot open: %s", pfile, cause);

    hid_t root = H5Gopen2(pf->file, "/", H5P_DEFAULT);
    if (root < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: %s", pfile, h5shuf__hdf5_cause(cause, sizeof cause));
    int st = H5SHUF_OK;
    char *format = NULL, **specs = NULL, **files = NULL;
    uint64_t version = 0, npiles = 0, nin = 0, nds = 0, seed = 0, whole = 0;
    if (H5Aexists(root, "h5shuf_format") <= 0 || get_strings(job, root, "h5shuf_format", 0, &format) != H5SHUF_OK ||
        strcmp(format, PILES_FORMAT) != 0) {
        H5Eclear2(H5E_DEFAULT);
        job->err.status = H5SHUF_OK;
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: not a pile file (no h5shuf_format \"%s\" attribute; made by h5shuf scatter)",
                          pfile, PILES_FORMAT);
        goto out;
    }
    if ((st = get_u64s(job, root, "h5shuf_format_version", 0, &version)) != H5SHUF_OK)
        goto out;
    if (version != PILES_FORMAT_VERSION) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: pile file format version %" PRIu64
                          " is not the one this h5shuf %s reads (%u); gather it with the h5shuf that scattered it",
                          pfile, version, H5SHUF_VERSION_STRING, PILES_FORMAT_VERSION);
        goto out;
    }
    if ((st = get_u64s(job, root, "h5shuf_rows", 0, &pf->rows)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_piles", 0, &npiles)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_seed", 0, &seed)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_whole_file", 0, &whole)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_pile_bound_rows", 0, &pf->bound_rows)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_splits", 0, &pf->splits)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_restarts", 0, &pf->restarts)) != H5SHUF_OK)
        goto out;
    /* Counts from the attributes' shapes. */
    hssize_t n = attr_count(root, "h5shuf_input_specs"), m = attr_count(root, "h5shuf_datasets");
    if (n < 1 || m < 1) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: no inputs or datasets recorded", pfile);
        goto out;
    }
    nin = (uint64_t)n;
    nds = (uint64_t)m;
    pf->ninputs = nin;
    pf->nds = nds;
    pf->npiles = npiles;
    specs = calloc(nin, sizeof *specs);
    files = calloc(nin, sizeof *files);
    pf->datasets = calloc(nds, sizeof *pf->datasets);
    pf->in_rows = calloc(nin, sizeof *pf->in_rows);
    pf->in_bytes = calloc(nin, sizeof *pf->in_bytes);
    pf->in_mtime_ns = calloc(nin, sizeof *pf->in_mtime_ns);
    if (!specs || !files || !pf->datasets || !pf->in_rows || !pf->in_bytes || !pf->in_mtime_ns) {
        st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = get_strings(job, root, "h5shuf_input_specs", nin, specs)) != H5SHUF_OK ||
        (st = get_strings(job, root, "h5shuf_input_files", nin, files)) != H5SHUF_OK ||
        (st = get_strings(job, root, "h5shuf_datasets", nds, pf->datasets)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_input_rows", nin, pf->in_rows)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_input_bytes", nin, pf->in_bytes)) != H5SHUF_OK ||
        (st = get_u64s(job, root, "h5shuf_input_mtime_ns", nin, pf->in_mtime_ns)) != H5SHUF_OK)
        goto out;
    if ((npiles == 0 || npiles > SIZE_MAX / sizeof(struct table_row))) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: %" PRIu64 " piles", pfile, npiles);
        goto out;
    }
    if ((st = read_table(job, pf)) != H5SHUF_OK)
        goto out;
    /* The inputs, as the scatter had them: whole-file mode rediscovers the first input's datasets. */
    for (size_t f = 0; f < nin && st == H5SHUF_OK; f++)
        st = add_input(job, specs[f], files[f]);
    if (st != H5SHUF_OK)
        goto out;
    if ((whole != 0) != (job->inputs[0].spec.npaths == 0)) {
        st = h5shuf__fail(&job->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: whole-file flag and first input disagree", pfile);
        goto out;
    }
    if (job->opts.seed_set && job->opts.seed != seed) {
        st = h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: the piles were scattered with seed %" PRIu64 ", not %" PRIu64,
                          pfile, seed, job->opts.seed);
        goto out;
    }
    job->opts.seed = seed;
    job->opts.seed_set = 1;
    /* Output options not given to the gather: those given to the scatter. */
    if ((st = recorded_option(job, root, "h5shuf_compression", &job->compression)) != H5SHUF_OK ||
        (st = recorded_option(job, root, "h5shuf_chunk_shape", &job->chunk_shape)) != H5SHUF_OK ||
        (st = recorded_option(job, root, "h5shuf_index", &job->index_path)) != H5SHUF_OK)
        goto out;
    job->opts.compression = job->compression;
    job->opts.chunk_shape = job->chunk_shape;
    job->opts.index_path = job->index_path;
out:
    free(format);
    free_strings(specs, specs ? nin : 0);
    free_strings(files, files ? nin : 0);
    H5Gclose(root);
    return st;
}

int h5shuf__piles_check(h5shuf_job *job)
{
    struct h5shuf_pilefile *pf = job->pf;
    const char *pfile = job->piles_path;
    char cause[256];
    if (job->nds != pf->nds)
        return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: has %zu datasets now, %zu when %s was scattered",
                            job->inputs[0].spec.file, job->nds, pf->nds, pfile);
    for (size_t d = 0; d < job->nds; d++)
        if (strcmp(job->ds[d].in_path, pf->datasets[d]) != 0)
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: dataset %zu is %s now, %s when %s was scattered",
                                job->inputs[0].spec.file, d, job->ds[d].in_path, pf->datasets[d], pfile);
    for (size_t f = 0; f < job->ninputs; f++) {
        struct stat sb;
        const struct h5shuf_input *in = &job->inputs[f];
        if (stat(h5shuf__input_path(in), &sb) != 0)
            return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: %s", in->spec.file, strerror(errno));
        if (in->rows != pf->in_rows[f] || (uint64_t)sb.st_size != pf->in_bytes[f] || mtime_ns(&sb) != pf->in_mtime_ns[f])
            return h5shuf__fail(&job->err, H5SHUF_EMISMATCH,
                                "%s: changed since %s was scattered (%s differs); a gather reads the output's "
                                "metadata from it: scatter again",
                                in->spec.file, pfile,
                                in->rows != pf->in_rows[f]                ? "its row count"
                                : (uint64_t)sb.st_size != pf->in_bytes[f] ? "its size"
                                                                          : "its modification time");
    }
    if (job->rows != pf->rows)
        return h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s: records %" PRIu64 " rows, the inputs have %" PRIu64, pfile,
                            pf->rows, job->rows);
    /* The piles' datasets must hold the inputs' rows: same file datatype and row shape. */
    struct h5shuf_scratch sc = {.path = job->piles_path, .file = pf->file};
    struct h5shuf_pile p0 = {.number = 0};
    hid_t group = H5I_INVALID_HID;
    hid_t *dsets = malloc(h5shuf__pile_nsets(job) * sizeof *dsets);
    if (!dsets)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    int st = h5shuf__pile_open(job, &sc, &p0, &group, dsets);
    for (size_t d = 0; d < job->nds && st == H5SHUF_OK; d++) {
        hid_t t = H5Dget_type(dsets[d]), s = H5Dget_space(dsets[d]);
        hsize_t dims[H5S_MAX_RANK];
        int rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
        /* (a vlen dataset's pile dataset holds its elements' lengths, vlen.c) */
        int same = t >= 0 && H5Tequal(t, h5shuf__buf_type(job, d)) > 0 && rank == job->ds[d].rank;
        if (same && H5Sget_simple_extent_dims(s, dims, NULL) >= 0)
            for (int k = 1; k < rank; k++)
                same = same && dims[k] == job->ds[d].dims[k];
        if (t >= 0)
            H5Tclose(t);
        if (s >= 0)
            H5Sclose(s);
        H5Eclear2(H5E_DEFAULT);
        if (!same)
            st = h5shuf__fail(&job->err, H5SHUF_EMISMATCH, "%s:%s: datatype or row shape differs from the piles in %s",
                              job->inputs[0].spec.file, job->ds[d].in_path, pfile);
    }
    h5shuf__pile_close(group, dsets, h5shuf__pile_nsets(job));
    free(dsets);
    if (st != H5SHUF_OK)
        return st;
    /* Pass 2 holds the largest pile, its ids, sort records and the output bands. */
    uint64_t most = 0;
    for (size_t j = 0; j < pf->npiles; j++)
        most = pf->piles[j].rows > most ? pf->piles[j].rows : most;
    h5shuf_u128 need = (h5shuf_u128)most * (job->row_bytes + H5SHUF_PASS2_ROW_OVERHEAD) + h5shuf__writer_bytes(job);
    if (need > job->opts.mem_limit_bytes)
        return h5shuf__fail(&job->err, H5SHUF_EBUDGET,
                            "%s: its largest pile (%" PRIu64 " rows) needs %" PRIu64 " MiB in pass 2, more than the "
                            "budget of %" PRIu64 " MiB (use -m)",
                            pfile, most, (uint64_t)((need + (1 << 20) - 1) >> 20), job->opts.mem_limit_bytes >> 20);
    h5shuf_plan *p = &job->plan;
    p->piles = pf->npiles;
    p->pile_bound_rows = pf->bound_rows;
    p->pile_target_rows = h5shuf__pile_target_for_bound(pf->bound_rows);
    p->splits = pf->splits;
    p->restarts = pf->restarts;
    p->scratch_bytes = pf->file_bytes;
    p->mem_planned_bytes = (uint64_t)need;
    (void)cause;
    return H5SHUF_OK;
}
