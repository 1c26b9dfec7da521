/*
 * targets.c - the output files of a run: one file, K shards (--shards) or named splits (--split), each a
 * consecutive range of the output order ("targets").
 *
 * Every target is a complete HDF5 file: the shuffled datasets with its rows, the copied objects of a
 * whole-file run, the provenance, and attributes saying which range of the output it holds.  All targets
 * are created under temporary names before pass 1 and closed again; pass 2's writer opens one at a time
 * and moves to the next at each boundary (h5shuf__outputs_next), so each target's chunks start at its
 * own row 0 and memory does not grow with K.  Only when every target is finished are they moved into
 * place; on any failure none of them remains.  Splitting never changes the order: concatenating the
 * targets gives exactly the single-file output.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "inputs.h"
#include "job.h"
#include "output.h"
#include "provenance.h"
#include "targets.h"
#include "writer.h"

#define SHARDS_MAX UINT64_C(1000000)

/* path with "-" tag inserted before its base name's extension (or appended when it has none). */
static char *insert_tag(const char *path, const char *tag)
{
    size_t len = strlen(path);
    char *out = malloc(len + strlen(tag) + 2);
    if (!out)
        return NULL;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t pre = dot && dot != base ? (size_t)(dot - path) : len;
    memcpy(out, path, pre);
    out[pre] = '-';
    strcpy(out + pre + 1, tag);
    strcat(out, path + pre);
    return out;
}

/* Replace every mark in name (owned; freed and replaced) by value; NULL when out of memory. */
static char *replace_all(char *name, const char *mark, const char *value)
{
    char *at;
    size_t from = 0;
    while (name && (at = strstr(name + from, mark)) != NULL) {
        size_t pre = (size_t)(at - name);
        char *n = malloc(strlen(name) + strlen(value) + 1);
        if (n) {
            memcpy(n, name, pre);
            strcpy(n + pre, value);
            strcat(n, at + strlen(mark));
        }
        free(name);
        name = n;
        from = pre + strlen(value);
    }
    return name;
}

/* The file name of an output: the marker replaced where the output's name has it, else tag inserted. */
static char *output_name(const char *out, const char *mark, const char *value, const char *tag)
{
    return strstr(out, mark) ? replace_all(strdup(out), mark, value) : insert_tag(out, tag);
}

/* v in decimal, zero-padded to width digits (width <= 20), into buf of 32 bytes. */
static void zero_pad(char *buf, uint64_t v, int width)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    int pad = width > n ? width - n : 0;
    memset(buf, '0', (size_t)pad);
    memcpy(buf + pad, digits, (size_t)n + 1);
}

static int add_target(h5shuf_job *job, char *path, const char *label, uint64_t first, uint64_t rows)
{
    struct h5shuf_target *t = &job->targets[job->ntargets];
    memset(t, 0, sizeof *t);
    t->path = path;
    t->first = first;
    t->rows = rows;
    if (!path || (label && !(t->label = strdup(label)))) {
        free(path);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    job->ntargets++;
    return H5SHUF_OK;
}

/* Parse "name=frac,..." into names (pointers into copy, which the caller frees) and fractions. */
static int split_parse(h5shuf_job *job, char *copy, char ***names, double **fracs, size_t *n)
{
    size_t cap = 1;
    for (const char *p = copy; *p; p++)
        cap += *p == ',';
    *names = calloc(cap, sizeof **names);
    *fracs = calloc(cap, sizeof **fracs);
    if (!*names || !*fracs)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    const char *syntax = "--split '%s': expected NAME=FRACTION[,NAME=FRACTION...], e.g. train=0.9,val=0.1";
    double sum = 0;
    *n = 0;
    for (char *item = copy, *next; item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1])
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, syntax, job->split);
        *eq = '\0';
        for (const char *c = item; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                  *c == '-' || *c == '.'))
                return h5shuf__fail(&job->err, H5SHUF_EINVAL,
                                    "--split '%s': name '%s' may only hold letters, digits, '_', '-' and '.'", job->split,
                                    item);
        for (size_t k = 0; k < *n; k++)
            if (strcmp((*names)[k], item) == 0)
                return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--split '%s': name '%s' given twice", job->split, item);
        char *end;
        errno = 0;
        double f = strtod(eq + 1, &end);
        if (*end || errno || eq[1] == ' ' || !isfinite(f))
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, syntax, job->split);
        if (!(f > 0))
            return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--split '%s': the fraction of '%s' must be above 0",
                                job->split, item);
        (*names)[*n] = item;
        (*fracs)[(*n)++] = f;
        sum += f;
    }
    if (fabs(sum - 1.0) > 1e-6)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--split '%s': the fractions sum to %.9g, not 1", job->split, sum);
    return H5SHUF_OK;
}

int h5shuf__outputs_plan(h5shuf_job *job)
{
    uint64_t rows = job->out_rows;
    const char *out = job->out_spec.file;
    if (job->opts.shards && job->split)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--shards and --split cannot be combined");
    if (job->opts.shards > SHARDS_MAX)
        return h5shuf__fail(&job->err, H5SHUF_EINVAL, "--shards %llu: at most %llu shards",
                            (unsigned long long)job->opts.shards, (unsigned long long)SHARDS_MAX);
    if (job->split) {
        char *copy = strdup(job->split), **names = NULL;
        double *fracs = NULL;
        size_t n = 0;
        int st = copy ? split_parse(job, copy, &names, &fracs, &n) : h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        if (st == H5SHUF_OK && !(job->targets = calloc(n, sizeof *job->targets)))
            st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
        long double total = 0, cum = 0;
        for (size_t k = 0; k < n; k++)
            total += fracs[k];
        uint64_t first = 0;
        for (size_t k = 0; k < n && st == H5SHUF_OK; k++) {
            cum += fracs[k];
            uint64_t end = k + 1 == n ? rows : (uint64_t)floorl((long double)rows * cum / total);
            if (end > rows)
                end = rows;
            if (end < first)
                end = first;
            st = add_target(job, output_name(out, "{split}", names[k], names[k]), names[k], first, end - first);
            first = end;
        }
        free(names);
        free(fracs);
        free(copy);
        return st;
    }
    uint64_t k = job->opts.shards ? job->opts.shards : 1;
    if (!(job->targets = calloc(k, sizeof *job->targets)))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    if (!job->opts.shards)
        return add_target(job, strdup(out), NULL, 0, rows);
    int width = snprintf(NULL, 0, "%llu", (unsigned long long)k);
    if (width < 5)
        width = 5;
    for (uint64_t s = 0; s < k; s++) {
        uint64_t first = (uint64_t)((h5shuf_u128)s * rows / k), end = (uint64_t)((h5shuf_u128)(s + 1) * rows / k);
        char index[32], count[32], tag[80];
        zero_pad(index, s, width);
        zero_pad(count, k, width);
        snprintf(tag, sizeof tag, "%s-of-%s", index, count);
        int st = add_target(job, replace_all(output_name(out, "{shard}", index, tag), "{shards}", count), NULL, first,
                            end - first);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

int h5shuf__outputs_check(h5shuf_job *job)
{
    for (size_t t = 0; t < job->ntargets; t++) {
        const char *out = job->targets[t].path;
        struct stat so;
        for (size_t u = 0; u < t; u++)
            if (strcmp(out, job->targets[u].path) == 0)
                return h5shuf__fail(&job->err, H5SHUF_EINVAL, "%s: two outputs have this name", out);
        if (stat(out, &so) != 0) {
            if (errno == ENOENT)
                continue;
            return h5shuf__fail(&job->err, H5SHUF_EIO, "%s: %s", out, strerror(errno));
        }
        for (size_t f = 0; f < job->ninputs; f++) {
            struct stat si;
            if (stat(h5shuf__input_path(&job->inputs[f]), &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
                return h5shuf__fail(&job->err, H5SHUF_ESAMEFILE,
                                    "%s: the output is also input %zu; refusing to overwrite it", out, f + 1);
        }
        struct stat sp;
        if (job->mode == H5SHUF_MODE_GATHER && stat(job->piles_path, &sp) == 0 && sp.st_dev == so.st_dev &&
            sp.st_ino == so.st_ino)
            return h5shuf__fail(&job->err, H5SHUF_ESAMEFILE, "%s: the output is the pile file; refusing to overwrite it",
                                out);
        if (!S_ISREG(so.st_mode))
            return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: exists and is not a regular file; not replacing it", out);
        if (!job->opts.force)
            return h5shuf__fail(&job->err, H5SHUF_EEXIST, "%s: output file exists (use --force to replace it)", out);
    }
    return H5SHUF_OK;
}

/* Create target t's file under a temporary name next to its final path. */
static int target_open_new(h5shuf_job *job, struct h5shuf_target *t, hid_t *file)
{
    const char *out = t->path;
    char cause[256];
    char *dir = h5shuf__dir_of(out);
    const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
    size_t len = (dir ? strlen(dir) : 0) + strlen(base) + 32;
    t->tmp_path = dir ? malloc(len) : NULL;
    if (!t->tmp_path) {
        free(dir);
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    }
    snprintf(t->tmp_path, len, "%s/.%s.h5shuf-XXXXXX", dir, base);
    int fd = mkstemp(t->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(t->tmp_path);
        t->tmp_path = NULL;
        int st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot create the output in %s: %s", out, dir, strerror(e));
        free(dir);
        return st;
    }
    free(dir);
    /* mkstemp makes the file 0600; give it the mode a new file gets (0666 less the umask). */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0); /* the root group too: no clock in the file */
    *file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fcreate(t->tmp_path, H5F_ACC_TRUNC, fcpl, fapl);
    if (*file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause); /* before H5Pclose clears the stack */
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (*file < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot create: %s", out, cause);
    return H5SHUF_OK;
}

/* Close the datasets in job->out_dsets and the file; st != OK empties the file first.  Returns st or
 * the first error of closing. */
static int close_file(h5shuf_job *job, hid_t file, const char *tmp_path, int st)
{
    char cause[256];
    for (size_t d = 0; d < job->nds + 2; d++) {
        if (job->out_dsets[d] >= 0 && H5Dclose(job->out_dsets[d]) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: %s", job->out_name,
                              d < job->nds ? job->ds[d].out_path : d == job->nds ? job->index_path : job->source_index_path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        job->out_dsets[d] = H5I_INVALID_HID;
    }
    /* Flush first: a full disk then fails here, not in H5Fclose (see below). */
    if (st == H5SHUF_OK && H5Fflush(file, H5F_SCOPE_LOCAL) < 0)
        st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_name,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    /* A failed run discards the output: empty it first, so that HDF5's flush at close finds room even on
     * a full disk.  (HDF5 1.10 cannot recover from a failed H5Fclose: the file stays half-closed and the
     * library crashes closing it again at exit.) */
    if (st != H5SHUF_OK)
        truncate(tmp_path, 0);
    if (H5Fclose(file) < 0 && st == H5SHUF_OK)
        st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", job->out_name,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}

int h5shuf__outputs_create(h5shuf_job *job)
{
    job->cur_file = H5I_INVALID_HID;
    if (!job->out_dsets && !(job->out_dsets = malloc((job->nds + 2) * sizeof *job->out_dsets)))
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < job->nds + 2; d++)
        job->out_dsets[d] = H5I_INVALID_HID;
    int st = H5SHUF_OK;
    for (size_t k = 0; k < job->ntargets && st == H5SHUF_OK; k++) {
        struct h5shuf_target *t = &job->targets[k];
        hid_t file = H5I_INVALID_HID;
        job->out_name = t->path;
        st = target_open_new(job, t, &file);
        if (k == 0)
            job->temp_file[0] = t->tmp_path;
        if (st != H5SHUF_OK)
            break;
        st = h5shuf__output_create(job, file, job->out_dsets, t->rows);
        if (st == H5SHUF_OK)
            st = h5shuf__output_provenance(job, file);
        if (st == H5SHUF_OK)
            st = h5shuf__target_attrs(job, k, file);
        st = close_file(job, file, t->tmp_path, st);
    }
    return st;
}

int h5shuf__outputs_close(h5shuf_job *job, int st)
{
    if (job->cur_file < 0)
        return st;
    st = close_file(job, job->cur_file, job->targets[job->cur_target].tmp_path, st);
    job->cur_file = H5I_INVALID_HID;
    return st;
}

int h5shuf__outputs_next(h5shuf_job *job, struct h5shuf_writer *w)
{
    char cause[256];
    int st = h5shuf__writer_flush(job, w);
    st = h5shuf__outputs_close(job, st);
    if (st != H5SHUF_OK)
        return st;
    size_t k = job->cur_target;
    while (k < job->ntargets && job->targets[k].first + job->targets[k].rows <= w->pos)
        k++;
    if (k == job->ntargets)
        return h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "row %llu is past the last output", (unsigned long long)w->pos);
    struct h5shuf_target *t = &job->targets[k];
    job->cur_target = k;
    job->out_name = t->path;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    job->cur_file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fopen(t->tmp_path, H5F_ACC_RDWR, fapl);
    if (job->cur_file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    H5Pclose(fapl);
    if (job->cur_file < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot reopen: %s", t->path, cause);
    /* Bands cover whole chunks, which HDF5 writes without caching; no cache needed. */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 521, 0, 1.0);
    for (size_t d = 0; d < job->nds + 2 && st == H5SHUF_OK; d++) {
        const char *path = d < job->nds ? job->ds[d].out_path : d == job->nds ? job->index_path : job->source_index_path;
        if (!path)
            continue;
        job->out_dsets[d] = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Dopen2(job->cur_file, path, dapl);
        if (job->out_dsets[d] < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot reopen: %s", t->path, path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    H5Pclose(dapl);
    if (st == H5SHUF_OK)
        h5shuf__writer_retarget(w, job->out_dsets, t->first, t->first + t->rows);
    return st;
}

int h5shuf__outputs_finish(h5shuf_job *job, int st)
{
    size_t done = 0;
    for (; st == H5SHUF_OK && done < job->ntargets; done++)
        if ((st = h5shuf__commit_file(job, job->targets[done].tmp_path, job->targets[done].path)) != H5SHUF_OK)
            break;
    if (st != H5SHUF_OK) /* all or nothing: take back the ones already in place */
        for (size_t k = 0; k < done; k++)
            unlink(job->targets[k].path);
    job->temp_file[0] = NULL;
    for (size_t k = 0; k < job->ntargets; k++) {
        if (job->targets[k].tmp_path)
            unlink(job->targets[k].tmp_path); /* after link(), or the discarded file */
        free(job->targets[k].tmp_path);
        job->targets[k].tmp_path = NULL;
    }
    return st;
}

void h5shuf__outputs_free(h5shuf_job *job)
{
    for (size_t k = 0; k < job->ntargets; k++) {
        free(job->targets[k].path);
        free(job->targets[k].tmp_path);
        free(job->targets[k].label);
    }
    free(job->targets);
    job->targets = NULL;
    job->ntargets = 0;
    free(job->out_dsets);
    job->out_dsets = NULL;
}
