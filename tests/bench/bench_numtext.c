/*
 * bench_numtext.c - api/numtext against glibc: imp_num_parse vs strtod and
 * imp_num_format vs snprintf("%.17g"), in ns per number, best of 3 runs.
 *
 * Data sets (1M numbers each, fixed seed):
 *   bits    random finite bit patterns printed with %.17g ("-1.2345678901234567e-123")
 *   scene   uniform in [-1000, 1000) printed with %.17g ("12.345678901234567"): the
 *           shape of coordinates in a scene request
 *   short   short decimals such as 12.5, 0.001, 250, -3.75
 * Formatting runs on the values the texts parse to. The parser is given the
 * end of the whole text, as a request body parser would (the numbers are
 * NUL-separated, like "," in JSON); the figure in parentheses has end at
 * the end of each number instead (the 8-byte reads then stop early).
 *
 * Run: make bench-build && build/tests/bench/bench_numtext (or any BUILD=dir)
 * Figures are ratios within one run; the machine is shared and noisy. Not a timed test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/numtext.h"
#include "tests/bench/bench_util.h"
#include "tests/rng.h"

#define N 1000000
#define RUNS 3

typedef struct dataset {
    const char *name;
    char *text;      /* all numbers, each NUL-terminated (strtod needs that) */
    const char *end; /* end of text: like a request body, not the end of the number */
    size_t *start;   /* offset of number i */
    size_t *len;
    double *value;
} dataset;

static void make_set(dataset *d, const char *name, int kind, uint64_t seed) {
    d->name = name;
    d->text = malloc((size_t)N * 32);
    d->start = malloc(N * sizeof *d->start);
    d->len = malloc(N * sizeof *d->len);
    d->value = malloc(N * sizeof *d->value);
    if (!d->text || !d->start || !d->len || !d->value) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    uint64_t rng = seed;
    size_t off = 0;
    for (size_t i = 0; i < N; ++i) {
        char *p = d->text + off;
        int n;
        if (kind == 0) {
            uint64_t b;
            do
                b = imp_rng_next(&rng);
            while (((b >> 52) & 0x7ff) == 0x7ff);
            double x;
            memcpy(&x, &b, sizeof x);
            n = snprintf(p, 32, "%.17g", x);
        } else if (kind == 1) {
            n = snprintf(p, 32, "%.17g", imp_rng_uniform(&rng, -1000.0, 1000.0));
        } else {
            uint64_t r = imp_rng_next(&rng);
            int frac = (int)(r % 4);
            long ip = (long)((r >> 8) % 10000u);
            if (r >> 63) ip = -ip;
            if (frac == 0) {
                n = snprintf(p, 32, "%ld", ip);
            } else {
                long f = (long)((r >> 24) % 1000u);
                n = snprintf(p, 32, "%ld.%0*ld", ip, frac,
                             f % (frac == 1   ? 10
                                  : frac == 2 ? 100
                                              : 1000));
            }
        }
        d->start[i] = off;
        d->len[i] = (size_t)n;
        d->value[i] = strtod(p, NULL);
        off += (size_t)n + 1;
    }
    d->end = d->text + off;
}

static double best_of(double *t) {
    double b = t[0];
    for (int i = 1; i < RUNS; ++i)
        if (t[i] < b) b = t[i];
    return b;
}

static volatile double sink;
static volatile size_t sink_len;

static void bench(const dataset *d) {
    double tp[RUNS], te[RUNS], ts[RUNS], tf[RUNS], tn[RUNS];
    char buf[64];
    for (int r = 0; r < RUNS; ++r) {
        double acc = 0.0, t0 = bench_now_s();
        for (size_t i = 0; i < N; ++i) {
            const char *s = d->text + d->start[i];
            double v;
            if (imp_num_parse(s, d->end, &v, NULL) != 0) {
                fprintf(stderr, "parse failed: %s\n", s);
                exit(1);
            }
            acc += v;
        }
        tp[r] = bench_now_s() - t0;
        t0 = bench_now_s();
        for (size_t i = 0; i < N; ++i) {
            const char *s = d->text + d->start[i];
            double v;
            imp_num_parse(s, s + d->len[i], &v, NULL);
            acc += v;
        }
        te[r] = bench_now_s() - t0;
        t0 = bench_now_s();
        for (size_t i = 0; i < N; ++i)
            acc += strtod(d->text + d->start[i], NULL);
        ts[r] = bench_now_s() - t0;
        sink = acc;
        size_t total = 0;
        t0 = bench_now_s();
        for (size_t i = 0; i < N; ++i)
            total += imp_num_format(d->value[i], buf);
        tf[r] = bench_now_s() - t0;
        t0 = bench_now_s();
        for (size_t i = 0; i < N; ++i)
            total += (size_t)snprintf(buf, sizeof buf, "%.17g", d->value[i]);
        tn[r] = bench_now_s() - t0;
        sink_len = total;
    }
    /* every parse agreed with strtod, and every format reads back */
    size_t bad = 0;
    for (size_t i = 0; i < N; ++i) {
        const char *s = d->text + d->start[i];
        double v;
        imp_num_parse(s, d->end, &v, NULL);
        imp_num_format(d->value[i], buf);
        if (memcmp(&v, &d->value[i], sizeof v) != 0 || strtod(buf, NULL) != d->value[i]) ++bad;
    }
    double p = best_of(tp) * 1e9 / N, pe = best_of(te) * 1e9 / N, s = best_of(ts) * 1e9 / N;
    double f = best_of(tf) * 1e9 / N, n = best_of(tn) * 1e9 / N;
    printf("%-6s parse %5.1f ns (end at number: %5.1f)  strtod %6.1f ns  %4.1fx faster | "
           "format %5.1f ns  snprintf %%.17g %6.1f ns  %4.1fx faster%s\n",
           d->name, p, pe, s, s / p, f, n, n / f, bad ? "  MISMATCHES" : "");
    if (bad) printf("%zu mismatches\n", bad);
}

int main(void) {
    dataset sets[3];
    make_set(&sets[0], "bits", 0, 0x9e3779b97f4a7c15u);
    make_set(&sets[1], "scene", 1, 0x1234567887654321u);
    make_set(&sets[2], "short", 2, 0x0badc0ffee0ddf00u);
    printf("%d numbers per set, best of %d runs\n", N, RUNS);
    for (int i = 0; i < 3; ++i)
        bench(&sets[i]);
    for (int i = 0; i < 3; ++i) {
        free(sets[i].text);
        free(sets[i].start);
        free(sets[i].len);
        free(sets[i].value);
    }
    return 0;
}
