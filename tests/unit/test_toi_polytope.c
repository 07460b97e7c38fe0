/*
 * test_toi_polytope.c - swept SAT for translating convex polygons and 3D polytopes.
 *
 * Known answers (boxes head-on, a rotated box falling under gravity onto a
 * box, sliding along a face, touching at t = 0 approaching or separating,
 * overlapping at t = 0, vertex against edge, a miss), and a property test
 * on random polygon pairs with linear and accelerated motion checked by the
 * static overlap test (core/overlap.c, a different algorithm: no sweep):
 * at a reported hit the polygons touch to within 1e-9 of the scene scale,
 * and at no sampled earlier time do they interpenetrate by more; a reported
 * `none` never interpenetrates at any sampled time; `overlapping` agrees
 * with the static depth. The same on polygons of 33 to 60 vertices (the
 * heap path), and the bounding-circle cull checked by sampling. Two boxes'
 * own path against the general one on the same boxes given as polyhedra.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/overlap.h"
#include "core/toi_advance.h"
#include "core/toi_polytope.h"
#include "tests/rng.h"
#include "tests/shapes.h"
#include "tests/toi_check.h"

#define PI 3.14159265358979323846

static imp_toi_result solve(const imp_shape *a, imp_motion ma, const imp_shape *b, imp_motion mb,
                            double horizon) {
    imp_vec3 ba[4], bb[4];
    imp_toi_polygons_input in = {.a = ma, .b = mb, .horizon = horizon};
    in.na = imp_shape_polygon_vertices(a, ba, &in.va);
    in.nb = imp_shape_polygon_vertices(b, bb, &in.vb);
    return imp_toi_polygons(&in);
}

static void test_known_answers(void **state) {
    (void)state;
    imp_shape bx = box2(1, 1, 0), diamond = box2(1, 1, PI / 4);
    /* head-on: faces 3 apart closing at 1 */
    imp_toi_result r =
        solve(&bx, motion2(0, 0, 1, 0, 0, 0), &bx, motion2(5, 0, 0, 0, 0, 0), INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(r.time == 3.0 && r.normal.x == 1 && r.normal.y == 0);
    assert_true(r.point.x == 4.0 && r.point.y == 0.0);
    /* the horizon cuts it off */
    r = solve(&bx, motion2(0, 0, 1, 0, 0, 0), &bx, motion2(5, 0, 0, 0, 0, 0), 2.5);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* a diamond falls from rest under a = -2 onto a box: its vertex drops 10 - sqrt 2 - 1 */
    r = solve(&bx, motion2(0, 0, 0, 0, 0, 0), &diamond, motion2(0, 10, 0, 0, 0, -2), 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    double t = sqrt(10 - sqrt(2.0) - 1);
    if (fabs(r.time - t) > 1e-15 * t) fail_msg("falling diamond: %.17g, want %.17g", r.time, t);
    assert_true(r.normal.y == 1 && fabs(r.point.x) < 1e-15 && fabs(r.point.y - 1) < 1e-15);
    /* sliding along the top face: no contact */
    r = solve(&bx, motion2(0, 0, 1, 0, 0, 0), &bx, motion2(0, 2, 0, 0, 0, 0), 10);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* touching at t = 0: approaching is a hit at 0, separating is none */
    r = solve(&bx, motion2(0, 0, 1, 0, 0, 0), &bx, motion2(2, 0, 0, 0, 0, 0), 10);
    assert_true(r.state == IMP_TOI_HIT && r.time == 0.0 && r.normal.x == 1);
    r = solve(&bx, motion2(0, 0, -1, 0, 0, 0), &bx, motion2(2, 0, 0, 0, 0, 0), 10);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* separating now, pulled back later by acceleration: the next touch */
    r = solve(&bx, motion2(0, 0, -1, 0, 1, 0), &bx, motion2(2, 0, 0, 0, 0, 0), 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(fabs(r.time - 2.0) < 1e-15); /* x(t) = -t + t^2/2 returns to 0 at t = 2 */
    /* overlapping at t = 0 */
    r = solve(&bx, motion2(0, 0, 0, 0, 0, 0), &bx, motion2(1, 1.5, 0, 0, 0, 0), 10);
    assert_int_equal(r.state, IMP_TOI_OVERLAPPING);
    assert_true(r.depth == 0.5 && r.normal.y == 1);
    /* a corner of the diamond against a vertical face, sideways */
    r = solve(&diamond, motion2(0, 0, 2, 0, 0, 0), &bx, motion2(6, 0.5, 0, 0, 0, 0), 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    if (fabs(r.time - (5 - sqrt(2.0)) / 2) > 1e-15) fail_msg("corner: %.17g", r.time);
    assert_true(r.normal.x == 1 && fabs(r.point.x - 5) < 1e-14 && fabs(r.point.y) < 1e-14);
    /* passing by with a gap */
    r = solve(&bx, motion2(0, 0, 1, 0, 0, 0), &bx, motion2(5, 2.5, 0, 0, 0, 0), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
}

/* A box (40%) or a polygon of n_min to n_min + n_span - 1 jittered vertices. */
static imp_shape random_polygon_n(uint64_t *rng, imp_vec3 *vbuf, size_t n_min, double n_span) {
    double size = imp_rng_uniform(rng, 0.3, 2);
    if (imp_rng_unit(rng) < 0.4)
        return box2(size, imp_rng_uniform(rng, 0.3, 2), imp_rng_uniform(rng, -PI, PI));
    size_t n = n_min + (size_t)(imp_rng_unit(rng) * n_span);
    double a0 = imp_rng_uniform(rng, 0, 2 * PI);
    for (size_t i = 0; i < n; ++i) {
        double a = a0 + 2 * PI * ((double)i + imp_rng_uniform(rng, -0.3, 0.3)) / (double)n;
        vbuf[i] = imp_v3(size * cos(a), size * sin(a), 0);
    }
    imp_shape s = {.type = IMP_SHAPE_POLYGON, .verts = vbuf, .n_verts = n};
    return s;
}

/* `cases` random polygon pairs (n_min to n_min + n_span - 1 vertices, or
 * boxes), half of them accelerating, each answer checked against the
 * static overlap test; counts[] gets hits, nones and overlaps. */
static void random_pairs_against_static_overlap(uint64_t seed, int cases, size_t n_min,
                                                double n_span, int counts[3]) {
    uint64_t rng = seed;
    const double horizon = 5.0;
    counts[0] = counts[1] = counts[2] = 0;
    for (int k = 0; k < cases; ++k) {
        imp_vec3 va[64], vb[64];
        imp_shape a = random_polygon_n(&rng, va, n_min, n_span),
                  b = random_polygon_n(&rng, vb, n_min, n_span);
        int accel = k % 2;
        imp_motion ma = motion2(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2),
                                accel ? imp_rng_uniform(&rng, -1, 1) : 0,
                                accel ? imp_rng_uniform(&rng, -1, 1) : 0);
        imp_motion mb = motion2(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2),
                                accel ? imp_rng_uniform(&rng, -1, 1) : 0,
                                accel ? imp_rng_uniform(&rng, -1, 1) : 0);
        imp_toi_result r = solve(&a, ma, &b, mb, horizon);
        /* the scene's scale is about 20 */
        const char *bad =
            imp_test_toi_check(&a, &ma, &b, &mb, 2, horizon, &r, 1e-9 * 20, 1e-12 * 20, 100);
        if (bad) fail_msg("seed %#llx case %d: %s", (unsigned long long)seed, k, bad);
        counts[0] += r.state == IMP_TOI_HIT;
        counts[1] += r.state == IMP_TOI_NONE;
        counts[2] += r.state == IMP_TOI_OVERLAPPING;
    }
    print_message("seed %#llx: hits %d, none %d, overlapping %d\n", (unsigned long long)seed,
                  counts[0], counts[1], counts[2]);
}

static void test_random_against_static_overlap(void **state) {
    (void)state;
    int c[3];
    random_pairs_against_static_overlap(0x7011F, 20000, 3, 6, c);
    assert_true(c[0] > 1000 && c[1] > 1000 && c[2] > 100);
}

/* Polygons of 33 to 60 vertices: more than 64 edges in a pair take the
 * solver's heap path, and the calipers walk long chains. */
static void test_many_edges_against_static_overlap(void **state) {
    (void)state;
    int c[3];
    random_pairs_against_static_overlap(0x7011E, 2000, 33, 28, c);
    assert_true(c[0] > 100 && c[1] > 100 && c[2] > 10);
}

/* imp_toi_bounds_miss only ever certifies a miss: wherever it does, the
 * bounding circles stay apart at every sampled time; it certifies most
 * far misses, and never a pair that accelerates or touches. */
static void test_bounds_miss_is_certain(void **state) {
    (void)state;
    const uint64_t seed = 0xB0D5;
    uint64_t rng = seed;
    int culled = 0;
    for (int k = 0; k < 20000; ++k) {
        imp_motion ma = motion2(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2), 0, 0);
        imp_motion mb = motion2(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2), 0, 0);
        double ra = imp_rng_uniform(&rng, 0.1, 2), rb = imp_rng_uniform(&rng, 0.1, 2);
        double h = k % 3 ? 2.0 : INFINITY;
        if (!imp_toi_bounds_miss(&ma, ra, &mb, rb, h)) continue;
        ++culled;
        double end = h == INFINITY ? 1e3 : h;
        for (int i = 0; i <= 2000; ++i) {
            double t = end * i / 2000.0;
            double d = imp_len(
                imp_sub(imp_path_at(mb.p, mb.v, mb.a, t), imp_path_at(ma.p, ma.v, ma.a, t)));
            if (!(d > ra + rb))
                fail_msg("seed %#llx case %d: culled, but %.17g apart at t = %g (radii %g)",
                         (unsigned long long)seed, k, d, t, ra + rb);
        }
    }
    print_message("seed %#llx: %d of 20000 culled\n", (unsigned long long)seed, culled);
    assert_true(culled > 5000);
    /* head-on, touching at t = 2 exactly: not culled, nor just grazing */
    imp_motion a = motion2(0, 0, 0, 0, 0, 0), b = motion2(6, 0, -1, 0, 0, 0);
    assert_false(imp_toi_bounds_miss(&a, 1, &b, 3, 2.0));
    b = motion2(6, 4, -1, 0, 0, 0); /* passes at distance 4 = the radii's sum */
    assert_false(imp_toi_bounds_miss(&a, 1, &b, 3, 10.0));
    b = motion2(6, 4.001, -1, 0, 0, 0);
    assert_true(imp_toi_bounds_miss(&a, 1, &b, 3, 10.0));
    b = motion2(60, 0, 0, 0, -1, 0); /* far, but accelerating towards a */
    assert_false(imp_toi_bounds_miss(&a, 1, &b, 3, 10.0));
}

/* ---- 3D boxes and polyhedra ------------------------------------------------------------ */

static void test_known_answers_3d(void **state) {
    (void)state;
    const imp_quat id = {1, 0, 0, 0};
    imp_shape bx = box3(1, 1, 1, id);
    imp_vec3 o = imp_v3(0, 0, 0);
    /* head-on along x: faces 3 apart closing at 1 */
    imp_motion ma = motion3(o, imp_v3(1, 0, 0), o), mb = motion3(imp_v3(5, 0.5, 0), o, o);
    imp_toi_result r = imp_toi_polytopes_3d(&bx, &ma, &bx, &mb, INFINITY);
    assert_true(r.state == IMP_TOI_HIT && r.time == 3 && r.normal.x == 1);
    assert_true(fabs(r.point.x - 4) < 1e-15);
    /* two boxes turned 45 degrees about different axes meet edge to edge: b's lowest edge
     * (along x, sqrt 2 below its centre) on a's highest edge (along y, sqrt 2 above) */
    double c = cos(3.14159265358979323846 / 8), s = sin(3.14159265358979323846 / 8);
    imp_shape ay = box3(1, 1, 1, (imp_quat){c, 0, s, 0}),
              bxr = box3(1, 1, 1, (imp_quat){c, s, 0, 0});
    mb = motion3(imp_v3(0, 0, 10), imp_v3(0, 0, -1), o);
    ma = motion3(o, o, o);
    r = imp_toi_polytopes_3d(&ay, &ma, &bxr, &mb, INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    if (fabs(r.time - (10 - 2 * sqrt(2.0))) > 1e-14) fail_msg("edge to edge: %.17g", r.time);
    assert_true(fabs(r.normal.z - 1) < 1e-14);
    assert_true(fabs(r.point.x) < 1e-14 && fabs(r.point.y) < 1e-14 &&
                fabs(r.point.z - sqrt(2.0)) < 1e-14);
    /* a tetrahedron dropped under gravity onto a box: its lowest vertex falls 9 - 1 = t^2 */
    imp_vec3 tet[4] = {{0, 0, -1}, {1, 0, 1}, {-1, 1, 1}, {-1, -1, 1}};
    imp_shape th = {.type = IMP_SHAPE_POLYHEDRON, .verts = tet, .n_verts = 4};
    mb = motion3(imp_v3(0.3, 0.2, 10), o, imp_v3(0, 0, -2));
    r = imp_toi_polytopes_3d(&bx, &ma, &th, &mb, 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(fabs(r.time - sqrt(8.0)) < 1e-15 && fabs(r.normal.z - 1) < 1e-15);
    assert_true(fabs(r.point.x - 0.3) < 1e-14 && fabs(r.point.y - 0.2) < 1e-14 &&
                fabs(r.point.z - 1) < 1e-14);
    /* sliding along a face, a miss, overlapping */
    mb = motion3(imp_v3(-5, 0, 2), imp_v3(1, 0, 0), o);
    assert_int_equal(imp_toi_polytopes_3d(&bx, &ma, &bx, &mb, 10).state, IMP_TOI_NONE);
    mb = motion3(imp_v3(-5, 3, 0), imp_v3(1, 0, 0), o);
    assert_int_equal(imp_toi_polytopes_3d(&bx, &ma, &bx, &mb, 10).state, IMP_TOI_NONE);
    mb = motion3(imp_v3(1.5, 0.2, 0.1), o, o);
    r = imp_toi_polytopes_3d(&bx, &ma, &bx, &mb, 10);
    assert_true(r.state == IMP_TOI_OVERLAPPING && r.depth == 0.5 && r.normal.x == 1);
}

static imp_shape random_polytope(uint64_t *rng, imp_vec3 *vbuf) {
    if (imp_rng_unit(rng) < 0.5) {
        imp_quat q = {imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                      imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1)},
                 u;
        if (imp_quat_normalize(q, &u) != 0) u = (imp_quat){1, 0, 0, 0};
        return box3(imp_rng_uniform(rng, 0.2, 2), imp_rng_uniform(rng, 0.2, 2),
                    imp_rng_uniform(rng, 0.2, 2), u);
    }
    size_t n = 4 + (size_t)(imp_rng_unit(rng) * 12);
    double size = imp_rng_uniform(rng, 0.3, 2);
    for (size_t i = 0; i < n; ++i) { /* points on a sphere */
        double z = imp_rng_uniform(rng, -1, 1), a = imp_rng_uniform(rng, 0, 6.283185307179586);
        double rr = sqrt(1 - z * z);
        vbuf[i] = imp_v3(size * rr * cos(a), size * rr * sin(a), size * z);
    }
    imp_shape s = {.type = IMP_SHAPE_POLYHEDRON, .verts = vbuf, .n_verts = n};
    return s;
}

/* a motion from within 4 of the origin at up to 2 per axis, accelerating up to 1 per axis
 * when accel is set */
static imp_motion random_motion3(uint64_t *rng, int accel) {
    return motion3(imp_v3(imp_rng_uniform(rng, -4, 4), imp_rng_uniform(rng, -4, 4),
                          imp_rng_uniform(rng, -4, 4)),
                   imp_v3(imp_rng_uniform(rng, -2, 2), imp_rng_uniform(rng, -2, 2),
                          imp_rng_uniform(rng, -2, 2)),
                   accel ? imp_v3(imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                                  imp_rng_uniform(rng, -1, 1))
                         : imp_v3(0, 0, 0));
}

static void test_random_3d_against_static_overlap(void **state) {
    (void)state;
    const uint64_t seed = 0x3D5A7;
    uint64_t rng = seed;
    int hits = 0, nones = 0;
    for (int k = 0; k < 4000; ++k) {
        imp_vec3 va[16], vb[16];
        imp_shape a = random_polytope(&rng, va), b = random_polytope(&rng, vb);
        int accel = k % 2;
        imp_motion m[2];
        for (int j = 0; j < 2; ++j)
            m[j] = random_motion3(&rng, accel);
        imp_toi_result r = imp_toi_polytopes_3d(&a, &m[0], &b, &m[1], 5);
        const char *bad = imp_test_toi_check(&a, &m[0], &b, &m[1], 3, 5, &r, 1e-9 * 20, -1, 40);
        if (bad) fail_msg("seed %#llx case %d: %s", (unsigned long long)seed, k, bad);
        hits += r.state == IMP_TOI_HIT;
        nones += r.state == IMP_TOI_NONE;
    }
    print_message("3D: hits %d, none %d\n", hits, nones);
    assert_true(hits > 300 && nones > 300);
}

/* The swept separating axes (exact) against the conservative-advancement
 * fallback (a different algorithm: distance queries and motion bounds) on
 * random 3D box and polyhedron pairs: same verdict, and times within the
 * fallback's tolerance (it stops up to that gap early, scaled by speed). */
static void test_swept_sat_agrees_with_advancement(void **state) {
    (void)state;
    const uint64_t seed = 0xAD5A7;
    uint64_t rng = seed;
    int hits = 0;
    const double tol = 1e-9;
    for (int k = 0; k < 1500; ++k) {
        imp_vec3 va[16], vb[16];
        imp_shape a = random_polytope(&rng, va), b = random_polytope(&rng, vb);
        imp_motion m[2];
        for (int j = 0; j < 2; ++j)
            m[j] = motion3(
                imp_v3(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                       imp_rng_uniform(&rng, -4, 4)),
                imp_v3(imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2),
                       imp_rng_uniform(&rng, -2, 2)),
                k % 2 ? imp_v3(imp_rng_uniform(&rng, -1, 1), 0, imp_rng_uniform(&rng, -1, 1))
                      : imp_v3(0, 0, 0));
        imp_toi_result r = imp_toi_polytopes_3d(&a, &m[0], &b, &m[1], 5);
        imp_toi_result c = imp_toi_advance(&a, &m[0], &b, &m[1], 3, 5, tol);
        if (r.state == IMP_TOI_OVERLAPPING || c.state == IMP_TOI_OVERLAPPING)
            continue; /* the two disagree only on depths within the tolerance of touching */
        /* relative speed bounds how much earlier the fallback may stop */
        double speed = imp_len(imp_sub(m[1].v, m[0].v)) + 5 * imp_len(imp_sub(m[1].a, m[0].a));
        double slack = 4 * tol / (speed > 1e-9 ? speed : 1e-9) + 1e-9;
        if (r.state != c.state || (r.state == IMP_TOI_HIT && !(fabs(r.time - c.time) <= slack)))
            fail_msg("seed %#llx case %d: swept SAT %d at %.17g, advancement %d at %.17g",
                     (unsigned long long)seed, k, r.state, r.time, c.state, c.time);
        hits += r.state == IMP_TOI_HIT;
    }
    assert_true(hits > 100);
}

/* A fast path's answer r against the reference g: the same state and, but for a miss,
 * the same time (relative to 1 or more) or depth, normal and contact point within 1e-12;
 * worst[] gathers the largest differences of the three. */
static void expect_same(uint64_t seed, int k, const imp_toi_result *r, const imp_toi_result *g,
                        double worst[3]) {
    if (r->state != g->state)
        fail_msg("seed %#llx case %d: %d at %.17g, the reference %d at %.17g",
                 (unsigned long long)seed, k, r->state, r->time, g->state, g->time);
    if (r->state == IMP_TOI_NONE) return;
    double d[3] = {fabs(r->time - g->time) / fmax(1.0, g->time) + fabs(r->depth - g->depth),
                   imp_len(imp_sub(r->normal, g->normal)), imp_len(imp_sub(r->point, g->point))};
    for (int i = 0; i < 3; ++i)
        worst[i] = fmax(worst[i], d[i]);
    if (!(d[0] <= 1e-12 && d[1] <= 1e-12 && d[2] <= 1e-12))
        fail_msg("seed %#llx case %d: state %d, time or depth %.17g vs %.17g, normal off by "
                 "%.3g, point by %.3g",
                 (unsigned long long)seed, k, r->state, r->time + r->depth, g->time + g->depth,
                 d[1], d[2]);
}

/* Two boxes take their own path (the 15 axes from the frames, extents from the half sizes);
 * the same boxes given as 8-point polyhedra take the general one (hull, Gauss map axes,
 * projected corners): on random pairs, linear and accelerated, the same state, and the
 * same time, normal and contact point up to rounding. */
static void test_box_path_equals_general(void **state) {
    (void)state;
    const uint64_t seed = 0xB0B5;
    uint64_t rng = seed;
    int hits = 0, overlaps = 0;
    double worst[3] = {0, 0, 0};
    for (int k = 0; k < 20000; ++k) {
        imp_shape box[2], poly[2];
        imp_vec3 corners[2][8];
        for (int j = 0; j < 2; ++j) {
            imp_quat q = {imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                          imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1)},
                     u;
            /* one box in eight keeps the identity: parallel edges, skipped crosses */
            if (k % 8 == 0 || imp_quat_normalize(q, &u) != 0) u = (imp_quat){1, 0, 0, 0};
            box[j] = box3(imp_rng_uniform(&rng, 0.2, 2), imp_rng_uniform(&rng, 0.2, 2),
                          imp_rng_uniform(&rng, 0.2, 2), u);
            const imp_vec3 *pts;
            double unused;
            size_t n = imp_shape_points(&box[j], 3, corners[j], &pts, &unused);
            assert_true(n == 8 && pts == corners[j]);
            poly[j] = (imp_shape){.type = IMP_SHAPE_POLYHEDRON, .verts = corners[j], .n_verts = n};
        }
        imp_motion m[2];
        for (int j = 0; j < 2; ++j)
            m[j] = random_motion3(&rng, k % 2);
        imp_toi_result r = imp_toi_polytopes_3d(&box[0], &m[0], &box[1], &m[1], 5);
        imp_toi_result g = imp_toi_polytopes_3d_hull(&poly[0], &m[0], &poly[1], &m[1], 5);
        expect_same(seed, k, &r, &g, worst);
        hits += r.state == IMP_TOI_HIT;
        overlaps += r.state == IMP_TOI_OVERLAPPING;
    }
    print_message("seed %#llx: %d hits, %d overlapping; worst time or depth %.3g, normal %.3g, "
                  "point %.3g\n",
                  (unsigned long long)seed, hits, overlaps, worst[0], worst[1], worst[2]);
    assert_true(hits > 1500 && overlaps > 1500);
}

/* 4 to 20 points at 0.6 to 1 times a size from the centre (so some inside the hull), or
 * on the sphere of that size (every one a vertex), or a turned box */
static imp_shape random_cast_shape(uint64_t *rng, imp_vec3 *vbuf) {
    double kind = imp_rng_unit(rng);
    if (kind < 0.3) return random_polytope(rng, vbuf); /* a box or points on a sphere */
    size_t n = 4 + (size_t)(imp_rng_unit(rng) * 17);
    double size = imp_rng_uniform(rng, 0.3, 2);
    for (;;) {
        for (size_t i = 0; i < n; ++i) {
            double z = imp_rng_uniform(rng, -1, 1), a = imp_rng_uniform(rng, 0, 6.283185307179586);
            double rr = sqrt(1 - z * z), d = size * imp_rng_uniform(rng, 0.6, 1.0);
            vbuf[i] = imp_v3(d * rr * cos(a), d * rr * sin(a), d * z);
        }
        if (imp_polyhedron_check(vbuf, n) == 0) break;
    }
    return (imp_shape){.type = IMP_SHAPE_POLYHEDRON, .verts = vbuf, .n_verts = n};
}

/* Under linear motion a box or polyhedron pair is first asked of a GJK ray cast whose
 * answer is certified on one axis (imp_toi_cast); the hull path over every
 * candidate axis is the reference: on random pairs every certified answer has its state,
 * and its time, normal and contact point up to rounding; and most pairs are certified. */
static void test_certified_cast_equals_hull(void **state) {
    (void)state;
    const uint64_t seed = 0xCA57;
    uint64_t rng = seed;
    int hits = 0, nones = 0, und_state[4] = {0};
    double worst[3] = {0, 0, 0};
    for (int k = 0; k < 20000; ++k) {
        imp_vec3 va[20], vb[20];
        imp_shape a = random_cast_shape(&rng, va), b = random_cast_shape(&rng, vb);
        if (a.type == IMP_SHAPE_BOX && b.type == IMP_SHAPE_BOX) continue; /* their own path */
        imp_motion m[2] = {random_motion3(&rng, 0), random_motion3(&rng, 0)};
        if (k % 2) { /* aimed: b heads for a point near a within about 2 time units */
            imp_vec3 aim =
                imp_v3(imp_rng_uniform(&rng, -1.5, 1.5), imp_rng_uniform(&rng, -1.5, 1.5),
                       imp_rng_uniform(&rng, -1.5, 1.5));
            m[1].v = imp_add(m[0].v, imp_scale(imp_sub(imp_add(m[0].p, aim), m[1].p), 0.5));
        }
        double horizon = k % 4 == 0 ? INFINITY : 5;
        if (imp_toi_bounds_miss(&m[0], imp_shape_extent(&a, 3), &m[1], imp_shape_extent(&b, 3),
                                horizon))
            continue; /* imp_toi_polytopes_3d's first test: no cast asked */
        imp_toi_result r, g = imp_toi_polytopes_3d_hull(&a, &m[0], &b, &m[1], horizon);
        if (!imp_toi_polytopes_3d_cast(&a, &m[0], &b, &m[1], horizon, &r)) {
            ++und_state[g.state];
            continue;
        }
        expect_same(seed, k, &r, &g, worst);
        hits += r.state == IMP_TOI_HIT;
        nones += r.state == IMP_TOI_NONE;
    }
    print_message("seed %#llx: certified %d hits and %d none; left to the hull path %d hits, %d "
                  "none and %d overlapping at 0; worst time or depth %.3g, normal %.3g, point "
                  "%.3g\n",
                  (unsigned long long)seed, hits, nones, und_state[IMP_TOI_HIT],
                  und_state[IMP_TOI_NONE], und_state[IMP_TOI_OVERLAPPING], worst[0], worst[1],
                  worst[2]);
    /* overlapping at t = 0 is always the hull path's (the cast has no plane to certify) */
    assert_true(hits > 6000 && nones > 2000 && und_state[IMP_TOI_HIT] < hits / 100 &&
                und_state[IMP_TOI_NONE] < nones / 100 && und_state[IMP_TOI_OVERLAPPING] > 300);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_random_against_static_overlap),
        cmocka_unit_test(test_many_edges_against_static_overlap),
        cmocka_unit_test(test_bounds_miss_is_certain),
        cmocka_unit_test(test_known_answers_3d),
        cmocka_unit_test(test_random_3d_against_static_overlap),
        cmocka_unit_test(test_swept_sat_agrees_with_advancement),
        cmocka_unit_test(test_box_path_equals_general),
        cmocka_unit_test(test_certified_cast_equals_hull),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
