/* SPDX-License-Identifier: BSD-3-Clause */
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

/*-*** Assertions that print both values ***-*/

/* Comparisons in the way of libuv's ASSERT_EQ (test/task.h).  Each evaluates its operands once and records
 * one CUnit assertion at the caller's line (passed or failed, as CU_ASSERT does; the _FATAL forms end the
 * test on failure, as CU_ASSERT_FATAL does).  A failure prints "file:line: a OP b (value of a vs value
 * of b)" to stderr at once, and CUnit's list of failures shows the same text.
 *
 * _INT: integers of any type up to 64 bits, signed or unsigned (bool, char, enums, int, size_t, hsize_t,
 * uint64_t, herr_t, hid_t, ...), compared by value and printed in decimal.  The operands must compare
 * without -Wsign-compare's warning, as in a bare a == b (CUnit's CU_ASSERT_EQUAL, from a system header,
 * hid it), so C's comparison and the one by value agree.  A floating-point or pointer operand does not
 * compile.
 * _U128: unsigned 128-bit integers (h5shuf_u128: keys' ranges and cuts), printed in decimal.
 * _DBL: as doubles, printed with 17 significant digits.  ASSERT_NEAR_DBL(a, b, tol): |a - b| <= |tol|, as
 * CU_ASSERT_DOUBLE_EQUAL(a, b, tol).
 * ASSERT_EQ_STR(a, b): strcmp(a, b) == 0; ASSERT_HAS_STR(s, part): strstr(s, part) != NULL; both print the
 * strings; a NULL string fails (instead of crashing).
 * ASSERT_EQ_MEM(a, b, n): memcmp(a, b, n) == 0, printing the first byte that differs; ASSERT_NE_MEM(a, b,
 * n): memcmp(a, b, n) != 0.  n == 0: equal, whatever the pointers; otherwise a NULL pointer fails. */
enum tu_op { TU_EQ, TU_NE, TU_LT, TU_LE, TU_GT, TU_GE };

#define TU_IS_INT_(x)                                                                                                  \
    _Generic((x) + 0, int: 1, unsigned: 1, long: 1, unsigned long: 1, long long: 1, unsigned long long: 1,             \
             default: 0)
#define TU_IS_SIGNED_(x) _Generic((x) + 0, int: 1, long: 1, long long: 1, default: 0)
#define TU_INT_(a, ta, op, b, tb, fatal)                                                                               \
    do {                                                                                                               \
        _Static_assert(TU_IS_INT_(a) && TU_IS_INT_(b), "ASSERT_*_INT compares integers");                              \
        if (0)                                                                                                         \
            (void)((a) == (b)); /* never run: warns of mixed signedness as a bare comparison does */                   \
        unsigned long long tu_a_ = (unsigned long long)(a), tu_b_ = (unsigned long long)(b);                           \
        tu_check_int_(tu_a_, TU_IS_SIGNED_(a) && (long long)tu_a_ < 0, tu_b_,                                          \
                      TU_IS_SIGNED_(b) && (long long)tu_b_ < 0, op, ta, tb, __FILE__, __LINE__, fatal);                \
    } while (0)
#define TU_U128_(a, ta, op, b, tb, fatal)                                                                              \
    do {                                                                                                               \
        if (0)                                                                                                         \
            (void)((a) == (b)); /* never run: warns of mixed signedness as a bare comparison does */                   \
        tu_check_u128_((a), (b), op, ta, tb, __FILE__, __LINE__, fatal);                                               \
    } while (0)
#define TU_DBL_(a, ta, op, b, tb, fatal) tu_check_dbl_((a), (b), op, ta, tb, __FILE__, __LINE__, fatal)

#define ASSERT_EQ_INT(a, b) TU_INT_(a, #a, TU_EQ, b, #b, 0)
#define ASSERT_NE_INT(a, b) TU_INT_(a, #a, TU_NE, b, #b, 0)
#define ASSERT_LT_INT(a, b) TU_INT_(a, #a, TU_LT, b, #b, 0)
#define ASSERT_LE_INT(a, b) TU_INT_(a, #a, TU_LE, b, #b, 0)
#define ASSERT_GT_INT(a, b) TU_INT_(a, #a, TU_GT, b, #b, 0)
#define ASSERT_GE_INT(a, b) TU_INT_(a, #a, TU_GE, b, #b, 0)
#define ASSERT_EQ_INT_FATAL(a, b) TU_INT_(a, #a, TU_EQ, b, #b, 1)
#define ASSERT_LT_INT_FATAL(a, b) TU_INT_(a, #a, TU_LT, b, #b, 1)
#define ASSERT_LE_INT_FATAL(a, b) TU_INT_(a, #a, TU_LE, b, #b, 1)
#define ASSERT_GT_INT_FATAL(a, b) TU_INT_(a, #a, TU_GT, b, #b, 1)
#define ASSERT_GE_INT_FATAL(a, b) TU_INT_(a, #a, TU_GE, b, #b, 1)
#define ASSERT_EQ_U128_FATAL(a, b) TU_U128_(a, #a, TU_EQ, b, #b, 1)
#define ASSERT_EQ_DBL(a, b) TU_DBL_(a, #a, TU_EQ, b, #b, 0)
#define ASSERT_LT_DBL(a, b) TU_DBL_(a, #a, TU_LT, b, #b, 0)
#define ASSERT_GT_DBL(a, b) TU_DBL_(a, #a, TU_GT, b, #b, 0)
#define ASSERT_NEAR_DBL(a, b, tol) tu_check_near_((a), (b), (tol), #a, #b, #tol, __FILE__, __LINE__, 0)
#define ASSERT_EQ_STR(a, b) tu_check_str_((a), (b), 0, #a, #b, __FILE__, __LINE__, 0)
#define ASSERT_HAS_STR(s, part) tu_check_str_((s), (part), 1, #s, #part, __FILE__, __LINE__, 0)
#define ASSERT_EQ_MEM(a, b, n) tu_check_mem_((a), (b), (n), 1, #a, #b, #n, __FILE__, __LINE__, 0)
#define ASSERT_EQ_MEM_FATAL(a, b, n) tu_check_mem_((a), (b), (n), 1, #a, #b, #n, __FILE__, __LINE__, 1)
#define ASSERT_NE_MEM(a, b, n) tu_check_mem_((a), (b), (n), 0, #a, #b, #n, __FILE__, __LINE__, 0)

/* The checks behind the macros above (call the macros).  The integers come as their 64 bits and whether
 * they are negative; fatal: a failure ends the test (CU_assertImplementation's bFatal). */
void tu_check_int_(unsigned long long a, int a_neg, unsigned long long b, int b_neg, enum tu_op op, const char *ta,
                   const char *tb, const char *file, int line, int fatal);
void tu_check_u128_(unsigned __int128 a, unsigned __int128 b, enum tu_op op, const char *ta, const char *tb,
                    const char *file, int line, int fatal);
void tu_check_dbl_(double a, double b, enum tu_op op, const char *ta, const char *tb, const char *file, int line,
                   int fatal);
void tu_check_near_(double a, double b, double tol, const char *ta, const char *tb, const char *ttol, const char *file,
                    int line, int fatal);
/* has: s holds part (strstr), else the two are equal (strcmp). */
void tu_check_str_(const char *a, const char *b, int has, const char *ta, const char *tb, const char *file, int line,
                   int fatal);
/* equal: memcmp(a, b, n) == 0 is asserted, else != 0. */
void tu_check_mem_(const void *a, const void *b, size_t n, int equal, const char *ta, const char *tb, const char *tn,
                   const char *file, int line, int fatal);

/* A CUnit suite: its tests, ended by {NULL, NULL}. */
struct tu_test {
    const char *name;
    void (*fn)(void);
};
/* Register the suite with CUnit and run it; returns the process exit status (0: all passed). */
int tu_run(const char *suite, const struct tu_test *tests);

#endif
