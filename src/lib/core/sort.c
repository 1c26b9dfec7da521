/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sort.c - the in-memory sort of pass 2.
 *
 * A pile's keys are uniform over its key range.  The sort is cache-conscious in the way of P. Sanders,
 * "Random permutations on distributed, external and hierarchical memory" (IPL 67, 1998) and of the radix
 * sorts of N. Rahman and R. Raman ("Adapting radix sort to the memory hierarchy", JEA 6, 2001): one
 * most-significant-digit counting pass (Knuth, TAOCP vol. 3, 5.2.5) below the bits all keys share splits
 * the records into buckets of about SORT_LEAF records, which fit in a core's L1 or L2 cache; each bucket is
 * then sorted there by one more counting pass over its next SORT_LEAF_BITS bits, into the other array, and
 * a final insertion sort, which has little left to do: two of a bucket's L records share those bits with
 * probability about L^2 / 2^(SORT_LEAF_BITS + 1).  Out of cache, the records move twice: into the
 * buckets, and from there sorted into place (the old LSD sort moved them once per key byte, 7 or 8 times:
 * 41% of a run of 16-byte rows).  On these VMs a pass over a pile's records costs about what its bytes
 * cost to copy (5-6 GB/s), so the passes, not the instructions, are the sort's time.  Every pass is
 * stable and the insertion sort moves a record only past greater keys, so equal keys keep their index
 * order, as the contract's tie-break by row id asks.
 */
#include <string.h>

#include "sort.h"

/* Records in a bucket sorted in cache: 4096 records of 16 bytes and their destination are 128 KiB, within
 * the L2 cache of every machine measured (512 KiB a core on the AMD EPYC VMs, 2 MiB on the others).  One
 * 12-bit pass into place over leaves of 4096 was as fast as over leaves of 2048, faster than over 8192,
 * and faster than two 8-bit LSD passes over leaves of 16384 and a copy back (measured: docs/benchmark.md,
 * section "The sort's leaves"). */
#define SORT_LEAF 4096
/* Most bits of one MSD pass: 2048 buckets, whose write positions stay in the L1 cache and TLB. */
#define SORT_MSD_BITS 11
/* Bits a bucket's counting pass sorts by before the insertion sort (about a bucket a record). */
#define SORT_LEAF_BITS 12

typedef struct h5shuf_keyidx rec_t;

static inline size_t digit(uint64_t key, unsigned shift, uint64_t mask)
{
    return (size_t)((key >> shift) & mask);
}

/* One stable counting pass of src[0..n) into dst by digit (key >> shift) & (2^bits - 1): count[v] gets
 * the end of bucket v in dst.  Returns 0 without moving anything when every record has the same digit. */
static int count_pass(const rec_t *src, rec_t *dst, size_t n, unsigned shift, unsigned bits, size_t *count)
{
    const uint64_t mask = ((uint64_t)1 << bits) - 1;
    const size_t nb = (size_t)1 << bits;
    memset(count, 0, nb * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[digit(src[i].key, shift, mask)]++;
    if (count[digit(src[0].key, shift, mask)] == n)
        return 0;
    size_t sum = 0;
    for (size_t v = 0; v < nb; v++) {
        const size_t c = count[v];
        count[v] = sum;
        sum += c;
    }
    for (size_t i = 0; i < n; i++)
        dst[count[digit(src[i].key, shift, mask)]++] = src[i];
    return 1;
}

/* Stable insertion sort by key: fast when few records are out of order. */
static void insertion_sort(rec_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const rec_t x = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1].key > x.key; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Sort src[0..n), whose keys agree above bit top, into dst (n <= SORT_LEAF): one counting pass over the
 * next SORT_LEAF_BITS bits, then insertion. */
static void sort_leaf(const rec_t *src, rec_t *dst, size_t n, unsigned top)
{
    size_t count[(size_t)1 << SORT_LEAF_BITS];
    const unsigned bits = top < SORT_LEAF_BITS ? top : SORT_LEAF_BITS;
    if (n <= 32 || bits == 0 || !count_pass(src, dst, n, top - bits, bits, count))
        memcpy(dst, src, n * sizeof *src);
    insertion_sort(dst, n);
}

/* Sort src[0..n), whose keys agree above bit top, into out (src or scr; scr the other n records). */
static void sort_msd(rec_t *src, rec_t *scr, size_t n, unsigned top, rec_t *out)
{
    while (n > SORT_LEAF && top > 0) {
        unsigned bits = 1; /* enough that the buckets come near SORT_LEAF, within one pass's most */
        while (bits < SORT_MSD_BITS && ((size_t)SORT_LEAF << bits) < n)
            bits++;
        if (bits > top)
            bits = top;
        const unsigned shift = top - bits;
        size_t end[(size_t)1 << SORT_MSD_BITS];
        if (!count_pass(src, scr, n, shift, bits, end)) {
            top = shift; /* a digit all keys share: nothing moved */
            continue;
        }
        for (size_t v = 0, start = 0; v < ((size_t)1 << bits); start = end[v++])
            if (end[v] > start)
                sort_msd(scr + start, src + start, end[v] - start, shift, out == src ? src + start : scr + start);
        return;
    }
    if (out == src) {
        sort_leaf(src, scr, n, top);
        memcpy(src, scr, n * sizeof *src);
    } else {
        sort_leaf(src, out, n, top);
    }
}

void h5shuf__sort_keyidx(struct h5shuf_keyidx *a, struct h5shuf_keyidx *tmp, size_t n)
{
    if (n < 2)
        return;
    uint64_t all = a[0].key, any = a[0].key; /* the bits every key has, and those some key has */
    for (size_t i = 1; i < n; i++) {
        all &= a[i].key;
        any |= a[i].key;
    }
    if (all != any) /* else every key is equal, and the records are in index order already */
        sort_msd(a, tmp, n, 64 - (unsigned)__builtin_clzll(all ^ any), a);
}
