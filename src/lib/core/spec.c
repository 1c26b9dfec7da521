/* SPDX-License-Identifier: BSD-3-Clause */
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

#include "fault.h"
#include "spec.h"

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

/* ---- filter and chunk specs ---------------------------------------------------------------------- */

static int parse_level(const char *p, int lo, int hi, int *level)
{
    if (!*p)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *level = (int)v;
    return 0;
}

int h5shuf__filters_parse(const char *text, const char *dflt, int allow_keep, const char *what,
                          struct h5shuf_filters *f, struct h5shuf_err *err)
{
    memset(f, 0, sizeof *f);
    if (!text)
        text = dflt;
    if (allow_keep && strcmp(text, "keep") == 0) {
        f->keep = 1;
        return H5SHUF_OK;
    }
    if (strcmp(text, "none") == 0)
        return H5SHUF_OK;
    char *copy = strdup(text);
    if (!copy)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    int st = H5SHUF_OK;
    char *save = NULL;
    int parts = 0;
    for (char *part = strtok_r(copy, "+", &save); part && st == H5SHUF_OK; part = strtok_r(NULL, "+", &save)) {
        parts++;
        if (strcmp(part, "shuffle") == 0 && !f->shuffle) {
            f->shuffle = 1;
        } else if (strcmp(part, "fletcher32") == 0 && !f->fletcher32) {
            f->fletcher32 = 1;
        } else if ((strncmp(part, "gzip", 4) == 0 || strncmp(part, "zstd", 4) == 0) && f->codec == H5SHUF_CODEC_NONE &&
                   (part[4] == '\0' || part[4] == ':')) {
            int gz = part[0] == 'g';
            f->codec = gz ? H5SHUF_CODEC_GZIP : H5SHUF_CODEC_ZSTD;
            f->level = gz ? 4 : 3;
            /* zstd accepts negative ("fast") levels down to -131072 and up to 22 (ZSTD_maxCLevel). */
            if (part[4] == ':' && parse_level(part + 5, gz ? 0 : -131072, gz ? 9 : 22, &f->level) != 0)
                st = h5shuf__fail(err, H5SHUF_EINVAL, "%s '%s': bad level '%s' (%s)", what, text, part + 5,
                                  gz ? "gzip: 0 to 9" : "zstd: -131072 to 22");
        } else if (strcmp(part, "lz4") == 0 && f->codec == H5SHUF_CODEC_NONE) {
            f->codec = H5SHUF_CODEC_LZ4; /* (no level: LZ4's one speed, filter 32004) */
        } else {
            st = h5shuf__fail(err, H5SHUF_EINVAL,
                              "%s '%s': unknown or repeated part '%s' (use keep, none, or gzip[:L] / zstd[:L] / lz4 "
                              "with +shuffle, +fletcher32)",
                              what, text, part);
        }
    }
    if (st == H5SHUF_OK && parts == 0)
        st = h5shuf__fail(err, H5SHUF_EINVAL, "%s: empty filter spec", what);
    free(copy);
    return st;
}

int h5shuf__chunk_parse(const char *text, uint64_t *dims, int *rank, struct h5shuf_err *err)
{
    *rank = 0;
    const char *p = text;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p) || *rank == H5SHUF_RANK_MAX)
            break;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || v == 0 || v > UINT32_MAX) /* HDF5 chunk dims are 32-bit */
            break;
        dims[(*rank)++] = v;
        p = end;
        if (*p == 'x' && isdigit((unsigned char)p[1]))
            p++;
        else
            break;
    }
    if (*p || *rank == 0)
        return h5shuf__fail(err, H5SHUF_EINVAL,
                            "chunk shape '%s': expected ROWS or D0xD1x... of positive integers below 2^32", text);
    return H5SHUF_OK;
}

int h5shuf__decimal_parse(const char *text, size_t len, unsigned frac_digits, uint64_t whole_max, uint64_t *whole,
                          uint64_t *frac)
{
    uint64_t w = 0, f = 0, scale = 1;
    for (unsigned k = 0; k < frac_digits; k++)
        scale *= 10;
    int point = 0, digits = 0, big = 0, past = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '.' && !point) {
            point = 1;
            continue;
        }
        if (text[i] < '0' || text[i] > '9')
            return 0;
        digits++;
        const uint64_t d = (uint64_t)(text[i] - '0');
        if (!point) {
            big |= w > (whole_max - d) / 10;
            w = big ? w : w * 10 + d;
        } else if (scale > 1) {
            scale /= 10;
            f += d * scale;
        } else {
            past |= d != 0;
        }
    }
    if (!digits)
        return 0;
    if (past)
        return -1;
    if (big)
        return -2;
    *whole = w;
    *frac = f;
    return 1;
}
