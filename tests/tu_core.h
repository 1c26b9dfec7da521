/*
 * tu_core.h - helpers shared by the CUnit suites that need no HDF5 (keys, sort, plan, spec link without
 * it): temporary directories, reproducible test values, the tiny in-memory reference shuffle (the oracle
 * for the library's output), and a CUnit main.
 */
#ifndef H5SHUF_TU_CORE_H
#define H5SHUF_TU_CORE_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* Fill n bytes with SplitMix64 bytes from state. */
void tu_fill(void *buf, size_t n, uint64_t state);

/* The reference shuffle: out = rows of in sorted by (h5shuf_key(seed, first_id + r), r), with qsort.
 * Independent of the library's piles, radix sort and I/O; it shares only the key function, which
 * test_keys checks against Random123's published vectors. */
void tu_reference(uint64_t seed, const void *in, uint64_t rows, uint64_t row_bytes, void *out);

/* CU_ASSERT(a == b) for integers that prints both values when it fails (libuv's ASSERT_EQ, test/task.h). */
#define ASSERT_EQ_INT(a, b)                                                                                  \
    do {                                                                                                     \
        long long tu_a_ = (long long)(a), tu_b_ = (long long)(b);                                            \
        if (tu_a_ != tu_b_)                                                                                  \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, tu_a_, tu_b_); \
        CU_ASSERT(tu_a_ == tu_b_);                                                                           \
    } while (0)

/* A CUnit suite: its tests, ended by {NULL, NULL}. */
struct tu_test {
    const char *name;
    void (*fn)(void);
};
/* Register the suite with CUnit and run it; returns the process exit status (0: all passed). */
int tu_run(const char *suite, const struct tu_test *tests);

#endif
