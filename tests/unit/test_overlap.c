/*
 * test_overlap.c - static overlap with separation vector.
 *
 * Known answers for each kind of 2D pair (circles, boxes, rotated boxes,
 * polygons, capsules, crossing segments, halfspaces) and the supported 3D
 * pairs; symmetry (swapping a and b keeps depth or distance and negates the
 * normal); and a property test on random 2D pairs against an independent
 * exact signed distance function of shape a, evaluated at dense samples of
 * shape b: when apart, no sample of b is closer than the reported distance
 * and some sample is within the sampling step of it; when overlapping,
 * moving b by the reported translation (plus a hair) leaves no sample of b
 * inside a.
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
#include "tests/rng.h"

#define PI 3.14159265358979323846

static imp_shape sphere(double r) {
    imp_shape s = {.type = IMP_SHAPE_SPHERE, .radius = r};
    return s;
}
static imp_shape box2(double hx, double hy, double angle) {
    imp_shape s = {.type = IMP_SHAPE_BOX, .half = imp_v3(hx, hy, 0), .rot = imp_quat_from_angle(angle)};
    return s;
}
static imp_shape capsule(imp_vec3 a, imp_vec3 b, double r) {
    imp_shape s = {.type = r > 0 ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT, .a = a, .b = b, .radius = r};
    return s;
}
static imp_shape halfspace(imp_vec3 n, double offset) {
    imp_shape s = {.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset};
    return s;
}

static void near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

static void test_known_answers_2d(void **state) {
    (void)state;
    imp_vec3 o = imp_v3(0, 0, 0);
    imp_shape c1 = sphere(1), bx = box2(1, 1, 0);
    /* circles 1.5 apart with radii 1: overlap 0.5 along +x */
    imp_overlap_result r = imp_overlap(&c1, o, &c1, imp_v3(1.5, 0, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    assert_true(r.depth == 0.5 && r.normal.x == 1 && r.normal.y == 0);
    r = imp_overlap(&c1, o, &c1, imp_v3(0, 3, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_true(r.distance == 1 && r.normal.y == 1);
    /* boxes: the smaller axis overlap wins */
    r = imp_overlap(&bx, o, &bx, imp_v3(1.5, 0.2, 0), 2);
    assert_true(r.state == IMP_OVERLAP_OVERLAPPING && r.depth == 0.5 && r.normal.x == 1);
    r = imp_overlap(&bx, o, &bx, imp_v3(0.2, -1.7, 0), 2);
    near(r.depth, 0.3, 1e-15, "box y overlap");
    assert_true(r.normal.y == -1);
    /* a box turned 45 degrees reaches sqrt(2) along x */
    imp_shape diamond = box2(1, 1, PI / 4);
    imp_shape half = sphere(0.5);
    r = imp_overlap(&diamond, o, &half, imp_v3(2, 0, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    near(r.distance, 1.5 - sqrt(2.0), 1e-15, "diamond to circle");
    /* touching exactly: overlapping with depth 0 */
    r = imp_overlap(&bx, o, &bx, imp_v3(2, 0.5, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    assert_true(r.depth == 0 && r.normal.x == 1);
    /* a triangle and a capsule whose axis starts on its hypotenuse */
    imp_vec3 tri[3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    imp_shape poly = {.type = IMP_SHAPE_POLYGON, .verts = tri, .n_verts = 3};
    imp_shape cap = capsule(imp_v3(0, 0, 0), imp_v3(0, 2, 0), 0.25);
    r = imp_overlap(&poly, o, &cap, imp_v3(1.5, 0.5, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.25, 1e-15, "capsule on hypotenuse");
    near(r.normal.x, sqrt(0.5), 1e-15, "normal x");
    /* crossing segments: the cheaper way out is down by 0.2 */
    imp_shape s1 = capsule(imp_v3(-1, 0, 0), imp_v3(1, 0, 0), 0);
    imp_shape s2 = capsule(imp_v3(0, -1, 0), imp_v3(0, 0.2, 0), 0);
    r = imp_overlap(&s1, o, &s2, o, 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.2, 1e-15, "segments");
    assert_true(r.normal.y == -1);
    /* a circle deep inside a polygon leaves through the nearest edge */
    r = imp_overlap(&poly, o, &half, imp_v3(0.4, 0.3, 0), 2);
    near(r.depth, 0.8, 1e-15, "circle in triangle");
    assert_true(r.normal.y == -1);
    /* halfspace floor y <= 0 under a circle at height 0.75 */
    imp_shape floor_ = halfspace(imp_v3(0, 1, 0), 0);
    r = imp_overlap(&c1, imp_v3(5, 0.75, 0), &floor_, o, 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.25, 1e-15, "circle on floor");
    assert_true(r.normal.x == 0 && r.normal.y == -1);
    r = imp_overlap(&floor_, o, &bx, imp_v3(0, 3, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_true(r.distance == 2 && r.normal.y == 1);
    /* two halfspaces: not solved */
    assert_int_equal(imp_overlap(&floor_, o, &floor_, o, 2).state, IMP_OVERLAP_UNSUPPORTED);
}

static void test_known_answers_3d(void **state) {
    (void)state;
    imp_vec3 o = imp_v3(0, 0, 0);
    imp_shape c1 = sphere(1);
    /* skew capsules: axes 1 apart along z */
    imp_shape ca = capsule(imp_v3(-1, 0, 0), imp_v3(1, 0, 0), 0.3);
    imp_shape cb = capsule(imp_v3(0, -1, 0), imp_v3(0, 1, 0), 0.3);
    imp_overlap_result r = imp_overlap(&ca, o, &cb, imp_v3(0, 0, 1), 3);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    near(r.distance, 0.4, 1e-15, "skew capsules");
    assert_true(r.normal.z == 1);
    /* crossing: touch along the common perpendicular, depth the radii */
    r = imp_overlap(&ca, o, &cb, o, 3);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.6, 1e-15, "crossing capsules");
    near(fabs(r.normal.z), 1, 1e-15, "normal across both");
    r = imp_overlap(&c1, o, &ca, imp_v3(0, 1.2, 0), 3);
    near(r.depth, 0.1, 1e-15, "sphere and capsule");
    /* a 3D box on a halfspace; a box against a sphere is not solved yet */
    imp_shape b3 = {.type = IMP_SHAPE_BOX, .half = imp_v3(1, 1, 1), .rot = {1, 0, 0, 0}};
    imp_shape hs = halfspace(imp_v3(0, 0, 1), 0);
    r = imp_overlap(&b3, imp_v3(0, 0, 0.5), &hs, o, 3);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.5, 1e-15, "box on floor");
    assert_int_equal(imp_overlap(&b3, o, &c1, o, 3).state, IMP_OVERLAP_UNSUPPORTED);
    /* a polyhedron's lowest point decides against a halfspace */
    imp_vec3 tet[4] = {{0, 0, -2}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    imp_shape ph = {.type = IMP_SHAPE_POLYHEDRON, .verts = tet, .n_verts = 4};
    r = imp_overlap(&hs, o, &ph, imp_v3(0, 0, 3), 3);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    near(r.distance, 1, 1e-15, "polyhedron above floor");
}

/* ---- independent signed distance of a placed 2D shape ------------------------------------ */

static double seg_dist(imp_vec3 x, imp_vec3 a, imp_vec3 b) {
    imp_vec3 d = imp_sub(b, a);
    double dd = imp_dot(d, d);
    double t = dd > 0 ? fmin(fmax(imp_dot(imp_sub(x, a), d) / dd, 0), 1) : 0;
    return imp_len(imp_sub(x, imp_madd(a, d, t)));
}

static double sdf(const imp_shape *s, imp_vec3 pos, imp_vec3 x) {
    imp_vec3 l = imp_sub(x, pos);
    switch (s->type) {
    case IMP_SHAPE_SPHERE: return imp_len(l) - s->radius;
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT: return seg_dist(l, s->a, s->b) - s->radius;
    case IMP_SHAPE_BOX: {
        imp_quat inv = {s->rot.w, -s->rot.x, -s->rot.y, -s->rot.z};
        imp_vec3 q = imp_quat_rotate(inv, l);
        double qx = fabs(q.x) - s->half.x, qy = fabs(q.y) - s->half.y;
        return hypot(fmax(qx, 0), fmax(qy, 0)) + fmin(fmax(qx, qy), 0);
    }
    case IMP_SHAPE_POLYGON: {
        double out = INFINITY, in = -INFINITY;
        int inside = 1;
        for (size_t i = 0; i < s->n_verts; ++i) {
            imp_vec3 a = s->verts[i], b = s->verts[(i + 1) % s->n_verts];
            imp_vec3 e = imp_sub(b, a);
            double side = (e.x * (l.y - a.y) - e.y * (l.x - a.x)) / imp_len(e);
            if (side < 0)
                inside = 0;
            out = fmin(out, seg_dist(l, a, b));
            in = fmax(in, -side);
        }
        return inside ? in : out;
    }
    default: return NAN;
    }
}

/* Points of a placed shape: its boundary, sampled with about `step` spacing. */
static size_t samples(const imp_shape *s, imp_vec3 pos, double step, imp_vec3 *out, size_t cap) {
    size_t n = 0;
    imp_vec3 ring[64];
    size_t m = 0;
    double r = 0;
    switch (s->type) {
    case IMP_SHAPE_SPHERE: ring[m++] = imp_v3(0, 0, 0), r = s->radius; break;
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT: ring[m++] = s->a, ring[m++] = s->b, r = s->radius; break;
    case IMP_SHAPE_BOX: {
        static const double sx[4] = {-1, 1, 1, -1}, sy[4] = {-1, -1, 1, 1};
        for (int i = 0; i < 4; ++i)
            ring[m++] = imp_quat_rotate(s->rot, imp_v3(sx[i] * s->half.x, sy[i] * s->half.y, 0));
        break;
    }
    case IMP_SHAPE_POLYGON:
        for (size_t i = 0; i < s->n_verts && m < 64; ++i)
            ring[m++] = s->verts[i];
        break;
    default: break;
    }
    /* a rounded core's boundary: circles of radius r at its vertices and its edges
     * pushed out by r on both sides (for r = 0, the edges themselves) */
    size_t edges = m == 1 ? 0 : m == 2 ? 1 : m;
    for (size_t e = 0; r > 0 && e < m; ++e) {
        size_t arcs = (size_t)(2 * PI * r / step) + 8;
        for (size_t j = 0; j < arcs && n < cap; ++j) {
            double t = 2 * PI * (double)j / (double)arcs;
            out[n++] = imp_add(imp_add(pos, ring[e]), imp_v3(r * cos(t), r * sin(t), 0));
        }
    }
    for (size_t e = 0; e < edges; ++e) {
        imp_vec3 a = ring[e], b = ring[(e + 1) % m], d = imp_sub(b, a);
        imp_vec3 nrm = imp_scale(imp_v3(d.y, -d.x, 0), r / imp_len(d));
        size_t k = (size_t)(imp_len(d) / step) + 1;
        for (int side = r > 0 ? -1 : 1; side <= 1; side += 2)
            for (size_t i = 0; i <= k && n < cap; ++i)
                out[n++] = imp_add(imp_add(pos, imp_madd(a, d, (double)i / (double)k)),
                                   imp_scale(nrm, side));
    }
    return n;
}

static imp_shape random_shape(uint64_t *rng, imp_vec3 *vbuf) {
    int kind = (int)(imp_rng_unit(rng) * 5);
    double size = imp_rng_uniform(rng, 0.2, 2);
    switch (kind) {
    case 0: return sphere(size);
    case 1: return box2(size, imp_rng_uniform(rng, 0.2, 2), imp_rng_uniform(rng, -PI, PI));
    case 2: {
        size_t n = 3 + (size_t)(imp_rng_unit(rng) * 6);
        double a0 = imp_rng_uniform(rng, 0, 2 * PI);
        for (size_t i = 0; i < n; ++i) { /* a regular-ish polygon, counter-clockwise */
            double a = a0 + 2 * PI * ((double)i + imp_rng_uniform(rng, -0.3, 0.3)) / (double)n;
            vbuf[i] = imp_v3(size * cos(a), size * sin(a), 0);
        }
        imp_shape s = {.type = IMP_SHAPE_POLYGON, .verts = vbuf, .n_verts = n};
        return s;
    }
    case 3:
    default: {
        double a = imp_rng_uniform(rng, -PI, PI);
        return capsule(imp_v3(-size * cos(a), -size * sin(a), 0), imp_v3(size * cos(a), size * sin(a), 0),
                       kind == 3 ? imp_rng_uniform(rng, 0.05, 1) : 0);
    }
    }
}

#define MAX_SAMPLES 100000

static void test_random_pairs_against_sdf(void **state) {
    (void)state;
    const uint64_t seed = 0x0FE4;
    uint64_t rng = seed;
    imp_vec3 *pts = malloc(MAX_SAMPLES * sizeof *pts);
    assert_non_null(pts);
    const double step = 0.01;
    int apart = 0, overlapping = 0;
    for (int k = 0; k < 20000; ++k) {
        imp_vec3 va[16], vb[16];
        imp_shape a = random_shape(&rng, va), b = random_shape(&rng, vb);
        imp_vec3 pa = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1), 0);
        imp_vec3 pb = imp_v3(imp_rng_uniform(&rng, -3, 3), imp_rng_uniform(&rng, -3, 3), 0);
        imp_overlap_result r = imp_overlap(&a, pa, &b, pb, 2);
        imp_overlap_result s = imp_overlap(&b, pb, &a, pa, 2);
        if (r.state != s.state || fabs(r.depth - s.depth) > 1e-12 ||
            fabs(r.distance - s.distance) > 1e-12 ||
            (r.depth > 1e-9 && imp_len(imp_add(r.normal, s.normal)) > 1e-9))
            fail_msg("seed %#llx case %d: not symmetric", (unsigned long long)seed, k);
        assert_true(fabs(imp_len(r.normal) - 1) < 1e-12);
        imp_vec3 move = r.state == IMP_OVERLAP_OVERLAPPING ? imp_scale(r.normal, r.depth + 1e-9)
                                                           : imp_v3(0, 0, 0);
        size_t n = samples(&b, imp_add(pb, move), step, pts, MAX_SAMPLES);
        double least = INFINITY;
        for (size_t i = 0; i < n; ++i)
            least = fmin(least, sdf(&a, pa, pts[i]));
        if (r.state == IMP_OVERLAP_APART) {
            ++apart;
            /* no sample closer than the distance; the closest within a sampling step */
            if (least < r.distance - 1e-12 || least > r.distance + step)
                fail_msg("seed %#llx case %d: distance %.17g, samples reach %.17g",
                         (unsigned long long)seed, k, r.distance, least);
        } else {
            ++overlapping;
            if (least < -1e-12)
                fail_msg("seed %#llx case %d: after the translation a sample of b is %.3g inside a",
                         (unsigned long long)seed, k, -least);
        }
    }
    free(pts);
    assert_true(apart > 300 && overlapping > 300);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers_2d),
        cmocka_unit_test(test_known_answers_3d),
        cmocka_unit_test(test_random_pairs_against_sdf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
