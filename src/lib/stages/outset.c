/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * outset.c - what an output file says it is part of, read back for verify (outset.h).
 *
 * verify is handed the inputs and one output name, as a run is; for a shard, a split or a head that name
 * is one file of a set.  The set is told from its root attributes alone, never from the names: the
 * files the caller listed after the inputs are taken when their attributes say they are of the same set
 * (a file of another run, or an input that happens to be an h5shuf output, is not), and a file still
 * missing is looked for under the names targets.c gives (the given file's name with its shard number or
 * split name replaced), and taken only when its attributes say it is that file.  So `h5shuf verify in.h5
 * sh-*.h5` and `h5shuf verify in.h5 sh-00000-of-00004.h5` check the same four files, and a set with a
 * file missing fails naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attrget.h"
#include "error.h"
#include "files.h"
#include "h5err.h"
#include "outset.h"
#include "spec.h"

/*-*************************************
*  One file's root attributes
***************************************/

/* What a file's root attributes say about the set it belongs to. */
struct ident {
    int has_range, has_seed, has_shards;
    uint64_t range[2], rows, seed, shard, shards;
    char *split, *splits, *inputs, *stratify;
};

static void ident_free(struct ident *id)
{
    free(id->split);
    free(id->splits);
    free(id->inputs);
    free(id->stratify);
    memset(id, 0, sizeof *id);
}

int h5shuf__outset_open(const char *path, const char *name, hid_t *file, struct h5shuf_err *err)
{
    char cause[256];
    struct stat sb; /* before HDF5 opens it: a FIFO would wait for a writer (a missing file: as HDF5 says) */
    const char *kind = stat(path, &sb) == 0 ? h5shuf__not_regular(sb.st_mode) : NULL;
    if (kind)
        return h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: is %s, not an HDF5 file", name, kind);
    int st = H5SHUF_OK;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    if (H5Fis_hdf5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        st = h5shuf__fd_shortage(path, cause, sizeof cause)
                 ? h5shuf__fail(err, H5SHUF_EIO, "%s: cannot open: %s", name, cause)
                 : h5shuf__fail(err, H5SHUF_ENOTHDF5, "%s: missing or not an HDF5 file", name);
    } else if ((*file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0) {
        h5shuf__hdf5_cause(cause, sizeof cause);
        h5shuf__fd_shortage(path, cause, sizeof cause);
        st = h5shuf__fail(err, H5SHUF_EHDF5, "%s: cannot open: %s", name, cause);
    }
    H5Pclose(fapl);
    return st;
}

/* Read the set attributes of the file at path (opened read-only).  H5SHUF_OK; H5SHUF_EMISMATCH naming
 * the attribute that is not as h5shuf writes it; an error of opening; H5SHUF_ENOMEM. */
static int ident_read(const char *path, struct ident *id, struct h5shuf_err *err)
{
    memset(id, 0, sizeof *id);
    hid_t file = H5I_INVALID_HID;
    int st = h5shuf__outset_open(path, path, &file, err);
    if (st != H5SHUF_OK)
        return st;
    const char *bad = NULL;
    int r, nomem = 0;
    char why[H5SHUF_ATTR_WHY_MAX]; /* (the first refusal's is enough: bad names the attribute) */
#define U64S(name, v, n, flag)                                                                               \
    ((r = h5shuf__attr_get_u64s_or_text(file, name, n, v, why, sizeof why)) < 0                              \
         ? (bad = bad ? bad : name, nomem |= r == H5SHUF_ATTR_NOMEM, 0)                                      \
         : ((flag) = r))
#define TEXT(name, out)                                                                                      \
    ((r = h5shuf__attr_get_texts(file, name, 1, 0, out, why, sizeof why)) < 0                                \
         ? (bad = bad ? bad : name, nomem |= r == H5SHUF_ATTR_NOMEM)                                         \
         : 0)
    int has_rows = 0, has_shard = 0;
    U64S("h5shuf_seed", &id->seed, 1, id->has_seed);
    U64S("h5shuf_row_range", id->range, 2, id->has_range);
    U64S("h5shuf_output_rows", &id->rows, 1, has_rows);
    U64S("h5shuf_shard", &id->shard, 1, has_shard);
    U64S("h5shuf_shards", &id->shards, 1, id->has_shards);
    TEXT("h5shuf_split", &id->split);
    TEXT("h5shuf_splits", &id->splits);
    TEXT("h5shuf_inputs", &id->inputs);
    TEXT("h5shuf_stratify", &id->stratify);
#undef U64S
#undef TEXT
    H5Fclose(file);
    if (nomem)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (!bad && id->has_range && (!has_rows || id->range[0] > id->range[1] || id->range[1] > id->rows))
        bad = has_rows ? "h5shuf_row_range" : "h5shuf_output_rows";
    if (!bad && id->has_shards != has_shard)
        bad = has_shard ? "h5shuf_shards" : "h5shuf_shard";
    if (!bad && id->has_shards && (id->shards == 0 || id->shards > 1000000 || id->shard >= id->shards))
        bad = "h5shuf_shard";
    if (!bad && (!id->split) != (!id->splits))
        bad = id->split ? "h5shuf_splits" : "h5shuf_split";
    if (bad)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: root attribute %s is not as h5shuf writes it", path, bad);
    return H5SHUF_OK;
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether b says it belongs to a's set. */
static int same_set(const struct ident *a, const struct ident *b)
{
    return b->has_range && a->has_seed == b->has_seed && (!a->has_seed || a->seed == b->seed) && a->rows == b->rows &&
           a->has_shards == b->has_shards && (!a->has_shards || a->shards == b->shards) &&
           same_text(a->splits, b->splits) && same_text(a->inputs, b->inputs) && same_text(a->stratify, b->stratify);
}

/* The names of a --split text "NAME=F,..." (owned, count in *n), whatever its fractions. */
static char **split_names(const char *text, size_t *n)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char **names = calloc(cap, sizeof *names);
    *n = 0;
    for (const char *p = text; names && *p;) {
        size_t len = strcspn(p, ",");
        size_t name = strcspn(p, "=,");
        if (!(names[*n] = strndup(p, name < len ? name : len))) {
            for (size_t k = 0; k < *n; k++)
                free(names[k]);
            free(names);
            return NULL;
        }
        (*n)++;
        p += len + (p[len] == ',');
    }
    return names;
}

/* Which file of the set id is (its index in row order), the tag its name carries (shard number padded as
 * targets.c pads it, or split name), into tag; SIZE_MAX when names has no such split. */
static size_t part_index(const struct ident *id, char *const *names, size_t nnames, char *tag, size_t cap)
{
    if (id->has_shards) {
        int width = snprintf(NULL, 0, "%llu", (unsigned long long)id->shards);
        snprintf(tag, cap, "%0*llu", width < 5 ? 5 : width, (unsigned long long)id->shard);
        return (size_t)id->shard;
    }
    snprintf(tag, cap, "%s", id->split ? id->split : "");
    for (size_t k = 0; k < nnames; k++)
        if (id->split && strcmp(names[k], id->split) == 0)
            return k;
    return id->split ? SIZE_MAX : 0;
}

/*-*************************************
*  The files of a set
***************************************/

/* Put file path (its ident id) in slot k of set; a slot taken already is an error naming both. */
static int place(struct h5shuf_outset *set, size_t k, const char *path, const struct ident *id, struct h5shuf_err *err)
{
    if (set->v[k].path)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s and %s: the same file of one set (rows %llu..%llu) given twice",
                            set->v[k].path, path, (unsigned long long)id->range[0], (unsigned long long)id->range[1]);
    if (!(set->v[k].path = strdup(path)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    set->v[k].first = id->range[0];
    set->v[k].rows = id->range[1] - id->range[0];
    return H5SHUF_OK;
}

/* The input list in again without its last drop entries' inputs, with weights[s] (NULL: its own or
 * none) for input s: every input given again as its spec text ("FILE[:/a,/b]@W"). */
static int inputs_again(struct h5shuf_inputs *in, size_t keep, char *const *weights, struct h5shuf_err *err)
{
    struct h5shuf_inputs fresh;
    memset(&fresh, 0, sizeof fresh);
    int st = H5SHUF_OK;
    for (size_t f = 0; f < in->n && st == H5SHUF_OK; f++) {
        const struct h5shuf_input *inp = &in->v[f];
        if (inp->copy > 0 || inp->src >= keep)
            continue;
        const char *w = weights && weights[inp->src] ? weights[inp->src] : inp->weight;
        size_t len = strlen(inp->spec.file) + (w ? strlen(w) + 2 : 1);
        for (size_t d = 0; d < inp->spec.npaths; d++)
            len += strlen(inp->spec.paths[d]) + 1;
        char *text = malloc(len), *p = text;
        if (!text) {
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            break;
        }
        p += sprintf(p, "%s", inp->spec.file);
        for (size_t d = 0; d < inp->spec.npaths; d++)
            p += sprintf(p, "%c%s", d ? ',' : ':', inp->spec.paths[d]);
        if (w)
            sprintf(p, "@%s", w);
        st = h5shuf__inputs_append(&fresh, text, err);
        free(text);
    }
    if (st != H5SHUF_OK) {
        h5shuf__inputs_free(&fresh);
        return st;
    }
    h5shuf__inputs_free(in);
    *in = fresh;
    return H5SHUF_OK;
}

/* Take the files at the end of in that belong to set (first's ident) into their slots; drop them from in. */
static int take_given(struct h5shuf_outset *set, const struct ident *first, char *const *names, size_t nnames,
                      struct h5shuf_inputs *in, struct h5shuf_err *err)
{
    size_t keep = in->nsrc;
    int st = H5SHUF_OK;
    char tag[4096];
    while (keep > 1 && st == H5SHUF_OK) {
        const struct h5shuf_input *last = NULL;
        for (size_t f = 0; f < in->n; f++)
            if (in->v[f].src == keep - 1 && in->v[f].copy == 0)
                last = &in->v[f];
        if (!last || last->weight || last->spec.npaths)
            break;
        struct ident id = {0};
        struct h5shuf_err quiet = {0};
        if (ident_read(last->spec.file, &id, &quiet) != H5SHUF_OK || !same_set(first, &id)) {
            ident_free(&id);
            break; /* an input */
        }
        size_t k = part_index(&id, names, nnames, tag, sizeof tag);
        st = k < set->n ? place(set, k, last->spec.file, &id, err)
                        : h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: split '%s' is not one of '%s'", last->spec.file, tag,
                                       first->splits);
        ident_free(&id);
        keep--;
    }
    return st == H5SHUF_OK && keep < in->nsrc ? inputs_again(in, keep, NULL, err) : st;
}

/* Occurrences of from in the base name of path (not overlapping, from the left). */
static size_t occurrences(const char *path, const char *from)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t count = 0, flen = strlen(from);
    for (const char *p = strstr(base, from); flen && p; p = strstr(p + flen, from))
        count++;
    return count;
}

/* path with occurrence occ (SIZE_MAX: every one) of from in its base name replaced by to; NULL when out
 * of memory or there is no such occurrence. */
static char *renamed(const char *path, const char *from, const char *to, size_t occ)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t count = occurrences(path, from), flen = strlen(from), tlen = strlen(to), seen = 0;
    if (count == 0 || (occ != SIZE_MAX && occ >= count))
        return NULL;
    char *out = malloc(strlen(path) + count * tlen + 1), *o = out;
    const char *p = path;
    for (const char *at = strstr(base, from); out && at; at = strstr(at + flen, from), seen++) {
        if (occ != SIZE_MAX && seen != occ)
            continue;
        memcpy(o, p, (size_t)(at - p));
        o += at - p;
        memcpy(o, to, tlen);
        o += tlen;
        p = at + flen;
    }
    if (out)
        strcpy(o, p);
    return out;
}

/* Find the file of slot k beside the given file path, whose name carries the tag mine (want: slot k's):
 * the names with one occurrence of mine replaced, or every one; the first whose attributes say it is
 * that file of first's set. */
static int find_missing(struct h5shuf_outset *set, size_t k, const char *path, const char *mine, const char *want,
                        const struct ident *first, char *const *names, size_t nnames, struct h5shuf_err *err)
{
    char tag[4096];
    const size_t count = occurrences(path, mine);
    int st = H5SHUF_OK, found = 0;
    for (size_t c = 0; c < count + (count > 1) && !found && st == H5SHUF_OK; c++) {
        char *cand = renamed(path, mine, want, c < count ? c : SIZE_MAX);
        struct ident id = {0};
        struct h5shuf_err quiet = {0};
        struct stat sb;
        if (!cand) {
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
            break;
        }
        if (lstat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && ident_read(cand, &id, &quiet) == H5SHUF_OK &&
            same_set(first, &id) && part_index(&id, names, nnames, tag, sizeof tag) == k) {
            st = place(set, k, cand, &id, err);
            set->found++;
            found = 1;
        }
        ident_free(&id);
        free(cand);
    }
    if (found || st != H5SHUF_OK)
        return st;
    char what[4160];
    if (first->has_shards)
        snprintf(what, sizeof what, "shard %zu of %llu", k, (unsigned long long)first->shards);
    else
        snprintf(what, sizeof what, "split '%s' of '%s'", names[k], first->splits);
    char *expect = count ? renamed(path, mine, want, count - 1) : NULL; /* the tag is last in targets.c's names */
    st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: %s is missing (not given%s%s): give every file of the set", path,
                      what, expect ? ", and no such file as " : "", expect ? expect : "");
    free(expect);
    return st;
}

int h5shuf__outset_find(struct h5shuf_outset *set, const char *path, struct h5shuf_inputs *in, struct h5shuf_err *err)
{
    memset(set, 0, sizeof *set);
    struct ident id;
    char **names = NULL, mine[4096], want[4096];
    size_t nnames = 0;
    int st = ident_read(path, &id, err);
    if (st == H5SHUF_OK && id.splits && !(names = split_names(id.splits, &nnames)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    set->kind = !id.has_range ? H5SHUF_OUT_WHOLE : id.has_shards ? H5SHUF_OUT_SHARDS : id.splits ? H5SHUF_OUT_SPLITS
                                                                                               : H5SHUF_OUT_ONE;
    set->n = set->kind == H5SHUF_OUT_SHARDS ? (size_t)id.shards : set->kind == H5SHUF_OUT_SPLITS ? nnames : 1;
    set->rows = id.has_range ? id.rows : 0;
    set->has_seed = id.has_seed;
    set->seed = id.seed;
    if (st == H5SHUF_OK && ((id.inputs && !(set->inputs = strdup(id.inputs))) ||
                            (id.stratify && !(set->stratify = strdup(id.stratify)))))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    size_t k = st == H5SHUF_OK ? part_index(&id, names, nnames, mine, sizeof mine) : 0;
    if (st == H5SHUF_OK && k >= set->n)
        st = h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: split '%s' is not one of '%s'", path, mine, id.splits);
    if (st == H5SHUF_OK && !(set->v = calloc(set->n, sizeof *set->v)))
        st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (st == H5SHUF_OK && !id.has_range) { /* the whole output */
        if (!(set->v[0].path = strdup(path)))
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    } else if (st == H5SHUF_OK) {
        st = place(set, k, path, &id, err);
        if (st == H5SHUF_OK)
            st = take_given(set, &id, names, nnames, in, err);
        for (size_t j = 0; j < set->n && st == H5SHUF_OK; j++) {
            if (set->v[j].path)
                continue;
            struct ident other = id;
            other.shard = j;
            other.split = names ? names[j] : NULL;
            part_index(&other, names, nnames, want, sizeof want);
            st = find_missing(set, j, path, mine, want, &id, names, nnames, err);
        }
    }
    /* consecutive ranges from row 0 to R */
    for (size_t j = 0; st == H5SHUF_OK && id.has_range && j < set->n; j++) {
        uint64_t expect = j ? set->v[j - 1].first + set->v[j - 1].rows : 0;
        if (set->v[j].first != expect || (j + 1 == set->n && set->v[j].first + set->v[j].rows != set->rows))
            st = h5shuf__fail(err, H5SHUF_EMISMATCH,
                              "%s: rows %llu..%llu of the set's %llu, where the file before it ends at row %llu: "
                              "not one set",
                              set->v[j].path, (unsigned long long)set->v[j].first,
                              (unsigned long long)(set->v[j].first + set->v[j].rows), (unsigned long long)set->rows,
                              (unsigned long long)expect);
    }
    for (size_t j = 0; names && j < nnames; j++)
        free(names[j]);
    free(names);
    ident_free(&id);
    return st;
}

/*-*************************************
*  The run's weights and strata
***************************************/

/* The weight at the end of line[0 .. len) ("SPEC@W") into w (cap bytes), or "" when it has none. */
static void line_weight(const char *line, size_t len, char *w, size_t cap)
{
    w[0] = '\0';
    const char *at = NULL;
    for (const char *p = line; p < line + len; p++)
        if (*p == '@')
            at = p;
    uint64_t whole, frac;
    size_t wl = at ? (size_t)(line + len - at - 1) : 0;
    if (at && wl < cap && h5shuf__decimal_parse(at + 1, wl, 18, 65535, &whole, &frac) == 1) {
        memcpy(w, at + 1, wl);
        w[wl] = '\0';
    }
}

int h5shuf__outset_weights(const struct h5shuf_outset *set, struct h5shuf_inputs *in, struct h5shuf_err *err)
{
    if (!set->inputs)
        return H5SHUF_OK;
    for (size_t f = 0; f < in->n; f++)
        if (in->v[f].weight)
            return H5SHUF_OK; /* the caller's weights */
    size_t lines = 1;
    for (const char *p = set->inputs; *p; p++)
        lines += *p == '\n';
    if (lines != in->nsrc)
        return H5SHUF_OK;
    char **weights = calloc(lines, sizeof *weights);
    int any = 0, st = weights ? H5SHUF_OK : h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    const char *line = set->inputs;
    for (size_t s = 0; st == H5SHUF_OK && s < lines; s++) {
        size_t len = strcspn(line, "\n");
        char w[64];
        line_weight(line, len, w, sizeof w);
        if (*w && !(weights[s] = strdup(w)))
            st = h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        any |= *w != '\0';
        line += len + (line[len] == '\n');
    }
    if (st == H5SHUF_OK && any)
        st = inputs_again(in, in->nsrc, weights, err);
    for (size_t s = 0; weights && s < lines; s++)
        free(weights[s]);
    free(weights);
    return st;
}

/* The group of every input as h5shuf_stratify's text names them ("K output files; groups: each input",
 * or "...; groups: web: inputs 0 1; code: inputs 2") into group[0 .. nsrc), their number in *ngroups.
 * 0, or -1 when the text does not name each input once. */
static int strata_groups(const char *text, size_t nsrc, size_t *group, size_t *ngroups, uint64_t *files)
{
    const char *g = strstr(text, "; groups: ");
    char *end;
    *files = strtoull(text, &end, 10);
    if (!g || end == text)
        return -1;
    g += strlen("; groups: ");
    if (strcmp(g, "each input") == 0) {
        for (size_t s = 0; s < nsrc; s++)
            group[s] = s;
        *ngroups = nsrc;
        return 0;
    }
    for (size_t s = 0; s < nsrc; s++)
        group[s] = SIZE_MAX;
    *ngroups = 0;
    for (const char *p = g; *p; (*ngroups)++) {
        const char *colon = strstr(p, ": inputs"), *semi = strstr(p, "; ");
        if (!colon || (semi && semi < colon))
            return -1;
        p = colon + strlen(": inputs");
        while (*p == ' ' && p[1] >= '0' && p[1] <= '9') {
            unsigned long long f = strtoull(p + 1, &end, 10);
            if (f >= nsrc || group[f] != SIZE_MAX)
                return -1;
            group[f] = *ngroups;
            p = end;
        }
        if (*p == ';' && p[1] == ' ')
            p += 2;
        else if (*p)
            return -1;
    }
    for (size_t s = 0; s < nsrc; s++)
        if (group[s] == SIZE_MAX)
            return -1;
    return 0;
}

int h5shuf__outset_strata(const struct h5shuf_outset *set, const struct h5shuf_inputs *in, struct h5shuf_strata *st,
                          struct h5shuf_err *err)
{
    memset(st, 0, sizeof *st);
    size_t *src_group = malloc((in->nsrc + 1) * sizeof *src_group), *group = malloc((in->n + 1) * sizeof *group);
    uint64_t *rows = malloc((in->n + 1) * sizeof *rows), *ends = malloc((set->n + 1) * sizeof *ends), files = 0;
    size_t ngroups = 0;
    int r = src_group && group && rows && ends ? 0 : -3;
    if (r == 0 && (strata_groups(set->stratify, in->nsrc, src_group, &ngroups, &files) != 0 || files != set->n))
        r = -4;
    for (size_t e = 0; r == 0 && e < in->n; e++) {
        rows[e] = in->v[e].rows;
        group[e] = src_group[in->v[e].src];
    }
    for (size_t k = 0; r == 0 && k < set->n; k++)
        ends[k] = set->v[k].first + set->v[k].rows;
    if (r == 0)
        r = h5shuf__strata_make(st, set->seed, in->n, rows, group, ngroups, set->n, ends);
    free(src_group);
    free(group);
    free(rows);
    free(ends);
    if (r == -4)
        return h5shuf__fail(err, H5SHUF_EMISMATCH,
                            "%s: h5shuf_stratify '%s' does not name the groups of these %zu inputs", set->v[0].path,
                            set->stratify, in->nsrc);
    if (r == -1 || r == -3)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (r != 0)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: the strata h5shuf_stratify names cannot be made",
                            set->v[0].path);
    return H5SHUF_OK;
}

void h5shuf__outset_free(struct h5shuf_outset *set)
{
    for (size_t k = 0; set->v && k < set->n; k++)
        free(set->v[k].path);
    free(set->v);
    free(set->inputs);
    free(set->stratify);
    memset(set, 0, sizeof *set);
}
