/*
 * leftovers.c - the files an interrupted run left for the same outputs, found by their names (leftovers.h).
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

#include "leftovers.h"

/* If s starts with a process id, a '-' and 6 more characters (mkstemp's), or with "PID-old-" and 6, the
 * PID (> 0), and whether "old-" stands between; else 0. */
static long parse_pid_tail(const char *s, int *old)
{
    char *end;
    errno = 0;
    long pid = strtol(s, &end, 10);
    if (end == s || errno || pid <= 0 || *end != '-')
        return 0;
    end++;
    *old = strncmp(end, "old-", 4) == 0;
    if (*old)
        end += 4;
    return strlen(end) == 6 ? pid : 0;
}

/* Whether process pid is gone (its files are then no live run's). */
static int gone(long pid)
{
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Count entry (in dirfd, named name) if it is a regular file of ours; path for the message. */
static void count(int dirfd, const char *dir, const char *name, int old, struct h5shuf_leftovers *found)
{
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
        return;
    if (old)
        found->set_aside++;
    else {
        found->files++;
        found->bytes += (uint64_t)sb.st_size;
    }
    if (!found->first[0] || (old && found->set_aside == 1))
        snprintf(found->first, sizeof found->first, "%s/%s", dir, name);
}

/* The leftovers in dir whose names are lead + one of names[0..n) + mid + "PID-[old-]XXXXXX". */
static void scan(const char *dir, const char *lead, const char *const *names, size_t n, const char *mid,
                 struct h5shuf_leftovers *found)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dirfd >= 0 ? fdopendir(dirfd) : NULL;
    if (!d) {
        if (dirfd >= 0)
            close(dirfd);
        return;
    }
    const size_t ll = strlen(lead), ml = strlen(mid);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, lead, ll) != 0)
            continue;
        for (size_t k = 0; k < n; k++) {
            const size_t nl = strlen(names[k]);
            int old = 0;
            long pid;
            if (strncmp(s + ll, names[k], nl) == 0 && strncmp(s + ll + nl, mid, ml) == 0 &&
                (pid = parse_pid_tail(s + ll + nl + ml, &old)) > 0 && gone(pid)) {
                count(dirfd, dir, s, old, found);
                break;
            }
        }
    }
    closedir(d);
}

void h5shuf__leftovers_find(const char *out_dir, const char *const *names, size_t n, const char *scratch_dir,
                            const char *scratch_name, struct h5shuf_leftovers *found)
{
    memset(found, 0, sizeof *found);
    scan(out_dir, ".", names, n, ".h5shuf-", found);
    if (scratch_dir && scratch_name)
        scan(scratch_dir, "h5shuf-scratch-", &scratch_name, 1, "-", found);
}
