/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inputs.c - the input files: opened read-only, the shuffled datasets found by path (with the dimension
 * scales that go with them) or, in whole-file mode, discovered (discover.c), and each checked against
 * the first input's (datatype, row shape, filters that can be loaded: dscheck.c).
 *
 * Each input is opened, checked and described once, then closed (all but the first): HDF5 holds about
 * 0.6 MiB for an open file, so a job of thousands of inputs would otherwise hold gigabytes outside its
 * memory budget, and a descriptor each (the default limit is 1024).  Pass 1 then reads the inputs in
 * order, one open at a time; the direct path and a verify read rows of any input, through the few kept
 * open, least recently read closed first (h5shuf__input_dsets).  While an input is open to be checked,
 * where its rows are stored is noted when that is simple (inmap.c): pass 1 reads such an input with
 * pread() from a plain descriptor (h5shuf__input_fd) instead of opening it with HDF5 again, which cost
 * more than the read itself for inputs of a chunk or two.
 *
 * Rows are moved as raw bytes of the file datatype, so any fixed-size type works (big-endian floats,
 * compounds, strings, opaque...); variable-length sequences and strings are moved by vlen.c; references,
 * vlen data nested in other types and scalars are refused with a message naming the dataset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover.h"
#include "dscheck.h"
#include "error.h"
#include "fault.h"
#include "files.h"
#include "h5err.h"
#include "inmap.h"
#include "inputs.h"
#include "sample.h"
#include "vlen.h"

/* Chunk cache of an input dataset: one band of chunks (all chunks of one chunk-row along dim 0), so a
 * chunk that straddles two slabs is decompressed once; at most this many bytes. */
#define INPUT_CACHE_BYTES_MAX (16u << 20)

/*-*************************************
*  Opening files and datasets
***************************************/

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Open the file at path read-only; < 0 on failure, with its cause in cause[0..256) and *no_fd set when
 * it is that the process (or the system) has no file descriptor left. */
/* The access properties inputs are opened with: every object of the file closes with it.  The caller's
 * (H5Pclose); made once for a scan of thousands of inputs. */
static hid_t readonly_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    return fapl;
}

static hid_t open_readonly(const char *path, hid_t fapl, char *cause, int *no_fd)
{
    hid_t file = H5SHUF_FAULT() ? H5I_INVALID_HID : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (file < 0)
        h5shuf__hdf5_cause(cause, 256);
    *no_fd = file < 0 && h5shuf__fd_shortage(path, cause, 256) != NULL; /* HDF5: "unable to open file" */
    return file;
}

/* Open input in's file read-only again (in->file), after inputs_open checked it. */
static int reopen_file(struct h5shuf_input *in, struct h5shuf_err *err)
{
    char cause[256];
    int no_fd;
    hid_t fapl = readonly_fapl();
    in->file = open_readonly(h5shuf__input_path(in), fapl, cause, &no_fd);
    H5Pclose(fapl);
    if (in->file < 0)
        return h5shuf__fail(err, no_fd ? H5SHUF_EIO : H5SHUF_EHDF5, "%s: cannot open: %s", in->spec.file, cause);
    return H5SHUF_OK;
}

/* Open input in's file read-only (in->file) with fapl (readonly_fapl), refusing what is not a readable
 * HDF5 file by name; *st is what stat() said of it before. */
static int open_file(struct h5shuf_input *in, hid_t fapl, struct stat *st_out, struct h5shuf_err *err)
{
    struct stat st;
    char cause[256];
    int no_fd;
    const char *path = h5shuf__input_path(in);
    if (stat(path, &st) != 0)
        return h5shuf__fail(err, errno == ENOENT ? H5SHUF_ENOENT : H5SHUF_EIO, "%s: %s", in->spec.file,
                            strerror(errno));
    *st_out = st;
    in->dev = (uint64_t)st.st_dev;
    in->ino = (uint64_t)st.st_ino;
    const char *kind = h5shuf__not_regular(st.st_mode); /* before HDF5 opens it: a FIFO would wait for a writer */
    if (kind)
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: is %s, not an HDF5 file", in->spec.file, kind);
    if (access(path, R_OK) != 0)
        return h5shuf__fail(err, H5SHUF_EIO, "%s: %s", in->spec.file, strerror(errno));
    in->file = open_readonly(path, fapl, cause, &no_fd);
    if (in->file >= 0)
        return H5SHUF_OK;
    if (!no_fd && H5Fis_hdf5(path) <= 0) { /* (asked only now: it opens the file once more) */
        H5Eclear2(H5E_DEFAULT);
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: not an HDF5 file", in->spec.file);
    }
    return h5shuf__fail(err, no_fd ? H5SHUF_EIO : H5SHUF_EHDF5, "%s: cannot open: %s", in->spec.file, cause);
}

/* Chunk dim 0 of a dataset with creation properties dcpl, 0 when not chunked. */
static uint64_t chunk_dim0(hid_t dcpl)
{
    hsize_t cdims[H5S_MAX_RANK] = {0};
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims) > 0)
        return cdims[0];
    return 0;
}

/* Open dataset path of file with a chunk cache of one band of chunks of chunk_rows rows of row_bytes (at
 * most INPUT_CACHE_BYTES_MAX bytes), or HDF5's default cache when chunk_rows is 0. */
static hid_t open_cached(hid_t file, const char *path, uint64_t chunk_rows, uint64_t row_bytes)
{
    hid_t dapl = chunk_rows ? H5Pcreate(H5P_DATASET_ACCESS) : H5I_INVALID_HID;
    if (dapl >= 0) {
        uint64_t band = row_bytes > INPUT_CACHE_BYTES_MAX / chunk_rows ? INPUT_CACHE_BYTES_MAX : chunk_rows * row_bytes;
        H5Pset_chunk_cache(dapl, 12421, band, 1.0);
    }
    hid_t dset = H5Dopen2(file, path, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (dapl >= 0)
        H5Pclose(dapl);
    return dset;
}

/* Reopen *dset (path of file) with a chunk cache of one band of chunks, now that its layout is known. */
static void set_chunk_cache(hid_t file, const char *path, hid_t dcpl, uint64_t row_bytes, hid_t *dset)
{
    uint64_t rows = chunk_dim0(dcpl);
    hid_t again = rows ? open_cached(file, path, rows, row_bytes) : H5I_INVALID_HID;
    if (again >= 0) {
        H5Dclose(*dset);
        *dset = again;
    }
}

/* Open dataset path of input f as shuffled dataset d (its rows in *rows): the first input's describes
 * dsets->ds[d], a later input's is checked against it and added to its map b (inmap.h).  Its stored bytes
 * and chunk rows are counted (in->stored_bytes, ds[d].in_chunk_rows_max); the first input's gets its
 * chunk cache for reading. */
static int open_dataset(struct h5shuf_inputs *in, size_t f, size_t d, const char *path, struct h5shuf_datasets *dsets,
                        uint64_t *rows, struct h5shuf_inmap_build *b, struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    const char *file = inp->spec.file;
    char cause[256];
    hid_t dset = H5Dopen2(inp->file, path, H5P_DEFAULT);
    if (dset < 0) { /* why, by name: no such dataset, a dangling link, another kind of object, or HDF5's */
        h5shuf__hdf5_cause(cause, sizeof cause);
        int st = h5shuf__check_object(inp->file, inp->spec.file, path, err);
        return st != H5SHUF_OK ? st : h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", file, path, cause);
    }
    inp->dset[d] = dset;
    struct h5shuf_shape sh = {.ftype = H5I_INVALID_HID};
    hid_t dcpl = H5I_INVALID_HID;
    int st = h5shuf__read_shape(dset, file, path, &sh, err);
    if (st == H5SHUF_OK) {
        *rows = sh.dims[0];
        st = f == 0 ? h5shuf__describe(&dsets->ds[d], &sh, dset, file, path, &dsets->nvlen, err)
                    : h5shuf__check_same(&dsets->ds[d], &sh, file, path, in->v[0].spec.file, err);
    }
    if (st == H5SHUF_OK) {
        dcpl = H5Dget_create_plist(dset);
        st = h5shuf__check_filters(dcpl, file, path, err);
    }
    char *external = NULL;
    if (st == H5SHUF_OK && (st = h5shuf__check_storage(dcpl, file, path, in->allow_external, &external, err)) ==
                               H5SHUF_OK && external) {
        if (!in->external)
            in->external = external; /* the first, for the warning */
        else
            free(external);
    }
    if (st == H5SHUF_OK) {
        struct h5shuf_dsinfo *ds = &dsets->ds[d];
        uint64_t c = chunk_dim0(dcpl);
        inp->own_chunks |= c != ds->chunk_rows;
        c = c > 1 ? c : 1;
        ds->in_chunk_rows_max = c > ds->in_chunk_rows_max ? c : ds->in_chunk_rows_max;
        uint64_t mapped = /* (a mapped dataset's stored bytes are its chunks': no H5Dget_storage_size) */
            f > 0 ? h5shuf__inmap_add(b, dset, dcpl, sh.ftype, sh.rank, sh.dims, sh.row_bytes, &in->map_pl[d]) : 0;
        if (!ds->vlen) /* (a vlen dataset's payload is in the global heap: the plan estimates it) */
            in->stored_bytes += mapped ? mapped : H5Dget_storage_size(dset);
    }
    if (st == H5SHUF_OK && f == 0)
        set_chunk_cache(inp->file, path, dcpl, sh.row_bytes, &inp->dset[d]);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sh.ftype >= 0)
        H5Tclose(sh.ftype);
    return st;
}

/*-*************************************
*  Naming and opening an input
***************************************/

const char *h5shuf__where(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f, size_t d,
                          char *buf, size_t cap)
{
    const char *file = f < in->n ? in->v[f].spec.file : "?";
    if (d < dsets->n)
        snprintf(buf, cap, "%s:%s", file, dsets->ds[d].in_path);
    else
        snprintf(buf, cap, "%s", file);
    return buf;
}

/* The dimension scales of the shuffled datasets (discover.c) join the first input's paths (dim 0) or, in
 * dataset mode, the objects copied (in->extra); a later input that names its datasets names the same
 * scales. */
static int add_scales(struct h5shuf_inputs *in, struct h5shuf_err *err)
{
    struct h5shuf_spec *first = &in->v[0].spec;
    size_t named = first->npaths;
    int st = h5shuf__discover_scales(in->v[0].file, first->file, first, &in->extra, &in->nextra, err);
    for (size_t f = 1; f < in->n && st == H5SHUF_OK; f++) {
        struct h5shuf_spec *s = &in->v[f].spec;
        if (s->npaths != named || first->npaths == named)
            continue; /* (a count that differs is refused by name when the datasets are opened) */
        char **v = realloc(s->paths, first->npaths * sizeof *v);
        if (!v)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        s->paths = v;
        for (; s->npaths < first->npaths; s->npaths++)
            if (!(s->paths[s->npaths] = strdup(first->paths[s->npaths])))
                return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    return st;
}

/* The table of shuffled datasets from the first input's paths, each output path from out_spec's (when
 * it names them) or the input path; every id invalid before anything can fail. */
static int name_datasets(const struct h5shuf_spec *first, size_t named, const struct h5shuf_spec *out_spec,
                         struct h5shuf_datasets *dsets, struct h5shuf_err *err)
{
    dsets->ds = calloc(first->npaths, sizeof *dsets->ds);
    if (!dsets->ds)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    dsets->n = first->npaths;
    for (size_t d = 0; d < dsets->n; d++) {
        struct h5shuf_dsinfo *ds = &dsets->ds[d];
        ds->ftype = ds->dcpl = ds->out_dcpl = ds->mtype = ds->etype = ds->ltype = H5I_INVALID_HID;
    }
    for (size_t d = 0; d < dsets->n; d++) {
        dsets->ds[d].in_path = xstrdup(first->paths[d]);
        /* the output's names for the datasets named; a dimension scale that joined them keeps its own */
        const char *o = out_spec->npaths && d < named ? out_spec->paths[d] : first->paths[d];
        if (out_spec->npaths && out_spec->npaths != named)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: names %zu datasets for %zu shuffled datasets", out_spec->file,
                                out_spec->npaths, named);
        dsets->ds[d].out_path = xstrdup(o);
        if (!dsets->ds[d].in_path || !dsets->ds[d].out_path)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    return H5SHUF_OK;
}

/* Open the shuffled datasets of input f, all with the same rows (its rows); a later input's are added to
 * its map b. */
static int open_input(struct h5shuf_inputs *in, size_t f, struct h5shuf_datasets *dsets, struct h5shuf_inmap_build *b,
                      struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    const struct h5shuf_spec *first = &in->v[0].spec;
    const struct h5shuf_spec *paths = inp->spec.npaths ? &inp->spec : first;
    if (paths->npaths != dsets->n)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: names %zu datasets but %s names %zu", inp->spec.file,
                            paths->npaths, first->file, dsets->n);
    inp->dset = calloc(dsets->n, sizeof *inp->dset);
    if (!inp->dset)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t d = 0; d < dsets->n; d++)
        inp->dset[d] = H5I_INVALID_HID;
    for (size_t d = 0; d < dsets->n; d++) {
        uint64_t rows = 0;
        int st = open_dataset(in, f, d, paths->paths[d], dsets, &rows, b, err);
        if (st != H5SHUF_OK)
            return st;
        if (d == 0)
            inp->rows = inp->file_rows = rows;
        else if (rows != inp->rows)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: %s has %llu rows but %s has %llu", inp->spec.file,
                                paths->paths[d], (unsigned long long)rows, paths->paths[0],
                                (unsigned long long)inp->rows);
    }
    return H5SHUF_OK;
}

/* Estimate the payload of vlen rows from blocks of rows spread over all inputs (vlen.c), each input
 * opened when its block is read. */
static int estimate_vlen(const struct h5shuf_inputs *in, struct h5shuf_datasets *dsets, struct h5shuf_err *err)
{
    struct h5shuf_vlen_sample sm;
    const uint64_t rows = in->rows, b_rows = H5SHUF_VLEN_SAMPLE_BLOCK_ROWS;
    const uint64_t all = (uint64_t)H5SHUF_VLEN_SAMPLE_BLOCKS * b_rows;
    size_t nb = rows <= all ? (size_t)((rows + b_rows - 1) / b_rows) : H5SHUF_VLEN_SAMPLE_BLOCKS;
    int st = h5shuf__vlen_sample_begin(dsets, &sm, err);
    for (size_t b = 0; b < nb && st == H5SHUF_OK; b++) {
        /* block b starts at global row g: consecutive blocks when all rows are sampled, else spread */
        uint64_t g = rows <= all ? b * b_rows : (uint64_t)((h5shuf_u128)b * rows / H5SHUF_VLEN_SAMPLE_BLOCKS);
        size_t f = h5shuf__input_of(in, g);
        uint64_t start = g - in->v[f].first_row;
        struct h5shuf_vlen_block blk = {in->v[f].spec.file, h5shuf__input_dsets(in, dsets, f, err), start,
                                        in->v[f].rows - start < b_rows ? in->v[f].rows - start : b_rows};
        st = blk.dset ? h5shuf__vlen_sample_add(dsets, &sm, &blk, err) : err->status;
    }
    h5shuf__vlen_estimate(dsets, &sm, st);
    return st;
}

/* Close input inp's datasets (nds of them) and file, and its descriptor for pread. */
static void close_input(struct h5shuf_input *inp, size_t nds)
{
    if (inp->fd >= 0)
        close(inp->fd);
    inp->fd = -1;
    for (size_t d = 0; inp->dset && d < nds; d++) {
        if (inp->dset[d] >= 0)
            H5Dclose(inp->dset[d]);
        inp->dset[d] = H5I_INVALID_HID;
    }
    if (inp->file >= 0)
        H5Fclose(inp->file);
    inp->file = H5I_INVALID_HID;
}

/* Userblock bytes of an open file (opened by HDF5's default driver, sec2, whose handle is a descriptor);
 * 1 when HDF5 cannot say (then the file is not mapped). */
static hsize_t userblock_of(hid_t file)
{
    /* HDF5's signature at offset 0 (the format specification's superblock: a userblock moves it to 512,
     * 1024, ...) says "none" without a copy of the creation properties (5% of a scan of 5000 inputs). */
    static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    void *handle = NULL;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle &&
        pread(*(const int *)handle, head, sizeof head, 0) == (ssize_t)sizeof head && !memcmp(head, signature, 8))
        return 0;
    H5Eclear2(H5E_DEFAULT);
    hsize_t ub = 1;
    hid_t fcpl = H5Fget_create_plist(file);
    if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0)
        ub = 1;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Eclear2(H5E_DEFAULT);
    return ub;
}

/* Open the datasets of a later input f (its file open, stat() of it *st_file) and map where its rows are
 * stored when that is simple (inp->map, inmap.h). */
static int scan_input(struct h5shuf_inputs *in, size_t f, struct h5shuf_datasets *dsets, const struct stat *st_file,
                      struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    struct h5shuf_inmap_build b;
    if (h5shuf__inmap_begin(&b, dsets->n, st_file, userblock_of(inp->file)) != H5SHUF_OK)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    int st = open_input(in, f, dsets, &b, err);
    if (st != H5SHUF_OK) {
        h5shuf__inmap_abandon(&b);
        return st;
    }
    if (h5shuf__inmap_end(&b, &inp->map) != H5SHUF_OK)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    return H5SHUF_OK;
}

/*-*************************************
*  Drawing rows and opening the inputs
***************************************/

/* Input f's rows when it is the sampled copy of a weighted input: round(share x its file's rows), the same
 * whatever the seed (which rows, drawn by h5shuf__inputs_draw, depend on it). */
static void sample_rows(struct h5shuf_input *inp)
{
    if (inp->frac_den)
        inp->rows = h5shuf__sample_size(inp->file_rows, inp->frac_num, inp->frac_den);
}

int h5shuf__inputs_draw(struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, uint64_t seed,
                        struct h5shuf_err *err)
{
    char where[512];
    for (size_t f = 0; f < in->n; f++) {
        struct h5shuf_input *inp = &in->v[f];
        if (!inp->frac_den)
            continue;
        if (inp->sample)
            h5shuf__sample_free(inp->sample);
        else if (!(inp->sample = calloc(1, sizeof *inp->sample)))
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        if (H5SHUF_FAULT() || h5shuf__sample_make(inp->sample, seed, inp->src, inp->file_rows, inp->rows) != 0)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory for the sample of its weight (%llu rows)",
                                h5shuf__where(in, dsets, f, 0, where, sizeof where), (unsigned long long)inp->file_rows);
    }
    return H5SHUF_OK;
}

/* The source index's datatype with weights: a packed compound of "input" (uint16, or uint32 past 65535
 * inputs), "copy" (uint16) and "row" (uint64: the input's row), little-endian.  < 0 on failure. */
static hid_t source_type(size_t nsrc)
{
    const size_t isz = nsrc > UINT16_MAX ? 4 : 2;
    hid_t t = H5Tcreate(H5T_COMPOUND, isz + 2 + 8);
    if (t >= 0 && (H5Tinsert(t, "input", 0, isz == 4 ? H5T_STD_U32LE : H5T_STD_U16LE) < 0 ||
                   H5Tinsert(t, "copy", isz, H5T_STD_U16LE) < 0 || H5Tinsert(t, "row", isz + 2, H5T_STD_U64LE) < 0)) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* h5shuf__inputs_open, every file opened with fapl. */
static int inputs_open(struct h5shuf_inputs *in, const struct h5shuf_spec *out_spec, struct h5shuf_datasets *dsets,
                       hid_t fapl, struct h5shuf_err *err)
{
    int st;
    char where[512];
    in->source_type = H5I_INVALID_HID;
    in->open = malloc(H5SHUF_INPUTS_OPEN_MAX * sizeof *in->open);
    if (!in->open)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    for (size_t k = 0; k < H5SHUF_INPUTS_OPEN_MAX; k++)
        in->open[k] = SIZE_MAX;
    for (size_t f = 0; f < in->n; f++) {
        in->v[f].file = H5I_INVALID_HID;
        in->v[f].fd = -1;
    }
    struct h5shuf_input *first = &in->v[0];
    struct stat st_file;
    if ((st = open_file(first, fapl, &st_file, err)) != H5SHUF_OK)
        return st;
    in->whole_file = first->spec.npaths == 0;
    size_t named = first->spec.npaths;
    if (in->whole_file && (st = h5shuf__discover(first->file, first->spec.file, &first->spec, err)) != H5SHUF_OK)
        return st;
    if ((st = add_scales(in, err)) != H5SHUF_OK) /* (whole-file mode: a further scale of the rows' dim 0) */
        return st;
    if ((st = name_datasets(&first->spec, in->whole_file ? first->spec.npaths : named, out_spec, dsets, err)) != H5SHUF_OK)
        return st;
    if (!(in->map_pl = calloc(dsets->n ? dsets->n : 1, sizeof *in->map_pl)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    in->rows = 0;
    in->stored_bytes = 0;
    dsets->row_bytes = 0;
    for (size_t f = 0; f < in->n; f++) { /* each input open only while it is checked (but the first) */
        if (f > 0 && (st = open_file(&in->v[f], fapl, &st_file, err)) != H5SHUF_OK)
            return st;
        if ((st = f > 0 ? scan_input(in, f, dsets, &st_file, err) : open_input(in, f, dsets, NULL, err)) != H5SHUF_OK)
            return st;
        if (f > 0)
            close_input(&in->v[f], dsets->n);
        sample_rows(&in->v[f]);
        in->v[f].first_row = in->rows;
        if (in->rows + in->v[f].rows < in->rows)
            return h5shuf__fail(err, H5SHUF_EINVAL, "%s: too many rows", h5shuf__where(in, dsets, f, 0, where, sizeof where));
        in->rows += in->v[f].rows;
    }
    h5shuf__vlen_limit_cache(dsets, first->file);
    in->weighted = in->n != in->nsrc;
    for (size_t f = 0; f < in->n; f++)
        in->weighted |= in->v[f].frac_den != 0;
    if (in->weighted && (in->source_type = source_type(in->nsrc)) < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "cannot make the source index's datatype");
    if (dsets->nvlen && (st = estimate_vlen(in, dsets, err)) != H5SHUF_OK)
        return st;
    for (size_t d = 0; d < dsets->n; d++) {
        if (dsets->row_bytes + dsets->ds[d].plan_row_bytes < dsets->row_bytes)
            return h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: rows of more than 2^64 bytes", first->spec.file);
        dsets->row_bytes += dsets->ds[d].plan_row_bytes;
    }
    if (dsets->row_bytes && in->rows > UINT64_MAX / dsets->row_bytes)
        return h5shuf__fail(err, H5SHUF_EUNSUPPORTED, "%s: more than 2^64 bytes of rows", first->spec.file);
    return H5SHUF_OK;
}

int h5shuf__inputs_open(struct h5shuf_inputs *in, const struct h5shuf_spec *out_spec, struct h5shuf_datasets *dsets,
                        struct h5shuf_err *err)
{
    hid_t fapl = readonly_fapl();
    if (fapl < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "cannot make a file access property list");
    int st = inputs_open(in, out_spec, dsets, fapl, err);
    H5Pclose(fapl);
    return st;
}

/*-*************************************
*  Reopening, touching and closing
***************************************/

/* dims[0] of dset in *rows; < 0 on failure, its cause in cause[0..256). */
static int dim0_of(hid_t dset, uint64_t *rows, char *cause)
{
    hsize_t dims[H5S_MAX_RANK] = {0};
    hid_t space = H5Dget_space(dset);
    int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
    if (rank < 0)
        h5shuf__hdf5_cause(cause, 256); /* before H5Sclose clears the stack */
    else if (rank == 0)
        snprintf(cause, 256, "no dimensions");
    if (space >= 0)
        H5Sclose(space);
    *rows = dims[0];
    return rank < 1 ? -1 : 0;
}

/* Open the datasets of input f (its file open) for reading, each with its chunk cache (sized for the
 * first input's chunks, or for its own when they differ: opened twice); their rows must still be the ones
 * inputs_open counted. */
static int reopen_datasets(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                           struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    const struct h5shuf_spec *paths = inp->spec.npaths ? &inp->spec : &in->v[0].spec;
    char cause[256];
    for (size_t d = 0; d < dsets->n; d++) {
        const char *path = paths->paths[d];
        const struct h5shuf_dsinfo *ds = &dsets->ds[d];
        inp->dset[d] = H5SHUF_FAULT() ? H5I_INVALID_HID : open_cached(inp->file, path, ds->chunk_rows, ds->row_bytes);
        hid_t dcpl = H5I_INVALID_HID;
        if (inp->dset[d] >= 0 && inp->own_chunks && (dcpl = H5Dget_create_plist(inp->dset[d])) >= 0) {
            set_chunk_cache(inp->file, path, dcpl, ds->row_bytes, &inp->dset[d]);
            H5Pclose(dcpl);
        }
        uint64_t rows = 0;
        if (inp->dset[d] < 0 || dim0_of(inp->dset[d], &rows, cause) < 0)
            return h5shuf__fail(err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", inp->spec.file, path,
                                inp->dset[d] < 0 ? h5shuf__hdf5_cause(cause, sizeof cause) : cause);
        if (rows != inp->file_rows)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s:%s: changed while h5shuf ran (%llu rows, %llu before)",
                                inp->spec.file, path, (unsigned long long)rows, (unsigned long long)inp->file_rows);
    }
    h5shuf__vlen_limit_cache(dsets, inp->file);
    return H5SHUF_OK;
}

/* Make input f (> 0) the most recently read of the open ones (in->open), closing the least recently read
 * first when H5SHUF_INPUTS_OPEN_MAX others are open; what is open of it stays open. */
static void touch_input(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f)
{
    size_t *open = in->open, n = 0, k;
    while (n < H5SHUF_INPUTS_OPEN_MAX && open[n] != SIZE_MAX)
        n++;
    for (k = 0; k < n && open[k] != f; k++)
        ;
    if (k == n) { /* not listed: close the least recently read when there is no room */
        if (n == H5SHUF_INPUTS_OPEN_MAX) {
            close_input(&in->v[open[0]], dsets->n);
            memmove(open, open + 1, --n * sizeof *open);
            open[n] = SIZE_MAX;
        }
        k = n++;
    }
    memmove(open + k, open + k + 1, (n - 1 - k) * sizeof *open); /* the most recently read last */
    open[n - 1] = f;
}

const hid_t *h5shuf__input_dsets(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                                 struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    if (f == 0) /* open from inputs_open to inputs_close */
        return inp->dset;
    touch_input(in, dsets, f);
    if (inp->file < 0 &&
        (reopen_file(inp, err) != H5SHUF_OK || reopen_datasets(in, dsets, f, err) != H5SHUF_OK)) {
        close_input(inp, dsets->n); /* (listed, with nothing open: closed again harmlessly) */
        return NULL;
    }
    return inp->dset;
}

int h5shuf__input_fd(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets, size_t f,
                     struct h5shuf_err *err)
{
    struct h5shuf_input *inp = &in->v[f];
    char where[512], cause[256];
    touch_input(in, dsets, f);
    if (inp->fd >= 0)
        return inp->fd;
    const char *path = h5shuf__input_path(inp);
    inp->fd = H5SHUF_FAULT() ? (errno = EIO, -1) : open(path, O_RDONLY | O_CLOEXEC);
    if (inp->fd < 0) {
        int e = errno;
        const char *why = e == EMFILE || e == ENFILE ? h5shuf__fd_shortage(path, cause, sizeof cause) : NULL;
        H5Eclear2(H5E_DEFAULT); /* (an injected fault's) */
        h5shuf__fail(err, e == ENOENT ? H5SHUF_ENOENT : H5SHUF_EIO, "%s: cannot open: %s", inp->spec.file,
                     why ? why : strerror(e));
        return -1;
    }
    int same = H5SHUF_FAULT() ? (errno = EIO, -1) : h5shuf__inmap_same_file(inp->map, inp->fd);
    if (same == 1)
        return inp->fd;
    int e = errno;
    H5Eclear2(H5E_DEFAULT);
    close(inp->fd);
    inp->fd = -1;
    h5shuf__where(in, dsets, f, 0, where, sizeof where);
    if (same < 0)
        h5shuf__fail(err, H5SHUF_EIO, "%s: %s", where, strerror(e));
    else
        h5shuf__fail(err, H5SHUF_EMISMATCH,
                     "%s: changed while h5shuf ran (its size, inode or modification time differ from when it was "
                     "scanned)",
                     where);
    return -1;
}

void h5shuf__inputs_close(struct h5shuf_inputs *in, struct h5shuf_datasets *dsets)
{
    /* The datasets' types and property lists first (h5shuf__datasets_free). */
    size_t nds = dsets->n;
    h5shuf__datasets_free(dsets);
    for (size_t f = 0; f < in->n; f++) {
        close_input(&in->v[f], nds);
        free(in->v[f].dset);
        in->v[f].dset = NULL;
        h5shuf__inmap_free(in->v[f].map);
        in->v[f].map = NULL;
    }
    free(in->open);
    in->open = NULL;
    if (in->source_type > 0) /* (0: never opened) */
        H5Tclose(in->source_type);
    in->source_type = H5I_INVALID_HID;
    free(in->map_pl);
    in->map_pl = NULL;
}

void h5shuf__inputs_free(struct h5shuf_inputs *in)
{
    for (size_t f = 0; f < in->n; f++) {
        h5shuf__spec_clear(&in->v[f].spec);
        free(in->v[f].open_path);
        free(in->v[f].weight);
        if (in->v[f].sample)
            h5shuf__sample_free(in->v[f].sample);
        free(in->v[f].sample);
    }
    free(in->v);
    for (size_t k = 0; k < in->nextra; k++)
        free(in->extra[k]);
    free(in->extra);
    free(in->external);
    memset(in, 0, sizeof *in);
}

/*-*************************************
*  Rows of the inputs
***************************************/

size_t h5shuf__input_of(const struct h5shuf_inputs *in, uint64_t id)
{
    size_t lo = 0, hi = in->n; /* the last input whose first_row <= id */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->v[mid].first_row <= id)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint64_t h5shuf__input_file_row(const struct h5shuf_inputs *in, size_t f, uint64_t r)
{
    return in->v[f].sample ? h5shuf__sample_select(in->v[f].sample, r) : r;
}

/*-*************************************
*  Appending inputs
***************************************/

/* The weight after the last '@' of text, when it is one (h5shuf__decimal_parse): q whole copies and the
 * fraction num / 10^18, *at the '@'.  1 when it is one, 0 when text has none, -1 when its fraction has more
 * than 18 digits that matter, -2 when it makes 65536 copies or more. */
static int parse_weight(const char *text, size_t *at, uint64_t *q, uint64_t *num)
{
    const char *a = strrchr(text, '@');
    if (!a || !a[1])
        return 0;
    int r = h5shuf__decimal_parse(a + 1, strlen(a + 1), 18, 65535, q, num);
    if (r != 0)
        *at = (size_t)(a - text);
    return r;
}

/* Append one entry: copy c of input src, parsed from text[0 .. len). */
static int append_entry(struct h5shuf_inputs *in, const char *text, size_t len, uint32_t c, struct h5shuf_err *err)
{
    struct h5shuf_input *v = realloc(in->v, (in->n + 1) * sizeof *v);
    if (!v)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    in->v = v;
    struct h5shuf_input *inp = &v[in->n];
    memset(inp, 0, sizeof *inp);
    inp->file = H5I_INVALID_HID;
    inp->fd = -1;
    inp->src = in->nsrc;
    inp->copy = c;
    char *t = strndup(text, len);
    if (!t)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    int st = h5shuf__spec_parse(t, &inp->spec, err);
    free(t);
    if (st == H5SHUF_OK)
        in->n++;
    return st;
}

int h5shuf__inputs_append(struct h5shuf_inputs *in, const char *spec, struct h5shuf_err *err)
{
    if (!spec || !*spec)
        return h5shuf__fail(err, H5SHUF_EINVAL, "empty file name");
    size_t at = strlen(spec);
    uint64_t q = 1, num = 0;
    int w = parse_weight(spec, &at, &q, &num);
    if (w == -1)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: a weight has at most 18 digits after the point", spec);
    uint64_t den = num ? UINT64_C(1000000000000000000) : 0;
    if (w > 0 && q == 0 && den == 0) /* @0: one copy holding a sample of no rows */
        den = 1;
    if (w == -2 || (w > 0 && q + (den != 0) > 65535))
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: a weight makes at most 65535 copies", spec);
    const size_t first = in->n;
    const uint32_t copies = (uint32_t)(q + (den != 0));
    int st = H5SHUF_OK;
    for (uint32_t c = 0; c < copies && st == H5SHUF_OK; c++)
        st = append_entry(in, spec, at, c, err);
    if (st == H5SHUF_OK && den) {
        in->v[in->n - 1].frac_num = num;
        in->v[in->n - 1].frac_den = den;
    }
    if (st == H5SHUF_OK && w > 0 && !(in->v[first].weight = strdup(spec + at + 1)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (st != H5SHUF_OK) { /* none of its entries stays */
        for (size_t f = first; f < in->n; f++) {
            h5shuf__spec_clear(&in->v[f].spec);
            free(in->v[f].weight);
        }
        in->n = first;
        return st;
    }
    in->nsrc++;
    return H5SHUF_OK;
}
