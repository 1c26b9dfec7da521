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
