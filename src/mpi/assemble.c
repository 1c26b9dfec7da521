/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * assemble.c - the single output made whole from its parts (assemble.h): every process but 0 wrote its
 * range of the output into a part file, chunked and filtered as the output; it sends the part's stored
 * chunks to process 0, which writes them into the output with H5Dwrite_chunk.  Each chunk is thus
 * encoded once, by the process that made it, and is byte for byte the serial run's.
 */
#include "assemble.h"

#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "checkpoint.h"
#include "fault.h"
#include "h5err.h"

enum { TAG_BLOCK = 200, TAG_BLOCK_DATA = 201 };

static const char *row_dataset_path(const h5shuf_job *job, size_t d)
{
    return d < job->dsets.n ? job->dsets.ds[d].out_path : d == job->dsets.n ? job->index_path : job->source_index_path;
}

static hid_t row_dataset_type(const h5shuf_job *job, size_t d)
{
    return d < job->dsets.n ? job->dsets.ds[d].ftype : d == job->dsets.n ? H5T_STD_U64LE : h5shuf__source_type(&job->in);
}

/* Open the row datasets of file (named name) into dsets[0..n+2) (invalid where there is none). */
static int open_row_datasets(h5shuf_job *job, hid_t file, const char *name, hid_t *dsets)
{
    char cause[256];
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        dsets[d] = H5I_INVALID_HID;
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        if (row_dataset_path(job, d) && (dsets[d] = H5Dopen2(file, row_dataset_path(job, d), H5P_DEFAULT)) < 0)
            return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s:%s: cannot open: %s", name, row_dataset_path(job, d),
                                h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

static void close_row_datasets(const h5shuf_job *job, hid_t *dsets)
{
    for (size_t d = 0; d < job->dsets.n + 2; d++)
        if (dsets[d] >= 0)
            H5Dclose(dsets[d]);
}

/* Process q > 0: send every stored block of its part (closed, its temporary file job->out.v[0].tf) to process 0,
 * then an end mark (*sent grows by the bytes sent). */
static int send_part(h5shuf_job *job, struct h5shuf_comm *c, uint64_t *sent)
{
    char cause[256];
    struct h5shuf_tempfile *tf = &job->out.v[0].tf;
    const char *path = tf->path;
    if (h5shuf__tempfile_unpark(tf, job->out.v[0].path, &job->err) != H5SHUF_OK)
        return job->err.status;
    hid_t *dsets = malloc((job->dsets.n + 2) * sizeof *dsets);
    if (!dsets)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    hid_t file = H5Fopen(h5shuf__tempfile_hdf5_name(tf), H5F_ACC_RDONLY, H5P_DEFAULT);
    int st = file < 0 ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot reopen the part: %s", path,
                                     h5shuf__hdf5_cause(cause, sizeof cause))
                      : open_row_datasets(job, file, path, dsets);
    unsigned char *buf = NULL;
    uint64_t cap = 0;
    struct h5shuf_block b;
    for (size_t d = 0; st == H5SHUF_OK && d < job->dsets.n + 2; d++) {
        struct h5shuf_blocks it;
        if (dsets[d] < 0)
            continue;
        int more = h5shuf__blocks_open(&it, dsets[d], row_dataset_type(job, d)) < 0 ? -1 : 1;
        while (st == H5SHUF_OK && (more = more < 0 ? more : h5shuf__blocks_next(&it, &b)) > 0) {
            b.dataset = (uint32_t)d;
            if (b.bytes > cap) {
                free(buf);
                cap = b.bytes;
                if (!(buf = malloc(cap)))
                    st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a chunk of %llu bytes",
                                      (unsigned long long)cap);
            }
            if (st == H5SHUF_OK && h5shuf__blocks_read(&it, &b, buf) < 0)
                more = -1;
            if (st == H5SHUF_OK && more > 0)
                st = h5shuf_comm_sendrecv(c, &b, sizeof b, 0, NULL, 0, -1, TAG_BLOCK, &job->err);
            if (st == H5SHUF_OK && more > 0)
                st = h5shuf_comm_sendrecv(c, buf, b.bytes, 0, NULL, 0, -1, TAG_BLOCK_DATA, &job->err);
            *sent += more > 0 ? sizeof b + b.bytes : 0;
            H5SHUF_KILL_POINT();
        }
        if (st == H5SHUF_OK && more < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot read the part: %s", path, row_dataset_path(job, d),
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    memset(&b, 0, sizeof b);
    b.bytes = UINT64_MAX; /* the end */
    if (st == H5SHUF_OK)
        st = h5shuf_comm_sendrecv(c, &b, sizeof b, 0, NULL, 0, -1, TAG_BLOCK, &job->err);
    free(buf);
    if (file >= 0) {
        close_row_datasets(job, dsets);
        H5Fclose(file);
    }
    free(dsets);
    return st;
}

/* Process 0: receive the blocks of process q's part (its rows start at output row first) and write them
 * into the output's row datasets dsets (named name). */
static int receive_part(h5shuf_job *job, struct h5shuf_comm *c, int q, uint64_t first, const hid_t *dsets,
                        const char *name)
{
    char cause[256];
    unsigned char *buf = NULL;
    uint64_t cap = 0;
    struct h5shuf_block b;
    int st = H5SHUF_OK;
    for (;;) {
        st = h5shuf_comm_sendrecv(c, NULL, 0, -1, &b, sizeof b, q, TAG_BLOCK, &job->err);
        if (st != H5SHUF_OK || b.bytes == UINT64_MAX)
            break;
        if (b.dataset >= job->dsets.n + 2 || dsets[b.dataset] < 0) {
            st = h5shuf__fail(&job->err, H5SHUF_EINTERNAL, "rank %d sent a block of no dataset", q);
            break;
        }
        if (b.bytes > cap) {
            free(buf);
            cap = b.bytes;
            if (!(buf = malloc(cap))) {
                st = h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory for a chunk of %llu bytes", (unsigned long long)cap);
                break;
            }
        }
        st = h5shuf_comm_sendrecv(c, NULL, 0, -1, buf, b.bytes, q, TAG_BLOCK_DATA, &job->err);
        H5SHUF_KILL_POINT();
        if (st == H5SHUF_OK && h5shuf__block_write(dsets[b.dataset], row_dataset_type(job, b.dataset), &b, first, buf) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s:%s: cannot write rows of rank %d: %s", name,
                              row_dataset_path(job, b.dataset), q, h5shuf__hdf5_cause(cause, sizeof cause));
        if (st != H5SHUF_OK)
            break;
    }
    free(buf);
    return st;
}

int h5shuf_dist_assemble(h5shuf_job *job, struct h5shuf_comm *c, const uint64_t *a, const uint64_t *b, uint64_t *sent)
{
    if (c->rank != 0)
        return a[c->rank] < b[c->rank] ? send_part(job, c, sent) : H5SHUF_OK;
    char cause[256];
    struct h5shuf_target *tg = &job->out.v[0];
    if (h5shuf__tempfile_unpark(&tg->tf, tg->path, &job->err) != H5SHUF_OK)
        return job->err.status;
    hid_t *dsets = malloc((job->dsets.n + 2) * sizeof *dsets);
    if (!dsets)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    /* a resumable run writes it through its checkpoint driver: a kill leaves it at its last commit */
    hid_t fapl = h5shuf__ckpt_target_fapl(job, 0);
    hid_t file = fapl < 0 ? H5I_INVALID_HID : H5Fopen(h5shuf__tempfile_hdf5_name(&tg->tf), H5F_ACC_RDWR, fapl);
    int st = fapl < 0    ? job->err.status
             : file < 0 ? h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot reopen: %s", tg->path,
                                        h5shuf__hdf5_cause(cause, sizeof cause))
                        : open_row_datasets(job, file, tg->path, dsets);
    if (fapl >= 0)
        H5Pclose(fapl);
    for (int q = 1; q < c->size && st == H5SHUF_OK; q++)
        if (a[q] < b[q])
            st = receive_part(job, c, q, a[q], dsets, tg->path);
    if (file >= 0) {
        close_row_datasets(job, dsets);
        if (st != H5SHUF_OK)
            h5shuf__ckpt_target_discard(job);
        if (st == H5SHUF_OK && H5Fflush(file, H5F_SCOPE_LOCAL) < 0)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", tg->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
        if (H5Fclose(file) < 0 && st == H5SHUF_OK)
            st = h5shuf__fail(&job->err, H5SHUF_EIO, "%s: cannot finish writing: %s", tg->path,
                              h5shuf__hdf5_cause(cause, sizeof cause));
    }
    if (st == H5SHUF_OK)
        st = h5shuf__ckpt_target_assembled(job, 0);
    free(dsets);
    return st;
}
