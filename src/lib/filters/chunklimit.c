/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chunklimit.c - the decoded sizes of a dataset's chunks at each of h5shuf's filters (chunklimit.h).
 *
 * HDF5 decodes a chunk by running its pipeline backwards from the stored bytes; every chunk, edge chunks
 * included, decodes to the whole chunk: type size x chunk dims bytes (H5D__chunk_lock allocates that and
 * reads it so; a chunk whose filters are all skipped is stored whole).  Walking the pipeline forwards
 * from that size gives, at each filter, the size its encoder was given, i.e. what its decoder must
 * return: exactly known until the first filter that changes sizes, bounded after it.  A filter that
 * occurs twice gets the union of its intervals.
 */
#include <zstd.h>

#include "chunklimit.h"
#include "filter_bshuf.h"
#include "filter_lz4.h"
#include "filter_lzf.h"
#include "filter_lzo.h"
#include "filter_zstd.h"

/* a + b, a * k, saturating at H5SHUF_CHUNK_MAX */
static size_t sat_add(size_t a, size_t b)
{
    return a > H5SHUF_CHUNK_MAX - (b < H5SHUF_CHUNK_MAX ? b : H5SHUF_CHUNK_MAX) ? H5SHUF_CHUNK_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t k)
{
    return k && a > H5SHUF_CHUNK_MAX / k ? H5SHUF_CHUNK_MAX : a * k;
}

static int ours(H5Z_filter_t id)
{
#ifdef H5SHUF_HAVE_LZO
    if (id == H5SHUF_FILTER_LZO)
        return 1;
#endif
    return id == H5SHUF_FILTER_ZSTD || id == H5SHUF_FILTER_LZF || id == H5SHUF_FILTER_BSHUF || id == H5SHUF_FILTER_LZ4;
}

/* Record [lo, hi] for id in l (merged with a slot of the same id). */
static void note(struct h5shuf_filter_limits *l, H5Z_filter_t id, size_t lo, size_t hi)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->f[i].id == id) {
            l->f[i].lo = lo < l->f[i].lo ? lo : l->f[i].lo;
            l->f[i].hi = hi > l->f[i].hi ? hi : l->f[i].hi;
            return;
        }
    }
    if (l->n < H5SHUF_LIMIT_SLOTS)
        l->f[l->n++] = (struct h5shuf_filter_limit){id, lo, hi};
}

/* The most filter id (with its cd_values) makes of at most hi bytes. */
static size_t encoded_most(H5Z_filter_t id, size_t ncd, const unsigned *cd, size_t hi)
{
    switch (id) {
    case H5SHUF_FILTER_LZF:
    case H5SHUF_FILTER_LZO:
        return hi; /* kept only when it shrinks the chunk (else skipped: the chunk as it was) */
    case H5SHUF_FILTER_ZSTD:
        return ZSTD_compressBound(hi) < H5SHUF_CHUNK_MAX ? ZSTD_compressBound(hi) : H5SHUF_CHUNK_MAX;
    case H5SHUF_FILTER_LZ4: {
        size_t b = h5shuf_lz4_bound(hi, h5shuf_lz4_block(ncd, cd));
        return b == 0 || b > H5SHUF_CHUNK_MAX ? H5SHUF_CHUNK_MAX : b;
    }
    case H5SHUF_FILTER_BSHUF: {
        struct h5shuf_bshuf_params p;
        if (h5shuf_bshuf_params_from_cd(ncd, cd, &p) != H5SHUF_BSHUF_OK)
            break;
        size_t b = h5shuf_bshuf_bound(&p, sat_add(hi, p.elem_size)); /* (a partial element's bytes too) */
        return b == 0 ? H5SHUF_CHUNK_MAX : b < H5SHUF_CHUNK_MAX ? b : H5SHUF_CHUNK_MAX;
    }
    case H5Z_FILTER_DEFLATE:
    case H5Z_FILTER_SZIP:
    case H5Z_FILTER_NBIT:
    case H5Z_FILTER_SCALEOFFSET:
        /* HDF5's own codecs: zlib's compressBound, szip's and scale-offset's headers are far below this */
        return sat_add(sat_add(hi, hi / 8), 65536);
    default:
        break;
    }
    return sat_add(sat_mul(hi, 4), 65536); /* a filter h5shuf does not know: a generous bound */
}

/* Whether type's elements may be stored in another size than H5Tget_size says: variable-length data and
 * strings (H5Dget_type gives their memory form, a pointer or an hvl_t; on disk each is a length and a
 * global heap ID, 4 + the file's address size + 4 bytes) and references (an address in the file, whose
 * size the file sets; H5R_ref_t in memory from 1.12), at any depth of compounds and arrays. */
static int size_varies(hid_t type)
{
    switch (H5Tget_class(type)) {
    case H5T_VLEN:
    case H5T_REFERENCE:
        return 1;
    case H5T_STRING:
        return H5Tis_variable_str(type) != 0;
    case H5T_ARRAY: {
        hid_t base = H5Tget_super(type);
        int v = base < 0 || size_varies(base);
        if (base >= 0)
            H5Tclose(base);
        return v;
    }
    case H5T_COMPOUND: {
        int n = H5Tget_nmembers(type), v = n < 0;
        for (int i = 0; i < n && !v; i++) {
            hid_t m = H5Tget_member_type(type, (unsigned)i);
            v = m < 0 || size_varies(m);
            if (m >= 0)
                H5Tclose(m);
        }
        return v;
    }
    default:
        return 0;
    }
}

int h5shuf__chunk_limits(hid_t dcpl, hid_t ftype, struct h5shuf_filter_limits *l)
{
    memset(l, 0, sizeof *l);
    hsize_t cdims[H5S_MAX_RANK];
    size_t es = H5Tget_size(ftype);
    int rank = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED ? H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims) : -1;
    int nf = rank > 0 && es > 0 ? H5Pget_nfilters(dcpl) : -1;
    if (nf <= 0)
        return 0;
    size_t chunk = es;
    for (int k = 0; k < rank; k++)
        chunk = sat_mul(chunk, (size_t)(cdims[k] < H5SHUF_CHUNK_MAX ? cdims[k] : H5SHUF_CHUNK_MAX));
    size_t lo = chunk, hi = chunk; /* the sizes that enter filter i */
    if (size_varies(ftype)) {
        /* a vlen element, at least a pointer (8 bytes) in memory, takes at most 4 + 16 + 4 on disk; other
         * members keep their size: at most 3 times the memory size, and maybe less */
        lo = 1;
        hi = sat_mul(chunk, 3);
    }
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[16] = {0};
        size_t ncd = sizeof cd / sizeof *cd;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        if (id < 0)
            return 0;
        if (ours(id))
            note(l, id, lo, hi);
        if (ncd > sizeof cd / sizeof *cd)
            ncd = sizeof cd / sizeof *cd;
        if (id == H5Z_FILTER_SHUFFLE)
            continue; /* the same bytes, reordered */
        if (id == H5Z_FILTER_FLETCHER32) {
            lo = flags & H5Z_FLAG_OPTIONAL ? lo : sat_add(lo, 4);
            hi = sat_add(hi, 4);
            continue;
        }
        struct h5shuf_bshuf_params p;
        if (id == H5SHUF_FILTER_BSHUF && h5shuf_bshuf_params_from_cd(ncd, cd, &p) == H5SHUF_BSHUF_OK &&
            p.compression == H5SHUF_BSHUF_NONE)
            continue; /* transposed in place: the same size */
        size_t most = encoded_most(id, ncd, cd, hi);
        lo = 1;
        hi = most > hi ? most : hi; /* (an optional filter that fails leaves the chunk as it was) */
    }
    l->set = l->n > 0;
    return l->set;
}
