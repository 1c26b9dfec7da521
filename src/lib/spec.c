/*
 * spec.c - the "FILE.h5[:/path[,/path...]]" syntax of inputs and outputs, and sizes with K/M/G/T.
 *
 * The file name ends at the first ":/" (a dataset path is always absolute), so "a:b.h5" is a file
 * name and "a.h5:/x,/y" names two datasets.  A spec ending in ':' is refused rather than taken as a
 * file name: it is almost always a forgotten path.  Sizes are binary (K = 1024), checked for overflow.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void h5shuf__spec_clear(struct h5shuf_spec *spec)
{
    if (!spec)
        return;
    free(spec->file);
    for (size_t i = 0; i < spec->npaths; i++)
        free(spec->paths[i]);
    free(spec->paths);
    memset(spec, 0, sizeof *spec);
}

int h5shuf__spec_parse(const char *text, struct h5shuf_spec *spec, struct h5shuf_err *err)
{
    memset(spec, 0, sizeof *spec);
    if (!text || !*text)
        return h5shuf__fail(err, H5SHUF_EINVAL, "empty file name");
    size_t tlen = strlen(text);
    if (text[tlen - 1] == ':')
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: empty dataset path list after ':'", text);
    const char *colon = strstr(text, ":/");
    size_t flen = colon ? (size_t)(colon - text) : strlen(text);
    if (flen == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL, "%s: missing file name before ':'", text);
    spec->file = strndup(text, flen);
    if (!spec->file)
        goto nomem;
    if (!colon)
        return H5SHUF_OK;

    const char *p = colon + 1;
    size_t n = 1;
    for (const char *q = p; *q; q++)
        n += *q == ',';
    spec->paths = calloc(n, sizeof *spec->paths);
    if (!spec->paths)
        goto nomem;
    while (spec->npaths < n) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) {
            h5shuf__fail(err, H5SHUF_EINVAL, "%s: dataset path %zu is empty", text, spec->npaths + 1);
            h5shuf__spec_clear(spec);
            return H5SHUF_EINVAL;
        }
        if (p[0] != '/') {
            h5shuf__fail(err, H5SHUF_EINVAL, "%s: dataset path %zu must start with '/'", text,
                         spec->npaths + 1);
            h5shuf__spec_clear(spec);
            return H5SHUF_EINVAL;
        }
        if (len == 1) {
            h5shuf__fail(err, H5SHUF_EINVAL, "%s: '/' is the root group, not a dataset", text);
            h5shuf__spec_clear(spec);
            return H5SHUF_EINVAL;
        }
        spec->paths[spec->npaths] = strndup(p, len);
        if (!spec->paths[spec->npaths])
            goto nomem;
        spec->npaths++;
        p = end ? end + 1 : p + len;
    }
    for (size_t i = 0; i < spec->npaths; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->paths[i], spec->paths[j]) == 0) {
                h5shuf__fail(err, H5SHUF_EINVAL, "%s: dataset %s named twice", text, spec->paths[i]);
                h5shuf__spec_clear(spec);
                return H5SHUF_EINVAL;
            }
    return H5SHUF_OK;
nomem:
    h5shuf__spec_clear(spec);
    return h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", text);
}

int h5shuf_parse_size(const char *text, uint64_t *bytes)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return H5SHUF_EINVAL; /* empty, a sign, or a space */
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return H5SHUF_EINVAL;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0':
        break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    case 'B': break;
    default: return H5SHUF_EINVAL;
    }
    /* Accept "K", "KB", "KiB" (all binary, as sort -S and dd do for these letters), and "B". */
    if (shift && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
        end += 2;
    else if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return H5SHUF_EINVAL;
    if (shift && v > (UINT64_MAX >> shift))
        return H5SHUF_EINVAL;
    *bytes = (uint64_t)v << shift;
    return H5SHUF_OK;
}
