/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refmap.h - the objects of the first input that an output file holds, found by their address in the
 * input, with their path in the output; and the references of attributes and datasets rewritten to
 * point at those objects in the output (refmap.c).
 *
 * An HDF5 object reference holds the address of its target in its own file, so a value copied to
 * another file as it is names another object there, or none.  Every reference h5shuf writes is made
 * anew (H5Rcreate) from the target's path in the output.
 */
#ifndef H5SHUF_REFMAP_H
#define H5SHUF_REFMAP_H

#include <hdf5.h>

#include "error.h"

/* An input object that the output holds. */
struct h5shuf_objref {
    haddr_t addr;     /* HADDR_UNDEF: an empty slot */
    char *out_path;   /* its path in the output (owned) */
    int shuffled;     /* one of the shuffled datasets: its rows moved */
};

/* An open-addressing table by address (linear probing, at most half full). */
struct h5shuf_refmap {
    struct h5shuf_objref *slot;
    size_t cap, used;
};

/* Add addr at out_path (copied).  An address already present keeps its first path (an object reached
 * by several hard links is one object).  H5SHUF_OK or H5SHUF_ENOMEM. */
H5SHUF_INTERNAL int h5shuf__refmap_add(struct h5shuf_refmap *map, haddr_t addr, const char *out_path, int shuffled,
                                       struct h5shuf_err *err);
/* The entry of addr, or NULL. */
H5SHUF_INTERNAL const struct h5shuf_objref *h5shuf__refmap_find(const struct h5shuf_refmap *map, haddr_t addr);
H5SHUF_INTERNAL void h5shuf__refmap_free(struct h5shuf_refmap *map);

/* A table of 64-bit values by object address (open addressing, at most half full), for what a job
 * learns per object as it goes: the reference made in an output file for an input object (writer.c),
 * what an object is hashed as (refcanon.c). */
struct h5shuf_addrmap {
    haddr_t *key;      /* HADDR_UNDEF: an empty slot */
    uint64_t *val;
    size_t cap, used;
};

/* Set key's value (replacing one there).  H5SHUF_OK or H5SHUF_ENOMEM (recorded in err). */
H5SHUF_INTERNAL int h5shuf__addrmap_put(struct h5shuf_addrmap *m, haddr_t key, uint64_t val, struct h5shuf_err *err);
/* key's value, or NULL when it has none. */
H5SHUF_INTERNAL const uint64_t *h5shuf__addrmap_get(const struct h5shuf_addrmap *m, haddr_t key);
/* Forget every value, keeping the table's memory. */
H5SHUF_INTERNAL void h5shuf__addrmap_clear(struct h5shuf_addrmap *m);
/* Free the table (a zeroed one too) and zero it. */
H5SHUF_INTERNAL void h5shuf__addrmap_free(struct h5shuf_addrmap *m);

/* Rewriting the references held by n elements of memory type mtype in buf (the native form H5Aread or
 * H5Dread gives: object and region references, at any depth of compounds, arrays and variable-length
 * sequences; for a type without variable-length parts that is also its raw bytes, as rows move).  src is
 * an object of the input file (for dereferencing), out one of the output file (for creating), or
 * H5I_INVALID_HID to check only (at plan time: nothing is written).  where names the attribute or dataset
 * for messages. */
/* Where --drop-references made references null: one note per attribute or dataset, "WHERE: WHY" for
 * the first of them there, and how many there were. */
struct h5shuf_drops {
    char **note;       /* owned */
    unsigned *count;
    size_t n;
};
H5SHUF_INTERNAL void h5shuf__drops_free(struct h5shuf_drops *d);

struct h5shuf_rewrite {
    const struct h5shuf_refmap *map;
    hid_t src, out;
    int drop;          /* --drop-references: an unresolvable reference becomes a null one (counted) */
    const char *where;
    unsigned dropped;  /* references made null, by this rewrite (copy the struct per attribute or dataset) */
    struct h5shuf_drops *drops; /* where they were noted, or NULL (at write time: noted at plan time) */
    struct h5shuf_addrmap *made; /* or NULL; else the object references already made in out, by input
                                  * address (0: made null), made once per output file and object: the
                                  * rows of a dataset of references may name one object many times */
};

/* Rewrite (or, with out invalid, check) every reference; a reference to an object the output does not
 * hold, or a region of a shuffled dataset (its rows moved), is H5SHUF_EUNSUPPORTED naming where and the
 * target, unless rw->drop. */
H5SHUF_INTERNAL int h5shuf__refs_rewrite(struct h5shuf_rewrite *rw, hid_t mtype, void *buf, size_t n,
                                         struct h5shuf_err *err);

/* A reference found by h5shuf__refs_each: at ref in the buffer, an hobj_ref_t, or when region an
 * hdset_reg_ref_t.  Returns H5SHUF_OK to go on, else an error status (recorded in err). */
typedef int (*h5shuf_ref_fn)(void *user, void *ref, int region, struct h5shuf_err *err);

/* Call fn(user, ...) on every reference held by n elements of memory type t in buf (as for
 * h5shuf__refs_rewrite: compounds, arrays and variable-length sequences at any depth), element by
 * element.  Returns H5SHUF_OK, fn's first error, or H5SHUF_EUNSUPPORTED for a kind of reference other
 * than object and region (where names the data in messages). */
H5SHUF_INTERNAL int h5shuf__refs_each(hid_t t, void *buf, size_t n, const char *where, h5shuf_ref_fn fn, void *user,
                                      struct h5shuf_err *err);

/* Does type t hold references anywhere?  And which kinds: H5SHUF_REFS_OBJECT | H5SHUF_REFS_REGION, 0
 * for none. */
H5SHUF_INTERNAL int h5shuf__type_has_refs(hid_t t);
enum { H5SHUF_REFS_OBJECT = 1, H5SHUF_REFS_REGION = 2 };
H5SHUF_INTERNAL int h5shuf__type_ref_kinds(hid_t t);

#endif /* H5SHUF_REFMAP_H */
