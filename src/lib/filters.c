/*
 * filters.c - the filters h5shuf brings into this process (zstd, id 32015: filter_zstd.c) and the
 * pipeline of a filter spec put on dataset creation properties.
 */
#include <zstd.h>

#include "filter_zstd.h"
#include "filters.h"

const char *h5shuf_zstd_version(void)
{
    return ZSTD_versionString();
}

int h5shuf__filters_register(void)
{
    /* Ours replaces any 32015 filter registered before: same stream, same cd_values. */
    return H5Zregister(&h5shuf_zstd_class) < 0 ? H5SHUF_EHDF5 : H5SHUF_OK;
}

int h5shuf_register_zstd(void)
{
    return h5shuf__filters_register();
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
    if (r >= 0 && f->fletcher32)
        r = H5Pset_fletcher32(dcpl);
    return r;
}
