/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refcanon.c - rows of references made comparable across files, for verify.c.
 *
 * A reference holds its target's address in its own file, and h5shuf makes every reference anew for the
 * output (refmap.c), so rows of references are compared by what they point at, not by their bytes.  The
 * output is walked by name: each object it links to is named by the first path found to it, and its
 * value is a 64-bit hash (XXH3) of that path.  In an input, a shuffled dataset takes its output dataset's
 * value, and every other object the value of the output's object at its path: the rule by which h5shuf
 * maps an input's objects to the output's (objcopy.c), which also reaches objects by hard links only.
 * A reference is then hashed as its target's value.  A null reference stays as it is; in an input, one
 * whose target the output does not hold, or a region of a shuffled dataset, becomes null (h5shuf refuses
 * it, or with --drop-references writes it null); in the output, one to an object no link reaches gets a
 * value no path has.  A region reference keeps its selection: it is its dataset's value and 4 bytes of a
 * hash of the selection's shape, kind and blocks or points.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "h5err.h"
#include "refcanon.h"

/* Values no path takes: the output's reference to an object no link reaches. */
#define VALUE_UNLINKED UINT64_C(2)

/* The value of the object at path (in the output). */
static uint64_t value_of(const char *path)
{
    uint64_t v = XXH3_64bits(path, strlen(path));
    return v <= VALUE_UNLINKED || v == UINT64_MAX ? VALUE_UNLINKED + 1 : v; /* (never null, nor the marks) */
}

/* Note the output's object at addr, reached first by path. */
static int add_object(struct h5shuf_refcanon *rc, haddr_t addr, const char *path, struct h5shuf_err *err)
{
    if (h5shuf__addrmap_get(&rc->out, addr))
        return H5SHUF_OK; /* (reached before by another link) */
    if (rc->n == rc->cap) {
        size_t cap = rc->cap ? 2 * rc->cap : 32;
        char **p = realloc(rc->path, cap * sizeof *p);
        if (p)
            rc->path = p;
        haddr_t *a = p ? realloc(rc->addr, cap * sizeof *a) : NULL;
        if (!a)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        rc->addr = a;
        rc->cap = cap;
    }
    if (!(rc->path[rc->n] = strdup(path)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    rc->addr[rc->n++] = addr;
    return h5shuf__addrmap_put(&rc->out, addr, value_of(path), err);
}

struct walk {
    struct h5shuf_refcanon *rc;
    struct h5shuf_err *err;
    int st;
};

static herr_t walk_cb(hid_t g, const char *name, const H5L_info_t *li, void *data)
{
    struct walk *w = data;
    H5O_info_t oi;
    if (li->type != H5L_TYPE_HARD)
        return 0;
    if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) { /* (what cannot be read holds no target) */
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    char *path = malloc(strlen(name) + 2);
    if (!path) {
        w->st = h5shuf__fail(w->err, H5SHUF_ENOMEM, "out of memory");
        return -1;
    }
    sprintf(path, "/%s", name);
    w->st = add_object(w->rc, oi.addr, path, w->err);
    free(path);
    return w->st == H5SHUF_OK ? 0 : -1;
}

int h5shuf__refcanon_open(struct h5shuf_refcanon *rc, hid_t out, const struct h5shuf_datasets *dsets,
                          const char *name, struct h5shuf_err *err)
{
    char cause[256];
    memset(rc, 0, sizeof *rc);
    rc->file = out;
    rc->output = 1;
    rc->dsets = dsets;
    rc->shuffled = calloc(dsets->n ? dsets->n : 1, sizeof *rc->shuffled);
    if (!rc->shuffled)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < dsets->n; d++)
        rc->shuffled[d] = value_of(dsets->ds[d].out_path);
    H5O_info_t oi;
    struct walk w = {rc, err, H5SHUF_OK};
    if (H5Oget_info_by_name(out, "/", &oi, H5P_DEFAULT) < 0 ||
        (w.st = add_object(rc, oi.addr, "/", err)) != H5SHUF_OK)
        return w.st != H5SHUF_OK ? w.st
                                 : h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read the root group: %s", name,
                                                h5shuf__hdf5_cause(cause, sizeof cause));
    if (H5Lvisit(out, H5_INDEX_NAME, H5_ITER_INC, walk_cb, &w) < 0 && w.st == H5SHUF_OK)
        w.st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot list its objects: %s", name,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return w.st;
}

/* The address of the object at path in file when every link on the way is a hard link: 1, else 0. */
static int hard_path_addr(hid_t file, const char *path, haddr_t *addr)
{
    char *buf = strdup(path);
    int ok = buf != NULL;
    for (char *p = buf ? strchr(buf + 1, '/') : NULL;; p = strchr(p + 1, '/')) {
        if (!ok || strcmp(path, "/") == 0)
            break;
        if (p)
            *p = '\0';
        H5L_info_t li;
        ok = H5Lexists(file, buf, H5P_DEFAULT) > 0 && H5Lget_info(file, buf, &li, H5P_DEFAULT) >= 0 &&
             li.type == H5L_TYPE_HARD;
        if (!p)
            break;
        *p = '/';
    }
    H5O_info_t oi;
    ok = ok && H5Oget_info_by_name(file, path, &oi, H5P_DEFAULT) >= 0;
    H5Eclear2(H5E_DEFAULT);
    free(buf);
    if (ok)
        *addr = oi.addr;
    return ok;
}

/* Is path a shuffled dataset's output path? */
static int is_shuffled_path(const struct h5shuf_refcanon *rc, const char *path)
{
    for (size_t d = 0; d < rc->dsets->n; d++)
        if (strcmp(rc->dsets->ds[d].out_path, path) == 0)
            return 1;
    return 0;
}

int h5shuf__refcanon_input(struct h5shuf_refcanon *rc, hid_t file, const hid_t *dsets, struct h5shuf_err *err)
{
    int st = H5SHUF_OK;
    h5shuf__addrmap_clear(&rc->in);
    rc->file = file;
    rc->output = 0;
    for (size_t d = 0; d < rc->dsets->n && st == H5SHUF_OK; d++) { /* by address: whatever path names it */
        H5O_info_t oi;
        if (H5Oget_info(dsets[d], &oi) >= 0)
            st = h5shuf__addrmap_put(&rc->in, oi.addr, rc->shuffled[d], err);
        H5Eclear2(H5E_DEFAULT);
    }
    for (size_t i = 0; i < rc->n && st == H5SHUF_OK; i++) {
        haddr_t a;
        const uint64_t *v = h5shuf__addrmap_get(&rc->out, rc->addr[i]);
        /* (an output dataset's path names another object in the input, if any: not its rows') */
        if (v && !is_shuffled_path(rc, rc->path[i]) && hard_path_addr(file, rc->path[i], &a) &&
            !h5shuf__addrmap_get(&rc->in, a))
            st = h5shuf__addrmap_put(&rc->in, a, *v, err);
    }
    return st;
}

void h5shuf__refcanon_output(struct h5shuf_refcanon *rc, hid_t out)
{
    rc->file = out;
    rc->output = 1;
}

/* The value of the object at addr on the side being hashed: 0 (null) for an input's object the output
 * does not hold, VALUE_UNLINKED for an output's object no link reaches. */
static uint64_t target_value(const struct h5shuf_refcanon *rc, haddr_t addr)
{
    const uint64_t *v = h5shuf__addrmap_get(rc->output ? &rc->out : &rc->in, addr);
    return v ? *v : rc->output ? VALUE_UNLINKED : 0;
}

/* A hash of a dataspace's selection: its extent, its kind, and its blocks or points. */
static uint32_t selection_hash(hid_t s)
{
    hsize_t dims[H5S_MAX_RANK];
    int rank = H5Sget_simple_extent_ndims(s);
    if (rank < 0 || rank > H5S_MAX_RANK || H5Sget_simple_extent_dims(s, dims, NULL) < 0)
        return UINT32_MAX;
    int64_t head[2] = {rank, (int64_t)H5Sget_select_type(s)};
    uint64_t h = XXH3_64bits(head, sizeof head);
    h = XXH3_64bits_withSeed(dims, (size_t)rank * sizeof *dims, h);
    hssize_t k = head[1] == H5S_SEL_HYPERSLABS ? H5Sget_select_hyper_nblocks(s)
                 : head[1] == H5S_SEL_POINTS   ? H5Sget_select_elem_npoints(s)
                                               : 0;
    size_t per = head[1] == H5S_SEL_HYPERSLABS ? 2 * (size_t)rank : (size_t)rank; /* (start, end) or a point */
    hsize_t *v = k > 0 ? malloc((size_t)k * per * sizeof *v) : NULL;
    if (k > 0 && (!v || (head[1] == H5S_SEL_HYPERSLABS ? H5Sget_select_hyper_blocklist(s, 0, (hsize_t)k, v)
                                                       : H5Sget_select_elem_pointlist(s, 0, (hsize_t)k, v)) < 0))
        h = UINT64_MAX;
    else if (k > 0)
        h = XXH3_64bits_withSeed(v, (size_t)k * per * sizeof *v, h);
    free(v);
    return (uint32_t)(h ^ (h >> 32));
}

static int canon_one(void *user, void *ref, int region, struct h5shuf_err *err)
{
    (void)err;
    struct h5shuf_refcanon *rc = user;
    if (!region) {
        hobj_ref_t a;
        memcpy(&a, ref, sizeof a);
        if (a == 0 || (haddr_t)a == HADDR_UNDEF)
            return H5SHUF_OK; /* null stays null (h5shuf keeps it as it is) */
        uint64_t v = target_value(rc, (haddr_t)a);
        memcpy(ref, &v, sizeof v);
        return H5SHUF_OK;
    }
    unsigned char *p = ref, zero[sizeof(hdset_reg_ref_t)] = {0};
    hdset_reg_ref_t r; /* (a copy: ref may be unaligned, in a packed compound row) */
    memcpy(&r, ref, sizeof r); /* (&r: an array in HDF5 1.10, a struct from 1.12) */
    if (memcmp(&r, zero, sizeof zero) == 0)
        return H5SHUF_OK;
    hid_t d = H5Rdereference2(rc->file, H5P_DEFAULT, H5R_DATASET_REGION, &r);
    H5O_info_t oi;
    uint64_t v = d >= 0 && H5Oget_info(d, &oi) >= 0 ? target_value(rc, oi.addr) : rc->output ? VALUE_UNLINKED : 0;
    for (size_t k = 0; !rc->output && k < rc->dsets->n; k++)
        if (v == rc->shuffled[k])
            v = 0; /* a region of rows that moved: refused, or written null */
    uint32_t sel = 0;
    if (v) {
        hid_t s = H5Rget_region(rc->file, H5R_DATASET_REGION, &r);
        sel = s >= 0 ? selection_hash(s) : UINT32_MAX;
        if (s >= 0)
            H5Sclose(s);
    }
    if (d >= 0)
        H5Oclose(d);
    H5Eclear2(H5E_DEFAULT);
    memset(p, 0, sizeof zero);
    if (v) {
        memcpy(p, &v, sizeof v);
        memcpy(p + sizeof v, &sel, sizeof sel);
    }
    return H5SHUF_OK;
}

int h5shuf__refcanon_rows(struct h5shuf_refcanon *rc, hid_t t, void *buf, size_t n, const char *where,
                          struct h5shuf_err *err)
{
    return h5shuf__refs_each(t, buf, n, where, canon_one, rc, err);
}

void h5shuf__refcanon_free(struct h5shuf_refcanon *rc)
{
    for (size_t i = 0; i < rc->n; i++)
        free(rc->path[i]);
    free(rc->path);
    free(rc->addr);
    free(rc->shuffled);
    h5shuf__addrmap_free(&rc->out);
    h5shuf__addrmap_free(&rc->in);
    memset(rc, 0, sizeof *rc);
}
