/*
 * test_paths.c - closest points of two straight paths (core/paths.h):
 * named geometries with exact answers, scale invariance from 2^-900 to
 * 2^800, the compensated near-parallel cases a naive solver loses, and a
 * property test over random pairs checked by an independent method.
 *
 * DESIGN
 * The exact cases use small dyadic coordinates, so their answers are
 * exactly representable and asserted with ==, or within an ulp where the
 * answer is irrational. The property test draws 100,000 pairs for each
 * dimension (2, 3) and kind (segment, ray, line): generic pairs, exactly
 * parallel and collinear pairs (on a dyadic grid, so exactness survives),
 * pairs touching at a point, zero-length paths and nearly parallel pairs,
 * all scaled by a random power of two. The reference distance minimises
 * h(t) = distance from p(t) to q's range, the latter by projection and
 * clamping (a point-to-segment routine sharing nothing with the 2x2
 * solver and its clamp cascade), over p's range by dense sampling and a
 * golden-section search on the bracket of the best sample (h is convex).
 * For rays and lines the window is the reported t +- (1 + |t|): when the
 * reported t is not a minimiser, convexity puts a lower value inside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <math.h>

#include "core/paths.h"
#include "tests/rng.h"

#define V(x, y, z) imp_v3((x), (y), (z))
#define U 0x1p-53 /* unit roundoff */

static imp_paths_result run(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1, int dim,
                            imp_paths_kind kind, double tol) {
    imp_paths_input in = {p0, p1, q0, q1, dim, kind, kind, tol};
    return imp_paths_closest(&in);
}
static imp_paths_result seg(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1, int dim) {
    return run(p0, p1, q0, q1, dim, IMP_PATHS_SEGMENT, IMP_PATHS_TOL_DEFAULT);
}

/* Exact equality of doubles, printing both on failure. */
#define EQ(got, want)                                                                              \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(g_ == w_)) fail_msg("%s = %.17g (%a), want %.17g", #got, g_, g_, w_);                \
    } while (0)
/* |got - want| <= rel * max(|want|, floor) */
#define NEAR(got, want, rel, floor)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ - w_) <= (rel)*fmax(fabs(w_), (floor))))                                     \
            fail_msg("%s = %.17g, want %.17g", #got, g_, w_);                                      \
    } while (0)
#define VEQ(got, wx, wy, wz)                                                                       \
    do {                                                                                           \
        imp_vec3 v_ = (got);                                                                       \
        if (!(v_.x == (wx) && v_.y == (wy) && v_.z == (wz)))                                       \
            fail_msg("%s = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g)", #got, v_.x, v_.y,   \
                     v_.z, (double)(wx), (double)(wy), (double)(wz));                              \
    } while (0)
#define FLAGS(r, inter, par, same)                                                                 \
    do {                                                                                           \
        if ((r).intersects != (inter) || (r).parallel != (par) || (r).same_time != (same))         \
            fail_msg("intersects %d parallel %d same_time %d, want %d %d %d", (r).intersects,      \
                     (r).parallel, (r).same_time, (inter), (par), (same));                         \
    } while (0)

/* ---- named geometries ---------------------------------------------------------------------- */

static void test_crossing_segments_2d(void **st) {
    (void)st;
    /* p along x, q crossing it at x = 1 three quarters of the way up */
    imp_paths_result r = seg(V(0, 0, 0), V(4, 0, 0), V(1, -3, 0), V(1, 1, 0), 2);
    EQ(r.t, 0.25);
    EQ(r.s, 0.75);
    EQ(r.distance, 0.0);
    VEQ(r.cp, 1, 0, 0);
    VEQ(r.cq, 1, 0, 0);
    VEQ(r.point, 1, 0, 0);
    FLAGS(r, 1, 0, 0);
    /* an X: both halfway, at the same parameter */
    r = seg(V(0, 0, 0), V(4, 4, 0), V(0, 4, 0), V(4, 0, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.5);
    EQ(r.distance, 0.0);
    VEQ(r.point, 2, 2, 0);
    FLAGS(r, 1, 0, 1);
    /* decimal coordinates: the crossing is 0 exactly, not |cp - cq| */
    r = seg(V(0.1, 0.2, 0), V(0.7, 0.9, 0), V(0.6, 0.1, 0), V(0.2, 0.8, 0), 2);
    EQ(r.distance, 0.0);
    assert_true(r.t > 0 && r.t < 1 && r.s > 0 && r.s < 1);
    assert_true(fabs(r.cp.x - r.cq.x) < 4 * U && fabs(r.cp.y - r.cq.y) < 4 * U);
    FLAGS(r, 1, 0, 0);
    /* lines cross at x = 2.5, past p's end: p(1) against the inside of q,
     * |(1 + s, -1 + 2s)|^2 = 5 s^2 - 2 s + 2, least at s = 0.2 */
    r = seg(V(0, 0, 0), V(1, 0, 0), V(2, 1, 0), V(3, -1, 0), 2);
    EQ(r.t, 1.0);
    NEAR(r.s, 0.2, 2 * U, 0);
    NEAR(r.distance, sqrt(1.8), 2 * U, 0);
    VEQ(r.cp, 1, 0, 0);
    FLAGS(r, 0, 0, 0);
}

static void test_skew_lines_3d(void **st) {
    (void)st;
    /* p on the x axis, q in the plane x = 1 along (0, 1, 1): closest at
     * p(0.5) = (1, 0, 0) and q(0.375) = (1, -0.5, 0.5), sqrt(0.5) apart;
     * inside both segments, so every kind agrees */
    for (int k = 0; k < 3; ++k) {
        imp_paths_result r = run(V(-1, 0, 0), V(3, 0, 0), V(1, -2, -1), V(1, 2, 3), 3,
                                 (imp_paths_kind)k, IMP_PATHS_TOL_DEFAULT);
        EQ(r.t, 0.5);
        EQ(r.s, 0.375);
        NEAR(r.distance, sqrt(0.5), 2 * U, 0);
        VEQ(r.cp, 1, 0, 0);
        VEQ(r.cq, 1, -0.5, 0.5);
        VEQ(r.point, 1, -0.25, 0.25);
        FLAGS(r, 0, 0, 0);
    }
    /* skew with a perpendicular offset of 1 along z */
    imp_paths_result r = seg(V(0, 0, 0), V(2, 0, 0), V(1, -1, 1), V(1, 3, 1), 3);
    EQ(r.t, 0.5);
    EQ(r.s, 0.25);
    EQ(r.distance, 1.0);
    VEQ(r.cq, 1, 0, 1);
    /* lines that do meet in 3D, at (1, 1, 1) */
    r = seg(V(0, 0, 0), V(2, 2, 2), V(2, 0, 0), V(0, 2, 2), 3);
    EQ(r.t, 0.5);
    EQ(r.s, 0.5);
    EQ(r.distance, 0.0);
    VEQ(r.point, 1, 1, 1);
    FLAGS(r, 1, 0, 1);
}

static void test_parallel(void **st) {
    (void)st;
    /* q (x from 1 to 3 at y = 2) over p (x from 0 to 4): every t in
     * [0.25, 0.75] is closest; t - s = 0.5 - t vanishes at t = 0.5, where
     * both particles are at x = 2 */
    imp_paths_result r = seg(V(0, 0, 0), V(4, 0, 0), V(1, 2, 0), V(3, 2, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.5);
    EQ(r.distance, 2.0);
    VEQ(r.cp, 2, 0, 0);
    VEQ(r.cq, 2, 2, 0);
    VEQ(r.point, 2, 1, 0);
    FLAGS(r, 0, 1, 1);
    /* equal velocities: t - s is 0.5 on all of [0.5, 1]; the start of the overlap */
    r = seg(V(0, 0, 0), V(2, 0, 0), V(1, 1, 0), V(3, 1, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.0);
    EQ(r.distance, 1.0);
    FLAGS(r, 0, 1, 0);
    /* opposite directions pass each other at x = 1.5, t = s = 0.75 */
    r = seg(V(0, 0, 0), V(2, 0, 0), V(3, 1, 0), V(1, 1, 0), 2);
    EQ(r.t, 0.75);
    EQ(r.s, 0.75);
    EQ(r.distance, 1.0);
    FLAGS(r, 0, 1, 1);
    /* 3D, projections disjoint: p's end (0, 0, 4) and q's end (3, 4, 6),
     * both at parameter 1 */
    r = seg(V(0, 0, 0), V(0, 0, 4), V(3, 4, 8), V(3, 4, 6), 3);
    EQ(r.t, 1.0);
    EQ(r.s, 1.0);
    NEAR(r.distance, sqrt(29.0), 2 * U, 0);
    FLAGS(r, 0, 1, 1);
}

static void test_collinear_overlapping(void **st) {
    (void)st;
    /* head-on on the x axis: they meet at x = 3, t = s = 0.75 */
    imp_paths_result r = seg(V(0, 0, 0), V(4, 0, 0), V(6, 0, 0), V(2, 0, 0), 2);
    EQ(r.t, 0.75);
    EQ(r.s, 0.75);
    EQ(r.distance, 0.0);
    VEQ(r.point, 3, 0, 0);
    FLAGS(r, 1, 1, 1);
    /* same direction and speed, overlap [2, 4]: its start on p */
    r = seg(V(0, 0, 0), V(4, 0, 0), V(2, 0, 0), V(6, 0, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    VEQ(r.cp, 2, 0, 0);
    VEQ(r.cq, 2, 0, 0);
    FLAGS(r, 1, 1, 0);
    /* 3D, q inside p and slower: p(t) = 4t, q(s) = 1 + s meet at t = s = 1/3 */
    r = seg(V(0, 0, 0), V(4, 4, 4), V(1, 1, 1), V(2, 2, 2), 3);
    NEAR(r.t, 1.0 / 3.0, 2 * U, 0);
    NEAR(r.s, 1.0 / 3.0, 2 * U, 0);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 1, 1);
}

static void test_collinear_disjoint(void **st) {
    (void)st;
    imp_paths_result r = seg(V(0, 0, 0), V(1, 0, 0), V(3, 0, 0), V(5, 0, 0), 2);
    EQ(r.t, 1.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 2.0);
    VEQ(r.cp, 1, 0, 0);
    VEQ(r.cq, 3, 0, 0);
    VEQ(r.point, 2, 0, 0);
    FLAGS(r, 0, 1, 0);
    r = seg(V(0, 0, 0), V(1, 0, 0), V(5, 0, 0), V(3, 0, 0), 2);
    EQ(r.t, 1.0);
    EQ(r.s, 1.0);
    EQ(r.distance, 2.0);
    /* as rays they overlap from x = 3 on; t - s = t/2 + 1.5 is least at its start */
    r = run(V(0, 0, 0), V(1, 0, 0), V(3, 0, 0), V(5, 0, 0), 2, IMP_PATHS_RAY,
            IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 3.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 1, 0);
    /* rays pointing away from each other: the starts */
    r = run(V(0, 0, 0), V(-1, 0, 0), V(3, 0, 0), V(5, 0, 0), 2, IMP_PATHS_RAY,
            IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 3.0);
    FLAGS(r, 0, 1, 1);
}

static void test_touching_at_endpoint(void **st) {
    (void)st;
    imp_paths_result r = seg(V(0, 0, 0), V(2, 0, 0), V(2, 0, 0), V(3, 5, 0), 2);
    EQ(r.t, 1.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    VEQ(r.cp, 2, 0, 0);
    VEQ(r.cq, 2, 0, 0);
    FLAGS(r, 1, 0, 0);
    /* a T: q starts on the middle of p */
    r = seg(V(0, 0, 0), V(2, 0, 0), V(1, 0, 0), V(1, 3, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 0, 0);
    /* 3D, end to start */
    r = seg(V(0, 0, 0), V(1, 1, 1), V(1, 1, 1), V(2, 0, 5), 3);
    EQ(r.t, 1.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    VEQ(r.point, 1, 1, 1);
    /* just apart: 2^-40 beyond p's end, inside the default tolerance of 1e-9 * 3 */
    r = seg(V(0, 0, 0), V(2, 0, 0), V(2 + 0x1p-40, 0, 0), V(3, 1, 0), 2);
    EQ(r.t, 1.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 0x1p-40);
    FLAGS(r, 1, 0, 0);
}

static void test_kinds_give_different_answers(void **st) {
    (void)st;
    /* p from the origin along +x, q at x = -3 from y = -2 up to y = -1 */
    imp_vec3 p0 = V(0, 0, 0), p1 = V(1, 0, 0), q0 = V(-3, -2, 0), q1 = V(-3, -1, 0);
    imp_paths_result r = run(p0, p1, q0, q1, 2, IMP_PATHS_SEGMENT, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0.0); /* the origin and q's end (-3, -1) */
    EQ(r.s, 1.0);
    NEAR(r.distance, sqrt(10.0), 2 * U, 0);
    FLAGS(r, 0, 0, 0);
    r = run(p0, p1, q0, q1, 2, IMP_PATHS_RAY, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0.0); /* q's ray reaches (-3, 0), 3 from the origin */
    EQ(r.s, 2.0);
    EQ(r.distance, 3.0);
    VEQ(r.cq, -3, 0, 0);
    FLAGS(r, 0, 0, 0);
    r = run(p0, p1, q0, q1, 2, IMP_PATHS_LINE, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, -3.0); /* the lines cross at (-3, 0) */
    EQ(r.s, 2.0);
    EQ(r.distance, 0.0);
    VEQ(r.point, -3, 0, 0);
    FLAGS(r, 1, 0, 0);
    /* 3D, the same idea with a z offset of 1 */
    p0 = V(0, 0, 0), p1 = V(1, 0, 0), q0 = V(-3, -2, 1), q1 = V(-3, -1, 1);
    r = run(p0, p1, q0, q1, 3, IMP_PATHS_LINE, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, -3.0);
    EQ(r.s, 2.0);
    EQ(r.distance, 1.0);
    r = run(p0, p1, q0, q1, 3, IMP_PATHS_RAY, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0.0);
    EQ(r.s, 2.0);
    NEAR(r.distance, sqrt(10.0), 2 * U, 0);
}

static void test_zero_length(void **st) {
    (void)st;
    /* p a point above q: q's projection, and t = s (a particle at rest
     * there the whole time) */
    imp_paths_result r = seg(V(1, 1, 0), V(1, 1, 0), V(0, 0, 0), V(4, 0, 0), 2);
    assert_true(r.p_point && !r.q_point);
    EQ(r.s, 0.25);
    EQ(r.t, 0.25);
    EQ(r.distance, 1.0);
    VEQ(r.cp, 1, 1, 0);
    VEQ(r.cq, 1, 0, 0);
    FLAGS(r, 0, 0, 1);
    /* two points */
    r = seg(V(1, 2, 0), V(1, 2, 0), V(4, 6, 0), V(4, 6, 0), 2);
    assert_true(r.p_point && r.q_point);
    EQ(r.t, 0.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 5.0);
    VEQ(r.point, 2.5, 4, 0);
    FLAGS(r, 0, 0, 1);
    /* a point on q */
    r = seg(V(2, 0, 0), V(2, 0, 0), V(0, 0, 0), V(4, 0, 0), 2);
    EQ(r.t, 0.5);
    EQ(r.s, 0.5);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 0, 1);
    /* a point beyond q's end: the end for a segment, on the ray and line */
    r = seg(V(5, 0, 0), V(5, 0, 0), V(0, 0, 0), V(4, 0, 0), 2);
    EQ(r.s, 1.0);
    EQ(r.t, 1.0);
    EQ(r.distance, 1.0);
    for (int k = IMP_PATHS_RAY; k <= IMP_PATHS_LINE; ++k) {
        r = run(V(5, 0, 0), V(5, 0, 0), V(0, 0, 0), V(4, 0, 0), 2, (imp_paths_kind)k,
                IMP_PATHS_TOL_DEFAULT);
        EQ(r.s, 1.25);
        EQ(r.t, 1.25);
        EQ(r.distance, 0.0);
        FLAGS(r, 1, 0, 1);
    }
    /* q a point under p */
    r = seg(V(0, 0, 0), V(4, 0, 0), V(3, -1, 0), V(3, -1, 0), 2);
    EQ(r.t, 0.75);
    EQ(r.s, 0.75);
    EQ(r.distance, 1.0);
    /* a point behind q's start: segment and ray clamp to 0, the line goes back */
    r = seg(V(-4, 3, 0), V(-4, 3, 0), V(0, 0, 0), V(2, 0, 0), 2);
    EQ(r.s, 0.0);
    EQ(r.t, 0.0);
    EQ(r.distance, 5.0);
    r = run(V(-4, 3, 0), V(-4, 3, 0), V(0, 0, 0), V(2, 0, 0), 2, IMP_PATHS_LINE,
            IMP_PATHS_TOL_DEFAULT);
    EQ(r.s, -2.0);
    EQ(r.t, -2.0);
    EQ(r.distance, 3.0);
    /* 3D, the same point twice, everything at the origin */
    r = seg(V(1, 2, 3), V(1, 2, 3), V(1, 2, 3), V(1, 2, 3), 3);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 0, 1);
    r = seg(V(0, 0, 0), V(0, 0, 0), V(0, 0, 0), V(0, 0, 0), 3);
    EQ(r.distance, 0.0);
    EQ(r.dist_tol, 0.0);
    FLAGS(r, 1, 0, 1);
}

/* One geometry at many scales. */
typedef struct geom {
    imp_vec3 p0, p1, q0, q1;
    int dim;
    imp_paths_kind kind;
} geom;

static const geom GEOMS[] = {
    {{0, 0, 0}, {4, 0, 0}, {1, -3, 0}, {1, 1, 0}, 2, IMP_PATHS_SEGMENT},
    {{-1, 0, 0}, {3, 0, 0}, {1, -2, -1}, {1, 2, 3}, 3, IMP_PATHS_SEGMENT},
    {{0, 0, 0}, {4, 0, 0}, {1, 2, 0}, {3, 2, 0}, 2, IMP_PATHS_SEGMENT},
    {{0, 0, 0}, {4, 0, 0}, {6, 0, 0}, {2, 0, 0}, 2, IMP_PATHS_SEGMENT},
    {{0, 0, 0}, {1, 0, 0}, {-3, -2, 1}, {-3, -1, 1}, 3, IMP_PATHS_RAY},
    {{0, 0, 0}, {1, 0, 0}, {-3, -2, 1}, {-3, -1, 1}, 3, IMP_PATHS_LINE},
    {{1, 1, 0}, {1, 1, 0}, {0, 0, 0}, {4, 0, 0}, 2, IMP_PATHS_SEGMENT},
    {{0.1, 0.2, 0.3}, {0.7, -0.9, 0.5}, {0.6, 0.1, -0.2}, {-0.2, 0.8, 0.4}, 3, IMP_PATHS_SEGMENT},
    {{0.1, 0.2, 0}, {0.7, -0.9, 0}, {0.6, 0.1, 0}, {-0.2, 0.8, 0}, 2, IMP_PATHS_LINE},
};

static imp_vec3 vscale(imp_vec3 v, double k) { return V(v.x * k, v.y * k, v.z * k); }

static imp_paths_result run_geom(const geom *g, double k) {
    return run(vscale(g->p0, k), vscale(g->p1, k), vscale(g->q0, k), vscale(g->q1, k), g->dim,
               g->kind, IMP_PATHS_TOL_DEFAULT);
}

static void test_huge_and_tiny_scales(void **st) {
    (void)st;
    /* by powers of two the arithmetic is the same: bit-identical answers */
    static const int exps[] = {-900, -500, -100, -30, 30, 100, 500, 800};
    for (size_t g = 0; g < sizeof GEOMS / sizeof GEOMS[0]; ++g) {
        imp_paths_result b = run_geom(&GEOMS[g], 1.0);
        for (size_t i = 0; i < sizeof exps / sizeof exps[0]; ++i) {
            double k = ldexp(1.0, exps[i]);
            imp_paths_result r = run_geom(&GEOMS[g], k);
            if (r.t != b.t || r.s != b.s || r.distance != b.distance * k || r.cp.x != b.cp.x * k ||
                r.cq.y != b.cq.y * k || r.point.x != b.point.x * k ||
                r.intersects != b.intersects || r.parallel != b.parallel ||
                r.same_time != b.same_time)
                fail_msg("geometry %zu at 2^%d: t %.17g s %.17g d %.17g, at 1: %.17g %.17g %.17g",
                         g, exps[i], r.t, r.s, r.distance / k, b.t, b.s, b.distance);
        }
        /* by 1e-30 and 1e30 the inputs round differently: the same to rounding */
        static const double decs[] = {1e-30, 1e30, 1e-300, 1e200};
        for (size_t i = 0; i < sizeof decs / sizeof decs[0]; ++i) {
            imp_paths_result r = run_geom(&GEOMS[g], decs[i]);
            NEAR(r.t, b.t, 1e-14, 1.0);
            NEAR(r.s, b.s, 1e-14, 1.0);
            NEAR(r.distance / decs[i], b.distance, 1e-14, 1.0);
            assert_int_equal(r.intersects, b.intersects);
            assert_int_equal(r.parallel, b.parallel);
            assert_int_equal(r.same_time, b.same_time);
        }
    }
    /* where a e - b^2 ~ L^4 would underflow (1e-100) or overflow (1e100):
     * the skew pair above, sqrt(0.5) L apart */
    for (int i = 0; i < 2; ++i) {
        double L = i ? 1e100 : 1e-100;
        imp_paths_result r =
            seg(V(-L, 0, 0), V(3 * L, 0, 0), V(L, -2 * L, -L), V(L, 2 * L, 3 * L), 3);
        NEAR(r.t, 0.5, 4 * U, 0);
        NEAR(r.s, 0.375, 4 * U, 0);
        NEAR(r.distance, sqrt(0.5) * L, 8 * U, 0);
    }
}

static void test_near_parallel_compensated(void **st) {
    (void)st;
    /* Lines y = x and through (0, 1) along (1 + 2^-30, 1): they cross at
     * t = 2^30 + 1, s = 2^30. The determinant is -2^-30 next to terms of
     * size 1, and in 3D e = |d2|^2 = 2 + 2^-29 + 2^-60 is not even a double:
     * a e - b^2 from rounded dot products is noise. */
    const double eps = 0x1p-30;
    imp_paths_result r = run(V(0, 0, 0), V(1, 1, 0), V(0, 1, 0), V(1 + eps, 2, 0), 2,
                             IMP_PATHS_LINE, IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0x1p30 + 1);
    EQ(r.s, 0x1p30);
    EQ(r.distance, 0.0);
    FLAGS(r, 1, 0, 0);
    /* the same lifted: q at z = 1, so skew lines exactly 1 apart */
    r = run(V(0, 0, 0), V(1, 1, 0), V(0, 1, 1), V(1 + eps, 2, 1), 3, IMP_PATHS_LINE,
            IMP_PATHS_TOL_DEFAULT);
    EQ(r.t, 0x1p30 + 1);
    EQ(r.s, 0x1p30);
    EQ(r.distance, 1.0);
    VEQ(r.cp, 0x1p30 + 1, 0x1p30 + 1, 0);
    VEQ(r.cq, 0x1p30 + 1, 0x1p30 + 1, 1);
    FLAGS(r, 0, 0, 0);
}

static void test_parallel_threshold(void **st) {
    (void)st;
    /* q rises 2^-60 over a length of 1: below IMP_PATHS_PARALLEL_SIN (2^-48) */
    imp_paths_result r = run(V(0, 0, 0), V(1, 0, 0), V(5, 0, 0), V(6, 0x1p-60, 0), 2,
                             IMP_PATHS_LINE, IMP_PATHS_TOL_DEFAULT);
    assert_true(r.parallel);
    /* equal velocities (to rounding): t nearest 0, s its partner x = 0 on q */
    EQ(r.t, 0.0);
    EQ(r.s, -5.0);
    NEAR(r.distance, 5 * 0x1p-60, 2 * U, 0); /* |q's line at x = 0| */
    FLAGS(r, 1, 1, 0);
    /* 2^-40: above it, a crossing at (5, 0) */
    r = run(V(0, 0, 0), V(1, 0, 0), V(5, 0, 0), V(6, 0x1p-40, 0), 2, IMP_PATHS_LINE,
            IMP_PATHS_TOL_DEFAULT);
    assert_false(r.parallel);
    EQ(r.t, 5.0);
    EQ(r.s, 0.0);
    EQ(r.distance, 0.0);
    /* as segments both are p's end against q's start */
    for (int i = 0; i < 2; ++i) {
        r = seg(V(0, 0, 0), V(1, 0, 0), V(5, 0, 0), V(6, i ? 0x1p-40 : 0x1p-60, 0), 2);
        assert_int_equal(r.parallel, !i);
        EQ(r.t, 1.0);
        EQ(r.s, 0.0);
        EQ(r.distance, 4.0);
    }
}

static void test_tolerance(void **st) {
    (void)st;
    /* q starts 0.5 above p's middle: t = 0.5, s = 0, distance 0.5 */
    imp_vec3 p0 = V(0, 0, 0), p1 = V(1, 0, 0), q0 = V(0.5, 0.5, 0), q1 = V(0.5, 1.5, 0);
    imp_paths_result r = run(p0, p1, q0, q1, 2, IMP_PATHS_SEGMENT, IMP_PATHS_TOL_DEFAULT);
    EQ(r.distance, 0.5);
    EQ(r.dist_tol, 1e-9 * 1.5);
    EQ(r.param_tol, 1e-9);
    FLAGS(r, 0, 0, 0);
    /* an explicit tolerance bounds both the distance and |t - s| */
    r = run(p0, p1, q0, q1, 2, IMP_PATHS_SEGMENT, 0.5);
    FLAGS(r, 1, 0, 1);
    r = run(p0, p1, q0, q1, 2, IMP_PATHS_SEGMENT, 0.4999);
    FLAGS(r, 0, 0, 0);
    r = run(V(0, 0, 0), V(1, 0, 0), V(0.5, -1, 0), V(0.5, 1, 0), 2, IMP_PATHS_SEGMENT, 0.0);
    FLAGS(r, 1, 0, 1); /* exactly crossing at t = s = 0.5 meets even tolerance 0 */
    /* the default is relative to the scene: 5e10 apart in a 1e20 scene intersects */
    r = seg(V(0, 0, 0), V(1e20, 0, 0), V(5e19, 5e10, 0), V(5e19, 1e20, 0), 2);
    EQ(r.dist_tol, 1e-9 * 1e20);
    NEAR(r.distance, 5e10, 4 * U, 0);
    assert_true(r.intersects);
    /* and the default for |t - s| does not grow with the scene: t = 0.25,
     * s = 0.75 in a 1e30 scene do not meet */
    r = seg(V(0, 0, 0), V(1e30, 0, 0), V(0.25e30, -3e30, 0), V(0.25e30, 1e30, 0), 2);
    NEAR(r.t, 0.25, 2 * U, 0);
    NEAR(r.s, 0.75, 2 * U, 0);
    FLAGS(r, 1, 0, 0);
}

/* ---- property test ------------------------------------------------------------------------- */

#define PROPERTY_PAIRS 100000
#define SAMPLES 64
#define GOLDEN_STEPS 90

typedef struct prange {
    double lo, hi;
} prange;

static prange range_of(imp_paths_kind k) {
    prange r = {-INFINITY, INFINITY};
    if (k != IMP_PATHS_LINE) r.lo = 0.0;
    if (k == IMP_PATHS_SEGMENT) r.hi = 1.0;
    return r;
}

static double vdot(imp_vec3 a, imp_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static double vdist(imp_vec3 a, imp_vec3 b) { return imp_len(imp_sub(a, b)); }
static imp_vec3 at(imp_vec3 a, imp_vec3 b, double t) {
    return imp_add(a, imp_scale(imp_sub(b, a), t));
}

/* Distance from x to the path q0 -> q1 restricted to r: project, clamp. */
static double point_path_distance(imp_vec3 x, imp_vec3 q0, imp_vec3 q1, prange r) {
    imp_vec3 d = imp_sub(q1, q0);
    double dd = vdot(d, d), s = 0.0;
    if (dd > 0) {
        s = vdot(imp_sub(x, q0), d) / dd;
        s = s < r.lo ? r.lo : s > r.hi ? r.hi : s;
    }
    return vdist(x, imp_add(q0, imp_scale(d, s)));
}

typedef struct pair {
    imp_vec3 p0, p1, q0, q1;
    int dim;
    imp_paths_kind kind;
} pair;

static double h_of(const pair *pr, double t) {
    return point_path_distance(at(pr->p0, pr->p1, t), pr->q0, pr->q1, range_of(pr->kind));
}

/* Least h over [lo, hi] (h convex): the best of SAMPLES + 1 samples, then
 * golden-section search between its neighbours. */
static double reference_min(const pair *pr, double lo, double hi) {
    double best = INFINITY;
    int bi = 0;
    for (int i = 0; i <= SAMPLES; ++i) {
        double t = i == SAMPLES ? hi : lo + (hi - lo) * i / SAMPLES;
        double h = h_of(pr, t);
        if (h < best) best = h, bi = i;
    }
    double a = bi == 0 ? lo : lo + (hi - lo) * (bi - 1) / SAMPLES;
    double b = bi >= SAMPLES - 1 ? hi : lo + (hi - lo) * (bi + 1) / SAMPLES;
    const double g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double h1 = h_of(pr, x1), h2 = h_of(pr, x2);
    for (int k = 0; k < GOLDEN_STEPS; ++k) {
        if (h1 <= h2) {
            b = x2, x2 = x1, h2 = h1;
            x1 = b - g * (b - a);
            h1 = h_of(pr, x1);
        } else {
            a = x1, x1 = x2, h1 = h2;
            x2 = a + g * (b - a);
            h2 = h_of(pr, x2);
        }
    }
    return fmin(best, fmin(h1, h2));
}

static double grid_coord(uint64_t *g) { return (double)((int)(imp_rng_unit(g) * 129) - 64) / 16; }

static imp_vec3 rand_vec(uint64_t *g, int dim, int on_grid) {
    double c[3];
    for (int i = 0; i < 3; ++i)
        c[i] = on_grid ? grid_coord(g) : imp_rng_uniform(g, -1, 1);
    return V(c[0], c[1], dim == 3 ? c[2] : 0.0);
}

enum { MODE_GENERIC, MODE_PARALLEL, MODE_COLLINEAR, MODE_TOUCHING, MODE_POINT, MODE_NEAR_PARALLEL };

/* A random pair of the given mode, scaled by a power of two. */
static void make_pair(uint64_t *g, int mode, pair *pr) {
    static const double lambdas[] = {-2, -1, -0.75, -0.5, 0.25, 0.5, 1, 2, 3};
    int dim = pr->dim;
    int grid = mode != MODE_GENERIC && mode != MODE_NEAR_PARALLEL;
    pr->p0 = rand_vec(g, dim, grid);
    pr->p1 = rand_vec(g, dim, grid);
    pr->q0 = rand_vec(g, dim, grid);
    pr->q1 = rand_vec(g, dim, grid);
    imp_vec3 d = imp_sub(pr->p1, pr->p0);
    double lambda = lambdas[imp_rng_next(g) % (sizeof lambdas / sizeof lambdas[0])];
    switch (mode) {
    case MODE_PARALLEL: pr->q1 = imp_add(pr->q0, imp_scale(d, lambda)); break;
    case MODE_COLLINEAR:
        pr->q0 = imp_add(pr->p0, imp_scale(d, (double)((int)(imp_rng_next(g) % 17) - 8) / 4));
        pr->q1 = imp_add(pr->q0, imp_scale(d, lambda));
        break;
    case MODE_TOUCHING:
        pr->q0 = imp_add(pr->p0, imp_scale(d, (double)(imp_rng_next(g) % 5) / 4));
        break;
    case MODE_POINT: {
        uint64_t which = imp_rng_next(g) % 3;
        if (which != 1) pr->p1 = pr->p0;
        if (which != 0) pr->q1 = pr->q0;
        break;
    }
    case MODE_NEAR_PARALLEL: {
        double tiny = ldexp(1.0, -(int)(20 + imp_rng_next(g) % 41));
        pr->q1 =
            imp_add(imp_add(pr->q0, imp_scale(d, lambda)), imp_scale(rand_vec(g, dim, 0), tiny));
        break;
    }
    default: break;
    }
    int e = (int)(imp_rng_next(g) % 121) - 60;
    pr->p0 = vscale(pr->p0, ldexp(1.0, e));
    pr->p1 = vscale(pr->p1, ldexp(1.0, e));
    pr->q0 = vscale(pr->q0, ldexp(1.0, e));
    pr->q1 = vscale(pr->q1, ldexp(1.0, e));
}

static int vequal(imp_vec3 a, imp_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

static void check_pair(const pair *pr, int mode, uint64_t seed, long index, int *parallel_seen) {
#define PFAIL(...)                                                                                 \
    do {                                                                                           \
        char msg_[256];                                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                  \
        fail_msg("seed %#llx pair %ld (dim %d kind %d mode %d): %s\n p [(%a %a %a) (%a %a %a)]"    \
                 "\n q [(%a %a %a) (%a %a %a)]",                                                   \
                 (unsigned long long)seed, index, pr->dim, (int)pr->kind, mode, msg_, pr->p0.x,    \
                 pr->p0.y, pr->p0.z, pr->p1.x, pr->p1.y, pr->p1.z, pr->q0.x, pr->q0.y, pr->q0.z,   \
                 pr->q1.x, pr->q1.y, pr->q1.z);                                                    \
    } while (0)
    imp_paths_result r =
        run(pr->p0, pr->p1, pr->q0, pr->q1, pr->dim, pr->kind, IMP_PATHS_TOL_DEFAULT);
    prange rg = range_of(pr->kind);
    double scale = fmax(fmax(imp_max_abs(pr->p0), imp_max_abs(pr->p1)),
                        fmax(imp_max_abs(pr->q0), imp_max_abs(pr->q1)));
    if (!(isfinite(r.t) && isfinite(r.s) && isfinite(r.distance) && r.distance >= 0))
        PFAIL("t %g s %g distance %g", r.t, r.s, r.distance);
    if (r.t < rg.lo || r.t > rg.hi || r.s < rg.lo || r.s > rg.hi)
        PFAIL("parameters out of range: t %.17g s %.17g", r.t, r.s);
    if (pr->dim == 2 && (r.cp.z != 0 || r.cq.z != 0 || r.point.z != 0)) PFAIL("2D result has z");

    /* the closest points are at the reported parameters */
    imp_vec3 ep = at(pr->p0, pr->p1, r.t), eq = at(pr->q0, pr->q1, r.s);
    double xp = imp_max_abs(pr->p0) + fabs(r.t) * imp_max_abs(imp_sub(pr->p1, pr->p0));
    double xq = imp_max_abs(pr->q0) + fabs(r.s) * imp_max_abs(imp_sub(pr->q1, pr->q0));
    if (imp_max_abs(imp_sub(ep, r.cp)) > 8 * U * xp) PFAIL("closest.p is not p(t)");
    if (imp_max_abs(imp_sub(eq, r.cq)) > 8 * U * xq) PFAIL("closest.q is not q(s)");
    imp_vec3 mid = imp_scale(imp_add(r.cp, r.cq), 0.5);
    if (imp_max_abs(imp_sub(mid, r.point)) > 4 * U * fmax(xp, xq))
        PFAIL("point is not the midpoint");

    /* the distance is theirs, and the least one (independent reference) */
    double mag = fmax(scale, fmax(xp, xq));
    double tol = 1e-12 * mag;
    double dpq = vdist(r.cp, r.cq);
    if (fabs(dpq - r.distance) > tol)
        PFAIL("distance %.17g but |cp - cq| = %.17g", r.distance, dpq);
    double lo = rg.lo, hi = rg.hi;
    if (pr->kind != IMP_PATHS_SEGMENT) {
        double m = 1 + fabs(r.t);
        lo = fmax(lo, r.t - m);
        hi = r.t + m;
    }
    double ref = reference_min(pr, lo, hi);
    if (fabs(ref - r.distance) > tol)
        PFAIL("distance %.17g, reference minimum %.17g (t %.17g s %.17g)", r.distance, ref, r.t,
              r.s);

    /* the booleans follow from the numbers and the default tolerances */
    if (r.intersects != (r.distance <= 1e-9 * scale)) PFAIL("intersects %d", r.intersects);
    if (r.same_time != (fabs(r.t - r.s) <= 1e-9)) PFAIL("same_time %d", r.same_time);
    int p_point = vequal(pr->p0, pr->p1), q_point = vequal(pr->q0, pr->q1);
    if (r.p_point != p_point || r.q_point != q_point)
        PFAIL("point flags %d %d", r.p_point, r.q_point);
    int exact_parallel = (mode == MODE_PARALLEL || mode == MODE_COLLINEAR) && !p_point && !q_point;
    if (exact_parallel && !r.parallel) PFAIL("exactly parallel paths not reported parallel");
    if ((p_point || q_point) && r.parallel) PFAIL("a point reported parallel");
    if (mode == MODE_GENERIC && r.parallel) PFAIL("random directions reported parallel");
    if (pr->dim == 2 && pr->kind == IMP_PATHS_LINE && !r.parallel && !p_point && !q_point &&
        r.distance != 0.0)
        PFAIL("2D lines that cross at distance %.17g", r.distance);
    *parallel_seen += r.parallel;

    /* where the closest pair is not unique (parallel segments), none of the
     * closest pairs has a smaller |t - s| (sampled; s is t's partner) */
    if (exact_parallel && pr->kind == IMP_PATHS_SEGMENT) {
        double least = INFINITY;
        imp_vec3 d2 = imp_sub(pr->q1, pr->q0);
        for (int i = 0; i <= 256; ++i) {
            double t = i / 256.0;
            imp_vec3 x = at(pr->p0, pr->p1, t);
            double s = vdot(imp_sub(x, pr->q0), d2) / vdot(d2, d2);
            s = s < 0 ? 0 : s > 1 ? 1 : s;
            if (vdist(x, at(pr->q0, pr->q1, s)) <= r.distance + tol)
                least = fmin(least, fabs(t - s));
        }
        if (fabs(r.t - r.s) > least + 1e-10)
            PFAIL("|t - s| = %.17g but a closest pair has %.17g", fabs(r.t - r.s), least);
    }
#undef PFAIL
}

static void test_property_random_pairs(void **st) {
    (void)st;
    const uint64_t seed = 0x9A7B5ULL;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int kind = 0; kind < 3; ++kind) {
            uint64_t g = seed ^ ((uint64_t)dim << 40) ^ ((uint64_t)kind << 48);
            int parallel_seen = 0;
            for (long i = 0; i < PROPERTY_PAIRS; ++i) {
                pair pr = {.dim = dim, .kind = (imp_paths_kind)kind};
                uint64_t m = imp_rng_next(&g) % 10;
                int mode = m < 5 ? MODE_GENERIC : (int)m - 4;
                make_pair(&g, mode, &pr);
                check_pair(&pr, mode, seed, i, &parallel_seen);
            }
            /* the draw is not degenerate: exact parallels make ~2/10 of it */
            if (parallel_seen < PROPERTY_PAIRS / 8)
                fail_msg("seed %#llx dim %d kind %d: only %d parallel pairs",
                         (unsigned long long)seed, dim, kind, parallel_seen);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crossing_segments_2d),
        cmocka_unit_test(test_skew_lines_3d),
        cmocka_unit_test(test_parallel),
        cmocka_unit_test(test_collinear_overlapping),
        cmocka_unit_test(test_collinear_disjoint),
        cmocka_unit_test(test_touching_at_endpoint),
        cmocka_unit_test(test_kinds_give_different_answers),
        cmocka_unit_test(test_zero_length),
        cmocka_unit_test(test_huge_and_tiny_scales),
        cmocka_unit_test(test_near_parallel_compensated),
        cmocka_unit_test(test_parallel_threshold),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_property_random_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
