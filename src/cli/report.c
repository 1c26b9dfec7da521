/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - the plan as text and the run as JSON (for pipelines: one object on stdout, parseable by
 * any JSON reader; numbers are plain integers or decimals, strings escaped per RFC 8259).
 */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <inttypes.h>
#include <string.h>
#include <sys/resource.h>

static double mib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0);
}

void report_plan_text(FILE *out, const h5shuf_job *job, const h5shuf_plan *p, int seed_drawn)
{
    if (seed_drawn) /* --plan without -s: a run draws its own seed; this one reproduces the plan */
        fprintf(out, "h5shuf: seed %" PRIu64 " (drawn for this plan: a run without -s draws another; -s %" PRIu64
                     " runs this plan)\n", p->seed, p->seed);
    else
        fprintf(out, "h5shuf: seed %" PRIu64 "\n", p->seed);
    fprintf(out, "h5shuf: datasets:");
    for (size_t d = 0; h5shuf_job_dataset(job, d); d++)
        fprintf(out, " %s", h5shuf_job_dataset(job, d));
    fprintf(out, "\n");
    fprintf(out, "h5shuf: rows %" PRIu64 ", %" PRIu64 " bytes a row, %" PRIu64 " bytes (%.1f MiB) in all\n", p->rows,
            p->row_bytes, p->total_bytes, mib(p->total_bytes));
    fprintf(out, "h5shuf: strategy %s\n", h5shuf_job_strategy_why(job));
    if (*h5shuf_job_resume_text(job))
        fprintf(out, "h5shuf: %s\n", h5shuf_job_resume_text(job));
    for (const char *line = h5shuf_job_mix_text(job), *end; *line; line = end + 1) { /* --mix: what it chose */
        end = strchr(line, '\n');
        fprintf(out, "h5shuf: %.*s\n", (int)(end - line), line);
    }
    if (p->strategy == H5SHUF_STRATEGY_DIRECT) {
        fprintf(out, "h5shuf: %" PRIu64 " window%s of keys, %" PRIu64 " row%s in flight, %u codec threads\n",
                p->direct_windows, p->direct_windows == 1 ? "" : "s", p->direct_slots, p->direct_slots == 1 ? "" : "s",
                p->threads);
    } else {
        fprintf(out, "h5shuf: piles %" PRIu64 ", target %" PRIu64 " rows, bound %" PRIu64 " rows (s + 6 sqrt(s))\n",
                p->piles, p->pile_target_rows, p->pile_bound_rows);
        fprintf(out, "h5shuf: slab %" PRIu64 " rows, pile buffer %" PRIu64 " rows, %u codec threads\n", p->slab_rows,
                p->pile_buffer_rows, p->threads);
        if (p->slab_cache_bytes) /* chunks that do not tile the slabs: decoded once, kept for the next slab */
            fprintf(out, "h5shuf: chunk rows kept between slabs %.1f MiB\n", mib(p->slab_cache_bytes));
    }
    if (p->pile_bound_bytes) /* variable-length rows: row_bytes above holds an estimate of their payload */
        fprintf(out, "h5shuf: variable-length rows: a pile may use %.1f MiB (row bytes estimated from a sample)\n",
                mib(p->pile_bound_bytes));
    fprintf(out, "h5shuf: memory budget %.1f MiB, planned buffers %.1f MiB\n", mib(p->mem_limit_bytes),
            mib(p->mem_planned_bytes));
    fprintf(out, "h5shuf: scratch about %.1f MiB, %.1f MiB free%s\n", mib(p->scratch_estimate_bytes),
            mib(p->scratch_free_bytes), p->same_filesystem ? " (same filesystem as the output)" : "");
    fprintf(out, "h5shuf: output about %.1f MiB, %.1f MiB free (inputs store %.1f MiB)\n", mib(p->output_estimate_bytes),
            mib(p->output_free_bytes), mib(p->input_stored_bytes));
    report_outputs_text(out, job);
}

void report_outputs_text(FILE *out, const h5shuf_job *job)
{
    uint64_t first, rows;
    if (!h5shuf_job_output_file(job, 1, NULL, NULL))
        return;
    for (size_t k = 0; h5shuf_job_output_file(job, k, &first, &rows); k++)
        fprintf(out, "h5shuf: output %s: rows %" PRIu64 "..%" PRIu64 " (%" PRIu64 " rows)\n",
                h5shuf_job_output_file(job, k, NULL, NULL), first, first + rows - (rows > 0), rows);
}

void report_windows_text(FILE *out, const h5shuf_mixing_windows *m)
{
    fprintf(out,
            "h5shuf: mixing, every window of about %" PRIu64 " rows (%" PRIu64 " windows of %" PRIu64 "..%" PRIu64
            " rows): chi-square %.1f, df %" PRIu64 ", p %.4g; windows with p < 0.001: %" PRIu64 " (%.1f expected)\n",
            m->window_rows, m->windows, m->rows_min, m->rows_max, m->chi2, m->df, m->p_value, m->below_001,
            (double)m->windows / 1000);
    fprintf(out, "h5shuf:   the worst window: rows %" PRIu64 "..%" PRIu64 ", chi-square %.2f, p %.4g (x %" PRIu64
                 " windows: %.4g)\n",
            m->worst_first_row, m->worst_first_row + m->worst_rows - (m->worst_rows > 0), m->worst_chi2,
            m->worst_p_value, m->windows,
            m->worst_p_value * (double)m->windows < 1 ? m->worst_p_value * (double)m->windows : 1.0);
}

void report_mixing_text(FILE *out, char *const *inputs, const h5shuf_mixing *mix)
{
    for (int w = 0; w < 2; w++) {
        const h5shuf_mixing *m = &mix[w];
        fprintf(out, "h5shuf: mixing, %s %" PRIu64 " output rows (from row %" PRIu64 "): chi-square %.3f, df %" PRIu64
                     ", p %.4g\n",
                w ? "last" : "first", m->window_rows, m->first_row, m->chi2, m->df, m->p_value);
        for (size_t f = 0; f < m->ninputs; f++)
            fprintf(out, "h5shuf:   %s: %" PRIu64 " rows (%.2f%%), expected %.1f (%.2f%%)\n", inputs[f], m->counts[f],
                    m->window_rows ? 100.0 * (double)m->counts[f] / (double)m->window_rows : 0.0, m->expected[f],
                    m->window_rows ? 100.0 * m->expected[f] / (double)m->window_rows : 0.0);
    }
}

/* The length of the valid UTF-8 sequence at s (RFC 3629: no overlong form, no surrogate, at most
 * U+10FFFF), 0 when the byte at s does not start one. */
static size_t utf8_length(const unsigned char *s)
{
    const unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* (overlong) */
        hi = c == 0xed ? 0x9f : 0xbf; /* (surrogates) */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf; /* (past U+10FFFF) */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

/* A JSON string (RFC 8259) of the bytes s: valid UTF-8 as it is, '"', '\\' and control characters
 * escaped, and each byte that is not part of valid UTF-8 (file names are bytes) as the lone surrogate
 * "\\udcXX" (U+DC80 + the byte), as Python's surrogateescape decodes it: so the report is valid UTF-8,
 * Python's json.loads gives os.fsdecode of the name, and os.fsencode of that the bytes (docs/guide.md,
 * section 14). */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; c && *c;) {
        const size_t n = utf8_length(c);
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else if (n == 0)
            fprintf(out, "\\udc%02x", *c);
        else
            fwrite(c, 1, n, out);
        c += n ? n : 1;
    }
    fputc('"', out);
}

static const char *g_json_extra;

void report_json_extra(const char *fields)
{
    g_json_extra = fields;
}

void report_json(FILE *out, const h5shuf_job *job, const h5shuf_plan *p, char *const *inputs, int ninputs,
                 const char *output, const struct progress *prog, double seconds, int status, const char *errmsg,
                 int check_status, const h5shuf_mixing *mixing, const h5shuf_mixing_windows *windows)
{
    fprintf(out, "{\"h5shuf_version\": ");
    json_string(out, h5shuf_version());
    fprintf(out, ", \"status\": ");
    json_string(out, status == H5SHUF_OK ? "ok" : h5shuf_strerror(status));
    if (status != H5SHUF_OK) {
        fprintf(out, ", \"error\": ");
        json_string(out, errmsg);
    }
    fprintf(out, ", \"inputs\": [");
    for (int i = 0; i < ninputs; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, inputs[i]);
    }
    fprintf(out, "], \"output\": ");
    json_string(out, output);
    if (p) {
        fprintf(out, ", \"seed\": %" PRIu64 ", \"datasets\": [", p->seed);
        for (size_t d = 0; h5shuf_job_dataset(job, d); d++) {
            fputs(d ? ", " : "", out);
            json_string(out, h5shuf_job_dataset(job, d));
        }
        fprintf(out,
                "], \"plan\": {\"rows\": %" PRIu64 ", \"row_bytes\": %" PRIu64 ", \"total_bytes\": %" PRIu64
                ", \"piles\": %" PRIu64 ", \"pile_target_rows\": %" PRIu64 ", \"pile_bound_rows\": %" PRIu64
                ", \"slab_rows\": %" PRIu64 ", \"pile_buffer_rows\": %" PRIu64 ", \"mem_limit_bytes\": %" PRIu64
                ", \"mem_planned_bytes\": %" PRIu64 ", \"input_stored_bytes\": %" PRIu64
                ", \"scratch_estimate_bytes\": %" PRIu64 ", \"output_estimate_bytes\": %" PRIu64
                ", \"scratch_free_bytes\": %" PRIu64 ", \"output_free_bytes\": %" PRIu64 ", \"threads\": %u"
                ", \"pile_bound_bytes\": %" PRIu64 ", \"strategy\": \"%s\", \"direct_windows\": %" PRIu64
                ", \"direct_slots\": %" PRIu64 ", \"direct_min_bytes\": %" PRIu64 ", \"slab_cache_bytes\": %" PRIu64 "}",
                p->rows, p->row_bytes, p->total_bytes, p->piles, p->pile_target_rows, p->pile_bound_rows,
                p->slab_rows, p->pile_buffer_rows, p->mem_limit_bytes, p->mem_planned_bytes, p->input_stored_bytes,
                p->scratch_estimate_bytes, p->output_estimate_bytes, p->scratch_free_bytes, p->output_free_bytes, p->threads,
                p->pile_bound_bytes, p->strategy == H5SHUF_STRATEGY_DIRECT ? "direct" : "two-pass", p->direct_windows,
                p->direct_slots, p->direct_min_bytes, p->slab_cache_bytes);
        fprintf(out, ", \"outputs\": [");
        uint64_t first, rows;
        for (size_t k = 0; h5shuf_job_output_file(job, k, &first, &rows); k++) {
            fprintf(out, "%s{\"file\": ", k ? ", " : "");
            json_string(out, h5shuf_job_output_file(job, k, NULL, NULL));
            fprintf(out, ", \"first_row\": %" PRIu64 ", \"rows\": %" PRIu64 "}", first, rows);
        }
        fprintf(out, "]");
        const char *line = h5shuf_job_mix_text(job);
        if (*line) { /* --mix: what the plan chose, a string a line */
            fprintf(out, ", \"mix\": [");
            for (const char *end; *line; line = end + 1) {
                end = strchr(line, '\n');
                char buf[1024];
                snprintf(buf, sizeof buf, "%.*s", (int)(end - line), line);
                fprintf(out, "%s", line == h5shuf_job_mix_text(job) ? "" : ", ");
                json_string(out, buf);
            }
            fprintf(out, "]");
        }
    }
    if (mixing) {
        fprintf(out, ", \"mixing\": [");
        for (int w = 0; w < 2; w++) {
            const h5shuf_mixing *m = &mixing[w];
            fprintf(out, "%s{\"window\": \"%s\", \"first_row\": %" PRIu64 ", \"rows\": %" PRIu64
                         ", \"chi2\": %.6g, \"df\": %" PRIu64 ", \"p_value\": %.6g, \"counts\": [",
                    w ? ", " : "", w ? "last" : "first", m->first_row, m->window_rows, m->chi2, m->df, m->p_value);
            for (size_t f = 0; f < m->ninputs; f++)
                fprintf(out, "%s%" PRIu64, f ? ", " : "", m->counts[f]);
            fprintf(out, "], \"expected\": [");
            for (size_t f = 0; f < m->ninputs; f++)
                fprintf(out, "%s%.6g", f ? ", " : "", m->expected[f]);
            fprintf(out, "]}");
        }
        fprintf(out, "]");
    }
    if (windows)
        fprintf(out,
                ", \"mixing_windows\": {\"window_rows\": %" PRIu64 ", \"windows\": %" PRIu64 ", \"rows_min\": %" PRIu64
                ", \"rows_max\": %" PRIu64 ", \"chi2\": %.6g, \"df\": %" PRIu64 ", \"p_value\": %.6g, \"worst_chi2\": %.6g"
                ", \"worst_first_row\": %" PRIu64 ", \"worst_rows\": %" PRIu64 ", \"worst_p_value\": %.6g, \"below_001\": %" PRIu64
                "}",
                windows->window_rows, windows->windows, windows->rows_min, windows->rows_max, windows->chi2, windows->df,
                windows->p_value, windows->worst_chi2, windows->worst_first_row, windows->worst_rows,
                windows->worst_p_value, windows->below_001);
    if (prog) {
        fprintf(out, ", \"passes\": [");
        for (int i = 0; i < prog->npasses; i++) {
            const struct pass_record *r = &prog->passes[i];
            fprintf(out, "%s{\"name\": \"%s\", \"rows\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"seconds\": %.3f}",
                    i ? ", " : "", progress_phase_name(r->phase), r->rows, r->bytes, r->seconds);
        }
        fprintf(out, "], \"seconds\": %.3f", seconds);
        if (p)
            fprintf(out, ", \"restarts\": %" PRIu64 ", \"piles_split\": %" PRIu64 ", \"scratch_bytes\": %" PRIu64,
                    p->restarts, p->splits, p->scratch_bytes);
        if (p && p->exchanged_bytes) /* h5shuf-mpi: what pass 2 sent between processes */
            fprintf(out, ", \"exchanged_bytes\": %" PRIu64, p->exchanged_bytes);
        if (g_json_extra)
            fputs(g_json_extra, out);
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            fprintf(out, ", \"peak_rss_bytes\": %lld", (long long)ru.ru_maxrss * 1024);
        if (check_status >= 0)
            fprintf(out, ", \"check\": \"%s\"", check_status == H5SHUF_OK ? "ok" : "failed");
    }
    fprintf(out, "}\n");
}
