/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * resume.c - the state directory and journal of a resumable run, and what an interrupted run's journal
 * says (resume.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "fault.h"
#include "files.h"
#include "resume.h"

#define JOURNAL_NAME "journal"
#define RECORD_TEXT_MAX (64u << 10)

/*-*************************************
*  Where a run's journal lives
***************************************/

char *h5shuf__resume_dir_for(const char *scratch_dir, const char *out, int rank)
{
    /* the output's absolute path: its directory resolved, its own name as given */
    char *dir = h5shuf__dir_of(out);
    if (!dir)
        return NULL;
    char real[PATH_MAX];
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    char abs[PATH_MAX + 256];
    snprintf(abs, sizeof abs, "%s/%s", realpath(dir, real) ? real : dir, base);
    free(dir);
    char name[64];
    snprintf(name, sizeof name, "%.40s", base); /* a long name is cut: the hash tells outputs apart */
    size_t need = strlen(scratch_dir) + strlen(name) + 96;
    char *path = malloc(need);
    char suffix[48];
    /* the user's id in the name: another user's state (or a directory planted to block this one) is at
     * another name; one state per process of a distributed run (they may share a scratch directory) */
    int n = snprintf(suffix, sizeof suffix, "-uid%lu", (unsigned long)geteuid());
    if (rank >= 0)
        snprintf(suffix + n, sizeof suffix - (size_t)n, "-rank%d", rank);
    if (path)
        snprintf(path, need, "%s/h5shuf-resume-%s-%016" PRIx64 "%s", scratch_dir, name,
                 (uint64_t)XXH3_64bits(abs, strlen(abs)), suffix);
    return path;
}

/* This machine's boot (files.h; test builds may simulate a restart). */
static void boot_id(char *buf, size_t cap)
{
    h5shuf__boot_id(buf, cap);
}

void h5shuf__resume_boot_words(const struct h5shuf_resume *rs, char *buf, size_t cap)
{
    char id[64];
    boot_id(id, sizeof id);
    snprintf(buf, cap, " boot %s synced %d", id, rs->synced ? 1 : 0);
}

/*-*************************************
*  Reading a journal
***************************************/

/* The value after the word key in text (a word starts the text or follows a space or newline): a pointer
 * to it, or NULL. */
static const char *word_after(const char *text, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += k)
        if ((p == text || p[-1] == ' ' || p[-1] == '\n') && p[k] == ' ')
            return p + k + 1;
    return NULL;
}

static int get_u64(const char *text, const char *key, uint64_t *v)
{
    const char *p = word_after(text, key);
    if (!p)
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(p, &end, 0);
    if (errno || end == p)
        return -1;
    *v = x;
    return 0;
}

static int get_word(const char *text, const char *key, char *buf, size_t cap)
{
    const char *p = word_after(text, key);
    if (!p)
        return -1;
    size_t n = strcspn(p, " \n");
    if (n == 0 || n >= cap)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

static int get_fstate(const char *text, struct h5shuf_wal_commit *s)
{
    memset(s, 0, sizeof *s);
    if (get_u64(text, "eof", &s->eof) < 0 || get_word(text, "log", s->log_name, sizeof s->log_name) < 0 ||
        get_u64(text, "logbytes", &s->log_bytes) < 0 || get_u64(text, "logsum", &s->log_hash) < 0)
        return -1;
    if (strcmp(s->log_name, "-") == 0)
        s->log_name[0] = '\0';
    return 0;
}

void h5shuf__fstate_text(const struct h5shuf_wal_commit *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "eof %" PRIu64 " log %s logbytes %" PRIu64 " logsum 0x%016" PRIx64, s->eof,
             s->log_name[0] ? s->log_name : "-", s->log_bytes, s->log_hash);
}

/* Each line of text in turn: *line set to the next one (NUL-terminated in a copy buf of cap). */
static const char *next_line(const char *p, char *buf, size_t cap)
{
    if (!p || !*p)
        return NULL;
    size_t n = strcspn(p, "\n");
    size_t m = n < cap - 1 ? n : cap - 1;
    memcpy(buf, p, m);
    buf[m] = '\0';
    return p[n] ? p + n + 1 : p + n;
}

static int read_targets(struct h5shuf_resume *rs, const char *text, int ids)
{
    uint64_t n;
    if (get_u64(text, "targets", &n) < 0 || n > 10000000) /* (0: a process of a distributed run without rows) */
        return -1;
    free(rs->t);
    rs->t = calloc(n ? n : 1, sizeof *rs->t);
    if (!rs->t)
        return -1;
    rs->ntargets = n;
    char line[512];
    size_t seen = 0;
    for (const char *p = text; (p = next_line(p, line, sizeof line));) {
        uint64_t k;
        if (get_u64(line, "t", &k) < 0)
            continue;
        if (k >= n || get_word(line, "name", rs->t[k].name, sizeof rs->t[k].name) < 0 ||
            (ids && (get_u64(line, "dev", &rs->t[k].dev) < 0 || get_u64(line, "ino", &rs->t[k].ino) < 0)))
            return -1;
        seen++;
    }
    return seen == n ? 0 : -1;
}

static int read_created(struct h5shuf_resume *rs, const char *text)
{
    char line[512];
    size_t seen = 0;
    for (const char *p = text; (p = next_line(p, line, sizeof line));) {
        uint64_t k;
        if (get_u64(line, "t", &k) < 0)
            continue;
        if (k >= rs->ntargets || get_u64(line, "eof", &rs->t[k].st.eof) < 0)
            return -1;
        rs->t[k].st.log_name[0] = '\0';
        seen++;
    }
    return seen == rs->ntargets ? 0 : -1;
}

static int read_scratch_name(struct h5shuf_resume *rs, const char *text)
{
    return get_word(text, "sname", rs->scratch_name, sizeof rs->scratch_name) < 0 ||
                   get_u64(text, "sdev", &rs->scratch_dev) < 0 || get_u64(text, "sino", &rs->scratch_ino) < 0
               ? -1
               : 0;
}

static int read_pass1(struct h5shuf_resume *rs, const char *text)
{
    if (read_scratch_name(rs, text) < 0)
        return -1;
    struct h5shuf_rpass1 *p = &rs->p1;
    if (get_u64(text, "rows", &p->rows_done) < 0 || get_u64(text, "piles", &p->piles) < 0 ||
        get_u64(text, "cap", &p->cap) < 0 || get_u64(text, "restarts", &p->restarts) < 0 ||
        get_u64(text, "first", &p->first_number) < 0 || get_u64(text, "next", &p->next_number) < 0 ||
        get_fstate(text, &p->scratch) < 0 || get_word(text, "spill", p->spill, sizeof p->spill) < 0 ||
        get_u64(text, "spillbytes", &p->spill_bytes) < 0 || get_u64(text, "spillsum", &p->spill_sum) < 0)
        return -1;
    rs->level = (struct h5shuf_rlevel){1, p->restarts, p->piles, p->cap};
    return 0;
}

/* The plan pass 1 ran with ("plan-restarts R plan-piles M plan-cap C"), where a record gives it. */
static int read_level(struct h5shuf_resume *rs, const char *text)
{
    struct h5shuf_rlevel l = {1, 0, 0, 0};
    if (!word_after(text, "plan-restarts"))
        return 0; /* (optional) */
    if (get_u64(text, "plan-restarts", &l.restarts) < 0 || get_u64(text, "plan-piles", &l.piles) < 0 ||
        get_u64(text, "plan-cap", &l.cap) < 0)
        return -1;
    rs->level = l;
    return 0;
}

/* AGAIN: a distributed run's process goes back in pass 1 (the others had not all finished it): from its
 * last PASS1 ("from pass1"), or from the first row of the plan given ("from start"). */
static int read_again(struct h5shuf_resume *rs, const char *text)
{
    char from[16];
    if (get_word(text, "from", from, sizeof from) < 0 || read_level(rs, text) < 0 || !rs->level.set)
        return -1;
    rs->has_piles = 0;
    if (strcmp(from, "start") == 0)
        rs->has_pass1 = 0;
    else if (strcmp(from, "pass1") != 0 || !rs->has_pass1)
        return -1;
    return 0;
}

static int read_piles(struct h5shuf_resume *rs, const char *text)
{
    uint64_t n;
    char first[2048];
    next_line(text, first, sizeof first);
    if (get_u64(first, "piles", &n) < 0 || n > (UINT64_C(1) << 32) || get_u64(first, "next", &rs->next_number) < 0 ||
        get_fstate(first, &rs->scratch) < 0 || read_scratch_name(rs, first) < 0 || read_level(rs, first) < 0)
        return -1;
    free(rs->piles);
    rs->piles = malloc((n ? n : 1) * sizeof *rs->piles);
    if (!rs->piles)
        return -1;
    rs->npiles = 0;
    char line[512];
    const char *nl = strchr(text, '\n');
    for (const char *p = nl ? nl + 1 : NULL; p && (p = next_line(p, line, sizeof line));) {
        uint64_t v[6];
        if (sscanf(line, "p %" SCNu64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNu64 " %" SCNu64, &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5]) != 6 || rs->npiles == n)
            return -1;
        struct h5shuf_pile *q = &rs->piles[rs->npiles++];
        q->number = v[0];
        q->range.lo = v[1];
        /* hi: a 65-bit value written as (carry, low): 2^64 is "1 0" */
        q->range.hi = ((h5shuf_u128)v[2] << 64) | v[3];
        q->rows = v[4];
        q->bytes = v[5];
    }
    return rs->npiles == n ? 0 : -1;
}

static int read_pass2(struct h5shuf_resume *rs, const char *text)
{
    uint64_t row, k, done;
    struct h5shuf_wal_commit s;
    if (get_u64(text, "row", &row) < 0 || get_u64(text, "t", &k) < 0 || k >= rs->ntargets ||
        get_u64(text, "done", &done) < 0 || get_fstate(text, &s) < 0)
        return -1;
    rs->p2_row = row;
    rs->t[k].st = s;
    rs->t[k].done = done != 0;
    uint64_t assembled = 0;
    if (get_u64(text, "assembled", &assembled) == 0 && assembled)
        rs->assembled = 1;
    return 0;
}

/* Take in the records of an interrupted run's journal. */
static int read_records(struct h5shuf_resume *rs, const struct h5shuf_record *r, size_t n, struct h5shuf_err *err)
{
    if (n == 0 || r[0].kind != H5SHUF_REC_IDENTITY)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: the journal has no identity record: not a run's state (remove it)",
                            rs->dir);
    if (!(rs->identity = strdup(r[0].payload)))
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    if (get_u64(rs->identity, "seed", &rs->seed) < 0)
        return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: the journal's identity record is not h5shuf's (remove it)", rs->dir);
    char here[64];
    boot_id(here, sizeof here);
    for (size_t i = 1; i < n; i++) {
        int bad = 0;
        char boot[64];
        uint64_t synced = 1;
        /* a checkpoint not synced holds only while the kernel that kept its data runs */
        if (get_word(r[i].payload, "boot", boot, sizeof boot) == 0 && get_u64(r[i].payload, "synced", &synced) == 0 &&
            !synced && (strcmp(boot, here) != 0 || strcmp(here, "unknown") == 0))
            rs->stale = 1;
        switch (r[i].kind) {
        case H5SHUF_REC_NAMES: bad = read_targets(rs, r[i].payload, 0); rs->names_only = 1; break;
        case H5SHUF_REC_TARGETS: bad = read_targets(rs, r[i].payload, 1); rs->names_only = 0; break;
        case H5SHUF_REC_CREATED: bad = !rs->t || read_created(rs, r[i].payload); rs->created = !bad; break;
        case H5SHUF_REC_PASS1: bad = read_pass1(rs, r[i].payload); rs->has_pass1 = !bad; break;
        case H5SHUF_REC_PILES: bad = read_piles(rs, r[i].payload); rs->has_piles = !bad; break;
        case H5SHUF_REC_PASS2: bad = !rs->created || read_pass2(rs, r[i].payload); break;
        case H5SHUF_REC_SCRATCH:
            bad = get_word(r[i].payload, "name", rs->scratch_intent, sizeof rs->scratch_intent) < 0;
            break;
        case H5SHUF_REC_AGAIN: bad = read_again(rs, r[i].payload); break;
        case H5SHUF_REC_DONE:
            bad = get_fstate(r[i].payload, &rs->done_state) < 0 || read_scratch_name(rs, r[i].payload) < 0;
            rs->done = !bad;
            break;
        default: bad = 1;
        }
        if (bad)
            return h5shuf__fail(err, H5SHUF_EMISMATCH, "%s: record %zu of the journal is not understood (remove the state)",
                                rs->dir, i + 1);
    }
    return H5SHUF_OK;
}

/*-*************************************
*  Finding the run to resume
***************************************/

/* Remove every entry of the directory open at fd (the journal first: a state without it is no state, so a
 * kill during the removal never leaves one that names files already gone), and close fd. */
static void remove_entries(int fd)
{
    unlinkat(fd, JOURNAL_NAME, 0);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    rewinddir(d); /* (a dup shares its original's offset, which another listing may have moved) */
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* Was rs->dir (open, this user's) left by a run killed while it made it, before its IDENTITY record was
 * whole (then it holds nothing but its journal, and that has no valid record, or not even its header), or
 * while it removed it (h5shuf__resume_remove: the journal went first, so there is none)? */
static int never_started(struct h5shuf_resume *rs)
{
    struct stat s;
    if (fstatat(rs->dirfd, JOURNAL_NAME, &s, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
        return 1;
    int fd = dup(rs->dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    rewinddir(d); /* (the descriptor's offset is rs->dirfd's, shared) */
    int others = 0;
    for (struct dirent *e; (e = readdir(d));)
        others += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, JOURNAL_NAME) != 0;
    closedir(d);
    if (others)
        return 0;
    if (fstatat(rs->dirfd, JOURNAL_NAME, &s, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT;
    if (!S_ISREG(s.st_mode) || s.st_uid != geteuid())
        return 0;
    if ((uint64_t)s.st_size < H5SHUF_JOURNAL_HEADER_BYTES)
        return 1;
    struct h5shuf_journal j = {.fd = -1};
    struct h5shuf_record *recs = NULL;
    size_t n = 0;
    struct h5shuf_err ignored = {0};
    int none = h5shuf__journal_open(rs->dirfd, JOURNAL_NAME, JOURNAL_NAME, &j, &recs, &n, &ignored) == H5SHUF_OK && n == 0;
    h5shuf__records_free(recs, n);
    h5shuf__journal_close(&j);
    return none;
}

/* What is at rs->dir when it is not a directory of this user's (a symbolic link, another user's directory,
 * something else), into rs->foreign_why; then, with resume, the refusal, else H5SHUF_OK with rs->foreign
 * set (the caller warns and keeps no state). */
static int foreign(struct h5shuf_resume *rs, int resume, struct h5shuf_err *err)
{
    struct stat l;
    if (lstat(rs->dir, &l) != 0)
        snprintf(rs->foreign_why, sizeof rs->foreign_why, "cannot be looked at (%s)", strerror(errno));
    else if (S_ISLNK(l.st_mode))
        snprintf(rs->foreign_why, sizeof rs->foreign_why, "a symbolic link");
    else if (!S_ISDIR(l.st_mode))
        snprintf(rs->foreign_why, sizeof rs->foreign_why, "not a directory");
    else
        snprintf(rs->foreign_why, sizeof rs->foreign_why, "another user's directory (uid %lu)", (unsigned long)l.st_uid);
    if (rs->dirfd >= 0)
        close(rs->dirfd);
    rs->dirfd = -1;
    if (resume)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: %s, not a state of this user's: refusing to use it as a run's state "
                            "(resume with another --tmpdir, or have it removed)", rs->dir, rs->foreign_why);
    rs->foreign = 1;
    return H5SHUF_OK;
}

int h5shuf__resume_find(struct h5shuf_resume *rs, int resume, struct h5shuf_err *err)
{
    rs->found = rs->foreign = 0;
    rs->dirfd = open(rs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rs->dirfd < 0 && (errno == ENOENT))
        return H5SHUF_OK;
    if (rs->dirfd < 0 && (errno == ELOOP || errno == ENOTDIR || errno == EACCES)) /* a link; not ours to read */
        return foreign(rs, resume, err);
    struct stat s;
    if (rs->dirfd < 0 || fstat(rs->dirfd, &s) < 0)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: an interrupted run's state cannot be opened: %s (remove it)", rs->dir,
                            strerror(errno));
    if (s.st_uid != geteuid())
        return foreign(rs, resume, err);
    if (s.st_mode & 077)
        return h5shuf__fail(err, H5SHUF_EEXIST, "%s: this user's directory but open to others (mode %03o): refusing to "
                            "use it as a run's state (chmod 700 it to resume)", rs->dir, (unsigned)(s.st_mode & 0777));
    if (never_started(rs)) { /* killed before its IDENTITY, or while removing it: nothing of it is of use */
        int fd = dup(rs->dirfd);
        if (fd >= 0)
            remove_entries(fd);
        close(rs->dirfd);
        rs->dirfd = -1;
        rmdir(rs->dir);
        return H5SHUF_OK;
    }
    if (!resume)
        return h5shuf__fail(err, H5SHUF_EEXIST, "an interrupted run's state is in %s: add --resume to continue, or remove it",
                            rs->dir);
    size_t need = strlen(rs->dir) + sizeof JOURNAL_NAME + 2;
    char *path = malloc(need);
    if (!path)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    snprintf(path, need, "%s/%s", rs->dir, JOURNAL_NAME);
    struct h5shuf_record *recs = NULL;
    size_t n = 0;
    int st = h5shuf__journal_open(rs->dirfd, JOURNAL_NAME, path, &rs->j, &recs, &n, err);
    free(path);
    if (st == H5SHUF_OK)
        st = read_records(rs, recs, n, err);
    h5shuf__records_free(recs, n);
    if (st == H5SHUF_OK && rs->stale)
        st = h5shuf__fail(err, H5SHUF_EEXIST, "%s: the interrupted run's checkpoints were not synced (--checkpoint "
                          "SIZE,sync syncs them) and this machine has restarted since: they cannot be trusted; remove it "
                          "(and the run's temporary files beside the output) to start again", rs->dir);
    rs->found = st == H5SHUF_OK;
    return st;
}

/* The length of the line at p (to its newline or the text's end); *next: the line after it, NULL when p
 * is at the text's end. */
static size_t line_at(const char *p, const char **next)
{
    if (!p || !*p) {
        *next = NULL;
        return 0;
    }
    const size_t n = strcspn(p, "\n");
    *next = p[n] ? p + n + 1 : p + n;
    return n;
}

/* The first line of identity text that differs, in a and b, compared whole (an input's path may be as long
 * as PATH_MAX, its size and time after it): H5SHUF_OK, or H5SHUF_EMISMATCH naming the item. */
int h5shuf__resume_same(const struct h5shuf_resume *rs, const char *identity, struct h5shuf_err *err)
{
    const char *a = rs->identity, *b = identity, *na, *nb;
    for (;; a = na, b = nb) {
        const size_t la = line_at(a, &na), lb = line_at(b, &nb);
        if (!na && !nb)
            return H5SHUF_OK;
        if (na && nb && la == lb && memcmp(a, b, la) == 0)
            continue;
        const char *p = na ? a : b;
        const size_t n = na ? la : lb;
        char *line = strndup(p, n);
        if (!line)
            return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
        char what[64] = "";
        sscanf(line, "%63s", what);
        int st;
        if (strncmp(what, "input", 5) == 0) {
            char file[PATH_MAX + 1] = "";
            get_word(line, "file", file, sizeof file);
            st = h5shuf__fail(err, H5SHUF_EMISMATCH,
                              "%s: changed since the interrupted run (its size, time, rows or datasets): cannot resume "
                              "(remove %s to start again)", file[0] ? file : what, rs->dir);
        } else {
            st = h5shuf__fail(err, H5SHUF_EMISMATCH,
                              "%s differs from the interrupted run's (was: %.*s; now: %.*s): cannot resume (run as it was "
                              "run, or remove %s to start again)", what, na ? (int)(la < 2048 ? la : 2048) : 7,
                              na ? a : "nothing", nb ? (int)(lb < 2048 ? lb : 2048) : 7, nb ? b : "nothing", rs->dir);
        }
        free(line);
        return st;
    }
}

/*-*************************************
*  Writing a journal
***************************************/

int h5shuf__resume_start(struct h5shuf_resume *rs, const char *identity, struct h5shuf_err *err)
{
    if ((H5SHUF_FAULT() ? (errno = EIO, -1) : mkdir(rs->dir, 0700)) < 0)
        return h5shuf__fail(err, errno == EEXIST ? H5SHUF_EEXIST : H5SHUF_EIO, "%s: cannot make the run's state directory: %s",
                            rs->dir, strerror(errno));
    rs->dirfd = open(rs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat s;
    if (rs->dirfd < 0 || fstat(rs->dirfd, &s) < 0 || s.st_uid != geteuid() || (s.st_mode & 077))
        return h5shuf__fail(err, H5SHUF_EIO, "%s: the run's state directory is not as made (mode 0700, this user's)", rs->dir);
    size_t need = strlen(rs->dir) + sizeof JOURNAL_NAME + 2;
    char *path = malloc(need);
    if (!path)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    snprintf(path, need, "%s/%s", rs->dir, JOURNAL_NAME);
    int st = h5shuf__journal_create(rs->dirfd, JOURNAL_NAME, path, &rs->j, err);
    free(path);
    if (st == H5SHUF_OK)
        st = h5shuf__journal_append(&rs->j, H5SHUF_REC_IDENTITY, identity, strlen(identity), err);
    return st;
}

int h5shuf__resume_record(struct h5shuf_resume *rs, uint32_t kind, struct h5shuf_err *err, const char *fmt, ...)
{
    char *buf = malloc(RECORD_TEXT_MAX);
    if (!buf)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, RECORD_TEXT_MAX, fmt, ap);
    va_end(ap);
    if (n >= 0 && (unsigned)n < RECORD_TEXT_MAX) {
        h5shuf__resume_boot_words(rs, buf + n, RECORD_TEXT_MAX - (size_t)n);
        n += (int)strlen(buf + n);
    }
    int st = n < 0 || (unsigned)n >= RECORD_TEXT_MAX ? h5shuf__fail(err, H5SHUF_EINTERNAL, "a journal record too long")
                                                     : h5shuf__journal_append(&rs->j, kind, buf, (uint64_t)n, err);
    free(buf);
    return st;
}

int h5shuf__resume_record_piles(struct h5shuf_resume *rs, const struct h5shuf_pile *piles, size_t n, uint64_t next_number,
                                const struct h5shuf_wal_commit *scratch, const char *more, struct h5shuf_err *err)
{
    size_t cap = 1024 + strlen(more) + n * 96;
    char *buf = malloc(cap);
    if (!buf)
        return h5shuf__fail(err, H5SHUF_ENOMEM, "out of memory");
    char fs[512];
    h5shuf__fstate_text(scratch, fs, sizeof fs);
    char boot[128];
    h5shuf__resume_boot_words(rs, boot, sizeof boot);
    size_t at = (size_t)snprintf(buf, cap, "piles %zu next %" PRIu64 " %s %s%s\n", n, next_number, fs, more, boot);
    for (size_t k = 0; k < n && at < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, "p %" PRIu64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
                               piles[k].number, (uint64_t)piles[k].range.lo, (uint64_t)(piles[k].range.hi >> 64),
                               (uint64_t)piles[k].range.hi, piles[k].rows, piles[k].bytes);
    int st = at < cap ? h5shuf__journal_append(&rs->j, H5SHUF_REC_PILES, buf, at, err)
                      : h5shuf__fail(err, H5SHUF_EINTERNAL, "a journal record too long");
    free(buf);
    return st;
}

void h5shuf__resume_remove(struct h5shuf_resume *rs)
{
    if (!rs->dir)
        return;
    h5shuf__journal_close(&rs->j);
    int fd = rs->dirfd >= 0 ? dup(rs->dirfd) : open(rs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        remove_entries(fd); /* (closes fd) */
    if (rs->dirfd >= 0)
        close(rs->dirfd);
    rs->dirfd = -1;
    rmdir(rs->dir);
}

void h5shuf__resume_free(struct h5shuf_resume *rs)
{
    h5shuf__journal_close(&rs->j);
    if (rs->dirfd >= 0)
        close(rs->dirfd);
    rs->dirfd = -1;
    free(rs->dir);
    free(rs->identity);
    free(rs->t);
    free(rs->piles);
    rs->dir = rs->identity = NULL;
    rs->t = NULL;
    rs->piles = NULL;
}
