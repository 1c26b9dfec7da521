/*
 * testutil.h - helpers shared by the CUnit suites: temporary directories, HDF5 files with known rows,
 * a tiny in-memory reference shuffle (the oracle for the library's output), and a CUnit main.
 */
#ifndef H5SHUF_TESTUTIL_H
#define H5SHUF_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "h5shuf.h"

/* SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): reproducible test values, unrelated to Philox. */
uint64_t tu_splitmix64(uint64_t *state);

/* A fresh empty directory under $TMPDIR (or /tmp); caller frees the string.  tu_rmtree removes it. */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
/* Number of entries in dir other than . and .. */
int tu_count_entries(const char *dir);
/* "dir/name" in a static rotating buffer (8 slots). */
const char *tu_path(const char *dir, const char *name);

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

/* Fill n bytes with SplitMix64 bytes from state. */
void tu_fill(void *buf, size_t n, uint64_t state);

/* The reference shuffle: out = rows of in sorted by (h5shuf_key(seed, first_id + r), r), with qsort.
 * Independent of the library's piles, radix sort and I/O; it shares only the key function, which
 * test_keys checks against Random123's published vectors. */
void tu_reference(uint64_t seed, const void *in, uint64_t rows, uint64_t row_bytes, void *out);

/* Run a shuffle through the public API: inputs[0..n) specs, output spec, options (NULL: defaults with
 * seed). Returns the status; the message goes to msg (cap bytes) when not NULL. */
int tu_shuffle(const char *const *inputs, size_t n, const char *output, const h5shuf_options *opts, char *msg,
               size_t cap);

/* Whole-file contents compare: 1 when both files exist and are byte-identical. */
int tu_same_bytes(const char *a, const char *b);

/* Register suites with CUnit and run them; returns the process exit status (0: all passed). */
struct tu_test {
    const char *name;
    void (*fn)(void);
};
int tu_main(const char *suite, const struct tu_test *tests);

#endif
