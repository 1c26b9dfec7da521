/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mixture.c - target proportions of named domains turned into the weights of their inputs (mixture.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mixture.h"
#include "sample.h"
#include "spec.h"

#define SHARE_ONE UINT64_C(1000000000)           /* a share of 1, in units of 10^-9 */
#define FRAC_ONE UINT64_C(1000000000000000000)   /* a weight's fraction of 1, in units of 10^-18 */

void h5shuf__mixture_free(struct h5shuf_mixture *m)
{
    for (size_t t = 0; m->names && t < m->n; t++)
        free(m->names[t]);
    free(m->names);
    free(m->share);
    memset(m, 0, sizeof *m);
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

/* A share "0.7" (or "2") of text[0 .. len) in units of 10^-9; 0 when it is no number or too large. */
static int parse_share(const char *p, size_t len, uint64_t *share)
{
    uint64_t whole, frac;
    if (h5shuf__decimal_parse(p, len, 9, 1000000000, &whole, &frac) != 1)
        return 0;
    *share = whole * SHARE_ONE + frac;
    return 1;
}

int h5shuf__mixture_parse(const char *text, struct h5shuf_mixture *m, struct h5shuf_err *err)
{
    memset(m, 0, sizeof *m);
    size_t cap = 1;
    for (const char *q = text; *q; q++)
        cap += *q == ',';
    m->names = calloc(cap, sizeof *m->names);
    m->share = calloc(cap, sizeof *m->share);
    if (!m->names || !m->share)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    uint64_t sum = 0;
    for (const char *p = text;;) {
        const char *end = strchr(p, ','), *eq = strchr(p, '=');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!eq || eq >= p + len || eq == p)
            return h5shuf__fail(err, H5SHUF_EINVAL, "--mix '%s': '%.*s' is not NAME=PROPORTION", text, (int)len, p);
        size_t nlen = (size_t)(eq - p);
        for (size_t i = 0; i < nlen; i++)
            if (!name_char(p[i]))
                return h5shuf__fail(err, H5SHUF_EINVAL, "--mix '%s': a name has letters, digits, '_', '-' and '.' only",
                                    text);
        for (size_t t = 0; t < m->n; t++)
            if (strlen(m->names[t]) == nlen && memcmp(m->names[t], p, nlen) == 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "--mix '%s': %.*s named twice", text, (int)nlen, p);
        if (!parse_share(eq + 1, len - nlen - 1, &m->share[m->n]))
            return h5shuf__fail(err, H5SHUF_EINVAL,
                                "--mix '%s': the proportion of %.*s is not a decimal number (at most 9 digits after "
                                "the point)", text, (int)nlen, p);
        if (!(m->names[m->n] = strndup(p, nlen)))
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        sum += m->share[m->n++];
        if (!end)
            break;
        p = end + 1;
    }
    if (sum == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--mix '%s': every proportion is 0", text);
    return H5SHUF_OK;
}

size_t h5shuf__mixture_tag(const struct h5shuf_mixture *m, const char *spec, const char **rest)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return SIZE_MAX;
    for (size_t t = 0; t < m->n; t++)
        if (strlen(m->names[t]) == (size_t)(eq - spec) && memcmp(m->names[t], spec, (size_t)(eq - spec)) == 0) {
            *rest = eq + 1;
            return t;
        }
    return SIZE_MAX;
}

/* Apportion total over k parts in proportion to w[j] (largest remainders, ties to the earlier part) into
 * out[0..k).  wsum = sum of w > 0. */
static void apportion(uint64_t total, size_t k, const uint64_t *w, h5shuf_u128 wsum, uint64_t *out, h5shuf_u128 *rem)
{
    uint64_t given = 0;
    for (size_t j = 0; j < k; j++) {
        h5shuf_u128 x = (h5shuf_u128)total * w[j];
        out[j] = (uint64_t)(x / wsum);
        rem[j] = x % wsum;
        given += out[j];
    }
    for (; given < total; given++) { /* fewer than k times */
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < k; j++)
            if (w[j] && rem[j] != (h5shuf_u128)-1 && (best == SIZE_MAX || rem[j] > rem[best]))
                best = j;
        out[best]++;
        rem[best] = (h5shuf_u128)-1; /* one extra a part at most */
    }
}

/* "q" or "q.ffff" (trailing zeros dropped): the weight that rounds back to c rows of n (n > 0). */
static void weight_text(uint64_t c, uint64_t n, char *buf)
{
    const uint64_t q = c / n, r = c % n;
    if (r == 0) {
        snprintf(buf, H5SHUF_MIX_WEIGHT_TEXT, "%llu", (unsigned long long)q);
        return;
    }
    uint64_t num = (uint64_t)(((h5shuf_u128)r * FRAC_ONE * 2 + n) / ((h5shuf_u128)n * 2));
    while (h5shuf__sample_size(n, num, FRAC_ONE) < r) /* (never for n < 10^18: one step of 10^-18 is < 1/(2n)) */
        num++;
    while (h5shuf__sample_size(n, num, FRAC_ONE) > r)
        num--;
    int len = snprintf(buf, H5SHUF_MIX_WEIGHT_TEXT, "%llu.%018llu", (unsigned long long)q, (unsigned long long)num);
    while (len > 0 && buf[len - 1] == '0')
        buf[--len] = '\0';
}

/* The domains' rows for an output of rows rows; whether every domain has them (repeat: any domain with
 * rows). */
static int domain_targets(const struct h5shuf_mixture *m, const uint64_t *have, uint64_t rows, int repeat,
                          uint64_t *target, h5shuf_u128 *rem)
{
    h5shuf_u128 sum = 0;
    for (size_t t = 0; t < m->n; t++)
        sum += m->share[t];
    apportion(rows, m->n, m->share, sum, target, rem);
    for (size_t t = 0; t < m->n; t++)
        if (target[t] > 0 && (have[t] == 0 || (!repeat && target[t] > have[t])))
            return 0;
    return 1;
}

int h5shuf__mixture_weights(const struct h5shuf_mixture *m, size_t n, const size_t *tag, const uint64_t *rows,
                            int rows_set, uint64_t *out_rows, int repeat, uint64_t *target, uint64_t *count,
                            char (*weight)[H5SHUF_MIX_WEIGHT_TEXT], struct h5shuf_err *err)
{
    const size_t k = m->n > n ? m->n : n;
    uint64_t *have = calloc(m->n, sizeof *have), *w = calloc(k, sizeof *w), *part = calloc(k, sizeof *part);
    h5shuf_u128 *rem = calloc(k, sizeof *rem);
    int st = have && w && part && rem ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t f = 0; st == H5SHUF_OK && f < n; f++)
        have[tag[f]] += rows[f];
    h5shuf_u128 sum = 0;
    for (size_t t = 0; st == H5SHUF_OK && t < m->n; t++)
        sum += m->share[t];
    if (st == H5SHUF_OK && !rows_set) { /* the most rows without a repeat: min over t of have_t A / a_t, then down */
        h5shuf_u128 most = (h5shuf_u128)UINT64_MAX;
        for (size_t t = 0; t < m->n; t++)
            if (m->share[t]) {
                h5shuf_u128 r = (h5shuf_u128)have[t] * sum / m->share[t];
                most = r < most ? r : most;
            }
        *out_rows = (uint64_t)most;
        while (*out_rows > 0 && !domain_targets(m, have, *out_rows, 0, target, rem))
            --*out_rows; /* (a remainder's extra row: at most a few steps) */
    }
    if (st == H5SHUF_OK && !domain_targets(m, have, *out_rows, repeat, target, rem)) {
        for (size_t t = 0; t < m->n; t++)
            if (target[t] > 0 && (have[t] == 0 || (!repeat && target[t] > have[t]))) {
                st = have[t] == 0 ? h5shuf__fail(err, H5SHUF_EINVAL, "--mix: %s has a proportion but no input rows",
                                                 m->names[t])
                                  : h5shuf__fail(err, H5SHUF_EINVAL,
                                                 "--mix: %s needs %llu of the %llu rows, its inputs have %llu: give "
                                                 "--allow-repeat to repeat rows, or fewer --rows",
                                                 m->names[t], (unsigned long long)target[t],
                                                 (unsigned long long)*out_rows, (unsigned long long)have[t]);
                break;
            }
    }
    for (size_t t = 0; st == H5SHUF_OK && t < m->n; t++) { /* domain t's rows over its inputs */
        size_t j = 0;
        for (size_t f = 0; f < n; f++)
            if (tag[f] == t)
                w[j++] = rows[f];
        if (j == 0)
            continue;
        apportion(target[t], j, w, have[t] ? have[t] : 1, part, rem);
        j = 0;
        for (size_t f = 0; f < n; f++)
            if (tag[f] == t)
                count[f] = part[j++];
    }
    for (size_t f = 0; st == H5SHUF_OK && f < n; f++) {
        if (rows[f] == 0) {
            snprintf(weight[f], H5SHUF_MIX_WEIGHT_TEXT, "0");
            continue;
        }
        if (count[f] / rows[f] >= 65535)
            st = h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "--mix: an input of %llu rows would be copied %llu times",
                              (unsigned long long)rows[f], (unsigned long long)(count[f] / rows[f]));
        else
            weight_text(count[f], rows[f], weight[f]);
    }
    free(have);
    free(w);
    free(part);
    free(rem);
    return st;
}
