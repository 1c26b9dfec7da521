/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filter_limit.h - how many bytes a chunk may decode to, told to h5shuf's HDF5 filters (zstd, lzf, lzo,
 * bitshuffle, lz4) by the thread that reads the chunk.  HDF5 gives a filter's decoder the stored chunk and its
 * own cd_values, never the dataset's chunk size; h5shuf knows it and declares it for this thread around
 * each HDF5 call that may decode chunks of its inputs (hdf5/boundread.c).  Depends on HDF5's headers only,
 * so every plugin of src/plugin/ builds it in too (where nothing declares a limit: the filters fall back
 * on their own caps).  Why a thread-local is right here: see filter_limit.c.
 */
#ifndef H5SHUF_FILTER_LIMIT_H
#define H5SHUF_FILTER_LIMIT_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Largest chunk HDF5 stores (its chunk sizes are 32-bit): 4 GiB - 1 bytes.  The decoders' cap when no
 * limit is declared. */
#define H5SHUF_CHUNK_MAX ((size_t)UINT32_MAX)

/* Filters of a pipeline the limits describe (HDF5 has no fixed maximum; h5shuf's filters can be in at
 * most this many slots: a pipeline with more declares no limit for the rest). */
#define H5SHUF_LIMIT_SLOTS 8

/* What one thread declared for the chunks it is about to read: for each filter id, the sizes its decoder
 * may return, [lo, hi] bytes (the union over the pipeline's positions of that id).  lo == hi when the
 * size is exact (the filter is the first of the pipeline, or only shuffle and fletcher32 come before it). */
struct h5shuf_filter_limits {
    int set;  /* 0: nothing declared (another program, or a call h5shuf does not bracket) */
    size_t n; /* slots used in f */
    struct h5shuf_filter_limit {
        H5Z_filter_t id;
        size_t lo, hi;
    } f[H5SHUF_LIMIT_SLOTS];
    /* Written by a filter that refuses a chunk while limits are declared (h5shuf_filter_refuse): its
     * input's size and FNV-1a hash (to find the chunk afterwards) and the reason. */
    int refused;
    size_t refused_nbytes;
    uint64_t refused_hash;
    char refused_msg[200];
};

/* This thread's limits (never NULL; zero, i.e. none declared, until a caller sets them).  The caller that
 * declares limits saves the previous contents and restores them after its HDF5 call. */
struct h5shuf_filter_limits *h5shuf_filter_limits_here(void);

/* For filter id on this thread: 1 with the declared [*lo, *hi] (1 <= *lo <= *hi <= H5SHUF_CHUNK_MAX), or
 * 0 with [1, H5SHUF_CHUNK_MAX] when nothing is declared for it. */
int h5shuf_filter_limit(H5Z_filter_t id, size_t *lo, size_t *hi);

/* A filter's decoder refuses its input in[0 .. nbytes): push the message (printf format) on HDF5's error
 * stack as the filter's failure, from func, and, when limits are declared, record the input's size and
 * hash and the message for the caller, which names the chunk (hdf5/boundread.c).  The filter then returns
 * 0, as H5Z requires (REFUSE does both). */
void h5shuf_filter_refuse(const char *func, const void *in, size_t nbytes, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define REFUSE(in, nbytes, ...) (h5shuf_filter_refuse(__func__, (in), (nbytes), __VA_ARGS__), (size_t)0)

/* FNV-1a (64 bits) of p[0 .. n): the fingerprint of a refused chunk. */
uint64_t h5shuf_filter_hash(const void *p, size_t n);

#endif
