/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_bshuf.c - libFuzzer target for the bitshuffle filter's decompress path (id 32008), fed as HDF5
 * feeds it.  The first input byte picks the parameters: element size (1..16), compression (none, LZ4,
 * zstd) and block size; the rest is the chunk.  Malformed streams must give 0 (an HDF5 error), never a
 * crash, a leak, an out-of-bounds access or an allocation the chunk cannot justify.
 */
#include <string.h>

#include "filter_bshuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const unsigned comp[4] = {0, 2, 3, 2};
    unsigned cd[6] = {0, 4, 1u + (data[0] & 15), (data[0] >> 6) == 3 ? 64 : 0, comp[(data[0] >> 4) & 3], 1};
    data++;
    size--;
    void *buf = H5allocate_memory(size ? size : 1, 0);
    memcpy(buf, data, size);
    size_t cap = size ? size : 1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t n = h5shuf_bshuf_filter(H5Z_FLAG_REVERSE, 6, cd, size, &cap, &buf);
    if (n > cap)
        __builtin_trap();
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
