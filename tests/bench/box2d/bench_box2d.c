/*
 * bench_box2d.c - impactd's 8-gon time of impact against Box2D 2.4.1's
 * b2TimeOfImpact on the same pairs (translation only).
 *
 *   make bench-box2d                      (installs libbox2d-dev when missing)
 *   $(BUILD)/tests/bench/box2d/bench_box2d [pairs]
 *
 * The pairs are bench_shapes.c's 8-gon pairs (tests/bench/box2d/pairs.h,
 * same seed; default 4096): circumradii about 0.5 to 1.5 (1 to 3 units
 * across) times a scale, linear motion over the horizon [0, 1], about half
 * hitting. Each scale multiplies every length (vertices, positions,
 * velocities), which leaves the exact times unchanged; Box2D's tolerances are absolute lengths
 * (b2_linearSlop = 0.005 units, box2d_toi.cpp), so they weigh 100 times
 * more at scale 0.1 than at scale 10. Box2D's "metre" is the unit, and it
 * is tuned for moving shapes of 0.1 to 10 m: the scales cover that range.
 *
 * Per scale:
 *  - rates: imp_toi_shapes and b2TimeOfImpact (through box2d_toi(), which
 *    only converts the inputs to float), each looping over all pairs for at
 *    least MIN_SECONDS in all, in turns of at least TURN_SECONDS (on a shared
 *    machine the load of its other tenants moves within a second: one side's
 *    whole run after the other's put that move into the ratio, 0.54 to 0.63
 *    for one build's three scales); b2TimeOfImpact also times itself (b2Timer) and
 *    counts its calls in globals, which is part of its cost. Each side's
 *    polygons are made once, normals included (Box2D's b2Polygon keeps
 *    them; impactd's shapes prepared with imp_shape_prepare, as the api
 *    prepares what it decodes);
 *  - hit/miss agreement: impactd HIT vs Box2D e_touching, NONE vs
 *    e_separated; e_failed counted apart;
 *  - where both hit: |t_box2d - t_impactd| in time units (horizon 1), and as
 *    a length, |dt| * |relative velocity| / size (size: the sum of the two
 *    circumradii), the way the bodies travel in that time against their
 *    size;
 *  - Box2D against its own goal, over all its hits: the gap (distance, in
 *    double, by imp_overlap on the double geometry) at Box2D's time, as
 *    (gap - target) / tolerance: Box2D meets its contract when this lies in
 *    [-1, 1];
 *  - impactd against its own: |gap| / size at impactd's time, 0 up to
 *    rounding for an exact time.
 * Exits 1 when impactd's side fails: a gap above 1e-9 of the size at one
 * of its hits, or a hit where Box2D proves separation.
 * Disagreements are explained case by case: a pair impactd misses comes
 * within target + tolerance of contact (the smallest gap over the window,
 * found by ternary search: for translating convex shapes the signed distance
 * is convex in t) or touches only after the horizon (impactd's TOI over twice
 * the horizon).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/overlap.h"
#include "core/shape.h"
#include "core/toi_shapes.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/box2d/box2d_toi.h"
#include "tests/bench/box2d/pairs.h"
#include "tests/rng.h"

#define DEFAULT_PAIRS 4096
#define MIN_SECONDS 0.5
#define TURN_SECONDS 0.05
#define HORIZON 1.0
#define MAX_EXAMPLES 3

static const double scales[] = {0.1, 1.0, 10.0};
#define N_SCALES (sizeof scales / sizeof scales[0])

typedef struct spair {
    imp_vec3 va[BENCH_OCTAGON_N], vb[BENCH_OCTAGON_N];
    imp_shape a, b;
    imp_motion ma, mb;
    double xa[2 * BENCH_OCTAGON_N], xb[2 * BENCH_OCTAGON_N]; /* Box2D's copy: x, y pairs */
    double pa[2], pb[2], vela[2], velb[2];
    double size; /* ra + rb */
} spair;

typedef struct answer {
    imp_toi_result ours;
    box2d_toi_state b2;
    double t_b2;
} answer;

static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The q-quantile (0..1) of v[0..n), sorted in place; NAN when empty. */
static double quantile(double *v, size_t n, double q) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof v[0], cmp_d);
    size_t i = (size_t)ceil(q * (double)n);
    return v[i > 0 ? i - 1 : 0];
}

/* The unit-scale pairs of bench_shapes.c's first kind, scaled by s. */
static void make_pairs(spair *p, size_t n, double s) {
    uint64_t rng = BENCH_PAIRS_SEED;
    for (size_t i = 0; i < n; ++i) {
        spair *q = &p[i];
        double ra, rb;
        imp_vec3 oa, ob; /* the overlap placement: drawn to keep the sequence, unused */
        bench_octagon_pair(&rng, q->va, q->vb, &ra, &rb, &q->ma, &q->mb, &oa, &ob);
        for (int k = 0; k < BENCH_OCTAGON_N; ++k) {
            q->va[k] = imp_scale(q->va[k], s);
            q->vb[k] = imp_scale(q->vb[k], s);
            q->xa[2 * k] = q->va[k].x;
            q->xa[2 * k + 1] = q->va[k].y;
            q->xb[2 * k] = q->vb[k].x;
            q->xb[2 * k + 1] = q->vb[k].y;
        }
        q->ma.p = imp_scale(q->ma.p, s);
        q->ma.v = imp_scale(q->ma.v, s);
        q->mb.p = imp_scale(q->mb.p, s);
        q->mb.v = imp_scale(q->mb.v, s);
        imp_shape_unprepare(&q->a); /* the last scale's */
        imp_shape_unprepare(&q->b);
        q->a = (imp_shape){.type = IMP_SHAPE_POLYGON, .verts = q->va, .n_verts = BENCH_OCTAGON_N};
        q->b = (imp_shape){.type = IMP_SHAPE_POLYGON, .verts = q->vb, .n_verts = BENCH_OCTAGON_N};
        if (imp_shape_prepare(&q->a) != 0 || imp_shape_prepare(&q->b) != 0) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        q->pa[0] = q->ma.p.x, q->pa[1] = q->ma.p.y;
        q->pb[0] = q->mb.p.x, q->pb[1] = q->mb.p.y;
        q->vela[0] = q->ma.v.x, q->vela[1] = q->ma.v.y;
        q->velb[0] = q->mb.v.x, q->velb[1] = q->mb.v.y;
        q->size = (ra + rb) * s;
    }
}

static imp_toi_result ours(const spair *q, double horizon) {
    return imp_toi_shapes(&q->a, &q->ma, &q->b, &q->mb, 2, horizon);
}

static box2d_toi_state theirs(const spair *q, double *t) {
    return box2d_toi(q->xa, BENCH_OCTAGON_N, q->pa, q->vela, q->xb, BENCH_OCTAGON_N, q->pb, q->velb,
                     HORIZON, t);
}

/* Signed gap at time t: distance apart, or minus the penetration depth. */
static double gap_at(const spair *q, double t) {
    imp_vec3 pa = imp_path_at(q->ma.p, q->ma.v, q->ma.a, t);
    imp_vec3 pb = imp_path_at(q->mb.p, q->mb.v, q->mb.a, t);
    imp_overlap_result o = imp_overlap(&q->a, pa, &q->b, pb, 2);
    if (o.state == IMP_OVERLAP_APART) return o.distance;
    if (o.state == IMP_OVERLAP_OVERLAPPING) return -o.depth;
    return NAN;
}

/* Smallest gap over [0, horizon] and its time: ternary search on the
 * convex distance of two translating convex shapes. */
static double min_gap(const spair *q, double *at) {
    double lo = 0, hi = HORIZON;
    for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
        double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (gap_at(q, m1) <= gap_at(q, m2))
            hi = m2;
        else
            lo = m1;
    }
    *at = 0.5 * (lo + hi);
    return gap_at(q, *at);
}

static const char *b2_name(box2d_toi_state s) {
    static const char *names[] = {"e_unknown",  "e_failed",    "e_overlapped",
                                  "e_touching", "e_separated", "bad input"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static const char *our_name(imp_toi_state s) {
    static const char *names[] = {"NONE", "HIT", "OVERLAPPING", "FAILED"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

typedef struct stats {
    double rate_ours, rate_b2;
    size_t both_hit, both_miss, only_b2, only_ours, b2_failed, other;
    size_t only_b2_graze, only_b2_late; /* explained disagreements */
    double dt[3], dlen[3];              /* median, p99, max */
    double b2_gap[3];                   /* (gap - target) / tolerance: min, median, max */
    size_t b2_outside;                  /* Box2D hits with that outside [-1, 1] */
    double our_gap[2];                  /* |gap| / size: median, max */
} stats;

static void run_scale(double s, spair *p, answer *ans, size_t n, double target, double tol,
                      stats *st, int print_examples) {
    memset(st, 0, sizeof *st);
    make_pairs(p, n, s);
    double sink = 0;

    /* the two sides in turns of at least TURN_SECONDS, each over every pair, until each has
     * run MIN_SECONDS; the first pass of each keeps its answers */
    size_t calls_ours = 0, calls_b2 = 0;
    double el_ours = 0.0, el_b2 = 0.0;
    while (el_ours < MIN_SECONDS || el_b2 < MIN_SECONDS) {
        double t0 = bench_now_s(), el;
        do {
            for (size_t i = 0; i < n; ++i) {
                imp_toi_result r = ours(&p[i], HORIZON);
                if (calls_ours < n) ans[i].ours = r;
                sink += r.time;
                ++calls_ours;
            }
            el = bench_now_s() - t0;
        } while (el < TURN_SECONDS);
        el_ours += el;
        t0 = bench_now_s();
        do {
            for (size_t i = 0; i < n; ++i) {
                double t;
                box2d_toi_state b = theirs(&p[i], &t);
                if (calls_b2 < n) ans[i].b2 = b, ans[i].t_b2 = t;
                sink += t;
                ++calls_b2;
            }
            el = bench_now_s() - t0;
        } while (el < TURN_SECONDS);
        el_b2 += el;
    }
    st->rate_ours = (double)calls_ours / el_ours;
    st->rate_b2 = (double)calls_b2 / el_b2;

    double *dt = malloc(n * sizeof *dt), *dlen = malloc(n * sizeof *dlen);
    double *bg = malloc(n * sizeof *bg), *og = malloc(n * sizeof *og);
    if (!dt || !dlen || !bg || !og) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    size_t nb = 0, nbg = 0, examples = 0;
    for (size_t i = 0; i < n; ++i) {
        const spair *q = &p[i];
        const answer *a = &ans[i];
        int our_hit = a->ours.state == IMP_TOI_HIT, our_miss = a->ours.state == IMP_TOI_NONE;
        int b2_hit = a->b2 == BOX2D_TOI_TOUCHING, b2_miss = a->b2 == BOX2D_TOI_SEPARATED;
        if (b2_hit) {
            double g = gap_at(q, a->t_b2);
            bg[nbg++] = (g - target) / tol;
            st->b2_outside += fabs(g - target) > tol;
        }
        if (a->b2 == BOX2D_TOI_FAILED) {
            ++st->b2_failed;
        } else if (our_hit && b2_hit) {
            double d = fabs(a->t_b2 - a->ours.time);
            double vrel = imp_len(imp_sub(q->mb.v, q->ma.v));
            dt[nb] = d;
            dlen[nb] = d * vrel / q->size;
            ++nb;
            ++st->both_hit;
        } else if (our_miss && b2_miss) {
            ++st->both_miss;
        } else if (our_miss && b2_hit) {
            ++st->only_b2;
            double at, g = min_gap(q, &at);
            imp_toi_result later = ours(q, 2 * HORIZON);
            const char *why = "unexplained";
            if (later.state == IMP_TOI_HIT && gap_at(q, HORIZON) <= target + tol)
                ++st->only_b2_late,
                    why = "late: touches after the horizon, within target + tol at it";
            else if (g <= target + tol)
                ++st->only_b2_graze, why = "graze: passes within target + tol, never touches";
            if (print_examples && examples < MAX_EXAMPLES) {
                ++examples;
                printf(
                    "  scale %g, pair %zu: impactd NONE, Box2D e_touching at t = %.6f, gap there "
                    "%.5f\n"
                    "      smallest gap over [0, 1] %.5f at t = %.6f; impactd over [0, 2]: %s",
                    s, i, a->t_b2, gap_at(q, a->t_b2), g, at, our_name(later.state));
                if (later.state == IMP_TOI_HIT) printf(" at t = %.6f", later.time);
                printf("\n      -> %s\n", why);
            }
        } else if (our_hit && b2_miss) {
            ++st->only_ours;
            if (print_examples && examples < MAX_EXAMPLES) {
                ++examples;
                printf("  scale %g, pair %zu: impactd HIT at t = %.6f, Box2D %s\n", s, i,
                       a->ours.time, b2_name(a->b2));
            }
        } else {
            ++st->other;
            if (print_examples && examples < MAX_EXAMPLES) {
                ++examples;
                printf("  scale %g, pair %zu: impactd %s, Box2D %s at %.6f\n", s, i,
                       our_name(a->ours.state), b2_name(a->b2), a->t_b2);
            }
        }
    }
    size_t nog = 0;
    for (size_t i = 0; i < n; ++i)
        if (ans[i].ours.state == IMP_TOI_HIT)
            og[nog++] = fabs(gap_at(&p[i], ans[i].ours.time)) / p[i].size;
    st->dt[0] = quantile(dt, nb, 0.5), st->dt[1] = quantile(dt, nb, 0.99),
    st->dt[2] = quantile(dt, nb, 1);
    st->dlen[0] = quantile(dlen, nb, 0.5), st->dlen[1] = quantile(dlen, nb, 0.99);
    st->dlen[2] = quantile(dlen, nb, 1);
    st->b2_gap[0] = quantile(bg, nbg, 0), st->b2_gap[1] = quantile(bg, nbg, 0.5);
    st->b2_gap[2] = quantile(bg, nbg, 1);
    st->our_gap[0] = quantile(og, nog, 0.5), st->our_gap[1] = quantile(og, nog, 1);
    free(dt);
    free(dlen);
    free(bg);
    free(og);
    if (sink == 12345.678) printf(" ");
}

int main(int argc, char **argv) {
    size_t n = DEFAULT_PAIRS;
    if (bench_count_arg(argc, argv, "pairs", &n)) return 2;
    double slop, target, tol;
    int maxv;
    box2d_toi_constants(&slop, &target, &tol, &maxv);
    spair *p = calloc(n, sizeof *p); /* zeroed: make_pairs frees the last normals */
    answer *ans = malloc(n * sizeof *ans);
    if (!p || !ans) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    printf("bench_box2d: %zu 8-gon pairs (bench_shapes' seed 0x%llx), translation only, horizon "
           "%g, >= %.1f s per rate\n",
           n, (unsigned long long)BENCH_PAIRS_SEED, HORIZON, MIN_SECONDS);
    printf("Box2D 2.4.1: b2_linearSlop %g, proxies of radius 0: target separation %g, tolerance "
           "+-%g (max %d vertices)\n",
           slop, target, tol, maxv);
    printf("size = sum of the two circumradii (1 to 3 units at scale 1); lengths scale, times do "
           "not\n\n");

    stats st[N_SCALES];
    printf("disagreements (up to %d examples per scale):\n", MAX_EXAMPLES);
    for (size_t k = 0; k < N_SCALES; ++k)
        run_scale(scales[k], p, ans, n, target, tol, &st[k], 1);

    printf("\n%-6s %11s %11s %6s | %8s %9s %7s %7s %7s %8s %7s %6s\n", "scale", "impactd/s",
           "Box2D/s", "B2/imp", "both hit", "both miss", "only B2", "graze", "late", "only imp",
           "B2 fail", "other");
    for (size_t k = 0; k < N_SCALES; ++k)
        printf("%-6g %11.4g %11.4g %6.2f | %8zu %9zu %7zu %7zu %7zu %8zu %7zu %6zu\n", scales[k],
               st[k].rate_ours, st[k].rate_b2, st[k].rate_b2 / st[k].rate_ours, st[k].both_hit,
               st[k].both_miss, st[k].only_b2, st[k].only_b2_graze, st[k].only_b2_late,
               st[k].only_ours, st[k].b2_failed, st[k].other);
    printf("only B2: impactd NONE, Box2D e_touching; graze: the pair's smallest gap over the "
           "window is\nwithin target + tol but above 0; late: contact just after the horizon, "
           "within target + tol\nat it. only imp: impactd HIT, Box2D e_separated.\n");

    printf("\n%-6s | %-29s | %-29s | %-27s | %s\n", "", "|t_B2 - t_imp|, both hit",
           "|dt| * |v_rel| / size", "B2 (gap - target) / tol", "imp |gap| / size");
    printf("%-6s | %9s %9s %9s | %9s %9s %9s | %7s %7s %7s %3s | %9s %9s\n", "scale", "median",
           "p99", "max", "median", "p99", "max", "min", "median", "max", "out", "median", "max");
    for (size_t k = 0; k < N_SCALES; ++k)
        printf("%-6g | %9.3g %9.3g %9.3g | %9.3g %9.3g %9.3g | %7.3f %7.3f %7.3f %3zu | %9.2g "
               "%9.2g\n",
               scales[k], st[k].dt[0], st[k].dt[1], st[k].dt[2], st[k].dlen[0], st[k].dlen[1],
               st[k].dlen[2], st[k].b2_gap[0], st[k].b2_gap[1], st[k].b2_gap[2], st[k].b2_outside,
               st[k].our_gap[0], st[k].our_gap[1]);
    printf("|t_B2 - t_imp|: horizon 1. |dt| * |v_rel| / size: the relative travel in that time "
           "over the pair's\nsize. B2 (gap - target) / tol: over all Box2D hits, the gap "
           "imp_overlap measures (double) at\nBox2D's time against Box2D's goal, in [-1, 1] "
           "when Box2D meets its own tolerance (out: how\nmany do not). imp |gap| / size: at "
           "impactd's time, over its hits: 0 up to rounding.\n");
    int bad = 0;
    for (size_t k = 0; k < N_SCALES; ++k)
        if (!(st[k].our_gap[1] < 1e-9) || st[k].only_ours) {
            printf(
                "scale %g: impactd's answers failed their check (worst |gap| / size %.3g, %zu hits "
                "Box2D proves separated)\n",
                scales[k], st[k].our_gap[1], st[k].only_ours);
            bad = 1;
        }
    for (size_t i = 0; i < n; ++i) {
        imp_shape_unprepare(&p[i].a);
        imp_shape_unprepare(&p[i].b);
    }
    free(p);
    free(ans);
    return bad;
}
