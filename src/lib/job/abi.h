/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abi.h - the public structs that grow, read and written only as far as the caller's struct_size (abi.c;
 * include/h5shuf.h, "The ABI").
 */
#ifndef H5SHUF_ABI_H
#define H5SHUF_ABI_H

#include <stddef.h>

#include "base.h"
#include "error.h"

/* Take the caller's options into *dst: the defaults, then the caller's fields that lie within its
 * struct_size (opts NULL: the defaults alone).  Returns 1, or 0 with why[0 .. n) saying what is wrong (a
 * struct_size no h5shuf_options_init set: 0, or more than a struct could hold; an option set past what
 * this library knows); *dst then holds the defaults. */
H5SHUF_INTERNAL int h5shuf__abi_options_take(h5shuf_options *dst, const h5shuf_options *opts, char *why, size_t n);

/* Check the struct_size of a caller's struct the library fills (h5shuf_plan, h5shuf_mixing,
 * h5shuf_mixing_windows): one its init macro could have set (not 0, not past any struct's size).  what
 * names it in the message ("plan"), init its init macro.  H5SHUF_OK or H5SHUF_EINVAL in err. */
H5SHUF_INTERNAL int h5shuf__abi_out_check(const void *out, const char *what, const char *init, struct h5shuf_err *err);

/* Copy the library's filled struct src (lib_size bytes, its struct_size first) into the caller's out, as
 * far as out's struct_size and lib_size reach, and set out's struct_size to the bytes written.  out was
 * checked by h5shuf__abi_out_check. */
H5SHUF_INTERNAL void h5shuf__abi_out_put(void *out, const void *src, size_t lib_size);

#endif
