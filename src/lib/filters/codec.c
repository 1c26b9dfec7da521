/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * codec.c - a chunk's filter pipeline run by h5shuf itself: the pipeline of a dataset (probe), and one
 * chunk decoded into, or encoded from, the caller's rows by one of the pool's threads (codec.h).  The
 * transfers around them (which chunks, read or stored in which order, by which thread) are chunkio.c's.
 *
 * The encodings are the filters' own: shuffle and fletcher32 as HDF5 defines them (H5Zshuffle.c,
 * H5checksum.c), zstd as our filter 32015 writes it (one frame per chunk, ZSTD_compress at the level in
 * cd_values[0]), deflate as a zlib stream (RFC 1950) made by libdeflate at the level in cd_values[0],
 * which any zlib reads, lzf, lzo, bitshuffle and lz4 as filter_lzf.c, filter_lzo.c, filter_bshuf.c and
 * filter_lz4.c make them (an lzf or lzo chunk that does not shrink is stored with that filter skipped in its filter mask,
 * as HDF5 does for an optional filter that fails).  A chunk's bytes depend on its rows and the pipeline
 * only, never on the thread that runs it.  A partial last chunk is stored whole, its unused rows zero.
 *
 * Buffers: a chunk whose task covers it whole decodes its last step straight into the caller's rows and
 * encodes its first step straight from them, so a single codec (deflate, zstd, lzf, lzo) needs no buffer
 * but the task's raw one.  Steps in between, a partial chunk, and a fletcher32 that would append to or
 * strip the rows themselves go through stage buffers, which each thread makes itself when a task it runs
 * needs them (one for shuffle+deflate, at most two) and keeps for the next; they only grow.
 */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h> /* ZSTD_getErrorCode */

#include "byteshuffle.h"
#include "codec.h"
#include "fault.h"
#include "filter_bshuf.h"
#include "filter_lz4.h"
#include "filter_lzf.h"
#include "filter_lzo.h"
#include "runcopy.h"
#include "filter_zstd.h"

/*-*************************************
*  The filters
***************************************/

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

size_t h5shuf__codec_bound(size_t chunk_bytes)
{
    /* above every encoder's bound (zstd: n + n/256 + 64 KiB-ish; deflate: 5 bytes a 64 KiB block + 6) */
    return chunk_bytes + chunk_bytes / 16 + 4096;
}

/* Make *buf (*cap bytes) hold at least need bytes, growing it to want (>= need) bytes when it is smaller;
 * a buffer only grows, and is kept for the next chunk.  Its contents need not survive (they are written
 * before they are read).  0, or -1 when out of memory (*buf unchanged). */
int h5shuf__codec_grow(unsigned char **buf, size_t *cap, size_t need, size_t want)
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

/* Runs shorter than this (bytes) are moved by copy_runs, a row at a time, when a row of the block has at
 * most ROW_RUNS_MAX of them (their offsets are a table on the stack, 16 bytes a run). */
#define SHORT_RUN_BYTES 64u
#define ROW_RUNS_MAX 512u

/*-*************************************
*  Chunks that split rows
***************************************/

/* Where split chunk t's block lies: its extent along each dimension (ext[0] = t->rows; zero past the
 * rank), the strides of each dimension in the chunk (cst, cst[0] the bytes of a chunk row) and in the
 * caller's rows (ust, ust[0] = row_bytes), and the offset of the block in a row (*uo). */
static void block_geometry(const struct h5shuf_codec_chunk *t, size_t *ext, size_t *cst, size_t *ust, size_t *uo)
{
    const struct h5shuf_pipeline *pl = t->pl;
    size_t cs = pl->type_bytes, us = pl->type_bytes;
    *uo = 0;
    for (int k = pl->rank - 1; k >= 0; k--) {
        cst[k] = cs;
        ust[k] = k == 0 ? (size_t)pl->row_bytes : us;
        ext[k] = k == 0 ? (size_t)t->rows
                        : (size_t)(pl->cdims[k] < pl->dims[k] - t->off[k] ? pl->cdims[k] : pl->dims[k] - t->off[k]);
        cs *= (size_t)pl->cdims[k];
        if (k > 0) {
            *uo += (size_t)t->off[k] * us;
            us *= (size_t)pl->dims[k];
        }
    }
}

/* The runs of split chunk t's block in each of its rows, when they are short (rank > 2, a run of fewer
 * than SHORT_RUN_BYTES bytes, at most max of them): run i's offset in a chunk row plus cbase (coff[i]) and
 * in a row of the caller's, the block's place in the row included (uoff[i]), in the chunk's order (not
 * written when coff is NULL: the count only); *run their length in bytes.  The number of runs, or 0 when
 * they are not short (block_copy moves the block a line at a time then). */
static size_t short_runs(const struct h5shuf_codec_chunk *t, size_t cbase, size_t *coff, size_t *uoff, size_t max,
                         size_t *run)
{
    const int r = t->pl->rank;
    size_t ext[H5S_MAX_RANK] = {0}, cst[H5S_MAX_RANK] = {0}, ust[H5S_MAX_RANK] = {0}, uo;
    block_geometry(t, ext, cst, ust, &uo);
    *run = ext[r - 1] * t->pl->type_bytes;
    size_t idx[H5S_MAX_RANK] = {0}, nruns = 1;
    for (int k = 1; k < r - 1; k++)
        nruns *= ext[k];
    if (r <= 2 || *run >= SHORT_RUN_BYTES || nruns > max)
        return 0;
    for (size_t i = 0; coff && i < nruns; i++) {
        coff[i] = cbase;
        uoff[i] = uo;
        for (int k = 1; k < r - 1; k++) {
            coff[i] += idx[k] * cst[k];
            uoff[i] += idx[k] * ust[k];
        }
        for (int k = r - 2; k >= 1 && ++idx[k] == ext[k]; k--)
            idx[k] = 0;
    }
    return nruns;
}

/* Copy the block of split chunk t that lies in rows [k0, k1) of the caller's rows (of t->rows) between
 * them and chunk (the chunk's elements, row-major over cdims): into the rows when to_rows, else into
 * chunk (whose other bytes are left as they are).  Along the last dimension a block is one run in both.
 * Short runs go a row at a time (h5shuf__copy_runs); otherwise the second to last dimension (dim 0 for rank
 * 2) is walked by h5shuf__copy_lines, the dimensions before it here. */
static void block_copy(const struct h5shuf_codec_chunk *t, unsigned char *chunk, int to_rows, uint64_t k0, uint64_t k1)
{
    const struct h5shuf_pipeline *pl = t->pl;
    const int r = pl->rank, line = r - 2;
    size_t ext[H5S_MAX_RANK] = {0}, cst[H5S_MAX_RANK] = {0}, ust[H5S_MAX_RANK] = {0}, uo;
    block_geometry(t, ext, cst, ust, &uo);
    ext[0] = (size_t)(k1 - k0);
    unsigned char *c0 = chunk + (t->from + k0) * cst[0], *u0 = t->user + k0 * ust[0];
    size_t coff[ROW_RUNS_MAX], uoff[ROW_RUNS_MAX], run; /* run i's offset in a chunk row and in a row */
    const size_t nruns = short_runs(t, 0, coff, uoff, ROW_RUNS_MAX, &run);
    if (nruns) {
        if (to_rows)
            h5shuf__copy_runs(u0, ust[0], uoff, c0, cst[0], coff, ext[0], nruns, run);
        else
            h5shuf__copy_runs(c0, cst[0], coff, u0, ust[0], uoff, ext[0], nruns, run);
        return;
    }
    u0 += uo;
    size_t idx[H5S_MAX_RANK] = {0};
    for (;;) {
        size_t co = 0, ro = 0;
        for (int k = 0; k < line; k++) {
            co += idx[k] * cst[k];
            ro += idx[k] * ust[k];
        }
        if (to_rows)
            h5shuf__copy_lines(u0 + ro, ust[line], c0 + co, cst[line], ext[line], run);
        else
            h5shuf__copy_lines(c0 + co, cst[line], u0 + ro, ust[line], ext[line], run);
        int k = line - 1;
        for (; k >= 0 && ++idx[k] == ext[k]; k--)
            idx[k] = 0;
        if (k < 0)
            break;
    }
}

/* How a filter step ended: its output in the step's output buffer (STEP_OUT), in its input (STEP_IN:
 * fletcher32 only adds or removes its checksum), skipped (STEP_SKIPPED: lzf or lzo could not shrink the
 * chunk and the filter is optional), or failed (STEP_ERROR, with a message in err). */
enum step { STEP_ERROR = -1, STEP_OUT, STEP_IN, STEP_SKIPPED };

/* Stage buffer s of the thread running t, at least cap bytes.  Made or grown here, by that thread (no
 * other thread touches it), when a pipeline first needs it; NULL with t->err when out of memory, which
 * fails the task like a codec error. */
static unsigned char *stage(struct h5shuf_codec_chunk *t, struct h5shuf_codec_ctx *c, int s, size_t cap)
{
    if (h5shuf__codec_grow(&c->stage[s], &c->stage_cap[s], cap, cap) < 0) {
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

/*-*************************************
*  Decoding and encoding a chunk
***************************************/

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
        size_t got = ZSTD_decompressDCtx(c->zd, out, cap, in, *n); /* never more than cap bytes */
        if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall) {
            snprintf(err, errcap, "zstd: chunk decodes to more than %zu bytes (corrupt chunk)", cap);
            return STEP_ERROR;
        }
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
    case H5SHUF_FILTER_LZ4: {
        size_t got;
        int r = h5shuf_lz4_decode(in, *n, out, cap, &got); /* its header's size checked against cap first */
        if (r != H5SHUF_LZ4_OK) {
            snprintf(err, errcap, "lz4: %s",
                     r == H5SHUF_LZ4_E2BIG ? "chunk decompresses to more than its size (corrupt chunk)"
                                           : "invalid data for LZ4 decompression (corrupt chunk)");
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
#ifdef H5SHUF_HAVE_LZO
    case H5SHUF_FILTER_LZO: {
        size_t got;
        int r = h5shuf_lzo_decode(in, *n, out, cap, &got);
        if (r != H5SHUF_LZO_OK) {
            snprintf(err, errcap, "lzo: %s", h5shuf_lzo_strerror(r));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
#endif
    case H5SHUF_FILTER_BSHUF: {
        struct h5shuf_bshuf_params bp;
        size_t got = 0;
        int r = h5shuf_bshuf_params_from_cd(f->ncd, f->cd, &bp);
        if (r == H5SHUF_BSHUF_OK)
            r = h5shuf_bshuf_decode(&bp, in, *n, out, cap, &got); /* its header's size checked against cap first */
        if (r == H5SHUF_BSHUF_E2BIG) {
            snprintf(err, errcap, "bitshuffle: chunk decodes to more than %zu bytes (corrupt chunk)", cap);
            return STEP_ERROR;
        }
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
        h5shuf__byteshuffle(in, out, *n, f->elem_size, 1);
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
int h5shuf__codec_decode(struct h5shuf_codec_chunk *t, struct h5shuf_codec_ctx *c)
{
    const struct h5shuf_pipeline *pl = t->pl;
    const size_t cap = h5shuf__codec_bound(pl->chunk_bytes);
    int last = -1; /* the last step to run: the first filter not skipped */
    for (int i = 0; i < pl->nfilters && last < 0; i++)
        if (!(t->mask & (1u << i)))
            last = i;
    /* where the last step may write the whole chunk: a group's buffer, or the caller's rows when they are
     * the chunk (not when fletcher32 is last: it only strips its checksum, in place) */
    unsigned char *dest = NULL;
    if (last >= 0 && pl->f[last].id != H5Z_FILTER_FLETCHER32)
        dest = t->made ? t->made : !pl->split && t->from == 0 && t->rows == pl->chunk_rows ? t->user : NULL;
    const unsigned char *in = t->raw;
    size_t n = t->raw_n;
    int s = 0; /* the stage the next output goes to; in, when a stage, is the other */
    for (int i = pl->nfilters - 1; i >= 0; i--) {
        if (t->mask & (1u << i))
            continue;
        unsigned char *out = NULL;
        size_t out_cap = 0;
        if (i == last && dest) {
            out = dest;
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
    if (t->made) { /* a group's: its rows are written when all its chunks are decoded */
        if (in != t->made) /* no codec, or fletcher32 last */
            memcpy(t->made, in, n);
    } else if (pl->split) /* in is a stage or t->raw: a buffer of this thread's task, written above */
        block_copy(t, (unsigned char *)in, 1, 0, t->rows);
    else if (in != t->user) /* a partial chunk, no codec, or fletcher32 last */
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
    case H5SHUF_FILTER_LZ4: {
        /* out has room for the bound: the probe keeps only pipelines whose bound fits the stage buffers */
        size_t got = h5shuf_lz4_encode(in, *n, h5shuf_lz4_block(f->ncd, f->cd), out, cap - 4);
        if (got == 0) {
            snprintf(err, errcap, "lz4: output larger than its bound");
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
#ifdef H5SHUF_HAVE_LZO
    case H5SHUF_FILTER_LZO: {
        if (!c->lzo_work && !(c->lzo_work = malloc(H5SHUF_LZO_WORK_BYTES))) {
            snprintf(err, errcap, "lzo: out of memory");
            return STEP_ERROR;
        }
        /* out has room for LZO's worst case: the pipeline puts only shuffle and fletcher32 before lzo */
        size_t got = 0;
        int r = h5shuf_lzo_encode(in, *n, out, cap - 4, c->lzo_work, &got);
        if (r == H5SHUF_LZO_NOGAIN) { /* PyTables' rule: only a shorter stream is kept */
            if (!(f->flags & H5Z_FLAG_OPTIONAL)) {
                snprintf(err, errcap, "lzo: the chunk does not compress and the filter is mandatory");
                return STEP_ERROR;
            }
            return STEP_SKIPPED; /* stored as it is, as HDF5 stores it when an optional filter fails */
        }
        if (r != H5SHUF_LZO_OK) {
            snprintf(err, errcap, "lzo: %s", h5shuf_lzo_strerror(r));
            return STEP_ERROR;
        }
        *n = got;
        return STEP_OUT;
    }
#endif
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
        h5shuf__byteshuffle(in, out, *n, f->elem_size, 0);
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
int h5shuf__codec_encode(struct h5shuf_codec_chunk *t, struct h5shuf_codec_ctx *c)
{
    const struct h5shuf_pipeline *pl = t->pl;
    const size_t cap = h5shuf__codec_bound(pl->chunk_bytes);
    size_t n = pl->chunk_bytes, used = t->rows * pl->row_bytes;
    int last = -1; /* the last filter that makes new output */
    for (int i = 0; i < pl->nfilters; i++)
        if (pl->f[i].id != H5Z_FILTER_FLETCHER32)
            last = i;
    unsigned char *in;
    int s = 0; /* the stage the next output goes to; in, when a stage, is the other */
    if (!pl->split && used == n && last >= 0 && pl->f[0].id != H5Z_FILTER_FLETCHER32) {
        in = t->user; /* only read: of the steps that may see it, only fletcher32 writes, and not here */
    } else if (t->made && last >= 0) {
        in = t->made; /* the group's copy (h5shuf__codec_encode_group): a stage, written by fletcher32 only */
    } else {
        /* the chunk made in t->raw when no filter makes new output (fletcher32 appends there), else in a stage */
        if (last < 0)
            in = t->raw;
        else if (!(in = stage(t, c, s, cap)))
            return -1;
        else
            s = 1;
        if (t->made) {
            memcpy(in, t->made, n);
        } else if (pl->split) {
            memset(in, 0, n);
            block_copy(t, in, 0, 0, t->rows);
        } else {
            memcpy(in, t->user, used);
            memset(in + used, 0, n - used);
        }
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
            /* every filter before it was an lzf or lzo that could not shrink the rows: room for the sum */
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
    if (in != t->raw) /* the last codec was an lzf or lzo that could not shrink the chunk */
        memcpy(t->raw, in, n);
    t->raw_n = n;
    return 0;
}

/*-*************************************
*  Groups of chunks
***************************************/

size_t h5shuf__codec_group_stride(size_t chunk_bytes)
{
    return (chunk_bytes + 4 + 63) / 64 * 64; /* 4: fletcher32's room; 64: a cache line */
}

/* Rows of a group's chunks gathered at a time: the rows' blocks of every chunk of the group, a few cache
 * lines a row, then stay in cache for the next chunk. */
#define GROUP_TILE_ROWS 64u

/* The group buffer of c for n chunks of pl, each at a stride of *stride bytes; NULL with t->err when out
 * of memory. */
static unsigned char *group_buffer(struct h5shuf_codec_chunk *t, struct h5shuf_codec_ctx *c, size_t n, size_t *stride)
{
    *stride = h5shuf__codec_group_stride(t->pl->chunk_bytes);
    if (h5shuf__codec_grow(&c->group, &c->group_cap, n * *stride, n * *stride) < 0) {
        snprintf(t->err, sizeof t->err, "out of memory for a chunk buffer of %zu bytes", n * *stride);
        return NULL;
    }
    return c->group;
}

/* Move rows' blocks between t[0 .. n) (a group: the same rows) and their chunks in buf (at stride bytes
 * apart), into the rows when to_rows.  When every chunk's block is short runs of one length, the runs of
 * all n are one table (on the heap) and each row is done whole, every chunk's runs in it, before the next:
 * a group of h5py's image chunks then writes (reads) whole ranges of a row, which h5shuf__copy_runs moves
 * 16 bytes at a time.  Otherwise (or out of memory for the table) a tile of rows at a time, chunk by
 * chunk. */
static void group_copy(const struct h5shuf_codec_chunk *t, size_t n, unsigned char *buf, size_t stride, int to_rows)
{
    const struct h5shuf_pipeline *pl = t[0].pl;
    size_t nruns = 0, run = 0;
    for (size_t g = 0; g < n; g++) {
        size_t rg, m = short_runs(&t[g], 0, NULL, NULL, SIZE_MAX, &rg);
        if (!m || (g > 0 && rg != run)) {
            nruns = 0;
            break;
        }
        run = rg;
        nruns += m;
    }
    size_t *coff = nruns ? malloc(2 * nruns * sizeof *coff) : NULL;
    if (coff) {
        size_t *uoff = coff + nruns, at = 0;
        for (size_t g = 0; g < n; g++)
            at += short_runs(&t[g], g * stride, coff + at, uoff + at, SIZE_MAX, &run);
        const size_t crow = pl->chunk_bytes / (size_t)pl->chunk_rows; /* bytes of a chunk row */
        unsigned char *c0 = buf + t[0].from * crow, *u0 = t[0].user;
        if (to_rows)
            h5shuf__copy_runs(u0, (size_t)pl->row_bytes, uoff, c0, crow, coff, t[0].rows, nruns, run);
        else
            h5shuf__copy_runs(c0, crow, coff, u0, (size_t)pl->row_bytes, uoff, t[0].rows, nruns, run);
        free(coff);
        return;
    }
    for (uint64_t k0 = 0; k0 < t[0].rows; k0 += GROUP_TILE_ROWS) {
        uint64_t k1 = t[0].rows - k0 > GROUP_TILE_ROWS ? k0 + GROUP_TILE_ROWS : t[0].rows;
        for (size_t g = 0; g < n; g++)
            block_copy(&t[g], buf + g * stride, to_rows, k0, k1);
    }
}

/* Run step (an encode or decode) on each of t[0 .. n) with its chunk made in buf (stride bytes apart).
 * 0, or -1 at the first that fails. */
static int each_made(struct h5shuf_codec_chunk *t, size_t n, unsigned char *buf, size_t stride,
                     struct h5shuf_codec_ctx *c, int (*step)(struct h5shuf_codec_chunk *, struct h5shuf_codec_ctx *))
{
    for (size_t g = 0; g < n; g++) {
        t[g].made = buf + g * stride;
        int r = step(&t[g], c);
        t[g].made = NULL;
        if (r < 0)
            return -1;
    }
    return 0;
}

int h5shuf__codec_encode_group(struct h5shuf_codec_chunk *t, size_t n, struct h5shuf_codec_ctx *c)
{
    const struct h5shuf_pipeline *pl = t[0].pl;
    size_t stride;
    unsigned char *buf = group_buffer(t, c, n, &stride);
    if (!buf)
        return -1;
    for (size_t g = 0; g < n; g++)
        memset(buf + g * stride, 0, pl->chunk_bytes);
    group_copy(t, n, buf, stride, 0);
    return each_made(t, n, buf, stride, c, h5shuf__codec_encode);
}

int h5shuf__codec_decode_group(struct h5shuf_codec_chunk *t, size_t n, struct h5shuf_codec_ctx *c)
{
    size_t stride;
    unsigned char *buf = group_buffer(t, c, n, &stride);
    if (!buf)
        return -1;
    if (each_made(t, n, buf, stride, c, h5shuf__codec_decode) < 0)
        return -1;
    group_copy(t, n, buf, stride, 1);
    return 0;
}

/*-*************************************
*  The pipeline of a dataset
***************************************/

int h5shuf__pipeline_probe(hid_t dset, hid_t ftype, struct h5shuf_pipeline *pl)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    hid_t space = H5Dget_space(dset);
    hsize_t dims[H5S_MAX_RANK];
    int rank = dcpl >= 0 && space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
    h5shuf__pipeline_of(dcpl, rank, dims, ftype, pl);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return dcpl >= 0 && space >= 0 ? 0 : -1;
}

void h5shuf__pipeline_of(hid_t dcpl, int rank, const hsize_t *dims, hid_t ftype, struct h5shuf_pipeline *pl)
{
    memset(pl, 0, sizeof *pl);
    int ok = dcpl >= 0 && rank >= 1;
    size_t tsize = H5Tget_size(ftype);
    ok = ok && rank >= 1 && tsize > 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Tdetect_class(ftype, H5T_VLEN) == 0 &&
         !(H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) > 0);
    ok = ok && H5Pget_chunk(dcpl, H5S_MAX_RANK, pl->cdims) == rank;
    pl->rank = rank;
    pl->type_bytes = tsize;
    pl->row_bytes = tsize;
    pl->chunks_per_row = 1;
    uint64_t block = tsize; /* bytes of a chunk's part of one row (a row, unless split) */
    for (int k = 0; ok && k < rank; k++) {
        pl->dims[k] = dims[k];
        if (k == 0)
            continue;
        ok = pl->cdims[k] > 0 && dims[k] > 0 && pl->cdims[k] < (UINT64_C(1) << 31) / block;
        if (!ok)
            break; /* rows of no bytes, or a chunk of 2 GiB or more */
        pl->split |= pl->cdims[k] != dims[k];
        pl->row_bytes *= dims[k];
        block *= pl->cdims[k];
        pl->chunks_per_row *= (dims[k] + pl->cdims[k] - 1) / pl->cdims[k];
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
        case H5SHUF_FILTER_LZ4: /* (its bound is checked below) */
            break;
#ifdef H5SHUF_HAVE_LZO /* without it (-DH5SHUF_LZO=OFF) LZO is HDF5's: a plugin's, if one is installed */
        case H5SHUF_FILTER_LZO:
            /* LZO1X-1 writes up to its worst case without checking the end of its output: that fits the
             * stage buffers for a chunk (shuffled, or with a checksum), not after another codec, whose
             * output may be larger; such a pipeline (no writer makes one) is left to HDF5 */
            for (int k = 0; k < i; k++)
                ok = ok && (pl->f[k].id == H5Z_FILTER_SHUFFLE || pl->f[k].id == H5Z_FILTER_FLETCHER32);
            break;
#endif
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
        ok = pl->chunk_rows > 0 && pl->chunk_rows < (UINT64_C(1) << 31) / block;
        pl->chunk_bytes = ok ? (size_t)(pl->chunk_rows * block) : 0;
    }
    /* bitshuffle and lz4 with small blocks can outgrow the stage buffers (4 bytes and LZ4's margin a
     * block): such pipelines are left to HDF5 */
    for (int i = 0; ok && i < pl->nfilters; i++) {
        if (pl->f[i].id == H5SHUF_FILTER_LZ4) {
            size_t bound = h5shuf_lz4_bound(pl->chunk_bytes + pl->chunk_bytes / 32, h5shuf_lz4_block(pl->f[i].ncd, pl->f[i].cd));
            ok = bound > 0 && bound <= h5shuf__codec_bound(pl->chunk_bytes) - 4;
        }
        struct h5shuf_bshuf_params bp;
        if (pl->f[i].id == H5SHUF_FILTER_BSHUF && h5shuf_bshuf_params_from_cd(pl->f[i].ncd, pl->f[i].cd, &bp) == H5SHUF_BSHUF_OK) {
            size_t bound = h5shuf_bshuf_bound(&bp, pl->chunk_bytes + pl->chunk_bytes / 32);
            ok = bound > 0 && bound <= h5shuf__codec_bound(pl->chunk_bytes) - 4;
        }
    }
    pl->direct = ok;
}

/*-*************************************
*  A thread's codec state
***************************************/

void h5shuf__codec_ctx_release(struct h5shuf_codec_ctx *c)
{
    ZSTD_freeCCtx(c->zc);
    ZSTD_freeDCtx(c->zd);
    libdeflate_free_compressor(c->dc);
    libdeflate_free_decompressor(c->dd);
    free(c->lzo_work);
    free(c->stage[0]);
    free(c->stage[1]);
    free(c->group);
    memset(c, 0, sizeof *c);
}
