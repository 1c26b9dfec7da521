/*
 * objcopy.c - whole-file mode: the first input's other objects copied into an output file.
 *
 * Objects are matched by their address in the first input, not by path: a file may reach one object
 * through several hard links (h5py: f['alias'] = f['x']).  Every group is recreated and walked, so no
 * link inside a blindly copied subtree can reach a shuffled dataset; each other object is copied once
 * (H5Ocopy); every further hard link to an object seen before, and every link to a shuffled dataset
 * other than its own path, is recreated as a hard link once the shuffled datasets exist.  Addresses go
 * through a small open-addressing table, so files of many objects stay linear.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "objcopy.h"

struct objref {
    haddr_t addr;   /* HADDR_UNDEF: empty slot */
    char *out_path; /* where the object is in the output (owned), or NULL for shuffled dataset d */
    size_t d;
};

static size_t slot_of(const struct h5shuf_objcopy *cs, haddr_t addr)
{
    uint64_t h = (uint64_t)addr * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 17) & (cs->cap - 1);
    while (cs->slot[i].addr != HADDR_UNDEF && cs->slot[i].addr != addr)
        i = (i + 1) & (cs->cap - 1);
    return i;
}

static struct objref *obj_find(const struct h5shuf_objcopy *cs, haddr_t addr)
{
    size_t i = slot_of(cs, addr);
    return cs->slot[i].addr == addr ? &cs->slot[i] : NULL;
}

static int obj_add(struct h5shuf_objcopy *cs, haddr_t addr, const char *out_path, size_t d)
{
    if (2 * (cs->used + 1) > cs->cap) { /* keep the table at most half full */
        size_t cap = cs->cap ? 2 * cs->cap : 64;
        struct objref *old = cs->slot, *slot = malloc(cap * sizeof *slot);
        if (!slot)
            return h5shuf__fail(cs->err, H5SHUF_ENOMEM, "out of memory");
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
        return h5shuf__fail(cs->err, H5SHUF_ENOMEM, "out of memory");
    struct objref *r = &cs->slot[slot_of(cs, addr)];
    r->addr = addr;
    r->out_path = p;
    r->d = d;
    cs->used++;
    return H5SHUF_OK;
}

static int defer_link(struct h5shuf_objcopy *cs, const char *from, const char *to)
{
    if (cs->nlinks == cs->links_cap) {
        size_t cap = cs->links_cap ? 2 * cs->links_cap : 16;
        char **a = realloc(cs->link_from, cap * sizeof *a), **b = a ? realloc(cs->link_to, cap * sizeof *b) : NULL;
        if (a)
            cs->link_from = a;
        if (b)
            cs->link_to = b;
        if (!a || !b)
            return h5shuf__fail(cs->err, H5SHUF_ENOMEM, "out of memory");
        cs->links_cap = cap;
    }
    cs->link_from[cs->nlinks] = strdup(from);
    cs->link_to[cs->nlinks] = strdup(to);
    if (!cs->link_from[cs->nlinks] || !cs->link_to[cs->nlinks]) {
        free(cs->link_from[cs->nlinks]);
        free(cs->link_to[cs->nlinks]);
        return h5shuf__fail(cs->err, H5SHUF_ENOMEM, "out of memory");
    }
    cs->nlinks++;
    return H5SHUF_OK;
}

void h5shuf__objcopy_free(struct h5shuf_objcopy *cs)
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
    struct h5shuf_objcopy *cs;
    hid_t dst;
    const char *prefix; /* path of the group being copied, "/" for the root */
};

static int copy_group(struct h5shuf_objcopy *cs, hid_t src, hid_t dst, const char *prefix);

static herr_t copy_link_cb(hid_t src, const char *name, const H5L_info_t *li, void *data)
{
    struct tree_ctx *tc = data;
    struct h5shuf_objcopy *cs = tc->cs;
    const char *file = cs->src->spec.file;
    char cause[256];
    size_t plen = strlen(tc->prefix);
    char *path = malloc(plen + strlen(name) + 2);
    if (!path) {
        cs->st = h5shuf__fail(cs->err, H5SHUF_ENOMEM, "out of memory");
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
            const char *target = seen->out_path ? seen->out_path : cs->dsets->ds[seen->d].out_path;
            /* a shuffled dataset under its own name is made by the shuffle; any other link is a link */
            if (seen->out_path || strcmp(path, cs->dsets->ds[seen->d].in_path) != 0)
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
        cs->st = h5shuf__fail(cs->err, H5SHUF_EHDF5, "%s:%s: cannot copy to the output: %s", file, path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    free(path);
    return r < 0 ? -1 : 0;
}

static int copy_group(struct h5shuf_objcopy *cs, hid_t src, hid_t dst, const char *prefix)
{
    int st = h5shuf__attrs_copy(src, dst, cs->src->spec.file, cs->err);
    if (st != H5SHUF_OK)
        return st;
    struct tree_ctx tc = {cs, dst, prefix};
    hsize_t idx = 0;
    if (H5Literate(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_link_cb, &tc) < 0 && cs->st == H5SHUF_OK) {
        char cause[256];
        cs->st = h5shuf__fail(cs->err, H5SHUF_EHDF5, "%s:%s: cannot list: %s", cs->src->spec.file, prefix,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    return cs->st;
}

int h5shuf__objcopy_tree(struct h5shuf_objcopy *cs, hid_t out, const char *ofile)
{
    char cause[256];
    int st = H5SHUF_OK;
    /* The shuffled datasets first, by address: any other link to them becomes a link. */
    for (size_t d = 0; d < cs->dsets->n && st == H5SHUF_OK; d++) {
        H5O_info_t oi;
        st = H5Oget_info(cs->src->dset[d], &oi) < 0
                 ? h5shuf__fail(cs->err, H5SHUF_EHDF5, "%s: %s", ofile, h5shuf__hdf5_cause(cause, sizeof cause))
                 : obj_add(cs, oi.addr, NULL, d);
    }
    hid_t root = H5Gopen2(cs->src->file, "/", H5P_DEFAULT);
    hid_t oroot = H5Gopen2(out, "/", H5P_DEFAULT);
    if (st == H5SHUF_OK)
        st = root < 0 || oroot < 0 ? h5shuf__fail(cs->err, H5SHUF_EHDF5, "%s: %s", ofile,
                                                  h5shuf__hdf5_cause(cause, sizeof cause))
                                   : copy_group(cs, root, oroot, "/");
    if (root >= 0)
        H5Gclose(root);
    if (oroot >= 0)
        H5Gclose(oroot);
    return st;
}

int h5shuf__objcopy_links(struct h5shuf_objcopy *cs, hid_t out, const char *ofile)
{
    char cause[256];
    int st = H5SHUF_OK;
    for (size_t k = 0; k < cs->nlinks && st == H5SHUF_OK; k++)
        if (H5Lcreate_hard(out, cs->link_to[k], out, cs->link_from[k], H5P_DEFAULT, H5P_DEFAULT) < 0)
            st = h5shuf__fail(cs->err, H5SHUF_EHDF5, "%s:%s: cannot link to %s: %s", ofile, cs->link_from[k],
                              cs->link_to[k], h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}
