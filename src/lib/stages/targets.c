/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * targets.c - the output files of a run: one file, K shards (--shards) or named splits (--split), each a
 * consecutive range of the output order ("targets").
 *
 * Every target is a complete HDF5 file: the shuffled datasets with its rows, the copied objects of a
 * whole-file run, the provenance, and attributes saying which range of the output it holds.  All targets
 * are created under temporary names before pass 1 and closed again; pass 2's writer opens one at a time
 * and moves to the next at each boundary (h5shuf__targets_put), so each target's chunks start at its
 * own row 0 and memory does not grow with K.  Only when every target is finished are they moved into
 * place; on any failure none of them remains.  Splitting never changes the order: concatenating the
 * targets gives exactly the single-file output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "attrs.h"
#include "inputs.h"
#include "output.h"
#include "provenance.h"
#include "splits.h"
#include "targets.h"
#include "tempfile.h"
#include "writer.h"

#define SHARDS_MAX UINT64_C(1000000)

/*-*************************************
*  Output names
***************************************/

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

static int add_target(struct h5shuf_targets *t, char *path, const char *label, uint64_t first, uint64_t rows,
                      struct h5shuf_err *err)
{
    struct h5shuf_target *tg = &t->v[t->n];
    memset(tg, 0, sizeof *tg);
    tg->path = path;
    tg->first = first;
    tg->rows = rows;
    if (!path || (label && !(tg->label = strdup(label)))) {
        free(path);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    t->n++;
    return H5SHUF_OK;
}

/* The targets of --split: consecutive ranges of the output order, exact (splits.h). */
static int plan_splits(struct h5shuf_targets *t, const char *out, struct h5shuf_err *err)
{
    struct h5shuf_splits s;
    int st = h5shuf__splits_parse(t->split, &s, err);
    if (st == H5SHUF_OK && !(t->v = calloc(s.n, sizeof *t->v)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    uint64_t first = 0;
    for (size_t k = 0; k < s.n && st == H5SHUF_OK; k++) {
        uint64_t end = h5shuf__splits_end(&s, k, t->rows);
        st = add_target(t, output_name(out, "{split}", s.names[k], s.names[k]), s.names[k], first, end - first, err);
        first = end;
    }
    h5shuf__splits_free(&s);
    return st;
}

/* The targets of --shards K (or the single output when K = 0). */
static int plan_shards(struct h5shuf_targets *t, const char *out, struct h5shuf_err *err)
{
    uint64_t rows = t->rows, k = t->shards ? t->shards : 1;
    if (!(t->v = calloc(k, sizeof *t->v)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (!t->shards)
        return add_target(t, strdup(out), NULL, 0, rows, err);
    int width = snprintf(NULL, 0, "%llu", (unsigned long long)k);
    if (width < 5)
        width = 5;
    for (uint64_t s = 0; s < k; s++) {
        uint64_t first = (uint64_t)((h5shuf_u128)s * rows / k), end = (uint64_t)((h5shuf_u128)(s + 1) * rows / k);
        char index[32], count[32], tag[80];
        zero_pad(index, s, width);
        zero_pad(count, k, width);
        snprintf(tag, sizeof tag, "%s-of-%s", index, count);
        int st = add_target(t, replace_all(output_name(out, "{shard}", index, tag), "{shards}", count), NULL, first,
                            end - first, err);
        if (st != H5SHUF_OK)
            return st;
    }
    return H5SHUF_OK;
}

/*-*************************************
*  Planning the targets
***************************************/

int h5shuf__targets_plan(struct h5shuf_targets *t, const char *out, uint64_t shards, const char *split, uint64_t rows,
                         uint64_t all_rows, struct h5shuf_err *err)
{
    t->rows = rows;
    t->shards = shards;
    t->split = split;
    t->file = H5I_INVALID_HID;
    if (shards && split)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--shards and --split cannot be combined");
    if (shards > SHARDS_MAX)
        return h5shuf__fail(err, H5SHUF_EINVAL, "--shards %llu: at most %llu shards", (unsigned long long)shards,
                            (unsigned long long)SHARDS_MAX);
    int st = split ? plan_splits(t, out, err) : plan_shards(t, out, err);
    t->ranges = t->n > 1 || shards || rows != all_rows;
    t->lo = 0;
    t->hi = t->n;
    return st;
}

void h5shuf__targets_select(struct h5shuf_targets *t, size_t lo, size_t hi)
{
    t->lo = lo;
    t->hi = hi;
    t->cur = lo;
}

int h5shuf__targets_plan_part(struct h5shuf_targets *t, const char *dir, uint64_t first, uint64_t rows,
                              uint64_t all_rows, struct h5shuf_err *err)
{
    memset(t, 0, sizeof *t);
    t->file = H5I_INVALID_HID;
    t->rows = all_rows;
    t->part = 1;
    t->v = calloc(1, sizeof *t->v);
    size_t len = strlen(dir) + sizeof "/h5shuf-part.h5";
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s/h5shuf-part.h5", dir);
    if (!t->v) {
        free(path);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    int st = add_target(t, path, NULL, first, rows, err);
    t->hi = t->n;
    return st;
}

int h5shuf__targets_check(const struct h5shuf_targets *t, const struct h5shuf_inputs *in, const char *piles_path,
                          int force, struct h5shuf_err *err)
{
    for (size_t k = 0; k < t->n; k++) {
        const char *out = t->v[k].path;
        struct stat so;
        for (size_t u = 0; u < k; u++)
            if (strcmp(out, t->v[u].path) == 0)
                return h5shuf__fail(err, H5SHUF_EINVAL, "%s: two outputs have this name", out);
        if (lstat(out, &so) != 0) {
            if (errno == ENOENT)
                continue;
            return h5shuf__fail(err, H5SHUF_EIO, "%s: %s", out, strerror(errno));
        }
        if (S_ISLNK(so.st_mode) && stat(out, &so) != 0) { /* a dangling link is there all the same */
            if (!force)
                return h5shuf__fail(err, H5SHUF_EEXIST,
                                    "%s: exists, as a symbolic link to a missing file (use --force to replace the link)",
                                    out);
            continue; /* replaced as a name: nothing is written through it */
        }
        for (size_t f = 0; f < in->n; f++) {
            struct stat si;
            if (stat(h5shuf__input_path(&in->v[f]), &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
                return h5shuf__fail(err, H5SHUF_ESAMEFILE, "%s: the output is also input %zu; refusing to overwrite it",
                                    out, f + 1);
        }
        struct stat sp;
        if (piles_path && stat(piles_path, &sp) == 0 && sp.st_dev == so.st_dev && sp.st_ino == so.st_ino)
            return h5shuf__fail(err, H5SHUF_ESAMEFILE, "%s: the output is the pile file; refusing to overwrite it", out);
        if (!S_ISREG(so.st_mode))
            return h5shuf__fail(err, H5SHUF_EEXIST, "%s: exists and is not a regular file; not replacing it", out);
        if (!force)
            return h5shuf__fail(err, H5SHUF_EEXIST, "%s: output file exists (use --force to replace it)", out);
    }
    return H5SHUF_OK;
}

/*-*************************************
*  Creating the target files
***************************************/

/* Reserve target tg's temporary file next to its final path (empty, tg->tf); a run of more than
 * TARGETS_OPEN targets parks each (closes its descriptor) between the times it is written. */
#define TARGETS_OPEN 16
static int target_reserve(struct h5shuf_target *tg, struct h5shuf_err *err)
{
    char *dir = h5shuf__dir_of(tg->path);
    if (!dir)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    char what[64 + 4096];
    snprintf(what, sizeof what, "%s: cannot create the output", tg->path);
    int st = h5shuf__tempfile_create(&tg->tf, dir, ".", tg->path, ".h5shuf-", what, err);
    free(dir);
    return st;
}

/* Create target tg's HDF5 file at its reserved temporary name. */
static int target_create_file(struct h5shuf_target *tg, const struct h5shuf_objcopy *oc, hid_t *file,
                              struct h5shuf_err *err)
{
    const char *out = tg->path;
    char cause[256];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0); /* the root group too: no clock in the file */
    if (oc->root_link_order) /* the root group's creation order, as the input's (netCDF-4 tracks it) */
        H5Pset_link_creation_order(fcpl, oc->root_link_order);
    if (oc->root_attr_order)
        H5Pset_attr_creation_order(fcpl, oc->root_attr_order);
    /* The file format's versions, set rather than left to HDF5, whose default changed (2.0 writes the 1.8
     * format at least): the earliest that holds each object, as HDF5 1.10 to 1.14 chose by default, so that
     * every HDF5 writes the same bytes.  Attributes over 64 KiB, or an input in HDF5 1.8's format or later:
     * dense attribute storage, and room for the later object formats the input may use (a 1.10 chunk index
     * copied as it is). */
    H5Pset_libver_bounds(fapl, oc->new_format ? H5F_LIBVER_V18 : H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    *file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fcreate(h5shuf__tempfile_hdf5_name(&tg->tf), H5F_ACC_TRUNC, fcpl, fapl);
    if (*file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause); /* before H5Pclose clears the stack */
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (*file < 0) {
        if (h5shuf__tempfile_lost(&tg->tf))
            return h5shuf__tempfile_fail_replaced(&tg->tf, out, err);
        h5shuf__fd_shortage(h5shuf__tempfile_hdf5_name(&tg->tf), cause, sizeof cause); /* (HDF5: "unable to open file") */
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot create: %s", out, cause);
    }
    return H5SHUF_OK;
}

/* The range attributes of target k when there are several outputs (or a head): which rows of the output
 * order it holds, and which shard or split it is. */
static int range_attrs(const struct h5shuf_targets *t, size_t k, hid_t file, struct h5shuf_err *err)
{
    const struct h5shuf_target *tg = &t->v[k];
    if (!t->ranges)
        return H5SHUF_OK; /* the single whole output: nothing to add */
    char cause[256];
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    uint64_t range[2] = {tg->first, tg->first + tg->rows};
    const int text = t->of->objects->netcdf; /* types the netCDF classic model has */
    char range_text[48];
    snprintf(range_text, sizeof range_text, "%llu %llu", (unsigned long long)range[0], (unsigned long long)range[1]);
    herr_t r = root < 0 ? -1
               : text   ? h5shuf__attr_put_text(root, "h5shuf_row_range", range_text, 1)
                        : h5shuf__attr_put_u64s(root, "h5shuf_row_range", range, 2);
    if (r >= 0)
        r = h5shuf__attr_put_u64_text(root, "h5shuf_output_rows", t->rows, text);
    if (r >= 0 && t->shards) {
        r = h5shuf__attr_put_u64_text(root, "h5shuf_shard", k, text);
        if (r >= 0)
            r = h5shuf__attr_put_u64_text(root, "h5shuf_shards", t->n, text);
    } else if (r >= 0 && tg->label) {
        r = h5shuf__attr_put_text(root, "h5shuf_split", tg->label, text);
        if (r >= 0)
            r = h5shuf__attr_put_text(root, "h5shuf_splits", t->split, text);
    }
    if (root >= 0)
        H5Gclose(root);
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot write the range attributes: %s", tg->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* The path of output dataset d (the shuffled datasets, then the index and the source index). */
static const char *dataset_path(const struct h5shuf_outfile *of, size_t d)
{
    return d < of->dsets->n ? of->dsets->ds[d].out_path : d == of->dsets->n ? of->index_path : of->source_index_path;
}

/* Close the datasets in t->dsets and the file (named name, its temporary tf); st != OK empties the file
 * first.  Returns st or the first error of closing. */
static int close_file(struct h5shuf_targets *t, hid_t file, const char *name, const struct h5shuf_tempfile *tf, int st,
                      struct h5shuf_err *err)
{
    char cause[256];
    for (size_t d = 0; d < t->of->dsets->n + 2; d++) {
        if (t->dsets[d] >= 0 && H5Dclose(t->dsets[d]) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(err, H5SHUF_EIO, "%s:%s: %s", name, dataset_path(t->of, d),
                              h5shuf__hdf5_cause(cause, sizeof cause));
        t->dsets[d] = H5I_INVALID_HID;
    }
    /* Flush first: a full disk then fails here, not in H5Fclose (see below). */
    if (st == H5SHUF_OK && H5Fflush(file, H5F_SCOPE_LOCAL) < 0)
        st = h5shuf__fail(err, H5SHUF_EIO, "%s: cannot finish writing: %s", name, h5shuf__hdf5_cause(cause, sizeof cause));
    /* A failed run discards the output: empty it first, so that HDF5's flush at close finds room even on
     * a full disk.  (HDF5 1.10 cannot recover from a failed H5Fclose: the file stays half-closed and the
     * library crashes closing it again at exit.) */
    if (st != H5SHUF_OK && !(t->discard && t->discard(t->commit_user)))
        h5shuf__tempfile_empty(tf);
    if (H5Fclose(file) < 0 && st == H5SHUF_OK)
        st = h5shuf__fail(err, H5SHUF_EIO, "%s: cannot finish writing: %s", name, h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}

int h5shuf__targets_attach(struct h5shuf_targets *t, const struct h5shuf_outfile *of, struct h5shuf_err *err)
{
    t->of = of;
    t->file = H5I_INVALID_HID;
    if (!t->dsets && !(t->dsets = malloc((of->dsets->n + 2) * sizeof *t->dsets)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < of->dsets->n + 2; d++)
        t->dsets[d] = H5I_INVALID_HID;
    return H5SHUF_OK;
}

int h5shuf__targets_reserve(struct h5shuf_targets *t, struct h5shuf_err *err)
{
    int st = H5SHUF_OK;
    for (size_t k = t->lo; k < t->hi && st == H5SHUF_OK; k++) {
        if (t->v[k].tf.path)
            continue;
        st = target_reserve(&t->v[k], err);
        if (st == H5SHUF_OK && t->hi - t->lo > TARGETS_OPEN)
            h5shuf__tempfile_park(&t->v[k].tf);
    }
    return st;
}

void h5shuf__targets_temp_name(const struct h5shuf_targets *t, size_t k, char *buf, size_t cap)
{
    h5shuf__tempfile_name(".", t->v[k].path, ".h5shuf-", buf, cap);
}

int h5shuf__targets_reserve_as(struct h5shuf_targets *t, size_t k, const char *name, struct h5shuf_err *err)
{
    struct h5shuf_target *tg = &t->v[k];
    char *dir = h5shuf__dir_of(tg->path);
    if (!dir)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    char what[64 + 4096];
    snprintf(what, sizeof what, "%s: cannot create the output", tg->path);
    int st = h5shuf__tempfile_create_as(&tg->tf, dir, name, what, err);
    free(dir);
    if (st == H5SHUF_OK && t->hi - t->lo > TARGETS_OPEN)
        h5shuf__tempfile_park(&tg->tf);
    return st;
}

int h5shuf__targets_adopt(struct h5shuf_targets *t, size_t k, const char *name, uint64_t dev, uint64_t ino,
                          struct h5shuf_err *err)
{
    struct h5shuf_target *tg = &t->v[k];
    char *dir = h5shuf__dir_of(tg->path);
    if (!dir)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    h5shuf__tempfile_remove(&tg->tf);
    int st = h5shuf__tempfile_adopt(&tg->tf, dir, name, dev, ino, err);
    free(dir);
    return st;
}

int h5shuf__targets_create(const struct h5shuf_ctx *cx, struct h5shuf_targets *t, const struct h5shuf_outfile *of,
                           uint64_t files)
{
    struct h5shuf_err *err = cx->err;
    int st = h5shuf__targets_attach(t, of, err);
    for (size_t k = t->lo; k < t->hi && st == H5SHUF_OK; k++) {
        struct h5shuf_target *tg = &t->v[k];
        hid_t file = H5I_INVALID_HID;
        /* its temporary name is known from now on (h5shuf_job_temp_file), before HDF5 writes anything
         * (reserved already when a resumable run recorded it) */
        if ((st = tg->tf.path ? h5shuf__tempfile_unpark(&tg->tf, tg->path, err) : target_reserve(tg, err)) != H5SHUF_OK ||
            (st = h5shuf__progress(&cx->progress, err, H5SHUF_PHASE_CREATE, k + 1, files)) != H5SHUF_OK ||
            (st = target_create_file(tg, of->objects, &file, err)) != H5SHUF_OK)
            break;
        if (t->part) { /* the row datasets only */
            st = h5shuf__output_create_part(of, file, tg->path, tg->rows, t->rows, t->dsets, err);
            st = close_file(t, file, tg->path, &tg->tf, st, err);
            if (t->hi - t->lo > TARGETS_OPEN)
                h5shuf__tempfile_park(&tg->tf);
            continue;
        }
        st = h5shuf__output_create(of, file, tg->path, tg->rows, t->dsets, err);
        if (st == H5SHUF_OK)
            st = h5shuf__output_provenance(of, file, tg->path, err);
        if (st == H5SHUF_OK)
            st = range_attrs(t, k, file, err);
        st = close_file(t, file, tg->path, &tg->tf, st, err);
        if (t->hi - t->lo > TARGETS_OPEN)
            h5shuf__tempfile_park(&tg->tf);
    }
    return st;
}

/*-*************************************
*  Closing and moving on
***************************************/

/* Close the open target at output row row (st != H5SHUF_OK: discarded), then let a resumable run commit
 * it (t->commit) before its descriptor may be parked. */
static int close_open(struct h5shuf_targets *t, int st, uint64_t row, struct h5shuf_err *err)
{
    if (t->file < 0)
        return st;
    struct h5shuf_target *tg = &t->v[t->cur];
    st = close_file(t, t->file, tg->path, &tg->tf, st, err);
    t->file = H5I_INVALID_HID;
    if (st == H5SHUF_OK && t->commit)
        st = t->commit(t->commit_user, t->cur, row, row == tg->first + tg->rows, err);
    if (t->hi - t->lo > TARGETS_OPEN)
        h5shuf__tempfile_park(&tg->tf);
    return st;
}

int h5shuf__targets_close(struct h5shuf_targets *t, int st, struct h5shuf_err *err)
{
    /* the end of pass 2: the open target is finished (its rows all put) unless st says otherwise */
    return t->file < 0 ? st : close_open(t, st, t->v[t->cur].first + t->v[t->cur].rows, err);
}

/* Bytes of rows between two writebacks of the open output (h5shuf__file_writeback): the disk then writes
 * an uncompressed output while the run goes on, instead of during the fsync of its commit (0.8 s a GiB
 * here, bench/fsync_cost.sh). */
#define WRITEBACK_BYTES (UINT64_C(32) << 20)

/*-*************************************
*  Putting rows
***************************************/

/* The writer reached the end of the open target (or starts): close it, open the target holding row
 * w->pos and point the writer at it. */
static int next_target(const struct h5shuf_ctx *cx, struct h5shuf_targets *t, struct h5shuf_writer *w)
{
    char cause[256];
    int st = h5shuf__writer_flush(cx, w);
    st = close_open(t, st, w->pos, cx->err);
    if (st != H5SHUF_OK)
        return st;
    size_t k = t->cur;
    while (k < t->hi && t->v[k].first + t->v[k].rows <= w->pos)
        k++;
    if (k == t->hi)
        return h5shuf__fail(cx->err, H5SHUF_EINTERNAL, "row %llu is past the last output", (unsigned long long)w->pos);
    struct h5shuf_target *tg = &t->v[k];
    t->cur = k;
    if ((st = h5shuf__tempfile_unpark(&tg->tf, tg->path, cx->err)) != H5SHUF_OK)
        return st;
    hid_t fapl = t->fapl ? t->fapl(t->commit_user, k, tg->tf.fd, cx->err) : H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return cx->err->status ? cx->err->status : h5shuf__fail(cx->err, H5SHUF_EHDF5, "%s: cannot reopen", tg->path);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    t->file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fopen(h5shuf__tempfile_hdf5_name(&tg->tf), H5F_ACC_RDWR, fapl);
    if (t->file < 0)
        h5shuf__hdf5_cause(cause, sizeof cause);
    H5Pclose(fapl);
    if (t->file < 0) {
        if (h5shuf__tempfile_lost(&tg->tf))
            return h5shuf__tempfile_fail_replaced(&tg->tf, tg->path, cx->err);
        h5shuf__fd_shortage(h5shuf__tempfile_hdf5_name(&tg->tf), cause, sizeof cause);
        return h5shuf__fail(cx->err, H5SHUF_EHDF5, "%s: cannot reopen: %s", tg->path, cause);
    }
    /* Bands cover whole chunks, which HDF5 writes without caching; no cache needed. */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 521, 0, 1.0);
    for (size_t d = 0; d < t->of->dsets->n + 2 && st == H5SHUF_OK; d++) {
        const char *path = dataset_path(t->of, d);
        if (!path)
            continue;
        t->dsets[d] = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Dopen2(t->file, path, dapl);
        if (t->dsets[d] < 0)
            st = h5shuf__fail(cx->err, H5SHUF_EHDF5, "%s:%s: cannot reopen: %s", tg->path, path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    H5Pclose(dapl);
    /* the writer stops at the target's end, or at its next checkpoint (t->unit_rows after its first row) */
    uint64_t end = tg->first + tg->rows;
    if (t->unit_rows) {
        const uint64_t next = tg->first + ((w->pos - tg->first) / t->unit_rows + 1) * t->unit_rows;
        end = next < end ? next : end;
    }
    if (st == H5SHUF_OK && h5shuf__writer_retarget(w, t->file, t->dsets, tg->first, end, tg->path) < 0)
        st = h5shuf__fail(cx->err, H5SHUF_EHDF5, "%s: cannot read its datasets' filters: %s", tg->path,
                          h5shuf__hdf5_cause(cause, sizeof cause));
    return st;
}

/* Start writing the open file's dirty pages back every WRITEBACK_BYTES of rows put, and at its start. */
static void writeback(struct h5shuf_targets *t, const struct h5shuf_writer *w)
{
    if (w->pos >= t->writeback_at) {
        const uint64_t rb = t->of->dsets->row_bytes;
        h5shuf__file_writeback(t->file);
        t->writeback_at = w->pos + (rb < WRITEBACK_BYTES ? WRITEBACK_BYTES / rb : 1);
    }
}

int h5shuf__targets_put(const struct h5shuf_ctx *cx, struct h5shuf_targets *t, struct h5shuf_writer *w,
                        const unsigned char *const *rows, uint64_t id)
{
    int st = w->pos == w->end ? next_target(cx, t, w) : H5SHUF_OK;
    if (st == H5SHUF_OK)
        writeback(t, w);
    return st == H5SHUF_OK ? h5shuf__writer_put(cx, w, rows, id) : st;
}

int h5shuf__targets_put_sorted(const struct h5shuf_ctx *cx, struct h5shuf_targets *t, struct h5shuf_writer *w,
                               unsigned char *const *base, const struct h5shuf_keyidx *pairs, uint64_t n,
                               const uint64_t *ids)
{
    int st = H5SHUF_OK;
    while (n > 0 && st == H5SHUF_OK) {
        if (w->pos == w->end && (st = next_target(cx, t, w)) != H5SHUF_OK)
            break;
        writeback(t, w);
        uint64_t m = w->end - w->pos < n ? w->end - w->pos : n;
        m = t->writeback_at - w->pos < m ? t->writeback_at - w->pos : m;
        st = h5shuf__writer_put_sorted(cx, w, base, pairs, m, ids);
        pairs += m;
        n -= m;
    }
    return st;
}

/*-*************************************
*  Placing and finishing
***************************************/

int h5shuf__targets_place(struct h5shuf_targets *t, int st, int force, mode_t mode, struct h5shuf_err *err)
{
    const size_t n = t->hi - t->lo;
    if (st != H5SHUF_OK || t->part || n == 0)
        return st;
    struct h5shuf_tempfile **tf = malloc(n * sizeof *tf);
    const char **out = malloc(n * sizeof *out);
    if (tf && out) {
        for (size_t k = 0; k < n; k++) {
            tf[k] = &t->v[t->lo + k].tf;
            out[k] = t->v[t->lo + k].path;
        }
        st = h5shuf__tempfile_place_all(tf, out, n, mode, force, &t->placed, err);
    } else {
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    free(tf);
    free(out);
    return st;
}

void h5shuf__targets_settle(struct h5shuf_targets *t, int keep)
{
    h5shuf__tempfile_settle(t->placed, keep);
    t->placed = NULL;
    for (size_t k = 0; k < t->n; k++) /* the discarded files, or (all in place) nothing; a kept state's stay */
        if (t->keep_files && !keep)
            h5shuf__tempfile_forget(&t->v[k].tf);
        else
            h5shuf__tempfile_remove(&t->v[k].tf);
}

int h5shuf__targets_finish(struct h5shuf_targets *t, int st, int force, mode_t mode, struct h5shuf_err *err)
{
    st = h5shuf__targets_place(t, st, force, mode, err);
    h5shuf__targets_settle(t, st == H5SHUF_OK);
    return st;
}

void h5shuf__targets_free(struct h5shuf_targets *t)
{
    h5shuf__tempfile_settle(t->placed, 0); /* (none unless a distributed run failed between its halves) */
    for (size_t k = 0; k < t->n; k++) {
        free(t->v[k].path);
        if (t->keep_files)
            h5shuf__tempfile_forget(&t->v[k].tf);
        else
            h5shuf__tempfile_remove(&t->v[k].tf);
        free(t->v[k].label);
    }
    free(t->v);
    free(t->dsets);
    memset(t, 0, sizeof *t);
    t->file = H5I_INVALID_HID;
}
