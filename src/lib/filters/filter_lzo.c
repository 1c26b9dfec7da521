/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_lzo.c - LZO as an HDF5 filter (id 305), the filter PyTables builds in for complib="lzo".
 *
 * The format is PyTables' (src/H5Zlzo.c, read for its behaviour, none of its code taken): a chunk is
 * one LZO1X stream (Markus Oberhumer's format: literal runs and matches, ending with the end-of-stream
 * marker) and nothing else: no header, no size, no checksum.  PyTables compresses with lzo1x_1_compress
 * whatever the level in cd_values[0], and keeps the stream only when it is shorter than the chunk
 * ("compressed larger than input": the filter fails, and HDF5, the filter being optional, stores the
 * chunk raw with the filter's bit set in its filter mask).  It decompresses with lzo1x_decompress_safe,
 * doubling its buffer on LZO_E_OUTPUT_OVERRUN and failing on any other error, LZO_E_INPUT_NOT_CONSUMED
 * (bytes after the end marker) included.
 *
 * The checksum.  H5Zlzo.c still carries code that appended to each chunk the Adler-32 of the uncompressed
 * bytes and their count (4 + 4 bytes, native byte order) for Tables of VERSION >= 2.0 (cd_values[1] >=
 * 20) and for every other kind of node (cd_values[2] != 0), but it is compiled out (#undef CHECKSUM)
 * since PyTables 0.8 (2004: "let the user select the fletcher32 checksum provided in HDF5").  PyTables
 * since then writes no checksum and cannot read a chunk that has one (its decoder sees 8 bytes after the
 * end marker and fails); h5shuf does the same (H5SHUF_LZO_ETRAILING, named in its message).
 *
 * The codec is Debian's liblzo2 2.10: the same compressor as PyTables' (PyTables links the system
 * liblzo2 too), so the same rows make the same bytes; the tests compare them with PyTables' chunks.
 * Buffers handed to or taken from HDF5 come from H5allocate_memory / H5free_memory.
 */
#include "filter_lzo.h"

#include <lzo1x.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "filter_limit.h"

_Static_assert(H5SHUF_LZO_WORK_BYTES == LZO1X_1_MEM_COMPRESS, "H5SHUF_LZO_WORK_BYTES is liblzo2's LZO1X_1_MEM_COMPRESS");
_Static_assert(sizeof(lzo_uint) == sizeof(size_t), "liblzo2's lengths are size_t");

#define LZO_ERR(...) H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, __VA_ARGS__)

/* Largest chunk HDF5 stores: 4 GiB - 1 bytes. */
#define CHUNK_MAX ((size_t)UINT32_MAX)

const H5Z_class2_t h5shuf_lzo_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5SHUF_FILTER_LZO,
    1, /* encoder present */
    1, /* decoder present */
    "lzo", /* PyTables' name, stored in each dataset's pipeline: PyTables recognises its filters by name
            * (tables/filters.py, Filters._from_leaf), and an output named otherwise reads as uncompressed */
    NULL, /* can_apply */
    NULL, /* set_local: none, as PyTables' (cd_values stay as written) */
    (H5Z_func_t)h5shuf_lzo_filter,
};

/* liblzo2 asks for lzo_init() before any other call (it checks that the library was built for this ABI). */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result = LZO_E_ERROR;

static void init_lzo(void)
{
    init_result = lzo_init();
}

static int ready(void)
{
    pthread_once(&init_once, init_lzo);
    return init_result == LZO_E_OK;
}

const char *h5shuf_lzo_strerror(int result)
{
    switch (result) {
    case H5SHUF_LZO_OK:
        return "ok";
    case H5SHUF_LZO_ECORRUPT:
        return "invalid data for LZO1X decompression (corrupt chunk)";
    case H5SHUF_LZO_E2BIG:
        return "chunk decompresses to more than its size (corrupt chunk)";
    case H5SHUF_LZO_ETRAILING:
        return "bytes after the end of the LZO1X stream (corrupt chunk, or a PyTables 0.5-0.7 checksum, "
               "which no PyTables since 0.8 reads)";
    case H5SHUF_LZO_NOGAIN:
        return "the chunk does not compress";
    case H5SHUF_LZO_EINVAL:
        return "invalid arguments (empty input or output buffer below the bound)";
    case H5SHUF_LZO_EINIT:
        return "liblzo2 failed its initialisation (lzo_init)";
    default:
        return "unknown result";
    }
}

size_t h5shuf_lzo_bound(size_t src_bytes)
{
    if (src_bytes > (SIZE_MAX - 67) / 17 * 16)
        return SIZE_MAX;
    return src_bytes + src_bytes / 16 + 64 + 3;
}

int h5shuf_lzo_encode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, void *work,
                      size_t *dst_bytes)
{
    *dst_bytes = 0;
    if (!ready())
        return H5SHUF_LZO_EINIT;
    if (src_bytes == 0 || dst_capacity < h5shuf_lzo_bound(src_bytes))
        return H5SHUF_LZO_EINVAL;
    lzo_uint n = 0;
    /* LZO1X-1 cannot fail on valid arguments (it returns LZO_E_OK always in 2.10); checked all the same */
    if (lzo1x_1_compress(src, src_bytes, dst, &n, work) != LZO_E_OK)
        return H5SHUF_LZO_EINVAL;
    if (n >= src_bytes) /* PyTables' rule: "z_dst_nbytes >= nbytes" fails, and the chunk is stored raw */
        return H5SHUF_LZO_NOGAIN;
    *dst_bytes = n;
    return H5SHUF_LZO_OK;
}

int h5shuf_lzo_decode(const void *src, size_t src_bytes, void *dst, size_t dst_capacity, size_t *dst_bytes)
{
    *dst_bytes = 0;
    if (!ready())
        return H5SHUF_LZO_EINIT;
    if (src_bytes == 0)
        return H5SHUF_LZO_ECORRUPT;
    lzo_uint n = dst_capacity;
    int r = lzo1x_decompress_safe(src, src_bytes, dst, &n, NULL);
    if (r == LZO_E_OUTPUT_OVERRUN)
        return H5SHUF_LZO_E2BIG;
    if (r == LZO_E_INPUT_NOT_CONSUMED)
        return H5SHUF_LZO_ETRAILING;
    if (r != LZO_E_OK)
        return H5SHUF_LZO_ECORRUPT;
    *dst_bytes = n;
    return H5SHUF_LZO_OK;
}

static size_t compress_chunk(size_t nbytes, size_t *buf_size, void **buf)
{
    size_t cap = h5shuf_lzo_bound(nbytes), n = 0;
    void *out = H5allocate_memory(cap, 0), *work = malloc(H5SHUF_LZO_WORK_BYTES);
    int r = out && work ? h5shuf_lzo_encode(*buf, nbytes, out, cap, work, &n) : H5SHUF_LZO_EINVAL;
    free(work);
    if (r != H5SHUF_LZO_OK) {
        if (out)
            H5free_memory(out);
        if (!out || !work)
            LZO_ERR("lzo: cannot allocate %zu bytes", cap + H5SHUF_LZO_WORK_BYTES);
        else if (r != H5SHUF_LZO_NOGAIN) /* no gain: HDF5 stores the chunk unfiltered (optional filter), or fails */
            LZO_ERR("lzo: %s", h5shuf_lzo_strerror(r));
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return n;
}

/* The size this thread's last chunk decoded to: the next one's first guess (PyTables keeps the same in a
 * static; per thread here, so that threads of one process do not race on it). */
static _Thread_local size_t last_decoded;

static size_t decompress_chunk(size_t nbytes, size_t *buf_size, void **buf)
{
    /* With a declared limit (h5shuf reading: filter_limit.h), one buffer of its most.  Else never more
     * than any LZO1X stream of nbytes decodes to (a run of zero bytes lengthens a match by 255 a byte), so
     * a corrupt stream asks for no more memory than that. */
    size_t lo, hi;
    const int declared = h5shuf_filter_limit(H5SHUF_FILTER_LZO, &lo, &hi);
    const size_t most = declared ? hi : nbytes < (CHUNK_MAX - 4096) / 256 ? nbytes * 256 + 4096 : CHUNK_MAX;
    size_t cap = last_decoded > *buf_size ? last_decoded : *buf_size;
    if (cap < nbytes)
        cap = nbytes;
    if (declared || cap > most)
        cap = most;
    for (;;) {
        void *out = H5allocate_memory(cap, 0);
        if (!out) {
            LZO_ERR("lzo: cannot allocate %zu bytes", cap);
            return 0;
        }
        size_t n = 0;
        int r = h5shuf_lzo_decode(*buf, nbytes, out, cap, &n);
        if (r == H5SHUF_LZO_OK && n >= lo) {
            H5free_memory(*buf);
            *buf = out;
            *buf_size = cap;
            last_decoded = n;
            return n;
        }
        H5free_memory(out);
        if (r == H5SHUF_LZO_OK)
            return REFUSE(*buf, nbytes, "lzo: chunk decodes to %zu bytes, %s %zu (corrupt chunk)", n,
                          lo == hi ? "not the chunk's" : "fewer than the chunk's", lo);
        if (r != H5SHUF_LZO_E2BIG)
            return REFUSE(*buf, nbytes, "lzo: %s", h5shuf_lzo_strerror(r));
        if (cap >= most)
            return REFUSE(*buf, nbytes, "lzo: chunk decodes to more than %zu bytes, %s (corrupt chunk)", most,
                          declared ? (lo == hi ? "the chunk's size" : "the most this chunk can hold")
                                   : "the most a stream of its size makes");
        cap = cap > most / 2 ? most : cap * 2;
    }
}

size_t h5shuf_lzo_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t *buf_size, void **buf)
{
    (void)cd_nelmts; /* PyTables' [level, VERSION x 10, node kind]: none changes the stream */
    (void)cd_values;
    if (nbytes == 0 || nbytes > CHUNK_MAX) {
        LZO_ERR("lzo: chunk of %zu bytes", nbytes);
        return 0;
    }
    if (flags & H5Z_FLAG_REVERSE)
        return decompress_chunk(nbytes, buf_size, buf);
    return compress_chunk(nbytes, buf_size, buf);
}
