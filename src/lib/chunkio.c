/*
 * chunkio.c - reading and writing rows chunk by chunk, with the filters run by h5shuf's own threads.
 *
 * HDF5 runs a dataset's filter pipeline inside its global lock, on one core.  For the pipelines h5shuf
 * can run itself (shuffle, deflate, zstd, lzf, bitshuffle and fletcher32, DESIGN.md section 4) rows move
 * instead as raw chunks: the job's thread reads each stored chunk with H5Dread_chunk and the pool's
 * threads decode it; on the way out the pool encodes whole chunks and the job's thread stores them with
 * H5Dwrite_chunk, in chunk order.  Everything else (contiguous layout, other filters, chunks that split
 * a row, variable-length types, unallocated chunks) goes through H5Dread/H5Dwrite as before.
 *
 * The encodings are the filters' own: shuffle and fletcher32 as HDF5 defines them (H5Zshuffle.c,
 * H5checksum.c), zstd as our filter 32015 writes it (one frame per chunk, ZSTD_compress at the level in
 * cd_values[0]), deflate as a zlib stream (RFC 1950) made by libdeflate at the level in cd_values[0],
 * which any zlib reads, lzf and bitshuffle as filter_lzf.c and filter_bshuf.c make them (an lzf chunk
 * that does not shrink is stored with lzf skipped in its filter mask, as HDF5 does for an optional
 * filter that fails).  A chunk's bytes depend on its rows and the pipeline only, never on the number
 * of threads, and chunks are stored in the same order whatever the thread count: the file is the same.
 * A partial last chunk is stored whole, its unused rows zero.
 *
 * Buffers: a chunk's rows can be large (a row of 16 MiB is one chunk), and the budget may hold only a
 * few, so chunkio holds only the buffers a chunk in flight needs.  A read keeps the stored bytes in a raw
 * buffer of about the stored size; a write makes them in a raw buffer of stage_cap_for(chunk) bytes, room
 * for any encoding.  A task that covers its whole chunk decodes its last step straight into the caller's
 * rows and encodes its first step straight from them, so a single codec (deflate, zstd, lzf) needs no
 * other buffer.  Steps in between, a partial chunk, and a fletcher32 that would append to or strip the
 * rows themselves go through stage buffers, which each thread makes itself when a task it runs needs
 * them (one for shuffle+deflate, at most two) and keeps for the next.  Raw buffers belong to task slots
 * and are grown by the job's thread before the task is queued; stage buffers are touched by their own
 * thread only; so no buffer is ever resized under a running task (which is why nothing waits for pass
 * 1's queued encodes before a transfer of larger chunks).  Buffers only grow, to the largest chunk seen.
 */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "chunkio.h"
#include "fault.h"
#include "filter_bshuf.h"
#include "filter_lzf.h"
#include "filter_zstd.h"
#include "pool.h"
#include "rows.h"

/* Task slots per thread: the job's thread reads (or writes) this far ahead of the decoders (encoders). */
#define SLOTS_PER_THREAD 2u

/* One thread's codec state; its contexts are made by the thread itself on first use. */
struct h5shuf_codec_ctx {
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
    struct libdeflate_compressor *dc;
    int dc_level;
    struct libdeflate_decompressor *dd;
    /* Intermediate results of pipelines of several steps: made and grown by this thread only (stage()),
     * stage_cap[s] bytes; NULL until a pipeline needs it. */
    unsigned char *stage[2];
    size_t stage_cap[2];
};

/* A chunk in flight: decode raw into rows of dst, or encode rows of src into out. */
struct chunk_task {
    struct h5shuf_task task; /* first: the pool hands back this pointer */
    struct h5shuf_chunkio *cio;
    const struct h5shuf_pipeline *pl;
    int encode;
    unsigned char *raw; /* stored bytes: read (decode; raw_cap >= the stored size) or made (encode; raw_cap >=
                         * stage_cap_for(chunk_bytes)); grown by the job's thread while the task is idle */
    size_t raw_cap, raw_n;
    uint32_t mask;      /* filters skipped in the stored chunk (H5Dread_chunk's mask) */
    uint64_t chunk_row; /* first row of the chunk in the dataset */
    uint64_t from, rows; /* rows [from, from + rows) of the chunk are in the caller's buffer at ... */
    unsigned char *user; /* ... this address */
    char err[160];
};

struct h5shuf_chunkio {
    struct h5shuf_pool *pool;
    unsigned nthreads;
    struct h5shuf_codec_ctx *ctx; /* nthreads */
    struct chunk_task *slot; /* nslots; a slot's raw buffer is made the first time it is used */
    unsigned nslots;
};

/* ---- the filters ----------------------------------------------------------------------------------- */

/* HDF5's Fletcher-32 (H5checksum.c, H5_checksum_fletcher32): 16-bit big-endian words, the odd last byte
 * as the high byte of a word, sums folded every 360 words. */
static uint32_t fletcher32(const unsigned char *data, size_t len)
{
    size_t words = len / 2;
    uint32_t sum1 = 0, sum2 = 0;
    while (words) {
        size_t n = words > 360 ? 360 : words;
        words -= n;
        do {
            sum1 += (uint32_t)((data[0] << 8) | data[1]);
            data += 2;
            sum2 += sum1;
        } while (--n);
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if (len % 2) {
        sum1 += (uint32_t)(*data << 8);
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    return (sum2 << 16) | sum1;
}

/* HDF5's byte shuffle (H5Zshuffle.c): byte j of element i goes to j * nelem + i; a tail shorter than
 * an element stays in place.  Element size <= 1 or a single element: unchanged. */
static void shuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t size, int reverse)
{
    size_t nelem = size > 1 ? n / size : 0;
    if (nelem <= 1) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t j = 0; j < size; j++) {
        unsigned char *plane = (reverse ? (unsigned char *)src : dst) + j * nelem;
        for (size_t i = 0; i < nelem; i++) {
            if (reverse)
                dst[i * size + j] = plane[i];
            else
                plane[i] = src[i * size + j];
        }
    }
    size_t tail = n - nelem * size;
    memcpy(dst + nelem * size, src + nelem * size, tail);
}

static size_t stage_cap_for(size_t chunk_bytes)
{
    /* above every encoder's bound (zstd: n + n/256 + 64 KiB-ish; deflate: 5 bytes a 64 KiB block + 6) */
    return chunk_bytes + chunk_bytes / 16 + 4096;
}

/* Make *buf (*cap bytes) hold at least need bytes, growing it to want (>= need) bytes when it is smaller;
 * a buffer only grows, and is kept for the next chunk.  Its contents need not survive (they are written
 * before they are read).  0, or -1 when out of memory (*buf unchanged). */
static int grow(unsigned char **buf, size_t *cap, size_t need, size_t want)
{
    if (*cap >= need)
        return 0;
    unsigned char *b = realloc(*buf, want);
    if (!b)
        return -1;
    *buf = b;
    *cap = want;
    return 0;
}

/* How a filter step ended: its output in the step's output buffer (STEP_OUT), in its input (STEP_IN:
 * fletcher32 only adds or removes its checksum), skipped (STEP_SKIPPED: lzf could not shrink the chunk and
 * the filter is optional), or failed (STEP_ERROR, with a message in err). */
enum step { STEP_ERROR = -1, STEP_OUT, STEP_IN, STEP_SKIPPED };

/* Stage buffer s of the thread running t, at least cap bytes.  Made or grown here, by that thread (no
 * other thread touches it), when a pipeline first needs it; NULL with t->err when out of memory, which
 * fails the task like a codec error. */
static unsigned char *stage(struct chunk_task *t, struct h5shuf_codec_ctx *c, int s, size_t cap)
{
    if (grow(&c->stage[s], &c->stage_cap[s], cap, cap) < 0) {
        snprintf(t->err, sizeof t->err, "out of memory for a chunk buffer of %zu bytes", cap);
        return NULL;
    }
    return c->stage[s];
}

/* Check and remove the fletcher32 checksum at the end of in (*n bytes). */
static enum step fletcher32_strip(const unsigned char *in, size_t *n, char *err, size_t errcap)
{
    if (*n < 4) {
        snprintf(err, errcap, "fletcher32: chunk too short");
        return STEP_ERROR;
    }
    *n -= 4;
    const size_t m = *n;
    uint32_t stored = (uint32_t)in[m] | (uint32_t)in[m + 1] << 8 | (uint32_t)in[m + 2] << 16 | (uint32_t)in[m + 3] << 24;
    uint32_t sum = fletcher32(in, m);
    /* HDF5 before 1.6.3 stored the sum byte-swapped; HDF5 accepts both */
    uint32_t swapped = (stored >> 24) | ((stored >> 8) & 0xff00) | ((stored << 8) & 0xff0000) | (stored << 24);
    if (sum != stored && sum != swapped) {
        snprintf(err, errcap, "fletcher32: checksum mismatch (corrupt chunk)");
        return STEP_ERROR;
    }
    return STEP_IN;
}

/* Undo filter f on in (*n bytes) into out (cap bytes; never written past cap: a chunk that decodes to
 * more is corrupt); *n becomes the decoded size.  fletcher32 only reads in (out may be NULL). */
static enum step decode_step(const struct h5shuf_pipeline_filter *f, struct h5shuf_codec_ctx *c,
                             const unsigned char *in, size_t *n, unsigned char *out, size_t cap, char *err,
                             size_t errcap)
{
    switch (f->id) {
    case H5Z_FILTER_FLETCHER32:
        return fletcher32_strip(in, n, err, errcap);
    case H5Z_FILTER_DEFLATE: {
        if (!c->dd && !(c->dd = libdeflate_alloc_decompressor())) {
            snprintf(err, errcap, "deflate: out of memory");
            return STEP_ERROR;
        }
        size_t got = 0;
        enum libdeflate_result r = libdeflate_zlib_decompress(c->dd, in, *n, out, cap, &got);
        if (r != LIBDEFLATE_SUCCESS) {
            snprintf(err, errcap, "deflate: %s",
                     r == LIBDEFLATE_INSUFFICIENT_SPACE ? "chunk decompresses to more than its size (corrupt chunk)"
                                                        : "corrupt data (inflate failed)");
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_ZSTD: {
        if (!c->zd && !(c->zd = ZSTD_createDCtx())) {
            snprintf(err, errcap, "zstd: out of memory");
            return STEP_ERROR;
        }
        size_t got = ZSTD_decompressDCtx(c->zd, out, cap, in, *n);
        if (ZSTD_isError(got)) {
            snprintf(err, errcap, "zstd: corrupt data: %s", ZSTD_getErrorName(got));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_LZF: {
        size_t got;
        int r = h5shuf_lzf_decode(in, *n, out, cap, &got);
        if (r != H5SHUF_LZF_OK) {
            snprintf(err, errcap, "lzf: %s",
                     r == H5SHUF_LZF_E2BIG ? "chunk decompresses to more than its size (corrupt chunk)"
                                           : "invalid data for LZF decompression (corrupt chunk)");
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_BSHUF: {
        struct h5shuf_bshuf_params bp;
        size_t got = 0;
        int r = h5shuf_bshuf_params_from_cd(f->ncd, f->cd, &bp);
        if (r == H5SHUF_BSHUF_OK)
            r = h5shuf_bshuf_decode(&bp, in, *n, out, cap, &got);
        if (r != H5SHUF_BSHUF_OK) {
            snprintf(err, errcap, "bitshuffle: %s", h5shuf_bshuf_strerror(r));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5Z_FILTER_SHUFFLE:
        if (*n > cap) {
            snprintf(err, errcap, "shuffle: chunk larger than expected (corrupt chunk)");
            return STEP_ERROR;
        }
        shuffle(in, out, *n, f->elem_size, 1);
        return STEP_OUT;
    default:
        snprintf(err, errcap, "filter %d cannot be decoded here", (int)f->id);
        return STEP_ERROR;
    }
}

/* Decode t->raw into the chunk's rows; 0 or -1 with t->err.
 *
 * Steps run from the last filter to the first, those of the stored mask skipped.  When the task wants
 * the whole chunk and the last step to run makes new output, that step writes straight into the caller's
 * rows (chunk_bytes of room: a longer result fails the step as corrupt); every other output goes to a
 * stage buffer, alternating between two, and the rows wanted are copied from the last.  A last step that
 * is fletcher32 leaves its checksum's 4 bytes behind the chunk, which the rows have no room for: the
 * output before it goes to a stage.  fletcher32 only reads.  So single codecs need no stage, shuffle +
 * codec one. */
static int decode(struct chunk_task *t, struct h5shuf_codec_ctx *c)
{
    const struct h5shuf_pipeline *pl = t->pl;
    const size_t cap = stage_cap_for(pl->chunk_bytes);
    int last = -1; /* the last step to run: the first filter not skipped */
    for (int i = 0; i < pl->nfilters && last < 0; i++)
        if (!(t->mask & (1u << i)))
            last = i;
    const int into_user =
        t->from == 0 && t->rows == pl->chunk_rows && last >= 0 && pl->f[last].id != H5Z_FILTER_FLETCHER32;
    const unsigned char *in = t->raw;
    size_t n = t->raw_n;
    int s = 0; /* the stage the next output goes to; in, when a stage, is the other */
    for (int i = pl->nfilters - 1; i >= 0; i--) {
        if (t->mask & (1u << i))
            continue;
        unsigned char *out = NULL;
        size_t out_cap = 0;
        if (i == last && into_user) {
            out = t->user;
            out_cap = pl->chunk_bytes;
        } else if (pl->f[i].id != H5Z_FILTER_FLETCHER32) {
            if (!(out = stage(t, c, s, cap)))
                return -1;
            out_cap = cap;
        }
        enum step r = decode_step(&pl->f[i], c, in, &n, out, out_cap, t->err, sizeof t->err);
        if (r == STEP_ERROR)
            return -1;
        if (r == STEP_OUT) {
            in = out;
            s ^= 1;
        }
    }
    if (n != pl->chunk_bytes) {
        snprintf(t->err, sizeof t->err, "chunk of %zu bytes decodes to %zu (corrupt chunk)", pl->chunk_bytes, n);
        return -1;
    }
    if (in != t->user) /* a partial chunk, no codec, or fletcher32 last */
        memcpy(t->user, in + t->from * pl->row_bytes, t->rows * pl->row_bytes);
    return 0;
}

/* Apply filter f to in (*n bytes) into out (cap bytes; in has 4 bytes of room past *n); *n becomes the
 * encoded size. */
static enum step encode_step(const struct h5shuf_pipeline_filter *f, struct h5shuf_codec_ctx *c, unsigned char *in,
                             size_t *n, unsigned char *out, size_t cap, char *err, size_t errcap)
{
    switch (f->id) {
    case H5Z_FILTER_FLETCHER32: {
        uint32_t sum = fletcher32(in, *n);
        unsigned char le[4] = {(unsigned char)sum, (unsigned char)(sum >> 8), (unsigned char)(sum >> 16), (unsigned char)(sum >> 24)};
        memcpy(in + *n, le, 4); /* stage buffers have room past any encoding */
        *n += 4;
        return STEP_IN;
    }
    case H5Z_FILTER_DEFLATE: {
        if (!c->dc || c->dc_level != f->level) {
            libdeflate_free_compressor(c->dc);
            c->dc_level = f->level;
            if (!(c->dc = libdeflate_alloc_compressor(c->dc_level))) {
                snprintf(err, errcap, "deflate: out of memory");
                return STEP_ERROR;
            }
        }
        size_t got = libdeflate_zlib_compress(c->dc, in, *n, out, cap - 4);
        if (got == 0) {
            snprintf(err, errcap, "deflate: output larger than its bound");
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_ZSTD: {
        if (!c->zc && !(c->zc = ZSTD_createCCtx())) {
            snprintf(err, errcap, "zstd: out of memory");
            return STEP_ERROR;
        }
        size_t got = ZSTD_compressCCtx(c->zc, out, cap - 4, in, *n, f->level);
        if (ZSTD_isError(got)) {
            snprintf(err, errcap, "zstd: %s", ZSTD_getErrorName(got));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_LZF: {
        size_t got = h5shuf_lzf_encode(in, *n, out, *n); /* must shrink, or fit at least: h5py's rule */
        if (got == 0) {
            if (!(f->flags & H5Z_FLAG_OPTIONAL)) {
                snprintf(err, errcap, "lzf: the chunk does not compress and the filter is mandatory");
                return STEP_ERROR;
            }
            return STEP_SKIPPED; /* stored as it is, as HDF5 stores it when an optional filter fails */
        }
        *n = got;
        return STEP_OUT;
    }
    case H5SHUF_FILTER_BSHUF: {
        struct h5shuf_bshuf_params bp;
        size_t got = 0;
        int r = h5shuf_bshuf_params_from_cd(f->ncd, f->cd, &bp);
        if (r == H5SHUF_BSHUF_OK)
            r = h5shuf_bshuf_encode(&bp, in, *n, out, cap - 4, &got);
        if (r != H5SHUF_BSHUF_OK) {
            snprintf(err, errcap, "bitshuffle: %s", h5shuf_bshuf_strerror(r));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
    case H5Z_FILTER_SHUFFLE:
        shuffle(in, out, *n, f->elem_size, 0);
        return STEP_OUT;
    default:
        snprintf(err, errcap, "filter %d cannot be encoded here", (int)f->id);
        return STEP_ERROR;
    }
}

/* Encode the chunk's rows into t->raw (raw_n bytes); 0 or -1 with t->err.
 *
 * The last filter that makes new output (any but fletcher32) writes straight into t->raw, and fletcher32
 * after it appends there.  A whole chunk is read in place by the first filter, unless that is fletcher32,
 * which appends its checksum to its input (the caller's rows have no room, and are not ours to write); a
 * partial one is first copied, zero-padded, into a stage.  Outputs in between alternate between two stage
 * buffers, each with 4 bytes of room for a fletcher32 after it.  So single codecs need no stage, shuffle +
 * codec one. */
static int encode(struct chunk_task *t, struct h5shuf_codec_ctx *c)
{
    const struct h5shuf_pipeline *pl = t->pl;
    const size_t cap = stage_cap_for(pl->chunk_bytes);
    size_t n = pl->chunk_bytes, used = t->rows * pl->row_bytes;
    int last = -1; /* the last filter that makes new output */
    for (int i = 0; i < pl->nfilters; i++)
        if (pl->f[i].id != H5Z_FILTER_FLETCHER32)
            last = i;
    unsigned char *in;
    int s = 0; /* the stage the next output goes to; in, when a stage, is the other */
    if (used == n && last >= 0 && pl->f[0].id != H5Z_FILTER_FLETCHER32) {
        in = t->user; /* only read: of the steps that may see it, only fletcher32 writes, and not here */
    } else {
        /* the chunk made in t->raw when no filter makes new output (fletcher32 appends there), else in a stage */
        if (last < 0)
            in = t->raw;
        else if (!(in = stage(t, c, s, cap)))
            return -1;
        else
            s = 1;
        memcpy(in, t->user, used);
        memset(in + used, 0, n - used);
    }
    t->mask = 0; /* filters skipped in the stored chunk */
    for (int i = 0; i < pl->nfilters; i++) {
        unsigned char *out = NULL;
        if (i == last) {
            out = t->raw;
        } else if (pl->f[i].id != H5Z_FILTER_FLETCHER32) {
            if (!(out = stage(t, c, s, cap)))
                return -1;
        } else if (in == t->user) {
            /* every filter before it was an lzf that could not shrink the rows: give the checksum room */
            unsigned char *to = i < last ? stage(t, c, s, cap) : t->raw;
            if (!to)
                return -1;
            memcpy(to, in, n);
            if (to != t->raw)
                s ^= 1;
            in = to;
        }
        enum step r = encode_step(&pl->f[i], c, in, &n, out, cap, t->err, sizeof t->err);
        if (r == STEP_ERROR)
            return -1;
        if (r == STEP_SKIPPED)
            t->mask |= 1u << i;
        if (r == STEP_OUT) {
            in = out;
            if (out != t->raw)
                s ^= 1;
        }
    }
    if (in != t->raw) /* the last codec was an lzf that could not shrink the chunk */
        memcpy(t->raw, in, n);
    t->raw_n = n;
    return 0;
}

static void chunk_task_run(struct h5shuf_task *task, unsigned worker)
{
    struct chunk_task *t = (struct chunk_task *)task;
    struct h5shuf_codec_ctx *c = &t->cio->ctx[worker];
    t->err[0] = '\0';
    if (t->encode)
        encode(t, c);
    else
        decode(t, c);
}

/* ---- the pipeline of a dataset ------------------------------------------------------------------------ */

int h5shuf__pipeline_probe(hid_t dset, hid_t ftype, struct h5shuf_pipeline *pl)
{
    memset(pl, 0, sizeof *pl);
    hid_t dcpl = H5Dget_create_plist(dset);
    hid_t space = H5Dget_space(dset);
    int ok = dcpl >= 0 && space >= 0;
    hsize_t dims[H5S_MAX_RANK];
    int rank = ok ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
    size_t tsize = H5Tget_size(ftype);
    ok = ok && rank >= 1 && tsize > 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Tdetect_class(ftype, H5T_VLEN) == 0 &&
         !(H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) > 0);
    ok = ok && H5Pget_chunk(dcpl, H5S_MAX_RANK, pl->cdims) == rank;
    pl->rank = rank;
    pl->row_bytes = tsize;
    for (int k = 1; ok && k < rank; k++) {
        ok = pl->cdims[k] == dims[k]; /* a chunk holds whole rows */
        pl->row_bytes *= dims[k];
    }
    int nf = ok ? H5Pget_nfilters(dcpl) : 0;
    ok = ok && nf >= 0 && nf <= H5SHUF_PIPELINE_MAX;
    for (int i = 0; ok && i < nf; i++) {
        unsigned flags, cd[8] = {0};
        size_t ncd = 8;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        pl->f[i].id = id;
        pl->f[i].flags = flags;
        pl->f[i].ncd = ncd < 8 ? ncd : 8;
        memcpy(pl->f[i].cd, cd, sizeof cd);
        switch (id) {
        case H5Z_FILTER_SHUFFLE:
            pl->f[i].elem_size = ncd > 0 && cd[0] > 0 ? cd[0] : tsize;
            break;
        case H5Z_FILTER_DEFLATE:
            pl->f[i].level = ncd > 0 && cd[0] <= 9 ? (int)cd[0] : 6;
            break;
        case H5SHUF_FILTER_ZSTD: {
            int level = ncd > 0 ? (int)cd[0] : 0; /* as the filter reads it: clamped */
            pl->f[i].level = level < ZSTD_minCLevel() ? ZSTD_minCLevel() : level > ZSTD_maxCLevel() ? ZSTD_maxCLevel() : level;
            break;
        }
        case H5Z_FILTER_FLETCHER32:
        case H5SHUF_FILTER_LZF:
            break;
        case H5SHUF_FILTER_BSHUF: {
            struct h5shuf_bshuf_params bp;
            ok = h5shuf_bshuf_params_from_cd(pl->f[i].ncd, cd, &bp) == H5SHUF_BSHUF_OK;
            break;
        }
        default:
            ok = 0;
        }
    }
    pl->nfilters = ok ? nf : 0;
    if (ok) {
        pl->chunk_rows = pl->cdims[0];
        pl->chunk_bytes = (size_t)(pl->chunk_rows * pl->row_bytes);
        ok = pl->chunk_rows > 0 && pl->chunk_bytes / pl->row_bytes == pl->chunk_rows && pl->chunk_bytes < (UINT32_C(1) << 31);
    }
    /* bitshuffle with small blocks can outgrow the stage buffers (4 bytes and LZ4's margin a block):
     * such pipelines are left to HDF5 */
    for (int i = 0; ok && i < pl->nfilters; i++) {
        struct h5shuf_bshuf_params bp;
        if (pl->f[i].id == H5SHUF_FILTER_BSHUF && h5shuf_bshuf_params_from_cd(pl->f[i].ncd, pl->f[i].cd, &bp) == H5SHUF_BSHUF_OK) {
            size_t bound = h5shuf_bshuf_bound(&bp, pl->chunk_bytes + pl->chunk_bytes / 32);
            ok = bound > 0 && bound <= stage_cap_for(pl->chunk_bytes) - 4;
        }
    }
    pl->direct = ok;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return dcpl >= 0 && space >= 0 ? 0 : -1;
}

/* ---- the job's chunk I/O state -------------------------------------------------------------------- */

int h5shuf__chunkio_create(unsigned nthreads, struct h5shuf_chunkio **out)
{
    *out = NULL;
    struct h5shuf_chunkio *cio = calloc(1, sizeof *cio);
    if (!cio)
        return H5SHUF_ENOMEM;
    int st = h5shuf__pool_create(nthreads, &cio->pool);
    if (st == H5SHUF_OK) {
        cio->nthreads = h5shuf__pool_threads(cio->pool);
        cio->ctx = calloc(cio->nthreads, sizeof *cio->ctx);
        cio->nslots = SLOTS_PER_THREAD * cio->nthreads;
        cio->slot = calloc(cio->nslots, sizeof *cio->slot);
        if (!cio->ctx || !cio->slot)
            st = H5SHUF_ENOMEM;
    }
    if (st != H5SHUF_OK) {
        h5shuf__chunkio_free(cio);
        return st;
    }
    *out = cio;
    return H5SHUF_OK;
}

void h5shuf__chunkio_free(struct h5shuf_chunkio *cio)
{
    if (!cio)
        return;
    h5shuf__pool_free(cio->pool); /* joins the workers: nothing runs past here */
    for (unsigned i = 0; cio->ctx && i < cio->nthreads; i++) {
        struct h5shuf_codec_ctx *c = &cio->ctx[i];
        ZSTD_freeCCtx(c->zc);
        ZSTD_freeDCtx(c->zd);
        libdeflate_free_compressor(c->dc);
        libdeflate_free_decompressor(c->dd);
        free(c->stage[0]);
        free(c->stage[1]);
    }
    for (unsigned i = 0; cio->slot && i < cio->nslots; i++)
        free(cio->slot[i].raw);
    free(cio->ctx);
    free(cio->slot);
    free(cio);
}

unsigned h5shuf__chunkio_threads(const struct h5shuf_chunkio *cio)
{
    return cio ? cio->nthreads : 1;
}

void h5shuf__chunkio_held(const struct h5shuf_chunkio *cio, size_t *raw_bytes, unsigned *stages, size_t *stage_bytes)
{
    *raw_bytes = *stage_bytes = 0;
    *stages = 0;
    for (unsigned i = 0; i < cio->nslots; i++)
        *raw_bytes += cio->slot[i].raw_cap;
    /* the threads' writes happened before their tasks were marked done, under the pool's lock, which
     * the caller's wait for them took */
    for (unsigned i = 0; i < cio->nthreads; i++)
        for (int s = 0; s < 2; s++)
            if (cio->ctx[i].stage[s]) {
                (*stages)++;
                *stage_bytes += cio->ctx[i].stage_cap[s];
            }
}

static void push_error(const char *msg)
{
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER, "%s", msg);
}

static void push_nomem(size_t bytes)
{
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
             "out of memory for a chunk buffer of %zu bytes", bytes);
}

/* Give task t (idle: no worker uses its buffer) a raw buffer for the chunk at off of dset, as stored, and
 * set t->raw_n.  1: ready to read; 0: HDF5 must read these rows (the chunk is not allocated, or larger than
 * any encoding of it, cap bytes: corrupt, and HDF5 says so); -1: out of memory (pushed). */
static int raw_for_read(struct chunk_task *t, hid_t dset, const hsize_t *off, size_t cap)
{
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dset, off, &size) < 0 || size == 0 || size > cap) {
        H5Eclear2(H5E_DEFAULT);
        return 0;
    }
    /* an eighth more than this chunk: the next chunks of the dataset, a little larger, fit too (a buffer
     * grown by a few bytes at every chunk may move each time, leaving holes: 36 MiB more peak RSS when
     * 16 MiB rows of gzip-1 were shuffled) */
    size_t want = (size_t)size + (size_t)size / 8;
    if (grow(&t->raw, &t->raw_cap, (size_t)size, want < cap ? want : cap) < 0) {
        push_nomem((size_t)size);
        return -1;
    }
    t->raw_n = (size_t)size;
    return 1;
}

/* Wait for slot t; on a write, store its chunk.  -1 (with an HDF5 error pushed) when it failed. */
static int finish(struct h5shuf_chunkio *cio, hid_t dset, struct chunk_task *t, int ok)
{
    if (!t->task.submitted)
        return 0;
    h5shuf__pool_wait(cio->pool, &t->task);
    t->task.submitted = 0;
    if (!ok)
        return -1;
    if (t->err[0]) {
        push_error(t->err);
        return -1;
    }
    if (t->encode) {
        hsize_t off[H5S_MAX_RANK] = {0};
        off[0] = t->chunk_row;
        if (H5SHUF_FAULT() || H5Dwrite_chunk(dset, H5P_DEFAULT, t->mask, off, t->raw_n, t->raw) < 0)
            return -1;
    }
    return 0;
}

/* Move rows [start, start + count) between dset and buf chunk by chunk (see the file comment). */
static herr_t transfer(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, const struct h5shuf_pipeline *pl,
                       uint64_t start, uint64_t count, unsigned char *buf, int encode)
{
    const size_t cap = stage_cap_for(pl->chunk_bytes);
    int ok = 1;
    uint64_t end = start + count;
    unsigned k = 0;
    for (uint64_t c = start / pl->chunk_rows * pl->chunk_rows; c < end && ok; c += pl->chunk_rows, k = (k + 1) % cio->nslots) {
        struct chunk_task *t = &cio->slot[k];
        ok = finish(cio, dset, t, ok) == 0;
        if (!ok)
            break;
        uint64_t lo = c > start ? c : start, hi = c + pl->chunk_rows < end ? c + pl->chunk_rows : end;
        t->cio = cio;
        t->pl = pl;
        t->encode = encode;
        t->chunk_row = c;
        t->from = lo - c;
        t->rows = hi - lo;
        t->user = buf + (lo - start) * pl->row_bytes;
        t->task.run = chunk_task_run;
        t->err[0] = '\0';
        if (!encode) {
            hsize_t off[H5S_MAX_RANK] = {0};
            off[0] = c;
            int r = raw_for_read(t, dset, off, cap);
            if (r == 0) { /* unallocated (fill values) or corrupt: let HDF5 read these rows */
                ok = h5shuf__read_rows(dset, ftype, lo, hi - lo, t->user) >= 0;
                continue;
            }
            if (r < 0 || H5SHUF_FAULT() || H5Dread_chunk(dset, H5P_DEFAULT, off, &t->mask, t->raw) < 0) {
                ok = 0;
                break;
            }
        } else if (grow(&t->raw, &t->raw_cap, cap, cap) < 0) {
            push_nomem(cap);
            ok = 0;
            break;
        }
        h5shuf__pool_submit(cio->pool, &t->task);
    }
    /* Finish every slot in order (after a failure too: no task may outlive the call). */
    for (unsigned i = 0; i < cio->nslots; i++) {
        struct chunk_task *t = &cio->slot[(k + i) % cio->nslots];
        if (finish(cio, dset, t, ok) < 0)
            ok = 0;
    }
    return ok ? 0 : -1;
}

herr_t h5shuf__chunkio_read(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count, void *buf)
{
    struct h5shuf_pipeline pl;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pl) < 0 || !pl.direct)
        return h5shuf__read_rows(dset, ftype, start, count, buf);
    return transfer(cio, dset, ftype, &pl, start, count, buf, 0);
}

herr_t h5shuf__chunkio_write(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                             const void *buf, int extend)
{
    struct h5shuf_pipeline pl;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pl) < 0 || !pl.direct || start % pl.chunk_rows != 0)
        return h5shuf__write_rows(dset, ftype, start, count, buf, extend);
    if (extend && h5shuf__extend_rows(dset, start + count) < 0)
        return -1;
    return transfer(cio, dset, ftype, &pl, start, count, (unsigned char *)buf, 1);
}

/* ---- one chunk encoded ahead of its write ------------------------------------------------------- */

struct h5shuf_chunk {
    struct chunk_task t;
    struct h5shuf_pipeline pl; /* a copy: the caller's may change before the write */
};

struct h5shuf_chunk *h5shuf__chunk_new(void)
{
    return calloc(1, sizeof(struct h5shuf_chunk));
}

void h5shuf__chunk_free(struct h5shuf_chunkio *cio, struct h5shuf_chunk *c)
{
    if (!c)
        return;
    h5shuf__pool_wait(cio ? cio->pool : NULL, &c->t.task); /* never free what a worker still uses */
    free(c->t.raw);
    free(c);
}

int h5shuf__chunk_encode_start(struct h5shuf_chunkio *cio, const struct h5shuf_pipeline *pl, const void *rows,
                               uint64_t nrows, struct h5shuf_chunk *c)
{
    struct chunk_task *t = &c->t;
    h5shuf__pool_wait(cio->pool, &t->task);
    c->pl = *pl;
    const size_t cap = stage_cap_for(pl->chunk_bytes);
    if (grow(&t->raw, &t->raw_cap, cap, cap) < 0)
        return -1;
    t->cio = cio;
    t->pl = &c->pl;
    t->encode = 1;
    t->chunk_row = 0;
    t->from = 0;
    t->rows = nrows;
    t->user = (unsigned char *)rows;
    t->task.run = chunk_task_run;
    t->err[0] = '\0';
    h5shuf__pool_submit(cio->pool, &t->task);
    return 0;
}

herr_t h5shuf__chunk_write(struct h5shuf_chunkio *cio, hid_t dset, uint64_t chunk_row, struct h5shuf_chunk *c)
{
    struct chunk_task *t = &c->t;
    h5shuf__pool_wait(cio->pool, &t->task);
    t->task.submitted = 0;
    if (t->err[0]) {
        push_error(t->err);
        return -1;
    }
    hsize_t off[H5S_MAX_RANK] = {0};
    off[0] = chunk_row;
    if (H5SHUF_FAULT() || H5Dwrite_chunk(dset, H5P_DEFAULT, t->mask, off, t->raw_n, t->raw) < 0)
        return -1;
    return 0;
}

/* ---- a read that runs while the caller works: raw chunks read now, decoded by the pool ------------ */

struct h5shuf_prefetch {
    struct h5shuf_pipeline pl;
    struct chunk_task *t; /* one per chunk of the range, each with its raw buffer (kept for reuse) */
    size_t n, cap;
};

struct h5shuf_prefetch *h5shuf__prefetch_new(void)
{
    return calloc(1, sizeof(struct h5shuf_prefetch));
}

void h5shuf__prefetch_free(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf)
{
    if (!pf)
        return;
    for (size_t i = 0; i < pf->cap; i++) {
        h5shuf__pool_wait(cio ? cio->pool : NULL, &pf->t[i].task);
        free(pf->t[i].raw);
    }
    free(pf->t);
    free(pf);
}

herr_t h5shuf__prefetch_start(struct h5shuf_chunkio *cio, hid_t dset, hid_t ftype, uint64_t start, uint64_t count,
                              void *buf, struct h5shuf_prefetch *pf)
{
    pf->n = 0;
    if (count == 0)
        return 0;
    if (!cio || h5shuf__pipeline_probe(dset, ftype, &pf->pl) < 0 || !pf->pl.direct)
        return h5shuf__read_rows(dset, ftype, start, count, buf); /* HDF5 runs it: no overlap */
    const struct h5shuf_pipeline *pl = &pf->pl;
    uint64_t first = start / pl->chunk_rows * pl->chunk_rows, end = start + count;
    size_t need = (size_t)((end - first + pl->chunk_rows - 1) / pl->chunk_rows);
    if (need > pf->cap) {
        struct chunk_task *v = realloc(pf->t, need * sizeof *v);
        if (!v)
            goto nomem;
        memset(v + pf->cap, 0, (need - pf->cap) * sizeof *v);
        pf->t = v;
        pf->cap = need;
    }
    const size_t cap = stage_cap_for(pl->chunk_bytes);
    for (uint64_t c = first; c < end; c += pl->chunk_rows) {
        struct chunk_task *t = &pf->t[pf->n];
        uint64_t lo = c > start ? c : start, hi = c + pl->chunk_rows < end ? c + pl->chunk_rows : end;
        hsize_t off[H5S_MAX_RANK] = {0};
        off[0] = c;
        int r = raw_for_read(t, dset, off, cap);
        if (r < 0)
            return -1;
        if (r == 0) { /* unallocated, or larger than any encoding of it: HDF5 reads it */
            if (h5shuf__read_rows(dset, ftype, lo, hi - lo, (unsigned char *)buf + (lo - start) * pl->row_bytes) < 0)
                return -1;
            continue;
        }
        t->cio = cio;
        t->pl = pl;
        t->encode = 0;
        t->chunk_row = c;
        t->from = lo - c;
        t->rows = hi - lo;
        t->user = (unsigned char *)buf + (lo - start) * pl->row_bytes;
        t->task.run = chunk_task_run;
        t->err[0] = '\0';
        if (H5SHUF_FAULT() || H5Dread_chunk(dset, H5P_DEFAULT, off, &t->mask, t->raw) < 0)
            return -1; /* the tasks queued so far are waited for by finish or free */
        h5shuf__pool_submit(cio->pool, &t->task);
        pf->n++;
    }
    return 0;
nomem:
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
             "out of memory for chunk tasks");
    return -1;
}

herr_t h5shuf__prefetch_finish(struct h5shuf_chunkio *cio, struct h5shuf_prefetch *pf)
{
    herr_t r = 0;
    for (size_t i = 0; i < pf->n; i++) {
        struct chunk_task *t = &pf->t[i];
        h5shuf__pool_wait(cio->pool, &t->task);
        t->task.submitted = 0;
        if (t->err[0] && r == 0) {
            push_error(t->err);
            r = -1;
        }
    }
    pf->n = 0;
    return r;
}
