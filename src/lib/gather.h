/*
 * gather.h - pass 2: each pile loaded, sorted by key and written in order (gather.c).
 */
#ifndef H5SHUF_GATHER_H
#define H5SHUF_GATHER_H

#include "piles.h"

/* Pass 2: for each pile in key order, load it, sort it by key and stream its rows to the writer. */
H5SHUF_INTERNAL int h5shuf__gather(h5shuf_job *job, struct h5shuf_scratch *sc);

#endif /* H5SHUF_GATHER_H */
