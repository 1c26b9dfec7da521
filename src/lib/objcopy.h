/*
 * objcopy.h - whole-file mode: every object of the first input other than the shuffled datasets copied
 * into an output file, with its attributes and links (objcopy.c).
 */
#ifndef H5SHUF_OBJCOPY_H
#define H5SHUF_OBJCOPY_H

#include <hdf5.h>

#include "base.h"

struct objref;

/* The state of one file's copy: the objects seen (by address in the first input) and the hard links
 * to make once the shuffled datasets exist.  Zero it with .job set before use. */
struct h5shuf_objcopy {
    h5shuf_job *job;
    struct objref *slot;
    size_t cap, used;
    char **link_from, **link_to; /* deferred hard links: link_from[k] -> existing link_to[k] */
    size_t nlinks, links_cap;
    int st;
};

/* Copy the first input's objects into out (job->out_name), every group recreated and walked, the
 * shuffled datasets left for the caller to create at their paths. */
H5SHUF_INTERNAL int h5shuf__objcopy_tree(h5shuf_job *job, hid_t out, struct h5shuf_objcopy *cs);
/* Make the hard links deferred by the copy (to objects seen twice, and to shuffled datasets). */
H5SHUF_INTERNAL int h5shuf__objcopy_links(h5shuf_job *job, hid_t out, struct h5shuf_objcopy *cs);
H5SHUF_INTERNAL void h5shuf__objcopy_free(struct h5shuf_objcopy *cs);

#endif /* H5SHUF_OBJCOPY_H */
