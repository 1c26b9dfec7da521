/*
 * mixing.h - the mixing report: how evenly the inputs are spread over a window of the output (mixing.c;
 * the public h5shuf_job_mixing).
 */
#ifndef H5SHUF_MIXING_H
#define H5SHUF_MIXING_H

#include "base.h"

/* P(X >= chi2) for X ~ chi-square(df); 1 when df = 0. */
H5SHUF_INTERNAL double h5shuf__chi2_upper(double chi2, uint64_t df);

#endif /* H5SHUF_MIXING_H */
