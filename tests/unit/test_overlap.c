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
#include "core/overlap_impl.h"
#include "core/tolerance.h"
#include "tests/rng.h"
#include "tests/shapes.h"

#define PI 3.14159265358979323846

static void near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol)) fail_msg("%s: got %.17g, want %.17g", what, got, want);
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
    /* subnormal boxes: their edges' lengths square to zero, yet the axes stand; half
     * extents 1e-310 offset by 1e-311: the x overlap 1.9e-310 (exact in subnormals) */
    imp_shape tiny = box2(1e-310, 1e-310, 0);
    r = imp_overlap(&tiny, o, &tiny, imp_v3(1e-311, 0, 0), 2);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    assert_true(r.depth == 1.9e-310 && r.normal.x == 1 && r.normal.y == 0);
    /* two halfspaces: not solved */
    imp_overlap_result two = imp_overlap(&floor_, o, &floor_, o, 2);
    assert_int_equal(two.state, IMP_OVERLAP_FAILED);
    assert_int_equal(two.failure, IMP_FAILURE_UNSUPPORTED);
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
    /* a 3D box on a halfspace, and a sphere inside a 3D box */
    imp_shape b3 = {.type = IMP_SHAPE_BOX, .half = imp_v3(1, 1, 1), .rot = {1, 0, 0, 0}};
    imp_shape hs = halfspace(imp_v3(0, 0, 1), 0);
    r = imp_overlap(&b3, imp_v3(0, 0, 0.5), &hs, o, 3);
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 0.5, 1e-15, "box on floor");
    r = imp_overlap(&b3, o, &c1, o, 3); /* supported since the 3D SAT: centre in the box */
    assert_int_equal(r.state, IMP_OVERLAP_OVERLAPPING);
    near(r.depth, 2, 1e-15, "sphere at the box's centre");
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
            if (side < 0) inside = 0;
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
        return capsule(imp_v3(-size * cos(a), -size * sin(a), 0),
                       imp_v3(size * cos(a), size * sin(a), 0),
                       kind == 3 ? imp_rng_uniform(rng, 0.05, 1) : 0);
    }
    }
}

/* Two random shapes (vertices into va and vb), a placed within 1 of the origin and b within 3. */
static void random_placed_pair(uint64_t *rng, imp_vec3 *va, imp_vec3 *vb, imp_shape *a,
                               imp_shape *b, imp_vec3 *pa, imp_vec3 *pb) {
    *a = random_shape(rng, va);
    *b = random_shape(rng, vb);
    *pa = imp_v3(imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1), 0);
    *pb = imp_v3(imp_rng_uniform(rng, -3, 3), imp_rng_uniform(rng, -3, 3), 0);
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
        imp_vec3 va[16], vb[16], pa, pb;
        imp_shape a, b;
        random_placed_pair(&rng, va, vb, &a, &b, &pa, &pb);
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

/* imp_overlap_proven_2d, GJK's proof of overlap, is sufficient: over random pairs, every pair
 * it proves overlapping the exact test calls overlapping (deeper than rounding); known
 * answers: two squares overlapping by 1e-6 proven, the same squares sharing an edge exactly or
 * apart by 1e-6 not; a disc inside a polygon proven; a halfspace never. */
static void test_overlap_proven_2d(void **state) {
    (void)state;
    imp_shape sq = box2(1, 1, 0), disc = sphere(0.3);
    assert_int_equal(
        imp_overlap_proven_2d(&sq, imp_v3(0, 0, 0), &sq, imp_v3(2 - 1e-6, 0.5, 0), NULL), 1);
    assert_int_equal(imp_overlap_proven_2d(&sq, imp_v3(0, 0, 0), &sq, imp_v3(2, 0.5, 0), NULL), 0);
    assert_int_equal(
        imp_overlap_proven_2d(&sq, imp_v3(0, 0, 0), &sq, imp_v3(2 + 1e-6, 0.5, 0), NULL), 0);
    assert_int_equal(imp_overlap_proven_2d(&sq, imp_v3(0, 0, 0), &disc, imp_v3(0.2, -0.1, 0), NULL),
                     1);
    imp_shape h = {.type = IMP_SHAPE_HALFSPACE, .normal = {0, 1, 0}, .offset = 0};
    assert_int_equal(imp_overlap_proven_2d(&sq, imp_v3(0, 0, 0), &h, imp_v3(0, 0, 0), NULL), 0);
    /* the margin: squares of side 2 overlapping by 0.01 are proven with a slack of 1e-9 in
     * their points, not with one of 0.1 (which could make them apart) */
    imp_vec3 corners[4] = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}}, d = {1.99, 0.5, 0};
    assert_int_equal(imp_ov_gjk2_encloses(corners, 4, corners, 4, d, 1e-12, 1e-9, NULL), 1);
    assert_int_equal(imp_ov_gjk2_encloses(corners, 4, corners, 4, d, 1e-12, 0.1, NULL), 0);
    const uint64_t seed = 0x9A0F;
    uint64_t rng = seed;
    int proven = 0, overlapping = 0;
    for (int k = 0; k < 100000; ++k) {
        imp_vec3 va[16], vb[16], pa, pb;
        imp_shape a, b;
        random_placed_pair(&rng, va, vb, &a, &b, &pa, &pb);
        imp_overlap_result r = imp_overlap(&a, pa, &b, pb, 2);
        overlapping += r.state == IMP_OVERLAP_OVERLAPPING;
        if (!imp_overlap_proven_2d(&a, pa, &b, pb, NULL)) continue;
        ++proven;
        if (r.state != IMP_OVERLAP_OVERLAPPING || !(r.depth > 0.0))
            fail_msg("seed %#llx case %d: proven overlapping, the exact test says state %d "
                     "depth %g distance %g",
                     (unsigned long long)seed, k, (int)r.state, r.depth, r.distance);
    }
    printf("seed %#llx: %d of %d overlapping pairs proven\n", (unsigned long long)seed, proven,
           overlapping);
    /* and a useful one: it proves a good share of them (cores overlapping, not only the
     * rounded parts) */
    assert_true(proven > overlapping / 3);
}

/* imp_overlap_gjk_2d against the exact 2D query (imp_overlap_closest, which scans every
 * vertex-edge pair), cold, and warm-started on the cores with a caller's scale
 * (imp_overlap_gjk_core2, imp_overlap_proven_core2): the cache primed by a run on the same
 * shapes at another placement (b moved by up to 0.5), as a solver's next placement reuses it. An
 * APART answer is one of the exact query's, its distance at most IMP_GJK_EXCESS_REL of the cores'
 * distance (and the contact tolerance) above the exact one, and its closest points that distance
 * apart along its normal; a pair it leaves (near) is within the tolerance of contact or
 * overlapping; and a warm proof of overlap is one. */
static void test_overlap_gjk_2d(void **state) {
    (void)state;
    const uint64_t seed = 0x61C2;
    uint64_t rng = seed;
    int apart = 0, warm_proofs = 0;
    for (int k = 0; k < 100000; ++k) {
        imp_vec3 va[16], vb[16], pa, pb, ea, eb;
        imp_shape a, b;
        random_placed_pair(&rng, va, vb, &a, &b, &pa, &pb);
        imp_overlap_result ex = imp_overlap_closest(&a, pa, &b, pb, 2, &ea, &eb);
        double rr = a.radius + b.radius;
        imp_gjk2_cache cache = {0};
        imp_vec3 other = imp_add(
            pb, imp_v3(imp_rng_uniform(&rng, -0.5, 0.5), imp_rng_uniform(&rng, -0.5, 0.5), 0));
        imp_vec3 ca, cb;
        int near;
        (void)imp_overlap_gjk_2d(&a, pa, &b, other, &cache, &ca, &cb, &near);
        imp_gjk2_cache primed = cache;
        /* warm: on the cores with a caller's scale, as the rotating solver measures */
        imp_vec3 bufa[8], bufb[8];
        imp_core2 ka = {.pos = pa}, kb = {.pos = pb};
        ka.n = imp_shape_points(&a, 2, bufa, &ka.pts, &ka.r);
        kb.n = imp_shape_points(&b, 2, bufb, &kb.pts, &kb.r);
        double scale =
            imp_max_abs(pa) + imp_max_abs(pb) + imp_shape_extent(&a, 2) + imp_shape_extent(&b, 2);
        for (int warm = 0; warm < 2; ++warm) {
            imp_overlap_result r =
                warm ? imp_overlap_gjk_core2(&ka, &kb, scale, &cache, &ca, &cb, &near)
                     : imp_overlap_gjk_2d(&a, pa, &b, pb, NULL, &ca, &cb, &near);
            if (r.state == IMP_OVERLAP_APART) {
                apart += !warm;
                double hi = ex.distance + IMP_GJK_EXCESS_REL * (ex.distance + rr) + 1e-11;
                if (ex.state != IMP_OVERLAP_APART || r.distance < ex.distance - 1e-12 ||
                    r.distance > hi || fabs(imp_len(r.normal) - 1.0) > 1e-12 ||
                    imp_len(imp_sub(imp_sub(cb, ca), imp_scale(r.normal, r.distance))) > 1e-9)
                    fail_msg("seed %#llx case %d (%s): GJK apart by %.17g, exactly state %d "
                             "distance %.17g",
                             (unsigned long long)seed, k, warm ? "warm" : "cold", r.distance,
                             (int)ex.state, ex.distance);
            } else if (!near || (ex.state == IMP_OVERLAP_APART && ex.distance > 1e-9)) {
                fail_msg("seed %#llx case %d (%s): GJK state %d near %d, exactly apart by %.17g",
                         (unsigned long long)seed, k, warm ? "warm" : "cold", (int)r.state, near,
                         ex.distance);
            }
        }
        if (imp_overlap_proven_core2(&ka, &kb, scale, &primed)) {
            ++warm_proofs;
            if (ex.state == IMP_OVERLAP_APART || !(imp_overlap(&a, pa, &b, pb, 2).depth > 0.0))
                fail_msg("seed %#llx case %d: a warm proof of overlap, exactly state %d",
                         (unsigned long long)seed, k, (int)ex.state);
        }
    }
    printf("seed %#llx: %d pairs apart, %d warm proofs of overlap\n", (unsigned long long)seed,
           apart, warm_proofs);
    assert_true(apart > 20000 && warm_proofs > 5000);
}

/* ---- 3D boxes and polyhedra (SAT, GJK) --------------------------------------------------- */

static imp_quat axis_angle(imp_vec3 axis, double angle) {
    axis = imp_scale(axis, 1 / imp_len(axis));
    imp_quat q = {cos(angle / 2), sin(angle / 2) * axis.x, sin(angle / 2) * axis.y,
                  sin(angle / 2) * axis.z};
    return q;
}

static void near_vec(imp_vec3 got, imp_vec3 want, double tol, const char *what) {
    if (!(imp_len(imp_sub(got, want)) <= tol))
        fail_msg("%s: got (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g)", what, got.x, got.y,
                 got.z, want.x, want.y, want.z);
}

/* r is as expected, and so is the swapped pair (normal reversed) */
static void expect3(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                    imp_overlap_state st, double amount, imp_vec3 normal, double tol,
                    const char *what) {
    for (int swap = 0; swap < 2; ++swap) {
        imp_overlap_result r = swap ? imp_overlap(b, pb, a, pa, 3) : imp_overlap(a, pa, b, pb, 3);
        if (r.state != st)
            fail_msg("%s%s: state %d, want %d", what, swap ? " (swapped)" : "", (int)r.state,
                     (int)st);
        near(st == IMP_OVERLAP_APART ? r.distance : r.depth, amount, tol, what);
        assert_true(st == IMP_OVERLAP_APART ? r.depth == 0 : r.distance == 0);
        near_vec(r.normal, swap ? imp_neg(normal) : normal, fmax(tol, 1e-14), what);
    }
}

static void test_known_answers_3d_polytopes(void **state) {
    (void)state;
    const imp_quat id = {1, 0, 0, 0};
    const double s2 = sqrt(2.0), s3 = sqrt(3.0);
    imp_vec3 o = imp_v3(0, 0, 0);
    imp_shape bx = box3(1, 1, 1, id);
    /* axis-aligned boxes: the smallest axis overlap (x) wins */
    expect3(&bx, o, &bx, imp_v3(1.5, 0.2, 0.1), IMP_OVERLAP_OVERLAPPING, 0.5, imp_v3(1, 0, 0),
            1e-15, "boxes overlapping on x");
    expect3(&bx, o, &bx, imp_v3(0.3, -0.2, -1.9), IMP_OVERLAP_OVERLAPPING, 0.1, imp_v3(0, 0, -1),
            1e-15, "boxes overlapping on -z");
    expect3(&bx, o, &bx, imp_v3(3, 0.5, 0), IMP_OVERLAP_APART, 1, imp_v3(1, 0, 0), 1e-15,
            "boxes apart on x");
    expect3(&bx, o, &bx, imp_v3(3, 3, 3), IMP_OVERLAP_APART, s3, imp_v3(1 / s3, 1 / s3, 1 / s3),
            1e-15, "boxes apart corner to corner");
    /* boxes turned 45 degrees about z and about y: a vertical edge of a meets a
     * horizontal edge of b; only the cross product of the two (x) gives the depth */
    imp_shape bz = box3(1, 1, 1, axis_angle(imp_v3(0, 0, 1), PI / 4));
    imp_shape by = box3(1, 1, 1, axis_angle(imp_v3(0, 1, 0), PI / 4));
    expect3(&bz, o, &by, imp_v3(2 * s2 - 0.1, 0, 0), IMP_OVERLAP_OVERLAPPING, 0.1, imp_v3(1, 0, 0),
            1e-14, "edge to edge, crossing");
    expect3(&bz, o, &by, imp_v3(2 * s2 + 0.1, 0, 0), IMP_OVERLAP_APART, 0.1, imp_v3(1, 0, 0), 1e-14,
            "edge to edge, apart");
    expect3(&bz, o, &by, imp_v3(2 * s2 - 0.1, 0.05, -0.02), IMP_OVERLAP_OVERLAPPING, 0.1,
            imp_v3(1, 0, 0), 1e-14, "edge to edge, off centre");
    /* a box and a sphere at a face, an edge and a corner */
    imp_shape ball = sphere(0.5);
    expect3(&bx, o, &ball, imp_v3(1.3, 0.2, -0.4), IMP_OVERLAP_OVERLAPPING, 0.2, imp_v3(1, 0, 0),
            1e-15, "sphere at a face");
    expect3(&bx, o, &ball, imp_v3(0.2, -0.4, 1.7), IMP_OVERLAP_APART, 0.2, imp_v3(0, 0, 1), 1e-15,
            "sphere above a face");
    expect3(&bx, o, &ball, imp_v3(1.3, 1.3, 0.1), IMP_OVERLAP_OVERLAPPING, 0.5 - 0.3 * s2,
            imp_v3(1 / s2, 1 / s2, 0), 1e-15, "sphere at an edge");
    expect3(&bx, o, &ball, imp_v3(1.5, 0.1, -1.5), IMP_OVERLAP_APART, 0.5 * s2 - 0.5,
            imp_v3(1 / s2, 0, -1 / s2), 1e-15, "sphere off an edge");
    expect3(&bx, o, &ball, imp_v3(1.2, 1.2, 1.2), IMP_OVERLAP_OVERLAPPING, 0.5 - 0.2 * s3,
            imp_v3(1 / s3, 1 / s3, 1 / s3), 1e-15, "sphere at a corner");
    expect3(&bx, o, &ball, imp_v3(-1.5, -1.5, 1.5), IMP_OVERLAP_APART, 0.5 * s3 - 0.5,
            imp_v3(-1 / s3, -1 / s3, 1 / s3), 1e-15, "sphere off a corner");
    expect3(&bx, o, &ball, imp_v3(0.1, 0.7, 0.2), IMP_OVERLAP_OVERLAPPING, 0.8, imp_v3(0, 1, 0),
            1e-15, "sphere centre inside the box");
    /* a tetrahedron and a box: its face x = 0 against the box's face x = 1 */
    imp_vec3 tet[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    imp_shape th = {.type = IMP_SHAPE_POLYHEDRON, .verts = tet, .n_verts = 4};
    expect3(&bx, o, &th, imp_v3(0.9, -0.5, -0.4), IMP_OVERLAP_OVERLAPPING, 0.1, imp_v3(1, 0, 0),
            1e-15, "tetrahedron in a box's face");
    expect3(&bx, o, &th, imp_v3(1.5, 0.2, 0.3), IMP_OVERLAP_APART, 0.5, imp_v3(1, 0, 0), 1e-15,
            "tetrahedron beside a box");
    /* the tetrahedron's slanted face towards the box's corner (1, 1, 1) */
    expect3(&th, o, &bx, imp_v3(2, 2, 2), IMP_OVERLAP_APART, 2 / s3, imp_v3(1 / s3, 1 / s3, 1 / s3),
            1e-14, "box corner off a slanted face");
    /* a capsule lying across a box: above the top face, then sunk into it */
    imp_shape cap = capsule(imp_v3(-3, 0, 0), imp_v3(3, 0.5, 0), 0.25);
    expect3(&bx, o, &cap, imp_v3(0, 0, 1.1), IMP_OVERLAP_OVERLAPPING, 0.15, imp_v3(0, 0, 1), 1e-15,
            "capsule across the top");
    expect3(&bx, o, &cap, imp_v3(0, 0, 0.8), IMP_OVERLAP_OVERLAPPING, 0.45, imp_v3(0, 0, 1), 1e-15,
            "capsule sunk into the top");
    expect3(&bx, o, &cap, imp_v3(0, 0, 1.5), IMP_OVERLAP_APART, 0.25, imp_v3(0, 0, 1), 1e-15,
            "capsule above the top");
    imp_shape seg = capsule(imp_v3(-3, 0, 0), imp_v3(3, 0, 0), 0);
    expect3(&bx, o, &seg, imp_v3(0, 0.2, 0.9), IMP_OVERLAP_OVERLAPPING, 0.1, imp_v3(0, 0, 1), 1e-15,
            "segment through a box");
    /* the same cube as a polyhedron (with inner points) agrees with the box */
    imp_vec3 cube[10];
    for (int i = 0; i < 8; ++i)
        cube[i] = imp_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    cube[8] = imp_v3(0, 0, 0);
    cube[9] = imp_v3(1, 0, 0);
    imp_shape pc = {.type = IMP_SHAPE_POLYHEDRON, .verts = cube, .n_verts = 10};
    expect3(&pc, o, &bx, imp_v3(1.5, 0.2, 0.1), IMP_OVERLAP_OVERLAPPING, 0.5, imp_v3(1, 0, 0),
            1e-15, "polyhedron cube and box");
    expect3(&pc, o, &pc, imp_v3(3, 3, 3), IMP_OVERLAP_APART, s3, imp_v3(1 / s3, 1 / s3, 1 / s3),
            1e-15, "polyhedron cubes apart");
    /* touching faces: overlapping with depth 0 */
    expect3(&bx, o, &bx, imp_v3(2, 0.5, 0.5), IMP_OVERLAP_OVERLAPPING, 0, imp_v3(1, 0, 0), 1e-15,
            "boxes touching");
    /* a halfspace still decides alone, and two are still unsupported */
    imp_shape hs = halfspace(imp_v3(0, 0, 1), 0);
    imp_overlap_result two = imp_overlap(&hs, o, &hs, o, 3);
    assert_int_equal(two.state, IMP_OVERLAP_FAILED);
    assert_int_equal(two.failure, IMP_FAILURE_UNSUPPORTED);
}

/* ---- independent 3D signed distance and surface samples ---------------------------------- */

typedef struct facet {
    imp_vec3 n; /* outward unit normal */
    double d;
    imp_vec3 t[3]; /* a triangle of input points on the facet */
} facet;

typedef struct test_poly {
    facet f[64];
    size_t nf;
} test_poly;

/* Facet triangles of the hull of p[0..n) by brute force: every triple whose
 * plane has all points on one side (independent of core/hull.c). */
static void brute_facets(const imp_vec3 *p, size_t n, test_poly *tp) {
    tp->nf = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
            for (size_t k = j + 1; k < n; ++k) {
                imp_vec3 c = imp_cross(imp_sub(p[j], p[i]), imp_sub(p[k], p[i]));
                if (imp_len(c) < 1e-9) continue;
                c = imp_scale(c, 1 / imp_len(c));
                double hi = -INFINITY, lo = INFINITY;
                for (size_t m = 0; m < n; ++m) {
                    double s = imp_dot(c, imp_sub(p[m], p[i]));
                    hi = fmax(hi, s);
                    lo = fmin(lo, s);
                }
                if (hi > 1e-12 && lo < -1e-12) continue;
                if (hi > 1e-12) c = imp_neg(c);
                assert_true(tp->nf < 64);
                facet *f = &tp->f[tp->nf++];
                f->n = c;
                f->d = imp_dot(c, p[i]);
                f->t[0] = p[i], f->t[1] = p[j], f->t[2] = p[k];
            }
}

/* distance from x to triangle t: the plane when x projects inside, else the edges */
static double tri_dist(imp_vec3 x, const imp_vec3 t[3], imp_vec3 n) {
    double h = imp_dot(n, imp_sub(x, t[0]));
    imp_vec3 y = imp_madd(x, n, -h);
    int pos = 0, neg = 0; /* either winding: inside when no turn disagrees */
    for (int e = 0; e < 3; ++e) {
        double c = imp_dot(imp_cross(imp_sub(t[(e + 1) % 3], t[e]), imp_sub(y, t[e])), n);
        pos |= c > 0;
        neg |= c < 0;
    }
    if (!(pos && neg)) return fabs(h);
    return fmin(seg_dist(x, t[0], t[1]), fmin(seg_dist(x, t[1], t[2]), seg_dist(x, t[2], t[0])));
}

static double sdf3(const imp_shape *s, const test_poly *tp, imp_vec3 pos, imp_vec3 x) {
    imp_vec3 l = imp_sub(x, pos);
    switch (s->type) {
    case IMP_SHAPE_SPHERE: return imp_len(l) - s->radius;
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT: return seg_dist(l, s->a, s->b) - s->radius;
    case IMP_SHAPE_BOX: {
        imp_quat inv = {s->rot.w, -s->rot.x, -s->rot.y, -s->rot.z};
        imp_vec3 q = imp_quat_rotate(inv, l);
        imp_vec3 e = imp_v3(fabs(q.x) - s->half.x, fabs(q.y) - s->half.y, fabs(q.z) - s->half.z);
        imp_vec3 out = imp_v3(fmax(e.x, 0), fmax(e.y, 0), fmax(e.z, 0));
        return imp_len(out) + fmin(fmax(e.x, fmax(e.y, e.z)), 0);
    }
    case IMP_SHAPE_POLYHEDRON: {
        double inside = -INFINITY;
        for (size_t i = 0; i < tp->nf; ++i)
            inside = fmax(inside, imp_dot(tp->f[i].n, l) - tp->f[i].d);
        if (inside <= 0) return inside;
        double out = INFINITY;
        for (size_t i = 0; i < tp->nf; ++i)
            out = fmin(out, tri_dist(l, tp->f[i].t, tp->f[i].n));
        return out;
    }
    default: return NAN;
    }
}

static size_t add_sample(imp_vec3 *out, size_t n, size_t cap, imp_vec3 x) {
    if (n < cap) out[n++] = x;
    return n;
}

/* points on a sphere of radius r about c, about `step` apart (Fibonacci) */
static size_t sphere_samples(imp_vec3 c, double r, double step, imp_vec3 *out, size_t n,
                             size_t cap) {
    size_t m = (size_t)(4 * PI * r * r / (step * step)) + 12;
    for (size_t i = 0; i < m; ++i) {
        double z = 1 - 2 * ((double)i + 0.5) / (double)m, rho = sqrt(fmax(0, 1 - z * z));
        double ph = (double)i * PI * (3 - sqrt(5.0));
        n = add_sample(out, n, cap,
                       imp_add(c, imp_scale(imp_v3(rho * cos(ph), rho * sin(ph), z), r)));
    }
    return n;
}

/* points of triangle a b c (its edges and vertices included), `step` apart */
static size_t tri_samples(imp_vec3 a, imp_vec3 b, imp_vec3 c, double step, imp_vec3 *out, size_t n,
                          size_t cap) {
    double l = fmax(imp_len(imp_sub(b, a)), fmax(imp_len(imp_sub(c, b)), imp_len(imp_sub(a, c))));
    size_t k = (size_t)(l / step) + 1;
    for (size_t i = 0; i <= k; ++i)
        for (size_t j = 0; i + j <= k; ++j) {
            double u = (double)i / (double)k, v = (double)j / (double)k;
            n = add_sample(
                out, n, cap,
                imp_add(a, imp_add(imp_scale(imp_sub(b, a), u), imp_scale(imp_sub(c, a), v))));
        }
    return n;
}

/* Points of a placed 3D shape covering its surface about `step` apart. */
static size_t samples3(const imp_shape *s, const test_poly *tp, imp_vec3 pos, double step,
                       imp_vec3 *out, size_t cap) {
    size_t n = 0;
    switch (s->type) {
    case IMP_SHAPE_SPHERE: return sphere_samples(pos, s->radius, step, out, 0, cap);
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT: {
        imp_vec3 a = imp_add(pos, s->a), b = imp_add(pos, s->b), d = imp_sub(b, a);
        double r = s->radius, len = imp_len(d);
        size_t k = (size_t)(len / step) + 1;
        if (r == 0) {
            for (size_t i = 0; i <= k; ++i)
                n = add_sample(out, n, cap, imp_madd(a, d, (double)i / (double)k));
            return n;
        }
        n = sphere_samples(a, r, step, out, n, cap);
        n = sphere_samples(b, r, step, out, n, cap);
        imp_vec3 u = imp_scale(d, 1 / len);
        imp_vec3 e1 = imp_cross(u, fabs(u.x) < 0.6 ? imp_v3(1, 0, 0) : imp_v3(0, 1, 0));
        e1 = imp_scale(e1, 1 / imp_len(e1));
        imp_vec3 e2 = imp_cross(u, e1);
        size_t m = (size_t)(2 * PI * r / step) + 8;
        for (size_t i = 0; i <= k; ++i)
            for (size_t j = 0; j < m; ++j) {
                double t = 2 * PI * (double)j / (double)m;
                imp_vec3 c = imp_madd(a, d, (double)i / (double)k);
                n = add_sample(
                    out, n, cap,
                    imp_add(c, imp_add(imp_scale(e1, r * cos(t)), imp_scale(e2, r * sin(t)))));
            }
        return n;
    }
    case IMP_SHAPE_BOX: {
        imp_vec3 ax[3] = {imp_quat_rotate(s->rot, imp_v3(s->half.x, 0, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, s->half.y, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, 0, s->half.z))};
        for (int k = 0; k < 3; ++k)
            for (int sg = -1; sg <= 1; sg += 2) {
                imp_vec3 c = imp_madd(pos, ax[k], sg), u = ax[(k + 1) % 3], v = ax[(k + 2) % 3];
                size_t mu = (size_t)(2 * imp_len(u) / step) + 1,
                       mv = (size_t)(2 * imp_len(v) / step) + 1;
                for (size_t i = 0; i <= mu; ++i)
                    for (size_t j = 0; j <= mv; ++j)
                        n = add_sample(
                            out, n, cap,
                            imp_add(c, imp_add(imp_scale(u, 2.0 * (double)i / (double)mu - 1),
                                               imp_scale(v, 2.0 * (double)j / (double)mv - 1))));
            }
        return n;
    }
    case IMP_SHAPE_POLYHEDRON:
        for (size_t i = 0; i < tp->nf; ++i)
            n = tri_samples(imp_add(pos, tp->f[i].t[0]), imp_add(pos, tp->f[i].t[1]),
                            imp_add(pos, tp->f[i].t[2]), step, out, n, cap);
        return n;
    default: return 0;
    }
}

static imp_shape random_shape3(uint64_t *rng, imp_vec3 *vbuf, test_poly *tp) {
    int kind = (int)(imp_rng_unit(rng) * 6);
    double size = imp_rng_uniform(rng, 0.2, 1.5);
    switch (kind) {
    case 0: return sphere(size);
    case 1:
    case 4: {
        imp_quat q = {imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                      imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1)};
        imp_quat u;
        if (imp_quat_normalize(q, &u) != 0) u = (imp_quat){1, 0, 0, 0};
        return box3(size, imp_rng_uniform(rng, 0.2, 1.5), imp_rng_uniform(rng, 0.2, 1.5), u);
    }
    case 2:
    case 5: {
        size_t n;
        do {
            n = 4 + (size_t)(imp_rng_unit(rng) * 5);
            for (size_t i = 0; i < n; ++i)
                vbuf[i] =
                    imp_v3(imp_rng_uniform(rng, -size, size), imp_rng_uniform(rng, -size, size),
                           imp_rng_uniform(rng, -size, size));
        } while (imp_polyhedron_check(vbuf, n) != 0);
        brute_facets(vbuf, n, tp);
        imp_shape s = {.type = IMP_SHAPE_POLYHEDRON, .verts = vbuf, .n_verts = n};
        return s;
    }
    default: {
        imp_vec3 d = imp_v3(imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                            imp_rng_uniform(rng, -1, 1));
        d = imp_scale(d, size / fmax(imp_len(d), 1e-3));
        return capsule(imp_neg(d), d, imp_rng_unit(rng) < 0.2 ? 0 : imp_rng_uniform(rng, 0.05, 1));
    }
    }
}

static void test_random_pairs_3d_against_sdf(void **state) {
    (void)state;
    const uint64_t seed = 0x3D3D;
    uint64_t rng = seed;
    imp_vec3 *pts = malloc(MAX_SAMPLES * sizeof *pts);
    assert_non_null(pts);
    const double step = 0.09;
    int apart = 0, overlapping = 0, polytopes = 0;
    for (int k = 0; k < 20000; ++k) {
        imp_vec3 va[8], vb[8];
        test_poly ta, tb;
        imp_shape a = random_shape3(&rng, va, &ta), b = random_shape3(&rng, vb, &tb);
        imp_vec3 pa = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                             imp_rng_uniform(&rng, -1, 1));
        imp_vec3 pb = imp_v3(imp_rng_uniform(&rng, -2.5, 2.5), imp_rng_uniform(&rng, -2.5, 2.5),
                             imp_rng_uniform(&rng, -2.5, 2.5));
        imp_overlap_result r = imp_overlap(&a, pa, &b, pb, 3);
        imp_overlap_result s = imp_overlap(&b, pb, &a, pa, 3);
        polytopes += a.type == IMP_SHAPE_BOX || a.type == IMP_SHAPE_POLYHEDRON ||
                     b.type == IMP_SHAPE_BOX || b.type == IMP_SHAPE_POLYHEDRON;
        if (r.state != s.state || fabs(r.depth - s.depth) > 1e-9 ||
            fabs(r.distance - s.distance) > 1e-9 ||
            (r.depth > 1e-6 && imp_len(imp_add(r.normal, s.normal)) > 1e-6))
            fail_msg("seed %#llx case %d: not symmetric (state %d/%d, depth %.17g/%.17g, "
                     "distance %.17g/%.17g)",
                     (unsigned long long)seed, k, (int)r.state, (int)s.state, r.depth, s.depth,
                     r.distance, s.distance);
        if (!(fabs(imp_len(r.normal) - 1) < 1e-12))
            fail_msg("seed %#llx case %d: |normal| = %.17g", (unsigned long long)seed, k,
                     imp_len(r.normal));
        if (r.state == IMP_OVERLAP_APART) {
            ++apart;
            /* no sample of b closer to a than the distance, the closest within a step */
            size_t n = samples3(&b, &tb, pb, step, pts, MAX_SAMPLES);
            double least = INFINITY;
            for (size_t i = 0; i < n; ++i)
                least = fmin(least, sdf3(&a, &ta, pa, pts[i]));
            if (least < r.distance - 1e-9 || least > r.distance + step)
                fail_msg("seed %#llx case %d (types %d, %d): distance %.17g, samples reach %.17g",
                         (unsigned long long)seed, k, (int)a.type, (int)b.type, r.distance, least);
            /* the normal separates: b's samples lie beyond a's support plane */
            size_t na = samples3(&a, &ta, pa, step, pts, MAX_SAMPLES);
            double amax = -INFINITY;
            for (size_t i = 0; i < na; ++i)
                amax = fmax(amax, imp_dot(pts[i], r.normal));
            n = samples3(&b, &tb, pb, step, pts, MAX_SAMPLES);
            for (size_t i = 0; i < n; ++i)
                if (imp_dot(pts[i], r.normal) < amax - 1e-9)
                    fail_msg("seed %#llx case %d: normal does not separate",
                             (unsigned long long)seed, k);
        } else {
            ++overlapping;
            /* after b moves by the translation plus a hair, no sample of either is inside
             * the other */
            imp_vec3 pb2 = imp_add(pb, imp_scale(r.normal, r.depth + 1e-9));
            size_t n = samples3(&b, &tb, pb2, step, pts, MAX_SAMPLES);
            double least = INFINITY;
            for (size_t i = 0; i < n; ++i)
                least = fmin(least, sdf3(&a, &ta, pa, pts[i]));
            n = samples3(&a, &ta, pa, step, pts, MAX_SAMPLES);
            for (size_t i = 0; i < n; ++i)
                least = fmin(least, sdf3(&b, &tb, pb2, pts[i]));
            if (least < -1e-12)
                fail_msg("seed %#llx case %d (types %d, %d): after the translation a sample is "
                         "%.3g inside",
                         (unsigned long long)seed, k, (int)a.type, (int)b.type, -least);
        }
    }
    free(pts);
    assert_true(apart > 3000 && overlapping > 3000 && polytopes > 12000);
}

/* Two rotated boxes 4.7e-5 apart: GJK's last tetrahedron was nearly flat and
 * its rounding said the origin was inside, so they came back touching.
 * Found by the conservative-advancement tests. Moving b by 1e-9 must change
 * the distance by at most that. */
static void test_boxes_apart_through_a_flat_simplex(void **state) {
    (void)state;
    imp_quat qa = {-0.31487693746373002, 0.6114269680285298, -0.48992141536475553,
                   0.53571128771745724};
    imp_quat qb = {0.49279607711141993, -0.56223212794615673, -0.62187790354731465,
                   0.23305564521875194};
    imp_shape a = {.type = IMP_SHAPE_BOX,
                   .half = imp_v3(0.4843881272845999, 0.81608082328606812, 0.94532854452452519),
                   .rot = qa};
    imp_shape b = {.type = IMP_SHAPE_BOX,
                   .half = imp_v3(0.73331143575110302, 0.51050454386147748, 0.26822119346773593),
                   .rot = qb};
    imp_vec3 pa = imp_v3(-2.7063560404697937, -1.4640747845139508, -1.8873467830434818);
    imp_vec3 pb = imp_v3(-3.2714169816270111, -2.9569785361758671, -2.4532179130103229);
    imp_overlap_result r = imp_overlap(&a, pa, &b, pb, 3);
    imp_overlap_result s = imp_overlap(&a, pa, &b, imp_v3(pb.x + 1e-9, pb.y, pb.z), 3);
    assert_int_equal(r.state, IMP_OVERLAP_APART);
    assert_int_equal(s.state, IMP_OVERLAP_APART);
    assert_true(fabs(r.distance - s.distance) <= 1e-9 && r.distance > 4.6e-5);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boxes_apart_through_a_flat_simplex),
        cmocka_unit_test(test_known_answers_2d),
        cmocka_unit_test(test_known_answers_3d),
        cmocka_unit_test(test_random_pairs_against_sdf),
        cmocka_unit_test(test_overlap_proven_2d),
        cmocka_unit_test(test_overlap_gjk_2d),
        cmocka_unit_test(test_known_answers_3d_polytopes),
        cmocka_unit_test(test_random_pairs_3d_against_sdf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
