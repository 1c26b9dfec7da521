/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * zstd_plugin.c - the Zstandard filter (id 32015) as a loadable HDF5 plugin, so that h5dump, h5repack,
 * h5py and any other HDF5 program read (and write) what h5shuf writes: point HDF5_PLUGIN_PATH at the
 * directory holding libh5shuf_zstd.so (installed to H5SHUF_PLUGIN_DIR, see CMakeLists.txt).
 * The entry points are HDF5's dynamically loaded filter protocol (H5PLextern.h).
 */
#include <H5PLextern.h>

#include "filter_zstd.h"

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

PLUGIN_API const void *H5PLget_plugin_info(void)
{
    return &h5shuf_zstd_class;
}
