/*
 * bench_roots.c - quartic and sphere-TOI throughput, and accuracy on the
 * hard quartic set, against a textbook Ferrari solver in the same run.
 *
 * Run: make bench-build && build/tests/bench/bench_roots
 * Figures are ratios within one run; the machine is shared and noisy, so
 * each timed loop runs ROUNDS times (the solvers taking turns) and the best
 * pass counts.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/roots.h"
#include "core/toi.h"
#include "tests/bench/bench_util.h"
#include "tests/rng.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double urand(void) { return imp_rng_unit(&rng); }

/* Textbook Ferrari: depress, one root of the resolvent cubic by Cardano,
 * two quadratics by the schoolbook formula. Real roots only, unsorted. */
static int cardano_largest(double A, double B, double C, double *m) {
    double P = B - A * A / 3.0, Q = 2.0 * A * A * A / 27.0 - A * B / 3.0 + C;
    double D = Q * Q / 4.0 + P * P * P / 27.0;
    double z;
    if (D >= 0.0) {
        double s = sqrt(D);
        z = cbrt(-Q / 2.0 + s) + cbrt(-Q / 2.0 - s);
    } else {
        double arg = 3.0 * Q / (2.0 * P) * sqrt(-3.0 / P);
        if (arg > 1.0) arg = 1.0;
        if (arg < -1.0) arg = -1.0;
        z = 2.0 * sqrt(-P / 3.0) * cos(acos(arg) / 3.0);
    }
    *m = z - A / 3.0;
    return 1;
}

static int ferrari(double a, double b, double c, double d, double e, double *out) {
    b /= a;
    c /= a;
    d /= a;
    e /= a;
    double p = c - 3.0 * b * b / 8.0;
    double q = d - b * c / 2.0 + b * b * b / 8.0;
    double r = e - b * d / 4.0 + b * b * c / 16.0 - 3.0 * b * b * b * b / 256.0;
    int n = 0;
    if (fabs(q) < 1e-14) {
        double disc = p * p - 4.0 * r;
        if (disc < 0) return 0;
        double z[2] = {(-p + sqrt(disc)) / 2.0, (-p - sqrt(disc)) / 2.0};
        for (int i = 0; i < 2; ++i)
            if (z[i] >= 0) {
                out[n++] = sqrt(z[i]) - b / 4.0;
                out[n++] = -sqrt(z[i]) - b / 4.0;
            }
        return n;
    }
    double m;
    cardano_largest(p, p * p / 4.0 - r, -q * q / 8.0, &m);
    if (m <= 0) return 0;
    double s = sqrt(2.0 * m);
    for (int sgn = -1; sgn <= 1; sgn += 2) {
        double t = -(2.0 * p + 2.0 * m + sgn * sqrt(2.0) * q / sqrt(m));
        if (t < 0) continue;
        out[n++] = (sgn * s + sqrt(t)) / 2.0 - b / 4.0;
        out[n++] = (sgn * s - sqrt(t)) / 2.0 - b / 4.0;
    }
    return n;
}

static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double parse_root(const char *s) {
    const char *slash = strchr(s, '/');
    return slash ? strtod(s, NULL) / strtod(slash + 1, NULL) : strtod(s, NULL);
}

static void hard_set(void) {
    json_t *doc = json_load_file("tests/data/hard_quartics.json", 0, NULL);
    if (!doc) {
        printf("hard set: tests/data/hard_quartics.json not found (run from the repo root)\n");
        return;
    }
    size_t i;
    json_t *c;
    printf("%-26s %12s %12s %12s\n", "hard case", "impactd", "ferrari", "published");
    json_array_foreach(json_object_get(doc, "cases"), i, c) {
        double co[5];
        json_t *hex = json_object_get(c, "coefficients_high_to_low");
        for (int k = 0; k < 5; ++k)
            co[k] = strtod(json_string_value(json_array_get(hex, k)), NULL);
        json_t *rr = json_object_get(c, "real_roots");
        size_t ne = json_array_size(rr);
        if (ne == 0) continue;
        double want[4], got[4], fr[8];
        for (size_t k = 0; k < ne; ++k)
            want[k] = parse_root(json_string_value(json_array_get(rr, k)));
        int n1 = imp_quartic_roots(co[0], co[1], co[2], co[3], co[4], -INFINITY, INFINITY, got);
        int n2 = ferrari(co[0], co[1], co[2], co[3], co[4], fr);
        qsort(fr, (size_t)n2, sizeof fr[0], cmp_d);
        double e1 = 0, e2 = 0;
        for (size_t k = 0; k < ne; ++k) {
            e1 = (size_t)n1 == ne ? fmax(e1, fabs(got[k] - want[k]) / fabs(want[k])) : INFINITY;
            e2 = (size_t)n2 == ne ? fmax(e2, fabs(fr[k] - want[k]) / fabs(want[k])) : INFINITY;
        }
        json_t *pub = json_object_get(c, "best_published_max_rel_error");
        char pb[32] = "-";
        if (json_is_number(pub)) snprintf(pb, sizeof pb, "%.2g", json_number_value(pub));
        printf("%-26s %12.2g %12.2g %12s%s\n", json_string_value(json_object_get(c, "name")), e1,
               e2, pb, (size_t)n2 != ne ? "  (ferrari: wrong root count)" : "");
    }
    json_decref(doc);
}

#define NQ 200000
/* passes of each timed loop, the best kept */
#define ROUNDS 5

int main(void) {
    static double coef[NQ][5];
    for (int k = 0; k < NQ; ++k) {
        double r[4];
        for (int i = 0; i < 4; ++i)
            r[i] = urand() - 0.5;
        /* half with four real roots, half with two and a complex pair */
        double s1 = r[0] + r[1], p1 = r[0] * r[1];
        double s2 = r[2] + r[3], p2 = (k & 1) ? r[2] * r[3] : r[2] * r[3] + 0.3;
        coef[k][0] = 1.0;
        coef[k][1] = -(s1 + s2);
        coef[k][2] = p1 + p2 + s1 * s2;
        coef[k][3] = -(s1 * p2 + s2 * p1);
        coef[k][4] = p1 * p2;
    }
    /* Each solver's best of ROUNDS passes, the two taking turns: a pass is tens of
     * milliseconds, so one pass each moved the ratio by a tenth between runs on a shared
     * machine, and the first pass also paid for bringing the coefficients into cache. */
    double out[8], sink = 0, best_imp = INFINITY, best_fer = INFINITY;
    for (int round = 0; round < ROUNDS; ++round) {
        double t0 = bench_now_s();
        for (int k = 0; k < NQ; ++k) {
            int n = imp_quartic_roots(coef[k][0], coef[k][1], coef[k][2], coef[k][3], coef[k][4],
                                      -INFINITY, INFINITY, out);
            sink += n ? out[0] : 0;
        }
        double t1 = bench_now_s();
        for (int k = 0; k < NQ; ++k) {
            int n = ferrari(coef[k][0], coef[k][1], coef[k][2], coef[k][3], coef[k][4], out);
            sink += n ? out[0] : 0;
        }
        double t2 = bench_now_s();
        best_imp = fmin(best_imp, t1 - t0);
        best_fer = fmin(best_fer, t2 - t1);
    }
    double rate_imp = NQ / best_imp, rate_fer = NQ / best_fer;
    printf("quartic solves/s: impactd %.3g, textbook ferrari %.3g, cost ratio %.2fx\n", rate_imp,
           rate_fer, rate_fer / rate_imp);

    /* sphere TOI, linear and accelerated */
    static imp_toi_spheres_input in[NQ];
    for (int k = 0; k < NQ; ++k) {
        imp_toi_spheres_input *q = &in[k];
        q->a.p = imp_v3(urand() * 10, urand() * 10, urand() * 10);
        q->b.p = imp_v3(urand() * 10, urand() * 10, urand() * 10);
        q->a.v = imp_v3(urand() * 4 - 2, urand() * 4 - 2, urand() * 4 - 2);
        q->b.v = imp_v3(urand() * 4 - 2, urand() * 4 - 2, urand() * 4 - 2);
        q->a.a = q->b.a = imp_v3(0, 0, 0);
        q->ra = urand();
        q->rb = urand();
        q->horizon = 10.0;
    }
    /* with the closest approach (as POST /v1/toi answers) and without it
     * (imp_toi_spheres_impact, as scenes and simulations ask) */
    double rate[2][2] = {{0, 0}, {0, 0}};
    for (int acc = 0; acc < 2; ++acc) {
        for (int k = 0; k < NQ; ++k)
            if (acc) in[k].a.a = imp_v3(0, -9.81, 0), in[k].b.a = imp_v3(0.5, 0, 0);
        for (int round = 0; round < ROUNDS; ++round) { /* best of, as above */
            double t3 = bench_now_s();
            for (int k = 0; k < NQ; ++k)
                sink += imp_toi_spheres(&in[k]).time;
            double t4 = bench_now_s();
            for (int k = 0; k < NQ; ++k)
                sink += imp_toi_spheres_impact(&in[k]).time;
            double t5 = bench_now_s();
            rate[acc][0] = fmax(rate[acc][0], NQ / (t4 - t3));
            rate[acc][1] = fmax(rate[acc][1], NQ / (t5 - t4));
        }
    }
    printf("sphere TOI solves/s: linear %.3g, accelerated %.3g; time of impact only: linear %.3g, "
           "accelerated %.3g\n",
           rate[0][0], rate[1][0], rate[0][1], rate[1][1]);
    hard_set();
    return sink == 12345.678 ? 1 : 0;
}
