/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * leftovers.c - the files an interrupted run left for the same outputs, found by their names, and those
 * certainly of a dead run removed (leftovers.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "leftovers.h"

/* What a name is for (tempfile.h). */
enum kind { KIND_TEMP, KIND_OLD, KIND_STATE };

/* If s is "PID-[TAG-][old-|state-]XXXXXX" (6 characters at the end, mkstemp's), the PID (> 0), its kind,
 * and whether TAG is there and equals tag (this process's space of ids); else 0. */
static long parse_pid_tail(const char *s, const char *tag, enum kind *kind, int *same_space)
{
    char *end;
    errno = 0;
    long pid = strtol(s, &end, 10);
    if (end == s || errno || pid <= 0 || *end != '-')
        return 0;
    end++;
    *same_space = 0;
    if (strspn(end, "0123456789abcdef") == 8 && end[8] == '-') {
        *same_space = strncmp(end, tag, 8) == 0;
        end += 9;
    }
    *kind = KIND_TEMP;
    if (strncmp(end, "old-", 4) == 0) {
        *kind = KIND_OLD;
        end += 4;
    } else if (strncmp(end, "state-", 6) == 0) {
        *kind = KIND_STATE;
        end += 6;
    }
    return strlen(end) == 6 ? pid : 0;
}

/* Whether process pid is gone (its files are then no live run's). */
static int gone(long pid)
{
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void note_path(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* A removable file (in dirfd, named name, sb its fstatat): unlinked when remove is set and it is still that
 * file, counted when it was (or, not removing, would be). */
static void take(int dirfd, const char *dir, const char *name, const struct stat *sb, long pid, int remove,
                 struct h5shuf_leftovers *found)
{
    struct stat now;
    if (remove && (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != sb->st_dev ||
                   now.st_ino != sb->st_ino || unlinkat(dirfd, name, 0) != 0))
        return; /* (gone meanwhile: another run removed it) */
    if (found->removable && pid != found->pid)
        found->several_pids = 1;
    if (!found->removable++) {
        found->pid = pid;
        note_path(found->first_removable, sizeof found->first_removable, dir, name);
    }
    found->removable_bytes += (uint64_t)sb->st_size;
}

/* Sort entry (in dirfd, named name; the output's name is out_name, NULL for a scratch file) of process pid
 * into found: removed (or removable), or reported. */
static void sort_entry(int dirfd, const char *dir, const char *name, const char *out_name, long pid, enum kind kind,
                       int same_space, int remove, struct h5shuf_leftovers *found)
{
    struct stat sb, out;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
        return;
    /* a set-aside name of what the output's name holds now (a kill within --force's commit): a second name */
    const int second_name = kind == KIND_OLD && out_name && fstatat(dirfd, out_name, &out, AT_SYMLINK_NOFOLLOW) == 0 &&
                            out.st_dev == sb.st_dev && out.st_ino == sb.st_ino;
    if (same_space && (kind == KIND_TEMP || second_name)) {
        take(dirfd, dir, name, &sb, pid, remove, found);
    } else if (kind == KIND_STATE) {
        if (!found->state_files++)
            note_path(found->first_state, sizeof found->first_state, dir, name);
    } else if (kind == KIND_OLD) {
        if (!found->set_aside++)
            note_path(found->first, sizeof found->first, dir, name);
    } else {
        found->files++;
        found->bytes += (uint64_t)sb.st_size;
        if (!found->first[0])
            note_path(found->first, sizeof found->first, dir, name);
    }
}

/* The leftovers in dir whose names are lead + one of names[0..n) + mid + "PID-...", sorted (out: the names
 * are outputs beside their leftovers). */
static void scan(const char *dir, const char *lead, const char *const *names, size_t n, const char *mid, int out,
                 int remove, struct h5shuf_leftovers *found)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dirfd >= 0 ? fdopendir(dirfd) : NULL;
    if (!d) {
        if (dirfd >= 0)
            close(dirfd);
        return;
    }
    char tag[9];
    h5shuf__pid_space(tag);
    const size_t ll = strlen(lead), ml = strlen(mid);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, lead, ll) != 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            const size_t nl = strlen(names[k]);
            enum kind kind;
            int same_space;
            long pid;
            if (strncmp(s + ll, names[k], nl) == 0 && strncmp(s + ll + nl, mid, ml) == 0 &&
                (pid = parse_pid_tail(s + ll + nl + ml, tag, &kind, &same_space)) > 0 && gone(pid)) {
                sort_entry(dirfd, dir, s, out ? names[k] : NULL, pid, kind, same_space, remove, found);
                break;
            }
        }
    }
    closedir(d);
}

static void search(const char *out_dir, const char *const *names, size_t n, const char *scratch_dir,
                   const char *scratch_name, int remove, struct h5shuf_leftovers *found)
{
    memset(found, 0, sizeof *found);
    scan(out_dir, ".", names, n, ".h5shuf-", 1, remove, found);
    if (scratch_dir && scratch_name)
        scan(scratch_dir, "h5shuf-scratch-", &scratch_name, 1, "-", 0, remove, found);
}

void h5shuf__leftovers_find(const char *out_dir, const char *const *names, size_t n, const char *scratch_dir,
                            const char *scratch_name, struct h5shuf_leftovers *found)
{
    search(out_dir, names, n, scratch_dir, scratch_name, 0, found);
}

void h5shuf__leftovers_remove(const char *out_dir, const char *const *names, size_t n, const char *scratch_dir,
                              const char *scratch_name, struct h5shuf_leftovers *found)
{
    search(out_dir, names, n, scratch_dir, scratch_name, 1, found);
}
