/*
 * test_toi_shapes.c - the pairwise time of impact dispatcher
 * (imp_toi_shapes) over every pair of shape types, and the exact 3D cast
 * of spheres, capsules and segments against boxes, polyhedra and each
 * other (core/toi_rounded_3d.c).
 *
 * Known answers in 3D: a sphere onto a box's face, edge and corner, under
 * gravity onto a face, onto an octahedron's vertex; crossing and parallel
 * capsules; a capsule lying flat onto a face; a segment (no radius) onto a
 * face; a sphere sliding along a face and past an edge (no contact);
 * touching at t = 0 approaching and parting; overlapping at t = 0.
 * Properties, on 100,000 random pairs per dimension over every pair of
 * shape types (halfspaces moving too), linear and accelerated, a tenth
 * starting in contact and a twentieth interpenetrating: at a reported hit the static overlap test
 * (SAT and GJK, no sweep: an independent method) measures the shapes touching to within 1e-9 of the
 * scene's scale, just before it and at sampled earlier times they do not interpenetrate, a `none`
 * never interpenetrates at the sampled times, and an overlap at 0 has the static depth. And the
 * exact 3D cast against conservative advancement (a different algorithm) on random pairs: same
 * verdict and times within the fallback's tolerance.
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
#include "core/toi_rounded.h"
#include "core/toi_shapes.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"
#include "tests/shapes.h"
#include "tests/toi_check.h"

/* 1e-9 of the scenes below (coordinates up to about 20) */
#define TOL (1e-9 * 20)
#define PAIRS 100000
#define PI_4 0.78539816339744831

static const imp_quat ID = {1, 0, 0, 0};

static imp_toi_result toi3(imp_shape a, imp_motion ma, imp_shape b, imp_motion mb, double h) {
    imp_toi_result r = imp_toi_shapes(&a, &ma, &b, &mb, 3, h);
    const char *bad = imp_test_toi_check(&a, &ma, &b, &mb, 3, h, &r, 1e-12, 1e-12, 50);
    if (bad) fail_msg("%s", bad);
    assert_true(r.tolerance == 0.0); /* exact, not advancement */
    return r;
}

static imp_motion at(double x, double y, double z, double vx, double vy, double vz) {
    return motion3(imp_v3(x, y, z), imp_v3(vx, vy, vz), imp_v3(0, 0, 0));
}

static void assert_near(double x, double y, double tol) {
    if (!(fabs(x - y) <= tol)) fail_msg("%.17g, expected %.17g", x, y);
}

static void assert_vec_near(imp_vec3 x, imp_vec3 y, double tol) {
    if (!(imp_len(imp_sub(x, y)) <= tol))
        fail_msg("(%.17g, %.17g, %.17g), expected (%.17g, %.17g, %.17g)", x.x, x.y, x.z, y.x, y.y,
                 y.z);
}

static void assert_hit(imp_toi_result r, double t, imp_vec3 normal, imp_vec3 point) {
    if (r.state != IMP_TOI_HIT) fail_msg("state %d, expected a hit at %.17g", r.state, t);
    assert_near(r.time, t, 1e-14);
    assert_vec_near(r.normal, normal, 1e-12);
    assert_vec_near(r.point, point, 1e-12);
}

static void test_sphere_onto_box_features(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), cube = box3(1, 1, 1, ID);
    imp_motion still = at(0, 0, 0, 0, 0, 0);
    /* face: from z = 5 down at unit speed, touches at z = 1.5 */
    assert_hit(toi3(ball, at(0.3, -0.2, 5, 0, 0, -1), cube, still, 10), 3.5, imp_v3(0, 0, -1),
               imp_v3(0.3, -0.2, 1));
    /* edge x = y = 1: the centre 2 sqrt(2) from it, closing at sqrt(2) */
    double s2 = sqrt(2.0), s3 = sqrt(3.0);
    assert_hit(toi3(ball, at(3, 3, 0.4, -1, -1, 0), cube, still, 10), 2 - 0.5 / s2,
               imp_v3(-1 / s2, -1 / s2, 0), imp_v3(1, 1, 0.4));
    /* corner (1, 1, 1) */
    assert_hit(toi3(ball, at(3, 3, 3, -1, -1, -1), cube, still, 10), 2 - 0.5 / s3,
               imp_v3(-1 / s3, -1 / s3, -1 / s3), imp_v3(1, 1, 1));
    /* the box is a: the normal turns round, the point stays */
    assert_hit(toi3(cube, still, ball, at(3, 3, 3, -1, -1, -1), 10), 2 - 0.5 / s3,
               imp_v3(1 / s3, 1 / s3, 1 / s3), imp_v3(1, 1, 1));
    /* dropped from rest under gravity 2 from z = 3: z = 3 - t^2 reaches 1.5 at sqrt(1.5) */
    imp_motion fall = motion3(imp_v3(0.5, 0.5, 3), imp_v3(0, 0, 0), imp_v3(0, 0, -2));
    assert_hit(toi3(ball, fall, cube, still, 10), sqrt(1.5), imp_v3(0, 0, -1), imp_v3(0.5, 0.5, 1));
    /* a rotated box: a quarter turn about z changes nothing for a face contact from above */
    imp_quat qz = {cos(0.3), 0, 0, sin(0.3)};
    assert_hit(toi3(ball, at(0, 0, 5, 0, 0, -1), box3(1, 2, 1, qz), still, 10), 3.5,
               imp_v3(0, 0, -1), imp_v3(0, 0, 1));
}

static void test_sphere_slides_past(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), cube = box3(1, 1, 1, ID);
    imp_motion still = at(0, 0, 0, 0, 0, 0);
    /* sliding along the face y = 1 at zero gap: no contact */
    assert_int_equal(toi3(ball, at(3, 1.5, 0, -1, 0, 0), cube, still, 10).state, IMP_TOI_NONE);
    /* past the edge x = y = 1 at exactly the radius: a graze, no contact */
    double g = 1 + 0.5 / sqrt(2.0);
    assert_int_equal(toi3(ball, at(g + 2, g - 2, 0, -1, 1, 0), cube, still, 10).state,
                     IMP_TOI_NONE);
    /* a hair closer, it is a hit */
    assert_int_equal(toi3(ball, at(g + 2 - 1e-9, g - 2, 0, -1, 1, 0), cube, still, 10).state,
                     IMP_TOI_HIT);
    /* touching the top face at t = 0: approaching is a hit at 0, parting or sliding is not */
    assert_hit(toi3(ball, at(0, 0, 1.5, 0, 0, -1), cube, still, 10), 0, imp_v3(0, 0, -1),
               imp_v3(0, 0, 1));
    assert_int_equal(toi3(ball, at(0, 0, 1.5, 0, 0, 1), cube, still, 10).state, IMP_TOI_NONE);
    assert_int_equal(toi3(ball, at(0, 0, 1.5, 1, 0, 0), cube, still, 10).state, IMP_TOI_NONE);
    /* overlapping at 0 by 0.3 */
    imp_toi_result r = toi3(ball, at(0.2, 0, 1.2, 0, 0, 1), cube, still, 10);
    assert_int_equal(r.state, IMP_TOI_OVERLAPPING);
    assert_near(r.depth, 0.3, 1e-15);
    assert_vec_near(r.normal, imp_v3(0, 0, -1), 0);
}

static void test_capsules_and_segments(void **state) {
    (void)state;
    imp_shape cx = capsule(imp_v3(-1, 0, 0), imp_v3(1, 0, 0), 0.25);
    imp_shape cy = capsule(imp_v3(0, -1, 0), imp_v3(0, 1, 0), 0.25);
    imp_motion still = at(0, 0, 0, 0, 0, 0);
    /* crossing capsules (D a flat square): gap 0.5 between the axes at t = 1.5 */
    assert_hit(toi3(cx, still, cy, at(0.3, 0.2, 2, 0, 0, -1), 10), 1.5, imp_v3(0, 0, 1),
               imp_v3(0.3, 0, 0.25));
    /* parallel capsules (D a segment): the same */
    imp_toi_result r = toi3(cx, still, cx, at(0.5, 0, 2, 0, 0, -1), 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_near(r.time, 1.5, 1e-15);
    assert_vec_near(r.normal, imp_v3(0, 0, 1), 1e-15);
    assert_near(r.point.z, 0.25, 1e-15);
    assert_true(r.point.x >= -0.5 && r.point.x <= 1.0);
    /* a sphere onto a capsule's end cap, along the axis */
    assert_hit(toi3(sphere(0.5), at(4, 0, 0, -1, 0, 0), cx, still, 10), 2.25, imp_v3(-1, 0, 0),
               imp_v3(1.25, 0, 0));
    /* a capsule lying flat falls onto a face: the contact is on the shared segment */
    r = toi3(cx, at(0.5, 0, 3, 0, 0, -1), box3(1, 1, 1, ID), still, 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_near(r.time, 1.75, 1e-15);
    assert_vec_near(r.normal, imp_v3(0, 0, -1), 1e-15);
    assert_near(r.point.z, 1, 1e-15);
    assert_true(r.point.x >= -0.5 && r.point.x <= 1.0 && fabs(r.point.y) < 1e-15);
    /* a segment (no radius) onto a face, and past it by a hair */
    imp_shape seg = capsule(imp_v3(-0.5, 0, 0), imp_v3(0.5, 0, 0), 0);
    r = toi3(seg, at(0, 0.3, 3, 0, 0, -1), box3(1, 1, 1, ID), still, 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_near(r.time, 2, 1e-15);
    /* (the faces are a hair wider, 1e-9 of an edge of the Minkowski difference, so that no
     * path slips between two of them by rounding: a miss by less can count as a touch) */
    assert_int_equal(toi3(seg, at(1.5 + 1e-7, 0, 3, 0, 0, -1), box3(1, 1, 1, ID), still, 10).state,
                     IMP_TOI_NONE);
    /* a segment edge-on across a box edge (3D edge-edge, no radius) */
    imp_shape sz = capsule(imp_v3(0, -3, 0), imp_v3(0, 3, 0), 0);
    imp_quat q45 = {cos(PI_4 / 2), sin(PI_4 / 2), 0, 0}; /* box turned about x: an edge on top */
    r = toi3(sz, at(0.25, 0, 5, 0, 0, -1), box3(1, 1, 1, q45), still, 10);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_near(r.time, 5 - sqrt(2.0), 1e-14);
}

static void test_sphere_onto_octahedron_vertex(void **state) {
    (void)state;
    imp_vec3 v[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    imp_shape oct = {.type = IMP_SHAPE_POLYHEDRON, .verts = v, .n_verts = 6};
    imp_toi_result r = toi3(sphere(0.5), at(0, 0, 3, 0, 0, -1), oct, at(0, 0, 0, 0, 0, 0), 10);
    assert_hit(r, 1.5, imp_v3(0, 0, -1), imp_v3(0, 0, 1));
    /* onto the face x + y + z = 1 along its normal: the centre starts 3 - 1/sqrt3 from it */
    double s3 = sqrt(3.0);
    imp_vec3 c = imp_v3(1 / 3.0, 1 / 3.0, 1 / 3.0), n = imp_v3(1 / s3, 1 / s3, 1 / s3);
    imp_vec3 p = imp_madd(c, n, 3);
    r = toi3(sphere(0.5), motion3(p, imp_neg(n), imp_v3(0, 0, 0)), oct, at(0, 0, 0, 0, 0, 0), 10);
    assert_hit(r, 2.5, imp_neg(n), c);
}

/* ---- properties ------------------------------------------------------------------------ */

static int random_kind(uint64_t *rng) { return (int)(imp_rng_next(rng) % IMP_TEST_KINDS); }

static void random_pairs_against_static_overlap(int dim, uint64_t seed) {
    uint64_t rng = seed;
    const double horizon = 5.0;
    int hits = 0, nones = 0, over = 0, at0 = 0, advanced = 0;
    int kinds[IMP_TEST_KINDS][IMP_TEST_KINDS] = {{0}};
    for (int k = 0; k < PAIRS; ++k) {
        imp_vec3 va[16], vb[16];
        int ka = random_kind(&rng), kb = random_kind(&rng);
        if (ka == IMP_TEST_KIND_HALFSPACE && kb == IMP_TEST_KIND_HALFSPACE)
            kb = IMP_TEST_KIND_SPHERE;
        ++kinds[ka][kb];
        imp_shape a = random_shape_of(&rng, dim, ka, va), b = random_shape_of(&rng, dim, kb, vb);
        imp_motion ma, mb;
        random_pair_motions(&rng, dim, k % 2, &ma, &mb);
        if (a.type == IMP_SHAPE_HALFSPACE) /* facing b, its boundary 1 to 4 short of it */
            a.offset = imp_dot(a.normal, mb.p) - imp_rng_uniform(&rng, 1, 4);
        if (b.type == IMP_SHAPE_HALFSPACE)
            b.offset = imp_dot(b.normal, ma.p) - imp_rng_uniform(&rng, 1, 4);
        if (k % 10 == 3 && a.type != IMP_SHAPE_HALFSPACE && b.type != IMP_SHAPE_HALFSPACE) {
            /* start touching: b moved along the normal by the gap, then any velocity */
            imp_overlap_result o = imp_overlap(&a, ma.p, &b, mb.p, dim);
            mb.p = imp_madd(mb.p, o.normal, o.state == IMP_OVERLAP_APART ? -o.distance : o.depth);
            mb.v = random_vec_dim(&rng, 3, dim);
        }
        if (k % 20 == 5 && a.type != IMP_SHAPE_HALFSPACE && b.type != IMP_SHAPE_HALFSPACE) {
            /* start interpenetrating by up to 0.1 */
            imp_overlap_result o = imp_overlap(&a, ma.p, &b, mb.p, dim);
            double d = o.state == IMP_OVERLAP_APART ? o.distance : -o.depth;
            mb.p = imp_madd(mb.p, o.normal, -d - imp_rng_uniform(&rng, 0.001, 0.1));
        }
        imp_toi_result r = imp_toi_shapes(&a, &ma, &b, &mb, dim, horizon);
        if (r.state == IMP_TOI_FAILED)
            fail_msg("seed %#llx case %d (kinds %d, %d): failed", (unsigned long long)seed, k, ka,
                     kb);
        double tol = TOL + r.tolerance;
        const char *bad = imp_test_toi_check(&a, &ma, &b, &mb, dim, horizon, &r, tol,
                                             r.tolerance > 0 ? -1 : TOL, 4);
        if (!bad && r.state == IMP_TOI_HIT && r.time > 0 &&
            !(imp_test_penetration(&a, &ma, &b, &mb, dim, r.time * (1 - 1e-6)) <= tol))
            bad = "interpenetrating just before the hit";
        if (!bad && r.state != IMP_TOI_NONE && !(fabs(imp_len(r.normal) - 1) <= 1e-12))
            bad = "normal not unit";
        if (bad)
            fail_msg("seed %#llx case %d (kinds %d, %d; %dD): %s", (unsigned long long)seed, k, ka,
                     kb, dim, bad);
        hits += r.state == IMP_TOI_HIT;
        at0 += r.state == IMP_TOI_HIT && r.time == 0;
        nones += r.state == IMP_TOI_NONE;
        over += r.state == IMP_TOI_OVERLAPPING;
        advanced += r.tolerance > 0;
    }
    print_message("%dD, %d pairs: hits %d (%d at 0), none %d, overlapping %d; by advancement %d\n",
                  dim, PAIRS, hits, at0, nones, over, advanced);
    assert_true(hits > PAIRS / 4 && nones > PAIRS / 4 && over > PAIRS / 100 && at0 > PAIRS / 100);
    for (int i = 0; i < IMP_TEST_KINDS; ++i)
        for (int j = 0; j < IMP_TEST_KINDS; ++j)
            assert_true(kinds[i][j] > 1000 ||
                        (i == IMP_TEST_KIND_HALFSPACE && j == IMP_TEST_KIND_HALFSPACE));
}

static void test_random_pairs_2d(void **state) {
    (void)state;
    random_pairs_against_static_overlap(2, 0x2D5EED);
}

static void test_random_pairs_3d(void **state) {
    (void)state;
    random_pairs_against_static_overlap(3, 0x3D5EED);
}

/* The exact cast against conservative advancement on 3D pairs of a sphere,
 * capsule or segment with anything but a halfspace (a pair without volume
 * or radius is advancement on both sides and skipped): same verdict, and
 * times within what the fallback's tolerance allows at the closing speed. */
static void test_exact_agrees_with_advancement(void **state) {
    (void)state;
    const uint64_t seed = 0xA9EE;
    uint64_t rng = seed;
    const double tol = 1e-9;
    int hits = 0, graze = 0, n = 0;
    while (n < 10000) {
        imp_vec3 va[16], vb[16];
        int ka = (int)(imp_rng_next(&rng) % 3), kb = (int)(imp_rng_next(&rng) % 5);
        imp_shape a = random_shape_of(&rng, 3, ka, va), b = random_shape_of(&rng, 3, kb, vb);
        imp_motion ma, mb;
        random_pair_motions(&rng, 3, n % 2, &ma, &mb);
        if (!imp_toi_shapes_closed_form(&a, &b, 3) || (ka == 0 && kb == 0)) continue;
        ++n;
        imp_toi_result r = imp_toi_shapes(&a, &ma, &b, &mb, 3, 5);
        imp_toi_result c = imp_toi_advance(&a, &ma, &b, &mb, 3, 5, tol);
        assert_true(r.tolerance == 0.0);
        if (r.state == IMP_TOI_OVERLAPPING || c.state == IMP_TOI_OVERLAPPING) continue;
        if (r.state == IMP_TOI_NONE && c.state == IMP_TOI_HIT &&
            imp_test_penetration(&a, &ma, &b, &mb, 3, c.time) >= -2 * tol) {
            ++graze; /* came within the fallback's tolerance without touching */
            continue;
        }
        /* advancement stops once the gap is within tol, which the closing speed along the
         * normal at the contact turns into time; it never stops late */
        imp_vec3 dv = imp_path_vel(imp_sub(mb.v, ma.v), imp_sub(mb.a, ma.a), r.time);
        double closing = -imp_dot(r.normal, dv);
        double slack = 2 * tol / (closing > 1e-9 ? closing : 1e-9) + 1e-12;
        if (r.state != c.state ||
            (r.state == IMP_TOI_HIT && !(c.time <= r.time + 1e-12 && r.time - c.time <= slack)))
            fail_msg(
                "seed %#llx case %d (kinds %d, %d): exact %d at %.17g, advancement %d at %.17g",
                (unsigned long long)seed, n, ka, kb, r.state, r.time, c.state, c.time);
        hits += r.state == IMP_TOI_HIT;
    }
    print_message("agreement: %d hits, %d grazes within the tolerance\n", hits, graze);
    assert_true(hits > 1500 && graze < 50);
}

/* A failed result says why: the pair core does not solve (two halfspaces,
 * to the dispatch and to advancement alike), and the 3D rounded cast's
 * refusal of a pair without volume or radius, which the dispatch hands to
 * advancement instead. */
/* A 2D polygon's prepared edge normals and reach (imp_shape_prepare) change no answer, bit
 * for bit:
 * polygon pairs and a circle against a polygon, either way round, linear and accelerated, the
 * vertices on a half-integer grid every third case (edges square to an axis, zero and -0
 * coordinates, where a normal's zero sign could differ). Normals stop counting once the
 * shape's points are others (a copy given a turned point list) and are dropped by
 * imp_shape_rotate. */
static void random_polygon(uint64_t *rng, imp_vec3 *v, size_t *n, int grid) {
    for (;;) {
        size_t m = grid ? 3 + imp_rng_next(rng) % 2 : 3 + imp_rng_next(rng) % 6;
        double r = imp_rng_uniform(rng, 0.3, 1.5), ph = imp_rng_uniform(rng, 0, 6.283);
        for (size_t k = 0; k < m; ++k) {
            double a = ph + 6.283185307179586 * (double)k / (double)m;
            v[k] = imp_v3(r * cos(a), r * sin(a), 0);
            if (grid) v[k] = imp_v3(round(2 * v[k].x) / 2, round(2 * v[k].y) / 2, 0);
            if (grid && v[k].x == 0.0 && imp_rng_next(rng) % 2) v[k].x = -0.0;
            if (grid && v[k].y == 0.0 && imp_rng_next(rng) % 2) v[k].y = -0.0;
        }
        int convex = 1;
        for (size_t k = 0; k < m; ++k) {
            imp_vec3 p0 = v[k], p1 = v[(k + 1) % m], p2 = v[(k + 2) % m];
            convex &= (p1.x - p0.x) * (p2.y - p1.y) - (p1.y - p0.y) * (p2.x - p1.x) > 0;
        }
        if (convex) {
            *n = m;
            return;
        }
    }
}

/* Every field of two results the same, bit for bit (padding aside). */
static int same_bits(const imp_toi_result *x, const imp_toi_result *y) {
    const double dx[] = {x->time,     x->point.x,  x->point.y,      x->point.z,
                         x->normal.x, x->normal.y, x->normal.z,     x->pa.x,
                         x->pa.y,     x->pa.z,     x->pb.x,         x->pb.y,
                         x->pb.z,     x->depth,    x->closest_time, x->closest_distance,
                         x->tolerance};
    const double dy[] = {y->time,     y->point.x,  y->point.y,      y->point.z,
                         y->normal.x, y->normal.y, y->normal.z,     y->pa.x,
                         y->pa.y,     y->pa.z,     y->pb.x,         y->pb.y,
                         y->pb.z,     y->depth,    y->closest_time, y->closest_distance,
                         y->tolerance};
    return x->state == y->state && x->has_closest == y->has_closest && x->failure == y->failure &&
           memcmp(dx, dy, sizeof dx) == 0;
}

static void test_prepared_polygon_normals(void **state) {
    (void)state;
    const uint64_t seed = 0x9017A1;
    uint64_t rng = seed;
    int used = 0;
    for (int k = 0; k < 30000; ++k) {
        imp_vec3 va[8], vb[8];
        size_t na, nb;
        int grid = k % 3 == 0;
        random_polygon(&rng, va, &na, grid);
        random_polygon(&rng, vb, &nb, grid);
        imp_shape a = {.type = IMP_SHAPE_POLYGON, .verts = va, .n_verts = na};
        imp_shape b = {.type = IMP_SHAPE_POLYGON, .verts = vb, .n_verts = nb};
        imp_shape disc = sphere(grid ? 0.5 : imp_rng_uniform(&rng, 0.05, 1.5));
        double acc = k % 5 == 0 ? 1 : 0;
        imp_motion ma = motion2(imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                imp_rng_uniform(&rng, -4, 4), imp_rng_uniform(&rng, -4, 4),
                                acc * imp_rng_uniform(&rng, -2, 2), 0);
        imp_motion mb = motion2(0, 0, 0, 0, 0, 0);
        if (grid) ma = motion2(round(ma.p.x), round(ma.p.y), round(ma.v.x), round(ma.v.y), 0, 0);
        imp_toi_result plain[3] = {imp_toi_shapes(&a, &ma, &b, &mb, 2, 2),
                                   imp_toi_shapes(&disc, &ma, &b, &mb, 2, 2),
                                   imp_toi_shapes(&a, &ma, &disc, &mb, 2, 2)};
        assert_int_equal(imp_shape_prepare(&a), 0);
        assert_int_equal(imp_shape_prepare(&b), 0);
        assert_non_null(imp_shape_polygon_normals(&a));
        imp_toi_result prepared[3] = {imp_toi_shapes(&a, &ma, &b, &mb, 2, 2),
                                      imp_toi_shapes(&disc, &ma, &b, &mb, 2, 2),
                                      imp_toi_shapes(&a, &ma, &disc, &mb, 2, 2)};
        for (int c = 0; c < 3; ++c) {
            used += plain[c].state == IMP_TOI_HIT;
            if (!same_bits(&plain[c], &prepared[c]))
                fail_msg("seed %#llx case %d pair %d: state %d at %.17g, prepared %d at %.17g",
                         (unsigned long long)seed, k, c, plain[c].state, plain[c].time,
                         prepared[c].state, prepared[c].time);
        }
        /* a copy with its points turned elsewhere: the original's normals no longer count */
        imp_vec3 turned[8];
        imp_shape t = b;
        for (size_t i = 0; i < nb; ++i)
            turned[i] = imp_v3(-vb[i].y, vb[i].x, 0);
        t.verts = turned;
        assert_null(imp_shape_polygon_normals(&t));
        imp_shape r = a;
        imp_vec3 rv[8];
        memcpy(rv, va, na * sizeof *rv);
        r.verts = rv;
        r.normals_of = rv; /* as if prepared for these points, then turned in place */
        imp_shape_rotate(&r, imp_quat_from_angle(1.0));
        assert_null(imp_shape_polygon_normals(&r));
        imp_shape_unprepare(&a);
        imp_shape_unprepare(&b);
    }
    print_message("seed %#llx: %d hits compared\n", (unsigned long long)seed, used);
    assert_true(used > 10000);
}

static void test_failure_reasons(void **state) {
    (void)state;
    imp_shape floor_ = halfspace(imp_v3(0, 1, 0), 0), wall = halfspace(imp_v3(1, 0, 0), 3);
    imp_motion still = motion3(imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0));
    imp_toi_result r = imp_toi_shapes(&floor_, &still, &wall, &still, 3, 10);
    assert_int_equal(r.state, IMP_TOI_FAILED);
    assert_int_equal(r.failure, IMP_FAILURE_UNSUPPORTED);
    r = imp_toi_advance(&floor_, &still, &wall, &still, 3, 10, 1e-9);
    assert_int_equal(r.state, IMP_TOI_FAILED);
    assert_int_equal(r.failure, IMP_FAILURE_UNSUPPORTED);
    imp_shape s1 = capsule(imp_v3(-1, 0, 0), imp_v3(1, 0, 0), 0);
    imp_shape s2 = capsule(imp_v3(0, -1, 0), imp_v3(0, 1, 0), 0);
    imp_motion m2 = motion3(imp_v3(0, 0, 5), imp_v3(0, 0, -1), imp_v3(0, 0, 0));
    r = imp_toi_rounded_3d(&s1, &still, &s2, &m2, 10);
    assert_int_equal(r.state, IMP_TOI_FAILED);
    assert_int_equal(r.failure, IMP_FAILURE_UNSUPPORTED);
    r = imp_toi_shapes(&s1, &still, &s2, &m2, 3, 10); /* by advancement */
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_int_equal(r.failure, IMP_FAILURE_NONE);
    assert_true(r.tolerance > 0 && fabs(r.time - 5) <= r.tolerance);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere_onto_box_features),
        cmocka_unit_test(test_sphere_slides_past),
        cmocka_unit_test(test_capsules_and_segments),
        cmocka_unit_test(test_sphere_onto_octahedron_vertex),
        cmocka_unit_test(test_random_pairs_2d),
        cmocka_unit_test(test_random_pairs_3d),
        cmocka_unit_test(test_exact_agrees_with_advancement),
        cmocka_unit_test(test_prepared_polygon_normals),
        cmocka_unit_test(test_failure_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
