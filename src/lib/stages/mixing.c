/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixing.c - the mixing report: how evenly the inputs are spread over a window of the output.
 *
 * The windows, the first and the last W output rows, come from the keys alone (head.c).  For each,
 * Pearson's chi-square statistic compares the rows of each input with its expected share W * rows_f / N, and its p-value is the upper tail of the chi-square
 * distribution, Q(df/2, x/2), the regularised upper incomplete gamma function (Press, Teukolsky,
 * Vetterling, Flannery, "Numerical Recipes", 3rd ed., section 6.2: series for x < a + 1, Lentz's
 * continued fraction otherwise).
 *
 * Every window (h5shuf__mixing_windows): the output cut at K fixed keys, so that each window is a run of
 * consecutive output rows, its rows counted per input in one scan of the keys.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "head.h"
#include "keys.h"
#include "mixing.h"
#include "strata.h"

#define DEFAULT_WINDOW_ROWS UINT64_C(10000)

/* Regularised upper incomplete gamma Q(a, x), a > 0, x >= 0 (Numerical Recipes 6.2). */
static double gamma_q(double a, double x)
{
    if (x <= 0)
        return 1.0;
    double lg = lgamma(a);
    if (x < a + 1) { /* series for P(a, x) */
        double ap = a, sum = 1.0 / a, del = sum;
        for (int k = 0; k < 10000; k++) {
            ap += 1;
            del *= x / ap;
            sum += del;
            if (fabs(del) < fabs(sum) * 1e-15)
                break;
        }
        double p = sum * exp(-x + a * log(x) - lg);
        return p > 1 ? 0 : 1 - p;
    }
    /* continued fraction for Q(a, x), modified Lentz */
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int k = 1; k < 10000; k++) {
        double an = -k * (k - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return exp(-x + a * log(x) - lg) * h;
}

double h5shuf__chi2_upper(double chi2, uint64_t df)
{
    return df == 0 ? 1.0 : gamma_q((double)df / 2, chi2 / 2);
}

static void window_stats(const struct h5shuf_inputs *in, const struct h5shuf_keyidx *pairs, uint64_t w,
                         uint64_t first_row, uint64_t *counts, double *expected, h5shuf_mixing *m)
{
    /* per input as given: a weighted input's copies count together, its rows the weighted ones */
    memset(counts, 0, in->nsrc * sizeof *counts);
    for (uint64_t r = 0; r < w; r++)
        counts[in->v[h5shuf__input_of(in, pairs[r].idx)].src]++;
    m->window_rows = w;
    m->first_row = first_row;
    m->ninputs = in->nsrc;
    m->counts = counts;
    m->expected = expected;
    m->chi2 = 0;
    m->df = 0;
    uint64_t used = 0;
    memset(expected, 0, in->nsrc * sizeof *expected);
    for (size_t f = 0; f < in->n; f++)
        expected[in->v[f].src] += (double)in->v[f].rows;
    for (size_t f = 0; f < in->nsrc; f++) {
        const double rows = expected[f];
        expected[f] = in->rows ? (double)w * rows / (double)in->rows : 0;
        if (rows == 0)
            continue;
        used++;
        double diff = (double)counts[f] - expected[f];
        if (expected[f] > 0)
            m->chi2 += diff * diff / expected[f];
    }
    m->df = used ? used - 1 : 0;
    m->p_value = h5shuf__chi2_upper(m->chi2, m->df);
}

int h5shuf__mixing(const struct h5shuf_inputs *in, uint64_t seed, const struct h5shuf_strata *strata, uint64_t out_rows, const struct h5shuf_keyidx *bound,
                   uint64_t window_rows, uint64_t **store, h5shuf_mixing *first, h5shuf_mixing *last,
                   const struct h5shuf_progress *progress, struct h5shuf_err *err)
{
    uint64_t w = window_rows ? window_rows : DEFAULT_WINDOW_ROWS;
    if (w > out_rows)
        w = out_rows;
    if (w > SIZE_MAX / 2 / sizeof(struct h5shuf_keyidx))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for a window of %llu rows", (unsigned long long)w);
    struct h5shuf_keyidx *heap = malloc((w ? 2 * w : 1) * sizeof *heap); /* smallest, then largest */
    /* 2 * ninputs counts, then 2 * ninputs doubles (expected shares), in one block */
    free(*store);
    *store = malloc(in->n * 2 * (sizeof(uint64_t) + sizeof(double)));
    if (!heap || !*store) {
        free(heap);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for a window of %llu rows", (unsigned long long)w);
    }
    uint64_t *counts = *store;
    double *expected = (double *)(counts + 2 * in->n);
    int st = h5shuf__select_pairs(seed, strata, in->rows, heap, heap + w, w, bound, progress, err);
    if (st != H5SHUF_OK) {
        free(heap);
        return st;
    }
    window_stats(in, heap, w, 0, counts, expected, first);
    window_stats(in, heap + w, w, out_rows - w, counts + in->nsrc, expected + in->nsrc, last);
    free(heap);
    return H5SHUF_OK;
}

/* P(X >= x) for X ~ chi-square(df): Q(df/2, x/2), or past 1000 degrees of freedom Wilson and Hilferty's
 * normal approximation of (X/df)^(1/3) (Johnson, Kotz and Balakrishnan, "Continuous Univariate
 * Distributions" vol. 1, 2nd ed., 18.5). */
static double chi2_tail(double x, uint64_t df)
{
    if (df <= 1000)
        return h5shuf__chi2_upper(x, df);
    const double v = 2.0 / (9.0 * (double)df), z = (cbrt(x / (double)df) - (1 - v)) / sqrt(v);
    return 0.5 * erfc(z / sqrt(2.0));
}

/* Counts counts[j * ns + s] of each window j and input s over the rows of in with their keys. */
static int count_windows(const struct h5shuf_inputs *in, uint64_t seed, const struct h5shuf_strata *strata, const struct h5shuf_keyidx *bound,
                         struct h5shuf_range range, uint64_t k, uint64_t *counts, const struct h5shuf_progress *progress,
                         struct h5shuf_err *err)
{
    const size_t ns = in->nsrc;
    uint64_t keys[1024], done = 0;
    for (size_t f = 0; f < in->n; f++) {
        const uint64_t end = in->v[f].first_row + in->v[f].rows, src = in->v[f].src;
        for (uint64_t first = in->v[f].first_row; first < end; first += 1024) {
            const uint64_t n = end - first < 1024 ? end - first : 1024;
            h5shuf__order_keys(seed, strata, NULL, first, n, keys);
            for (uint64_t r = 0; r < n; r++) {
                if (bound && (keys[r] > bound->key || (keys[r] == bound->key && first + r > bound->idx)))
                    continue;
                counts[h5shuf__range_part(range, k, keys[r]) * ns + src]++;
            }
            done += n;
            if (done % H5SHUF_SCAN_STEP_ROWS < n || done == in->rows) {
                int st = h5shuf__progress(progress, err, H5SHUF_PHASE_SELECT, done, in->rows);
                if (st != H5SHUF_OK)
                    return st;
            }
        }
    }
    return H5SHUF_OK;
}

int h5shuf__mixing_windows(const struct h5shuf_inputs *in, uint64_t seed, const struct h5shuf_strata *strata,
                           uint64_t out_rows,
                           const struct h5shuf_keyidx *bound, uint64_t window_rows, h5shuf_mixing_windows *out,
                           const struct h5shuf_progress *progress, struct h5shuf_err *err)
{
    memset(out, 0, sizeof *out);
    uint64_t w = window_rows ? window_rows : DEFAULT_WINDOW_ROWS;
    if (w > out_rows)
        w = out_rows;
    if (w == 0)
        return H5SHUF_OK;
    const size_t ns = in->nsrc ? in->nsrc : 1;
    uint64_t k = out_rows / w + (out_rows % w != 0);
    while (k > 1 && k > (UINT64_C(64) << 20) / sizeof(uint64_t) / ns) { /* the counts within 64 MiB */
        w *= 2;
        k = out_rows / w + (out_rows % w != 0);
    }
    uint64_t *counts = H5SHUF_FAULT() ? NULL : calloc(k * ns, sizeof *counts);
    double *share = calloc(ns, sizeof *share);
    int st = counts && share ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory for %llu windows",
                                                        (unsigned long long)k);
    const struct h5shuf_range range = {0, bound ? (h5shuf_u128)bound->key + 1 : (h5shuf_u128)1 << 64};
    if (st == H5SHUF_OK)
        st = count_windows(in, seed, strata, bound, range, k, counts, progress, err);
    uint64_t used = 0;
    for (size_t f = 0; st == H5SHUF_OK && f < in->n; f++)
        share[in->v[f].src] += in->rows ? (double)in->v[f].rows / (double)in->rows : 0;
    for (size_t s = 0; st == H5SHUF_OK && s < ns; s++)
        used += share[s] > 0;
    const uint64_t df = used ? used - 1 : 0;
    *out = (h5shuf_mixing_windows){.window_rows = out_rows / k, .windows = k, .rows_min = UINT64_MAX,
                                   .worst_chi2 = -1, .worst_p_value = 1};
    uint64_t row = 0;
    for (uint64_t j = 0; st == H5SHUF_OK && j < k; j++) {
        const uint64_t *c = counts + j * ns;
        uint64_t n = 0;
        for (size_t s = 0; s < ns; s++)
            n += c[s];
        double chi2 = 0;
        for (size_t s = 0; s < ns; s++)
            if (share[s] > 0) {
                const double e = (double)n * share[s], d = (double)c[s] - e;
                chi2 += n ? d * d / e : 0;
            }
        const double p = n ? h5shuf__chi2_upper(chi2, df) : 1;
        out->rows_min = n < out->rows_min ? n : out->rows_min;
        out->rows_max = n > out->rows_max ? n : out->rows_max;
        out->chi2 += chi2;
        out->df += n ? df : 0;
        out->below_001 += p < 0.001;
        if (chi2 > out->worst_chi2) {
            out->worst_chi2 = chi2;
            out->worst_first_row = row;
            out->worst_rows = n;
            out->worst_p_value = p;
        }
        row += n;
    }
    if (st == H5SHUF_OK)
        out->p_value = out->df ? chi2_tail(out->chi2, out->df) : 1;
    free(counts);
    free(share);
    return st;
}
