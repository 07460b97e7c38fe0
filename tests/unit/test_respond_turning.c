/*
 * test_respond_turning.c - response of bodies that turn: the impulse at the
 * contact point through both inertias (core/respond.c), and the inertia of
 * uniform solids (core/inertia.c).
 *
 * DESIGN
 * Hand cases have closed forms worked here: a rod struck at its end
 * (jn = (1 + e) |un| / (1/m1 + 1/m2 + r^2 / I)), a disk sliding onto a
 * floor with k = 0 (it leaves rolling at 2/3 of its speed), a thin 3D box
 * struck off-centre. The inertias are checked against a different method:
 * a box against its polyhedron (tetrahedra of the hull), a square against
 * the 2D box, capsules against midpoint sums over a grid, and an offset
 * body against the parallel-axis theorem. The property test checks the
 * defining properties of the answer with sums taken here, not the solver's
 * formula: linear momentum, angular momentum about the origin (m x cross v
 * + I w over the bodies), kinetic energy (linear plus rotational), the
 * relative normal velocity at the point after (-e times before), and for
 * k = 1 an impulse along the normal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "api/api.h"
#include "core/inertia.h"
#include "core/respond.h"
#include "tests/rng.h"

#define V(x, y, z) imp_v3((x), (y), (z))

#define PROPERTY_PAIRS 100000L
static const double PI_ = 3.14159265358979323846;

#define assert_near(got, want, tol)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ - w_) <= (tol)))                                                             \
            fail_msg("%s = %.17g, want %.17g +- %g", #got, g_, w_, (double)(tol));                 \
    } while (0)

static imp_respond_body body(imp_vec3 v, double mass, double e, double k) {
    imp_respond_body b = {v, mass, 0, e, k};
    return b;
}

/* a turn of a body at p with angular velocity w and the given world tensor */
static imp_respond_turn turn(imp_vec3 p, imp_vec3 w, imp_mat3 inertia, int dim) {
    imp_respond_turn t;
    t.position = p;
    t.omega = w;
    t.inertia = inertia;
    int rc = imp_mat3_inverse_spd(&inertia, dim, &t.inv_inertia);
    assert_int_equal(rc, 0);
    return t;
}

static imp_mat3 izz(double i) {
    imp_mat3 m = {{0.0}};
    m.m[8] = i;
    return m;
}

static void test_rod_struck_at_end(void **s) {
    (void)s;
    /* a rod of length 2 and mass 1 (I = m L^2 / 12 = 1/3, the uniform solid of the segment),
     * hit at its end (1, 0) by a ball of mass 1 falling at 1, e = 1:
     * K = 1 + 1 + r^2 / I = 5, jn = 2 / 5, rod v = -0.4, w = -r jn / I = -1.2, ball v = -0.6 */
    imp_shape rod = {.type = IMP_SHAPE_SEGMENT, .a = V(-1, 0, 0), .b = V(1, 0, 0)};
    imp_mat3 i;
    assert_int_equal(imp_inertia_shape(&rod, 2, 1.0, &i), IMP_INERTIA_OK);
    assert_near(i.m[8], 1.0 / 3.0, 1e-16);
    imp_respond_input in = {body(V(0, 0, 0), 1, 1, 1), body(V(0, -1, 0), 1, 1, 1), V(0, 1, 0)};
    imp_respond_turn ta = turn(V(0, 0, 0), V(0, 0, 0), i, 2);
    imp_respond_turn tb = turn(V(1, 0.5, 0), V(0, 0, 0), izz(0.125), 2);
    imp_respond_result r = imp_respond_resolve_turning(&in, &ta, &tb, V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_near(r.impulse.y, 0.4, 1e-15);
    assert_near(r.impulse.x, 0.0, 0.0);
    assert_near(r.va.y, -0.4, 1e-15);
    assert_near(r.wa.z, -1.2, 1e-15);
    assert_near(r.vb.y, -0.6, 1e-15);
    assert_near(r.wb.z, 0.0, 0.0); /* struck through its centre */
    assert_near(r.ke_before, 0.5, 0.0);
    assert_near(r.ke_after, 0.5, 1e-15);
    /* e = 0: jn = 1 / 5, the end point and the ball leave together at -0.2 - 0.6 = -0.8 */
    in.a.restitution = 0.0;
    r = imp_respond_resolve_turning(&in, &ta, &tb, V(1, 0, 0));
    assert_near(r.impulse.y, 0.2, 1e-15);
    assert_near(r.va.y + r.wa.z * 1.0, r.vb.y, 1e-15);
    assert_near(r.vb.y, -0.8, 1e-15);
}

static void test_disk_rolls_away(void **s) {
    (void)s;
    /* a disk (radius 1, mass 2, I = m r^2 / 2 = 1) slides at (3, -2) onto a static floor below
     * it, e = 0 and k = 0: the contact point stops, so v' = (3 - jt/m, 0) with
     * 3 - jt/m - r^2 jt / I = 0: jt = 2, v' = (2, 0), w' = -r jt / I = -2 (rolling: v = -w r) */
    imp_shape disk = {.type = IMP_SHAPE_SPHERE, .radius = 1.0};
    imp_mat3 i;
    assert_int_equal(imp_inertia_shape(&disk, 2, 2.0, &i), IMP_INERTIA_OK);
    assert_near(i.m[8], 1.0, 1e-16);
    imp_respond_input in = {body(V(3, -2, 0), 2, 0, 0), body(V(0, 0, 0), 1, 1, 1), V(0, -1, 0)};
    in.b.is_static = 1;
    imp_respond_turn ta = turn(V(0, 1, 0), V(0, 0, 0), i, 2), tb;
    tb.position = V(0, -5, 0);
    tb.omega = V(0, 0, 0);
    tb.inertia = tb.inv_inertia = izz(0.0);
    imp_respond_result r = imp_respond_resolve_turning(&in, &ta, &tb, V(0, 0, 0));
    assert_near(r.va.x, 2.0, 1e-15);
    assert_near(r.va.y, 0.0, 1e-15);
    assert_near(r.wa.z, -2.0, 1e-15);
    assert_near(r.ke_before, 13.0, 0.0);
    assert_near(r.ke_after, 0.5 * 2 * 4 + 0.5 * 1 * 4, 1e-14);
    assert_int_equal(r.clamped, 0);
    /* k = 1: no tangential impulse, the disk keeps sliding without turning */
    in.a.tangential = 1.0;
    r = imp_respond_resolve_turning(&in, &ta, &tb, V(0, 0, 0));
    assert_near(r.va.x, 3.0, 0.0);
    assert_near(r.wa.z, 0.0, 0.0);
}

static void test_box_struck_off_centre_3d(void **s) {
    (void)s;
    /* a thin box (half extents 1, 0.1, 0.1, mass 3: Iyy = m (1 + 0.01) / 3 = 1.01) struck at
     * (1, 0, 0.1) along z by a point mass 1 at -1: r x n = (0, -1, 0), so
     * K = 1/3 + 1 + 1 / Iyy and jn = 2 / K; a turns about y only */
    imp_shape box = {.type = IMP_SHAPE_BOX, .half = V(1, 0.1, 0.1), .rot = {1, 0, 0, 0}};
    imp_mat3 i;
    assert_int_equal(imp_inertia_shape(&box, 3, 3.0, &i), IMP_INERTIA_OK);
    assert_near(i.m[4], 1.01, 1e-15);
    assert_near(i.m[0], 0.02, 1e-16);
    imp_mat3 ball = {{0.4, 0, 0, 0, 0.4, 0, 0, 0, 0.4}};
    imp_respond_input in = {body(V(0, 0, 0), 3, 1, 1), body(V(0, 0, -1), 1, 1, 1), V(0, 0, 1)};
    imp_respond_turn ta = turn(V(0, 0, 0), V(0, 0, 0), i, 3);
    imp_respond_turn tb = turn(V(1, 0, 1.1), V(0, 0, 0), ball, 3);
    imp_respond_result r = imp_respond_resolve_turning(&in, &ta, &tb, V(1, 0, 0.1));
    double k = 1.0 / 3.0 + 1.0 + 1.0 / 1.01, jn = 2.0 / k;
    assert_near(r.impulse.z, jn, 1e-15);
    assert_near(r.va.z, -jn / 3.0, 1e-15);
    assert_near(r.wa.y, jn / 1.01, 1e-15); /* -(r x (-jn z)) / Iyy = (0, jn, 0) / Iyy */
    assert_near(r.wa.x, 0.0, 1e-17);
    assert_near(r.wa.z, 0.0, 1e-17);
    assert_near(r.vb.z, -1.0 + jn, 1e-15);
    assert_near(r.ke_after, r.ke_before, 1e-15);
}

/* inertia of the shape through a different method: midpoint sums over a grid of the region
 * inside(x) in [-ext, ext]^dim (about the origin), per unit mass */
typedef int (*inside_fn)(imp_vec3 p, const imp_shape *s);

static int inside_capsule(imp_vec3 p, const imp_shape *s) {
    imp_vec3 d = imp_sub(s->b, s->a);
    double t = imp_dot(imp_sub(p, s->a), d) / imp_dot(d, d);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    imp_vec3 q = imp_madd(s->a, d, t);
    return imp_dot(imp_sub(p, q), imp_sub(p, q)) <= s->radius * s->radius;
}

static void grid_inertia(const imp_shape *s, int dim, double ext, int n, double out[9]) {
    double c[9] = {0}, count = 0, h = 2 * ext / n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int l = 0; l < (dim == 3 ? n : 1); ++l) {
                imp_vec3 p = V(-ext + (i + 0.5) * h, -ext + (j + 0.5) * h,
                               dim == 3 ? -ext + (l + 0.5) * h : 0.0);
                if (!inside_capsule(p, s)) continue;
                double v[3] = {p.x, p.y, p.z};
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b)
                        c[3 * a + b] += v[a] * v[b];
                count += 1;
            }
    double tr = c[0] + c[4] + c[8];
    for (int a = 0; a < 9; ++a)
        out[a] = ((a % 4 == 0 ? tr : 0.0) - c[a]) / count;
    if (dim == 2) out[8] = (c[0] + c[4]) / count;
}

static void test_inertia_by_other_methods(void **s) {
    (void)s;
    /* a turned 3D box against the polyhedron of its corners (tetrahedra of the hull), both
     * placed off the position (parallel axes) */
    imp_quat q;
    imp_quat_normalize((imp_quat){0.9, 0.3, -0.2, 0.4}, &q);
    imp_vec3 half = V(1.5, 0.5, 0.25), off = V(0.3, -0.7, 2.0);
    imp_vec3 corners[8];
    for (int c = 0; c < 8; ++c)
        corners[c] =
            imp_add(off, imp_quat_rotate(q, V(c & 1 ? half.x : -half.x, c & 2 ? half.y : -half.y,
                                              c & 4 ? half.z : -half.z)));
    imp_shape poly = {.type = IMP_SHAPE_POLYHEDRON, .verts = corners, .n_verts = 8};
    imp_mat3 ip, ib;
    assert_int_equal(imp_inertia_shape(&poly, 3, 2.0, &ip), IMP_INERTIA_OK);
    imp_shape box = {.type = IMP_SHAPE_BOX, .half = half, .rot = q};
    assert_int_equal(imp_inertia_shape(&box, 3, 2.0, &ib), IMP_INERTIA_OK);
    /* parallel axes: + m (|d|^2 Id - d d^T) */
    double d[3] = {off.x, off.y, off.z}, dd = imp_dot(off, off);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            assert_near(ip.m[3 * a + b],
                        ib.m[3 * a + b] + 2.0 * ((a == b ? dd : 0.0) - d[a] * d[b]), 1e-12);
    /* a square polygon against the 2D box: m (w^2 + h^2) / 12 with w = 2, h = 4, m = 3 */
    imp_vec3 sq[4] = {V(-1, -2, 0), V(1, -2, 0), V(1, 2, 0), V(-1, 2, 0)};
    imp_shape pg = {.type = IMP_SHAPE_POLYGON, .verts = sq, .n_verts = 4};
    imp_shape b2 = {.type = IMP_SHAPE_BOX, .half = V(1, 2, 0), .rot = {1, 0, 0, 0}};
    assert_int_equal(imp_inertia_shape(&pg, 2, 3.0, &ip), IMP_INERTIA_OK);
    assert_int_equal(imp_inertia_shape(&b2, 2, 3.0, &ib), IMP_INERTIA_OK);
    assert_near(ip.m[8], 5.0, 1e-14);
    assert_near(ib.m[8], 5.0, 1e-14);
    /* a sphere: 2/5 m r^2 */
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 2.0};
    assert_int_equal(imp_inertia_shape(&ball, 3, 5.0, &ib), IMP_INERTIA_OK);
    assert_near(ib.m[0], 8.0, 1e-14);
    assert_near(ib.m[1], 0.0, 0.0);
    /* capsules, off-centre and slanted, against grid sums (relative error of the grid ~1e-3) */
    for (int dim = 2; dim <= 3; ++dim) {
        imp_shape cap = {.type = IMP_SHAPE_CAPSULE,
                         .radius = 0.6,
                         .a = V(-0.9, 0.2, 0),
                         .b = V(0.8, 0.9, dim == 3 ? 0.5 : 0.0)};
        imp_mat3 ic;
        assert_int_equal(imp_inertia_shape(&cap, dim, 1.0, &ic), IMP_INERTIA_OK);
        double g[9];
        grid_inertia(&cap, dim, 1.8, dim == 3 ? 240 : 2000, g);
        for (int a = 0; a < 9; ++a) {
            if (dim == 2 && a != 8) continue;
            if (fabs(ic.m[a] - g[a]) > 2e-3 * fabs(ic.m[8]))
                fail_msg("%dD capsule I[%d] = %.12g, grid %.12g", dim, a, ic.m[a], g[a]);
        }
    }
    /* no volume: a point, a 3D rod */
    imp_shape pt = {.type = IMP_SHAPE_SPHERE, .radius = 0.0};
    assert_int_equal(imp_inertia_shape(&pt, 3, 1.0, &ib), IMP_INERTIA_NO_VOLUME);
    imp_shape rod = {.type = IMP_SHAPE_SEGMENT, .a = V(-1, 0, 0), .b = V(1, 0, 0)};
    assert_int_equal(imp_inertia_shape(&rod, 3, 1.0, &ib), IMP_INERTIA_NO_VOLUME);
}

/* ---- property test ----------------------------------------------------------------------- */

static imp_vec3 rand_vec(uint64_t *rng, int dim, double scale) {
    return V(imp_rng_uniform(rng, -scale, scale), imp_rng_uniform(rng, -scale, scale),
             dim == 3 ? imp_rng_uniform(rng, -scale, scale) : 0.0);
}

static imp_quat rand_quat(uint64_t *rng, int dim) {
    if (dim == 2) return imp_quat_from_angle(imp_rng_uniform(rng, -PI_, PI_));
    imp_quat q;
    do
        q = (imp_quat){imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                       imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1)};
    while (imp_quat_normalize(q, &q) != 0);
    return q;
}

/* A random shape (turned by q) with storage for up to 12 vertices in buf; the contact
 * point is the shape's support point in direction n, relative to the position. */
static imp_shape rand_shape(uint64_t *rng, int dim, imp_quat q, imp_vec3 buf[12]) {
    imp_shape s = {.rot = {1, 0, 0, 0}};
    int kind = (int)(imp_rng_unit(rng) * 5);
    double sz = exp(imp_rng_uniform(rng, -2, 2));
    switch (kind) {
    case 0:
        s.type = IMP_SHAPE_SPHERE;
        s.radius = sz;
        break;
    case 1:
        s.type = IMP_SHAPE_BOX;
        s.half = V(sz * imp_rng_uniform(rng, 0.1, 1), sz * imp_rng_uniform(rng, 0.1, 1),
                   dim == 3 ? sz * imp_rng_uniform(rng, 0.1, 1) : 0.0);
        break;
    case 2:
    case 3:
        s.type = kind == 2 ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT;
        if (dim == 3) s.type = IMP_SHAPE_CAPSULE; /* a 3D rod has no default inertia */
        s.radius = s.type == IMP_SHAPE_CAPSULE ? sz * imp_rng_uniform(rng, 0.05, 1) : 0.0;
        s.a = rand_vec(rng, dim, sz);
        s.b = rand_vec(rng, dim, sz);
        break;
    default:
        if (dim == 2) { /* a convex polygon: points on an ellipse, counter-clockwise */
            int n = 3 + (int)(imp_rng_unit(rng) * 8);
            double rx = sz * imp_rng_uniform(rng, 0.2, 1), ry = sz * imp_rng_uniform(rng, 0.2, 1);
            imp_vec3 c = rand_vec(rng, 2, 0.5 * sz);
            for (int i = 0; i < n; ++i) {
                double t = 2 * PI_ * (i + imp_rng_uniform(rng, 0, 0.8)) / n;
                buf[i] = V(c.x + rx * cos(t), c.y + ry * sin(t), 0);
            }
            s.type = IMP_SHAPE_POLYGON;
            s.verts = buf;
            s.n_verts = (size_t)n;
        } else { /* random points around an offset centre */
            imp_vec3 c = rand_vec(rng, 3, 0.5 * sz);
            for (int i = 0; i < 12; ++i)
                buf[i] = imp_add(c, rand_vec(rng, 3, sz));
            s.type = IMP_SHAPE_POLYHEDRON;
            s.verts = buf;
            s.n_verts = 12;
        }
    }
    imp_shape_rotate(&s, q);
    return s;
}

static imp_vec3 support(const imp_shape *s, int dim, imp_vec3 n) {
    imp_vec3 buf[8];
    const imp_vec3 *p;
    double r = 0;
    size_t k = imp_shape_points(s, dim, buf, &p, &r);
    size_t best = 0;
    for (size_t i = 1; i < k; ++i)
        if (imp_dot(p[i], n) > imp_dot(p[best], n)) best = i;
    return imp_madd(p[best], n, r);
}

static imp_vec3 cross_mass(double m, imp_vec3 x, imp_vec3 v) {
    return imp_scale(imp_cross(x, v), m);
}

static double vabs(imp_vec3 v) { return fabs(v.x) + fabs(v.y) + fabs(v.z); }

static void test_property_random_turning_pairs(void **st) {
    (void)st;
    const uint64_t seed = 0x7E5E7A11D15CULL;
    printf("seed 0x%llx\n", (unsigned long long)seed);
    for (int dim = 2; dim <= 3; ++dim) {
        uint64_t rng = seed + (uint64_t)dim;
        long resolved = 0, elastic = 0, clamped = 0, statics = 0, user = 0;
        double worst_p = 0, worst_l = 0, worst_e = 0, worst_rise = 0, worst_n = 0;
        for (long it = 0; it < PROPERTY_PAIRS; ++it) {
            imp_vec3 buf[2][12];
            imp_respond_input in;
            imp_respond_turn t[2];
            imp_respond_body *bd[2] = {&in.a, &in.b};
            imp_vec3 n;
            do
                n = rand_vec(&rng, dim, 1);
            while (imp_len(n) < 0.1);
            n = imp_scale(n, 1.0 / imp_len(n));
            in.normal = n;
            imp_vec3 point = V(0, 0, 0);
            double p = imp_rng_unit(&rng);
            for (int i = 0; i < 2; ++i) {
                double m = exp(imp_rng_uniform(&rng, -4, 4));
                *bd[i] = body(rand_vec(&rng, dim, 10), m, imp_rng_unit(&rng), imp_rng_unit(&rng));
                bd[i]->is_static = (i == 0 && p < 0.05) || (i == 1 && p >= 0.05 && p < 0.1);
                imp_quat q = rand_quat(&rng, dim);
                imp_shape s = rand_shape(&rng, dim, q, buf[i]);
                t[i].position = rand_vec(&rng, dim, 10);
                t[i].omega =
                    dim == 2 ? V(0, 0, imp_rng_uniform(&rng, -20, 20)) : rand_vec(&rng, 3, 20);
                if (imp_rng_unit(&rng) < 0.3) { /* the client's principal moments */
                    imp_vec3 mo =
                        V(exp(imp_rng_uniform(&rng, -3, 3)), exp(imp_rng_uniform(&rng, -3, 3)),
                          exp(imp_rng_uniform(&rng, -3, 3)));
                    if (dim == 2) {
                        t[i].inertia = izz(mo.z);
                        t[i].inv_inertia = izz(1.0 / mo.z);
                    } else {
                        t[i].inertia = imp_mat3_principal(q, mo);
                        t[i].inv_inertia =
                            imp_mat3_principal(q, V(1.0 / mo.x, 1.0 / mo.y, 1.0 / mo.z));
                    }
                    user++;
                } else {
                    assert_int_equal(imp_inertia_shape(&s, dim, m, &t[i].inertia), IMP_INERTIA_OK);
                    assert_int_equal(imp_mat3_inverse_spd(&t[i].inertia, dim, &t[i].inv_inertia),
                                     0);
                }
                /* the contact point: a's support point along n (b is placed to touch it) */
                if (i == 0)
                    point = imp_add(t[0].position, support(&s, dim, n));
                else
                    t[1].position = imp_sub(point, support(&s, dim, imp_neg(n)));
                if (bd[i]->is_static) {
                    t[i].inertia = t[i].inv_inertia = (imp_mat3){{0}};
                    statics++;
                    if (imp_rng_unit(&rng) < 0.5) { /* a wall at rest; else a moving one */
                        bd[i]->v = V(0, 0, 0);
                        t[i].omega = V(0, 0, 0);
                    }
                }
            }
            int el = imp_rng_unit(&rng) < 0.25;
            if (el) in.a.restitution = in.b.restitution = in.a.tangential = in.b.tangential = 1;
            imp_respond_result r = imp_respond_resolve_turning(&in, &t[0], &t[1], point);
            if (r.state != IMP_RESPOND_RESOLVED) continue;
            resolved++;
            elastic += el;
            clamped += r.clamped;
            /* momenta and energies summed here */
            imp_vec3 vel[2][2] = {{in.a.v, r.va}, {in.b.v, r.vb}};
            imp_vec3 om[2][2] = {{t[0].omega, r.wa}, {t[1].omega, r.wb}};
            imp_vec3 P[2] = {V(0, 0, 0), V(0, 0, 0)}, L[2] = {V(0, 0, 0), V(0, 0, 0)};
            double E[2] = {0, 0}, Ps = 0, Ls = 0;
            for (int i = 0; i < 2; ++i) {
                if (bd[i]->is_static) continue;
                for (int w = 0; w < 2; ++w) {
                    double m = bd[i]->mass;
                    imp_vec3 lin = imp_scale(vel[i][w], m),
                             iw = imp_mat3_apply(&t[i].inertia, om[i][w]);
                    imp_vec3 ang = imp_add(cross_mass(m, t[i].position, vel[i][w]), iw);
                    P[w] = imp_add(P[w], lin);
                    L[w] = imp_add(L[w], ang);
                    Ps += vabs(lin);
                    Ls += vabs(cross_mass(m, t[i].position, vel[i][w])) + vabs(iw);
                    E[w] += 0.5 * m * imp_dot(vel[i][w], vel[i][w]) + 0.5 * imp_dot(om[i][w], iw);
                }
            }
            if (!in.a.is_static && !in.b.is_static) {
                double dp = vabs(imp_sub(P[1], P[0])) / Ps, dl = vabs(imp_sub(L[1], L[0])) / Ls;
                worst_p = fmax(worst_p, dp);
                worst_l = fmax(worst_l, dl);
                if (dp > 1e-12 || dl > 1e-12)
                    fail_msg("%dD pair %ld: momentum changed by %.3g (linear), %.3g (angular)", dim,
                             it, dp, dl);
            }
            assert_near(r.ke_before, E[0], 1e-12 * E[0]);
            assert_near(r.ke_after, E[1], 1e-12 * E[0]);
            /* a moving static body does work on the other (a paddle): energy is checked when
             * every static body is at rest */
            int moving_wall = 0;
            for (int i = 0; i < 2; ++i)
                moving_wall |= bd[i]->is_static && (vabs(bd[i]->v) > 0 || vabs(t[i].omega) > 0);
            if (moving_wall) continue;
            double rise = (E[1] - E[0]) / E[0];
            worst_rise = fmax(worst_rise, rise);
            if (el) {
                worst_e = fmax(worst_e, fabs(rise));
                if (fabs(rise) > 1e-12)
                    fail_msg("%dD pair %ld: e = k = 1 energy changed by %.3g", dim, it, rise);
                /* k = 1: the impulse is along the normal */
                assert_true(vabs(imp_madd(r.impulse, n, -imp_dot(r.impulse, n))) <=
                            1e-12 * vabs(r.impulse));
            } else if (rise > 1e-12) {
                fail_msg("%dD pair %ld: energy rose by %.3g (e %g, k %g)", dim, it, rise, r.e, r.k);
            }
            /* the relative normal velocity at the point: -e times before */
            imp_vec3 ra = imp_sub(point, t[0].position), rb = imp_sub(point, t[1].position);
            double un0 = imp_dot(imp_sub(imp_add(in.b.v, imp_cross(t[1].omega, rb)),
                                         imp_add(in.a.v, imp_cross(t[0].omega, ra))),
                                 n);
            double un1 = imp_dot(
                imp_sub(imp_add(r.vb, imp_cross(r.wb, rb)), imp_add(r.va, imp_cross(r.wa, ra))), n);
            double scale = vabs(in.a.v) + vabs(in.b.v) + vabs(imp_cross(t[0].omega, ra)) +
                           vabs(imp_cross(t[1].omega, rb)) + vabs(r.va) + vabs(r.vb) +
                           vabs(imp_cross(r.wa, ra)) + vabs(imp_cross(r.wb, rb));
            double dn = fabs(un1 + r.e * un0) / scale;
            worst_n = fmax(worst_n, dn);
            if (dn > 1e-12)
                fail_msg("%dD pair %ld: normal velocity after off by %.3g", dim, it, dn);
        }
        printf("%dD: %ld pairs, %ld resolved (%ld e = k = 1, %ld tangential clamped), %ld static "
               "bodies, %ld given inertias; worst relative: linear momentum %.2g, angular %.2g, "
               "elastic energy %.2g, energy rise %.2g, normal velocity %.2g\n",
               dim, PROPERTY_PAIRS, resolved, elastic, clamped, statics, user, worst_p, worst_l,
               worst_e, worst_rise, worst_n);
        assert_true(resolved > PROPERTY_PAIRS / 3 && elastic > 5000 && clamped > 10);
    }
}

/* POST /v1/respond on `req`: the reply (the caller frees it), which must be a 200. */
static json_t *respond(const char *req) {
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    imp_api_response r;
    int status = imp_api_handle("respond", req, strlen(req), &ctx, &r);
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    if (status != 200 || !doc) fail_msg("%s: %d %s", req, status, r.body);
    imp_api_response_free(&r);
    return doc;
}

static double num_at(const json_t *o, const char *body, const char *key, int i) {
    const json_t *v = json_object_get(body ? json_object_get(o, body) : o, key);
    return json_is_array(v) ? json_number_value(json_array_get(v, (size_t)i))
                            : json_number_value(v);
}

static imp_vec3 vec_at(const json_t *o, const char *body, const char *key, int dim) {
    return V(num_at(o, body, key, 0), num_at(o, body, key, 1),
             dim == 3 ? num_at(o, body, key, 2) : 0);
}

/* v as a JSON array of dim numbers. */
static void vec_text(char *out, size_t cap, imp_vec3 v, int dim) {
    if (dim == 2)
        snprintf(out, cap, "[%.17g, %.17g]", v.x, v.y);
    else
        snprintf(out, cap, "[%.17g, %.17g, %.17g]", v.x, v.y, v.z);
}

/* A body's angular velocity in a reply: 2D a number (about z), 3D a Vec. */
static imp_vec3 omega_at(const json_t *o, const char *body, int dim) {
    if (dim == 2) return V(0, 0, num_at(o, body, "angular_velocity", 0));
    return vec_at(o, body, "angular_velocity", 3);
}

/* Two axis-aligned boxes whose contact normal is an axis: their faces across it meet flat.
 * The region is, on each other axis, the intersection of the two boxes' intervals (a
 * second method: no clipping), and the point must be its centre, halfway between the faces
 * along the normal. Returns 1 when the faces share a region (and the point matched). */
static int check_box_faces(const imp_vec3 pos[2], const imp_shape s[2], int dim, imp_vec3 n,
                           imp_vec3 point) {
    double nv[3] = {n.x, n.y, n.z}, pa[3] = {pos[0].x, pos[0].y, pos[0].z},
           pb[3] = {pos[1].x, pos[1].y, pos[1].z}, ha[3] = {s[0].half.x, s[0].half.y, s[0].half.z},
           hb[3] = {s[1].half.x, s[1].half.y, s[1].half.z}, want[3] = {0, 0, 0};
    int axis = -1;
    for (int i = 0; i < dim; ++i)
        if (fabs(nv[i]) == 1.0) axis = i;
    if (axis < 0) return 0;
    double scale = 0;
    for (int i = 0; i < dim; ++i) {
        scale = fmax(scale, fabs(pa[i]) + ha[i] + fabs(pb[i]) + hb[i]);
        if (i == axis) { /* a's face along n and b's against it */
            want[i] = 0.5 * ((pa[i] + nv[i] * ha[i]) + (pb[i] - nv[i] * hb[i]));
            continue;
        }
        double lo = fmax(pa[i] - ha[i], pb[i] - hb[i]), hi = fmin(pa[i] + ha[i], pb[i] + hb[i]);
        if (!(hi - lo > 1e-6 * scale)) return 0;
        want[i] = 0.5 * (lo + hi);
    }
    double got[3] = {point.x, point.y, point.z};
    for (int i = 0; i < dim; ++i)
        if (fabs(got[i] - want[i]) > 1e-14 * scale)
            fail_msg("%dD faces along axis %d: point[%d] = %.17g, want %.17g", dim, axis, i, got[i],
                     want[i]);
    return 1;
}

/*
 * Boxes through the endpoint, no rotation named: random 2D and 3D boxes, half of them
 * axis-aligned (so faces meet flat with an offset: the region's centre), placed near or
 * into each other with random velocities. Where the reply's contact is off a body's centre
 * (the arm across the normal), the answer must be bit for bit the one for the same request
 * naming angular_velocity 0 on both bodies (turning rigid bodies). Every answer must
 * conserve linear momentum and angular momentum about the origin (m p x v + I w, I the
 * uniform solid's tensor from core/inertia.h), and kinetic energy (linear + rotational,
 * recomputed here) when e = k = 1, and never raise it otherwise.
 */
static void test_property_unnamed_off_centre(void **st) {
    (void)st;
    const uint64_t seed = 0x0FFCE47E0B0EULL;
    printf("seed 0x%llx\n", (unsigned long long)seed);
    for (int dim = 2; dim <= 3; ++dim) {
        uint64_t rng = seed + (uint64_t)dim;
        long resolved = 0, off = 0, flat = 0, flat_faces = 0;
        double worst_p = 0, worst_l = 0, worst_e = 0;
        for (long it = 0; it < 3000; ++it) {
            imp_shape s[2];
            imp_vec3 pos[2], vel[2];
            double m[2];
            char body[2][2][1024];
            int aligned = imp_rng_unit(&rng) < 0.5, el = imp_rng_unit(&rng) < 0.3;
            double e = el ? 1 : imp_rng_unit(&rng), k = el ? 1 : imp_rng_unit(&rng);
            for (int i = 0; i < 2; ++i) {
                memset(&s[i], 0, sizeof s[i]);
                s[i].type = IMP_SHAPE_BOX;
                s[i].half = V(imp_rng_uniform(&rng, 0.2, 2), imp_rng_uniform(&rng, 0.2, 2),
                              dim == 3 ? imp_rng_uniform(&rng, 0.2, 2) : 0);
                double angle = aligned ? 0 : imp_rng_uniform(&rng, -PI_, PI_);
                imp_quat q = dim == 2 ? imp_quat_from_angle(angle) : rand_quat(&rng, 3);
                if (aligned) q = (imp_quat){1, 0, 0, 0};
                s[i].rot = q;
                m[i] = exp(imp_rng_uniform(&rng, -2, 2));
                vel[i] = rand_vec(&rng, dim, 5);
                pos[i] = i == 0
                             ? rand_vec(&rng, dim, 5)
                             : imp_add(pos[0],
                                       rand_vec(&rng, dim,
                                                0.9 * (imp_len(s[0].half) + imp_len(s[1].half))));
                char orient[128];
                if (dim == 2)
                    snprintf(orient, sizeof orient, "%.17g", angle);
                else
                    snprintf(orient, sizeof orient, "[%.17g, %.17g, %.17g, %.17g]", q.w, q.x, q.y,
                             q.z);
                char h[96], p[96], v[96];
                vec_text(h, sizeof h, s[i].half, dim);
                vec_text(p, sizeof p, pos[i], dim);
                vec_text(v, sizeof v, vel[i], dim);
                for (int named = 0; named < 2; ++named)
                    snprintf(body[i][named], sizeof body[i][named],
                             "{\"shape\": {\"type\": \"box\", \"half_extents\": %s},"
                             " \"position\": %s, \"velocity\": %s, \"mass\": %.17g,"
                             " \"restitution\": %.17g, \"tangential\": %.17g,"
                             " \"orientation\": %s%s}",
                             h, p, v, m[i], i ? 1.0 : e, i ? 1.0 : k, orient,
                             named ? (dim == 2 ? ", \"angular_velocity\": 0"
                                               : ", \"angular_velocity\": [0, 0, 0]")
                                   : "");
            }
            char req[2][8192];
            for (int named = 0; named < 2; ++named)
                snprintf(req[named], sizeof req[named], "{\"a\": %s, \"b\": %s}", body[0][named],
                         body[1][named]);
            json_t *r = respond(req[0]);
            if (strcmp(json_string_value(json_object_get(r, "status")), "resolved") != 0) {
                json_decref(r);
                continue;
            }
            resolved++;
            imp_vec3 point = vec_at(r, NULL, "point", dim), n = vec_at(r, NULL, "normal", dim);
            if (aligned && check_box_faces(pos, s, dim, n, point)) flat_faces++;
            int any_off = 0;
            for (int i = 0; i < 2; ++i) {
                imp_vec3 arm = imp_sub(point, pos[i]);
                any_off |= imp_len(imp_madd(arm, n, -imp_dot(arm, n))) > 1e-9 * imp_len(s[i].half);
            }
            if (any_off) {
                off++;
                json_t *r2 = respond(req[1]);
                if (!json_equal(r, r2)) {
                    char *a = json_dumps(r, JSON_COMPACT), *b = json_dumps(r2, JSON_COMPACT);
                    fail_msg("%dD pair %ld: unnamed %s, named %s", dim, it, a, b);
                }
                json_decref(r2);
            } else {
                flat++;
            }
            imp_vec3 P[2] = {V(0, 0, 0), V(0, 0, 0)}, L[2] = {V(0, 0, 0), V(0, 0, 0)};
            double E[2] = {0, 0}, Ps = 0, Ls = 0;
            const char *key[2] = {"a", "b"};
            for (int i = 0; i < 2; ++i) {
                imp_mat3 in;
                assert_int_equal(imp_inertia_shape(&s[i], dim, m[i], &in), IMP_INERTIA_OK);
                imp_vec3 v[2] = {vel[i], vec_at(r, key[i], "velocity", dim)};
                imp_vec3 w[2] = {V(0, 0, 0), omega_at(r, key[i], dim)};
                for (int t = 0; t < 2; ++t) {
                    imp_vec3 iw = imp_mat3_apply(&in, w[t]);
                    imp_vec3 orbit = cross_mass(m[i], pos[i], v[t]);
                    P[t] = imp_add(P[t], imp_scale(v[t], m[i]));
                    L[t] = imp_add(L[t], imp_add(orbit, iw));
                    Ps += vabs(imp_scale(v[t], m[i]));
                    Ls += vabs(orbit) + vabs(iw);
                    E[t] += 0.5 * m[i] * imp_dot(v[t], v[t]) + 0.5 * imp_dot(w[t], iw);
                }
            }
            double dp = vabs(imp_sub(P[1], P[0])) / Ps, dl = vabs(imp_sub(L[1], L[0])) / Ls,
                   de = (E[1] - E[0]) / E[0];
            worst_p = fmax(worst_p, dp);
            worst_l = fmax(worst_l, dl);
            if (el) worst_e = fmax(worst_e, fabs(de));
            if (dp > 1e-12 || dl > 1e-12 || (el ? fabs(de) : de) > 1e-12)
                fail_msg("%dD pair %ld (e %g, k %g): momentum changed by %.3g (linear), %.3g "
                         "(angular), energy by %.3g",
                         dim, it, e, k, dp, dl, de);
            json_decref(r);
        }
        printf("%dD: %ld resolved (%ld axis-aligned faces meeting, point checked), %ld off a "
               "centre (answer as named), %ld central; worst relative: linear momentum %.2g, "
               "angular %.2g, elastic energy %.2g\n",
               dim, resolved, flat_faces, off, flat, worst_p, worst_l, worst_e);
        assert_true(resolved > 500 && off > 300 && flat_faces > 100);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rod_struck_at_end),
        cmocka_unit_test(test_disk_rolls_away),
        cmocka_unit_test(test_box_struck_off_centre_3d),
        cmocka_unit_test(test_inertia_by_other_methods),
        cmocka_unit_test(test_property_random_turning_pairs),
        cmocka_unit_test(test_property_unnamed_off_centre),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
