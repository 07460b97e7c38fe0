/*
 * bench_ccd.c - moving-triangle collision (core/ccd.h) on the public CCD
 * benchmark (../shared/data/ccd, or $IMPACT_CCD_DATA): time per query on
 * one thread, average and 99th percentile, per set and per kind, with the
 * published figures beside them, and the errors against the ground truth.
 *
 * Run: make bench-build && build/tests/bench/bench_ccd [repeats]
 * The average is the best of `repeats` (default 5) timed passes over the
 * whole set (one clock read a pass); the percentiles time each query on
 * its own in one more pass (two clock reads a query, about 40 ns of the
 * figure). The machine is shared and noisy: compare within one run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ccd.h"
#include "tests/bench/bench_util.h"
#include "tests/ccd_data.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Average (best pass), p50, p99 and max of the queries of `kind` (-1: all), in microseconds. */
static void bench_kind(const char *set_name, const ccd_set *s, int kind, int repeats,
                       const char *paper) {
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += kind < 0 || (int)s->q[i].kind == kind;
    if (n == 0) return;
    double best = 1e300;
    volatile int sink = 0;
    for (int r = 0; r < repeats; r++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < s->n; i++)
            if (kind < 0 || (int)s->q[i].kind == kind) sink += imp_ccd(&s->q[i]).hit;
        double dt = bench_now_s() - t0;
        if (dt < best) best = dt;
    }
    double *each = malloc(n * sizeof *each);
    if (!each) return;
    size_t k = 0, exact = 0, fp = 0, fn = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (kind >= 0 && (int)s->q[i].kind != kind) continue;
        double t0 = bench_now_s();
        imp_ccd_result r = imp_ccd(&s->q[i]);
        each[k++] = bench_now_s() - t0;
        exact += (size_t)r.exact;
        fp += (size_t)(r.hit && !s->truth[i]);
        fn += (size_t)(!r.hit && s->truth[i]);
    }
    qsort(each, n, sizeof *each, cmp_double);
    const char *kname = kind < 0                      ? "all"
                        : kind == IMP_CCD_VERTEX_FACE ? "vertex-face"
                                                      : "edge-edge";
    printf("%-12s %-12s %7zu queries  avg %8.3f us  p50 %8.3f us  p99 %9.3f us  max %10.1f us  "
           "exact path %5zu (%.2f%%)  false +/- %zu/%zu   paper: %s\n",
           set_name, kname, n, best / (double)n * 1e6, each[n / 2] * 1e6,
           each[(size_t)((double)n * 0.99)] * 1e6, each[n - 1] * 1e6, exact,
           100.0 * (double)exact / (double)n, fp, fn, paper);
    free(each);
    (void)sink;
}

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 5;
    if (repeats < 1) repeats = 1;
    ccd_set h = {0}, s = {0};
    if (!ccd_data_present()) {
        printf("bench_ccd: %s is absent (a clone without shared/); nothing to time\n",
               ccd_data_dir());
        return 0;
    }
    if (ccd_load_handcrafted(&h) || ccd_load_scalable(&s)) {
        fprintf(stderr, "bench_ccd: cannot read %s (set IMPACT_CCD_DATA)\n", ccd_data_dir());
        return 1;
    }
    printf("CCD benchmark, one thread, %d timed passes (best kept); data %s\n", repeats,
           ccd_data_dir());
    printf("paper figures (AMD EPYC 7452): Tight Inclusion 0.74 us vertex-face, 0.78 us "
           "edge-edge per simulation query, 1.5-3.0 ms per handcrafted query; exact root "
           "parity 0.31 / 1.14 us\n");
    bench_kind("handcrafted", &h, -1, repeats, "TI 1.5-3.0 ms/query");
    bench_kind("handcrafted", &h, IMP_CCD_VERTEX_FACE, repeats, "");
    bench_kind("handcrafted", &h, IMP_CCD_EDGE_EDGE, repeats, "");
    bench_kind("scalable", &s, -1, repeats, "TI 0.74/0.78 us, root parity 0.31/1.14 us");
    bench_kind("scalable", &s, IMP_CCD_VERTEX_FACE, repeats, "TI 0.74 us, root parity 0.31 us");
    bench_kind("scalable", &s, IMP_CCD_EDGE_EDGE, repeats, "TI 0.78 us, root parity 1.14 us");
    ccd_set_free(&h);
    ccd_set_free(&s);
    return 0;
}
