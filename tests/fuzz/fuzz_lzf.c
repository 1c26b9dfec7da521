/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_lzf.c - libFuzzer target for the LZF filter's decompress path (id 32000), fed as HDF5 feeds it:
 * a chunk in a buffer from H5allocate_memory, with h5py's cd_values.  The first input byte picks the
 * size guess in cd_values[2] (none, tiny, or 64 KiB), so the growing-buffer path is reached too.
 * Corrupt streams must give 0 (an HDF5 error), never a crash, a leak or an out-of-bounds access.
 */
#include <string.h>

#include "filter_lzf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned cd[3] = {4, 0x0105, data[0] % 3 == 0 ? 0 : data[0] % 3 == 1 ? 7 : 65536};
    data++;
    size--;
    void *buf = H5allocate_memory(size ? size : 1, 0);
    memcpy(buf, data, size);
    size_t cap = size ? size : 1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t n = h5shuf_lzf_filter(H5Z_FLAG_REVERSE, 3, cd, size, &cap, &buf);
    if (n > cap)
        __builtin_trap();
    H5free_memory(buf);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
