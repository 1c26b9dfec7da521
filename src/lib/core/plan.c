/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plan.c - how many piles, how large, and the buffers of both passes, from N, the row size and the
 * memory budget (docs/design.md section 3).
 *
 * Pass 2 holds one pile: b = pile bound rows, each taking row_bytes + 40 bytes (row, id, key/index
 * pair, radix scratch), plus the output writer's bands.  The pile target s is the largest with
 * s + 6*sqrt(s) <= b, b counted in at most H5SHUF_PASS2_BYTES_MAX of the budget when pass 1 has room for
 * the piles that makes (plan.h), and M = ceil(N / s).  Pile sizes are Binomial(N, 1/M): mean <= s, standard
 * deviation <= sqrt(s), so a 6-sigma bound is exceeded with probability about 1e-9 per pile (normal
 * tail); such a pile is split or pass 1 is restarted.  Pass 1 holds one input slab and M pile buffers.
 */
#include <math.h>
#include <string.h>

#include "plan.h"

uint64_t h5shuf__pile_target_for_bound(uint64_t bound)
{
    double r = sqrt((double)bound + 9.0) - 3.0;
    uint64_t s = (uint64_t)(r * r);
    /* Correct the floating point estimate to the exact largest s with bound_for_target(s) <= bound. */
    while (s > 0 && h5shuf__pile_bound_for_target(s) > bound)
        s--;
    while (h5shuf__pile_bound_for_target(s + 1) <= bound)
        s++;
    return s;
}

uint64_t h5shuf__pile_bound_for_target(uint64_t s)
{
    /* ceil(6 * sqrt(s)) computed exactly: the smallest t with t*t >= 36*s. */
    uint64_t t = (uint64_t)ceil(6.0 * sqrt((double)s));
    while (t > 0 && (h5shuf_u128)(t - 1) * (t - 1) >= (h5shuf_u128)36 * s)
        t--;
    while ((h5shuf_u128)t * t < (h5shuf_u128)36 * s)
        t++;
    return s + t;
}

int h5shuf__plan_pipelined(const h5shuf_plan *plan)
{
    return plan->pipelined;
}

/* Bytes a row costs in pass 2: the row, its id, key/index pair and radix scratch; pipelined, also the
 * next pile's row and id, its stored chunks (at most the raw size plus 1/16, see codec.c) and a third
 * key/index array, where the next pile is sorted while this one is written (gather.c). */
uint64_t h5shuf__plan_pass2_row_bytes(uint64_t row_bytes, int pipelined)
{
    uint64_t b = row_bytes + H5SHUF_PASS2_ROW_OVERHEAD;
    return pipelined ? b + (row_bytes + 8) + (row_bytes + row_bytes / 16 + 8) + H5SHUF_PASS2_SORT_AHEAD_BYTES : b;
}

uint64_t h5shuf__plan_slab_bytes(const h5shuf_plan *plan)
{
    /* pipelined: the slab being scattered, the next one, and its stored chunks (+1/16); each slab also
     * holds its rows' keys (8 bytes a row, in its id buffer: 21 MB beyond the plan for 8-byte rows at
     * -m 128M until they were counted) */
    uint64_t b = plan->slab_rows * plan->row_bytes, k = plan->slab_rows * (uint64_t)sizeof(uint64_t);
    return (h5shuf__plan_pipelined(plan) ? 2 * (b + k) + b + b / 16 : b + k) + plan->slab_cache_bytes;
}

uint64_t h5shuf__pile_overhead(uint64_t ndatasets)
{
    return H5SHUF_PILE_OVERHEAD + H5SHUF_PILE_OVERHEAD_PER_DATASET * ndatasets;
}

uint64_t h5shuf__plan_spare_buffers(const h5shuf_plan *plan)
{
    return plan->threads > 1 ? (uint64_t)H5SHUF_SPARE_PILE_BUFFERS * plan->threads : 0;
}

uint64_t h5shuf__plan_pass1_pile_bytes(const h5shuf_plan *plan, uint64_t m)
{
    /* a spare set costs its rows twice: the buffer and, at most, the encoded chunks */
    uint64_t sets = m + 2 * h5shuf__plan_spare_buffers(plan);
    h5shuf_u128 b = (h5shuf_u128)sets * h5shuf__plan_pile_buffer_rows(plan, m) * (plan->row_bytes + H5SHUF_PASS1_ROW_OVERHEAD) +
                    (h5shuf_u128)m * h5shuf__pile_overhead(plan->ndatasets);
    return b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

uint64_t h5shuf__plan_pile_buffer_rows(const h5shuf_plan *plan, uint64_t m)
{
    /* Pass 1: the budget less the slab, shared by m pile buffers; each flush writes one scratch chunk
     * of at most H5SHUF_PILE_CHUNK_BYTES_MAX bytes over all datasets, so that no scratch chunk, and no
     * chunk buffer of the codec threads (4 per thread, outside the budget), is larger. */
    uint64_t per_row = plan->row_bytes + H5SHUF_PASS1_ROW_OVERHEAD;
    uint64_t fixed = h5shuf__plan_slab_bytes(plan) + m * h5shuf__pile_overhead(plan->ndatasets);
    uint64_t avail = plan->mem_limit_bytes > fixed ? plan->mem_limit_bytes - fixed : 0;
    uint64_t rows = avail / (m + 2 * h5shuf__plan_spare_buffers(plan)) / per_row;
    uint64_t cap = H5SHUF_PILE_CHUNK_BYTES_MAX / (plan->row_bytes + 1);
    if (rows > cap)
        rows = cap;
    if (rows > plan->pile_bound_rows)
        rows = plan->pile_bound_rows;
    return rows ? rows : 1;
}

/* Bytes of the decoded chunk rows pass 1 keeps beside slabs of slab rows (h5shuf__plan_slab_cached): one
 * chunk row of each dataset that needs it; none when they would take more than a quarter of the budget
 * (chunks are then decoded once per slab, as HDF5's own path would). */
static uint64_t slab_cache_bytes(const struct h5shuf_plan_in *in, uint64_t slab)
{
    h5shuf_u128 b = 0;
    for (uint64_t d = 0; in->chunk_rows && d < in->ndatasets; d++)
        if (h5shuf__plan_slab_cached(in->chunk_rows[d], slab))
            b += (h5shuf_u128)in->chunk_rows[d] * in->ds_row_bytes[d];
    return b <= in->mem_limit_bytes / 4 ? (uint64_t)b : 0;
}

/* A slab shorter than the first dataset's chunk rows (h5py's split chunks of images: 2500 rows of 12 KiB,
 * 30 MB) is read through the chunk row cache, each chunk row decoded while pass 1 waits; a slab of one
 * whole chunk row (align rows) is read ahead like any other slab (pipelined: while the one before is
 * scattered; issue 52: pass 1 of h5py's images 1.7-1.8 -> 1.6-1.7 s at -m 128M).  Take it, setting plan's
 * slab, its cache and its pile buffers, when it fits: at most H5SHUF_SLAB_BYTES_MAX, its copies
 * (h5shuf__plan_slab_bytes) at most three quarters of the budget, the pile buffers left at least half as
 * large as beside the short slab (scratch chunks of half a MiB, not smaller), and pass 1 with it within
 * the budget.  Nonzero when taken; else plan is unchanged. */
static int wide_slab(const struct h5shuf_plan_in *in, h5shuf_plan *plan, uint64_t align)
{
    if (align > H5SHUF_SLAB_BYTES_MAX / (in->row_bytes + sizeof(uint64_t)))
        return 0;
    const h5shuf_plan was = *plan;
    plan->slab_rows = align;
    plan->slab_cache_bytes = slab_cache_bytes(in, align);
    const uint64_t bytes = h5shuf__plan_slab_bytes(plan);
    plan->pile_buffer_rows = h5shuf__plan_pile_buffer_rows(plan, plan->piles);
    const uint64_t piles = h5shuf__plan_pass1_pile_bytes(plan, plan->piles);
    if (bytes <= in->mem_limit_bytes / 4 * 3 && plan->pile_buffer_rows >= (was.pile_buffer_rows + 1) / 2 &&
        bytes + piles <= in->mem_limit_bytes)
        return 1;
    *plan = was;
    return 0;
}

/* The pile target for pass-2 memory of budget2 bytes: the largest s whose bound s + 6*sqrt(s) rows of
 * per_row2 bytes fit it; for variable-length rows, whose 6 standard deviations of a pile's bytes fit it. */
static uint64_t target_for_budget(const struct h5shuf_plan_in *in, uint64_t per_row2, uint64_t budget2)
{
    uint64_t s = h5shuf__pile_target_for_bound(budget2 / per_row2);
    if (in->mem_row_bytes && in->row_var > 0) {
        /* Variable-length rows: a pile's bytes are a sum of s random row sizes, of mean c = per_row2 and
         * variance v, so its standard deviation is about sqrt(s * (c^2 + v)) (compound Poisson).  Take
         * the largest s with s*c + 6*sqrt(s*(c^2 + v)) <= budget2: with v = 0 this is the rule above. */
        double c = (double)per_row2, k = c / (double)(in->row_bytes + H5SHUF_PASS2_ROW_OVERHEAD);
        double v = in->row_var * k * k; /* pipelined: c counts each row about 3 times, so does v */
        double r = sqrt(1.0 + v / (c * c)), b = (double)budget2 / c;
        double t = sqrt(9.0 * r * r + b) - 3.0 * r;
        s = t > 0 ? (uint64_t)(t * t) : 0;
        while (s > 0 && (double)s * c + 6.0 * sqrt((double)s * (c * c + v)) > (double)budget2)
            s--;
    }
    return s;
}

/* Can pass 1 give each of m piles (and the spare sets) a buffer of a whole scratch chunk
 * (H5SHUF_PILE_CHUNK_BYTES_MAX, or one row when rows are larger) within half of the budget, the other
 * half left to its slabs (a quarter at most)? */
static int pass1_takes_chunks(const struct h5shuf_plan_in *in, uint64_t m)
{
    uint64_t buffer = in->row_bytes + H5SHUF_PASS1_ROW_OVERHEAD;
    if (buffer < H5SHUF_PILE_CHUNK_BYTES_MAX)
        buffer = H5SHUF_PILE_CHUNK_BYTES_MAX;
    uint64_t sets = m + (in->threads > 1 ? 2 * (uint64_t)H5SHUF_SPARE_PILE_BUFFERS * in->threads : 0);
    h5shuf_u128 need = (h5shuf_u128)sets * buffer + (h5shuf_u128)m * h5shuf__pile_overhead(in->ndatasets);
    return need <= in->mem_limit_bytes / 2;
}

/* Whether the plan for in overlaps reading with work (h5shuf_plan.pipelined). */
static int pipelined_for(const struct h5shuf_plan_in *in)
{
    return in->threads > 1 && !in->no_pipeline;
}

/* Pass 2's memory for piles under a budget of at least the band: the budget less the band; in a
 * distributed run without the overlap, half of that at every number of ranks (a pile, and parts of one
 * sent and received: plan.h). */
static uint64_t pass2_budget(const struct h5shuf_plan_in *in, int pipe)
{
    uint64_t budget2 = in->mem_limit_bytes - in->band_bytes;
    if (!pipe && in->ranks > 1)
        budget2 /= 2;
    return budget2;
}

/* Pass 2's pile target, rows, for a budget of at least the band: the largest s whose bound fits pass 2's
 * memory, that memory at most H5SHUF_PASS2_BYTES_MAX when capped and pass 1 has room for the piles that
 * makes; at most the rows that go into piles, at least 1. */
static uint64_t pile_target(const struct h5shuf_plan_in *in, int capped)
{
    const int pipe = pipelined_for(in);
    uint64_t per_row2 = h5shuf__plan_pass2_row_bytes(in->row_bytes, pipe), budget2 = pass2_budget(in, pipe);
    uint64_t s = target_for_budget(in, per_row2, budget2);
    uint64_t pile_rows = in->pile_rows ? in->pile_rows : in->rows; /* a head scatters only its rows */
    if (capped && budget2 > H5SHUF_PASS2_BYTES_MAX && pile_rows > 0) { /* smaller piles, when pass 1 has room */
        uint64_t sc = target_for_budget(in, per_row2, H5SHUF_PASS2_BYTES_MAX);
        if (sc > 0 && sc < s && pass1_takes_chunks(in, ceil_div(pile_rows, sc)))
            s = sc;
    }
    if (pile_rows > 0 && s > pile_rows)
        s = pile_rows; /* one pile holds everything */
    return s ? s : 1;
}

uint64_t h5shuf__plan_piles_uncapped(const struct h5shuf_plan_in *in)
{
    uint64_t pile_rows = in->pile_rows ? in->pile_rows : in->rows;
    if (in->mem_limit_bytes <= in->band_bytes || pile_rows == 0)
        return 1;
    return ceil_div(pile_rows, pile_target(in, 0));
}

int h5shuf__plan_make(const struct h5shuf_plan_in *in, h5shuf_plan *plan, struct h5shuf_err *err)
{
    const int pipe = pipelined_for(in);
    uint64_t per_row2 = h5shuf__plan_pass2_row_bytes(in->row_bytes, pipe);
    /* The smallest workable plan: piles of one row (bound 7) and a one-row slab. */
    h5shuf_u128 min_wide = (h5shuf_u128)in->band_bytes + (h5shuf_u128)h5shuf__pile_bound_for_target(1) * per_row2;
    uint64_t min_bytes = min_wide > UINT64_MAX ? UINT64_MAX : (uint64_t)min_wide;
    plan->rows = in->rows;
    plan->row_bytes = in->row_bytes;
    plan->total_bytes = in->rows * in->row_bytes;
    plan->ndatasets = in->ndatasets;
    plan->mem_limit_bytes = in->mem_limit_bytes;
    plan->threads = in->threads ? in->threads : 1;
    plan->pipelined = pipe;
    if (in->mem_limit_bytes < min_bytes)
        return h5shuf__fail(err, H5SHUF_EBUDGET,
                            "memory budget of %llu bytes is too small for rows of %llu bytes: "
                            "at least %llu bytes (%llu KiB) are needed",
                            (unsigned long long)in->mem_limit_bytes, (unsigned long long)in->row_bytes,
                            (unsigned long long)min_bytes, (unsigned long long)ceil_div(min_bytes, 1024));

    uint64_t budget2 = pass2_budget(in, pipe);
    uint64_t s = pile_target(in, 1), bound;
    uint64_t pile_rows = in->pile_rows ? in->pile_rows : in->rows; /* a head scatters only its rows */
    bound = h5shuf__pile_bound_for_target(s);
    if (in->debug_pile_bound_rows && in->debug_pile_bound_rows < bound) {
        bound = in->debug_pile_bound_rows;
    }
    plan->pile_target_rows = s;
    plan->pile_bound_rows = bound;
    /* Variable-length rows: a pile must also fit pass 2's bytes (checked on the real sizes after pass 1). */
    /* (pipelined, pass 2 holds two piles: each gets half) */
    plan->pile_bound_bytes = in->mem_row_bytes ? (pipe ? budget2 / 2 : budget2) : 0;
    plan->piles = pile_rows ? ceil_div(pile_rows, s) : 1;

    /* Slab: a quarter of the budget, at most H5SHUF_SLAB_BYTES_MAX, a multiple of the chunk rows. */
    uint64_t align = in->slab_align_rows ? in->slab_align_rows : 1;
    uint64_t slab_bytes = in->mem_limit_bytes / 4 / (pipe ? 3 : 1); /* pipelined: about 3 copies */
    if (slab_bytes > H5SHUF_SLAB_BYTES_MAX)
        slab_bytes = H5SHUF_SLAB_BYTES_MAX;
    uint64_t slab = slab_bytes / (in->row_bytes + sizeof(uint64_t)); /* a row and its key */
    if (slab >= align)
        slab -= slab % align;
    if (slab > in->rows)
        slab = in->rows;
    if (slab == 0)
        slab = 1;
    plan->slab_rows = slab;
    plan->slab_cache_bytes = slab_cache_bytes(in, slab);
    plan->pile_buffer_rows = h5shuf__plan_pile_buffer_rows(plan, plan->piles);

    uint64_t pass1 = h5shuf__plan_slab_bytes(plan) + h5shuf__plan_pass1_pile_bytes(plan, plan->piles);
    if (slab < align && align < in->rows && wide_slab(in, plan, align)) /* (plan->slab_rows is align now) */
        pass1 = h5shuf__plan_slab_bytes(plan) + h5shuf__plan_pass1_pile_bytes(plan, plan->piles);
    if (pass1 > in->mem_limit_bytes && plan->slab_cache_bytes) { /* the piles first: no cache */
        plan->slab_cache_bytes = 0;
        plan->pile_buffer_rows = h5shuf__plan_pile_buffer_rows(plan, plan->piles);
        pass1 = h5shuf__plan_slab_bytes(plan) + h5shuf__plan_pass1_pile_bytes(plan, plan->piles);
    }
    uint64_t pass2 = in->band_bytes + bound * per_row2;
    plan->mem_planned_bytes = pass1 > pass2 ? pass1 : pass2;
    if (pass1 > in->mem_limit_bytes) {
        /* M piles of one buffered row each do not fit beside the slab: the 2-pass shuffle needs memory
         * of about sqrt(N * row_bytes * row_bytes) (M = N / s piles, s = budget / row_bytes). */
        return h5shuf__fail(err, H5SHUF_EBUDGET,
                            "memory budget of %llu bytes is too small for %llu rows of %llu bytes: pass 1 needs %llu "
                            "pile buffers, at least %llu bytes",
                            (unsigned long long)in->mem_limit_bytes, (unsigned long long)in->rows,
                            (unsigned long long)in->row_bytes, (unsigned long long)plan->piles,
                            (unsigned long long)pass1);
    }
    return H5SHUF_OK;
}

/* Pairs a window of target s rows may hold, and their bytes. */
static uint64_t window_bytes(uint64_t s)
{
    return h5shuf__pile_bound_for_target(s) * H5SHUF_DIRECT_PAIR_BYTES;
}

int h5shuf__plan_direct(const struct h5shuf_direct_in *in, struct h5shuf_direct_plan *out, struct h5shuf_err *err)
{
    memset(out, 0, sizeof *out);
    uint64_t r = in->out_rows ? in->out_rows : 1;
    /* The fewest pairs: windows of r / H5SHUF_DIRECT_WINDOWS_MAX rows (all rows in one when fewer). */
    uint64_t s_min = ceil_div(r, H5SHUF_DIRECT_WINDOWS_MAX);
    uint64_t pairs_min = s_min >= r ? r * H5SHUF_DIRECT_PAIR_BYTES : window_bytes(s_min);
    h5shuf_u128 fixed = (h5shuf_u128)in->held_bytes + in->band_bytes;
    h5shuf_u128 min = fixed + in->read_row_bytes + pairs_min;
    out->min_bytes = min > UINT64_MAX ? UINT64_MAX : (uint64_t)min;
    if (in->mem_limit_bytes < out->min_bytes)
        return h5shuf__fail(err, H5SHUF_EBUDGET,
                            "memory budget of %llu bytes is too small for the direct path: at least %llu bytes "
                            "(%llu KiB) are needed (rows of %llu bytes read one at a time, %llu bytes held, %llu "
                            "bytes of output bands)",
                            (unsigned long long)in->mem_limit_bytes, (unsigned long long)out->min_bytes,
                            (unsigned long long)ceil_div(out->min_bytes, 1024), (unsigned long long)in->read_row_bytes,
                            (unsigned long long)in->held_bytes, (unsigned long long)in->band_bytes);
    uint64_t left = in->mem_limit_bytes - (uint64_t)fixed - pairs_min;
    /* One row in flight per codec thread: the one being written and the next ones being decoded. */
    uint64_t slots = in->threads > 1 ? in->threads : 1;
    if (in->read_row_bytes && slots > 1 + (left - in->read_row_bytes) / in->read_row_bytes)
        slots = 1 + (left - in->read_row_bytes) / in->read_row_bytes;
    out->slots = slots;
    /* The pairs take the rest: the largest window whose bound fits, in as few windows as that allows. */
    uint64_t avail = in->mem_limit_bytes - (uint64_t)fixed - slots * in->read_row_bytes;
    if (r * H5SHUF_DIRECT_PAIR_BYTES <= avail) {
        out->windows = 1;
        out->window_rows = r;
    } else {
        uint64_t s = h5shuf__pile_target_for_bound(avail / H5SHUF_DIRECT_PAIR_BYTES);
        if (s < s_min)
            s = s_min;
        out->windows = ceil_div(r, s);
        out->window_rows = h5shuf__pile_bound_for_target(ceil_div(r, out->windows));
    }
    out->mem_bytes = (uint64_t)fixed + slots * in->read_row_bytes + out->window_rows * H5SHUF_DIRECT_PAIR_BYTES;
    return H5SHUF_OK;
}
