/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse.c - libFuzzer target for every text the tool parses from its command line: the
 * FILE[:/path,...] spec, sizes with K/M/G/T suffixes, filter specs (--compression) and chunk shapes.
 * The first byte picks the parser (and, for filters, whether "keep" is allowed); the rest is the text.
 *
 * Besides never crashing, leaking or reading out of bounds (ASan+UBSan), each parser must keep these
 * properties, and the target aborts when one fails:
 *   spec     an accepted text renders back to itself (FILE, then ":" and the paths joined by ","); every
 *            path is absolute, not the root, holds no ',' and is named once; the file name holds no ":/".
 *   size     accepted exactly when the value computed here another way (digits with overflow-checked
 *            arithmetic, a suffix table, a multiplication) fits 64 bits, and then equal to it; its
 *            decimal rendering, and its rendering with the largest exact suffix, parse to the same value.
 *   filters  each '+'-separated part of an accepted text is reflected in the result (shuffle,
 *            fletcher32, the codec and its level, read here with strtol), and the canonical rendering
 *            of the result parses to the same result.
 *   chunk    accepted exactly when the text is 1 to H5SHUF_RANK_MAX decimal numbers in [1, 2^32 - 1] joined
 *            by 'x' (checked here by hand), with those dims; the rendering parses to the same dims.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

#define REQUIRE(cond)                                                                                   \
    do {                                                                                                \
        if (!(cond)) {                                                                                  \
            fprintf(stderr, "fuzz_parse: property failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);    \
            abort();                                                                                    \
        }                                                                                               \
    } while (0)

/* ---- spec ------------------------------------------------------------------------------------------- */

static void check_spec(const char *text)
{
    struct h5shuf_err err = {0};
    struct h5shuf_spec spec;
    if (h5shuf__spec_parse(text, &spec, &err) != H5SHUF_OK)
        return;
    REQUIRE(spec.file && spec.file[0] && !strstr(spec.file, ":/"));
    REQUIRE(!spec.npaths || spec.paths);
    size_t len = strlen(spec.file) + 1;
    for (size_t i = 0; i < spec.npaths; i++) {
        REQUIRE(spec.paths[i][0] == '/' && spec.paths[i][1] && !strchr(spec.paths[i], ','));
        for (size_t j = 0; j < i; j++)
            REQUIRE(strcmp(spec.paths[i], spec.paths[j]) != 0);
        len += strlen(spec.paths[i]) + 1;
    }
    char *r = malloc(len + 1), *p = r;
    p += sprintf(p, "%s", spec.file);
    for (size_t i = 0; i < spec.npaths; i++)
        p += sprintf(p, "%c%s", i ? ',' : ':', spec.paths[i]);
    REQUIRE(strcmp(r, text) == 0);
    free(r);
    h5shuf__spec_clear(&spec);
}

/* ---- size ------------------------------------------------------------------------------------------- */

/* The size grammar: DIGITS [ (K|M|G|T) [iB | B] | B ], letters in either case; 0 and the value, or -1. */
static int size_other_way(const char *t, uint64_t *value)
{
    static const char units[] = "KMGT";
    uint64_t v = 0, mult = 1;
    const char *p = t;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
            return -1;
    const char *u = *p ? strchr(units, toupper((unsigned char)*p)) : NULL;
    if (u) {
        for (const char *k = units; k <= u; k++)
            mult *= 1024;
        p++;
        if ((p[0] == 'i' || p[0] == 'I') && (p[1] == 'B' || p[1] == 'b'))
            p += 2;
        else if (*p == 'B' || *p == 'b')
            p++;
    } else if (*p == 'B' || *p == 'b') {
        p++;
    }
    if (*p || __builtin_mul_overflow(v, mult, value))
        return -1;
    return 0;
}

static void check_size(const char *text)
{
    uint64_t got = 0, want = 0, again = 0;
    int st = h5shuf_parse_size(text, &got);
    int ok = size_other_way(text, &want) == 0;
    REQUIRE((st == H5SHUF_OK) == ok);
    if (!ok)
        return;
    REQUIRE(got == want);
    char r[64];
    snprintf(r, sizeof r, "%" PRIu64, got);
    REQUIRE(h5shuf_parse_size(r, &again) == H5SHUF_OK && again == got);
    static const char *const suffix[] = {"K", "MiB", "g", "TB"};
    int k = -1;
    while (got && k < 3 && got % (UINT64_C(1) << (10 * (k + 2))) == 0)
        k++;
    if (k >= 0) {
        snprintf(r, sizeof r, "%" PRIu64 "%s", got >> (10 * (k + 1)), suffix[k]);
        REQUIRE(h5shuf_parse_size(r, &again) == H5SHUF_OK && again == got);
    }
}

/* ---- filters ---------------------------------------------------------------------------------------- */

static void render_filters(const struct h5shuf_filters *f, char *r, size_t cap)
{
    if (f->keep) {
        snprintf(r, cap, "keep");
        return;
    }
    size_t n = 0;
    r[0] = '\0';
    if (f->codec == H5SHUF_CODEC_LZ4)
        n += (size_t)snprintf(r + n, cap - n, "lz4");
    else if (f->codec != H5SHUF_CODEC_NONE)
        n += (size_t)snprintf(r + n, cap - n, "%s:%d", f->codec == H5SHUF_CODEC_GZIP ? "gzip" : "zstd", f->level);
    if (f->shuffle)
        n += (size_t)snprintf(r + n, cap - n, "%sshuffle", n ? "+" : "");
    if (f->fletcher32)
        n += (size_t)snprintf(r + n, cap - n, "%sfletcher32", n ? "+" : "");
    if (!n)
        snprintf(r, cap, "none");
}

static void check_filters(const char *text, int allow_keep)
{
    struct h5shuf_err err = {0};
    struct h5shuf_filters f, g;
    if (h5shuf__filters_parse(text, "keep", allow_keep, "--compression", &f, &err) != H5SHUF_OK)
        return;
    REQUIRE(!f.keep || (allow_keep && strcmp(text, "keep") == 0));
    if (!f.keep && strcmp(text, "none") != 0) {
        /* every part, read here: what it names is in the result, and nothing else is */
        int shuffle = 0, fletcher = 0, codec = H5SHUF_CODEC_NONE, level = 0;
        char *copy = strdup(text), *save = NULL;
        for (char *part = strtok_r(copy, "+", &save); part; part = strtok_r(NULL, "+", &save)) {
            if (strcmp(part, "shuffle") == 0) {
                shuffle++;
            } else if (strcmp(part, "fletcher32") == 0) {
                fletcher++;
            } else if (strcmp(part, "lz4") == 0) { /* no level */
                REQUIRE(codec == H5SHUF_CODEC_NONE);
                codec = H5SHUF_CODEC_LZ4;
            } else {
                REQUIRE(strncmp(part, "gzip", 4) == 0 || strncmp(part, "zstd", 4) == 0);
                REQUIRE(codec == H5SHUF_CODEC_NONE);
                codec = part[0] == 'g' ? H5SHUF_CODEC_GZIP : H5SHUF_CODEC_ZSTD;
                REQUIRE(part[4] == '\0' || part[4] == ':');
                level = part[4] ? (int)strtol(part + 5, NULL, 10) : codec == H5SHUF_CODEC_GZIP ? 4 : 3;
            }
        }
        free(copy);
        REQUIRE(shuffle <= 1 && fletcher <= 1);
        REQUIRE(f.shuffle == shuffle && f.fletcher32 == fletcher && (int)f.codec == codec && f.level == level);
        REQUIRE(codec != H5SHUF_CODEC_GZIP || (level >= 0 && level <= 9));
        REQUIRE(codec != H5SHUF_CODEC_ZSTD || (level >= -131072 && level <= 22));
    }
    char r[128];
    render_filters(&f, r, sizeof r);
    REQUIRE(h5shuf__filters_parse(r, "keep", allow_keep, "--compression", &g, &err) == H5SHUF_OK);
    REQUIRE(g.keep == f.keep && g.shuffle == f.shuffle && g.fletcher32 == f.fletcher32 && g.codec == f.codec &&
            g.level == f.level);
}

/* ---- chunk shape ------------------------------------------------------------------------------------ */

/* The chunk grammar: NUMBER ('x' NUMBER)*, at most H5SHUF_RANK_MAX numbers, each in [1, 2^32 - 1]. */
static int chunk_other_way(const char *t, uint64_t *dims, int *rank)
{
    *rank = 0;
    const char *p = t;
    for (;;) {
        uint64_t v = 0;
        const char *start = p;
        for (; *p >= '0' && *p <= '9'; p++)
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
                return -1;
        if (p == start || v == 0 || v > UINT32_MAX || *rank == H5SHUF_RANK_MAX)
            return -1;
        dims[(*rank)++] = v;
        if (*p == '\0')
            return 0;
        if (*p++ != 'x')
            return -1;
    }
}

static void check_chunk(const char *text)
{
    struct h5shuf_err err = {0};
    uint64_t dims[H5SHUF_RANK_MAX], want[H5SHUF_RANK_MAX], again[H5SHUF_RANK_MAX];
    int rank = 0, want_rank = 0, again_rank = 0;
    int st = h5shuf__chunk_parse(text, dims, &rank, &err);
    int ok = chunk_other_way(text, want, &want_rank) == 0;
    REQUIRE((st == H5SHUF_OK) == ok);
    if (!ok)
        return;
    REQUIRE(rank == want_rank && memcmp(dims, want, (size_t)rank * sizeof *dims) == 0);
    char r[H5SHUF_RANK_MAX * 12 + 1];
    size_t n = 0;
    for (int k = 0; k < rank; k++)
        n += (size_t)snprintf(r + n, sizeof r - n, "%s%llu", k ? "x" : "", (unsigned long long)dims[k]);
    REQUIRE(h5shuf__chunk_parse(r, again, &again_rank, &err) == H5SHUF_OK);
    REQUIRE(again_rank == rank && memcmp(again, dims, (size_t)rank * sizeof *dims) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 4) {
    case 0:
        check_spec(text);
        break;
    case 1:
        check_size(text);
        break;
    case 2:
        check_filters(text, !(data[0] & 4)); /* 2: "keep" allowed (--compression), 6: not (--scratch-compression) */
        break;
    default:
        check_chunk(text);
        break;
    }
    free(text);
    return 0;
}
