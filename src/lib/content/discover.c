/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * discover.c - which datasets of a file hold the rows.
 *
 * Whole-file mode.  Where datasets have dimension scales attached to their dim 0 (the H5DS convention
 * netCDF-4 writes for every variable, and h5py's dims API), the scales say which dimension is the record
 * one: the scale attached at dim 0 to the most datasets (a tie goes to the one that is extendible, as
 * netCDF's unlimited dimension is; a tie left is refused by name).  The rows are then those of every
 * dataset with that scale at dim 0, of the scale itself (netCDF's coordinate variable, e.g. time(time)),
 * and of the datasets with no scale at dim 0 and that many rows; a dataset on another dimension of the
 * same length (elev(station) beside time) is copied, not shuffled.
 *
 * A netCDF dimension with no coordinate variable is stored as a scale that is no variable: netCDF-C
 * (libhdf5/nc4hdf.c, nc4_create_dim_wo_var) makes a float dataset of the dimension's length when it is
 * defined, never written (an unlimited one extendible, chunked by 1: of length 0, not extended as the
 * variables on it grow), whose NAME begins "This is a netCDF dimension but not a netCDF variable".  It
 * holds no rows: when it is the record scale the rows are its variables' alone (their length, not its
 * own), and it is copied as it is, still attached; it is never a candidate below either.
 *
 * Without scales, the datasets are grouped by the length of their dim 0, and the rows are those of one
 * group only when the file leaves no doubt: the one length of 2 or more rows held by two datasets or more
 * (or, when no length is, the only dataset of 2 or more rows), and those datasets hold at least half of the
 * bytes of every dataset (bytes: elements times the size of an element of the file's datatype, what
 * the data is whatever its filters or allocation; a variable-length element counts as its descriptor).
 * Anything else is refused, naming each group of 2 or more rows with its rows, its bytes and the
 * FILE:/a,/b that picks it: two groups of several datasets (/train/X,/train/y beside /test/X,/test/y, or
 * /X,/y beside three class tables of 10 rows), or a group beside a larger dataset of its own (/X beside
 * /a,/b,/c).  A length of 0 or 1 is no candidate (a shuffle of it is the identity: /version of shape (1,)
 * decides nothing); only a file without any longer dataset shuffles one, the length most of its datasets
 * share.
 *
 * Dataset mode.  The scales attached to the named datasets go with them: a dim-0 scale is shuffled too
 * (it has their rows; not a netCDF dimension without a variable, which is copied), the scales of the other
 * dimensions are copied into the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h> /* H5DS: dimension scales */

#include "attrget.h"
#include "discover.h"
#include "fault.h"
#include "h5err.h"
#include "rowsets.h"

/* A dataset of the file, with what decides whether its rows are the records. */
struct found {
    char *path;
    uint64_t rows;
    haddr_t addr;      /* its own address */
    haddr_t scale;     /* the address of the scale attached to its dim 0, or HADDR_UNDEF */
    uint64_t bytes;    /* elements x the size of one of its file datatype's (saturated) */
    int is_scale;      /* it is itself a dimension scale */
    int dim_only;      /* a netCDF dimension without a variable: no rows (netcdf_dim_only) */
    int unlimited;     /* its dim 0 is extendible */
};

struct discovery {
    struct found *v;
    size_t n, cap;
    int oom;
};

/*-*************************************
*  Dimension scales and the walk of a file
***************************************/

static herr_t first_scale_cb(hid_t did, unsigned dim, hid_t dsid, void *data)
{
    (void)did, (void)dim;
    H5O_info_t oi;
    if (H5Oget_info(dsid, &oi) >= 0)
        *(haddr_t *)data = oi.addr;
    return 1; /* the first scale is enough */
}

/* Is d a dimension scale: its CLASS attribute one fixed-length string, "DIMENSION_SCALE" (the H5DS
 * convention)?  A CLASS of any other shape or type is not (H5DSis_scale, too, takes nothing but a string
 * for one).  H5DSis_scale is not called: 1.10's leaves the attribute and its type open when CLASS holds
 * another string (every PyTables dataset has one: "TABLE", "EARRAY").  -1 when out of memory. */
static int is_scale(hid_t d)
{
    char why[H5SHUF_ATTR_WHY_MAX], *class = NULL;
    int got = h5shuf__attr_get_texts(d, "CLASS", 1, 1, &class, why, sizeof why);
    int yes = got == H5SHUF_ATTR_READ && strcmp(class, "DIMENSION_SCALE") == 0;
    free(class);
    return got == H5SHUF_ATTR_NOMEM ? -1 : yes;
}

/* The NAME netCDF-C gives the scale of a dimension that has no coordinate variable (netcdf.h's
 * DIM_WITHOUT_VARIABLE without its final period), followed there by the length in "%10d". */
#define NC_DIM_WITHOUT_VARIABLE "This is a netCDF dimension but not a netCDF variable"

/* Is scale d a netCDF dimension without a variable: its NAME one fixed-length string that begins with
 * NC_DIM_WITHOUT_VARIABLE?  (netCDF-C writes it so, with H5DSset_scale; anything else is a variable.) */
static int netcdf_dim_only(hid_t d)
{
    char buf[128] = "";
    hid_t a = H5Aexists(d, "NAME") > 0 ? H5Aopen(d, "NAME", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t s = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    int yes = s >= 0 && t >= 0 && H5Sget_simple_extent_npoints(s) == 1 && H5Tget_class(t) == H5T_STRING &&
              H5Tis_variable_str(t) == 0 && H5Tget_size(t) < sizeof buf && H5Aread(a, t, buf) >= 0 &&
              strncmp(buf, NC_DIM_WITHOUT_VARIABLE, strlen(NC_DIM_WITHOUT_VARIABLE)) == 0;
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    if (a >= 0)
        H5Aclose(a);
    H5Eclear2(H5E_DEFAULT);
    return yes;
}

/* Elements of space times size bytes, saturated at UINT64_MAX. */
static uint64_t logical_bytes(hid_t space, size_t size)
{
    hssize_t np = H5Sget_simple_extent_npoints(space);
    if (np <= 0 || size == 0)
        return 0;
    return (uint64_t)np > UINT64_MAX / size ? UINT64_MAX : (uint64_t)np * size;
}

/* The scale attached at dimension dim of dataset d (its address), or HADDR_UNDEF. */
static haddr_t scale_of(hid_t d, unsigned dim)
{
    haddr_t addr = HADDR_UNDEF;
    char why[H5SHUF_ATTR_WHY_MAX]; /* (a DIMENSION_LIST H5DS cannot read attaches no scale) */
    if (h5shuf__attr_dimlist(d, why, sizeof why) == H5SHUF_ATTR_READ && H5DSget_num_scales(d, dim) > 0)
        H5DSiterate_scales(d, dim, NULL, first_scale_cb, &addr);
    H5Eclear2(H5E_DEFAULT);
    return addr;
}

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
    hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    if (rank >= 1 && H5Sget_simple_extent_type(s) == H5S_SIMPLE) {
        H5Sget_simple_extent_dims(s, dims, maxdims);
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
        struct found *f = &dv->v[dv->n++];
        f->path = p;
        f->rows = dims[0];
        f->addr = info->addr;
        f->is_scale = is_scale(d);
        f->dim_only = f->is_scale && netcdf_dim_only(d);
        hid_t t = H5Dget_type(d);
        f->bytes = t >= 0 ? logical_bytes(s, H5Tget_size(t)) : 0;
        if (t >= 0)
            H5Tclose(t);
        f->scale = scale_of(d, 0);
        if (f->is_scale < 0) {
            dv->oom = 1;
            goto out;
        }
        f->unlimited = maxdims[0] == H5S_UNLIMITED;
        H5Eclear2(H5E_DEFAULT);
    }
out:
    H5Sclose(s);
    H5Dclose(d);
    return dv->oom ? -1 : 0;
}

/*-*************************************
*  Whole-file mode
***************************************/

static const struct found *by_addr(const struct discovery *dv, haddr_t addr)
{
    for (size_t i = 0; i < dv->n; i++)
        if (dv->v[i].addr == addr)
            return &dv->v[i];
    return NULL;
}

/* How many datasets have the scale at addr at their dim 0. */
static size_t users(const struct discovery *dv, haddr_t addr)
{
    size_t c = 0;
    for (size_t i = 0; i < dv->n; i++)
        c += dv->v[i].scale == addr;
    return c;
}

/* The record scale: the one at dim 0 of the most datasets (extendible first on a tie); *best the
 * scale's entry, or NULL with the tie described in list. */
static const struct found *record_scale(const struct discovery *dv, char *list, size_t cap)
{
    const struct found *best = NULL;
    size_t best_n = 0, tied = 0;
    for (size_t i = 0; i < dv->n; i++) {
        const struct found *s = dv->v[i].scale != HADDR_UNDEF ? by_addr(dv, dv->v[i].scale) : NULL;
        if (!s || s == best)
            continue;
        size_t c = users(dv, s->addr);
        if (c > best_n || (c == best_n && s->unlimited && !best->unlimited)) {
            best = s, best_n = c, tied = 0;
        } else if (c == best_n && s->unlimited == best->unlimited && s != best) {
            tied = 1;
        }
    }
    if (!tied)
        return best;
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < dv->n && len < cap - 1; i++) {
        const struct found *s = &dv->v[i];
        size_t c = users(dv, s->addr);
        if (c == best_n && s->unlimited == best->unlimited)
            len += (size_t)snprintf(list + len, cap - len, "%s%s (dim 0 of %zu dataset%s)", len ? ", " : "", s->path, c,
                                    c == 1 ? "" : "s");
    }
    return NULL;
}

/* Without scales: the length of dim 0 whose datasets hold the rows, in *n (rowsets.c decides), the netCDF
 * dimensions without a variable left out. */
static int rows_by_length(const struct discovery *dv, const char *name, uint64_t *n, struct h5shuf_err *err)
{
    struct h5shuf_rowcand *c = malloc(dv->n * sizeof *c);
    if (!c)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", name);
    size_t k = 0;
    for (size_t i = 0; i < dv->n; i++)
        if (!dv->v[i].dim_only)
            c[k++] = (struct h5shuf_rowcand){dv->v[i].path, dv->v[i].rows, dv->v[i].bytes};
    int st = h5shuf__rows_by_length(c, k, name, n, err);
    free(c);
    return st;
}

int h5shuf__discover(hid_t file, const char *name, struct h5shuf_spec *spec, struct h5shuf_err *err)
{
    struct discovery dv = {0};
    int st = H5SHUF_OK;
    char cause[256], list[600];
    if (H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, discover_cb, &dv) < 0 && !dv.oom) {
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot list objects: %s", name, h5shuf__hdf5_cause(cause, sizeof cause));
        goto out;
    }
    if (dv.oom) {
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    if (dv.n == 0) {
        st = h5shuf__fail(err, H5SHUF_ENOENT, "%s: no dataset with rows (rank >= 1) in the file", name);
        goto out;
    }
    int scaled = 0;
    for (size_t i = 0; i < dv.n; i++)
        scaled |= dv.v[i].scale != HADDR_UNDEF && by_addr(&dv, dv.v[i].scale);
    const struct found *rec = scaled ? record_scale(&dv, list, sizeof list) : NULL;
    uint64_t n = rec ? rec->rows : 0;
    if (scaled && !rec) {
        st = h5shuf__fail(err, H5SHUF_EAMBIGUOUS,
                          "%s: cannot tell which dimension holds the rows, dimension scales: %s; name the datasets to "
                          "shuffle (FILE:/a,/b)",
                          name, list);
        goto out;
    }
    for (size_t i = 0; rec && rec->dim_only && i < dv.n; i++)
        if (dv.v[i].scale == rec->addr) { /* (a dimension without a variable: its variables have the rows) */
            n = dv.v[i].rows;
            break;
        }
    if (!scaled && (st = rows_by_length(&dv, name, &n, err)) != H5SHUF_OK)
        goto out;
    spec->paths = calloc(dv.n, sizeof *spec->paths);
    if (!spec->paths) {
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    for (size_t i = 0; i < dv.n; i++) {
        const struct found *f = &dv.v[i];
        int records = !scaled ? f->rows == n && !f->dim_only
                              : f->scale == rec->addr || (f->addr == rec->addr && !f->dim_only) ||
                                    (f->scale == HADDR_UNDEF && !f->is_scale && f->rows == n);
        if (records) {
            spec->paths[spec->npaths++] = f->path;
            dv.v[i].path = NULL;
        }
    }
out:
    for (size_t i = 0; i < dv.n; i++)
        free(dv.v[i].path);
    free(dv.v);
    return st;
}

/* ---- dataset mode: the scales that go with the named datasets --------------------------------------- */

/* A list of distinct names. */
struct names {
    char **v;
    size_t n, cap;
};

/*-*************************************
*  Dataset mode
***************************************/

static int has_name(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

/* Append name to *v (n of cap) unless it is there; -1 when out of memory. */
static int add_name(char ***v, size_t *n, size_t *cap, const char *name)
{
    if (has_name(*v, *n, name))
        return 0;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        char **w = realloc(*v, c * sizeof *w);
        if (!w)
            return -1;
        *v = w;
        *cap = c;
    }
    if (!((*v)[*n] = strdup(name)))
        return -1;
    ++*n;
    return 0;
}

/* The scales of one dimension: those that are variables, and netCDF dimensions without a variable. */
struct scales {
    struct names var, dim_only;
};

/* Every scale attached to the dimension: its path, into the struct scales at data. */
static herr_t scale_name_cb(hid_t did, unsigned dim, hid_t dsid, void *data)
{
    (void)did, (void)dim;
    struct scales *sc = data;
    struct names *nm = netcdf_dim_only(dsid) ? &sc->dim_only : &sc->var;
    char path[1024];
    ssize_t len = H5Iget_name(dsid, path, sizeof path);
    if (len <= 0 || (size_t)len >= sizeof path || add_name(&nm->v, &nm->n, &nm->cap, path) < 0)
        return -1;
    return 0;
}

static void names_free(struct names *nm)
{
    for (size_t i = 0; i < nm->n; i++)
        free(nm->v[i]);
    free(nm->v);
}

int h5shuf__discover_scales(hid_t file, const char *name, struct h5shuf_spec *spec, char ***extra, size_t *nextra,
                            struct h5shuf_err *err)
{
    char cause[256];
    size_t named = spec->npaths, cap = named, xcap = 0;
    int st = H5SHUF_OK;
    for (size_t k = 0; k < named && st == H5SHUF_OK; k++) {
        hid_t d = H5Dopen2(file, spec->paths[k], H5P_DEFAULT);
        if (d < 0) {
            H5Eclear2(H5E_DEFAULT); /* opening it says why, with the dataset's checks */
            continue;
        }
        int rank = 0;
        hid_t s = H5Dget_space(d);
        if (s >= 0)
            rank = H5Sget_simple_extent_ndims(s), H5Sclose(s);
        char why[H5SHUF_ATTR_WHY_MAX]; /* (a DIMENSION_LIST H5DS cannot read attaches no scale) */
        if (rank > 0 && h5shuf__attr_dimlist(d, why, sizeof why) != H5SHUF_ATTR_READ)
            rank = 0;
        for (int dim = 0; dim < rank && st == H5SHUF_OK; dim++) {
            if (H5DSget_num_scales(d, (unsigned)dim) <= 0) {
                H5Eclear2(H5E_DEFAULT);
                continue;
            }
            struct scales sc = {{0}, {0}};
            if (H5DSiterate_scales(d, (unsigned)dim, NULL, scale_name_cb, &sc) < 0)
                st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot read its dimension scales: %s", name,
                                  spec->paths[k], h5shuf__hdf5_cause(cause, sizeof cause));
            /* dim 0's scales have the rows: shuffled with it; the others' are copied, and so is a netCDF
             * dimension without a variable, which has no rows (its length is not theirs) */
            for (size_t i = 0; i < sc.var.n && st == H5SHUF_OK; i++)
                if (dim == 0 ? add_name(&spec->paths, &spec->npaths, &cap, sc.var.v[i]) < 0
                             : !has_name(spec->paths, spec->npaths, sc.var.v[i]) &&
                                   add_name(extra, nextra, &xcap, sc.var.v[i]) < 0)
                    st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            for (size_t i = 0; i < sc.dim_only.n && st == H5SHUF_OK; i++)
                if (!has_name(spec->paths, spec->npaths, sc.dim_only.v[i]) &&
                    add_name(extra, nextra, &xcap, sc.dim_only.v[i]) < 0)
                    st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            names_free(&sc.var);
            names_free(&sc.dim_only);
        }
        H5Dclose(d);
    }
    /* a scale named for a later dimension may have joined the rows since: it is shuffled, not copied */
    for (size_t i = 0; i < *nextra; i++)
        if (has_name(spec->paths, spec->npaths, (*extra)[i])) {
            free((*extra)[i]);
            (*extra)[i--] = (*extra)[--*nextra];
        }
    return st;
}
