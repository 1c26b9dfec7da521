/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runcopy.c - the bytes of split chunks moved between the caller's rows and a chunk (runcopy.h): runs of a
 * few bytes, strided on one side.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runcopy.h"

void h5shuf__copy_lines(unsigned char *d, size_t dstride, const unsigned char *s, size_t sstride, size_t lines,
                        size_t run)
{
    switch (run) {
    case 1:
        for (size_t i = 0; i < lines; i++)
            d[i * dstride] = s[i * sstride];
        break;
    case 2:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 2);
        break;
    case 4:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 4);
        break;
    case 8:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 8);
        break;
    default:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, run);
    }
}


/* The same, one byte-move loop for each run of each row. */
static void copy_runs_scalar(unsigned char *d, size_t drow, const size_t *doff, const unsigned char *s, size_t srow,
                             const size_t *soff, size_t rows, size_t nruns, size_t run)
{
    for (size_t k = 0; k < rows; k++, d += drow, s += srow) {
        switch (run) {
        case 1:
            for (size_t i = 0; i < nruns; i++)
                d[doff[i]] = s[soff[i]];
            break;
        case 2:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 2);
            break;
        case 4:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 4);
            break;
        case 8:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 8);
            break;
        default:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], run);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Runs in progressions, a progression a vector: consecutive runs whose offsets step by the same ds in d
 * and ss in s, within 64 bytes on both sides, are one masked load of the source bytes, one byte
 * permutation (vpermb) and one masked store of the destination bytes, on processors with AVX-512 VBMI and
 * BW (checked at run time).  A masked store writes only the runs' bytes, so threads that decode other
 * chunks into the same rows are untouched, as with the scalar loop; a masked load reads no byte past the
 * runs (fault suppression).  h5py's (2500, 4, 8, 1) chunks of (N, 64, 64, 3) uint8 images are 4
 * progressions of 8 one-byte runs a row (a step of 3 bytes in the row, 1 in the chunk). */
#include <immintrin.h>
#define TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define PROGS_MAX 64u      /* progressions a row, at most, for the vector path */
#define PROG_RUNS_MIN 4u   /* runs a progression on average, at least, for the vector path */
#define PREFETCH_ROWS 8u   /* rows ahead whose bytes are prefetched */

struct prog {
    size_t doff, soff;
    unsigned char idx[64]; /* destination byte q takes source byte idx[q] (of the 64 loaded) */
    uint64_t lmask, smask; /* the source bytes loaded, the destination bytes stored */
};

/* Cut the runs into progressions (p, at most PROGS_MAX); the number of them, or 0 when there are more. */
static size_t progressions(const size_t *doff, const size_t *soff, size_t nruns, size_t run, struct prog *p)
{
    size_t np = 0;
    for (size_t i = 0; i < nruns;) {
        if (np == PROGS_MAX)
            return 0;
        size_t count = 1, ds = 0, ss = 0;
        if (i + 1 < nruns && doff[i + 1] >= doff[i] + run && soff[i + 1] >= soff[i] + run) {
            ds = doff[i + 1] - doff[i];
            ss = soff[i + 1] - soff[i];
            while (i + count < nruns && doff[i + count] - doff[i + count - 1] == ds &&
                   soff[i + count] - soff[i + count - 1] == ss && count * ds + run <= 64 && count * ss + run <= 64 &&
                   doff[i + count] > doff[i + count - 1] && soff[i + count] > soff[i + count - 1])
                count++;
        }
        struct prog *g = &p[np++];
        g->doff = doff[i];
        g->soff = soff[i];
        g->lmask = g->smask = 0;
        memset(g->idx, 0, sizeof g->idx);
        for (size_t j = 0; j < count; j++)
            for (size_t t = 0; t < run; t++) {
                g->idx[j * ds + t] = (unsigned char)(j * ss + t);
                g->smask |= (uint64_t)1 << (j * ds + t);
                g->lmask |= (uint64_t)1 << (j * ss + t);
            }
        i += count;
    }
    return np;
}

TARGET_VBMI static void copy_progs(unsigned char *d, size_t drow, const unsigned char *s, size_t srow, size_t rows,
                                   const struct prog *p, size_t np)
{
    __m512i idx[PROGS_MAX];
    for (size_t g = 0; g < np; g++)
        idx[g] = _mm512_loadu_si512((const void *)p[g].idx);
    for (size_t k = 0; k < rows; k++, d += drow, s += srow)
        for (size_t g = 0; g < np; g++) {
            if (k + PREFETCH_ROWS < rows) { /* rows kilobytes apart: past what the hardware prefetches */
                _mm_prefetch((const char *)(s + PREFETCH_ROWS * srow + p[g].soff), _MM_HINT_T0);
                _mm_prefetch((const char *)(d + PREFETCH_ROWS * drow + p[g].doff), _MM_HINT_T0);
            }
            __m512i v = _mm512_maskz_loadu_epi8((__mmask64)p[g].lmask, s + p[g].soff);
            v = _mm512_permutexvar_epi8(idx[g], v);
            _mm512_mask_storeu_epi8(d + p[g].doff, (__mmask64)p[g].smask, v);
        }
}

static int have_vbmi(void)
{
    static int have = -1; /* the same answer for every thread; atomic, so that their first calls do not race */
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        h = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") && !getenv("H5SHUF_DEBUG_NO_SIMD");
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* Rows whose runs tile their destination in ranges of 16 bytes or more (every byte of each range is a
 * run's), on processors with SSSE3 (all x86-64 since 2006) and without the progressions above: each 16
 * bytes of a range are a few 16-byte loads of the source row ("windows"), a byte shuffle of each (pshufb)
 * and one store; the last 16 of a range overlap the ones before when its length is no multiple of 16,
 * writing the same bytes again.  The bytes of shorter ranges go one by one after them.  Only the runs'
 * bytes are written, as with the byte loop.  codec.c's groups of h5py's (2500, 4, 8, 1) chunks of uint8 images make such rows both ways: 4 ranges of 96 bytes a row
 * from 12 chunks (decode), 12 of 32 bytes from a row (encode). */
#define TARGET_SSSE3 __attribute__((target("ssse3")))
#define GATHER_BYTES_MAX 4096u /* bytes of a row's runs, at most, for this path */
#define GATHER_WINDOWS_MAX 8u  /* windows of 16 bytes, at most */
#define GATHER_ROWS_MIN 256u   /* rows, at least: making the plan costs about as much as copying 100 rows */
#define GATHER_LINES_MAX 64u   /* cache lines of a row prefetched, at most, on each side */
#define GATHER_PREFETCH_ROWS 8u /* rows ahead whose lines are prefetched */

struct gather_pair {
    size_t d, s; /* a byte's offset in a destination row and in a source row */
};
struct gather_win {
    size_t soff;            /* the window's first byte in a source row */
    unsigned char mask[16]; /* the destination block's byte q is window byte mask[q], or none (0x80) */
};
struct gather_block {
    size_t doff;         /* the block's first byte in a destination row */
    size_t win0, nwin;   /* its windows in the plan's */
};
struct gather_plan {
    struct gather_pair *pair; /* nruns * run of them, sorted by d (planned: the short ranges' first) */
    struct gather_block *block;
    struct gather_win *win;
    size_t nblock, nwin;
    size_t nrest; /* the bytes of ranges under 16 bytes: pair[0 .. nrest), moved one by one */
    size_t sline[GATHER_LINES_MAX], nsline; /* the 64-byte lines a row reads, writes: offsets from its */
    size_t dline[GATHER_LINES_MAX], ndline; /* start, as the first row is aligned */
    size_t src_end; /* a row's bytes read from its start, at most (the last window's end) */
    size_t src_need; /* a row's bytes the runs need from its start (the last run byte's end) */
};

static int pair_cmp(const void *a, const void *b)
{
    const struct gather_pair *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d;
}

/* The windows of the block of 16 pairs p (destination bytes doff .. doff + 15) appended to g; 0, or -1
 * when they need more than GATHER_WINDOWS_MAX. */
static int gather_windows(struct gather_plan *g, const struct gather_pair *p, size_t doff)
{
    unsigned char done[16] = {0};
    struct gather_block *b = &g->block[g->nblock++];
    b->doff = doff;
    b->win0 = g->nwin;
    b->nwin = 0;
    for (;;) {
        size_t w = SIZE_MAX;
        for (int q = 0; q < 16; q++)
            if (!done[q] && p[q].s < w)
                w = p[q].s;
        if (w == SIZE_MAX)
            return 0;
        if (b->nwin == GATHER_WINDOWS_MAX)
            return -1;
        struct gather_win *x = &g->win[g->nwin++];
        b->nwin++;
        x->soff = w;
        for (int q = 0; q < 16; q++) {
            x->mask[q] = 0x80;
            if (!done[q] && p[q].s - w < 16) {
                x->mask[q] = (unsigned char)(p[q].s - w);
                done[q] = 1;
            }
        }
        if (w + 16 > g->src_end)
            g->src_end = w + 16;
    }
}

/* Add the 64-byte line of offset o of a row that starts mis bytes into a line to the lines (*n of them, at
 * most GATHER_LINES_MAX: more are not prefetched), as an offset from the row's start. */
static void add_line(size_t *line, size_t *n, size_t o, size_t mis)
{
    o = ((o + mis) & ~(size_t)63) - mis; /* (wraps below 0 for the row's first line: gather_rows adds it
                                          * to an address as an integer, where the sum is right) */
    for (size_t i = 0; i < *n; i++)
        if (line[i] == o)
            return;
    if (*n < GATHER_LINES_MAX)
        line[(*n)++] = o;
}

/* Plan the gather of the runs into g (its arrays allocated here; gather_free releases them).  0, or -1
 * when the path does not apply (more than GATHER_BYTES_MAX bytes, more than half of them in ranges under 16
 * bytes, a destination byte twice, a block of too many windows) or memory is short: the byte loop moves
 * them then.  dmis, smis: how far into a 64-byte line the first destination and source rows start. */
static int gather_plan(struct gather_plan *g, const size_t *doff, const size_t *soff, size_t nruns, size_t run,
                       size_t dmis, size_t smis)
{
    const size_t n = nruns * run;
    memset(g, 0, sizeof *g);
    if (n < 16 || n > GATHER_BYTES_MAX)
        return -1;
    g->pair = malloc(n * sizeof *g->pair);
    g->block = malloc((n / 8 + 1) * sizeof *g->block); /* a range of L >= 16 bytes: at most L / 8 blocks */
    g->win = malloc((n / 8 + 1) * GATHER_WINDOWS_MAX * sizeof *g->win);
    if (!g->pair || !g->block || !g->win)
        return -1;
    for (size_t i = 0, j = 0; i < nruns; i++)
        for (size_t t = 0; t < run; t++, j++) {
            g->pair[j].d = doff[i] + t;
            g->pair[j].s = soff[i] + t;
            if (g->pair[j].s + 1 > g->src_need)
                g->src_need = g->pair[j].s + 1;
        }
    qsort(g->pair, n, sizeof *g->pair, pair_cmp);
    /* the short ranges' pairs are moved to the front, in place (rest <= a: a range's pairs are never read
     * again once it is planned) */
    size_t rest = 0;
    for (size_t a = 0; a < n;) { /* a range: pairs a .. b - 1, their d consecutive */
        size_t b = a + 1;
        while (b < n && g->pair[b].d == g->pair[b - 1].d + 1)
            b++;
        if (b < n && g->pair[b].d == g->pair[b - 1].d) /* one byte written twice */
            return -1;
        if (b - a < 16)
            for (size_t j = a; j < b; j++)
                g->pair[rest++] = g->pair[j];
        else
            for (size_t j = a; j < b; j += 16) {
                size_t k = j + 16 <= b ? j : b - 16; /* the last block ends with the range */
                if (gather_windows(g, &g->pair[k], g->pair[k].d) < 0)
                    return -1;
            }
        a = b;
    }
    g->nrest = rest;
    for (size_t b = 0; b < g->nblock; b++) {
        add_line(g->dline, &g->ndline, g->block[b].doff, dmis);
        add_line(g->dline, &g->ndline, g->block[b].doff + 15, dmis);
    }
    for (size_t w = 0; w < g->nwin; w++) {
        add_line(g->sline, &g->nsline, g->win[w].soff, smis);
        add_line(g->sline, &g->nsline, g->win[w].soff + 15, smis);
    }
    return rest * 2 > n ? -1 : 0;
}

static void gather_free(struct gather_plan *g)
{
    free(g->pair);
    free(g->block);
    free(g->win);
}

TARGET_SSSE3 static void gather_rows(unsigned char *d, size_t drow, const unsigned char *s, size_t srow, size_t rows,
                                     const struct gather_plan *g)
{
    for (size_t k = 0; k < rows; k++, d += drow, s += srow) {
        if (k + GATHER_PREFETCH_ROWS < rows) { /* rows kilobytes apart: past what the hardware prefetches */
            for (size_t i = 0; i < g->nsline; i++)
                _mm_prefetch((const char *)((uintptr_t)s + GATHER_PREFETCH_ROWS * srow + g->sline[i]), _MM_HINT_T0);
            for (size_t i = 0; i < g->ndline; i++)
                _mm_prefetch((const char *)((uintptr_t)d + GATHER_PREFETCH_ROWS * drow + g->dline[i]), _MM_HINT_T0);
        }
        for (size_t b = 0; b < g->nblock; b++) {
            const struct gather_block *x = &g->block[b];
            const struct gather_win *w = &g->win[x->win0];
            __m128i v = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(s + w[0].soff)),
                                         _mm_loadu_si128((const __m128i *)w[0].mask));
            for (size_t i = 1; i < x->nwin; i++)
                v = _mm_or_si128(v, _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(s + w[i].soff)),
                                                     _mm_loadu_si128((const __m128i *)w[i].mask)));
            _mm_storeu_si128((__m128i *)(d + x->doff), v);
        }
        for (size_t i = 0; i < g->nrest; i++)
            d[g->pair[i].d] = s[g->pair[i].s];
    }
}

static int have_ssse3(void)
{
    static int have = -1; /* as have_vbmi */
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        h = __builtin_cpu_supports("ssse3") && !getenv("H5SHUF_DEBUG_NO_SIMD");
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h;
}

/* Rows [0, rows) by the gather when it applies: the rows whose windows stay inside what the runs read
 * from the source (a window reads up to 15 bytes past the runs' last byte of a row: the last rows go
 * by the byte loop).  The rows done, 0 when the path does not apply. */
static size_t copy_runs_gather(unsigned char *d, size_t drow, const size_t *doff, const unsigned char *s, size_t srow,
                               const size_t *soff, size_t rows, size_t nruns, size_t run)
{
    if (rows < GATHER_ROWS_MIN || !have_ssse3())
        return 0;
    struct gather_plan g;
    size_t done = 0;
    if (gather_plan(&g, doff, soff, nruns, run, (uintptr_t)d & 63, (uintptr_t)s & 63) == 0) {
        /* row k reads up to k * srow + src_end; the source holds (rows - 1) * srow + src_need */
        const size_t over = g.src_end - g.src_need, back = srow ? (over + srow - 1) / srow : rows;
        done = back < rows ? rows - back : 0;
        gather_rows(d, drow, s, srow, done, &g);
    }
    gather_free(&g);
    return done;
}
#endif

void h5shuf__copy_runs(unsigned char *d, size_t drow, const size_t *doff, const unsigned char *s, size_t srow,
                       const size_t *soff, size_t rows, size_t nruns, size_t run)
{
#ifdef TARGET_VBMI
    if (run <= 32 && nruns >= PROG_RUNS_MIN && rows >= 4 && have_vbmi()) {
        struct prog p[PROGS_MAX];
        size_t np = progressions(doff, soff, nruns, run, p);
        if (np && nruns >= PROG_RUNS_MIN * np) {
            copy_progs(d, drow, s, srow, rows, p, np);
            return;
        }
    }
    const size_t done = copy_runs_gather(d, drow, doff, s, srow, soff, rows, nruns, run);
    d += done * drow;
    s += done * srow;
    rows -= done;
#endif
    copy_runs_scalar(d, drow, doff, s, srow, soff, rows, nruns, run);
}
