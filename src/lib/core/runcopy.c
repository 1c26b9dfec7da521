/*
 * runcopy.c - the bytes of split chunks moved between the caller's rows and a chunk (runcopy.h): runs of a
 * few bytes, strided on one side.
 */
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
#endif
    copy_runs_scalar(d, drow, doff, s, srow, soff, rows, nruns, run);
}
