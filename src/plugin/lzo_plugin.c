/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lzo_plugin.c - PyTables' LZO filter (id 305, tables.Filters(complib="lzo")) as a loadable HDF5 plugin
 * (libh5shuf_lzo.so), for HDF5 programs other than PyTables and h5shuf, which build it in: h5py, h5dump,
 * h5repack, C and Fortran readers (Debian packages no LZO plugin).  Point HDF5_PLUGIN_PATH at the
 * directory holding it, or install it to H5SHUF_PLUGIN_DIR.  The entry points are HDF5's dynamically
 * loaded filter protocol (H5PLextern.h).
 */
#include <H5PLextern.h>

#include "filter_lzo.h"

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

PLUGIN_API const void *H5PLget_plugin_info(void)
{
    return &h5shuf_lzo_class;
}
