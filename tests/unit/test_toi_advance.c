/*
 * test_toi_advance.c - conservative advancement on the exact distance.
 *
 * Known answers in 3D (two boxes head-on, a sphere falling on a rotated box
 * under gravity, a capsule against a polyhedron's vertex, an edge-edge box
 * contact, a box on a moving halfspace, misses and grazes, touching and
 * separating, sliding, thrown off and falling back, overlapping at 0),
 * closest points of imp_overlap_closest, then two checks on random pairs:
 * spheres against the closed-form sphere solver (another algorithm), and
 * boxes, polyhedra, spheres, capsules (and some halfspaces), linear and
 * accelerated, against the static overlap test: within the tolerance at a
 * reported hit, never interpenetrating by more than it at sampled earlier
 * times or at any sampled time of a `none`.
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
#include "core/toi.h"
#include "core/toi_advance.h"
#include "core/tolerance.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"
#include "tests/shapes.h"

#define PI 3.14159265358979323846
/* the caller's tolerance: 1e-9 of a scene whose coordinates are ~1-10 */
#define TOL 1e-9

static imp_motion still(imp_vec3 p) { return motion3(p, imp_v3(0, 0, 0), imp_v3(0, 0, 0)); }
static imp_motion moving(imp_vec3 p, imp_vec3 v) { return motion3(p, v, imp_v3(0, 0, 0)); }

static imp_quat identity(void) {
    imp_quat q = {1, 0, 0, 0};
    return q;
}
/* rotation by `angle` about the unit axis */
static imp_quat axis_angle(imp_vec3 axis, double angle) {
    double s = sin(angle / 2);
    imp_quat q = {cos(angle / 2), axis.x * s, axis.y * s, axis.z * s};
    return q;
}
static imp_shape polyhedron(imp_vec3 *v, size_t n) {
    imp_shape s = {.type = IMP_SHAPE_POLYHEDRON, .verts = v, .n_verts = n};
    return s;
}

static imp_toi_result adv(const imp_shape *a, imp_motion ma, const imp_shape *b, imp_motion mb,
                          double horizon) {
    return imp_toi_advance(a, &ma, b, &mb, 3, horizon, TOL);
}

/* signed gap at t: distance when apart, -depth when overlapping; imp_overlap ignores a
 * halfspace's position, so its displacement is taken off the other body */
static double gap_at(const imp_shape *a, imp_motion ma, const imp_shape *b, imp_motion mb,
                     double t) {
    imp_vec3 pa = imp_path_at(ma.p, ma.v, ma.a, t), pb = imp_path_at(mb.p, mb.v, mb.a, t);
    if (b->type == IMP_SHAPE_HALFSPACE)
        pa = imp_sub(pa, imp_path_at(imp_v3(0, 0, 0), mb.v, mb.a, t));
    if (a->type == IMP_SHAPE_HALFSPACE)
        pb = imp_sub(pb, imp_path_at(imp_v3(0, 0, 0), ma.v, ma.a, t));
    imp_overlap_result o = imp_overlap(a, pa, b, pb, 3);
    assert_true(o.state == IMP_OVERLAP_APART || o.state == IMP_OVERLAP_OVERLAPPING);
    return o.state == IMP_OVERLAP_APART ? o.distance : -o.depth;
}

static void assert_vec_near(imp_vec3 x, imp_vec3 y, double tol) {
    if (!(imp_len(imp_sub(x, y)) <= tol))
        fail_msg("(%.17g, %.17g, %.17g) vs (%.17g, %.17g, %.17g)", x.x, x.y, x.z, y.x, y.y, y.z);
}

static void assert_hit_at(imp_toi_result r, double t, double ttol) {
    if (r.state != IMP_TOI_HIT || !(fabs(r.time - t) <= ttol))
        fail_msg("state %d at %.17g, expected a hit at %.17g", r.state, r.time, t);
}

static void test_boxes_head_on(void **state) {
    (void)state;
    imp_shape a = box3(1, 1, 1, identity()), b = box3(0.5, 0.5, 0.5, identity());
    /* b's -x face (at x - 0.5) meets a's +x face (x = 1) when 10 - 4t = 1.5 */
    imp_toi_result r = adv(&a, still(imp_v3(0, 0, 0)), &b,
                           moving(imp_v3(10, 0.2, -0.3), imp_v3(-4, 0, 0)), INFINITY);
    assert_hit_at(r, 2.125, TOL / 4);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-12);
    assert_true(fabs(r.point.x - 1.0) <= TOL);
    assert_true(fabs(r.point.y - 0.2) <= 0.5 && fabs(r.point.z + 0.3) <= 0.5);
    assert_vec_near(r.pb, imp_v3(1.5, 0.2, -0.3), 4 * TOL);
    /* both moving, a rotated about the approach axis (its +x face stays at x = 1) */
    imp_shape ar = box3(1, 1, 1, axis_angle(imp_v3(1, 0, 0), 0.3));
    r = adv(&ar, moving(imp_v3(-2, 0, 0), imp_v3(1, 0, 0)), &b,
            moving(imp_v3(8, 0.1, 0.1), imp_v3(-3, 0, 0)), INFINITY);
    assert_hit_at(r, 8.5 / 4, TOL / 4); /* gap 8.5 closed at 4 */
    /* a horizon that ends at the touch still has it */
    r = adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(10, 0.2, -0.3), imp_v3(-4, 0, 0)), 2.125);
    assert_hit_at(r, 2.125, TOL / 4);
    /* the same with a horizon short of it: none */
    r = adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(10, 0.2, -0.3), imp_v3(-4, 0, 0)), 2.0);
    assert_int_equal(r.state, IMP_TOI_NONE);
}

static void test_sphere_falls_on_rotated_box(void **state) {
    (void)state;
    const double th = PI / 6, g = 9.81;
    imp_shape a = box3(2, 0.5, 2, imp_quat_from_angle(th)), b = sphere(0.5);
    /* the top face's normal is (-sin th, cos th, 0), 0.5 from the centre: the centre of
     * the falling sphere touches it at height y with cos(th) y = 0.5 + 0.5 */
    double y = 1.0 / cos(th), t = sqrt((5.0 - y) / (g / 2));
    imp_toi_result r = adv(&a, still(imp_v3(0, 0, 0)), &b,
                           motion3(imp_v3(0, 5, 0), imp_v3(0, 0, 0), imp_v3(0, -g, 0)), INFINITY);
    assert_hit_at(r, t, 1e-9);
    assert_vec_near(r.normal, imp_v3(-sin(th), cos(th), 0), 1e-9);
    assert_vec_near(r.point, imp_v3(0.5 * sin(th), y - 0.5 * cos(th), 0), 1e-8);
    /* the box moves up to meet it: the same contact, earlier */
    r = adv(&a, moving(imp_v3(0, 0, 0), imp_v3(0, 1, 0)), &b,
            motion3(imp_v3(0, 5, 0), imp_v3(0, 0, 0), imp_v3(0, -g, 0)), INFINITY);
    double te = (-1 + sqrt(1 + 2 * g * (5 - y))) / g; /* 5 - g t^2 / 2 - t = y */
    assert_hit_at(r, te, 1e-9);
}

static void test_capsule_against_polyhedron(void **state) {
    (void)state;
    imp_vec3 oct[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    imp_shape a = polyhedron(oct, 6), b = capsule(imp_v3(0, -1, 0), imp_v3(0, 1, 0), 0.25);
    /* the capsule's side meets the vertex (1, 0, 0) when its axis is at x = 1.25 */
    imp_toi_result r =
        adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(5, 0.3, 0), imp_v3(-2, 0, 0)), INFINITY);
    assert_hit_at(r, 1.875, TOL);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-9);
    assert_vec_near(r.point, imp_v3(1, 0, 0), 1e-8); /* the vertex, on the capsule's side */
    /* a capsule end cap against the face x + y + z = 1: the centre of the lower cap,
     * at (s, s, s) coming down the diagonal, touches when its distance (3 s - 1) / sqrt(3)
     * to the face plane is 0.25 */
    imp_shape c = capsule(imp_v3(0, 0, -1), imp_v3(0, 0, 1), 0.25);
    imp_vec3 d = imp_scale(imp_v3(-1, -1, -1), 1 / sqrt(3));
    r = adv(&a, still(imp_v3(0, 0, 0)), &c, moving(imp_v3(3, 3, 4), d), INFINITY);
    /* path: cap centre (3, 3, 3) + d t has (9 - sqrt(3) t - 1) / sqrt(3) = 0.25 */
    double t = (8 - 0.25 * sqrt(3)) / sqrt(3);
    assert_hit_at(r, t, 1e-9);
    assert_vec_near(r.normal, imp_scale(imp_v3(1, 1, 1), 1 / sqrt(3)), 1e-9);
}

static void test_edge_edge_boxes(void **state) {
    (void)state;
    /* a's edge along z at x = sqrt 2 (turned 45 degrees about z), b's edge along y at
     * x = pos - sqrt 2 (turned 45 degrees about y): they cross at x = sqrt 2 */
    imp_shape a = box3(1, 1, 1, imp_quat_from_angle(PI / 4));
    imp_shape b = box3(1, 1, 1, axis_angle(imp_v3(0, 1, 0), PI / 4));
    imp_toi_result r = adv(&a, still(imp_v3(0, 0, 0)), &b,
                           moving(imp_v3(6, 0.3, -0.2), imp_v3(-1, 0, 0)), INFINITY);
    assert_hit_at(r, 6 - 2 * sqrt(2), 1e-9);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-9);
    assert_vec_near(r.point, imp_v3(sqrt(2), 0, -0.2), 1e-8);
    /* coming in at an angle: the same crossing point, reached along (-2, 1, 0.5) */
    imp_vec3 v = imp_v3(-2, 1, 0.5);
    r = adv(&a, still(imp_v3(0, 0, 0)), &b,
            moving(imp_madd(imp_v3(2 * sqrt(2), 0.3, -0.2), v, -1.5), v), INFINITY);
    assert_hit_at(r, 1.5, 1e-9);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-9);
}

static void test_box_on_moving_halfspace(void **state) {
    (void)state;
    /* a corner of a box turned 45 degrees about z is sqrt 2 below its centre */
    imp_shape a = box3(1, 1, 1, imp_quat_from_angle(PI / 4)), h = halfspace(imp_v3(0, 1, 0), 0);
    imp_toi_result r = adv(&a, moving(imp_v3(3, 5, 1), imp_v3(0, -1, 0)), &h,
                           moving(imp_v3(0, 0, 0), imp_v3(0, 1, 0)), INFINITY);
    assert_hit_at(r, (5 - sqrt(2)) / 2, 1e-9);
    assert_vec_near(r.normal, imp_v3(0, -1, 0), 1e-12);
    double y = (5 - sqrt(2)) / 2; /* on the lowest edge, which runs along z over [0, 2] */
    assert_true(fabs(r.point.x - 3) <= 1e-8 && fabs(r.point.y - y) <= 1e-8);
    assert_true(r.point.z >= -1e-9 && r.point.z <= 2 + 1e-9);
    /* the halfspace as a, falling under gravity onto a resting sphere */
    imp_shape s = sphere(0.5), down = halfspace(imp_v3(0, -1, 0), -2); /* y >= 2 */
    r = adv(&down, motion3(imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, -2, 0)), &s,
            still(imp_v3(0, 0, 0)), INFINITY);
    assert_hit_at(r, sqrt(1.5), 1e-9); /* plane at 2 - t^2 meets the top at 0.5 */
    assert_vec_near(r.normal, imp_v3(0, -1, 0), 1e-12);
}

static void test_misses_and_grazes(void **state) {
    (void)state;
    imp_shape a = box3(1, 1, 1, identity()), b = sphere(0.5);
    /* passes over the top face 0.1 clear */
    imp_toi_result r = adv(&a, still(imp_v3(0, 0, 0)), &b,
                           moving(imp_v3(-5, 1.6, 0.2), imp_v3(1, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* moving away */
    r = adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(3, 0, 0), imp_v3(1, 0.2, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* over an edge (y = 1, z = 1) diagonally, 1e-6 clear of it: none */
    double c = (0.5 + 1e-6) / sqrt(2);
    r = adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(-5, 1 + c, 1 + c), imp_v3(1, 0, 0)),
            INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* the same path accelerating in x only, 1e-12 clear (below the tolerance): a hit */
    c = (0.5 + 1e-12) / sqrt(2);
    r = adv(&a, still(imp_v3(0, 0, 0)), &b,
            motion3(imp_v3(-5, 1 + c, 1 + c), imp_v3(1, 0, 0), imp_v3(0.5, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(gap_at(&a, still(imp_v3(0, 0, 0)), &b,
                       motion3(imp_v3(-5, 1 + c, 1 + c), imp_v3(1, 0, 0), imp_v3(0.5, 0, 0)),
                       r.time) <= TOL);
    /* the centre passes x = -1 (the edge's end) when -5 + t + t^2 / 4 = -1; within the
     * tolerance of the edge from 3e-5 before */
    assert_true(fabs(r.time - (sqrt(20) - 2)) < 1e-4);
    /* a sphere grazing a sphere tangentially with zero clearance: a hit near t = 5 */
    imp_shape s = sphere(1);
    r = adv(&s, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(-5, 1.5, 0), imp_v3(1, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(fabs(r.time - 5) < 1e-3);
}

static void test_touching_at_zero(void **state) {
    (void)state;
    imp_shape a = box3(1, 1, 1, identity()),
              b = box3(0.5, 0.5, 0.5, axis_angle(imp_v3(0, 1, 0), 0.4));
    imp_motion ma = still(imp_v3(0, 0, 0));
    imp_vec3 on_top = imp_v3(0.2, 1.5, -0.1); /* resting on a's top face */
    /* approaching: a hit at 0 */
    imp_toi_result r = adv(&a, ma, &b, moving(on_top, imp_v3(0.3, -1, 0)), INFINITY);
    assert_hit_at(r, 0, 0);
    assert_vec_near(r.normal, imp_v3(0, 1, 0), 1e-12);
    assert_true(fabs(r.point.y - 1) <= TOL);
    /* at rest, pulled down: a hit at 0 */
    r = adv(&a, ma, &b, motion3(on_top, imp_v3(0, 0, 0), imp_v3(0, -1, 0)), INFINITY);
    assert_hit_at(r, 0, 0);
    /* separating, and sliding: none */
    r = adv(&a, ma, &b, moving(on_top, imp_v3(0.3, 1, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    r = adv(&a, ma, &b, moving(on_top, imp_v3(0.3, 0, -0.2)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* sliding off the edge and past: none */
    r = adv(&a, ma, &b, moving(on_top, imp_v3(2, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* thrown up under gravity: leaves and lands again at 2 v / g */
    r = adv(&a, ma, &b, motion3(on_top, imp_v3(0.1, 2, 0), imp_v3(0, -10, 0)), INFINITY);
    assert_hit_at(r, 0.4, 1e-9);
    assert_vec_near(r.normal, imp_v3(0, 1, 0), 1e-9);
    /* ... but not within a shorter horizon */
    r = adv(&a, ma, &b, motion3(on_top, imp_v3(0.1, 2, 0), imp_v3(0, -10, 0)), 0.39);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* a sphere leaving a sphere's side under a pull that brings it back elsewhere
     * (2.5 < t < 2.6); the sphere solver gives the exact time */
    imp_shape s = sphere(1), p = sphere(0.5);
    imp_motion mp = motion3(imp_v3(1.5, 0, 0), imp_v3(1, 0.5, 0), imp_v3(-1, 0, 0));
    r = adv(&s, still(imp_v3(0, 0, 0)), &p, moving(imp_v3(1.5, 0, 0), imp_v3(1, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
    r = adv(&s, still(imp_v3(0, 0, 0)), &p, mp, INFINITY);
    imp_toi_spheres_input si = {still(imp_v3(0, 0, 0)), mp, 1, 0.5, INFINITY};
    imp_toi_result e = imp_toi_spheres(&si);
    assert_int_equal(e.state, IMP_TOI_HIT);
    assert_true(e.time > 2.5 && e.time < 2.6);
    assert_hit_at(r, e.time, 1e-9);
}

static void test_overlapping_at_zero(void **state) {
    (void)state;
    imp_shape a = box3(1, 1, 1, identity()), b = box3(0.5, 0.5, 0.5, identity());
    imp_toi_result r =
        adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(1.2, 0, 0), imp_v3(5, 0, 0)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_OVERLAPPING);
    assert_true(r.time == 0);
    assert_true(fabs(r.depth - 0.3) <= 1e-12);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-12);
    assert_true(r.point.x >= 0.7 - 1e-9 && r.point.x <= 1 + 1e-9);
    /* overlapping by less than the tolerance and approaching is a hit at 0 */
    r = adv(&a, still(imp_v3(0, 0, 0)), &b, moving(imp_v3(1.5 - 0.5 * TOL, 0, 0), imp_v3(-1, 0, 0)),
            INFINITY);
    assert_hit_at(r, 0, 0);
}

static void test_closest_points(void **state) {
    (void)state;
    /* imp_overlap_closest agrees with imp_overlap and its points are on the shapes */
    imp_vec3 oct[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    imp_shape o = polyhedron(oct, 6), bx = box3(1, 2, 0.5, axis_angle(imp_v3(0, 0, 1), 0.2));
    imp_shape c = capsule(imp_v3(0, 0, -1), imp_v3(0, 0, 1), 0.5),
              h = halfspace(imp_v3(0, 0, 1), -3);
    imp_vec3 ca = imp_v3(9, 9, 9), cb = ca;
    imp_overlap_result r =
        imp_overlap_closest(&o, imp_v3(0, 0, 0), &c, imp_v3(3, 0, 0), 3, &ca, &cb);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_true(fabs(r.distance - 1.5) <= 1e-12);
    assert_vec_near(ca, imp_v3(1, 0, 0), 1e-12);
    assert_vec_near(cb, imp_v3(2.5, 0, 0), 1e-12);
    /* face of the box against the octahedron's vertex (0, 0, 1) */
    r = imp_overlap_closest(&o, imp_v3(0.3, 0.1, 0), &bx, imp_v3(0, 0, 2), 3, &ca, &cb);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_vec_near(ca, imp_v3(0.3, 0.1, 1), 1e-12);
    assert_vec_near(cb, imp_v3(0.3, 0.1, 1.5), 1e-12);
    /* a halfspace as a */
    r = imp_overlap_closest(&h, imp_v3(0, 0, 0), &c, imp_v3(1, 2, 0), 3, &ca, &cb);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_vec_near(ca, imp_v3(1, 2, -3), 1e-12);
    assert_vec_near(cb, imp_v3(1, 2, -1.5), 1e-12);
    /* overlapping: the result is imp_overlap's and the points are not written */
    ca = cb = imp_v3(9, 9, 9);
    r = imp_overlap_closest(&o, imp_v3(0, 0, 0), &c, imp_v3(0.5, 0, 0), 3, &ca, &cb);
    imp_overlap_result s = imp_overlap(&o, imp_v3(0, 0, 0), &c, imp_v3(0.5, 0, 0), 3);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    assert_true(r.depth == s.depth && r.normal.x == s.normal.x && r.normal.y == s.normal.y &&
                r.normal.z == s.normal.z);
    assert_true(ca.x == 9 && cb.x == 9);
}

static imp_shape random_shape(uint64_t *rng, int kind, imp_vec3 *buf);

/* distance of point x from placed shape s (0 inside) */
static double point_gap(const imp_shape *s, imp_vec3 pos, imp_vec3 x) {
    imp_shape pt = sphere(0);
    imp_overlap_result o = imp_overlap(s, pos, &pt, x, 3);
    return o.state == IMP_OVERLAP_APART ? o.distance : 0.0;
}

static void test_closest_points_random(void **state) {
    (void)state;
    const uint64_t seed = 0xC105E;
    uint64_t rng = seed;
    int apart = 0;
    for (int k = 0; k < 3000; ++k) {
        imp_vec3 va[10], vb[10];
        imp_shape a = random_shape(&rng, (int)(imp_rng_next(&rng) % 4), va);
        imp_shape b = random_shape(&rng, (int)(imp_rng_next(&rng) % 4), vb);
        imp_vec3 pa = random_vec(&rng, 2),
                 pb = imp_madd(pa, random_unit(&rng), imp_rng_uniform(&rng, 0.5, 4));
        imp_vec3 ca, cb;
        imp_overlap_result r = imp_overlap_closest(&a, pa, &b, pb, 3, &ca, &cb);
        imp_overlap_result s = imp_overlap(&a, pa, &b, pb, 3);
        assert_int_equal(r.state, s.state);
        assert_true(r.distance == s.distance && r.depth == s.depth);
        if (r.state != IMP_OVERLAP_APART) continue;
        ++apart;
        double e1 = imp_len(imp_sub(imp_sub(cb, ca), imp_scale(r.normal, r.distance)));
        double e2 = point_gap(&a, pa, ca), e3 = point_gap(&b, pb, cb);
        if (!(e1 <= 1e-9 && e2 <= 1e-9 && e3 <= 1e-9))
            fail_msg(
                "seed %#llx case %d (types %d, %d): cb - ca off by %.3g, ca %.3g off a, cb %.3g "
                "off b",
                (unsigned long long)seed, k, a.type, b.type, e1, e2, e3);
    }
    assert_true(apart > 1000);
}

/* Regression: imp_overlap reports these two boxes, 4.67e-5 apart, as touching (depth 0);
 * advancement must not take that for a contact at 0 (the plane gap along the normal
 * exposes it). Approaching at unit speed along the normal: the touch is ~4.67e-5 later. */
static void test_boxes_overlap_calls_touching(void **state) {
    (void)state;
    imp_quat qa = {-0.31487693746373002, 0.6114269680285298, -0.48992141536475553,
                   0.53571128771745724};
    imp_quat qb = {0.49279607711141993, -0.56223212794615673, -0.62187790354731465,
                   0.23305564521875194};
    imp_shape a = box3(0.4843881272845999, 0.81608082328606812, 0.94532854452452519, qa);
    imp_shape b = box3(0.73331143575110302, 0.51050454386147748, 0.26822119346773593, qb);
    imp_vec3 pa = imp_v3(-2.7063560404697937, -1.4640747845139508, -1.8873467830434818);
    imp_vec3 pb = imp_v3(-3.2714169816270111, -2.9569785361758671, -2.4532179130103229);
    imp_vec3 ca, cb;
    imp_vec3 pb2 = imp_v3(pb.x + 1e-9, pb.y, pb.z);
    imp_overlap_result o = imp_overlap_closest(&a, pa, &b, pb2, 3, &ca, &cb);
    assert_int_equal(o.state, IMP_OVERLAP_APART);
    imp_toi_result r = adv(&a, still(pa), &b, moving(pb, imp_neg(o.normal)), INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    if (!(fabs(r.time - o.distance) < 1e-7))
        fail_msg("hit at %.17g, the gap is %.17g", r.time, o.distance);
    /* at rest: none */
    r = adv(&a, still(pa), &b, still(pb), INFINITY);
    assert_int_equal(r.state, IMP_TOI_NONE);
}

static void test_2d_box_and_circle(void **state) {
    (void)state;
    imp_shape a = box3(1, 1, 0, imp_quat_from_angle(0)), b = sphere(0.5);
    imp_motion ma = still(imp_v3(0, 0, 0)), mb = moving(imp_v3(5, 0.3, 0), imp_v3(-2, 0, 0));
    imp_toi_result r = imp_toi_advance(&a, &ma, &b, &mb, 2, INFINITY, TOL);
    assert_hit_at(r, 1.75, TOL);
    assert_vec_near(r.normal, imp_v3(1, 0, 0), 1e-12);
    assert_vec_near(r.point, imp_v3(1, 0.3, 0), 1e-8);
}

/* ---- random pairs ------------------------------------------------------------------------ */

/* kind 0 sphere, 1 capsule, 2 box, 3 polyhedron; buf holds >= 10 points */
static imp_shape random_shape(uint64_t *rng, int kind, imp_vec3 *buf) {
    switch (kind) {
    case 0: return sphere(imp_rng_uniform(rng, 0.1, 1));
    case 1: {
        imp_vec3 d = imp_scale(random_unit(rng), imp_rng_uniform(rng, 0.2, 1));
        return capsule(d, imp_neg(d), imp_rng_uniform(rng, 0, 0.6));
    }
    case 2:
        return box3(imp_rng_uniform(rng, 0.2, 1), imp_rng_uniform(rng, 0.2, 1),
                    imp_rng_uniform(rng, 0.2, 1), random_rotation(rng));
    default: {
        size_t n = 6 + (size_t)(imp_rng_next(rng) % 5);
        double r = imp_rng_uniform(rng, 0.3, 1.2);
        for (size_t i = 0; i < n; ++i)
            buf[i] = imp_scale(random_unit(rng), r);
        return polyhedron(buf, n);
    }
    }
}

/* b aimed at a (with some scatter) from 2 to 6 away; a drifting */
static void random_motions(uint64_t *rng, int accel, imp_motion *ma, imp_motion *mb) {
    imp_vec3 pa = random_vec(rng, 3), dir = random_unit(rng);
    imp_vec3 pb = imp_madd(pa, dir, imp_rng_uniform(rng, 2, 6));
    double speed = imp_rng_uniform(rng, 0.5, 4);
    imp_vec3 vb = imp_add(imp_scale(dir, -speed), random_vec(rng, 1.5));
    *ma = motion3(pa, random_vec(rng, 0.5), accel ? random_vec(rng, 1) : imp_v3(0, 0, 0));
    *mb = motion3(pb, vb, accel ? random_vec(rng, 2) : imp_v3(0, 0, 0));
}

static double sphere_gap(imp_motion ma, double ra, imp_motion mb, double rb, double t) {
    return imp_len(imp_sub(imp_path_at(mb.p, mb.v, mb.a, t), imp_path_at(ma.p, ma.v, ma.a, t))) -
           ra - rb;
}

static void test_spheres_match_sphere_solver(void **state) {
    (void)state;
    const uint64_t seed = 0xADA5CE;
    uint64_t rng = seed;
    const double horizon = 3;
    int hits = 0, nones = 0, steps_sum = 0;
    (void)steps_sum;
    for (int k = 0; k < 10000; ++k) {
        double ra = imp_rng_uniform(&rng, 0.1, 1), rb = imp_rng_uniform(&rng, 0.1, 1);
        imp_shape a = sphere(ra), b = sphere(rb);
        imp_motion ma, mb;
        random_motions(&rng, k % 2, &ma, &mb);
        if (k % 50 == 0) /* some start inside each other, some touching */
            mb.p = imp_madd(ma.p, random_unit(&rng), 0.5 * (ra + rb));
        else if (k % 10 == 1)
            mb.p = imp_madd(ma.p, random_unit(&rng), ra + rb);
        imp_toi_result r = imp_toi_advance(&a, &ma, &b, &mb, 3, horizon, TOL);
        imp_toi_spheres_input si = {ma, mb, ra, rb, horizon};
        imp_toi_result s = imp_toi_spheres(&si);
        int ok;
        if (s.state == IMP_TOI_OVERLAPPING) {
            ok = (r.state == IMP_TOI_OVERLAPPING && fabs(r.depth - s.depth) <= 1e-12 * 10) ||
                 (r.state == IMP_TOI_HIT && r.time == 0 && s.depth <= TOL);
        } else if (r.state == IMP_TOI_HIT) {
            /* within the tolerance at the reported time, never after the exact touch
             * (advancement is conservative), and where the approach is transversal the
             * time is off by at most the tolerance over the closing speed */
            double g = sphere_gap(ma, ra, mb, rb, r.time);
            ok = fabs(g) <= TOL + 1e-12;
            if (s.state == IMP_TOI_HIT) {
                imp_vec3 dv =
                    imp_sub(imp_path_vel(mb.v, mb.a, s.time), imp_path_vel(ma.v, ma.a, s.time));
                double closing = -imp_dot(s.normal, dv);
                ok = ok && r.time <= s.time + 1e-12 && (s.time - r.time) * closing <= 2 * TOL;
            }
        } else {
            ok = r.state == s.state && r.state == IMP_TOI_NONE;
        }
        if (!ok)
            fail_msg("seed %#llx case %d: %d at %.17g (depth %.3g), spheres say %d at %.17g (depth "
                     "%.3g)",
                     (unsigned long long)seed, k, r.state, r.time, r.depth, s.state, s.time,
                     s.depth);
        if (r.state == IMP_TOI_HIT) {
            ++hits;
            imp_vec3 dv =
                imp_sub(imp_path_vel(mb.v, mb.a, s.time), imp_path_vel(ma.v, ma.a, s.time));
            if (s.state == IMP_TOI_HIT && -imp_dot(s.normal, dv) > 0.01) { /* not a graze */
                assert_vec_near(r.normal, s.normal, 1e-6);
                assert_vec_near(r.point, s.point, 1e-6);
            }
        }
        nones += r.state == IMP_TOI_NONE;
    }
    print_message("spheres: hits %d, none %d\n", hits, nones);
    assert_true(hits > 2000 && nones > 1000);
}

static void test_random_pairs_against_static_overlap(void **state) {
    (void)state;
    const uint64_t seed = 0x7013ADULL;
    uint64_t rng = seed;
    const double horizon = 2.5;
    int hits = 0, nones = 0, over = 0, with_h = 0, touching = 0, at0 = 0;
    for (int k = 0; k < 10000; ++k) {
        imp_vec3 va[10], vb[10];
        int ka = (int)(imp_rng_next(&rng) % 4), kb = (int)(imp_rng_next(&rng) % 4);
        imp_shape a = random_shape(&rng, ka, va), b = random_shape(&rng, kb, vb);
        imp_motion ma, mb;
        random_motions(&rng, k % 2, &ma, &mb);
        if (k % 20 == 7) { /* b a halfspace facing a, moving (its position is ignored) */
            imp_vec3 n = random_unit(&rng);
            b = halfspace(n, imp_dot(n, ma.p) - imp_rng_uniform(&rng, 1.5, 4));
            mb.v = imp_scale(n, imp_rng_uniform(&rng, -0.5, 2));
            ++with_h;
        } else if (k % 10 == 3) { /* start touching: b moved along the normal by the gap */
            imp_overlap_result o = imp_overlap(&a, ma.p, &b, mb.p, 3);
            mb.p = imp_madd(mb.p, o.normal, o.state == IMP_OVERLAP_APART ? -o.distance : o.depth);
            mb.v = random_vec(&rng, 3); /* approaching, sliding or parting */
            ++touching;
        }
        imp_toi_result r = imp_toi_advance(&a, &ma, &b, &mb, 3, horizon, TOL);
        double end = horizon;
        if (r.state == IMP_TOI_FAILED)
            fail_msg("seed %#llx case %d (types %d, %d): failed", (unsigned long long)seed, k,
                     a.type, b.type);
        if (r.state == IMP_TOI_OVERLAPPING) {
            double g = gap_at(&a, ma, &b, mb, 0);
            if (!(-g > TOL) || fabs(-g - r.depth) > 1e-12)
                fail_msg("seed %#llx case %d: overlapping by %.17g, static %.17g",
                         (unsigned long long)seed, k, r.depth, -g);
            ++over;
            continue;
        }
        if (r.state == IMP_TOI_HIT) {
            ++hits;
            at0 += r.time == 0;
            double g = gap_at(&a, ma, &b, mb, r.time);
            if (!(fabs(g) <= TOL + 1e-12))
                fail_msg("seed %#llx case %d (types %d, %d): at the hit t = %.17g the gap is %.3g",
                         (unsigned long long)seed, k, a.type, b.type, r.time, g);
            if (!(fabs(imp_len(r.normal) - 1) <= 1e-12))
                fail_msg("seed %#llx case %d: normal not unit", (unsigned long long)seed, k);
            end = r.time;
        } else {
            ++nones;
        }
        for (int i = 0; i < 40; ++i) {
            double t = end * (i + imp_rng_unit(&rng)) / 40;
            double g = gap_at(&a, ma, &b, mb, t);
            if (g < -TOL)
                fail_msg("seed %#llx case %d (types %d, %d): %s, yet they interpenetrate by %.3g "
                         "at t = %.17g",
                         (unsigned long long)seed, k, a.type, b.type,
                         r.state == IMP_TOI_HIT ? "a later hit" : "none", -g, t);
        }
    }
    print_message("pairs: hits %d (%d at 0), none %d, overlapping %d; %d with a halfspace, %d "
                  "started touching\n",
                  hits, at0, nones, over, with_h, touching);
    assert_true(hits > 2000 && nones > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boxes_head_on),
        cmocka_unit_test(test_sphere_falls_on_rotated_box),
        cmocka_unit_test(test_capsule_against_polyhedron),
        cmocka_unit_test(test_edge_edge_boxes),
        cmocka_unit_test(test_box_on_moving_halfspace),
        cmocka_unit_test(test_misses_and_grazes),
        cmocka_unit_test(test_touching_at_zero),
        cmocka_unit_test(test_overlapping_at_zero),
        cmocka_unit_test(test_boxes_overlap_calls_touching),
        cmocka_unit_test(test_2d_box_and_circle),
        cmocka_unit_test(test_closest_points),
        cmocka_unit_test(test_closest_points_random),
        cmocka_unit_test(test_spheres_match_sphere_solver),
        cmocka_unit_test(test_random_pairs_against_static_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
