/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rowsets.c - whole-file mode without dimension scales: which datasets hold the rows (rowsets.h).
 *
 * A file says which datasets are its examples only when one length of dim 0 stands out: a training file
 * is /X and /y of N rows beside metadata of other lengths (train_catvnoncat.h5: /train_set_x and
 * /train_set_y of 209 rows, /list_classes of 2).  When two lengths are each held by several datasets
 * (/X,/y of 1000 rows beside three class tables of 10; /train/{X,y} beside /test/{X,y}) or the datasets
 * that share a length hold less than half of the file's data (/X alone beside three tables of 10 rows),
 * any choice is a guess, and a wrong guess is silent: the examples are copied in order and the tables
 * shuffled.  So the choice is refused, naming each candidate set as the input that picks it.
 *
 * Bytes are logical (elements times the element size of the file's datatype): what the data is, the same
 * after h5repack changes its filters, and 0 for no dataset that holds data.  A length of 0 or 1 is never
 * a candidate: its shuffle is the identity, so it cannot be what a whole-file run is for.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rowsets.h"

/* The datasets of one length: how many, and their bytes (saturated). */
struct group {
    uint64_t rows, bytes;
    size_t count;
};

/* Candidate sets listed in a refusal, at most, and the bytes of their list (a longer one is cut). */
#define LISTED_MAX 6
#define LIST_BYTES 6000

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int by_rows(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return (x->rows > y->rows) - (x->rows < y->rows);
}

/* Largest bytes first, then more rows first. */
static int by_bytes_desc(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->bytes != y->bytes)
        return (x->bytes < y->bytes) - (x->bytes > y->bytes);
    return (x->rows < y->rows) - (x->rows > y->rows);
}

/* "240 bytes", "31.2 KiB" ... "16.0 EiB" into buf. */
static const char *human_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) {
        snprintf(buf, cap, "%llu byte%s", (unsigned long long)b, b == 1 ? "" : "s");
        return buf;
    }
    double v = (double)b;
    int u = -1;
    while (v >= 1024 && u < 5)
        v /= 1024, u++;
    snprintf(buf, cap, "%.1f %s", v, unit[u]);
    return buf;
}

/* Append the groups g[0..m) (listed order) to list as "FILE:/a,/b (N rows, B)", ", "-separated. */
static void list_groups(const struct group *g, size_t m, const struct h5shuf_rowcand *v, size_t n, const char *file,
                        char *list, size_t cap)
{
    size_t len = 0;
    char hb[32];
    list[0] = '\0';
    for (size_t k = 0; k < m && k < LISTED_MAX && len < cap - 1; k++) {
        len += (size_t)snprintf(list + len, cap - len, "%s%s", k ? ", " : "", file);
        for (size_t i = 0, first = 1; i < n && len < cap - 1; i++)
            if (v[i].rows == g[k].rows) {
                len += (size_t)snprintf(list + len, cap - len, "%c%s", first ? ':' : ',', v[i].path);
                first = 0;
            }
        if (len < cap - 1)
            len += (size_t)snprintf(list + len, cap - len, " (%llu row%s, %s)", (unsigned long long)g[k].rows,
                                    g[k].rows == 1 ? "" : "s", human_bytes(g[k].bytes, hb, sizeof hb));
    }
    if (m > LISTED_MAX && len < cap - 1)
        snprintf(list + len, cap - len, " and %zu more", m - LISTED_MAX);
}

/* The refusal: the candidate sets of g[0..m) (those of 2 rows or more, or all when none is), largest
 * first; why says what made the choice unclear ("" or " (...)"). */
static int refuse(struct group *g, size_t m, const struct h5shuf_rowcand *v, size_t n, const char *file,
                  const char *why, struct h5shuf_err *err)
{
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (g[i].rows >= 2)
            g[k++] = g[i];
    m = k ? k : m;
    qsort(g, m, sizeof *g, by_bytes_desc);
    char *list = malloc(LIST_BYTES);
    if (!list)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", file);
    list_groups(g, m, v, n, file, list, LIST_BYTES);
    int st = h5shuf__fail(err, H5SHUF_EAMBIGUOUS,
                          "%s: cannot tell which datasets hold the rows%s, candidates: %s; give one of them as the "
                          "input",
                          file, why, list);
    free(list);
    return st;
}

int h5shuf__rows_by_length(const struct h5shuf_rowcand *v, size_t n, const char *file, uint64_t *rows,
                           struct h5shuf_err *err)
{
    if (n == 0)
        return h5shuf__fail(err, H5SHUF_ENOENT, "%s: no dataset with rows (rank >= 1) in the file", file);
    struct group *g = malloc(n * sizeof *g);
    if (!g)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "%s: out of memory", file);
    for (size_t i = 0; i < n; i++)
        g[i] = (struct group){v[i].rows, v[i].bytes, 1};
    qsort(g, n, sizeof *g, by_rows);
    size_t m = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total = sat_add(total, g[i].bytes);
        if (m && g[m - 1].rows == g[i].rows)
            g[m - 1].bytes = sat_add(g[m - 1].bytes, g[i].bytes), g[m - 1].count++;
        else
            g[m++] = g[i];
    }
    size_t cands = 0, several = 0, multi = 0, single = 0, pick = SIZE_MAX;
    for (size_t i = 0; i < m; i++)
        if (g[i].rows >= 2) {
            cands++;
            if (g[i].count >= 2)
                several++, multi = i;
            else
                single = i;
        }
    int st = H5SHUF_OK;
    char why[200] = "", a[32], b[32];
    if (cands == 0) /* lengths 0 and 1 only (m <= 2): the one most datasets share */
        pick = m == 1 ? 0 : g[0].count > g[1].count ? 0 : g[1].count > g[0].count ? 1 : SIZE_MAX;
    else if (several == 1 || (several == 0 && cands == 1))
        pick = several ? multi : single;
    /* (the group's bytes are part of total: no overflow) */
    if (cands && pick != SIZE_MAX && g[pick].bytes < total - g[pick].bytes) {
        snprintf(why, sizeof why, " (the %llu-row dataset%s hold%s %s of the %s of all datasets)",
                 (unsigned long long)g[pick].rows, g[pick].count == 1 ? "" : "s", g[pick].count == 1 ? "s" : "",
                 human_bytes(g[pick].bytes, a, sizeof a), human_bytes(total, b, sizeof b));
        pick = SIZE_MAX;
    }
    if (pick == SIZE_MAX)
        st = refuse(g, m, v, n, file, why, err);
    else
        *rows = g[pick].rows;
    free(g);
    return st;
}
