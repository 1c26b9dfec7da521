/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_pile.c - read pile j of an h5shuf pile file and put its rows in the shuffle's order
 * (docs/lazy.md): the lazy second pass, one pile at a time, for a training loader.
 *
 * Sorting pile j by (h5shuf_key(seed, id), id) gives rows offset_j .. offset_j + rows_j - 1 of
 * `h5shuf gather`'s output; any uniform in-memory shuffle of the pile would do as well for training.
 * Writes, for each row in that order, its global input row id (8 bytes) and the row of dataset d0.
 *
 *   cc read_pile.c $(pkg-config --cflags --libs h5shuf hdf5) -o read_pile
 *   ./read_pile piles.h5 3 > pile3.bin
 */
#include <hdf5.h>
#include <h5shuf.h>
#include <stdio.h>
#include <stdlib.h>

struct rec {
    uint64_t key, id;
    size_t at; /* row in the pile as stored */
};

static int by_key(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: read_pile PILES.h5 J\n"), 2;
    h5shuf_register_zstd(); /* the piles are zstd-compressed by default */
    hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return 1;
    /* An attribute is read into a buffer only once its shape and type are known to fit it: the seed is
     * one integer (a file could hold 1000 there, and H5Aread would write them all). */
    uint64_t seed = 0;
    hid_t a = H5Aopen(file, "h5shuf_seed", H5P_DEFAULT);
    hid_t a_space = a < 0 ? -1 : H5Aget_space(a), a_type = a < 0 ? -1 : H5Aget_type(a);
    int ok = a_space >= 0 && a_type >= 0 && H5Sget_simple_extent_npoints(a_space) == 1 &&
             H5Tget_class(a_type) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_UINT64, &seed) >= 0;
    H5Tclose(a_type), H5Sclose(a_space), H5Aclose(a);
    if (!ok)
        return fprintf(stderr, "read_pile: %s: attribute h5shuf_seed is not one integer\n", argv[1]), 1;

    char name[64];
    snprintf(name, sizeof name, "/piles/%06lu", strtoul(argv[2], NULL, 10));
    hid_t pile = H5Gopen2(file, name, H5P_DEFAULT);
    hid_t ids_ds = pile < 0 ? -1 : H5Dopen2(pile, "index", H5P_DEFAULT);
    hid_t rows_ds = pile < 0 ? -1 : H5Dopen2(pile, "d0", H5P_DEFAULT);
    if (ids_ds < 0 || rows_ds < 0)
        return fprintf(stderr, "read_pile: %s: no such pile\n", name), 1;
    hid_t space = H5Dget_space(rows_ds);
    size_t n = (size_t)H5Sget_simple_extent_npoints(space); /* elements; rows are n / dims[0] each */
    hsize_t dims[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(space, dims, NULL);
    size_t rows = (size_t)dims[0];
    hid_t ids_space = H5Dget_space(ids_ds); /* one id a row, or the read below overruns ids */
    hssize_t nids = H5Sget_simple_extent_npoints(ids_space);
    H5Sclose(ids_space);
    if (nids < 0 || (size_t)nids != rows)
        return fprintf(stderr, "read_pile: %s: not one id for each of its %zu rows\n", name, rows), 1;
    hid_t type = H5Dget_type(rows_ds); /* rows move as raw bytes of the file type, as h5shuf moves them */
    size_t row_bytes = rows ? n / rows * H5Tget_size(type) : 0;

    uint64_t *ids = malloc((rows ? rows : 1) * sizeof *ids);
    unsigned char *data = malloc(rows ? rows * row_bytes : 1);
    struct rec *order = malloc((rows ? rows : 1) * sizeof *order);
    if (!ids || !data || !order)
        return 1;
    if (H5Dread(ids_ds, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) < 0 ||
        (rows && H5Dread(rows_ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
        return 1;
    for (size_t r = 0; r < rows; r++)
        order[r] = (struct rec){h5shuf_key(seed, ids[r]), ids[r], r};
    qsort(order, rows, sizeof *order, by_key); /* the contract: rows sorted by (key, id) */
    for (size_t r = 0; r < rows; r++) {
        fwrite(&order[r].id, sizeof order[r].id, 1, stdout);
        fwrite(data + order[r].at * row_bytes, 1, row_bytes, stdout);
    }
    free(ids), free(data), free(order);
    H5Tclose(type), H5Sclose(space), H5Dclose(ids_ds), H5Dclose(rows_ds), H5Gclose(pile), H5Fclose(file);
    return 0;
}
