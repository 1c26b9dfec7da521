/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * objcopy.h - the objects an output file holds besides the shuffled rows, planned once from the first
 * input (objcopy.c): in whole-file mode every object and link of the file, in dataset mode the dimension
 * scales of the shuffled datasets; each copied with its attributes, their references rewritten to the
 * output's objects.  output.c walks the plan to make each output file.
 */
#ifndef H5SHUF_OBJCOPY_H
#define H5SHUF_OBJCOPY_H

#include <hdf5.h>

#include "datasets.h"
#include "inputs.h"
#include "refmap.h"

/* What an entry of the plan makes. */
enum h5shuf_obj_kind {
    H5SHUF_OBJ_GROUP,    /* a group, recreated (the root: its attributes only) */
    H5SHUF_OBJ_DATASET,  /* a dataset copied as it is (H5Ocopy, its attributes by h5shuf) */
    H5SHUF_OBJ_TYPE,     /* a committed datatype, likewise */
    H5SHUF_OBJ_SHUFFLED, /* shuffled dataset d, made by output.c at its output path */
    H5SHUF_OBJ_SOFT,     /* a soft link, pointing where it pointed */
    H5SHUF_OBJ_EXTERNAL, /* an external link, likewise */
    H5SHUF_OBJ_ALIAS     /* a further hard link to an object made earlier */
};

/* One entry: an object or link at path, in the order the input holds them. */
struct h5shuf_obj {
    enum h5shuf_obj_kind kind;
    char *path;            /* in the input, and in the output (shuffled datasets: see dsets->ds[d].out_path) */
    char *value;           /* SOFT: the target path; EXTERNAL: the file; ALIAS: the output path it links to */
    char *value2;          /* EXTERNAL: the object path in that file */
    size_t d;              /* SHUFFLED: the dataset */
    H5T_cset_t cset;       /* the link name's character set */
    unsigned link_order;   /* GROUP: its link creation-order flags (H5P_CRT_ORDER_*) */
    unsigned attr_order;   /* GROUP, DATASET, TYPE: its attribute creation-order flags */
    int deferred;          /* its attributes hold references (or a DATASET's data): written last, when every
                            * object exists */
    int ref_data;          /* DATASET whose type holds references: created empty, its data rewritten */
};

/* The plan of every output file's objects, with the table of the input objects the output holds. */
struct h5shuf_objcopy {
    struct h5shuf_obj *v;
    size_t n, cap;
    struct h5shuf_refmap map;
    int new_format;        /* the output needs HDF5 1.8's object format: an attribute too large for an
                            * object header (64 KiB), or an input written in it (superblock >= 2) */
    unsigned root_link_order, root_attr_order; /* the root group's creation-order flags */
    int netcdf;            /* the input is a netCDF-4 file: h5shuf's own attributes are fixed-length text, as
                            * the classic model allows */
    struct h5shuf_drops drops; /* the references --drop-references makes null, by attribute or dataset */
    int allow_external;    /* copy datasets whose rows are in other files (else refused: dscheck.h) */
    char *external;        /* the first such dataset copied, for a warning; owned; NULL when none */
};

/* Plan the output's objects from the first input (open) and the shuffled datasets: the whole file
 * (whole_file), or the shuffled datasets and the scales extra[0..nextra) (dataset mode).  Every
 * reference the output's attributes and copied datasets hold, and every one the first input's rows of a
 * shuffled dataset of references hold, is checked here: one to an object the output does not hold (or a
 * region of a shuffled dataset) is H5SHUF_EUNSUPPORTED naming it, unless drop (then it is written null,
 * and oc->drops notes where).  A copied dataset whose rows are in another file (external storage, a virtual
 * dataset) is refused as an input's is (h5shuf__check_storage), unless allow_external (then oc->external
 * names the first).  Free with h5shuf__objcopy_free. */
H5SHUF_INTERNAL int h5shuf__objcopy_plan(struct h5shuf_objcopy *oc, const struct h5shuf_input *first,
                                         const struct h5shuf_datasets *dsets, int whole_file, const char *const *extra,
                                         size_t nextra, int drop, int allow_external, struct h5shuf_err *err);

/* Make entry e (not SHUFFLED; an ALIAS once its target exists) in the open file out (named ofile),
 * without its attributes: groups recreated with their creation-order flags, datasets and committed types
 * copied raw (H5Ocopy), a dataset holding references created empty, links recreated (names in their
 * character set). */
H5SHUF_INTERNAL int h5shuf__objcopy_make(const struct h5shuf_obj *e, const struct h5shuf_input *first, hid_t out,
                                         const char *ofile, struct h5shuf_err *err);

/* Copy entry e's attributes (from the first input's object at e->path to the output's at out_path), and
 * for a ref_data dataset its data, references rewritten through rw (rw->out set to out). */
H5SHUF_INTERNAL int h5shuf__objcopy_attrs(const struct h5shuf_obj *e, const char *out_path,
                                          const struct h5shuf_input *first, hid_t out, const char *ofile,
                                          struct h5shuf_rewrite *rw, struct h5shuf_err *err);

/* Create the groups missing on the way to path in the open file out, without timestamps
 * (H5Pset_create_intermediate_group would give them the default, clock-stamped properties).  < 0 on an
 * HDF5 error (its stack says why). */
H5SHUF_INTERNAL herr_t h5shuf__make_parents(hid_t out, const char *path);

H5SHUF_INTERNAL void h5shuf__objcopy_free(struct h5shuf_objcopy *oc);

#endif /* H5SHUF_OBJCOPY_H */
