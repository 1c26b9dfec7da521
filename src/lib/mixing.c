/*
 * mixing.c - the mixing report: how evenly the inputs are spread over a window of the output.
 *
 * Output row r is the row of rank r in the order of (key, i), so the first W output rows are the W
 * smallest (key, i) and the last W the W largest (among the output's rows, when a head limits them).
 * Both follow from the keys alone, without reading any data: one stream over the N row ids keeps the W
 * smallest and the W largest pairs in two binary heaps.  For each window, Pearson's chi-square statistic compares the rows of each
 * input with its expected share W * rows_f / N, and its p-value is the upper tail of the chi-square
 * distribution, Q(df/2, x/2), the regularised upper incomplete gamma function (Press, Teukolsky,
 * Vetterling, Flannery, "Numerical Recipes", 3rd ed., section 6.2: series for x < a + 1, Lentz's
 * continued fraction otherwise).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_WINDOW_ROWS UINT64_C(10000)

static int pair_less(struct h5shuf_keyidx a, struct h5shuf_keyidx b)
{
    return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

/* Heap order: the root is the worst pair kept (the largest when keeping the smallest). */
static int heap_above(struct h5shuf_keyidx a, struct h5shuf_keyidx b, int largest)
{
    return largest ? pair_less(a, b) : pair_less(b, a);
}

static void sift_down(struct h5shuf_keyidx *h, size_t n, size_t i, int largest)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && heap_above(h[l], h[top], largest))
            top = l;
        if (r < n && heap_above(h[r], h[top], largest))
            top = r;
        if (top == i)
            return;
        struct h5shuf_keyidx t = h[i];
        h[i] = h[top];
        h[top] = t;
        i = top;
    }
}

static void sift_up(struct h5shuf_keyidx *h, size_t i, int largest)
{
    while (i > 0 && heap_above(h[i], h[(i - 1) / 2], largest)) {
        struct h5shuf_keyidx t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void heap_offer(struct h5shuf_keyidx *heap, size_t *n, uint64_t w, struct h5shuf_keyidx p, int largest)
{
    if (*n < w) {
        heap[*n] = p;
        sift_up(heap, (*n)++, largest);
    } else if (w > 0 && heap_above(heap[0], p, largest)) {
        heap[0] = p;
        sift_down(heap, *n, 0, largest);
    }
}

/* In one stream over ids 0 .. job->rows-1 (those with (key, id) <= *bound when bound is not NULL): the w
 * smallest pairs (key, id) into small[0..w) and, when large is not NULL, the w largest into large[0..w),
 * each in heap order. */
static void select_pairs(const h5shuf_job *job, struct h5shuf_keyidx *small, struct h5shuf_keyidx *large, uint64_t w,
                         const struct h5shuf_keyidx *bound)
{
    size_t ns = 0, nl = 0;
    for (uint64_t i = 0; i < job->rows && w > 0; i++) {
        struct h5shuf_keyidx p = {h5shuf_key(job->seed, i), i};
        if (bound && pair_less(*bound, p))
            continue;
        heap_offer(small, &ns, w, p, 0);
        if (large)
            heap_offer(large, &nl, w, p, 1);
    }
}

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

int h5shuf__head_bound(h5shuf_job *job)
{
    uint64_t n = job->out_rows;
    if (n == 0)
        return H5SHUF_OK; /* nothing is written: no bound needed */
    if (n > job->opts.mem_limit_bytes / sizeof(struct h5shuf_keyidx))
        return h5shuf__fail(&job->err, H5SHUF_EBUDGET,
                            "--head %llu: selecting the rows takes %llu bytes of keys, more than the memory budget",
                            (unsigned long long)n, (unsigned long long)(n * sizeof(struct h5shuf_keyidx)));
    struct h5shuf_keyidx *heap = malloc(n * sizeof *heap);
    if (!heap)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory selecting the first %llu rows", (unsigned long long)n);
    select_pairs(job, heap, NULL, n, NULL);
    job->head_bound = heap[0]; /* the root of the max-heap: the n-th smallest */
    free(heap);
    return H5SHUF_OK;
}

double h5shuf__chi2_upper(double chi2, uint64_t df)
{
    return df == 0 ? 1.0 : gamma_q((double)df / 2, chi2 / 2);
}

static void window_stats(const h5shuf_job *job, const struct h5shuf_keyidx *pairs, uint64_t w, uint64_t first_row,
                         uint64_t *counts, double *expected, h5shuf_mixing *m)
{
    memset(counts, 0, job->ninputs * sizeof *counts);
    for (uint64_t r = 0; r < w; r++)
        counts[h5shuf__input_of(job, pairs[r].idx)]++;
    m->window_rows = w;
    m->first_row = first_row;
    m->ninputs = job->ninputs;
    m->counts = counts;
    m->expected = expected;
    m->chi2 = 0;
    m->df = 0;
    uint64_t used = 0;
    for (size_t f = 0; f < job->ninputs; f++) {
        expected[f] = job->rows ? (double)w * (double)job->inputs[f].rows / (double)job->rows : 0;
        if (job->inputs[f].rows == 0)
            continue;
        used++;
        double diff = (double)counts[f] - expected[f];
        if (expected[f] > 0)
            m->chi2 += diff * diff / expected[f];
    }
    m->df = used ? used - 1 : 0;
    m->p_value = h5shuf__chi2_upper(m->chi2, m->df);
}

int h5shuf_job_mixing(h5shuf_job *job, uint64_t window_rows, h5shuf_mixing *first, h5shuf_mixing *last)
{
    h5shuf__err_clear(job);
    if (!job->planned)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "the job is not planned");
    uint64_t w = window_rows ? window_rows : DEFAULT_WINDOW_ROWS;
    if (w > job->out_rows)
        w = job->out_rows;
    if (w > SIZE_MAX / 2 / sizeof(struct h5shuf_keyidx))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a window of %llu rows", (unsigned long long)w);
    struct h5shuf_keyidx *heap = malloc((w ? 2 * w : 1) * sizeof *heap); /* smallest, then largest */
    /* 2 * ninputs counts, then 2 * ninputs doubles (expected shares), in one block */
    free(job->mixing_counts);
    job->mixing_counts = malloc(job->ninputs * 2 * (sizeof(uint64_t) + sizeof(double)));
    if (!heap || !job->mixing_counts) {
        free(heap);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a window of %llu rows", (unsigned long long)w);
    }
    uint64_t *counts = job->mixing_counts;
    double *expected = (double *)(counts + 2 * job->ninputs);
    const struct h5shuf_keyidx *bound = job->out_rows < job->rows ? &job->head_bound : NULL;
    select_pairs(job, heap, heap + w, w, bound);
    window_stats(job, heap, w, 0, counts, expected, first);
    window_stats(job, heap + w, w, job->out_rows - w, counts + job->ninputs, expected + job->ninputs, last);
    free(heap);
    return H5SHUF_OK;
}
