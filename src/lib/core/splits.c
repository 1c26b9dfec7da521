/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * splits.c - --split's named parts and where they end, in exact arithmetic (splits.h).
 *
 * A binary float cannot hold 0.1 or 0.7, and floor(N x a float near 0.9) came out one row short (179999
 * of 200000), so the fractions are parsed as the exact rationals their text names, reduced, and put over
 * their least common denominator L: every sum is then an integer and every boundary one 128-bit
 * multiplication and division.  Decimals are the integer of their significant digits over a power of ten
 * (trailing zeros dropped first, so "0.10000000000000000000" is 1/10); ratios are as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splits.h"

#define U128_DIGITS_MAX 38 /* digits an integer below 10^38 < 2^127 has */

static h5shuf_u128 gcd128(h5shuf_u128 a, h5shuf_u128 b)
{
    while (b) {
        h5shuf_u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The run of digits at text[*i ..) (stopping at end); advances *i. */
static size_t digit_run(const char *text, size_t end, size_t *i)
{
    size_t from = *i;
    while (*i < end && is_digit(text[*i]))
        (*i)++;
    return *i - from;
}

/* The integer of digits text[from .. from + n) without leading zeros, into *v: 0 when it has more than
 * U128_DIGITS_MAX significant digits. */
static int integer128(const char *text, size_t from, size_t n, h5shuf_u128 *v)
{
    while (n && text[from] == '0') {
        from++;
        n--;
    }
    if (n > U128_DIGITS_MAX)
        return 0;
    *v = 0;
    for (size_t k = 0; k < n; k++)
        *v = *v * 10 + (unsigned)(text[from + k] - '0');
    return 1;
}

/* p / q in lowest terms, each at most H5SHUF_SPLIT_DIGITS_MAX: 1, or -1 past it. */
static int reduce(h5shuf_u128 p, h5shuf_u128 q, uint64_t *num, uint64_t *den)
{
    h5shuf_u128 g = p ? gcd128(p, q) : q;
    p /= g;
    q /= g;
    if (p > H5SHUF_SPLIT_DIGITS_MAX || q > H5SHUF_SPLIT_DIGITS_MAX)
        return -1;
    *num = (uint64_t)p;
    *den = (uint64_t)q;
    return 1;
}

/* A decimal of text[0 .. len): the digits of its whole part and fraction as one integer D, so that the
 * value is D x 10^(exponent - fraction digits). */
static int decimal_parse(const char *text, size_t len, uint64_t *num, uint64_t *den)
{
    size_t i = 0, w0 = 0, nw = digit_run(text, len, &i), f0 = i, nf = 0;
    if (i < len && text[i] == '.') {
        f0 = ++i;
        nf = digit_run(text, len, &i);
    }
    if (nw + nf == 0)
        return 0;
    long long exp10 = 0;
    if (i < len && (text[i] == 'e' || text[i] == 'E')) {
        int neg = 0;
        i++;
        if (i < len && (text[i] == '+' || text[i] == '-'))
            neg = text[i++] == '-';
        size_t e0 = i, ne = digit_run(text, len, &i);
        if (ne == 0)
            return 0;
        for (size_t k = 0; k < ne; k++) {
            if (exp10 > 100000) /* far past any bound: the value has too many digits either way */
                break;
            exp10 = exp10 * 10 + (text[e0 + k] - '0');
        }
        exp10 = neg ? -exp10 : exp10;
    }
    if (i != len)
        return 0;
    /* digit k of D (whole digits, then fraction digits); the first and last that are not 0 */
#define DIGIT(k) ((k) < nw ? text[w0 + (k)] : text[f0 + (k) - nw])
    size_t total = nw + nf, lo = 0, hi = total;
    while (lo < total && DIGIT(lo) == '0')
        lo++;
    if (lo == total) { /* zero */
        *num = 0;
        *den = 1;
        return 1;
    }
    while (DIGIT(hi - 1) == '0')
        hi--;
    if (hi - lo > U128_DIGITS_MAX)
        return -1;
    h5shuf_u128 d = 0;
    for (size_t k = lo; k < hi; k++)
        d = d * 10 + (unsigned)(DIGIT(k) - '0');
#undef DIGIT
    /* value = d x 10^scale, the trailing zeros dropped from d counted in scale */
    long long scale = exp10 - (long long)nf + (long long)(total - hi);
    for (; scale > 0; scale--) { /* d x 10^scale: past the bound as soon as it passes it */
        if (d > H5SHUF_SPLIT_DIGITS_MAX)
            return -1;
        d *= 10;
    }
    /* d / 10^-scale = d / (2^a 5^b): the factors d shares with the denominator cancelled first, so that
     * an exact binary fraction written out (2^-50: 50 places) is 1 / 2^50 */
    long long a = -scale, b = -scale;
    for (; a > 0 && d % 2 == 0; a--)
        d /= 2;
    for (; b > 0 && d % 5 == 0; b--)
        d /= 5;
    if (a > 60 || b > 26) /* 2^60 and 5^26 each pass 10^18 already: no denominator of the bound */
        return -1;
    h5shuf_u128 q = 1;
    for (; a > 0; a--)
        q *= 2;
    for (; b > 0; b--)
        q *= 5; /* at most 2^60 5^26 < 2^121 */
    return reduce(d, q, num, den);
}

int h5shuf__fraction_parse(const char *text, size_t len, uint64_t *num, uint64_t *den)
{
    const char *slash = memchr(text, '/', len);
    if (!slash)
        return decimal_parse(text, len, num, den);
    size_t i = 0, np = digit_run(text, len, &i);
    if (np == 0 || text + i != slash)
        return 0;
    size_t q0 = ++i, nq = digit_run(text, len, &i);
    h5shuf_u128 p, q;
    if (nq == 0 || i != len)
        return 0;
    if (!integer128(text, 0, np, &p) || !integer128(text, q0, nq, &q))
        return -1;
    return q == 0 ? 0 : reduce(p, q, num, den);
}

/* Whether name holds only letters, digits, '_', '-' and '.'. */
static int name_ok(const char *name)
{
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || is_digit(*c) || *c == '_' || *c == '-' ||
              *c == '.'))
            return 0;
    return 1;
}

/* Parse the items of spec (its copy, cut in place) into s->names and num/den. */
static int parse_items(const char *spec, char *copy, struct h5shuf_splits *s, uint64_t *num, uint64_t *den,
                       struct h5shuf_err *err)
{
    const char *syntax = "--split '%s': expected NAME=FRACTION[,NAME=FRACTION...], e.g. train=0.9,val=0.1";
    for (char *item = copy, *next; item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1])
            return h5shuf__fail(err, H5SHUF_EINVAL, syntax, spec);
        *eq = '\0';
        if (!name_ok(item))
            return h5shuf__fail(err, H5SHUF_EINVAL,
                                "--split '%s': name '%s' may only hold letters, digits, '_', '-' and '.'", spec, item);
        for (size_t k = 0; k < s->n; k++)
            if (strcmp(s->names[k], item) == 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "--split '%s': name '%s' given twice", spec, item);
        int r = h5shuf__fraction_parse(eq + 1, strlen(eq + 1), &num[s->n], &den[s->n]);
        if (r == 0)
            return h5shuf__fail(err, H5SHUF_EINVAL, syntax, spec);
        if (r < 0)
            return h5shuf__fail(err, H5SHUF_EINVAL,
                                "--split '%s': the fraction of '%s' has too many digits (at most 18 significant "
                                "digits, numerator and denominator at most 10^18)",
                                spec, item);
        if (num[s->n] == 0)
            return h5shuf__fail(err, H5SHUF_EINVAL, "--split '%s': the fraction of '%s' must be above 0", spec, item);
        if (!(s->names[s->n] = strdup(item)))
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        s->n++;
    }
    return H5SHUF_OK;
}

/* The fractions over their least common denominator, summed into s->cum; the sum checked against 1. */
static int common_sums(const char *spec, struct h5shuf_splits *s, const uint64_t *num, const uint64_t *den,
                       struct h5shuf_err *err)
{
    h5shuf_u128 l = 1;
    long double approx = 0;
    for (size_t k = 0; k < s->n; k++) {
        l = l / gcd128(l, den[k]) * den[k]; /* both at most 10^18: at most 10^36 < 2^128 */
        if (l > H5SHUF_SPLIT_DIGITS_MAX)
            return h5shuf__fail(err, H5SHUF_EINVAL,
                                "--split '%s': the fractions' denominators have a least common multiple above 10^18: "
                                "give them with fewer digits",
                                spec);
        approx += (long double)num[k] / (long double)den[k];
    }
    h5shuf_u128 sum = 0;
    int over = 0;
    for (size_t k = 0; k < s->n && !over; k++) {
        h5shuf_u128 a = (h5shuf_u128)num[k] * (l / den[k]); /* at most 10^36 */
        over = a > 2 * l;                                   /* the sum is past 2: refused below */
        sum += a;
        s->cum[k] = over ? 0 : (uint64_t)sum; /* below 2 x 10^18 while nothing is over */
        over |= sum > 2 * l;
    }
    /* within 10^-6 of 1: |sum - l| x 10^6 <= l, exactly */
    h5shuf_u128 diff = sum > l ? sum - l : l - sum;
    if (over || diff * 1000000 > l)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--split '%s': the fractions sum to %.9Lg, not 1", spec, approx);
    return H5SHUF_OK;
}

int h5shuf__splits_parse(const char *spec, struct h5shuf_splits *s, struct h5shuf_err *err)
{
    memset(s, 0, sizeof *s);
    size_t cap = 1;
    for (const char *p = spec; *p; p++)
        cap += *p == ',';
    char *copy = strdup(spec);
    uint64_t *num = calloc(cap, sizeof *num), *den = calloc(cap, sizeof *den);
    s->names = calloc(cap, sizeof *s->names);
    s->cum = calloc(cap, sizeof *s->cum);
    int st = copy && num && den && s->names && s->cum ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK)
        st = parse_items(spec, copy, s, num, den, err);
    if (st == H5SHUF_OK)
        st = common_sums(spec, s, num, den, err);
    free(copy);
    free(num);
    free(den);
    return st;
}

uint64_t h5shuf__splits_end(const struct h5shuf_splits *s, size_t k, uint64_t rows)
{
    if (k + 1 >= s->n)
        return rows;
    return (uint64_t)((h5shuf_u128)rows * s->cum[k] / s->cum[s->n - 1]); /* < 2^64 x 2^61 */
}

void h5shuf__splits_free(struct h5shuf_splits *s)
{
    for (size_t k = 0; s->names && k < s->n; k++)
        free(s->names[k]);
    free(s->names);
    free(s->cum);
    memset(s, 0, sizeof *s);
}
