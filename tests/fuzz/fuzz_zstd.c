/*
 * fuzz_zstd.c - libFuzzer target for the zstd filter's decompress path, fed as HDF5 feeds it: a chunk
 * in a buffer from H5allocate_memory.  Corrupt frames must give 0 (an HDF5 error), never a crash, a
 * leak, an out-of-bounds access or an unbounded allocation.
 */
#include <string.h>

#include "filter_zstd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *buf = H5allocate_memory(size ? size : 1, 0);
    memcpy(buf, data, size);
    size_t cap = size ? size : 1;
    unsigned cd[1] = {3};
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t n = h5shuf_zstd_filter(H5Z_FLAG_REVERSE, 1, cd, size, &cap, &buf);
    if (n > cap)
        __builtin_trap();
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
