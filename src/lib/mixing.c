/*
 * mixing.c - the mixing report: how evenly the inputs are spread over a window of the output.
 *
 * The windows, the first and the last W output rows, come from the keys alone (head.c).  For each,
 * Pearson's chi-square statistic compares the rows of each input with its expected share W * rows_f / N, and its p-value is the upper tail of the chi-square
 * distribution, Q(df/2, x/2), the regularised upper incomplete gamma function (Press, Teukolsky,
 * Vetterling, Flannery, "Numerical Recipes", 3rd ed., section 6.2: series for x < a + 1, Lentz's
 * continued fraction otherwise).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "head.h"
#include "mixing.h"

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

int h5shuf__mixing(const struct h5shuf_inputs *in, uint64_t seed, uint64_t out_rows, const struct h5shuf_keyidx *bound,
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
    int st = h5shuf__select_pairs(seed, in->rows, heap, heap + w, w, bound, progress, err);
    if (st != H5SHUF_OK) {
        free(heap);
        return st;
    }
    window_stats(in, heap, w, 0, counts, expected, first);
    window_stats(in, heap + w, w, out_rows - w, counts + in->nsrc, expected + in->nsrc, last);
    free(heap);
    return H5SHUF_OK;
}
