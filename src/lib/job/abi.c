/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * abi.c - the public structs that grow (include/h5shuf.h, "The ABI"): each begins with struct_size, the
 * sizeof the caller's header gave it, and the library reads and writes such a struct only as far as that
 * (the struct_size pattern of zstd's and libcurl's advanced APIs, and of Linux's copy_struct_from_user,
 * whose rule for a larger struct this follows: read what is known, refuse a nonzero byte past it).
 *
 * A release appends fields only.  A struct that ended in padding would let a later release's field lie
 * in bytes an older caller never wrote as a field (a struct copy need not copy padding), so each struct
 * must end at its last field: the assertions below stop the build of a release that breaks this.
 */
#include "abi.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(h5shuf_options) == offsetof(h5shuf_options, reserved0) + sizeof(int),
               "h5shuf_options ends in padding: append a field that fills it (see include/h5shuf.h, The ABI)");
_Static_assert(sizeof(h5shuf_plan) == offsetof(h5shuf_plan, exchanged_bytes) + sizeof(uint64_t),
               "h5shuf_plan ends in padding, or a field was appended without updating this check");
_Static_assert(sizeof(h5shuf_mixing) == offsetof(h5shuf_mixing, p_value) + sizeof(double),
               "h5shuf_mixing ends in padding, or a field was appended without updating this check");
_Static_assert(sizeof(h5shuf_mixing_windows) == offsetof(h5shuf_mixing_windows, below_001) + sizeof(uint64_t),
               "h5shuf_mixing_windows ends in padding, or a field was appended without updating this check");
_Static_assert(offsetof(h5shuf_options, struct_size) == 0 && offsetof(h5shuf_plan, struct_size) == 0 &&
                   offsetof(h5shuf_mixing, struct_size) == 0 && offsetof(h5shuf_mixing_windows, struct_size) == 0,
               "struct_size comes first");

/* The struct_size an init macro may have set: at least struct_size itself (0 is a struct never
 * initialised), at most SIZE_MAX_TAKEN: no release's struct comes near it, a larger one is garbage in a
 * struct never initialised, and reading that far past the library's own fields would not be safe.  Any
 * size between is taken as a release's: the sizes of the releases before this one's are smaller (a
 * program built with such a header), those of later ones larger. */
#define SIZE_MIN_TAKEN sizeof(size_t)
#define SIZE_MAX_TAKEN 4096

void h5shuf_options_init_size(h5shuf_options *opts, size_t size)
{
    if (!opts || size < sizeof opts->struct_size)
        return;
    h5shuf_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = size;
    d.mem_limit_bytes = UINT64_C(1) << 30;
    d.on_oversize = H5SHUF_OVERSIZE_RECURSE;
    d.strategy = H5SHUF_STRATEGY_AUTO;
    d.checkpoint_bytes = UINT64_C(1) << 30;
    d.checkpoint_seconds = 60;
    size_t known = size < sizeof d ? size : sizeof d;
    memcpy(opts, &d, known);
    if (size > known) /* a newer header's fields, unknown here: zero, which h5shuf__abi_options_take accepts */
        memset((char *)opts + known, 0, size - known);
}

int h5shuf__abi_options_take(h5shuf_options *dst, const h5shuf_options *opts, char *why, size_t n)
{
    h5shuf_options_init_size(dst, sizeof *dst);
    if (!opts)
        return 1;
    size_t size = opts->struct_size;
    if (size < SIZE_MIN_TAKEN || size > SIZE_MAX_TAKEN) {
        snprintf(why, n, "the options' struct_size is %zu, not a size of h5shuf_options (%zu here): initialise "
                         "them with h5shuf_options_init",
                 size, sizeof *dst);
        return 0;
    }
    const unsigned char *past = (const unsigned char *)opts;
    for (size_t k = sizeof *dst; k < size; k++)
        if (past[k]) {
            snprintf(why, n, "an option this libh5shuf (%s) does not know is set: byte %zu of h5shuf_options "
                             "(the program was built with a newer h5shuf.h, whose struct has %zu bytes; this one's %zu)",
                     H5SHUF_VERSION_STRING, k, size, sizeof *dst);
            return 0;
        }
    memcpy(dst, opts, size < sizeof *dst ? size : sizeof *dst);
    dst->struct_size = sizeof *dst;
    return 1;
}

int h5shuf__abi_out_check(const void *out, const char *what, const char *init, struct h5shuf_err *err)
{
    size_t size;
    memcpy(&size, out, sizeof size);
    if (size < SIZE_MIN_TAKEN || size > SIZE_MAX_TAKEN)
        return h5shuf__fail(err, H5SHUF_EINVAL, "the %s's struct_size is %zu, not a size of its struct: set it with %s",
                            what, size, init);
    return H5SHUF_OK;
}

void h5shuf__abi_out_put(void *out, const void *src, size_t lib_size)
{
    size_t size;
    memcpy(&size, out, sizeof size);
    size_t put = size < lib_size ? size : lib_size;
    memcpy((char *)out + sizeof size, (const char *)src + sizeof size, put - sizeof size);
    memcpy(out, &put, sizeof put);
}
