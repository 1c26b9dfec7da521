/*
 * filter_builtin.c - registers the filters h5shuf builds in (filter_zstd.c, filter_lzf.c,
 * filter_bshuf.c) with HDF5.  H5Zregister puts a class in HDF5's table for this process; HDF5 then
 * looks in its plugin directories only for ids it does not have, so a registered built-in always wins
 * over a plugin of the same id found on disk.
 */
#include "filter_builtin.h"

#include "filter_bshuf.h"
#include "filter_lzf.h"
#include "filter_zstd.h"
#include "h5shuf.h" /* H5SHUF_OK, H5SHUF_EHDF5 */

int h5shuf__register_builtin_filters(void)
{
    const H5Z_class2_t *classes[] = {&h5shuf_zstd_class, &h5shuf_lzf_class, &h5shuf_bshuf_class};
    for (size_t i = 0; i < sizeof classes / sizeof *classes; i++)
        if (H5Zregister(classes[i]) < 0)
            return H5SHUF_EHDF5;
    return H5SHUF_OK;
}
