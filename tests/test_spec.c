/*
 * test_spec.c - the FILE[:/path,...] syntax and sizes with K/M/G/T suffixes.
 */
#include <string.h>

#include "spec.h"
#include "tu_core.h"

static void test_spec_forms(void)
{
    struct h5shuf_spec s;
    struct h5shuf_err e = {0};
    CU_ASSERT_EQUAL(h5shuf__spec_parse("train.h5", &s, &e), H5SHUF_OK);
    CU_ASSERT_STRING_EQUAL(s.file, "train.h5");
    CU_ASSERT_EQUAL(s.npaths, 0);
    h5shuf__spec_clear(&s);

    CU_ASSERT_EQUAL(h5shuf__spec_parse("dir/a:b.h5:/x,/g/y", &s, &e), H5SHUF_OK);
    CU_ASSERT_STRING_EQUAL(s.file, "dir/a:b.h5");
    CU_ASSERT_EQUAL_FATAL(s.npaths, 2);
    CU_ASSERT_STRING_EQUAL(s.paths[0], "/x");
    CU_ASSERT_STRING_EQUAL(s.paths[1], "/g/y");
    h5shuf__spec_clear(&s);
}

static void test_spec_errors(void)
{
    const char *bad[] = {"", ":/x", "a.h5:", "dir/a.h5:", "a.h5:/x,", "a.h5:/x,y", "a.h5:/", "a.h5:/x,/x", "a.h5:/x,,/y"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct h5shuf_spec s;
        struct h5shuf_err e = {0};
        CU_ASSERT_EQUAL(h5shuf__spec_parse(bad[i], &s, &e), H5SHUF_EINVAL);
        CU_ASSERT(strlen(e.msg) > 0);
    }
}

static void test_sizes(void)
{
    static const struct {
        const char *text;
        uint64_t bytes;
    } ok[] = {{"0", 0},          {"123", 123},         {"64K", 65536},        {"64k", 65536},
              {"64KiB", 65536},  {"64KB", 65536},      {"512M", 512ULL << 20}, {"2G", 2ULL << 30},
              {"1T", 1ULL << 40}, {"100B", 100},       {"16777215T", 16777215ULL << 40}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v = 1;
        CU_ASSERT_EQUAL(h5shuf_parse_size(ok[i].text, &v), H5SHUF_OK);
        CU_ASSERT_EQUAL(v, ok[i].bytes);
    }
    const char *bad[] = {"", "-5", "+5", " 5", "5Q", "5 M", "16777216T", "99999999999999999999", "M", "5MiBs",
                         "1.5G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v;
        CU_ASSERT_EQUAL(h5shuf_parse_size(bad[i], &v), H5SHUF_EINVAL);
    }
}

static void test_strerror(void)
{
    CU_ASSERT_STRING_EQUAL(h5shuf_strerror(H5SHUF_OK), "success");
    CU_ASSERT_STRING_EQUAL(h5shuf_strerror(H5SHUF_EEXIST), "output exists");
    CU_ASSERT_STRING_EQUAL(h5shuf_strerror(-1), "unknown status");
    CU_ASSERT_STRING_EQUAL(h5shuf_strerror(9999), "unknown status");
}

/* Decimals of weights and proportions: exact parts, 0 past the last digit allowed, limits. */
static void test_decimal(void)
{
    uint64_t w = 9, f = 9;
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("2.5", 3, 18, 65535, &w, &f), 1);
    CU_ASSERT(w == 2 && f == UINT64_C(500000000000000000));
    CU_ASSERT_EQUAL(h5shuf__decimal_parse(".25", 3, 9, 10, &w, &f), 1);
    CU_ASSERT(w == 0 && f == 250000000);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("3.", 2, 9, 10, &w, &f), 1);
    CU_ASSERT(w == 3 && f == 0);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("0.1234567891", 12, 9, 10, &w, &f), -1);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("0.1234567890", 12, 9, 10, &w, &f), 1);
    CU_ASSERT(f == 123456789);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("65535", 5, 18, 65535, &w, &f), 1);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("65536", 5, 18, 65535, &w, &f), -2);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("99999999999999999999999", 23, 18, 65535, &w, &f), -2);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("h5", 2, 18, 65535, &w, &f), 0);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse(".", 1, 18, 65535, &w, &f), 0);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("1.2.3", 5, 18, 65535, &w, &f), 0);
    CU_ASSERT_EQUAL(h5shuf__decimal_parse("-1", 2, 18, 65535, &w, &f), 0);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"spec forms", test_spec_forms},
        {"spec errors", test_spec_errors},
        {"sizes with suffixes and overflow", test_sizes},
        {"status texts", test_strerror},
        {"decimals of weights and proportions", test_decimal},
        {NULL, NULL},
    };
    return tu_run("spec", tests);
}
