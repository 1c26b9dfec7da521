/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_file.c - libFuzzer target for a whole HDF5 file: the input's bytes are the file.  They are written
 * to in.h5 in a temporary directory made once per process (under $FUZZ_FILE_TMPDIR, else /dev/shm when
 * it exists, so the output's fsync costs nothing, else $TMPDIR or /tmp), shuffled whole through the public
 * API (h5shuf_run: every dataset whose dim 0 is the common N, other objects copied; a fixed seed, a
 * budget of 1 MiB, one thread, scratch in the same directory), and when that succeeds the output is
 * checked against the input (h5shuf_verify).  Everything but in.h5 is removed after each input, and the
 * directory at exit (not after a crash: tests/fuzz/run_file.sh gives its processes a parent it removes).
 * A run over more than 2^16 rows, or longer than 2 s, is cancelled from its progress callback.
 *
 * Besides never crashing, leaking, reading out of bounds or allocating without bound (ASan+UBSan, and
 * libFuzzer's -malloc_limit_mb / -rss_limit_mb), the run must keep these properties, and the target
 * aborts when one fails:
 *   status    a run returns H5SHUF_OK, or a failure whose message (h5shuf_errmsg) is one non-empty line;
 *   status    ... and never H5SHUF_EINTERNAL (an internal error is h5shuf's bug whatever the input);
 *   verify    an output written from an input is a permutation of its rows (h5shuf_verify passes, or
 *             finds the 1 MiB budget too small, or is cancelled as the run may be: below);
 *   objects   every HDF5 object the job opened is closed when it is freed (H5Fget_obj_count);
 *   files     a failed run leaves no output, and no run leaves its scratch behind.
 * The input is HDF5's to parse, and libhdf5 1.10 itself crashes on some hostile metadata (issue 25
 * item 6): tests/fuzz/classify.py sorts a crash by the first frame of its stack that is not the
 * sanitizers' or libc's -- h5shuf's sources (ours to fix) or libhdf5 (not) -- and .ci/run fails only on
 * the former.  The committed corpus (tests/fuzz/corpus/file) holds only inputs that pass.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5shuf.h"

#define REQUIRE(cond)                                                                                   \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            fprintf(stderr, "fuzz_file: property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);     \
            abort();                                                                                    \
        }                                                                                               \
    } while (0)

#define BUDGET_BYTES ((uint64_t)1 << 20)
/* A run over more rows than this, or past this many seconds, is cancelled from its progress callback
 * (H5SHUF_ECANCELED, one more failure path checked): a mutated dims[0] of 2^40 fill values would
 * otherwise take each input hours. */
#define ROWS_MAX ((uint64_t)1 << 16)
#define SECONDS_MAX 2.0

static char dir[4096], in_path[4200], out_path[4200];

static void remove_dir_at_exit(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[4400];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The directory, made once: h5shuf's filters registered, HDF5's automatic error printing off. */
static void setup(void)
{
    if (dir[0])
        return;
    const char *t = getenv("FUZZ_FILE_TMPDIR");
    struct stat st;
    if (!t || !*t)
        t = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                                                                                          : getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fuzz_file-XXXXXX", t && *t ? t : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(in_path, sizeof in_path, "%s/in.h5", dir);
    snprintf(out_path, sizeof out_path, "%s/out.h5", dir);
    atexit(remove_dir_at_exit);
    REQUIRE(h5shuf_register_filters() == H5SHUF_OK);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* Remove every file of the directory but the input; returns how many there were. */
static int sweep(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    REQUIRE(d != NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "in.h5") == 0)
            continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
        n++;
    }
    closedir(d);
    return n;
}

static void write_input(const uint8_t *data, size_t size)
{
    int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    for (size_t done = 0; done < size;) {
        ssize_t k = write(fd, data + done, size - done);
        REQUIRE(k > 0);
        done += (size_t)k;
    }
    REQUIRE(close(fd) == 0);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Cancel a run over too many rows or for too long (user: its start time, seconds). */
static int on_progress(void *user, h5shuf_phase phase, uint64_t rows_done, uint64_t rows_total)
{
    (void)rows_done;
    return (phase != H5SHUF_PHASE_CREATE && rows_total > ROWS_MAX) || now() - *(const double *)user > SECONDS_MAX;
}

static h5shuf_options options(double *start)
{
    h5shuf_options o;
    h5shuf_options_init(&o);
    o.seed = 1;
    o.seed_set = 1;
    o.mem_limit_bytes = BUDGET_BYTES;
    o.threads = 1;
    o.tmpdir = dir;
    o.force = 1;
    o.progress = on_progress;
    o.progress_user = start;
    *start = now();
    return o;
}

/* status: OK, or a failure with one non-empty line. */
static void check_status(const h5shuf_job *job, int st)
{
    if (st == H5SHUF_OK)
        return;
    const char *m = h5shuf_errmsg(job);
    REQUIRE(m != NULL && m[0] != 0);
    REQUIRE(strchr(m, '\n') == NULL);
    REQUIRE(st != H5SHUF_EINTERNAL); /* (an internal error is h5shuf's bug, whatever the input) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    write_input(data, size);
    double start;
    h5shuf_options o = options(&start);
    ssize_t before = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    h5shuf_job *job = h5shuf_job_create(&o);
    REQUIRE(job != NULL);
    int st = h5shuf_job_add_input(job, in_path);
    if (st == H5SHUF_OK)
        st = h5shuf_job_set_output(job, out_path);
    if (st == H5SHUF_OK)
        st = h5shuf_run(job);
    check_status(job, st);
    if (getenv("FUZZ_FILE_VERBOSE")) /* (what a replayed input did) */
        fprintf(stderr, "fuzz_file: %s%s%s\n", h5shuf_strerror(st), st ? ": " : "", st ? h5shuf_errmsg(job) : "");
    h5shuf_job_free(job);
    REQUIRE(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == before);
    struct stat sb;
    int have_output = stat(out_path, &sb) == 0;
    REQUIRE(have_output == (st == H5SHUF_OK)); /* files: an output exactly when the run succeeded */
    if (st == H5SHUF_OK) {                     /* verify: the output holds the input's rows */
        start = now();
        job = h5shuf_job_create(&o);
        REQUIRE(job != NULL);
        int v = h5shuf_job_add_input(job, in_path);
        if (v == H5SHUF_OK)
            v = h5shuf_job_set_output(job, out_path);
        if (v == H5SHUF_OK)
            v = h5shuf_verify(job);
        if (v != H5SHUF_OK)
            fprintf(stderr, "fuzz_file: verify: %s\n", h5shuf_errmsg(job));
        REQUIRE(v == H5SHUF_OK || v == H5SHUF_EBUDGET || v == H5SHUF_ECANCELED);
        h5shuf_job_free(job);
        REQUIRE(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == before);
    }
    REQUIRE(sweep() == have_output); /* files: nothing but the output (the scratch removed) */
    return 0;
}
