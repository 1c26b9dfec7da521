/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault.h - fault injection for tests (the SQLite habit), compiled in only with H5SHUF_FAULT_INJECTION.
 *
 * Every allocation of the library and every HDF5 I/O or creation call it makes passes a numbered fault
 * point; with H5SHUF_FAULT_AT=N in the environment the Nth point fails (fault.c).  Included by every
 * file of the library that allocates, so that malloc and friends are counted.
 */
#ifndef H5SHUF_FAULT_H
#define H5SHUF_FAULT_H

#include "base.h"

#ifdef H5SHUF_FAULT_INJECTION
H5SHUF_INTERNAL int h5shuf__fault(void);
H5SHUF_INTERNAL int h5shuf__fault_hdf5(void); /* also pushes "injected fault" on HDF5's error stack */
H5SHUF_INTERNAL long h5shuf__fault_count(void); /* points passed so far (counted while H5SHUF_FAULT_AT is set) */
H5SHUF_INTERNAL void *h5shuf__fault_malloc(size_t n);
H5SHUF_INTERNAL void *h5shuf__fault_calloc(size_t n, size_t size);
H5SHUF_INTERNAL void *h5shuf__fault_realloc(void *p, size_t n);
H5SHUF_INTERNAL char *h5shuf__fault_strdup(const char *s);
H5SHUF_INTERNAL char *h5shuf__fault_strndup(const char *s, size_t n);
#ifndef H5SHUF_FAULT_IMPL
#include <stdlib.h> /* before the macros below: its own declarations stay as they are */
#include <string.h>
#define malloc(n) h5shuf__fault_malloc(n)
#define calloc(n, s) h5shuf__fault_calloc(n, s)
#define realloc(p, n) h5shuf__fault_realloc(p, n)
#define strdup(s) h5shuf__fault_strdup(s)
#define strndup(s, n) h5shuf__fault_strndup(s, n)
#endif
#define H5SHUF_FAULT() h5shuf__fault_hdf5() /* at an HDF5 I/O or creation call: fail it */
/* A point where a kill may land (a write, a sync, a journal record): with H5SHUF_KILL_AT=N in the
 * environment the process sends itself SIGKILL at the Nth one (tests/kill_sweep.sh), or SIGSTOP with
 * H5SHUF_KILL_SIGNAL=STOP (a process of a distributed run held there while the others go on as far as
 * they can: tests/kill_sweep_mpi.sh); with H5SHUF_KILL_COUNT=FILE the number of points passed is written
 * to FILE at a normal exit; with H5SHUF_KILL_TRACE=FILE each point appends a line "N SITE" to FILE (N from
 * 1, SITE the call's "file.c:line", a static string), so that a sweep can tell points of one site repeated
 * one after the other (the writes between two journal records) from the others. */
H5SHUF_INTERNAL void h5shuf__kill_point(const char *site);
#define H5SHUF_KILL_STR_(x) #x
#define H5SHUF_KILL_STR(x) H5SHUF_KILL_STR_(x)
#define H5SHUF_KILL_POINT() h5shuf__kill_point(__FILE__ ":" H5SHUF_KILL_STR(__LINE__))
#define H5SHUF_KILL_POINT_AT(site) h5shuf__kill_point(site) /* site: a static string naming the point */
#else
#define H5SHUF_FAULT() 0
#define H5SHUF_KILL_POINT() ((void)0)
#define H5SHUF_KILL_POINT_AT(site) ((void)(site))
#endif

#endif /* H5SHUF_FAULT_H */
