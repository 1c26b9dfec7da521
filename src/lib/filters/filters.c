/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * filters.c - the filters h5shuf brings into this process (zstd 32015: filter_zstd.c; h5py's LZF 32000:
 * filter_lzf.c; PyTables' LZO 305: filter_lzo.c, unless built with -DH5SHUF_LZO=OFF; bitshuffle 32008:
 * filter_bshuf.c; LZ4 32004: filter_lz4.c) and the pipeline of a filter spec put on dataset creation properties.
 *
 * H5Zregister puts a class in HDF5's table for this process; HDF5 looks in its plugin directories only
 * for ids it does not have, so a built-in always wins over a plugin of the same id found on disk.
 */
#include <zstd.h>

#include "filter_bshuf.h"
#include "filter_lz4.h"
#include "filter_lzf.h"
#include "filter_lzo.h"
#include "filter_zstd.h"
#include "filters.h"

const char *h5shuf_zstd_version(void)
{
    return ZSTD_versionString();
}

int h5shuf__filters_register(void)
{
    /* Ours replace any filter of these ids registered before: same streams, same cd_values. */
    const H5Z_class2_t *classes[] = {&h5shuf_zstd_class, &h5shuf_lzf_class,
#ifdef H5SHUF_HAVE_LZO /* -DH5SHUF_LZO=OFF: LZO left to HDF5's plugins */
                                     &h5shuf_lzo_class,
#endif
                                     &h5shuf_bshuf_class, &h5shuf_lz4_class};
    for (size_t i = 0; i < sizeof classes / sizeof *classes; i++)
        if (H5Zregister(classes[i]) < 0)
            return H5SHUF_EHDF5;
    return H5SHUF_OK;
}

int h5shuf_register_filters(void)
{
    return h5shuf__filters_register();
}

int h5shuf_register_zstd(void)
{
    return H5Zregister(&h5shuf_zstd_class) < 0 ? H5SHUF_EHDF5 : H5SHUF_OK;
}

herr_t h5shuf__filters_apply(const struct h5shuf_filters *f, hid_t dcpl)
{
    herr_t r = 0;
    if (f->shuffle)
        r = H5Pset_shuffle(dcpl);
    if (r >= 0 && f->codec == H5SHUF_CODEC_GZIP)
        r = H5Pset_deflate(dcpl, (unsigned)f->level);
    if (r >= 0 && f->codec == H5SHUF_CODEC_ZSTD) {
        const unsigned cd[1] = {(unsigned)f->level}; /* a negative level travels as its two's complement */
        r = H5Pset_filter(dcpl, H5SHUF_FILTER_ZSTD, H5Z_FLAG_MANDATORY, 1, cd);
    }
    if (r >= 0 && f->codec == H5SHUF_CODEC_LZ4) {
        const unsigned cd[1] = {0}; /* the default block (1 GiB: a chunk is one block), as hdf5plugin.LZ4() writes */
        r = H5Pset_filter(dcpl, H5SHUF_FILTER_LZ4, H5Z_FLAG_MANDATORY, 1, cd);
    }
    if (r >= 0 && f->fletcher32)
        r = H5Pset_fletcher32(dcpl);
    return r;
}
