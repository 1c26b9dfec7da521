/*
 * fuzz_parse.c - libFuzzer target for every text the tool parses from its command line: the
 * FILE[:/path,...] spec, sizes with K/M/G/T suffixes, filter specs (--compression) and chunk shapes.
 * The first byte picks the parser; the rest is the text.  Each parser must return an error or a
 * result, never crash, leak or read out of bounds (run under ASan+UBSan).
 */
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    struct h5shuf_err err = {0};
    switch (data[0] % 4) {
    case 0: {
        struct h5shuf_spec spec;
        if (h5shuf__spec_parse(text, &spec, &err) == H5SHUF_OK) {
            if (!spec.file || (spec.npaths && !spec.paths))
                abort();
            for (size_t i = 0; i < spec.npaths; i++)
                if (spec.paths[i][0] != '/' || !spec.paths[i][1])
                    abort(); /* every path accepted is absolute and not the root */
            h5shuf__spec_clear(&spec);
        }
        break;
    }
    case 1: {
        uint64_t bytes;
        h5shuf_parse_size(text, &bytes);
        break;
    }
    case 2: {
        struct h5shuf_filters f;
        if (h5shuf__filters_parse(text, "keep", 1, "--compression", &f, &err) == H5SHUF_OK && !f.keep &&
            f.codec == H5SHUF_CODEC_GZIP && (f.level < 0 || f.level > 9))
            abort();
        break;
    }
    default: {
        uint64_t dims[H5SHUF_RANK_MAX];
        int rank;
        if (h5shuf__chunk_parse(text, dims, &rank, &err) == H5SHUF_OK)
            for (int k = 0; k < rank; k++)
                if (dims[k] == 0)
                    abort();
        break;
    }
    }
    free(text);
    return 0;
}
