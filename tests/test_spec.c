/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_spec.c - the FILE[:/path,...] syntax, sizes with K/M/G/T suffixes, decimals, and --split's exact
 * fractions and boundaries (the expected boundaries computed with Python's fractions.Fraction).
 */
#include <stdio.h>
#include <string.h>

#include "spec.h"
#include "splits.h"
#include "tu_core.h"

static void test_spec_forms(void)
{
    struct h5shuf_spec s;
    struct h5shuf_err e = {0};
    ASSERT_EQ_INT(h5shuf__spec_parse("train.h5", &s, &e), H5SHUF_OK);
    ASSERT_EQ_STR(s.file, "train.h5");
    ASSERT_EQ_INT(s.npaths, 0);
    h5shuf__spec_clear(&s);

    ASSERT_EQ_INT(h5shuf__spec_parse("dir/a:b.h5:/x,/g/y", &s, &e), H5SHUF_OK);
    ASSERT_EQ_STR(s.file, "dir/a:b.h5");
    ASSERT_EQ_INT_FATAL(s.npaths, 2);
    ASSERT_EQ_STR(s.paths[0], "/x");
    ASSERT_EQ_STR(s.paths[1], "/g/y");
    h5shuf__spec_clear(&s);
}

static void test_spec_errors(void)
{
    const char *bad[] = {"", ":/x", "a.h5:", "dir/a.h5:", "a.h5:/x,", "a.h5:/x,y", "a.h5:/", "a.h5:/x,/x", "a.h5:/x,,/y"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct h5shuf_spec s;
        struct h5shuf_err e = {0};
        ASSERT_EQ_INT(h5shuf__spec_parse(bad[i], &s, &e), H5SHUF_EINVAL);
        ASSERT_GT_INT(strlen(e.msg), 0);
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
        ASSERT_EQ_INT(h5shuf_parse_size(ok[i].text, &v), H5SHUF_OK);
        ASSERT_EQ_INT(v, ok[i].bytes);
    }
    const char *bad[] = {"", "-5", "+5", " 5", "5Q", "5 M", "16777216T", "99999999999999999999", "M", "5MiBs",
                         "1.5G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v;
        ASSERT_EQ_INT(h5shuf_parse_size(bad[i], &v), H5SHUF_EINVAL);
    }
}

static void test_strerror(void)
{
    ASSERT_EQ_STR(h5shuf_strerror(H5SHUF_OK), "success");
    ASSERT_EQ_STR(h5shuf_strerror(H5SHUF_EEXIST), "output exists");
    ASSERT_EQ_STR(h5shuf_strerror(-1), "unknown status");
    ASSERT_EQ_STR(h5shuf_strerror(9999), "unknown status");
}

/* Decimals of weights and proportions: exact parts, 0 past the last digit allowed, limits. */
static void test_decimal(void)
{
    uint64_t w = 9, f = 9;
    ASSERT_EQ_INT(h5shuf__decimal_parse("2.5", 3, 18, 65535, &w, &f), 1);
    ASSERT_EQ_INT(w, 2);
    ASSERT_EQ_INT(f, UINT64_C(500000000000000000));
    ASSERT_EQ_INT(h5shuf__decimal_parse(".25", 3, 9, 10, &w, &f), 1);
    ASSERT_EQ_INT(w, 0);
    ASSERT_EQ_INT(f, 250000000);
    ASSERT_EQ_INT(h5shuf__decimal_parse("3.", 2, 9, 10, &w, &f), 1);
    ASSERT_EQ_INT(w, 3);
    ASSERT_EQ_INT(f, 0);
    ASSERT_EQ_INT(h5shuf__decimal_parse("0.1234567891", 12, 9, 10, &w, &f), -1);
    ASSERT_EQ_INT(h5shuf__decimal_parse("0.1234567890", 12, 9, 10, &w, &f), 1);
    ASSERT_EQ_INT(f, 123456789);
    ASSERT_EQ_INT(h5shuf__decimal_parse("65535", 5, 18, 65535, &w, &f), 1);
    ASSERT_EQ_INT(h5shuf__decimal_parse("65536", 5, 18, 65535, &w, &f), -2);
    ASSERT_EQ_INT(h5shuf__decimal_parse("99999999999999999999999", 23, 18, 65535, &w, &f), -2);
    ASSERT_EQ_INT(h5shuf__decimal_parse("h5", 2, 18, 65535, &w, &f), 0);
    ASSERT_EQ_INT(h5shuf__decimal_parse(".", 1, 18, 65535, &w, &f), 0);
    ASSERT_EQ_INT(h5shuf__decimal_parse("1.2.3", 5, 18, 65535, &w, &f), 0);
    ASSERT_EQ_INT(h5shuf__decimal_parse("-1", 2, 18, 65535, &w, &f), 0);
}

/* One fraction: 1 and num/den, or the parser's other answer r. */
static void fraction_is(const char *text, int r, uint64_t num, uint64_t den)
{
    uint64_t n = 7, d = 7;
    int got = h5shuf__fraction_parse(text, strlen(text), &n, &d);
    ASSERT_EQ_INT(got, r);
    if (got != r)
        fprintf(stderr, "\n  %s: parsed %d, expected %d\n", text, got, r);
    if (r == 1 && got == 1 && (n != num || d != den))
        fprintf(stderr, "\n  %s: %llu/%llu, expected %llu/%llu\n", text, (unsigned long long)n, (unsigned long long)d,
                (unsigned long long)num, (unsigned long long)den);
    if (r == 1 && got == 1) {
        ASSERT_EQ_INT(n, num);
        ASSERT_EQ_INT(d, den);
    }
}

/* Exact fractions: decimals, exponents, ratios, lowest terms, the digit bounds, what is no fraction. */
static void test_fractions(void)
{
    fraction_is("0.1", 1, 1, 10);
    fraction_is("0.9", 1, 9, 10);
    fraction_is(".25", 1, 1, 4);
    fraction_is("3.", 1, 3, 1);
    fraction_is("1", 1, 1, 1);
    fraction_is("0.333333", 1, 333333, 1000000);
    fraction_is("1e-6", 1, 1, 1000000);
    fraction_is("1E-06", 1, 1, 1000000);
    fraction_is("2.5E-3", 1, 1, 400);
    fraction_is("25e-3", 1, 1, 40);
    fraction_is("0.05e+1", 1, 1, 2);
    fraction_is("1/3", 1, 1, 3);
    fraction_is("2/6", 1, 1, 3);
    fraction_is("007/0021", 1, 1, 3);
    fraction_is("0.10000000000000000000000000000000000000000000", 1, 1, 10); /* trailing zeros are no digits */
    fraction_is("0000000000000000000000000000000000000000000.5", 1, 1, 2);
    fraction_is("0.000000000000000888178419700125232338905334472656250", 1, 1, UINT64_C(1125899906842624)); /* 2^-50 */
    fraction_is("2000000000000000000/4000000000000000000", 1, 1, 2); /* over the bound, not in lowest terms */
    fraction_is("0.123456789012345678", 1, UINT64_C(61728394506172839), UINT64_C(500000000000000000));
    fraction_is("1e-18", 1, 1, UINT64_C(1000000000000000000));
    fraction_is("0", 1, 0, 1);
    fraction_is("0.000", 1, 0, 1);
    fraction_is("1e-19", -1, 0, 0);                     /* a denominator of 10^19 */
    fraction_is("0.1234567890123456789", -1, 0, 0);     /* 19 significant digits */
    fraction_is("1/999999999999999999999", -1, 0, 0);
    fraction_is("1e999999999999999999999", -1, 0, 0);
    fraction_is("1e-999999999999999999999", -1, 0, 0);
    const char *bad[] = {"", ".", "e5", "1e", "1e+", "1.2.3", "-0.1", "+0.1", " 0.1", "0.1 ", "inf", "nan", "0x1p-3",
                         "1/0", "1/", "/3", "1/3/4", "1.5/3", "1/-3", "1,5", "½"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        fraction_is(bad[i], 0, 0, 0);
}

/* The ends of every part of spec over rows rows, against want[0 .. n). */
static void splits_are(const char *spec, uint64_t rows, const uint64_t *want, size_t n)
{
    struct h5shuf_splits s;
    struct h5shuf_err err = {0};
    int st = h5shuf__splits_parse(spec, &s, &err);
    ASSERT_EQ_INT(st, H5SHUF_OK);
    ASSERT_EQ_INT(s.n, n);
    for (size_t k = 0; st == H5SHUF_OK && k < n && k < s.n; k++) {
        uint64_t end = h5shuf__splits_end(&s, k, rows);
        if (end != want[k])
            fprintf(stderr, "\n  %s of %llu: part %zu ends at %llu, expected %llu\n", spec, (unsigned long long)rows, k,
                    (unsigned long long)end, (unsigned long long)want[k]);
        ASSERT_EQ_INT(end, want[k]);
    }
    if (st != H5SHUF_OK)
        fprintf(stderr, "\n  %s: %s\n", spec, err.msg);
    h5shuf__splits_free(&s);
}

/* Boundaries floor(N x cumulative / sum), exact up to N = 2^64 - 1 (expected values from Python's Fraction). */
static void test_split_ends(void)
{
    const uint64_t n63 = UINT64_C(1) << 63, max = UINT64_MAX;
    splits_are("train=0.9,val=0.1", 200000, (const uint64_t[]){180000, 200000}, 2);
    splits_are("train=0.9,val=0.1", 1000, (const uint64_t[]){900, 1000}, 2);
    splits_are("train=0.7,val=0.2,test=0.1", 1000, (const uint64_t[]){700, 900, 1000}, 3);
    splits_are("a=1/3,b=1/3,c=1/3", 1000, (const uint64_t[]){333, 666, 1000}, 3);
    splits_are("a=0.333333,b=0.333333,c=0.333333", 1000, (const uint64_t[]){333, 666, 1000}, 3); /* normalised */
    splits_are("a=0.999999,b=1e-6", 1000000, (const uint64_t[]){999999, 1000000}, 2);
    splits_are("a=0.999999,b=1e-6", 999999, (const uint64_t[]){999998, 999999}, 2);
    splits_are("train=0.9,val=0.1", n63, (const uint64_t[]){UINT64_C(8301034833169298227), n63}, 2);
    splits_are("train=0.7,val=0.2,test=0.1", n63,
               (const uint64_t[]){UINT64_C(6456360425798343065), UINT64_C(8301034833169298227), n63}, 3);
    splits_are("a=0.999999,b=1e-6", n63, (const uint64_t[]){UINT64_C(9223362813482738953), n63}, 2);
    splits_are("a=3/7,b=3/7,c=1/7", n63,
               (const uint64_t[]){UINT64_C(3952873730080618203), UINT64_C(7905747460161236406), n63}, 3);
    splits_are("a=1/3,b=1/3,c=1/3", max,
               (const uint64_t[]){UINT64_C(6148914691236517205), UINT64_C(12297829382473034410), max}, 3);
    splits_are("a=1/3,b=0.5,c=1/6", 6, (const uint64_t[]){2, 5, 6}, 3); /* decimals and ratios together */
    splits_are("a=0.5,b=0.5", 0, (const uint64_t[]){0, 0}, 2);
    splits_are("a=0.5,b=0.5", 1, (const uint64_t[]){0, 1}, 2);
    splits_are("only=1", 17, (const uint64_t[]){17}, 1);
}

/* A refused --split and the words of its message. */
static void split_refused(const char *spec, const char *words)
{
    struct h5shuf_splits s;
    struct h5shuf_err err = {0};
    int st = h5shuf__splits_parse(spec, &s, &err);
    ASSERT_EQ_INT(st, H5SHUF_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, words));
    if (st != H5SHUF_EINVAL || !strstr(err.msg, words))
        fprintf(stderr, "\n  %s: status %d, '%s' (expected '%s')\n", spec, st, err.msg, words);
    h5shuf__splits_free(&s);
}

static void test_split_refused(void)
{
    split_refused("a=0.5,b=0.4", "sum to 0.9, not 1");
    split_refused("a=0.33333,b=0.33333,c=0.33333", "sum to 0.99999, not 1"); /* 10^-5 off */
    split_refused("a=0.9,b=0.2", "sum to 1.1, not 1");
    split_refused("a=5,b=5", "sum to 10, not 1");
    split_refused("a=999999999999999999,b=1", "not 1");
    split_refused("a=0,b=1", "above 0");
    split_refused("a=0.5,a=0.5", "given twice");
    split_refused("a/b=1", "letters, digits");
    split_refused("train", "expected NAME=FRACTION");
    split_refused("train=abc,val=0.1", "expected NAME=FRACTION");
    split_refused("a=0.5,b=0x.8p0", "expected NAME=FRACTION");
    split_refused("a=1/0,b=1", "expected NAME=FRACTION");
    split_refused("a=0.1234567890123456789,b=0.8765432109876543211", "too many digits");
    split_refused("a=1/999999999999999989,b=1/2", "least common multiple above 10^18");
    struct h5shuf_splits s;
    struct h5shuf_err err = {0};
    ASSERT_EQ_INT(h5shuf__splits_parse("a=0.9999995,b=0.0000001", &s, &err), H5SHUF_OK); /* 4e-7 off: within */
    h5shuf__splits_free(&s);
}

int main(void)
{
    static const struct tu_test tests[] = {
        {"spec forms", test_spec_forms},
        {"spec errors", test_spec_errors},
        {"sizes with suffixes and overflow", test_sizes},
        {"status texts", test_strerror},
        {"decimals of weights and proportions", test_decimal},
        {"--split's exact fractions", test_fractions},
        {"--split's boundaries floor(N x cumulative / sum), N up to 2^64 - 1", test_split_ends},
        {"--split refused: sums, digits, denominators, syntax", test_split_refused},
        {NULL, NULL},
    };
    return tu_run("spec", tests);
}
