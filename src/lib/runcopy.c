/*
 * runcopy.c - the bytes of split chunks moved between the caller's rows and a chunk (runcopy.h): runs of a
 * few bytes, strided on one side.
 */
#include <string.h>

#include "runcopy.h"

void h5shuf__copy_lines(unsigned char *d, size_t dstride, const unsigned char *s, size_t sstride, size_t lines,
                        size_t run)
{
    switch (run) {
    case 1:
        for (size_t i = 0; i < lines; i++)
            d[i * dstride] = s[i * sstride];
        break;
    case 2:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 2);
        break;
    case 4:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 4);
        break;
    case 8:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, 8);
        break;
    default:
        for (size_t i = 0; i < lines; i++)
            memcpy(d + i * dstride, s + i * sstride, run);
    }
}


void h5shuf__copy_runs(unsigned char *d, size_t drow, const size_t *doff, const unsigned char *s, size_t srow,
                       const size_t *soff, size_t rows, size_t nruns, size_t run)
{
    for (size_t k = 0; k < rows; k++, d += drow, s += srow) {
        switch (run) {
        case 1:
            for (size_t i = 0; i < nruns; i++)
                d[doff[i]] = s[soff[i]];
            break;
        case 2:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 2);
            break;
        case 4:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 4);
            break;
        case 8:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], 8);
            break;
        default:
            for (size_t i = 0; i < nruns; i++)
                memcpy(d + doff[i], s + soff[i], run);
        }
    }
}
