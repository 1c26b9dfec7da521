/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_lzo.c - libFuzzer target for PyTables' LZO filter's decompress path (id 305).  The first input
 * byte picks the way in: even, the filter as HDF5 feeds it (a chunk in a buffer from H5allocate_memory,
 * PyTables' cd_values, the growing-buffer path); odd, the pure decoder into a buffer of exactly
 * (byte >> 1) * 257 bytes, as chunkio's threads call it (ASan sees any write past it).  Corrupt streams
 * must give 0 or an error, never a crash, a leak or an out-of-bounds access.
 */
#include <stdlib.h>
#include <string.h>

#include "filter_lzo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const unsigned way = data[0];
    data++;
    size--;
    if (way & 1) {
        size_t cap = (size_t)(way >> 1) * 257, got = 0;
        unsigned char *out = malloc(cap ? cap : 1);
        int r = h5shuf_lzo_decode(data, size, out, cap, &got);
        if ((r == H5SHUF_LZO_OK && got > cap) || (r != H5SHUF_LZO_OK && got != 0))
            __builtin_trap();
        free(out);
        return 0;
    }
    static const unsigned cd[3] = {5, 27, 0};
    void *buf = H5allocate_memory(size ? size : 1, 0);
    memcpy(buf, data, size);
    size_t cap = size ? size : 1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t n = h5shuf_lzo_filter(H5Z_FLAG_REVERSE, 3, cd, size, &cap, &buf);
    if (n > cap)
        __builtin_trap();
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
