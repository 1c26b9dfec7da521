/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpufloor.c - the CPU floor of shuffling a gzip file (issue 28, bench/cases.sh case `floor`): what
 * any tool that rewrites a deflate-compressed dataset must at least spend on its codec.
 *
 *   h5shuf_cpufloor [-j THREADS] [-l LEVEL] FILE DSET...
 *
 * Every stored chunk of each DSET (chunked, with deflate as its only filter) is read as stored
 * (H5Dread_chunk), inflated with libdeflate and deflated again with libdeflate at LEVEL (default: the
 * level the dataset's deflate filter records, its cd_values[0]), on THREADS threads (default: the number
 * of CPUs), one libdeflate decompressor and compressor per thread, chunks dealt out by an atomic counter.
 * HDF5 is called under one mutex (Debian's serial HDF5 is not thread-safe; a thread-safe build serialises
 * its calls anyway); the chunks are listed by the main thread before the workers start.  Nothing is
 * written.  No shuffle, no sort, no output file: a lower bound, not an alternative.
 *
 * Its own check: every chunk must inflate to exactly its chunk's bytes (the product of the chunk's
 * dimensions and the type's size), else it fails.  Prints one line (seconds from the file's open to its
 * close, threads, chunks, bytes stored, inflated and deflated again, levels) and exits 0; 1 on any
 * failure (one line on stderr), 2 on a usage error.
 */
#include <errno.h>
#include <hdf5.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANK 32

struct dset {
    const char *name;
    hid_t id;
    int rank;
    size_t chunk_bytes; /* a chunk's bytes, decoded */
    int level;          /* deflate level to encode at */
};

struct chunk {
    struct dset *d;
    hsize_t offset[MAX_RANK];
    hsize_t stored; /* bytes as stored */
    unsigned mask;  /* filter mask as stored: bit 0 set, deflate was skipped */
};

static struct chunk *chunks;
static size_t nchunks;
static atomic_size_t next_chunk;
static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
    pthread_t thread;
    uint64_t stored, inflated, deflated;
    char err[256];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct libdeflate_decompressor *dec = libdeflate_alloc_decompressor();
    struct libdeflate_compressor *enc[10] = {0};
    unsigned char *in = NULL, *raw = NULL, *out = NULL;
    size_t in_cap = 0, raw_cap = 0, out_cap = 0;
    if (!dec) {
        snprintf(w->err, sizeof w->err, "libdeflate_alloc_decompressor failed");
        return NULL;
    }
    for (;;) {
        size_t k = atomic_fetch_add(&next_chunk, 1);
        if (k >= nchunks)
            break;
        struct chunk *c = &chunks[k];
        size_t want = c->d->chunk_bytes;
        if (in_cap < c->stored && !(in = realloc(in, in_cap = c->stored))) {
            snprintf(w->err, sizeof w->err, "out of memory (%llu bytes)", (unsigned long long)c->stored);
            break;
        }
        if (raw_cap < want && !(raw = realloc(raw, raw_cap = want))) {
            snprintf(w->err, sizeof w->err, "out of memory (%zu bytes)", want);
            break;
        }
        int level = c->d->level;
        if (!enc[level] && !(enc[level] = libdeflate_alloc_compressor(level))) {
            snprintf(w->err, sizeof w->err, "libdeflate_alloc_compressor(%d) failed", level);
            break;
        }
        size_t bound = libdeflate_zlib_compress_bound(enc[level], want);
        if (out_cap < bound && !(out = realloc(out, out_cap = bound))) {
            snprintf(w->err, sizeof w->err, "out of memory (%zu bytes)", bound);
            break;
        }
        uint32_t mask = c->mask;
        pthread_mutex_lock(&h5_lock);
        herr_t rc = H5Dread_chunk(c->d->id, H5P_DEFAULT, c->offset, &mask, in);
        pthread_mutex_unlock(&h5_lock);
        if (rc < 0) {
            snprintf(w->err, sizeof w->err, "%s: H5Dread_chunk of chunk %zu failed", c->d->name, k);
            break;
        }
        size_t got = c->stored;
        if (mask & 1u) { /* stored raw (the filter was skipped for this chunk) */
            memcpy(raw, in, got < want ? got : want);
        } else if (libdeflate_zlib_decompress(dec, in, c->stored, raw, want, &got) != LIBDEFLATE_SUCCESS) {
            snprintf(w->err, sizeof w->err, "%s: chunk %zu does not inflate to %zu bytes", c->d->name, k, want);
            break;
        }
        if (got != want) {
            snprintf(w->err, sizeof w->err, "%s: chunk %zu holds %zu bytes, expected %zu", c->d->name, k, got, want);
            break;
        }
        size_t n = libdeflate_zlib_compress(enc[level], raw, want, out, out_cap);
        if (n == 0) {
            snprintf(w->err, sizeof w->err, "%s: chunk %zu: libdeflate_zlib_compress failed", c->d->name, k);
            break;
        }
        w->stored += c->stored;
        w->inflated += want;
        w->deflated += n;
    }
    free(in);
    free(raw);
    free(out);
    for (int i = 0; i < 10; i++)
        if (enc[i])
            libdeflate_free_compressor(enc[i]);
    libdeflate_free_decompressor(dec);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: h5shuf_cpufloor [-j THREADS] [-l LEVEL] FILE DSET...\n");
    return 2;
}

/* Describes dataset d (its chunk bytes and level) and appends its stored chunks to `chunks`. */
static int list_chunks(struct dset *d, int level)
{
    hid_t dcpl = H5Dget_create_plist(d->id), type = H5Dget_type(d->id), space = H5Dget_space(d->id);
    int ok = 0;
    hsize_t cdims[MAX_RANK], n = 0;
    if (dcpl < 0 || type < 0 || space < 0) {
        fprintf(stderr, "h5shuf_cpufloor: %s: cannot read its type, space or creation properties\n", d->name);
        goto out;
    }
    if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
        fprintf(stderr, "h5shuf_cpufloor: %s is not chunked\n", d->name);
        goto out;
    }
    if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0) {
        fprintf(stderr, "h5shuf_cpufloor: %s has variable-length rows\n", d->name);
        goto out;
    }
    d->rank = H5Pget_chunk(dcpl, MAX_RANK, cdims);
    if (d->rank < 1 || d->rank > MAX_RANK) {
        fprintf(stderr, "h5shuf_cpufloor: %s: rank %d (1-%d only)\n", d->name, d->rank, MAX_RANK);
        goto out;
    }
    d->chunk_bytes = H5Tget_size(type);
    for (int i = 0; i < d->rank; i++)
        d->chunk_bytes *= cdims[i];
    unsigned flags, cd[8];
    size_t ncd = 8;
    char fname[64];
    if (H5Pget_nfilters(dcpl) != 1 ||
        H5Pget_filter_by_id2(dcpl, H5Z_FILTER_DEFLATE, &flags, &ncd, cd, sizeof fname, fname, NULL) < 0) {
        fprintf(stderr, "h5shuf_cpufloor: %s: deflate must be the only filter\n", d->name);
        goto out;
    }
    d->level = level >= 0 ? level : ncd > 0 ? (int)cd[0] : 6;
    if (d->level < 1 || d->level > 9) {
        fprintf(stderr, "h5shuf_cpufloor: %s: deflate level %d (1-9 only)\n", d->name, d->level);
        goto out;
    }
    if (H5Dget_num_chunks(d->id, space, &n) < 0) {
        fprintf(stderr, "h5shuf_cpufloor: %s: H5Dget_num_chunks failed\n", d->name);
        goto out;
    }
    if (n > 0) {
        struct chunk *grown = realloc(chunks, (nchunks + n) * sizeof *chunks);
        if (!grown) {
            fprintf(stderr, "h5shuf_cpufloor: out of memory\n");
            goto out;
        }
        chunks = grown;
    }
    for (hsize_t i = 0; i < n; i++) {
        struct chunk *c = &chunks[nchunks];
        haddr_t addr;
        memset(c, 0, sizeof *c);
        c->d = d;
        if (H5Dget_chunk_info(d->id, space, i, c->offset, &c->mask, &addr, &c->stored) < 0) {
            fprintf(stderr, "h5shuf_cpufloor: %s: H5Dget_chunk_info of chunk %llu failed\n", d->name,
                    (unsigned long long)i);
            goto out;
        }
        nchunks++;
    }
    ok = 1;
out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    return ok;
}

int main(int argc, char **argv)
{
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    int level = -1, opt;
    while ((opt = getopt(argc, argv, "j:l:")) != -1) {
        char *end;
        errno = 0;
        long v = strtol(optarg, &end, 10);
        if (errno || *end || end == optarg)
            return usage();
        if (opt == 'j' && v >= 1 && v <= 1024)
            threads = v;
        else if (opt == 'l' && v >= 1 && v <= 9)
            level = (int)v;
        else
            return usage();
    }
    if (argc - optind < 2)
        return usage();
    if (threads < 1)
        threads = 1;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the failures are reported here, in one line each */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *path = argv[optind];
    int nd = argc - optind - 1, opened = 0, rc = 1;
    long started = 0;
    struct dset *ds = calloc((size_t)nd, sizeof *ds);
    struct worker *w = calloc((size_t)threads, sizeof *w);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (!ds || !w) {
        fprintf(stderr, "h5shuf_cpufloor: out of memory\n");
        goto done;
    }
    if (file < 0) {
        fprintf(stderr, "h5shuf_cpufloor: cannot open %s\n", path);
        goto done;
    }
    for (; opened < nd; opened++) {
        struct dset *d = &ds[opened];
        d->name = argv[optind + 1 + opened];
        if ((d->id = H5Dopen2(file, d->name, H5P_DEFAULT)) < 0) {
            fprintf(stderr, "h5shuf_cpufloor: %s: no dataset %s\n", path, d->name);
            goto done;
        }
        if (!list_chunks(d, level)) {
            opened++; /* closed below */
            goto done; /* it said why */
        }
    }

    atomic_init(&next_chunk, 0);
    for (; started < threads; started++)
        if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0)
            break;
    if (started == 0) {
        fprintf(stderr, "h5shuf_cpufloor: pthread_create failed\n");
        goto done;
    }
    uint64_t stored = 0, inflated = 0, deflated = 0;
    int failed = 0;
    for (long i = 0; i < started; i++) {
        pthread_join(w[i].thread, NULL);
        if (w[i].err[0]) {
            fprintf(stderr, "h5shuf_cpufloor: %s: %s\n", path, w[i].err);
            failed = 1;
        }
        stored += w[i].stored;
        inflated += w[i].inflated;
        deflated += w[i].deflated;
    }
    for (; opened > 0; opened--)
        H5Dclose(ds[opened - 1].id);
    H5Fclose(file);
    file = H5I_INVALID_HID;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (failed)
        goto done;
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    char levels[64] = "";
    for (int i = 0, n = 0; i < nd && n < (int)sizeof levels - 4; i++)
        n += snprintf(levels + n, sizeof levels - (size_t)n, "%s%d", i ? "," : "", ds[i].level);
    printf("cpufloor: %.2f s, %ld threads, %zu chunks of %d dataset%s: %llu bytes stored, %llu inflated, "
           "%llu deflated again (level %s)\n",
           s, started, nchunks, nd, nd == 1 ? "" : "s", (unsigned long long)stored, (unsigned long long)inflated,
           (unsigned long long)deflated, levels);
    rc = 0;
done:
    for (; opened > 0; opened--)
        H5Dclose(ds[opened - 1].id);
    if (file >= 0)
        H5Fclose(file);
    free(w);
    free(ds);
    free(chunks);
    return rc;
}
