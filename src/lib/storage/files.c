/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * files.c - the filesystem side of a run: directories, free space, descriptors of open HDF5 files.
 *
 * Files of h5shuf's own under temporary names, and their commit, are tempfile.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include "error.h"
#include "fault.h"
#include "files.h"
#include "walvfd.h"

int h5shuf__file_fd(hid_t file)
{
    void *handle = NULL;
    hid_t fapl = H5Fget_access_plist(file);
    const hid_t driver = fapl >= 0 ? H5Pget_driver(fapl) : H5I_INVALID_HID;
    /* sec2's handle is its descriptor, and so is the checkpointing driver's (walfile.h) */
    const int sec2 = driver >= 0 && (driver == H5FD_SEC2 || driver == h5shuf__walfile_driver());
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!sec2 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle) {
        H5Eclear2(H5E_DEFAULT);
        return -1;
    }
    return *(const int *)handle; /* an int descriptor */
}

void h5shuf__file_writeback(hid_t file)
{
    const int fd = h5shuf__file_fd(file);
    if (fd < 0)
        return;
#ifdef SYNC_FILE_RANGE_WRITE
    (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
#ifdef POSIX_FADV_DONTNEED
    /* the pages the calls before wrote back are clean now: free them, and the output's next pages reuse
     * them (dirty pages and those still being written are not dropped) */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#endif
}

void h5shuf__fd_writeback(int fd)
{
#ifdef SYNC_FILE_RANGE_WRITE
    if (fd >= 0)
        (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
#endif
}

char *h5shuf__dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

uint64_t h5shuf__free_bytes(const char *dir, dev_t *dev)
{
    struct statvfs v;
    struct stat st;
    *dev = stat(dir, &st) == 0 ? st.st_dev : 0;
    return statvfs(dir, &v) == 0 ? (uint64_t)v.f_bavail * v.f_frsize : 0;
}

const char *h5shuf__fd_limit_cause(int e, char *buf, size_t cap)
{
    if (e == ENFILE) {
        snprintf(buf, cap, "too many open files in the system");
        return buf;
    }
    if (e != EMFILE)
        return NULL;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(buf, cap, "too many open files (ulimit -n is %llu)", (unsigned long long)rl.rlim_cur);
    else
        snprintf(buf, cap, "too many open files");
    return buf;
}

const char *h5shuf__fd_shortage(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        close(fd);
        return NULL;
    }
    return h5shuf__fd_limit_cause(errno, buf, cap);
}

void h5shuf__boot_id(char *buf, size_t cap)
{
#ifdef H5SHUF_FAULT_INJECTION
    const char *fake = getenv("H5SHUF_DEBUG_BOOT_ID");
    if (fake && *fake) {
        snprintf(buf, cap, "%s", fake);
        return;
    }
#endif
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f || !fgets(buf, (int)cap, f))
        snprintf(buf, cap, "unknown");
    if (f)
        fclose(f);
    buf[strcspn(buf, " \n")] = '\0';
    if (!buf[0])
        snprintf(buf, cap, "unknown");
}

void h5shuf__pid_space(char tag[9])
{
    char text[256];
    h5shuf__boot_id(text, 64);
    size_t n = strlen(text);
    text[n++] = '/';
    const ssize_t m = readlink("/proc/self/ns/pid", text + n, sizeof text - n - 1);
    n += m > 0 ? (size_t)m : 0;
    snprintf(tag, 9, "%08x", (unsigned)(XXH3_64bits(text, n) >> 32));
}

/* The Umask line of /proc/self/status (Linux 4.7 and later) into *mask: 1, or 0 when there is none. */
static int proc_umask(mode_t *mask)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        if (strncmp(line, "Umask:", 6) == 0) {
            char *end;
            const unsigned long v = strtoul(line + 6, &end, 8);
            found = end != line + 6 && v <= 0777;
            *mask = (mode_t)v;
        }
    if (f)
        fclose(f);
    return found;
}

/* The fallback of h5shuf__umask on a kernel without the Umask line: the mask when the library was loaded
 * (before the program's threads, as a rule), read the only way there is then, umask(2) set and set back. */
static mode_t g_load_umask = 022;
__attribute__((constructor)) static void load_umask(void)
{
    if (!proc_umask(&g_load_umask)) {
        g_load_umask = umask(0);
        umask(g_load_umask);
    }
}

mode_t h5shuf__umask(void)
{
    mode_t mask;
    return proc_umask(&mask) ? mask : g_load_umask;
}
