/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * objcopy.c - the objects an output file holds besides the shuffled rows, and their copy.
 *
 * The plan is made once per job from the first input: in whole-file mode a walk of its groups (each
 * group's links in creation order where the group tracks it, as netCDF-4's do, else by name), in
 * dataset mode the shuffled datasets and the dimension scales attached to them.  Objects are matched by
 * their address, not by path: a file may reach one object through several hard links (h5py:
 * f['alias'] = f['x']), and a reference names an object by its address.  The first path that reaches an
 * object makes it; every further hard link is recreated as a link once the objects exist.
 *
 * Datasets and committed datatypes are copied by H5Ocopy without their attributes (their chunks move
 * raw, unfiltered); h5shuf copies every attribute itself (attrs.c), because a reference must be made
 * anew for the output (refmap.c) and because HDF5 1.10.8's H5Ocopy crashes on attributes that hold
 * variable-length sequences of references (netCDF-4's DIMENSION_LIST; fixed upstream later).  Objects
 * whose attributes hold references have them written last, when every object they may point at exists;
 * a dataset whose own type holds references is made empty and filled last the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "boundread.h" /* h5shuf__dread, h5shuf__bound_begin */
#include "dscheck.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "objcopy.h"
#include "rows.h" /* h5shuf__read_rows */
#include "vlenbound.h" /* h5shuf__vlen_bound_whole */

/* An attribute over this many bytes does not fit a compact object header (64 KiB, less the header's
 * own messages): the output then needs dense attribute storage, the 1.8 object format. */
#define COMPACT_ATTR_BYTES_MAX 60000

/*-*************************************
*  Object plans and parent groups
***************************************/

static struct h5shuf_obj *entry_add(struct h5shuf_objcopy *oc, enum h5shuf_obj_kind kind, const char *path,
                                    struct h5shuf_err *err)
{
    if (oc->n == oc->cap) {
        size_t cap = oc->cap ? 2 * oc->cap : 32;
        struct h5shuf_obj *v = realloc(oc->v, cap * sizeof *v);
        if (!v) {
            h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            return NULL;
        }
        oc->v = v;
        oc->cap = cap;
    }
    struct h5shuf_obj *e = &oc->v[oc->n];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    if (!(e->path = strdup(path))) {
        h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        return NULL;
    }
    oc->n++;
    return e;
}

static char *xstrdup(const char *s, int *oom)
{
    char *c = s ? strdup(s) : NULL;
    *oom |= s && !c;
    return c;
}

/* The creation-order flags of a group's links and attributes. */
static void group_order(hid_t g, unsigned *links, unsigned *attrs)
{
    hid_t gcpl = H5Gget_create_plist(g);
    *links = *attrs = 0;
    if (gcpl >= 0) {
        H5Pget_link_creation_order(gcpl, links);
        H5Pget_attr_creation_order(gcpl, attrs);
        H5Pclose(gcpl);
    }
    H5Eclear2(H5E_DEFAULT);
}

herr_t h5shuf__make_parents(hid_t out, const char *path)
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

/* Dataset mode: the groups on the way to path (an output dataset's, or a copied scale's) are in every
 * output (h5shuf__make_parents), so a reference to the input's group at one of those paths is kept, made
 * to the output's.  A group counts only when every link on its way is a hard link: a path through a soft
 * link names another object in the input than the group the output has there. */
static int map_parents(struct h5shuf_objcopy *oc, hid_t file, const char *path, struct h5shuf_err *err)
{
    char *buf = strdup(path);
    if (!buf)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    int st = H5SHUF_OK;
    for (char *p = strchr(buf + 1, '/'); p && st == H5SHUF_OK; p = strchr(p + 1, '/')) {
        *p = '\0';
        H5L_info_t li;
        H5O_info_t oi;
        int group = H5Lexists(file, buf, H5P_DEFAULT) > 0 && H5Lget_info(file, buf, &li, H5P_DEFAULT) >= 0 &&
                    li.type == H5L_TYPE_HARD && H5Oget_info_by_name(file, buf, &oi, H5P_DEFAULT) >= 0 &&
                    oi.type == H5O_TYPE_GROUP;
        H5Eclear2(H5E_DEFAULT);
        if (group)
            st = h5shuf__refmap_add(&oc->map, oi.addr, buf, 0, err);
        *p = '/';
        if (!group)
            break; /* (nothing further down is on a path of hard links either) */
    }
    free(buf);
    return st;
}

/*-*************************************
*  Walking the input's objects
***************************************/

/* A dataset to be copied as it is (name at loc, path in the input file): refused when its rows are in
 * another file, unless oc->allow_external (then the first is named in oc->external). */
static int check_copied_storage(struct h5shuf_objcopy *oc, hid_t loc, const char *name, const char *file,
                                const char *path, struct h5shuf_err *err)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t dcpl = d >= 0 ? H5Dget_create_plist(d) : H5I_INVALID_HID;
    char *found = NULL;
    int st = dcpl >= 0 ? h5shuf__check_storage(dcpl, file, path, oc->allow_external, &found, err) : H5SHUF_OK;
    H5Eclear2(H5E_DEFAULT); /* (a dataset HDF5 cannot open fails its copy, with HDF5's cause) */
    if (found && !oc->external)
        oc->external = found;
    else
        free(found);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (d >= 0)
        H5Dclose(d);
    return st;
}

struct walk {
    struct h5shuf_objcopy *oc;
    const struct h5shuf_input *first;
    const struct h5shuf_datasets *dsets;
    const char *prefix;
    struct h5shuf_err *err;
    int st;
};

static int walk_group(struct walk *w, hid_t g, const char *prefix);

/* One link of the group being walked: an entry, and for a new group its own walk. */
static herr_t walk_cb(hid_t g, const char *name, const H5L_info_t *li, void *data)
{
    struct walk *w = data;
    struct h5shuf_objcopy *oc = w->oc;
    const char *file = w->first->spec.file;
    char cause[256];
    size_t plen = strlen(w->prefix);
    char *path = malloc(plen + strlen(name) + 2);
    if (!path) {
        w->st = h5shuf__fail(w->err, H5SHUF_ENOMEM, "out of memory");
        return -1;
    }
    sprintf(path, "%s%s%s", w->prefix, plen > 1 ? "/" : "", name);
    struct h5shuf_obj *e = NULL;
    if (li->type == H5L_TYPE_SOFT || li->type == H5L_TYPE_EXTERNAL) {
        /* Links are recreated as links, pointing where they pointed. */
        char *val = malloc(li->u.val_size + 1);
        const char *ef = NULL, *eo = NULL;
        unsigned flags;
        int oom = 0;
        if (!val || H5Lget_val(g, name, val, li->u.val_size + 1, H5P_DEFAULT) < 0 ||
            (li->type == H5L_TYPE_EXTERNAL && H5Lunpack_elink_val(val, li->u.val_size, &flags, &ef, &eo) < 0))
            w->st = val ? h5shuf__fail(w->err, H5SHUF_EHDF5, "%s:%s: cannot read the link: %s", file, path,
                                       h5shuf__hdf5_cause(cause, sizeof cause))
                        : h5shuf__fail(w->err, H5SHUF_ENOMEM, "out of memory");
        else if ((e = entry_add(oc, li->type == H5L_TYPE_SOFT ? H5SHUF_OBJ_SOFT : H5SHUF_OBJ_EXTERNAL, path, w->err))) {
            e->value = xstrdup(li->type == H5L_TYPE_SOFT ? val : ef, &oom);
            e->value2 = xstrdup(eo, &oom);
            if (oom)
                w->st = h5shuf__fail(w->err, H5SHUF_ENOMEM, "out of memory");
        } else {
            w->st = w->err->status;
        }
        free(val);
    } else if (li->type == H5L_TYPE_HARD) {
        H5O_info_t oi;
        const struct h5shuf_objref *seen;
        size_t d = 0;
        if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) {
            w->st = h5shuf__fail(w->err, H5SHUF_EHDF5, "%s:%s: %s", file, path, h5shuf__hdf5_cause(cause, sizeof cause));
        } else if ((seen = h5shuf__refmap_find(&oc->map, oi.addr)) != NULL) {
            /* a shuffled dataset under its own name is made by the shuffle; any other link is a link */
            while (seen->shuffled && d < w->dsets->n && strcmp(w->dsets->ds[d].out_path, seen->out_path) != 0)
                d++;
            int own = seen->shuffled && d < w->dsets->n && strcmp(path, w->dsets->ds[d].in_path) == 0;
            if (!(e = entry_add(oc, own ? H5SHUF_OBJ_SHUFFLED : H5SHUF_OBJ_ALIAS, path, w->err)) ||
                (!own && !(e->value = strdup(seen->out_path))))
                w->st = h5shuf__fail(w->err, H5SHUF_ENOMEM, "out of memory");
            else
                e->d = d;
        } else if (oi.type == H5O_TYPE_GROUP) {
            hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
            if (sub < 0)
                w->st = h5shuf__fail(w->err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", file, path,
                                     h5shuf__hdf5_cause(cause, sizeof cause));
            else if ((w->st = h5shuf__refmap_add(&oc->map, oi.addr, path, 0, w->err)) == H5SHUF_OK &&
                     (e = entry_add(oc, H5SHUF_OBJ_GROUP, path, w->err))) {
                group_order(sub, &e->link_order, &e->attr_order);
                e->cset = li->cset;
                w->st = walk_group(w, sub, path);
                e = NULL; /* (the walk may have moved the entries) */
            } else {
                w->st = w->err->status;
            }
            if (sub >= 0)
                H5Gclose(sub);
        } else {
            enum h5shuf_obj_kind kind = oi.type == H5O_TYPE_DATASET ? H5SHUF_OBJ_DATASET : H5SHUF_OBJ_TYPE;
            if (kind == H5SHUF_OBJ_DATASET)
                w->st = check_copied_storage(oc, g, name, file, path, w->err);
            if (w->st == H5SHUF_OK && (w->st = h5shuf__refmap_add(&oc->map, oi.addr, path, 0, w->err)) == H5SHUF_OK &&
                !(e = entry_add(oc, kind, path, w->err)))
                w->st = w->err->status;
        }
    }
    if (e)
        e->cset = li->cset;
    free(path);
    return w->st == H5SHUF_OK ? 0 : -1;
}

static int walk_group(struct walk *w, hid_t g, const char *prefix)
{
    unsigned links, attrs;
    group_order(g, &links, &attrs);
    const char *saved = w->prefix;
    w->prefix = prefix;
    hsize_t idx = 0;
    H5_index_t by = links & H5P_CRT_ORDER_TRACKED ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    herr_t r = H5Literate(g, by, H5_ITER_INC, &idx, walk_cb, w);
    w->prefix = saved;
    if (r < 0 && w->st == H5SHUF_OK) {
        char cause[256];
        w->st = h5shuf__fail(w->err, H5SHUF_EHDF5, "%s:%s: cannot list: %s", w->first->spec.file, prefix,
                             h5shuf__hdf5_cause(cause, sizeof cause));
    }
    return w->st;
}

/*-*************************************
*  Data of copied datasets with references
***************************************/

/* The data of a dataset whose type holds references, in its native form: *buf of *n elements (free
 * with free_data).  < 0 on an HDF5 error. */
static herr_t read_data(hid_t dset, hid_t *mtype, hid_t *space, void **buf, size_t *n)
{
    hid_t t = H5Dget_type(dset);
    *space = H5Dget_space(dset);
    *mtype = t >= 0 ? H5Tget_native_type(t, H5T_DIR_DEFAULT) : H5I_INVALID_HID;
    if (t >= 0)
        H5Tclose(t);
    hssize_t np = *space >= 0 ? H5Sget_simple_extent_npoints(*space) : -1;
    *n = np > 0 ? (size_t)np : 0;
    *buf = *mtype >= 0 && np >= 0 ? calloc(*n ? *n : 1, H5Tget_size(*mtype)) : NULL;
    if (!*buf)
        return -1;
    return *n ? h5shuf__vlen_bound_whole(dset) < 0 ? -1 : h5shuf__dread(dset, *mtype, H5S_ALL, H5S_ALL, *buf) : 0;
}

static void free_data(hid_t mtype, hid_t space, void *buf, int filled)
{
    if (buf && filled && mtype >= 0 && space >= 0)
        H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
    free(buf);
    if (mtype >= 0)
        H5Tclose(mtype);
    if (space >= 0)
        H5Sclose(space);
}

/* Rewrite (out invalid: check) the references of dataset path's data, writing it to out's dataset. */
static int copy_ref_data(const char *path, const struct h5shuf_input *first, hid_t out, const char *ofile,
                         struct h5shuf_rewrite *rw, struct h5shuf_err *err)
{
    char cause[256], where[600];
    snprintf(where, sizeof where, "%s:%s", out >= 0 ? ofile : first->spec.file, path);
    hid_t src = H5Dopen2(first->file, path, H5P_DEFAULT), mtype = H5I_INVALID_HID, space = H5I_INVALID_HID;
    hid_t dst = H5I_INVALID_HID;
    void *buf = NULL;
    size_t n = 0;
    int st = H5SHUF_OK;
    herr_t r = src < 0 ? -1 : read_data(src, &mtype, &space, &buf, &n);
    if (r >= 0) {
        struct h5shuf_rewrite w = *rw;
        w.where = where;
        st = h5shuf__refs_rewrite(&w, mtype, buf, n, err);
        if (st == H5SHUF_OK && out >= 0) {
            dst = H5Dopen2(out, path, H5P_DEFAULT);
            r = dst < 0 || H5SHUF_FAULT() ? -1 : n ? H5Dwrite(dst, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : 0;
        }
    }
    if (r < 0 && st == H5SHUF_OK)
        st = !buf && mtype >= 0 ? h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %s", where)
                                : h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot copy the references: %s", where,
                                               h5shuf__hdf5_cause(cause, sizeof cause));
    free_data(mtype, space, buf, buf && src >= 0);
    if (dst >= 0)
        H5Dclose(dst);
    if (src >= 0)
        H5Dclose(src);
    return st;
}

/* Bytes of rows a check of a dataset of references reads at a time. */
#define REF_ROWS_CHECK_BYTES (UINT64_C(4) << 20)

/* The rows of shuffled dataset ds (open as dset in the first input), whose type holds references: each
 * reference checked as the writer will rewrite it (writer.c), so that a reference the output cannot hold
 * is refused (or noted for --drop-references) before any output is made. */
static int check_ref_rows(const struct h5shuf_input *first, const struct h5shuf_dsinfo *ds, hid_t dset,
                          const struct h5shuf_rewrite *rw0, struct h5shuf_err *err)
{
    char cause[256], where[600];
    snprintf(where, sizeof where, "%s:%s", first->spec.file, ds->in_path);
    struct h5shuf_rewrite rw = *rw0; /* one for the dataset: --drop-references notes it once, with a count */
    rw.where = where;
    const uint64_t rows = first->rows;
    const uint64_t block = ds->row_bytes < REF_ROWS_CHECK_BYTES ? REF_ROWS_CHECK_BYTES / ds->row_bytes : 1;
    const size_t elems = (size_t)(ds->row_bytes / H5Tget_size(ds->ftype));
    unsigned char *buf = H5SHUF_FAULT() ? NULL : malloc((size_t)((rows < block ? (rows ? rows : 1) : block) * ds->row_bytes));
    int st = buf ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %s's rows", where);
    for (uint64_t start = 0; start < rows && st == H5SHUF_OK; start += block) {
        const uint64_t n = rows - start < block ? rows - start : block;
        st = h5shuf__read_rows(dset, ds->ftype, start, n, buf) < 0
                 ? h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read rows %llu..%llu: %s", where,
                                (unsigned long long)start, (unsigned long long)(start + n - 1),
                                h5shuf__hdf5_cause(cause, sizeof cause))
                 : h5shuf__refs_rewrite(&rw, ds->ftype, buf, (size_t)n * elems, err);
    }
    free(buf);
    return st;
}

/* Look at entry e's object in the input: do its attributes (or data) hold references (checked now), and
 * does the output need the 1.8 format for its attributes? */
static int inspect(struct h5shuf_objcopy *oc, struct h5shuf_obj *e, const struct h5shuf_input *first,
                   struct h5shuf_rewrite *rw, struct h5shuf_err *err)
{
    char cause[256], what[600];
    hid_t obj = H5Oopen(first->file, e->path, H5P_DEFAULT);
    if (obj < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", first->spec.file, e->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    int st = H5SHUF_OK;
    if (e->kind == H5SHUF_OBJ_DATASET) {
        hid_t t = H5Dget_type(obj);
        e->ref_data = t >= 0 && h5shuf__type_has_refs(t);
        if (t >= 0)
            H5Tclose(t);
    }
    if (e->kind != H5SHUF_OBJ_GROUP)
        e->attr_order = (unsigned)h5shuf__attr_order(obj);
    int refs;
    hsize_t largest;
    snprintf(what, sizeof what, "%s:%s", first->spec.file, e->path);
    if (h5shuf__attrs_survey(obj, &refs, &largest) < 0)
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read its attributes: %s", what,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    e->deferred = e->ref_data || refs;
    oc->new_format |= largest > COMPACT_ATTR_BYTES_MAX;
    if (st == H5SHUF_OK && e->deferred)
        st = h5shuf__attrs_copy(obj, H5I_INVALID_HID, what, rw, err);
    if (st == H5SHUF_OK && e->ref_data)
        st = copy_ref_data(e->path, first, H5I_INVALID_HID, NULL, rw, err);
    H5Oclose(obj);
    return st;
}

/*-*************************************
*  The copy: plan, objects, attributes
***************************************/

int h5shuf__objcopy_plan(struct h5shuf_objcopy *oc, const struct h5shuf_input *first,
                         const struct h5shuf_datasets *dsets, int whole_file, const char *const *extra, size_t nextra,
                         int drop, int allow_external, struct h5shuf_err *err)
{
    char cause[256];
    int st = H5SHUF_OK;
    memset(oc, 0, sizeof *oc);
    oc->allow_external = allow_external;
    /* The shuffled datasets first, by address: any other link to them becomes a link. */
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) {
        H5O_info_t oi;
        st = H5Oget_info(first->dset[d], &oi) < 0
                 ? h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: %s", first->spec.file, dsets->ds[d].in_path,
                                h5shuf__hdf5_cause(cause, sizeof cause))
                 : h5shuf__refmap_add(&oc->map, oi.addr, dsets->ds[d].out_path, 1, err);
    }
    H5F_info2_t fi;
    if (H5Fget_info2(first->file, &fi) >= 0 && fi.super.version >= 2)
        oc->new_format = 1; /* written in the 1.8 format (netCDF-4, h5py's libver="latest"): keep it */
    hid_t root = H5Gopen2(first->file, "/", H5P_DEFAULT);
    H5O_info_t ri;
    if (st == H5SHUF_OK && root >= 0 && H5Oget_info(root, &ri) >= 0) /* every output has a root group: a */
        st = h5shuf__refmap_add(&oc->map, ri.addr, "/", 0, err); /* reference to it is kept in every mode */
    if (root >= 0) {
        group_order(root, &oc->root_link_order, &oc->root_attr_order);
        oc->netcdf = H5Aexists(root, "_NCProperties") > 0; /* the netCDF library's mark on every file */
        H5Eclear2(H5E_DEFAULT);
    }
    if (st == H5SHUF_OK && whole_file) {
        struct walk w = {oc, first, dsets, "/", err, H5SHUF_OK};
        struct h5shuf_obj *e = entry_add(oc, H5SHUF_OBJ_GROUP, "/", err);
        st = !e ? err->status : root < 0 ? h5shuf__fail(err, H5SHUF_EHDF5, "%s: %s", first->spec.file,
                                                           h5shuf__hdf5_cause(cause, sizeof cause))
                                         : walk_group(&w, root, "/");
        if (e && st == H5SHUF_OK) {
            oc->v[0].link_order = oc->root_link_order;
            oc->v[0].attr_order = oc->root_attr_order;
        }
    } else {
        for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) {
            struct h5shuf_obj *e = entry_add(oc, H5SHUF_OBJ_SHUFFLED, dsets->ds[d].in_path, err);
            if (e)
                e->d = d;
            st = err->status;
        }
        for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++)
            st = map_parents(oc, first->file, dsets->ds[d].out_path, err);
        for (size_t k = 0; k < nextra && st == H5SHUF_OK; k++)
            st = map_parents(oc, first->file, extra[k], err);
        for (size_t k = 0; k < nextra && st == H5SHUF_OK; k++) {
            H5O_info_t oi;
            if (H5Oget_info_by_name(first->file, extra[k], &oi, H5P_DEFAULT) < 0)
                st = h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: %s", first->spec.file, extra[k],
                                  h5shuf__hdf5_cause(cause, sizeof cause));
            else if ((st = check_copied_storage(oc, first->file, extra[k], first->spec.file, extra[k], err)) ==
                         H5SHUF_OK &&
                     (st = h5shuf__refmap_add(&oc->map, oi.addr, extra[k], 0, err)) == H5SHUF_OK &&
                     !entry_add(oc, H5SHUF_OBJ_DATASET, extra[k], err))
                st = err->status;
        }
    }
    if (root >= 0)
        H5Gclose(root);
    struct h5shuf_rewrite rw = {.map = &oc->map, .src = first->file, .out = H5I_INVALID_HID, .drop = drop, .drops = &oc->drops};
    for (size_t i = 0; i < oc->n && st == H5SHUF_OK; i++)
        if (oc->v[i].kind <= H5SHUF_OBJ_SHUFFLED)
            st = inspect(oc, &oc->v[i], first, &rw, err);
    for (size_t d = 0; d < dsets->n && st == H5SHUF_OK; d++) /* rows of references */
        if (h5shuf__type_has_refs(dsets->ds[d].ftype))
            st = check_ref_rows(first, &dsets->ds[d], first->dset[d], &rw, err);
    return st;
}

int h5shuf__objcopy_make(const struct h5shuf_obj *e, const struct h5shuf_input *first, hid_t out, const char *ofile,
                         struct h5shuf_err *err)
{
    char cause[256];
    herr_t r = 0;
    struct h5shuf_bound bound;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), cpl = H5I_INVALID_HID, src = H5I_INVALID_HID, t = H5I_INVALID_HID,
          s = H5I_INVALID_HID;
    if (lcpl >= 0)
        H5Pset_char_encoding(lcpl, e->cset);
    switch (e->kind) {
    case H5SHUF_OBJ_GROUP:
        if (strcmp(e->path, "/") == 0)
            break; /* the root exists: made with the file (its creation order, targets.c) */
        cpl = H5Pcreate(H5P_GROUP_CREATE);
        H5Pset_obj_track_times(cpl, 0); /* no clock in the file */
        if (e->link_order)
            H5Pset_link_creation_order(cpl, e->link_order);
        if (e->attr_order)
            H5Pset_attr_creation_order(cpl, e->attr_order);
        src = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Gcreate2(out, e->path, lcpl, cpl, H5P_DEFAULT);
        r = src < 0 ? -1 : H5Gclose(src);
        src = H5I_INVALID_HID;
        break;
    case H5SHUF_OBJ_DATASET:
        if (e->ref_data) { /* made empty, with the input's type, shape and creation properties */
            src = H5Dopen2(first->file, e->path, H5P_DEFAULT);
            t = src >= 0 ? H5Dget_type(src) : H5I_INVALID_HID;
            s = src >= 0 ? H5Dget_space(src) : H5I_INVALID_HID;
            cpl = src >= 0 ? H5Dget_create_plist(src) : H5I_INVALID_HID;
            if (cpl >= 0)
                H5Pset_obj_track_times(cpl, 0);
            hid_t d = t < 0 || s < 0 || cpl < 0 || H5SHUF_FAULT() ? H5I_INVALID_HID
                                                                  : H5Dcreate2(out, e->path, t, s, lcpl, cpl, H5P_DEFAULT);
            r = d < 0 ? -1 : H5Dclose(d);
            break;
        }
        /* fall through */
    case H5SHUF_OBJ_TYPE:
        if (e->kind == H5SHUF_OBJ_DATASET) { /* H5Ocopy decodes vlen data: HDF5 trusts its heap objects */
            src = H5Dopen2(first->file, e->path, H5P_DEFAULT); /* (closed below, after the cause is taken) */
            r = src < 0 ? -1 : h5shuf__vlen_bound_whole(src);
            if (r < 0)
                break;
        }
        cpl = H5Pcreate(H5P_OBJECT_COPY);
        H5Pset_copy_object(cpl, H5O_COPY_WITHOUT_ATTR_FLAG);
        /* H5Ocopy decodes the chunks of a dataset of vlen or reference type (to convert them): bracketed with
         * the dataset's decoded-size limits (boundread.h), the dataset closed first (h5shuf__bound_detach) */
        if (src >= 0) {
            h5shuf__bound_begin(&bound, src);
            h5shuf__bound_detach(&bound, first->file, e->path);
            H5Dclose(src);
        }
        /* (dataset mode: a scale's group may be on no shuffled dataset's way) */
        r = H5SHUF_FAULT() || h5shuf__make_parents(out, e->path) < 0 ? -1
                                                                     : H5Ocopy(first->file, e->path, out, e->path, cpl, lcpl);
        if (src >= 0) {
            r = h5shuf__bound_end(&bound, r, H5S_ALL);
            src = H5I_INVALID_HID; /* (closed above) */
        }
        break;
    case H5SHUF_OBJ_SOFT:
        r = H5SHUF_FAULT() ? -1 : H5Lcreate_soft(e->value, out, e->path, lcpl, H5P_DEFAULT);
        break;
    case H5SHUF_OBJ_EXTERNAL:
        r = H5SHUF_FAULT() ? -1 : H5Lcreate_external(e->value, e->value2, out, e->path, lcpl, H5P_DEFAULT);
        break;
    case H5SHUF_OBJ_ALIAS:
        r = H5SHUF_FAULT() ? -1 : H5Lcreate_hard(out, e->value, out, e->path, lcpl, H5P_DEFAULT);
        break;
    default:
        break;
    }
    if (r < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (src >= 0)
        H5Dclose(src);
    if (cpl >= 0)
        H5Pclose(cpl);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot copy it to %s: %s", first->spec.file, e->path, ofile,
                            cause);
    return H5SHUF_OK;
}

int h5shuf__objcopy_attrs(const struct h5shuf_obj *e, const char *out_path, const struct h5shuf_input *first, hid_t out,
                          const char *ofile, struct h5shuf_rewrite *rw, struct h5shuf_err *err)
{
    char cause[256], what[600];
    snprintf(what, sizeof what, "%s:%s", ofile, out_path);
    hid_t src = H5Oopen(first->file, e->path, H5P_DEFAULT);
    hid_t dst = src >= 0 ? H5Oopen(out, out_path, H5P_DEFAULT) : H5I_INVALID_HID;
    int st = src < 0 || dst < 0 ? h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot open: %s", what,
                                               h5shuf__hdf5_cause(cause, sizeof cause))
                                : h5shuf__attrs_copy(src, dst, what, rw, err);
    if (dst >= 0)
        H5Oclose(dst);
    if (src >= 0)
        H5Oclose(src);
    if (st == H5SHUF_OK && e->ref_data)
        st = copy_ref_data(e->path, first, out, ofile, rw, err);
    return st;
}

void h5shuf__objcopy_free(struct h5shuf_objcopy *oc)
{
    for (size_t i = 0; i < oc->n; i++) {
        free(oc->v[i].path);
        free(oc->v[i].value);
        free(oc->v[i].value2);
    }
    free(oc->v);
    h5shuf__refmap_free(&oc->map);
    h5shuf__drops_free(&oc->drops);
    free(oc->external);
    memset(oc, 0, sizeof *oc);
}
