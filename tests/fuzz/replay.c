/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay.c - runs a fuzz target over corpus files without libFuzzer, so the corpora replay as plain
 * tests under ctest with any compiler, under ASan+UBSan when the compiler has them (tests/CMakeLists.txt).
 * The targets abort when a property fails; each file's name is printed before it runs.  Arguments: files
 * or directories.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    printf("%s\n", path); /* before the run: a target aborts on a failed property, naming it on stderr */
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad += run_file(p);
            files++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs, %d unreadable\n", files, bad);
    return bad || files == 0;
}
