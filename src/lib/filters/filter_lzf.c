/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_lzf.c - LZF as an HDF5 filter (id 32000), the filter h5py builds in for compression="lzf".
 *
 * The format is h5py's (h5py/lzf/lzf_filter.c, read for its behaviour, none of its code taken): a chunk
 * is one raw LZF stream (Marc Lehmann's liblzf format: literal runs and back references, no header) and
 * nothing else.  cd_values are [filter revision, LZF API version, chunk bytes]: set_local fills the
 * first two when they are 0 and always sets the third, which the decoder uses as its first guess of the
 * output size.  A chunk whose stream would not fit in its own size is not compressed: the filter
 * returns 0 and HDF5, the filter being optional (h5py sets H5Z_FLAG_OPTIONAL), stores the chunk as it
 * is with the filter's bit set in the chunk's filter mask.  h5py bounds the stream by *buf_size, which
 * HDF5 makes equal to nbytes for the first filter of a pipeline; this module bounds it by nbytes always,
 * so the in-process filter and chunkio's workers (which know nbytes only) make the same bytes.
 *
 * The codec is Debian's liblzf 3.6 (lzf_compress / lzf_decompress, lengths as unsigned int, errors in
 * errno: E2BIG for an output buffer too small, EINVAL for a corrupt stream).  Its compressor may emit
 * other bytes than the copy bundled in h5py (hash table size, version), but every LZF stream reads with
 * any LZF decoder: compatibility is of the stream format, which the tests check against h5py both ways.
 * Buffers handed to or taken from HDF5 come from H5allocate_memory / H5free_memory.
 */
#include "filter_lzf.h"

#include <errno.h>
#include <limits.h>
#include <lzf.h>
#include <stdint.h>

#include "filter_limit.h"

#define LZF_ERR(...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, __VA_ARGS__)

/* Largest chunk HDF5 stores: 4 GiB - 1 bytes. */
#define CHUNK_MAX ((size_t)UINT32_MAX)

const H5Z_class2_t h5shuf_lzf_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5SHUF_FILTER_LZF,
    1, /* encoder present */
    1, /* decoder present */
    "lzf (h5shuf)",
    NULL, /* can_apply */
    h5shuf_lzf_set_local,
    (H5Z_func_t)h5shuf_lzf_filter,
};

size_t h5shuf_lzf_encode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity)
{
    if (src_bytes == 0 || src_bytes > UINT_MAX)
        return 0;
    if (dst_capacity > UINT_MAX)
        dst_capacity = UINT_MAX;
    return lzf_compress(src, (unsigned)src_bytes, dst, (unsigned)dst_capacity);
}

int h5shuf_lzf_decode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, size_t *dst_bytes)
{
    *dst_bytes = 0;
    if (src_bytes == 0 || src_bytes > UINT_MAX)
        return H5SHUF_LZF_ECORRUPT;
    if (dst_capacity > UINT_MAX)
        dst_capacity = UINT_MAX;
    errno = 0;
    unsigned n = lzf_decompress(src, (unsigned)src_bytes, dst, (unsigned)dst_capacity);
    if (n == 0)
        return errno == E2BIG ? H5SHUF_LZF_E2BIG : H5SHUF_LZF_ECORRUPT;
    *dst_bytes = n;
    return H5SHUF_LZF_OK;
}

herr_t h5shuf_lzf_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    (void)space;
    unsigned flags = 0, values[16] = {0};
    size_t n = sizeof values / sizeof *values;
    if (H5Pget_filter_by_id2(dcpl, H5SHUF_FILTER_LZF, &flags, &n, values, 0, NULL, NULL) < 0)
        return -1;
    if (n > sizeof values / sizeof *values) {
        LZF_ERR("lzf: %zu filter parameters, at most %zu expected", n, sizeof values / sizeof *values);
        return -1;
    }
    if (n < 3)
        n = 3; /* the first three are the filter's; any later ones are kept as they are */
    if (values[0] == 0)
        values[0] = H5SHUF_LZF_FILTER_REVISION;
    if (values[1] == 0)
        values[1] = LZF_VERSION;
    hsize_t dims[H5S_MAX_RANK];
    int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
    size_t tsize = H5Tget_size(type);
    if (rank < 0 || tsize == 0) {
        LZF_ERR("lzf: the dataset needs a chunked layout and a datatype with a size");
        return -1;
    }
    uint64_t bytes = tsize;
    for (int i = 0; i < rank; i++) {
        if (dims[i] != 0 && bytes > UINT32_MAX / dims[i]) {
            LZF_ERR("lzf: a chunk of 4 GiB or more cannot be stored");
            return -1;
        }
        bytes *= dims[i];
    }
    values[2] = (unsigned)bytes;
    return H5Pmodify_filter(dcpl, H5SHUF_FILTER_LZF, flags, n, values) < 0 ? -1 : 1;
}

static size_t compress_chunk(size_t nbytes, size_t *buf_size, void **buf)
{
    void *out = H5allocate_memory(nbytes ? nbytes : 1, 0);
    if (!out) {
        LZF_ERR("lzf: cannot allocate %zu bytes", nbytes);
        return 0;
    }
    size_t n = h5shuf_lzf_encode(*buf, nbytes, out, nbytes);
    if (n == 0) { /* no gain: HDF5 stores the chunk unfiltered (the filter is optional), or fails */
        H5free_memory(out);
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = nbytes;
    return n;
}

static size_t decompress_chunk(size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
                               void **buf)
{
    /* With a declared limit (h5shuf reading: filter_limit.h), one buffer of its most; else the first guess
     * is the chunk size set_local recorded (h5py does the same), or what HDF5 allocated, grown while liblzf
     * says it is too small; never more than any stream of nbytes decodes to (a back reference of 3 bytes
     * copies at most 264), so neither a corrupt cd_values[2] nor a corrupt stream asks for more than that. */
    size_t lo, hi;
    const int declared = h5shuf_filter_limit(H5SHUF_FILTER_LZF, &lo, &hi);
    const size_t most = declared ? hi : nbytes < CHUNK_MAX / 88 ? nbytes * 88 : CHUNK_MAX;
    size_t cap = declared ? hi : cd_nelmts >= 3 && cd_values[2] != 0 ? cd_values[2] : *buf_size;
    if (cap == 0)
        cap = nbytes;
    if (cap > most)
        cap = most;
    for (;;) {
        void *out = H5allocate_memory(cap, 0);
        if (!out) {
            LZF_ERR("lzf: cannot allocate %zu bytes", cap);
            return 0;
        }
        size_t n = 0;
        int r = h5shuf_lzf_decode(*buf, nbytes, out, cap, &n);
        if (r == H5SHUF_LZF_OK && n >= lo) {
            H5free_memory(*buf);
            *buf = out;
            *buf_size = cap;
            return n;
        }
        H5free_memory(out);
        if (r == H5SHUF_LZF_OK) /* a stream cut between two runs: fewer bytes than the chunk's */
            return REFUSE(*buf, nbytes, "lzf: chunk decodes to %zu bytes, %s %zu (corrupt chunk)", n,
                          lo == hi ? "not the chunk's" : "fewer than the chunk's", lo);
        if (r != H5SHUF_LZF_E2BIG)
            return REFUSE(*buf, nbytes, "lzf: invalid data for LZF decompression (corrupt chunk)");
        if (cap >= most)
            return REFUSE(*buf, nbytes, "lzf: chunk decodes to more than %zu bytes, %s (corrupt chunk)", most,
                          declared ? (lo == hi ? "the chunk's size" : "the most this chunk can hold")
                                   : "the most a stream of its size makes");
        cap = cap > most / 2 ? most : cap * 2;
    }
}

size_t h5shuf_lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t *buf_size, void **buf)
{
    if (nbytes == 0 || nbytes > CHUNK_MAX) {
        LZF_ERR("lzf: chunk of %zu bytes", nbytes);
        return 0;
    }
    if (flags & H5Z_FLAG_REVERSE)
        return decompress_chunk(cd_nelmts, cd_values, nbytes, buf_size, buf);
    return compress_chunk(nbytes, buf_size, buf);
}
