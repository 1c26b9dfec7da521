/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * provenance.c - what an output file says about itself, on its root group: the tool's version, the
 * seed, the inputs and their datasets, the key function and the index datasets' paths, so that any run
 * can be repeated and checked (h5shuf verify reads the seed and the index back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "fault.h"
#include "h5err.h"
#include "provenance.h"

/* "FILE:/a,/b" (with "@W" when weighted) of every input, one a line (caller frees); NULL when out of memory. */
static char *inputs_text(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets)
{
    size_t len = 1;
    for (size_t f = 0; f < in->n; f++) { /* (each input's own paths: they may differ from the first's) */
        const struct h5shuf_spec *paths = in->v[f].spec.npaths ? &in->v[f].spec : &in->v[0].spec;
        len += strlen(in->v[f].spec.file) + 2 + (in->v[f].weight ? strlen(in->v[f].weight) + 1 : 0);
        for (size_t d = 0; d < dsets->n; d++)
            len += strlen(paths->paths[d]) + 1;
    }
    char *text = malloc(len);
    if (!text)
        return NULL;
    char *p = text;
    for (size_t f = 0; f < in->n; f++) {
        const struct h5shuf_spec *paths = in->v[f].spec.npaths ? &in->v[f].spec : &in->v[0].spec;
        if (in->v[f].copy > 0) /* a weighted input once, with its weight */
            continue;
        p += sprintf(p, "%s%s", f ? "\n" : "", in->v[f].spec.file);
        for (size_t d = 0; d < dsets->n; d++)
            p += sprintf(p, "%c%s", d ? ',' : ':', paths->paths[d]);
        if (in->v[f].weight)
            p += sprintf(p, "@%s", in->v[f].weight);
    }
    return text;
}

static size_t lossy_count(const struct h5shuf_datasets *dsets)
{
    size_t n = 0;
    for (size_t d = 0; d < dsets->n; d++)
        n += dsets->ds[d].lossy != 0;
    return n;
}

/* "/x: ZFP (32013)" of each dataset re-encoded through a lossy filter (--allow-lossy), one a line; NULL when
 * there is none (or no memory). */
static char *lossy_text(const struct h5shuf_datasets *dsets)
{
    if (!lossy_count(dsets))
        return NULL;
    size_t len = 1;
    for (size_t d = 0; d < dsets->n; d++)
        len += dsets->ds[d].lossy ? strlen(dsets->ds[d].out_path) + sizeof dsets->ds[d].lossy_name + 32 : 0;
    char *text = malloc(len), *p = text;
    for (size_t d = 0; text && d < dsets->n; d++)
        if (dsets->ds[d].lossy)
            p += sprintf(p, "%s%s: %s (%d)", p == text ? "" : "\n", dsets->ds[d].out_path, dsets->ds[d].lossy_name,
                         dsets->ds[d].lossy);
    return text;
}

/* Remove root attribute name, when there is one: the whole-file form copies the input's root attributes,
 * and an input that is itself an output of h5shuf brings its provenance, which would describe this
 * output wrongly (an h5shuf_index naming a dataset of the input's order, not this one's). */
static herr_t drop(hid_t root, const char *name)
{
    htri_t there = H5Aexists(root, name);
    return there < 0 ? -1 : there > 0 ? H5Adelete(root, name) : 0;
}

int h5shuf__output_provenance(const struct h5shuf_outfile *of, hid_t out, const char *ofile, struct h5shuf_err *err)
{
    char cause[256];
    char *inputs = inputs_text(of->inputs, of->dsets), *lossy = lossy_text(of->dsets);
    if (!inputs || (!lossy && lossy_count(of->dsets))) {
        free(inputs);
        free(lossy);
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    }
    hid_t root = H5Gopen2(out, "/", H5P_DEFAULT);
    herr_t r = root < 0 ? -1 : 0;
    const int text = of->objects->netcdf; /* types the netCDF classic model has */
    if (r >= 0)
        r = h5shuf__attr_put_text(root, "h5shuf_version", H5SHUF_VERSION_STRING, text);
    if (r >= 0)
        r = h5shuf__attr_put_text(root, "h5shuf_inputs", inputs, text);
    if (r >= 0)
        r = of->index_path ? h5shuf__attr_put_text(root, "h5shuf_index", of->index_path, text)
                           : drop(root, "h5shuf_index");
    if (r >= 0)
        r = of->source_index_path ? h5shuf__attr_put_text(root, "h5shuf_source_index", of->source_index_path, text)
                                  : drop(root, "h5shuf_source_index");
    if (r >= 0)
        r = h5shuf__attr_put_text(root, "h5shuf_key", of->stratify ? H5SHUF_KEY_STRATIFIED_TEXT : H5SHUF_KEY_TEXT, text);
    if (r >= 0)
        r = of->stratify ? h5shuf__attr_put_text(root, "h5shuf_stratify", of->stratify, text)
                         : drop(root, "h5shuf_stratify");
    if (r >= 0)
        r = h5shuf__attr_put_u64_text(root, "h5shuf_seed", of->seed, text);
    if (r >= 0)
        r = lossy ? h5shuf__attr_put_text(root, "h5shuf_lossy", lossy, text) : drop(root, "h5shuf_lossy");
    if (root >= 0)
        H5Gclose(root);
    free(inputs);
    free(lossy);
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot write provenance attributes: %s", ofile,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}
