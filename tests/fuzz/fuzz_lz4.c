/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_lz4.c - libFuzzer target for the LZ4 filter's decompress path (id 32004), fed as HDF5 feeds it:
 * a chunk in a buffer from H5allocate_memory.  The first input byte picks the decoded-size limit the
 * reading thread declares (none, exactly 4096 bytes, or 1 to 64 KiB), as h5shuf's reads declare one.
 * Corrupt streams must give 0 (an HDF5 error), never a crash, a leak or an out-of-bounds access.
 */
#include <string.h>

#include "filter_limit.h"
#include "filter_lz4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    struct h5shuf_filter_limits *l = h5shuf_filter_limits_here(), saved = *l;
    if (data[0] % 3) {
        memset(l, 0, sizeof *l);
        l->set = 1;
        l->n = 1;
        l->f[0] = (struct h5shuf_filter_limit){H5SHUF_FILTER_LZ4, data[0] % 3 == 1 ? 4096 : 1, data[0] % 3 == 1 ? 4096 : 65536};
    }
    data++;
    size--;
    void *buf = H5allocate_memory(size ? size : 1, 0);
    memcpy(buf, data, size);
    size_t cap = size ? size : 1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t n = h5shuf_lz4_filter(H5Z_FLAG_REVERSE, 0, NULL, size, &cap, &buf);
    if (n > cap)
        __builtin_trap();
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    *l = saved;
    return 0;
}
