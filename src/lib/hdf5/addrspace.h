/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * addrspace.h - the process's address-space limits (ulimit -v, ulimit -d) against what a run will map,
 * checked while planning: HDF5 1.10 does not survive its own allocations failing (H5AC_create dereferences
 * the cache it failed to allocate when a file is opened; its free lists are corrupt at exit after a failed
 * chunk allocation: SIGSEGV, "double free or corruption"), so a run that would meet the limit is refused
 * before any file is touched, with the -m that would fit (issue 25).
 */
#ifndef H5SHUF_ADDRSPACE_H
#define H5SHUF_ADDRSPACE_H

#include "base.h"
#include "error.h"

/* Bytes a run maps beyond its planned buffers and what is mapped when it is planned: HDF5's metadata cache
 * of each open file, its chunk caches and free lists, stdio.  Measured on HDF5 1.10.8 (VmPeak of a run,
 * less VmSize at planning, less mem_planned_bytes): 3.6 to 7 MiB over contiguous, gzip, variable-length,
 * direct, 40-shard runs at -j 1; twice the largest, and more, as a margin. */
#define H5SHUF_ADDRSPACE_OVERHEAD_BYTES (16u << 20)

/* Bytes that must be free under the limit before the first input is opened (HDF5's cache of one file, its
 * error stacks, the plan's own small allocations). */
#define H5SHUF_ADDRSPACE_OPEN_BYTES (8u << 20)

/* Check that what a run will map fits under the process's address-space limits (RLIMIT_AS against
 * /proc/self/statm's size, RLIMIT_DATA against its data and stack): `planned` bytes of buffers (the plan's
 * mem_planned_bytes, which shrink with the budget; 0 before the plan is made, and then only
 * H5SHUF_ADDRSPACE_OPEN_BYTES are asked for), `chunks` bytes of chunk buffers the plan does not count,
 * H5SHUF_ADDRSPACE_OVERHEAD_BYTES, and `workers` codec threads (each its stack and, with glibc, a malloc
 * arena of 64 MiB).  mem_limit_bytes is the budget (-m) the plan was made for, named in the message.
 * Returns H5SHUF_OK when they fit, when there is no limit, or where the use cannot be read (not Linux);
 * else H5SHUF_EBUDGET with one line in *err: "the address-space limit (ulimit -v) of 293.0 MiB is too
 * small ...: lower -m to at most 180M (or raise the limit)", or "raise the limit to at least N MiB" when
 * no budget would fit. */
H5SHUF_INTERNAL int h5shuf__addrspace_check(uint64_t planned, uint64_t chunks, uint64_t mem_limit_bytes,
                                            unsigned workers, struct h5shuf_err *err);

#endif /* H5SHUF_ADDRSPACE_H */
