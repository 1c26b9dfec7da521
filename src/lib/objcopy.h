/*
 * objcopy.h - whole-file mode: every object of the first input other than the shuffled datasets copied
 * into an output file, with its attributes and links (objcopy.c).
 */
#ifndef H5SHUF_OBJCOPY_H
#define H5SHUF_OBJCOPY_H

#include <hdf5.h>

#include "inputs.h"

struct objref;

/* The state of one file's copy: the objects seen (by address in the first input) and the hard links
 * to make once the shuffled datasets exist.  Zero it, then set err, src and dsets. */
struct h5shuf_objcopy {
    struct h5shuf_err *err;
    const struct h5shuf_input *src;         /* the first input (open): its objects are copied */
    const struct h5shuf_datasets *dsets;    /* the shuffled datasets: not copied, linked to */
    struct objref *slot;
    size_t cap, used;
    char **link_from, **link_to; /* deferred hard links: link_from[k] -> existing link_to[k] */
    size_t nlinks, links_cap;
    int st;
};

/* Copy the source's objects into the open file out (named ofile, for messages), every group recreated
 * and walked, the shuffled datasets left for the caller to create at their paths. */
H5SHUF_INTERNAL int h5shuf__objcopy_tree(struct h5shuf_objcopy *cs, hid_t out, const char *ofile);
/* Make the hard links deferred by the copy (to objects seen twice, and to shuffled datasets), once the
 * shuffled datasets exist. */
H5SHUF_INTERNAL int h5shuf__objcopy_links(struct h5shuf_objcopy *cs, hid_t out, const char *ofile);
H5SHUF_INTERNAL void h5shuf__objcopy_free(struct h5shuf_objcopy *cs);

#endif /* H5SHUF_OBJCOPY_H */
