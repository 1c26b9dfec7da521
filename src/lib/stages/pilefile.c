/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pilefile.c - the pile file (format v1, docs/lazy.md): the two passes of a shuffle as separate runs.
 *
 * h5shuf_run_scatter (run.c) runs pass 1 and the oversize handling exactly as h5shuf_run does, into a scratch
 * file written next to the pile file's name, then renumbers the piles in key order (/piles/000000 is the
 * pile of the smallest keys), records what a gather needs as attributes and a pile table
 * (docs/lazy.md), and renames the file into place.  h5shuf_run_gather rebuilds the one-shot job from what
 * this file reads back and runs the same output phases and pass 2 over it, so its output is the one-shot output,
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

#include "attrget.h"
#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "pilefile.h"
#include "provenance.h"

#define PILES_FORMAT "h5shuf-piles"
#define PILES_FORMAT_VERSION 1u

/* One row of /pile_table (file type: four little-endian uint64, 32 bytes). */
struct table_row {
    uint64_t lo;     /* the pile's first key */
    uint64_t last;   /* its last key (inclusive: hi - 1, so the last pile's 2^64 fits in 64 bits) */
    uint64_t rows;   /* rows in the pile */
    uint64_t offset; /* output row of its first row: the rows of the piles before it */
};

/* Where a read failure goes: "PATH: damaged pile file: ..." */
struct reader {
    const char *path;
    struct h5shuf_err *err;
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

/*-*************************************
*  Reading attributes
***************************************/

/* A root attribute of the pile file that is missing, or of another shape or type than a scatter writes
 * (why), refused: "damaged pile file". */
static int attr_refused(const struct reader *rd, int got, const char *name, const char *why)
{
    if (got == H5SHUF_ATTR_NOMEM)
        return h5shuf__fail(rd->err, H5SHUF_ENOMEM, "%s: attribute %s: out of memory", rd->path, name);
    return h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: attribute %s %s", rd->path, name,
                        got == H5SHUF_ATTR_NONE ? "is missing" : why);
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

/* n values (n == 0: one, a scalar) of attribute name of obj: integers into v, or strings into
 * out[0..max(n,1)), each a malloc'd copy. */
static int get_u64s(const struct reader *rd, hid_t obj, const char *name, size_t n, uint64_t *v)
{
    char why[H5SHUF_ATTR_WHY_MAX];
    int got = h5shuf__attr_get_u64s(obj, name, n ? n : 1, v, why, sizeof why);
    return got == H5SHUF_ATTR_READ ? H5SHUF_OK : attr_refused(rd, got, name, why);
}

static int get_strings(const struct reader *rd, hid_t obj, const char *name, size_t n, char **out)
{
    char why[H5SHUF_ATTR_WHY_MAX];
    int got = h5shuf__attr_get_texts(obj, name, n ? n : 1, 0, out, why, sizeof why);
    return got == H5SHUF_ATTR_READ ? H5SHUF_OK : attr_refused(rd, got, name, why);
}

/*-*************************************
*  A scatter's pile file
***************************************/

/* Rename the piles /piles/0, 1, ... M-1 in key order (a pile that got no row gets an empty group), so
 * that a reader finds pile j by its number.  Empty key ranges (possible only in theory, when a range of
 * fewer keys than parts is cut) hold no row and are dropped. */
static int renumber(struct h5shuf_scratch *sc, struct h5shuf_err *err)
{
    char from[64], to[64], cause[256];
    size_t n = 0;
    for (size_t j = 0; j < sc->npiles; j++) {
        if (sc->piles[j].range.lo == sc->piles[j].range.hi) {
            if (sc->piles[j].rows)
                return h5shuf__fail(err, H5SHUF_EINTERNAL, "rows in an empty key range");
            continue;
        }
        sc->piles[n++] = sc->piles[j];
    }
    sc->npiles = n;
    hid_t g = H5SHUF_FAULT() ? H5I_INVALID_HID : h5shuf__scratch_group(sc->file, "/piles.new");
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
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot renumber the piles: %s", sc->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    for (size_t j = 0; j < n; j++) {
        sc->piles[j].number = j;
        int st = sc->piles[j].rows ? H5SHUF_OK : h5shuf__pile_create_empty(sc, j, err);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

/* The spec of input f as given ("FILE" or "FILE:/a,/b", with "@W" when weighted; "" for a weighted
 * input's copies after its first): in whole-file mode the first input's paths were
 * discovered, not given, and a gather discovers them again.  Caller frees. */
static char *spec_text(const struct h5shuf_inputs *in, size_t f)
{
    const struct h5shuf_spec *s = &in->v[f].spec;
    const char *w = in->v[f].weight;
    if (in->v[f].copy > 0) /* a weighted input's further copy: its first's "@W" makes it again */
        return strdup("");
    size_t npaths = f == 0 && in->whole_file ? 0 : s->npaths;
    size_t len = strlen(s->file) + 1 + (w ? strlen(w) + 1 : 0);
    for (size_t k = 0; k < npaths; k++)
        len += strlen(s->paths[k]) + 1;
    char *t = malloc(len);
    if (!t)
        return NULL;
    char *p = t + sprintf(t, "%s", s->file);
    for (size_t k = 0; k < npaths; k++)
        p += sprintf(p, "%c%s", k ? ',' : ':', s->paths[k]);
    if (w)
        sprintf(p, "@%s", w);
    return t;
}

/* What a gather needs to know of the inputs: each one's spec as given, absolute file name, rows, size and
 * modification time (nin of each; rows, bytes and times in u[0..3*nin)). */
struct input_records {
    size_t nin;
    char **specs, **files;
    uint64_t *u;
};

static int input_records(const struct h5shuf_inputs *in, struct input_records *r, struct h5shuf_err *err)
{
    size_t nin = r->nin = in->n;
    r->specs = calloc(nin, sizeof *r->specs);
    r->files = calloc(nin, sizeof *r->files);
    r->u = calloc(3 * nin, sizeof *r->u);
    if (!r->specs || !r->files || !r->u)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; f < nin; f++) {
        struct stat sb;
        const char *path = h5shuf__input_path(&in->v[f]);
        if (stat(path, &sb) != 0)
            return h5shuf__fail(err, H5SHUF_EIO, "%s: %s", in->v[f].spec.file, strerror(errno));
        r->specs[f] = spec_text(in, f);
        r->files[f] = realpath(path, NULL);
        if (!r->specs[f] || !r->files[f])
            return h5shuf__fail(err, r->files[f] || errno == ENOMEM ? H5SHUF_ENOMEM : H5SHUF_EIO, "%s: %s",
                                in->v[f].spec.file, r->files[f] ? "out of memory" : strerror(errno));
        r->u[f] = in->v[f].rows;
        r->u[nin + f] = (uint64_t)sb.st_size;
        r->u[2 * nin + f] = mtime_ns(&sb);
    }
    return H5SHUF_OK;
}

static void input_records_free(struct input_records *r)
{
    free_strings(r->specs, r->specs ? r->nin : 0);
    free_strings(r->files, r->files ? r->nin : 0);
    free(r->u);
}

/* The root attributes of the pile file (docs/lazy.md).  < 0 on an HDF5 error. */
static herr_t write_attrs(hid_t root, const struct h5shuf_scratch *sc, const struct h5shuf_pilefile_meta *m,
                          const struct input_records *rec, const char **dsnames)
{
    size_t nin = rec->nin;
    uint32_t version = PILES_FORMAT_VERSION;
    uint8_t whole = (uint8_t)m->inputs->whole_file;
    herr_t r = h5shuf__attr_put_string(root, "h5shuf_format", PILES_FORMAT);
    if (r >= 0)
        r = h5shuf__attr_put(root, "h5shuf_format_version", H5T_STD_U32LE, H5T_NATIVE_UINT32, 0, &version);
    if (r >= 0)
        r = h5shuf__attr_put_string(root, "h5shuf_version", H5SHUF_VERSION_STRING);
    if (r >= 0)
        r = h5shuf__attr_put_string(root, "h5shuf_key", H5SHUF_KEY_TEXT);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_seed", m->seed);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_rows", m->inputs->rows);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_piles", sc->npiles);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_pile_bound_rows", m->plan->pile_bound_rows);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_splits", m->plan->splits);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_restarts", m->plan->restarts);
    if (r >= 0)
        r = h5shuf__attr_put(root, "h5shuf_whole_file", H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, &whole);
    if (r >= 0)
        r = h5shuf__attr_put_strings(root, "h5shuf_datasets", dsnames, m->dsets->n);
    if (r >= 0)
        r = h5shuf__attr_put_strings(root, "h5shuf_input_specs", (const char *const *)rec->specs, nin);
    if (r >= 0)
        r = h5shuf__attr_put_strings(root, "h5shuf_input_files", (const char *const *)rec->files, nin);
    if (r >= 0)
        r = h5shuf__attr_put_u64s(root, "h5shuf_input_rows", rec->u, nin);
    if (r >= 0)
        r = h5shuf__attr_put_u64s(root, "h5shuf_input_bytes", rec->u + nin, nin);
    if (r >= 0)
        r = h5shuf__attr_put_u64s(root, "h5shuf_input_mtime_ns", rec->u + 2 * nin, nin);
    if (r >= 0 && m->compression)
        r = h5shuf__attr_put_string(root, "h5shuf_compression", m->compression);
    if (r >= 0 && m->chunk_shape)
        r = h5shuf__attr_put_string(root, "h5shuf_chunk_shape", m->chunk_shape);
    if (r >= 0 && m->index_path)
        r = h5shuf__attr_put_string(root, "h5shuf_index", m->index_path);
    return r;
}

/* /pile_table: each pile's key range, rows and output offset.  < 0 on an HDF5 error. */
static herr_t write_table(const struct h5shuf_scratch *sc, const struct table_row *table)
{
    hsize_t m = sc->npiles;
    hid_t ftype = table_type(1), mtype = table_type(0), space = H5Screate_simple(1, &m, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dset = ftype >= 0 && mtype >= 0 && space >= 0 && dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 &&
                         !H5SHUF_FAULT()
                     ? H5Dcreate2(sc->file, "/pile_table", ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)
                     : H5I_INVALID_HID;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    herr_t r = dset < 0 ? -1 : H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, table);
    if (dset >= 0)
        H5Dclose(dset);
    if (space >= 0)
        H5Sclose(space);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (mtype >= 0)
        H5Tclose(mtype);
    return r;
}

/* Record on the pile file's root and in /pile_table what a gather and a loader need (docs/lazy.md). */
static int write_meta(struct h5shuf_scratch *sc, const struct h5shuf_pilefile_meta *m, struct h5shuf_err *err)
{
    char cause[256];
    struct input_records rec = {0};
    const char **dsnames = calloc(m->dsets->n ? m->dsets->n : 1, sizeof *dsnames);
    struct table_row *table = calloc(sc->npiles ? sc->npiles : 1, sizeof *table);
    int st = dsnames && table ? input_records(m->inputs, &rec, err) : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK) {
        for (size_t d = 0; d < m->dsets->n; d++)
            dsnames[d] = m->dsets->ds[d].in_path;
        uint64_t offset = 0;
        for (size_t j = 0; j < sc->npiles; j++) {
            table[j].lo = (uint64_t)sc->piles[j].range.lo;
            table[j].last = (uint64_t)(sc->piles[j].range.hi - 1);
            table[j].rows = sc->piles[j].rows;
            table[j].offset = offset;
            offset += sc->piles[j].rows;
        }
        hid_t root = H5Gopen2(sc->file, "/", H5P_DEFAULT);
        herr_t r = root < 0 ? -1 : write_attrs(root, sc, m, &rec, dsnames);
        if (r >= 0)
            r = write_table(sc, table);
        if (root >= 0)
            H5Gclose(root);
        if (r < 0)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot write the pile file's attributes: %s", sc->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    input_records_free(&rec);
    free(dsnames);
    free(table);
    return st;
}

int h5shuf__pilefile_finish(struct h5shuf_scratch *sc, const struct h5shuf_pilefile_meta *m, struct h5shuf_err *err)
{
    int st = renumber(sc, err);
    return st == H5SHUF_OK ? write_meta(sc, m, err) : st;
}

/*-*************************************
*  A gather's pile file
***************************************/

void h5shuf__pilefile_free(struct h5shuf_pilefile *pf)
{
    if (!pf)
        return;
    if (pf->file >= 0)
        H5Fclose(pf->file);
    free(pf->piles);
    free(pf->in_rows);
    free(pf->in_bytes);
    free(pf->in_mtime_ns);
    free_strings(pf->specs, pf->specs ? pf->ninputs : 0);
    free_strings(pf->files, pf->files ? pf->ninputs : 0);
    free_strings(pf->datasets, pf->datasets ? pf->nds : 0);
    free(pf->compression);
    free(pf->chunk_shape);
    free(pf->index_path);
    free(pf);
}

/* An output option recorded at scatter time (NULL when none was). */
static int recorded_option(const struct reader *rd, hid_t root, const char *name, char **opt)
{
    if (H5Aexists(root, name) <= 0)
        return H5SHUF_OK;
    return get_strings(rd, root, name, 0, opt);
}

static int read_table(const struct reader *rd, struct h5shuf_pilefile *pf)
{
    const char *pfile = rd->path;
    int st = H5SHUF_OK;
    hid_t mtype = table_type(0), space = H5I_INVALID_HID;
    hid_t dset = H5Lexists(pf->file, "/pile_table", H5P_DEFAULT) > 0 ? H5Dopen2(pf->file, "/pile_table", H5P_DEFAULT)
                                                                     : H5I_INVALID_HID;
    struct table_row *t = calloc(pf->npiles ? pf->npiles : 1, sizeof *t);
    pf->piles = calloc(pf->npiles ? pf->npiles : 1, sizeof *pf->piles);
    if (!t || !pf->piles) {
        st = h5shuf__fail(rd->err, H5SHUF_ENOMEM, "out of memory");
        goto out;
    }
    space = dset >= 0 ? H5Dget_space(dset) : H5I_INVALID_HID;
    if (mtype < 0 || space < 0 || H5Sget_simple_extent_ndims(space) != 1 ||
        H5Sget_simple_extent_npoints(space) != (hssize_t)pf->npiles ||
        H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0) {
        H5Eclear2(H5E_DEFAULT);
        st = h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: no readable /pile_table of %zu piles",
                          pfile, pf->npiles);
        goto out;
    }
    /* The ranges must partition [0, 2^64) in order, and the rows add up. */
    uint64_t sum = 0;
    for (size_t j = 0; j < pf->npiles && st == H5SHUF_OK; j++) {
        h5shuf_u128 lo = t[j].lo, hi = (h5shuf_u128)t[j].last + 1;
        h5shuf_u128 want = j ? pf->piles[j - 1].range.hi : 0;
        if (lo != want || hi <= lo || t[j].offset != sum || t[j].rows > pf->rows - sum)
            st = h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: /pile_table row %zu", pfile, j);
        pf->piles[j].range.lo = lo;
        pf->piles[j].range.hi = hi;
        pf->piles[j].rows = t[j].rows;
        pf->piles[j].number = j;
        sum += t[j].rows;
    }
    if (st == H5SHUF_OK && (sum != pf->rows || pf->npiles == 0 || pf->piles[pf->npiles - 1].range.hi != (h5shuf_u128)1 << 64))
        st = h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: /pile_table does not cover all keys and rows",
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

/* The scalars of the root: format, version, rows, piles, seed, whole-file flag, bound, splits, restarts. */
static int read_header(const struct reader *rd, hid_t root, struct h5shuf_pilefile *pf)
{
    char *format = NULL;
    uint64_t version = 0, whole = 0;
    int st = H5SHUF_OK;
    if (H5Aexists(root, "h5shuf_format") <= 0 || get_strings(rd, root, "h5shuf_format", 0, &format) != H5SHUF_OK ||
        strcmp(format, PILES_FORMAT) != 0) {
        H5Eclear2(H5E_DEFAULT);
        rd->err->status = H5SHUF_OK; /* this message, not get_strings's */
        st = h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED,
                          "%s: not a pile file (no h5shuf_format \"%s\" attribute; made by h5shuf scatter)", rd->path,
                          PILES_FORMAT);
    } else if ((st = get_u64s(rd, root, "h5shuf_format_version", 0, &version)) != H5SHUF_OK) {
    } else if (version != PILES_FORMAT_VERSION) {
        st = h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED,
                          "%s: pile file format version %" PRIu64
                          " is not the one this h5shuf %s reads (%u); gather it with the h5shuf that scattered it",
                          rd->path, version, H5SHUF_VERSION_STRING, PILES_FORMAT_VERSION);
    } else if ((st = get_u64s(rd, root, "h5shuf_rows", 0, &pf->rows)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_piles", 0, &pf->npiles)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_seed", 0, &pf->seed)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_whole_file", 0, &whole)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_pile_bound_rows", 0, &pf->bound_rows)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_splits", 0, &pf->splits)) != H5SHUF_OK ||
               (st = get_u64s(rd, root, "h5shuf_restarts", 0, &pf->restarts)) != H5SHUF_OK) {
    }
    pf->whole_file = whole != 0;
    free(format);
    return st;
}

/* The inputs and datasets as the scatter had them (counts from the attributes' shapes), and the output
 * options it was given. */
static int read_inputs(const struct reader *rd, hid_t root, struct h5shuf_pilefile *pf)
{
    hssize_t n = attr_count(root, "h5shuf_input_specs"), m = attr_count(root, "h5shuf_datasets");
    if (n < 1 || m < 1)
        return h5shuf__fail(rd->err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: no inputs or datasets recorded",
                            rd->path);
    size_t nin = pf->ninputs = (size_t)n;
    pf->nds = (size_t)m;
    pf->specs = calloc(nin, sizeof *pf->specs);
    pf->files = calloc(nin, sizeof *pf->files);
    pf->datasets = calloc(pf->nds, sizeof *pf->datasets);
    pf->in_rows = calloc(nin, sizeof *pf->in_rows);
    pf->in_bytes = calloc(nin, sizeof *pf->in_bytes);
    pf->in_mtime_ns = calloc(nin, sizeof *pf->in_mtime_ns);
    if (!pf->specs || !pf->files || !pf->datasets || !pf->in_rows || !pf->in_bytes || !pf->in_mtime_ns)
        return h5shuf__fail(rd->err, H5SHUF_ENOMEM, "out of memory");
    int st;
    if ((st = get_strings(rd, root, "h5shuf_input_specs", nin, pf->specs)) != H5SHUF_OK ||
        (st = get_strings(rd, root, "h5shuf_input_files", nin, pf->files)) != H5SHUF_OK ||
        (st = get_strings(rd, root, "h5shuf_datasets", pf->nds, pf->datasets)) != H5SHUF_OK ||
        (st = get_u64s(rd, root, "h5shuf_input_rows", nin, pf->in_rows)) != H5SHUF_OK ||
        (st = get_u64s(rd, root, "h5shuf_input_bytes", nin, pf->in_bytes)) != H5SHUF_OK ||
        (st = get_u64s(rd, root, "h5shuf_input_mtime_ns", nin, pf->in_mtime_ns)) != H5SHUF_OK ||
        (st = recorded_option(rd, root, "h5shuf_compression", &pf->compression)) != H5SHUF_OK ||
        (st = recorded_option(rd, root, "h5shuf_chunk_shape", &pf->chunk_shape)) != H5SHUF_OK ||
        (st = recorded_option(rd, root, "h5shuf_index", &pf->index_path)) != H5SHUF_OK)
        return st;
    return H5SHUF_OK;
}

int h5shuf__pilefile_open(const char *path, struct h5shuf_pilefile **out, struct h5shuf_err *err)
{
    const struct reader rd = {path, err};
    char cause[256];
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0)
        return h5shuf__fail(err, errno == ENOENT ? H5SHUF_ENOENT : H5SHUF_EIO, "%s: %s", path, strerror(errno));
    const char *kind = h5shuf__not_regular(sb.st_mode); /* before HDF5 opens it: a FIFO would wait for a writer */
    if (kind && !S_ISDIR(sb.st_mode))
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: is %s, not a pile file (made by h5shuf scatter)", path, kind);
    if (S_ISDIR(sb.st_mode) || H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        if (!S_ISDIR(sb.st_mode) && h5shuf__fd_shortage(path, cause, sizeof cause))
            return h5shuf__fail(err, H5SHUF_EIO, "%s: cannot open: %s", path, cause);
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: not an HDF5 file, so not a pile file (made by h5shuf scatter)",
                            path);
    }
    struct h5shuf_pilefile *pf = calloc(1, sizeof *pf);
    if (!pf)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    *out = pf;
    pf->file_bytes = (uint64_t)sb.st_size;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    pf->file = H5Fopen(path, H5F_ACC_RDONLY, fapl); /* read-only: a gather never changes the pile file */
    if (pf->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    H5Pclose(fapl);
    if (pf->file < 0) {
        h5shuf__fd_shortage(path, cause, sizeof cause);
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot open: %s", path, cause);
    }
    hid_t root = H5Gopen2(pf->file, "/", H5P_DEFAULT);
    if (root < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", path, h5shuf__hdf5_cause(cause, sizeof cause));
    int st = read_header(&rd, root, pf);
    if (st == H5SHUF_OK)
        st = read_inputs(&rd, root, pf);
    if (st == H5SHUF_OK && (pf->npiles == 0 || pf->npiles > SIZE_MAX / sizeof(struct table_row)))
        st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: damaged pile file: %" PRIu64 " piles", path, pf->npiles);
    if (st == H5SHUF_OK)
        st = read_table(&rd, pf);
    H5Gclose(root);
    return st;
}

int h5shuf__pilefile_check(const struct h5shuf_pilefile *pf, const char *path, const struct h5shuf_inputs *in,
                           const struct h5shuf_datasets *dsets, struct h5shuf_err *err)
{
    const char *first = in->v[0].spec.file;
    if (dsets->n != pf->nds)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: has %zu datasets now, %zu when %s was scattered", first, dsets->n,
                            pf->nds, path);
    for (size_t d = 0; d < dsets->n; d++)
        if (strcmp(dsets->ds[d].in_path, pf->datasets[d]) != 0)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: dataset %zu is %s now, %s when %s was scattered", first, d,
                                dsets->ds[d].in_path, pf->datasets[d], path);
    for (size_t f = 0; f < in->n; f++) {
        struct stat sb;
        const struct h5shuf_input *inp = &in->v[f];
        if (stat(h5shuf__input_path(inp), &sb) != 0)
            return h5shuf__fail(err, H5SHUF_EIO, "%s: %s", inp->spec.file, strerror(errno));
        if (inp->rows != pf->in_rows[f] || (uint64_t)sb.st_size != pf->in_bytes[f] || mtime_ns(&sb) != pf->in_mtime_ns[f])
            return h5shuf__fail(err, H5SHUF_EMISMATCH,
                                "%s: changed since %s was scattered (%s differs); a gather reads the output's "
                                "metadata from it: scatter again",
                                inp->spec.file, path,
                                inp->rows != pf->in_rows[f]                ? "its row count"
                                : (uint64_t)sb.st_size != pf->in_bytes[f] ? "its size"
                                                                          : "its modification time");
    }
    if (in->rows != pf->rows)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: records %" PRIu64 " rows, the inputs have %" PRIu64, path, pf->rows,
                            in->rows);
    /* The piles' datasets must hold the inputs' rows: same file datatype and row shape. */
    struct h5shuf_scratch sc = {.path = (char *)path, .file = pf->file, .dsets = dsets};
    struct h5shuf_pile p0 = {.number = 0};
    hid_t group = H5I_INVALID_HID;
    hid_t *sets = malloc(h5shuf__pile_nsets(dsets) * sizeof *sets);
    if (!sets)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    int st = h5shuf__pile_open(&sc, &p0, &group, sets, err);
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) {
        hid_t t = H5Dget_type(sets[d]), s = H5Dget_space(sets[d]);
        hsize_t dims[H5S_MAX_RANK];
        int rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
        /* (a vlen dataset's pile dataset holds its elements' lengths, vlen.c) */
        int same = t >= 0 && H5Tequal(t, h5shuf__buf_type(dsets, d)) > 0 && rank == dsets->ds[d].rank;
        if (same && H5Sget_simple_extent_dims(s, dims, NULL) >= 0)
            for (int k = 1; k < rank; k++)
                same = same && dims[k] == dsets->ds[d].dims[k];
        if (t >= 0)
            H5Tclose(t);
        if (s >= 0)
            H5Sclose(s);
        H5Eclear2(H5E_DEFAULT);
        if (!same)
            st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: datatype or row shape differs from the piles in %s", first,
                              dsets->ds[d].in_path, path);
    }
    h5shuf__pile_close(group, sets, h5shuf__pile_nsets(dsets));
    free(sets);
    return st;
}
