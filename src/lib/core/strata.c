/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * strata.c - the stratified order of --stratify (strata.h): the counts of every group in every stratum,
 * rounded under both margins, and the keys that put each row in its stratum.
 */
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "strata.h"

void h5shuf__strata_free(struct h5shuf_strata *st)
{
    if (!st)
        return;
    free(st->bound);
    free(st->cum);
    free(st->group_rows);
    free(st->bits);
    free(st->first);
    free(st->offset);
    free(st->group);
    for (size_t t = 0; st->table && t < st->ngroups; t++)
        free(st->table[t]);
    free(st->table);
    memset(st, 0, sizeof *st);
}

int h5shuf__strata_round(size_t D, uint64_t S, const h5shuf_u128 *rem, int64_t *need, const uint64_t *ceil,
                         unsigned char *take, int greedy, uint64_t *repairs)
{
    uint64_t *avail = calloc(D ? D : 1, sizeof *avail); /* strata >= s where the group's share is not whole */
    size_t *cand = malloc((D ? D : 1) * sizeof *cand), *parent = malloc((D ? D : 1) * sizeof *parent);
    uint64_t *via = malloc((D ? D : 1) * sizeof *via);
    size_t *queue = malloc((D ? D : 1) * sizeof *queue);
    int rc = 0;
    if (!avail || !cand || !parent || !via || !queue) {
        rc = -1;
        goto out;
    }
    for (size_t t = 0; t < D; t++)
        for (uint64_t s = 0; s < S; s++)
            avail[t] += rem[t * S + s] != 0;
    /* Greedy: each stratum gives its ceilings to the groups that need them most for the strata left
     * (need / avail, then the larger remainder, then the earlier group). */
    for (uint64_t s = 0; s < S; s++) {
        size_t nc = 0;
        for (size_t t = 0; t < D; t++)
            if (rem[t * S + s])
                cand[nc++] = t;
        for (size_t i = 1; i < nc; i++) { /* insertion sort: D is small */
            size_t c = cand[i], k = i;
            for (; k > 0; k--) {
                size_t b = cand[k - 1];
                h5shuf_u128 lc = (h5shuf_u128)(need[c] > 0 ? (uint64_t)need[c] : 0) * avail[b];
                h5shuf_u128 lb = (h5shuf_u128)(need[b] > 0 ? (uint64_t)need[b] : 0) * avail[c];
                int before = greedy && (lc > lb || (lc == lb && rem[c * S + s] > rem[b * S + s]));
                if (!before)
                    break;
                cand[k] = b;
            }
            cand[k] = c;
        }
        for (size_t i = 0; i < nc; i++) {
            if (i < ceil[s]) {
                take[cand[i] * S + s] = 1;
                need[cand[i]]--;
            }
            avail[cand[i]]--;
        }
    }
    /* Repair: move a ceiling from a group with too many to one with too few along an alternating path
     * (group x holds one in stratum s, group y could hold it instead, ...). */
    for (size_t a = 0; a < D; a++) {
        while (need[a] < 0) {
            for (size_t t = 0; t < D; t++)
                parent[t] = SIZE_MAX;
            parent[a] = a;
            size_t head = 0, tail = 0, found = SIZE_MAX;
            queue[tail++] = a;
            while (head < tail && found == SIZE_MAX) {
                size_t x = queue[head++];
                for (uint64_t s = 0; s < S && found == SIZE_MAX; s++) {
                    if (!take[x * S + s])
                        continue;
                    for (size_t y = 0; y < D; y++)
                        if (parent[y] == SIZE_MAX && rem[y * S + s] && !take[y * S + s]) {
                            parent[y] = x;
                            via[y] = s;
                            queue[tail++] = y;
                            if (need[y] > 0) {
                                found = y;
                                break;
                            }
                        }
                }
            }
            if (found == SIZE_MAX) {
                rc = -3;
                goto out;
            }
            for (size_t y = found; y != a; y = parent[y]) {
                take[y * S + via[y]] = 1;
                take[parent[y] * S + via[y]] = 0;
            }
            need[found]--;
            need[a]++;
            (*repairs)++;
        }
    }
out:
    free(avail);
    free(cand);
    free(parent);
    free(via);
    free(queue);
    return rc;
}

/* A small group's permutation as a table: Fisher and Yates's shuffle (Durstenfeld's form, Knuth's
 * Algorithm P), position i swapped with floor(U (i + 1) / 2^64) for U word i mod 4 of Philox4x64-10 with
 * counter (i / 4, t, 3, 0) and key (seed, 0). */
static int make_table(struct h5shuf_strata *st, size_t t)
{
    const uint64_t n = st->group_rows[t];
    uint32_t *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    const uint64_t key[2] = {st->seed, 0};
    uint64_t u[4] = {0};
    for (uint64_t i = n; i-- > 1;) {
        const uint64_t ctr[4] = {i / 4, t, 3, 0};
        h5shuf__philox4x64_10(ctr, key, u);
        const uint64_t j = (uint64_t)(((h5shuf_u128)u[i % 4] * (i + 1)) >> 64);
        const uint32_t x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
    st->table[t] = a;
    return 0;
}

int h5shuf__strata_make(struct h5shuf_strata *st, uint64_t seed, size_t nentries, const uint64_t *rows,
                        const size_t *group, size_t ngroups, uint64_t nstrata, const uint64_t *ends)
{
    memset(st, 0, sizeof *st);
    const size_t D = ngroups;
    const uint64_t S = nstrata;
    if (S == 0 || (D && (S + 1) > H5SHUF_STRATA_CELLS_MAX / D))
        return -2;
    st->seed = seed;
    st->nstrata = S;
    st->ngroups = D;
    st->nentries = nentries;
    st->bound = malloc((S + 1) * sizeof *st->bound);
    st->cum = calloc(D * (S + 1) + 1, sizeof *st->cum);
    st->group_rows = calloc(D + 1, sizeof *st->group_rows);
    st->bits = calloc(D + 1, sizeof *st->bits);
    st->first = malloc((nentries + 1) * sizeof *st->first);
    st->offset = malloc((nentries + 1) * sizeof *st->offset);
    st->group = malloc((nentries + 1) * sizeof *st->group);
    st->table = calloc(D + 1, sizeof *st->table);
    h5shuf_u128 *rem = calloc(D * S + 1, sizeof *rem);
    int64_t *need = calloc(D + 1, sizeof *need);
    uint64_t *ceil = calloc(S, sizeof *ceil);
    unsigned char *take = calloc(D * S + 1, 1);
    int rc = 0;
    if (!st->bound || !st->cum || !st->group_rows || !st->bits || !st->first || !st->offset || !st->group || !st->table || !rem ||
        !need || !ceil || !take) {
        rc = -1;
        goto out;
    }
    uint64_t R = 0;
    for (size_t e = 0; e < nentries; e++) {
        st->first[e] = R;
        st->group[e] = group[e];
        st->offset[e] = st->group_rows[group[e]];
        st->group_rows[group[e]] += rows[e];
        R += rows[e];
    }
    st->first[nentries] = R;
    st->rows = R;
    for (uint64_t s = 0; s <= S; s++) /* B_s = floor(E_s 2^64 / R) */
        st->bound[s] = R ? ((h5shuf_u128)(s ? ends[s - 1] : 0) << 64) / R : (s ? (h5shuf_u128)1 << 64 : 0);
    for (uint64_t s = 0; s < S; s++) {
        const uint64_t L = ends[s] - (s ? ends[s - 1] : 0);
        uint64_t floors = 0;
        for (size_t t = 0; t < D && R; t++) {
            const h5shuf_u128 x = (h5shuf_u128)st->group_rows[t] * L;
            const uint64_t f = (uint64_t)(x / R);
            rem[t * S + s] = x % R;
            st->cum[t * (S + 1) + s + 1] = f; /* (the floors for now; summed below) */
            floors += f;
        }
        ceil[s] = L - floors;
    }
    for (size_t t = 0; t < D; t++) {
        uint64_t floors = 0;
        for (uint64_t s = 0; s < S; s++)
            floors += st->cum[t * (S + 1) + s + 1];
        need[t] = (int64_t)(st->group_rows[t] - floors);
        unsigned b = 2;
        while (b < 64 && ((uint64_t)1 << b) < st->group_rows[t])
            b++;
        st->bits[t] = b;
        if (st->group_rows[t] <= H5SHUF_STRATA_TABLE_MAX && make_table(st, t) != 0) {
            rc = -1;
            goto out;
        }
    }
    if ((rc = h5shuf__strata_round(D, S, rem, need, ceil, take, 1, &st->repairs)) != 0)
        goto out;
    for (size_t t = 0; t < D; t++) {
        uint64_t *c = st->cum + t * (S + 1);
        for (uint64_t s = 0; s < S; s++)
            c[s + 1] = c[s] + c[s + 1] + take[t * S + s];
    }
out:
    free(rem);
    free(need);
    free(ceil);
    free(take);
    if (rc)
        h5shuf__strata_free(st);
    return rc;
}

/* P_t(j): group t's permutation of its rows (strata.h). */
static uint64_t permute(const struct h5shuf_strata *st, size_t t, uint64_t j)
{
    if (st->table[t])
        return st->table[t][j];
    const uint64_t n = st->group_rows[t];
    const unsigned bits = st->bits[t], lo = bits / 2, hi = bits - lo;
    const uint64_t key[2] = {st->seed, 0};
    uint64_t x = j;
    do {
        uint64_t L = x >> lo, R = x & (((uint64_t)1 << lo) - 1);
        unsigned wl = hi, wr = lo; /* the widths of L and R */
        for (unsigned r = 0; r < H5SHUF_STRATA_ROUNDS; r++) {
            const uint64_t ctr[4] = {R, t, 2, r};
            uint64_t out[4];
            h5shuf__philox4x64_10(ctr, key, out);
            const uint64_t next = (L ^ out[0]) & (((uint64_t)1 << wl) - 1);
            L = R;
            R = next;
            const unsigned w = wl;
            wl = wr;
            wr = w;
        }
        x = (L << lo) | R; /* (an even number of rounds: L is hi bits again) */
    } while (x >= n);
    return x;
}

/* The entry of global row id: the last e with first[e] <= id. */
static size_t entry_of(const struct h5shuf_strata *st, uint64_t id)
{
    size_t lo = 0, hi = st->nentries;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->first[mid] <= id)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The stratum of id within entry e. */
static uint64_t stratum_in(const struct h5shuf_strata *st, size_t e, uint64_t id)
{
    const size_t t = st->group[e];
    const uint64_t p = permute(st, t, st->offset[e] + (id - st->first[e]));
    const uint64_t *c = st->cum + t * (st->nstrata + 1);
    uint64_t lo = 0, hi = st->nstrata; /* the last s < S with c[s] <= p */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (c[mid] <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t h5shuf__strata_of(const struct h5shuf_strata *st, uint64_t id)
{
    return stratum_in(st, entry_of(st, id), id);
}

void h5shuf__strata_keys(const struct h5shuf_strata *st, const uint64_t *ids, uint64_t first, uint64_t n,
                         uint64_t *keys)
{
    if (!st)
        return;
    size_t e = 0;
    for (uint64_t r = 0; r < n; r++) {
        const uint64_t id = ids ? ids[r] : first + r;
        if (r == 0 || id < st->first[e] || id >= st->first[e + 1])
            e = entry_of(st, id);
        const uint64_t s = stratum_in(st, e, id);
        const h5shuf_u128 width = st->bound[s + 1] - st->bound[s];
        keys[r] = (uint64_t)(st->bound[s] + (((h5shuf_u128)keys[r] * width) >> 64));
    }
}
