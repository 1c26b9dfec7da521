/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bshuf_plugin.c - the bitshuffle filter (id 32008; no compression, LZ4 or zstd) as a loadable HDF5
 * plugin (libh5shuf_bshuf.so), for h5dump, h5repack, h5py and any other HDF5 program: point
 * HDF5_PLUGIN_PATH at the directory holding it, or install it to H5SHUF_PLUGIN_DIR.  The entry points
 * are HDF5's dynamically loaded filter protocol (H5PLextern.h).
 */
#include <H5PLextern.h>

#include "filter_bshuf.h"

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

PLUGIN_API const void *H5PLget_plugin_info(void)
{
    return &h5shuf_bshuf_class;
}
