/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refmap.c - input objects by address, and references rewritten to the output's objects.
 *
 * In HDF5 1.10 an object reference (hobj_ref_t) is the address of its target's object header in the
 * file it was made in; a region reference (hdset_reg_ref_t) names a global heap object holding the
 * dataset's address and the selection.  So a reference copied byte for byte into another file names
 * whatever lives at that address there.  h5shuf looks each target up by address in the table of the
 * objects the output holds and makes the reference anew with H5Rcreate from the target's output path;
 * a region keeps its selection (H5Rget_region), which stays valid because a copied dataset keeps its
 * shape and rows.  A region of a shuffled dataset would name rows that moved, so it is refused.
 * Addresses go through a small open-addressing table, so files of many objects stay linear.
 *
 * The rows of a dataset of references move as raw bytes, which for a type with no variable-length part
 * are also their memory form, and are rewritten the same way as each band is written (writer.c), once
 * the output's objects exist; an object reference made there is remembered per output file and input
 * address (h5shuf_addrmap), since a dataset of references may name a few objects millions of times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "h5err.h"
#include "refmap.h"

/*-*************************************
*  Maps of references: by address
***************************************/

static size_t slot_of(const struct h5shuf_refmap *map, haddr_t addr)
{
    uint64_t h = (uint64_t)addr * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 17) & (map->cap - 1);
    while (map->slot[i].addr != HADDR_UNDEF && map->slot[i].addr != addr)
        i = (i + 1) & (map->cap - 1);
    return i;
}

const struct h5shuf_objref *h5shuf__refmap_find(const struct h5shuf_refmap *map, haddr_t addr)
{
    if (!map->cap)
        return NULL;
    size_t i = slot_of(map, addr);
    return map->slot[i].addr == addr ? &map->slot[i] : NULL;
}

int h5shuf__refmap_add(struct h5shuf_refmap *map, haddr_t addr, const char *out_path, int shuffled,
                       struct h5shuf_err *err)
{
    if (h5shuf__refmap_find(map, addr))
        return H5SHUF_OK;
    if (2 * (map->used + 1) > map->cap) { /* keep the table at most half full */
        size_t cap = map->cap ? 2 * map->cap : 64;
        struct h5shuf_objref *old = map->slot, *slot = malloc(cap * sizeof *slot);
        if (!slot)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        for (size_t i = 0; i < cap; i++)
            slot[i].addr = HADDR_UNDEF;
        size_t oldcap = map->cap;
        map->slot = slot;
        map->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].addr != HADDR_UNDEF)
                map->slot[slot_of(map, old[i].addr)] = old[i];
        free(old);
    }
    char *p = strdup(out_path);
    if (!p)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    struct h5shuf_objref *r = &map->slot[slot_of(map, addr)];
    r->addr = addr;
    r->out_path = p;
    r->shuffled = shuffled;
    map->used++;
    return H5SHUF_OK;
}

void h5shuf__refmap_free(struct h5shuf_refmap *map)
{
    for (size_t i = 0; i < map->cap; i++)
        if (map->slot[i].addr != HADDR_UNDEF)
            free(map->slot[i].out_path);
    free(map->slot);
    memset(map, 0, sizeof *map);
}

/* The addrmap's slot of key: its own, or the empty one it would take. */
static size_t addr_slot(const haddr_t *keys, size_t cap, haddr_t key)
{
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 17) & (cap - 1);
    while (keys[i] != HADDR_UNDEF && keys[i] != key)
        i = (i + 1) & (cap - 1);
    return i;
}

const uint64_t *h5shuf__addrmap_get(const struct h5shuf_addrmap *m, haddr_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = addr_slot(m->key, m->cap, key);
    return m->key[i] == key ? &m->val[i] : NULL;
}

int h5shuf__addrmap_put(struct h5shuf_addrmap *m, haddr_t key, uint64_t val, struct h5shuf_err *err)
{
    if (m->cap && m->key[addr_slot(m->key, m->cap, key)] == key) {
        m->val[addr_slot(m->key, m->cap, key)] = val;
        return H5SHUF_OK;
    }
    if (2 * (m->used + 1) > m->cap) { /* keep the table at most half full */
        size_t cap = m->cap ? 2 * m->cap : 64;
        haddr_t *key2 = H5SHUF_FAULT() ? NULL : malloc(cap * sizeof *key2);
        uint64_t *val2 = key2 ? malloc(cap * sizeof *val2) : NULL;
        if (!val2) {
            free(key2);
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < cap; i++)
            key2[i] = HADDR_UNDEF;
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i] != HADDR_UNDEF) {
                size_t j = addr_slot(key2, cap, m->key[i]);
                key2[j] = m->key[i];
                val2[j] = m->val[i];
            }
        free(m->key);
        free(m->val);
        m->key = key2;
        m->val = val2;
        m->cap = cap;
    }
    size_t i = addr_slot(m->key, m->cap, key);
    m->key[i] = key;
    m->val[i] = val;
    m->used++;
    return H5SHUF_OK;
}

void h5shuf__addrmap_clear(struct h5shuf_addrmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->key[i] = HADDR_UNDEF;
    m->used = 0;
}

void h5shuf__addrmap_free(struct h5shuf_addrmap *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/*-*************************************
*  Reference types
***************************************/

int h5shuf__type_has_refs(hid_t t)
{
    return H5Tget_class(t) == H5T_REFERENCE || H5Tdetect_class(t, H5T_REFERENCE) > 0;
}

int h5shuf__type_ref_kinds(hid_t t)
{
    int kinds = 0;
    switch (H5Tget_class(t)) {
    case H5T_REFERENCE:
        return H5Tequal(t, H5T_STD_REF_DSETREG) > 0 ? H5SHUF_REFS_REGION : H5SHUF_REFS_OBJECT;
    case H5T_COMPOUND:
        for (int m = 0, nm = H5Tget_nmembers(t); m < nm; m++) {
            hid_t mt = H5Tget_member_type(t, (unsigned)m);
            if (mt >= 0) {
                kinds |= h5shuf__type_ref_kinds(mt);
                H5Tclose(mt);
            }
        }
        return kinds;
    case H5T_ARRAY:
    case H5T_VLEN: {
        hid_t base = H5Tget_super(t);
        if (base >= 0) {
            kinds = h5shuf__type_ref_kinds(base);
            H5Tclose(base);
        }
        return kinds;
    }
    default:
        return 0;
    }
}

/*-*************************************
*  Dropped and unresolved references
***************************************/

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

void h5shuf__drops_free(struct h5shuf_drops *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->note[i]);
    free(d->note);
    free(d->count);
    memset(d, 0, sizeof *d);
}

/* Note a dropped reference: a new note for the first in this rewrite (this attribute or dataset). */
static int note_drop(struct h5shuf_rewrite *rw, const char *why, struct h5shuf_err *err)
{
    struct h5shuf_drops *d = rw->drops;
    if (rw->dropped > 1) {
        d->count[d->n - 1]++;
        return H5SHUF_OK;
    }
    char **note = realloc(d->note, (d->n + 1) * sizeof *note);
    if (note)
        d->note = note;
    unsigned *count = note ? realloc(d->count, (d->n + 1) * sizeof *count) : NULL;
    if (count)
        d->count = count;
    size_t len = strlen(rw->where) + strlen(why) + 3;
    char *text = count ? malloc(len) : NULL;
    if (!text)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    snprintf(text, len, "%s: %s", rw->where, why);
    d->note[d->n] = text;
    d->count[d->n++] = 1;
    return H5SHUF_OK;
}

/* A reference whose target the output does not hold: refused, or made null with --drop-references. */
static int unresolved(struct h5shuf_rewrite *rw, void *ref, size_t size, const char *why, struct h5shuf_err *err)
{
    if (!rw->drop)
        return h5shuf__fail(err, H5SHUF_EUNSUPPORTED,
                            "%s: %s (--drop-references writes null references instead)", rw->where, why);
    memset(ref, 0, size);
    rw->dropped++;
    return rw->drops ? note_drop(rw, why, err) : H5SHUF_OK;
}

/* Does an unresolved reference need its target's name: for the error, or for the first note of
 * --drop-references here?  (H5Iget_name searches the whole file: not for each of many references.) */
static int needs_name(const struct h5shuf_rewrite *rw)
{
    return !rw->drop || (rw->drops && rw->dropped == 0);
}

/* The name of the object at addr in the input, for messages ("an object at address N" when unknown). */
static void target_name(hid_t target, haddr_t addr, char *buf, size_t cap)
{
    ssize_t n = target >= 0 ? H5Iget_name(target, buf, cap) : -1;
    if (n <= 0)
        snprintf(buf, cap, "the object at address %llu", (unsigned long long)addr);
    H5Eclear2(H5E_DEFAULT);
}

/* (ref may be unaligned: an object reference in a packed compound row; read and written by memcpy) */
static int rewrite_object(struct h5shuf_rewrite *rw, void *ref, struct h5shuf_err *err)
{
    char cause[256], name[512];
    hobj_ref_t r;
    memcpy(&r, ref, sizeof r);
    haddr_t addr = (haddr_t)r; /* HDF5 1.10: the target's object header address */
    if (addr == 0 || addr == HADDR_UNDEF)
        return H5SHUF_OK; /* a null reference stays null */
    const uint64_t *made = rw->made && rw->out >= 0 ? h5shuf__addrmap_get(rw->made, addr) : NULL;
    if (made) {
        r = (hobj_ref_t)*made;
        memcpy(ref, &r, sizeof r);
        return H5SHUF_OK;
    }
    const struct h5shuf_objref *o = h5shuf__refmap_find(rw->map, addr);
    if (!o) {
        char why[700] = "";
        if (needs_name(rw)) {
            hid_t t = H5Rdereference2(rw->src, H5P_DEFAULT, H5R_OBJECT, &r);
            target_name(t, addr, name, sizeof name);
            if (t >= 0)
                H5Oclose(t);
            snprintf(why, sizeof why, "refers to %s, which is not in the output", name);
        }
        int st = unresolved(rw, ref, sizeof r, why, err);
        return st == H5SHUF_OK && rw->made && rw->out >= 0 ? h5shuf__addrmap_put(rw->made, addr, 0, err) : st;
    }
    if (rw->out < 0)
        return H5SHUF_OK;
    if (H5SHUF_FAULT() || H5Rcreate(&r, rw->out, o->out_path, H5R_OBJECT, -1) < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot make the reference to %s: %s", rw->where, o->out_path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    memcpy(ref, &r, sizeof r);
    return rw->made ? h5shuf__addrmap_put(rw->made, addr, (uint64_t)r, err) : H5SHUF_OK;
}

static int rewrite_region(struct h5shuf_rewrite *rw, void *at, struct h5shuf_err *err)
{
    char cause[256], name[512], why[700];
    hdset_reg_ref_t buf, *ref = &buf; /* (a copy: at may be unaligned, as in a packed compound row) */
    memcpy(&buf, at, sizeof buf); /* (&buf: an array in HDF5 1.10, a struct from 1.12) */
    if (all_zero((const unsigned char *)ref, sizeof *ref))
        return H5SHUF_OK;
    hid_t d = H5Rdereference2(rw->src, H5P_DEFAULT, H5R_DATASET_REGION, ref);
    H5O_info_t oi;
    if (d < 0 || H5Oget_info(d, &oi) < 0) {
        if (d >= 0)
            H5Oclose(d);
        H5Eclear2(H5E_DEFAULT);
        return unresolved(rw, at, sizeof buf, "holds a region reference that does not resolve in the input", err);
    }
    const struct h5shuf_objref *o = h5shuf__refmap_find(rw->map, oi.addr);
    if (!o || o->shuffled) {
        why[0] = '\0';
        if (needs_name(rw)) {
            target_name(d, oi.addr, name, sizeof name);
            snprintf(why, sizeof why,
                     o ? "holds a region reference into %s, a shuffled dataset: its rows moved" :
                         "holds a region reference into %s, which is not in the output",
                     name);
        }
        H5Oclose(d);
        return unresolved(rw, at, sizeof buf, why, err);
    }
    H5Oclose(d);
    if (rw->out < 0)
        return H5SHUF_OK;
    hid_t space = H5Rget_region(rw->src, H5R_DATASET_REGION, ref);
    herr_t r = space < 0 || H5SHUF_FAULT() ? -1 : H5Rcreate(ref, rw->out, o->out_path, H5R_DATASET_REGION, space);
    if (r < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    if (space >= 0)
        H5Sclose(space);
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot make the region reference into %s: %s", rw->where,
                            o->out_path, cause);
    memcpy(at, &buf, sizeof buf);
    return H5SHUF_OK;
}

/*-*************************************
*  Walking and rewriting a buffer's references
***************************************/

/* The one walk of a buffer's references, for both its users below. */
int h5shuf__refs_each(hid_t t, void *buf, size_t n, const char *where, h5shuf_ref_fn fn, void *user,
                      struct h5shuf_err *err)
{
    if (n == 0 || !h5shuf__type_has_refs(t))
        return H5SHUF_OK;
    size_t size = H5Tget_size(t);
    unsigned char *p = buf;
    int st = H5SHUF_OK;
    switch (H5Tget_class(t)) {
    case H5T_REFERENCE: { /* (HDF5 1.10 has these two kinds of reference) */
        int region = H5Tequal(t, H5T_STD_REF_DSETREG) > 0;
        if (!region && H5Tequal(t, H5T_STD_REF_OBJ) <= 0)
            return h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: holds a kind of reference h5shuf does not know", where);
        for (size_t i = 0; i < n && st == H5SHUF_OK; i++)
            st = fn(user, p + i * size, region, err);
        break;
    }
    case H5T_COMPOUND: /* member by member (only those holding references), over every element */
        for (int m = 0, nm = H5Tget_nmembers(t); m < nm && st == H5SHUF_OK; m++) {
            hid_t mt = H5Tget_member_type(t, (unsigned)m);
            size_t off = H5Tget_member_offset(t, (unsigned)m);
            if (mt < 0)
                st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read a compound member's type", where);
            int refs = mt >= 0 && h5shuf__type_has_refs(mt);
            for (size_t i = 0; i < n && st == H5SHUF_OK && refs; i++)
                st = h5shuf__refs_each(mt, p + i * size + off, 1, where, fn, user, err);
            if (mt >= 0)
                H5Tclose(mt);
        }
        break;
    case H5T_ARRAY: {
        hid_t base = H5Tget_super(t);
        int nd = H5Tget_array_ndims(t);
        hsize_t dims[H5S_MAX_RANK];
        size_t count = 1;
        if (base < 0 || nd <= 0 || H5Tget_array_dims2(t, dims) != nd)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read an array type's shape", where);
        for (int k = 0; k < nd && st == H5SHUF_OK; k++)
            count *= (size_t)dims[k];
        for (size_t i = 0; i < n && st == H5SHUF_OK; i++)
            st = h5shuf__refs_each(base, p + i * size, count, where, fn, user, err);
        if (base >= 0)
            H5Tclose(base);
        break;
    }
    case H5T_VLEN: {
        hid_t base = H5Tget_super(t);
        if (base < 0)
            st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot read a sequence's base type", where);
        for (size_t i = 0; i < n && st == H5SHUF_OK; i++) {
            hvl_t *v = (hvl_t *)(void *)(p + i * size);
            st = h5shuf__refs_each(base, v->p, v->len, where, fn, user, err);
        }
        if (base >= 0)
            H5Tclose(base);
        break;
    }
    default:
        break;
    }
    return st;
}

static int rewrite_one(void *user, void *ref, int region, struct h5shuf_err *err)
{
    struct h5shuf_rewrite *rw = user;
    return region ? rewrite_region(rw, ref, err) : rewrite_object(rw, ref, err);
}

int h5shuf__refs_rewrite(struct h5shuf_rewrite *rw, hid_t mtype, void *buf, size_t n, struct h5shuf_err *err)
{
    return h5shuf__refs_each(mtype, buf, n, rw->where, rewrite_one, rw, err);
}
