/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.c - a progress bar on stderr for hour-long shuffles, in the manner of zstd's and curl's CLIs:
 * redrawn in place a few times a second (never faster than every 0.15 s), only when asked (the caller
 * decides: a terminal, or --progress=always), fitting the terminal's width; and a one-line summary per
 * pass, which is plain text and safe in logs.
 */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_SECONDS 0.15

double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *progress_phase_name(h5shuf_phase phase)
{
    switch (phase) {
    case H5SHUF_PHASE_SCATTER: return "scatter";
    case H5SHUF_PHASE_SPLIT: return "split";
    case H5SHUF_PHASE_GATHER: return "gather";
    case H5SHUF_PHASE_CREATE: return "create";
    case H5SHUF_PHASE_SELECT: return "select";
    case H5SHUF_PHASE_VERIFY: return "verify";
    }
    return "?";
}

void progress_init(struct progress *p, FILE *out, int draw, int summaries, uint64_t row_bytes)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->draw = draw;
    p->summaries = summaries;
    p->row_bytes = row_bytes;
    p->run_start = progress_now();
}

static int terminal_width(FILE *out)
{
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    return 80;
}

static void clock_text(double s, char *buf, size_t cap)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

/* Bytes a row of phase moves: none for a scan of keys (no data is read), and rows are shown instead. */
static uint64_t phase_row_bytes(const struct progress *p, h5shuf_phase phase)
{
    return phase == H5SHUF_PHASE_SELECT ? 0 : p->row_bytes;
}

static void draw(struct progress *p, double now)
{
    double el = now - p->phase_start;
    double frac = p->total ? (double)p->done / (double)p->total : 1.0;
    const uint64_t rb = phase_row_bytes(p, p->phase);
    /* MB, or millions of rows when a row has no bytes to count */
    double mb = (double)(p->done * (rb ? rb : 1)) / 1e6, mbtot = (double)(p->total * (rb ? rb : 1)) / 1e6;
    double rate = el > 0 ? mb / el : 0;
    const char *unit = rb ? "MB" : "M rows";
    char e[64], eta[64], text[256];
    clock_text(el, e, sizeof e);
    if (frac > 0.001 && rate > 0)
        clock_text(el / frac - el, eta, sizeof eta);
    else
        snprintf(eta, sizeof eta, "?");
    int n = snprintf(text, sizeof text, " %3.0f%% %.0f/%.0f %s %.0f %s/s %s ETA %s", frac * 100, mb, mbtot, unit, rate,
                     unit, e, eta);
    char head[32];
    int h = snprintf(head, sizeof head, "%s ", progress_phase_name(p->phase));
    int width = terminal_width(p->out) - 1; /* never touch the last column: no wrap */
    int bar = width - h - n - 2;
    fprintf(p->out, "\r%s", head);
    if (bar >= 10) {
        int fill = (int)(frac * bar);
        fputc('[', p->out);
        for (int i = 0; i < bar; i++)
            fputc(i < fill ? '#' : '-', p->out);
        fputc(']', p->out);
    }
    fprintf(p->out, "%s\033[K", text);
    fflush(p->out);
    p->drawn = 1;
    p->last_draw = now;
}

static void end_phase(struct progress *p, double now)
{
    if (!p->phase)
        return;
    if (p->drawn) {
        fputs("\r\033[K", p->out);
        p->drawn = 0;
    }
    struct pass_record r = {p->phase, p->done, p->done * phase_row_bytes(p, p->phase), now - p->phase_start};
    if (p->npasses < (int)(sizeof p->passes / sizeof *p->passes))
        p->passes[p->npasses++] = r;
    if (p->summaries && r.bytes == 0)
        fprintf(p->out, "h5shuf: %s: %llu rows in %.1f s\n", progress_phase_name(r.phase), (unsigned long long)r.rows,
                r.seconds);
    else if (p->summaries)
        fprintf(p->out, "h5shuf: %s: %llu rows, %.1f MB in %.1f s, %.0f MB/s\n", progress_phase_name(r.phase),
                (unsigned long long)r.rows, (double)r.bytes / 1e6, r.seconds,
                r.seconds > 0 ? (double)r.bytes / 1e6 / r.seconds : 0.0);
    p->phase = 0;
}

void progress_update(struct progress *p, h5shuf_phase phase, uint64_t done, uint64_t total)
{
    if (phase == H5SHUF_PHASE_CREATE)
        return; /* files made before pass 1: no rows to show */
    double now = progress_now();
    if (phase != p->phase) {
        end_phase(p, now);
        p->phase = phase;
        p->phase_start = now;
        p->last_draw = 0;
    }
    p->done = done;
    p->total = total;
    if (p->draw && now - p->last_draw >= REDRAW_SECONDS)
        draw(p, now);
}

void progress_finish(struct progress *p)
{
    end_phase(p, progress_now());
}
