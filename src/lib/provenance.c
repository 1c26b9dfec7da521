/*
 * provenance.c - what an output file says about itself, on its root group: the tool's version, the
 * seed, the inputs, the key function, the index datasets' paths; and, for one of several outputs
 * (shards, splits, a head), which range of the output order it holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "job.h"
#include "provenance.h"
#include "targets.h"

int h5shuf__output_provenance(h5shuf_job *job, hid_t out)
{
    char cause[256];
    size_t len = 1;
    for (size_t f = 0; f < job->ninputs; f++) {
        len += strlen(job->inputs[f].spec.file) + 2;
        for (size_t d = 0; d < job->nds; d++)
            len += strlen(job->ds[d].in_path) + 1;
    }
    char *inputs = malloc(len);
    if (!inputs)
        return h5shuf__fail(&job->err, H5SHUF_ENOMEM, "out of memory");
    char *p = inputs;
    for (size_t f = 0; f < job->ninputs; f++) {
        const struct h5shuf_spec *paths = job->inputs[f].spec.npaths ? &job->inputs[f].spec : &job->inputs[0].spec;
        p += sprintf(p, "%s%s", f ? "\n" : "", job->inputs[f].spec.file);
        for (size_t d = 0; d < job->nds; d++)
            p += sprintf(p, "%c%s", d ? ',' : ':', paths->paths[d]);
    }
    hid_t root = H5Gopen2(out, "/", H5P_DEFAULT);
    hid_t s = H5Screate(H5S_SCALAR);
    herr_t r = root < 0 || s < 0 ? -1 : 0;
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_version", H5SHUF_VERSION_STRING);
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_inputs", inputs);
    if (r >= 0 && job->index_path)
        r = h5shuf__put_string_attr(root, "h5shuf_index", job->index_path);
    if (r >= 0 && job->source_index_path)
        r = h5shuf__put_string_attr(root, "h5shuf_source_index", job->source_index_path);
    if (r >= 0)
        r = h5shuf__put_string_attr(root, "h5shuf_key",
                            "Philox4x64-10 word 0, counter (i,0,0,0), key (seed,0); rows sorted by (key, i)");
    if (r >= 0) {
        if (H5Aexists(root, "h5shuf_seed") > 0)
            H5Adelete(root, "h5shuf_seed");
        hid_t a = H5Acreate2(root, "h5shuf_seed", H5T_STD_U64LE, s, H5P_DEFAULT, H5P_DEFAULT);
        r = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_UINT64, &job->seed);
        if (a >= 0)
            H5Aclose(a);
    }
    if (s >= 0)
        H5Sclose(s);
    if (root >= 0)
        H5Gclose(root);
    free(inputs);
    if (r < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot write provenance attributes: %s", job->out_name,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}

/* The range attributes of a target in a run with several outputs. */
int h5shuf__target_attrs(h5shuf_job *job, size_t k, hid_t file)
{
    const struct h5shuf_target *t = &job->targets[k];
    if (job->ntargets == 1 && !job->opts.shards && job->out_rows == job->rows)
        return H5SHUF_OK; /* the single whole output: nothing to add */
    char cause[256];
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    uint64_t range[2] = {t->first, t->first + t->rows}, index = k, count = job->ntargets;
    herr_t r = root < 0 ? -1 : h5shuf__put_u64_attr(root, "h5shuf_row_range", range, 2);
    if (r >= 0)
        r = h5shuf__put_u64_attr(root, "h5shuf_output_rows", &job->out_rows, 1);
    if (r >= 0 && job->opts.shards) {
        r = h5shuf__put_u64_attr(root, "h5shuf_shard", &index, 1);
        if (r >= 0)
            r = h5shuf__put_u64_attr(root, "h5shuf_shards", &count, 1);
    } else if (r >= 0 && t->label) {
        r = h5shuf__put_string_attr(root, "h5shuf_split", t->label);
        if (r >= 0)
            r = h5shuf__put_string_attr(root, "h5shuf_splits", job->split);
    }
    if (root >= 0)
        H5Gclose(root);
    if (r < 0)
        return h5shuf__fail(&job->err, H5SHUF_EHDF5, "%s: cannot write the range attributes: %s", t->path,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}
