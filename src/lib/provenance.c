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

/* "FILE:/a,/b" of every input, one a line (caller frees); NULL when out of memory. */
static char *inputs_text(const struct h5shuf_inputs *in, const struct h5shuf_datasets *dsets)
{
    size_t len = 1;
    for (size_t f = 0; f < in->n; f++) {
        len += strlen(in->v[f].spec.file) + 2;
        for (size_t d = 0; d < dsets->n; d++)
            len += strlen(dsets->ds[d].in_path) + 1;
    }
    char *text = malloc(len);
    if (!text)
        return NULL;
    char *p = text;
    for (size_t f = 0; f < in->n; f++) {
        const struct h5shuf_spec *paths = in->v[f].spec.npaths ? &in->v[f].spec : &in->v[0].spec;
        p += sprintf(p, "%s%s", f ? "\n" : "", in->v[f].spec.file);
        for (size_t d = 0; d < dsets->n; d++)
            p += sprintf(p, "%c%s", d ? ',' : ':', paths->paths[d]);
    }
    return text;
}

int h5shuf__output_provenance(const struct h5shuf_outfile *of, hid_t out, const char *ofile, struct h5shuf_err *err)
{
    char cause[256];
    char *inputs = inputs_text(of->inputs, of->dsets);
    if (!inputs)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    hid_t root = H5Gopen2(out, "/", H5P_DEFAULT);
    herr_t r = root < 0 ? -1 : 0;
    if (r >= 0)
        r = h5shuf__attr_put_string(root, "h5shuf_version", H5SHUF_VERSION_STRING);
    if (r >= 0)
        r = h5shuf__attr_put_string(root, "h5shuf_inputs", inputs);
    if (r >= 0 && of->index_path)
        r = h5shuf__attr_put_string(root, "h5shuf_index", of->index_path);
    if (r >= 0 && of->source_index_path)
        r = h5shuf__attr_put_string(root, "h5shuf_source_index", of->source_index_path);
    if (r >= 0)
        r = h5shuf__attr_put_string(root, "h5shuf_key", H5SHUF_KEY_TEXT);
    if (r >= 0)
        r = h5shuf__attr_put_u64(root, "h5shuf_seed", of->seed);
    if (root >= 0)
        H5Gclose(root);
    free(inputs);
    if (r < 0)
        return h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot write provenance attributes: %s", ofile,
                            h5shuf__hdf5_cause(cause, sizeof cause));
    return H5SHUF_OK;
}
