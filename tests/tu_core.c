/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tu_core.c - see tu_core.h.
 */
#include "tu_core.h"

#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t tu_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

char *tu_mkdtemp(void)
{
    const char *t = getenv("TMPDIR");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/h5shuf-test-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(buf))
        return NULL;
    return strdup(buf);
}

void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            tu_rmtree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

const char *tu_path(const char *dir, const char *name)
{
    static char slots[8][4096];
    static int next;
    char *p = slots[next++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

void tu_fill(void *buf, size_t n, uint64_t state)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = tu_splitmix64(&state);
        memcpy(p + i, &v, n - i < 8 ? n - i : 8);
    }
}

struct ref_key {
    uint64_t key, i;
};

static int ref_cmp(const void *a, const void *b)
{
    const struct ref_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void tu_reference(uint64_t seed, const void *in, uint64_t rows, uint64_t row_bytes, void *out)
{
    struct ref_key *k = malloc((rows ? rows : 1) * sizeof *k);
    for (uint64_t i = 0; i < rows; i++) {
        k[i].key = h5shuf_key(seed, i);
        k[i].i = i;
    }
    qsort(k, rows, sizeof *k, ref_cmp);
    for (uint64_t r = 0; r < rows; r++)
        memcpy((unsigned char *)out + r * row_bytes, (const unsigned char *)in + k[r].i * row_bytes, row_bytes);
    free(k);
}

int tu_run(const char *suite, const struct tu_test *tests)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    for (const struct tu_test *t = tests; t->name; t++)
        CU_add_test(s, t->name, t->fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}

/*-*** Assertions that print both values ***-*/

static const char *const op_text[] = {"==", "!=", "<", "<=", ">", ">="};

/* One CUnit assertion at file:line whose condition text is what the failure prints. */
static void record(int ok, const char *cond, const char *file, int line, int fatal)
{
    if (!ok)
        fprintf(stderr, "%s:%d: %s\n", file, line, cond);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, cond, file, "", fatal ? CU_TRUE : CU_FALSE);
}

/* -1, 0, 1 as a < b, a == b, a > b; each value given as its 64 bits and whether it is negative. */
static int cmp_int(unsigned long long a, int a_neg, unsigned long long b, int b_neg)
{
    if (a_neg != b_neg)
        return a_neg ? -1 : 1;
    if (a_neg)
        return (long long)a < (long long)b ? -1 : (long long)a > (long long)b;
    return a < b ? -1 : a > b;
}

static void decimal(char *buf, size_t cap, unsigned long long v, int neg)
{
    if (neg)
        snprintf(buf, cap, "%lld", (long long)v);
    else
        snprintf(buf, cap, "%llu", v);
}

static int holds(enum tu_op op, int c)
{
    switch (op) {
    case TU_EQ:
        return c == 0;
    case TU_NE:
        return c != 0;
    case TU_LT:
        return c < 0;
    case TU_LE:
        return c <= 0;
    case TU_GT:
        return c > 0;
    case TU_GE:
        return c >= 0;
    }
    return 0;
}

void tu_check_int_(unsigned long long a, int a_neg, unsigned long long b, int b_neg, enum tu_op op, const char *ta,
                   const char *tb, const char *file, int line, int fatal)
{
    char cond[1024], va[32], vb[32];
    decimal(va, sizeof va, a, a_neg);
    decimal(vb, sizeof vb, b, b_neg);
    snprintf(cond, sizeof cond, "%s %s %s (%s vs %s)", ta, op_text[op], tb, va, vb);
    record(holds(op, cmp_int(a, a_neg, b, b_neg)), cond, file, line, fatal);
}

static void decimal128(char *buf, size_t cap, unsigned __int128 v)
{
    char t[48];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    size_t k = 0;
    while (n && k + 1 < cap)
        buf[k++] = t[--n];
    buf[k] = 0;
}

void tu_check_u128_(unsigned __int128 a, unsigned __int128 b, enum tu_op op, const char *ta, const char *tb,
                    const char *file, int line, int fatal)
{
    char cond[1024], va[48], vb[48];
    decimal128(va, sizeof va, a);
    decimal128(vb, sizeof vb, b);
    snprintf(cond, sizeof cond, "%s %s %s (%s vs %s)", ta, op_text[op], tb, va, vb);
    record(holds(op, a < b ? -1 : a > b), cond, file, line, fatal);
}

void tu_check_dbl_(double a, double b, enum tu_op op, const char *ta, const char *tb, const char *file, int line,
                   int fatal)
{
    char cond[1024];
    snprintf(cond, sizeof cond, "%s %s %s (%.17g vs %.17g)", ta, op_text[op], tb, a, b);
    int ok = op == TU_EQ ? a == b : op == TU_NE ? a != b : op == TU_LT ? a < b : op == TU_LE ? a <= b
           : op == TU_GT ? a > b : a >= b;
    record(ok, cond, file, line, fatal);
}

void tu_check_near_(double a, double b, double tol, const char *ta, const char *tb, const char *ttol, const char *file,
                    int line, int fatal)
{
    char cond[1024];
    snprintf(cond, sizeof cond, "|%s - %s| <= %s (%.17g vs %.17g, tolerance %.3g)", ta, tb, ttol, a, b, tol);
    double d = a - b; /* fabs without libm: NaN stays NaN, and fails */
    d = d < 0 ? -d : d;
    record(d <= (tol < 0 ? -tol : tol), cond, file, line, fatal);
}

void tu_check_str_(const char *a, const char *b, int has, const char *ta, const char *tb, const char *file, int line,
                   int fatal)
{
    char cond[2048];
    snprintf(cond, sizeof cond, has ? "strstr(%s, %s) != NULL (\"%.900s\" lacks \"%.100s\")"
                                    : "strcmp(%s, %s) == 0 (\"%.450s\" vs \"%.450s\")",
             ta, tb, a ? a : "(null)", b ? b : "(null)");
    int ok = a && b && (has ? strstr(a, b) != NULL : strcmp(a, b) == 0);
    record(ok, cond, file, line, fatal);
}

void tu_check_mem_(const void *a, const void *b, size_t n, int equal, const char *ta, const char *tb, const char *tn,
                   const char *file, int line, int fatal)
{
    char cond[1024];
    const unsigned char *x = a, *y = b;
    int same = n == 0 || (x && y && memcmp(x, y, n) == 0);
    if (n && (!x || !y))
        snprintf(cond, sizeof cond, "memcmp(%s, %s, %s) %s 0 (%s is NULL; n = %zu)", ta, tb, tn, equal ? "==" : "!=",
                 !x ? ta : tb, n);
    else if (!same) {
        size_t i = 0;
        while (x[i] == y[i])
            i++;
        snprintf(cond, sizeof cond, "memcmp(%s, %s, %s) == 0 (byte %zu of %zu first differs: 0x%02x vs 0x%02x)", ta,
                 tb, tn, i, n, x[i], y[i]);
    } else
        snprintf(cond, sizeof cond, "memcmp(%s, %s, %s) != 0 (all %zu bytes equal)", ta, tb, tn, n);
    record(n && (!x || !y) ? 0 : equal ? same : !same, cond, file, line, fatal);
}
