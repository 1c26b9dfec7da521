/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * layout_probe.c - the layout of the public structs as this compiler makes it, for the Python package's
 * ctypes mirrors (python/h5shuf/_lib.py): one line per field, "STRUCT FIELD OFFSET SIZE", and one per
 * struct, "STRUCT sizeof SIZE".  tests/python_api.py compares them with ctypes' own; a field added,
 * removed, renamed or moved in include/h5shuf.h but not in the mirror fails there (or here, to compile).
 */
#include <h5shuf.h>
#include <stddef.h>
#include <stdio.h>

#define FIELD(s, f) printf("%s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s *)0)->f))
#define SIZE(s) printf("%s sizeof %zu\n", #s, sizeof(s))

int main(void)
{
    FIELD(h5shuf_options, struct_size);
    FIELD(h5shuf_options, seed), FIELD(h5shuf_options, seed_set), FIELD(h5shuf_options, mem_limit_bytes);
    FIELD(h5shuf_options, tmpdir), FIELD(h5shuf_options, on_oversize), FIELD(h5shuf_options, force);
    FIELD(h5shuf_options, progress), FIELD(h5shuf_options, progress_user);
    FIELD(h5shuf_options, compression), FIELD(h5shuf_options, chunk_shape), FIELD(h5shuf_options, index_path);
    FIELD(h5shuf_options, scratch_compression), FIELD(h5shuf_options, threads);
    FIELD(h5shuf_options, source_index_path), FIELD(h5shuf_options, shards), FIELD(h5shuf_options, split);
    FIELD(h5shuf_options, head_rows), FIELD(h5shuf_options, head_set), FIELD(h5shuf_options, drop_references);
    FIELD(h5shuf_options, allow_lossy), FIELD(h5shuf_options, check), FIELD(h5shuf_options, strategy);
    FIELD(h5shuf_options, allow_external);
    FIELD(h5shuf_options, checkpoint_bytes);
    FIELD(h5shuf_options, checkpoint_seconds);
    FIELD(h5shuf_options, resume);
    FIELD(h5shuf_options, checkpoint_sync);
    FIELD(h5shuf_options, mix);
    FIELD(h5shuf_options, mix_rows);
    FIELD(h5shuf_options, mix_rows_set);
    FIELD(h5shuf_options, allow_repeat);
    FIELD(h5shuf_options, stratify);
    FIELD(h5shuf_options, reserved0);
    SIZE(h5shuf_options);

    FIELD(h5shuf_plan, struct_size);
    FIELD(h5shuf_plan, rows), FIELD(h5shuf_plan, row_bytes), FIELD(h5shuf_plan, total_bytes);
    FIELD(h5shuf_plan, ndatasets), FIELD(h5shuf_plan, piles), FIELD(h5shuf_plan, pile_target_rows);
    FIELD(h5shuf_plan, pile_bound_rows), FIELD(h5shuf_plan, slab_rows), FIELD(h5shuf_plan, pile_buffer_rows);
    FIELD(h5shuf_plan, mem_limit_bytes), FIELD(h5shuf_plan, mem_planned_bytes), FIELD(h5shuf_plan, seed);
    FIELD(h5shuf_plan, restarts), FIELD(h5shuf_plan, splits), FIELD(h5shuf_plan, scratch_bytes);
    FIELD(h5shuf_plan, pile_bound_bytes), FIELD(h5shuf_plan, input_stored_bytes);
    FIELD(h5shuf_plan, scratch_estimate_bytes), FIELD(h5shuf_plan, output_estimate_bytes);
    FIELD(h5shuf_plan, scratch_free_bytes), FIELD(h5shuf_plan, output_free_bytes);
    FIELD(h5shuf_plan, same_filesystem), FIELD(h5shuf_plan, threads), FIELD(h5shuf_plan, pipelined);
    FIELD(h5shuf_plan, strategy), FIELD(h5shuf_plan, direct_windows), FIELD(h5shuf_plan, direct_slots);
    FIELD(h5shuf_plan, direct_min_bytes), FIELD(h5shuf_plan, slab_cache_bytes), FIELD(h5shuf_plan, exchanged_bytes);
    SIZE(h5shuf_plan);

    FIELD(h5shuf_mixing, struct_size);
    FIELD(h5shuf_mixing, window_rows), FIELD(h5shuf_mixing, first_row), FIELD(h5shuf_mixing, ninputs);
    FIELD(h5shuf_mixing, counts), FIELD(h5shuf_mixing, expected), FIELD(h5shuf_mixing, chi2);
    FIELD(h5shuf_mixing, df), FIELD(h5shuf_mixing, p_value);
    SIZE(h5shuf_mixing);
    FIELD(h5shuf_mixing_windows, struct_size);
    FIELD(h5shuf_mixing_windows, window_rows), FIELD(h5shuf_mixing_windows, windows);
    FIELD(h5shuf_mixing_windows, rows_min), FIELD(h5shuf_mixing_windows, rows_max), FIELD(h5shuf_mixing_windows, chi2);
    FIELD(h5shuf_mixing_windows, df), FIELD(h5shuf_mixing_windows, p_value), FIELD(h5shuf_mixing_windows, worst_chi2);
    FIELD(h5shuf_mixing_windows, worst_first_row), FIELD(h5shuf_mixing_windows, worst_rows);
    FIELD(h5shuf_mixing_windows, worst_p_value), FIELD(h5shuf_mixing_windows, below_001);
    SIZE(h5shuf_mixing_windows);
    return 0;
}
