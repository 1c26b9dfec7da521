/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gheap.h - a file's global heap collections read with pread(), outside HDF5 (gheap.c): the file's bytes
 * and address sizes, and each collection's objects walked as HDF5 walks them but every length held
 * against the collection and the collection against the file.  Used by vlenbound.c.
 */
#ifndef H5SHUF_GHEAP_H
#define H5SHUF_GHEAP_H

#include <stdint.h>

#include <hdf5.h>

#include "base.h"

/* Collections remembered (elements written together share one, so the last few answer nearly all). */
#define GCOL_CACHE 4
/* A collection up to this size is read whole; a larger one object header by object header. */
#define GCOL_READ_WHOLE (1u << 20)
/* Object sizes in a collection's table besides real ones. */
#define OBJ_ABSENT UINT64_MAX

/* The file under a dataset, for reading its bytes. */
struct heapfile {
    int fd;          /* HDF5's own descriptor of the file (not closed here) */
    uint64_t size;   /* bytes of the file */
    uint64_t base;   /* file offset of HDF5 address 0: the user block's size */
    unsigned sa, ss; /* sizes of file addresses and lengths, bytes (1..8) */
};

/* An object of a collection: its size in bytes (OBJ_ABSENT: none) and where
 * its bytes begin in the collection (after its header). */
struct gobj {
    uint64_t size, at;
};

/* A global heap collection: its objects' sizes and places, or why it cannot be read. */
struct gcol {
    uint64_t addr;        /* HDF5 address; UINT64_MAX: an empty slot */
    struct gobj *obj;     /* obj[i], i < nobj: object i */
    uint32_t nobj;
    unsigned char *bytes; /* the whole collection, when it was read whole and kept (h5shuf__gcol_get's keep);
                           * else NULL */
    char bad[96];         /* why it cannot be read ("" when it can) */
};

/* The unsigned little-endian number of bytes (1..8) bytes at p. */
static inline uint64_t h5shuf__get_le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = bytes; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Forget what h5shuf__heapfile_open found (h->fd is -1 after; the descriptor stays HDF5's). */
H5SHUF_INTERNAL void h5shuf__heapfile_close(struct heapfile *h);
/* The file of dset (a dataset or attribute): its descriptor (HDF5's own: the file must be open through the
 * sec2 driver, else it is refused), size, base and address sizes.  < 0 with HDF5's minor error code in *minor and
 * one line in msg (cap bytes) when refused, or with *minor 0 when HDF5 failed (its stack has the cause). */
H5SHUF_INTERNAL herr_t h5shuf__heapfile_open(hid_t dset, struct heapfile *h, hid_t *minor, char *msg, size_t cap);
/* The collection at addr, from cache[0 .. GCOL_CACHE) or loaded into its next slot (*next, round robin;
 * the slots are the caller's to free with h5shuf__gcol_free); NULL when out of memory.  A collection that
 * cannot be read has the reason in bad.  With keep, a collection of at most GCOL_READ_WHOLE bytes keeps
 * its bytes (so the cache holds at most GCOL_CACHE * GCOL_READ_WHOLE = 4 MiB of them); without, none. */
H5SHUF_INTERNAL struct gcol *h5shuf__gcol_get(const struct heapfile *h, struct gcol *cache, unsigned *next, uint64_t addr,
                                              int keep);
/* Free what a slot of the cache holds and empty it. */
H5SHUF_INTERNAL void h5shuf__gcol_free(struct gcol *g);

#endif /* H5SHUF_GHEAP_H */
