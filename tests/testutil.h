/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * testutil.h - helpers shared by the CUnit suites that use HDF5: files with known rows, a shuffle through
 * the public API, byte comparison of files, and a CUnit main that silences HDF5's error printing (the
 * HDF5-free helpers are in tu_core.h).
 */
#ifndef H5SHUF_TESTUTIL_H
#define H5SHUF_TESTUTIL_H

#include <hdf5.h>

#include "tu_core.h"

/* Layout of a dataset written by tu_write. */
struct tu_layout {
    H5D_layout_t layout;   /* H5D_CONTIGUOUS, H5D_COMPACT or H5D_CHUNKED */
    hsize_t chunk_rows;    /* chunk dim 0 (other chunk dims are the full dims) */
    int deflate;           /* deflate level, 0: none */
    int shuffle;           /* byte-shuffle filter */
    int fletcher32;
};

/* Write dataset path (rank, dims) of file type ftype into file (created when create != 0) with data given
 * as raw bytes of ftype.  Returns 0 or -1. */
int tu_write(const char *file, int create, const char *path, hid_t ftype, int rank, const hsize_t *dims,
             const struct tu_layout *lay, const void *data);

/* Read a whole dataset as raw bytes of its file type; *rows = dims[0], *row_bytes = bytes a row.
 * Returns a malloc'ed buffer (at least 1 byte) or NULL. */
void *tu_read(const char *file, const char *path, uint64_t *rows, uint64_t *row_bytes);

/* Run a shuffle through the public API: inputs[0..n) specs, output spec, options (NULL: defaults with
 * seed). Returns the status; the message goes to msg (cap bytes) when not NULL. */
int tu_shuffle(const char *const *inputs, size_t n, const char *output, const h5shuf_options *opts, char *msg,
               size_t cap);
/* The same with the test knob H5SHUF_DEBUG_PILE_BOUND_ROWS (h5shuf_debug.h) set to pile_bound_rows (0: off). */
int tu_shuffle_bound(const char *const *inputs, size_t n, const char *output, const h5shuf_options *opts,
                     uint64_t pile_bound_rows, char *msg, size_t cap);

/* The raw (filtered) bytes of the chunk of the rank-2 dataset d that starts at row `row`, as stored:
 * malloc'ed, *n bytes, its filter mask in *mask; NULL when HDF5 cannot read it. */
unsigned char *tu_raw_chunk(hid_t d, hsize_t row, hsize_t *n, uint32_t *mask);

/* The stored chunks of chunked datasets a and b (same shape and filters): 1 when both hold the same chunks
 * (offsets, filter masks) and each pair decodes to the same bytes, edge chunks whole, by this file's own
 * decoder (zlib's inflate, HDF5's shuffle and fletcher32 as H5Zshuffle.c and H5checksum.c define them,
 * zstd, lzf, lzo: independent of h5shuf's codec); the stored bytes of a pipeline without deflate must be equal
 * too (only deflate's encoder may differ: libdeflate's is not zlib's).  Prints the first difference. */
int tu_same_chunks(hid_t a, hid_t b);

/* Whole-file contents compare: 1 when both files exist and are byte-identical. */
int tu_same_bytes(const char *a, const char *b);

/* A zstd frame without a content size that decodes to total zero bytes, as RLE blocks of 128 KiB (4 bytes
 * each: 32 KiB for 1 GiB, the decompression bomb of issue 48), into out (tu_zstd_rle_bytes(total) bytes);
 * returns its size. */
size_t tu_zstd_rle_frame(unsigned char *out, size_t total);
#define tu_zstd_rle_bytes(total) (6 + 4 * (((total) + 131071) / 131072))

/* Run filter fn (flags: 0 to encode, H5Z_FLAG_REVERSE to decode; cd_values ncd, cd) on a copy of data (n
 * bytes) in a buffer from H5allocate_memory, as HDF5 calls it; returns its result, the buffer (its output,
 * or the copy when it failed) in *out (free with H5free_memory) and its size in *out_size. */
size_t tu_run_filter(H5Z_func_t fn, unsigned flags, size_t ncd, const unsigned *cd, const void *data, size_t n,
                     void **out, size_t *out_size);

/* Run a filter's decoder fn on a copy of data (n bytes; cd_values ncd, cd) as HDF5 calls it, with the
 * decoded-size limit [lo, hi] declared for filter id on this thread as h5shuf's reads declare it
 * (filters/filter_limit.h; hi 0: none declared), the declaration cleared after.  Returns the decoded size
 * (0: refused).  When want is not NULL the call must be refused: the input untouched, the refusal
 * recorded (its size, hash and message) and its message, also on HDF5's stack, containing want (printed
 * when not); when NULL it must succeed.  HDF5's stack is cleared after. */
size_t tu_decode_limited(H5Z_func_t fn, H5Z_filter_t id, size_t ncd, const unsigned *cd, const void *data, size_t n,
                         size_t lo, size_t hi, const char *want);

/* tu_run with HDF5's error printing off (the tests provoke HDF5 errors on purpose), then H5close. */
int tu_main(const char *suite, const struct tu_test *tests);

#endif
