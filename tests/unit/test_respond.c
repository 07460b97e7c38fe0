/*
 * test_respond.c - collision response: named contacts with exact answers,
 * the edge rules (separating, resting, both static), the normalisation of
 * the normal, and a property test over random pairs.
 *
 * DESIGN
 * The property test does not reuse the solver's formula: it checks the
 * defining properties of the answer, which determine it completely.
 * Momentum conservation (or, against a static body, the static velocity
 * kept) fixes one vector equation; the relative velocity after, split
 * along the normal in long double, must be -e times the normal part
 * before and k times the tangential part. The impulse is checked as b's
 * change of momentum, and the energies against sums taken here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <math.h>

#include "core/respond.h"
#include "tests/rng.h"

#define V(x, y, z) imp_v3((x), (y), (z))

static imp_respond_body body(imp_vec3 v, double mass, double e, double k) {
    imp_respond_body b = {v, mass, 0, e, k};
    return b;
}

static imp_respond_body wall(imp_vec3 v, double e, double k) {
    imp_respond_body b = {v, 1.0, 1, e, k};
    return b;
}

static imp_respond_result run(imp_respond_body a, imp_respond_body b, imp_vec3 n) {
    imp_respond_input in = {a, b, n};
    return imp_respond_resolve(&in);
}

static int vec_eq(imp_vec3 a, imp_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

#define assert_vec_eq(got, ex, ey, ez)                                                             \
    do {                                                                                           \
        imp_vec3 g_ = (got);                                                                       \
        if (!(g_.x == (ex) && g_.y == (ey) && g_.z == (ez)))                                       \
            fail_msg("%s = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g)", #got, g_.x, g_.y,   \
                     g_.z, (double)(ex), (double)(ey), (double)(ez));                              \
    } while (0)

#define assert_vec_near(got, ex, ey, ez, tol)                                                      \
    do {                                                                                           \
        imp_vec3 g_ = (got);                                                                       \
        if (!(fabs(g_.x - (ex)) <= (tol) && fabs(g_.y - (ey)) <= (tol) &&                          \
              fabs(g_.z - (ez)) <= (tol)))                                                         \
            fail_msg("%s = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g) +- %g", #got, g_.x,   \
                     g_.y, g_.z, (double)(ex), (double)(ey), (double)(ez), (double)(tol));         \
    } while (0)

/* ---- known answers --------------------------------------------------------------------- */

static void test_head_on_equal_masses_elastic_swap(void **s) {
    (void)s;
    imp_respond_result r = run(body(V(1, 0, 0), 1, 1, 1), body(V(-1, 0, 0), 1, 1, 1), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_vec_eq(r.va, -1, 0, 0);
    assert_vec_eq(r.vb, 1, 0, 0);
    assert_vec_eq(r.impulse, 2, 0, 0);
    assert_vec_eq(r.normal, 1, 0, 0);
    assert_true(r.e == 1.0 && r.k == 1.0);
    assert_true(r.ke_before == 1.0 && r.ke_after == 1.0);
}

static void test_head_on_inelastic_common_velocity(void **s) {
    (void)s;
    /* e = 0 * 1: they leave together at the centre-of-mass velocity (3 - 1) / 2 */
    imp_respond_result r = run(body(V(3, 0, 0), 1, 0, 1), body(V(-1, 0, 0), 1, 1, 1), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_true(r.e == 0.0);
    assert_vec_eq(r.va, 1, 0, 0);
    assert_vec_eq(r.vb, 1, 0, 0);
    assert_vec_eq(r.impulse, 2, 0, 0);
    assert_true(r.ke_before == 5.0 && r.ke_after == 1.0);
}

static void test_head_on_unequal_masses(void **s) {
    (void)s;
    /* textbook elastic: va' = (ma - mb) / (ma + mb) va = -2, vb' = 2 ma / (ma + mb) va = 2 */
    imp_respond_result r = run(body(V(4, 0, 0), 1, 1, 1), body(V(0, 0, 0), 3, 1, 1), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_vec_eq(r.va, -2, 0, 0);
    assert_vec_eq(r.vb, 2, 0, 0);
    assert_vec_eq(r.impulse, 6, 0, 0);
    assert_true(r.ke_before == 8.0 && r.ke_after == 8.0);
    /* e = 0.5: relative velocity -4 becomes 2; momentum 4 = 1 (-0.5) + 3 (1.5) */
    r = run(body(V(4, 0, 0), 1, 0.5, 1), body(V(0, 0, 0), 3, 1, 1), V(1, 0, 0));
    assert_vec_eq(r.va, -0.5, 0, 0);
    assert_vec_eq(r.vb, 1.5, 0, 0);
    assert_vec_eq(r.impulse, 4.5, 0, 0);
    assert_true(r.ke_before == 8.0 && r.ke_after == 0.125 + 3.375);
    /* the normal need not be unit length, nor the motion along an axis of the frame */
    r = run(body(V(0, -4, 0), 1, 1, 1), body(V(0, 0, 0), 3, 1, 1), V(0, -7.5, 0));
    assert_vec_eq(r.normal, 0, -1, 0);
    assert_vec_eq(r.va, 0, 2, 0);
    assert_vec_eq(r.vb, 0, -2, 0);
    assert_vec_eq(r.impulse, 0, -6, 0);
}

static void test_static_wall(void **s) {
    (void)s;
    /* a (mass 2) hits a static wall b above it: n = +y */
    imp_respond_result r = run(body(V(2, 3, 0), 2, 1, 1), wall(V(0, 0, 0), 1, 1), V(0, 1, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_vec_eq(r.va, 2, -3, 0); /* normal part flips, tangential kept */
    assert_vec_eq(r.vb, 0, 0, 0);
    assert_vec_eq(r.impulse, 0, 12, 0);                     /* pushes the wall away from a */
    assert_true(r.ke_before == 13.0 && r.ke_after == 13.0); /* the wall's energy is not counted */
    /* e = 0.5 (the wall's restitution) */
    r = run(body(V(2, 3, 0), 2, 1, 1), wall(V(0, 0, 0), 0.5, 1), V(0, 1, 0));
    assert_vec_eq(r.va, 2, -1.5, 0);
    assert_vec_eq(r.impulse, 0, 9, 0);
    assert_true(r.ke_after == 4.0 + 2.25);
    /* k = 0: the tangential part is killed */
    r = run(body(V(2, 3, 0), 2, 1, 0), wall(V(0, 0, 0), 1, 1), V(0, 1, 0));
    assert_vec_eq(r.va, 0, -3, 0);
    assert_vec_eq(r.impulse, 4, 12, 0); /* the wall is dragged along a's slide */
    assert_true(r.k == 0.0 && r.ke_after == 9.0);
    /* the wall as a: b comes down onto it from above (n = +y, from a to b) */
    r = run(wall(V(0, 0, 0), 1, 1), body(V(1, -5, 0), 1, 1, 1), V(0, 1, 0));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_vec_eq(r.va, 0, 0, 0);
    assert_vec_eq(r.vb, 1, 5, 0);
    assert_vec_eq(r.impulse, 0, 10, 0);
    /* a kinematic wall moving into a: reflection in the wall's frame */
    r = run(body(V(2, 3, 0), 1, 1, 1), wall(V(0, -1, 0), 1, 1), V(0, 1, 0));
    assert_vec_eq(r.va, 2, -5, 0);
    assert_vec_eq(r.vb, 0, -1, 0);
    assert_true(r.ke_before == 6.5 && r.ke_after == 14.5);
}

static void test_separating_unchanged(void **s) {
    (void)s;
    imp_respond_result r = run(body(V(-1, 2, 0), 1, 0, 0), body(V(1, 0.5, 0), 2, 0, 0), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_SEPARATING);
    assert_vec_eq(r.va, -1, 2, 0);
    assert_vec_eq(r.vb, 1, 0.5, 0);
    assert_vec_eq(r.impulse, 0, 0, 0);
    assert_vec_eq(r.normal, 1, 0, 0);
    assert_true(r.ke_before == 2.5 + 1.25 && r.ke_after == r.ke_before);
    /* approaching along x, but the normal given points from b to a: separating */
    r = run(body(V(1, 0, 0), 1, 1, 1), body(V(-1, 0, 0), 1, 1, 1), V(-1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_SEPARATING);
    assert_vec_eq(r.va, 1, 0, 0);
    assert_vec_eq(r.vb, -1, 0, 0);
}

static void test_resting_and_sliding_unchanged(void **s) {
    (void)s;
    /* un == 0 exactly: resting (same velocity) */
    imp_respond_result r = run(body(V(3, 1, 0), 1, 0, 0), body(V(3, 1, 0), 1, 0, 0), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_SEPARATING);
    assert_vec_eq(r.va, 3, 1, 0);
    assert_vec_eq(r.vb, 3, 1, 0);
    /* sliding past each other: no normal impulse, so k = 0 does not brake them */
    r = run(body(V(0, 0, 0), 1, 1, 0), body(V(0, 5, 0), 1, 1, 0), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_SEPARATING);
    assert_vec_eq(r.vb, 0, 5, 0);
    assert_vec_eq(r.impulse, 0, 0, 0);
}

static void test_both_static(void **s) {
    (void)s;
    imp_respond_result r = run(wall(V(1, 0, 0), 1, 1), wall(V(-1, 0, 0), 1, 1), V(1, 0, 0));
    assert_int_equal(r.state, IMP_RESPOND_BOTH_STATIC);
    assert_vec_eq(r.va, 1, 0, 0);
    assert_vec_eq(r.vb, -1, 0, 0);
    assert_vec_eq(r.impulse, 0, 0, 0);
    assert_vec_eq(r.normal, 1, 0, 0);
    assert_true(r.ke_before == 0.0 && r.ke_after == 0.0);
}

static void test_oblique_3d(void **s) {
    (void)s;
    /* n = (1, 2, 2) / 3; u = vb - va = (-3, -3, 0): un = -3, ut = (-2, -1, 2).
     * e = 1, k = 0.5, equal masses: du = 6 n - ut / 2 = (3, 4.5, 3), shared half and half. */
    imp_respond_result r =
        run(body(V(0, 0, 0), 1, 1, 0.5), body(V(-3, -3, 0), 1, 1, 1), V(1, 2, 2));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_true(r.k == 0.5);
    assert_vec_near(r.normal, 1.0 / 3, 2.0 / 3, 2.0 / 3, 2e-16);
    assert_vec_near(r.va, -1.5, -2.25, -1.5, 4e-15);
    assert_vec_near(r.vb, -1.5, -0.75, 1.5, 4e-15);
    assert_vec_near(r.impulse, 1.5, 2.25, 1.5, 4e-15);
    assert_true(r.ke_before == 9.0);
    /* after: 0.5 (2.25 + 5.0625 + 2.25) + 0.5 (2.25 + 0.5625 + 2.25) */
    assert_true(fabs(r.ke_after - 7.3125) <= 1e-14);
    /* in 3D with unequal masses and a static partner, along a non-axis normal */
    r = run(body(V(1, 1, 1), 5, 1, 1), wall(V(0, 0, 0), 1, 1), V(-2, -2, -2));
    /* n = -(1, 1, 1) / sqrt(3) puts the wall behind a, which moves away from it */
    assert_int_equal(r.state, IMP_RESPOND_SEPARATING);
    r = run(body(V(1, 1, 1), 5, 1, 1), wall(V(0, 0, 0), 1, 1), V(2, 2, 2));
    assert_int_equal(r.state, IMP_RESPOND_RESOLVED);
    assert_vec_near(r.va, -1, -1, -1, 4e-15); /* u is along n: the whole velocity reflects */
    assert_vec_near(r.impulse, 10, 10, 10, 4e-14);
}

/* The normal's normalisation (imp_unit_scaled, core/vec.h). */
static void test_unit_normal(void **s) {
    (void)s;
    imp_vec3 u = V(42, 42, 42); /* poison: failure must leave it alone */
    assert_int_equal(imp_unit_scaled(V(0, 0, 0), &u, NULL), -1);
    assert_int_equal(imp_unit_scaled(V(-0.0, 0, -0.0), &u, NULL), -1);
    assert_int_equal(imp_unit_scaled(V(NAN, 1, 0), &u, NULL), -1);
    assert_int_equal(imp_unit_scaled(V(INFINITY, 1, 0), &u, NULL), -1);
    assert_vec_eq(u, 42, 42, 42);
    /* subnormal and huge components neither underflow nor overflow */
    assert_int_equal(imp_unit_scaled(V(0, 4.9406564584124654e-324, 0), &u, NULL), 0);
    assert_vec_eq(u, 0, 1, 0);
    assert_int_equal(
        imp_unit_scaled(V(3 * 4.9406564584124654e-324, -4 * 4.9406564584124654e-324, 0), &u, NULL),
        0);
    assert_vec_near(u, 0.6, -0.8, 0, 2e-16);
    assert_int_equal(imp_unit_scaled(V(1e300, 1e300, 1e300), &u, NULL), 0);
    assert_vec_near(u, 1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0), 2e-16);
    assert_int_equal(imp_unit_scaled(V(0, 0, -7), &u, NULL), 0);
    assert_vec_eq(u, 0, 0, -1);
    /* the length as two factors: the largest magnitude, then the scaled length */
    double ml[2] = {-1, -1};
    assert_int_equal(imp_unit_scaled(V(3 * 0x1p900, -4 * 0x1p900, 0), &u, ml), 0);
    assert_true(ml[0] == 4 * 0x1p900 && ml[1] == 1.25);
    assert_vec_eq(u, 0.6, -0.8, 0);
}

/* ---- property test ----------------------------------------------------------------------- */

#define PROPERTY_PAIRS 100000
/* Relative tolerance of the property checks (the contract's 1e-12). */
#define PROPERTY_REL 1e-12

typedef long double ld;

static ld ldot(imp_vec3 a, imp_vec3 b) { return (ld)a.x * b.x + (ld)a.y * b.y + (ld)a.z * b.z; }
static double norm_ld(ld x, ld y, ld z) { return (double)sqrtl(x * x + y * y + z * z); }

static double rand_eff(uint64_t *rng) {
    double p = imp_rng_unit(rng);
    return p < 0.3 ? 1.0 : p < 0.4 ? 0.0 : imp_rng_unit(rng);
}

static imp_vec3 rand_vec(uint64_t *rng, int dim, double scale) {
    return V(imp_rng_uniform(rng, -scale, scale), imp_rng_uniform(rng, -scale, scale),
             dim == 3 ? imp_rng_uniform(rng, -scale, scale) : 0.0);
}

static void test_property_random_pairs(void **s) {
    (void)s;
    const uint64_t seed = 0x0DDBA11C0FFEEull;
    uint64_t rng = seed;
    long resolved = 0, separating = 0, elastic = 0, inelastic = 0, with_static = 0;
    for (long i = 0; i < PROPERTY_PAIRS; ++i) {
        int dim = imp_rng_unit(&rng) < 0.5 ? 2 : 3;
        imp_respond_input in;
        in.a = body(rand_vec(&rng, dim, 10), exp(imp_rng_uniform(&rng, -7, 7)), rand_eff(&rng),
                    rand_eff(&rng));
        in.b = body(rand_vec(&rng, dim, 10), exp(imp_rng_uniform(&rng, -7, 7)), rand_eff(&rng),
                    rand_eff(&rng));
        double p = imp_rng_unit(&rng);
        in.a.is_static = p < 0.08;
        in.b.is_static = p >= 0.08 && p < 0.16;
        if (p >= 0.16 && p < 0.2) in.a.is_static = in.b.is_static = 1;
        /* half the static bodies at rest (walls), half kinematic */
        if (in.a.is_static && imp_rng_unit(&rng) < 0.5) in.a.v = V(0, 0, 0);
        if (in.b.is_static && imp_rng_unit(&rng) < 0.5) in.b.v = V(0, 0, 0);
        do
            in.normal = rand_vec(&rng, dim, imp_rng_unit(&rng) < 0.5 ? 1 : 1e3);
        while (imp_max_abs(in.normal) == 0.0);
        if (imp_rng_unit(&rng) < 0.25) { /* e = k = 1 */
            in.a.restitution = in.b.restitution = in.a.tangential = in.b.tangential = 1.0;
        }

        imp_respond_result r = imp_respond_resolve(&in);
        const imp_respond_body *a = &in.a, *b = &in.b;
        double e = a->restitution * b->restitution, k = a->tangential * b->tangential;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("seed %#llx, pair %ld: ", (unsigned long long)seed, i);                    \
            fail_msg(__VA_ARGS__);                                                                 \
        }                                                                                          \
    } while (0)

        /* the normal: unit, along the one given */
        ld nl = sqrtl(ldot(in.normal, in.normal));
        ld nx = in.normal.x / nl, ny = in.normal.y / nl, nz = in.normal.z / nl;
        CHECK(norm_ld(r.normal.x - nx, r.normal.y - ny, r.normal.z - nz) <= 4e-16,
              "normal (%g, %g, %g) is not the unit normal", r.normal.x, r.normal.y, r.normal.z);
        CHECK(dim == 3 || (r.normal.z == 0.0 && r.va.z == 0.0 && r.vb.z == 0.0),
              "a 2D pair left the plane");
        CHECK(r.e == e && r.k == k, "efficiencies %g %g, want %g %g", r.e, r.k, e, k);

        /* energies: sums over non-static bodies, taken here */
        ld keb = (a->is_static ? 0 : 0.5L * a->mass * ldot(a->v, a->v)) +
                 (b->is_static ? 0 : 0.5L * b->mass * ldot(b->v, b->v));
        ld kea = (a->is_static ? 0 : 0.5L * a->mass * ldot(r.va, r.va)) +
                 (b->is_static ? 0 : 0.5L * b->mass * ldot(r.vb, r.vb));
        CHECK(fabsl(r.ke_before - keb) <= 1e-14L * keb, "ke_before %.17g, want %.17Lg", r.ke_before,
              keb);
        CHECK(fabsl(r.ke_after - kea) <= 1e-14L * kea, "ke_after %.17g, want %.17Lg", r.ke_after,
              kea);

        /* the relative velocity before, split in long double */
        imp_vec3 u = imp_sub(b->v, a->v);
        ld un = (ld)u.x * nx + (ld)u.y * ny + (ld)u.z * nz;
        ld utx = u.x - un * nx, uty = u.y - un * ny, utz = u.z - un * nz;
        /* scale of the velocities involved: the rounding of every velocity is relative to it */
        double scale = imp_len(a->v) + imp_len(b->v);

        if (a->is_static && b->is_static) {
            CHECK(r.state == IMP_RESPOND_BOTH_STATIC, "state %d, want both static", r.state);
        } else if (un > 1e-14L * scale) {
            CHECK(r.state == IMP_RESPOND_SEPARATING, "state %d, want separating (un %Lg)", r.state,
                  un);
        } else if (un < -1e-14L * scale) {
            CHECK(r.state == IMP_RESPOND_RESOLVED, "state %d, want resolved (un %Lg)", r.state, un);
        } /* else: |un| within rounding of 0, either answer is right */
        if (r.state != IMP_RESPOND_RESOLVED) {
            separating += r.state == IMP_RESPOND_SEPARATING;
            CHECK(vec_eq(r.va, a->v) && vec_eq(r.vb, b->v) && vec_eq(r.impulse, V(0, 0, 0)) &&
                      r.ke_after == r.ke_before,
                  "an unresolved pair changed");
            continue;
        }
        ++resolved;

        /* a static body keeps its velocity, bit for bit */
        with_static += a->is_static || b->is_static;
        CHECK(!a->is_static || vec_eq(r.va, a->v), "static a was pushed");
        CHECK(!b->is_static || vec_eq(r.vb, b->v), "static b was pushed");

        /* momentum: conserved between two dynamic bodies; the impulse is b's change of
         * momentum, and minus a's */
        double mom_scale = (a->is_static ? 0 : a->mass * (imp_len(a->v) + imp_len(r.va))) +
                           (b->is_static ? 0 : b->mass * (imp_len(b->v) + imp_len(r.vb)));
        if (!a->is_static && !b->is_static) {
            ld px = (ld)a->mass * (r.va.x - (ld)a->v.x) + (ld)b->mass * (r.vb.x - (ld)b->v.x);
            ld py = (ld)a->mass * (r.va.y - (ld)a->v.y) + (ld)b->mass * (r.vb.y - (ld)b->v.y);
            ld pz = (ld)a->mass * (r.va.z - (ld)a->v.z) + (ld)b->mass * (r.vb.z - (ld)b->v.z);
            CHECK(norm_ld(px, py, pz) <= PROPERTY_REL * mom_scale,
                  "momentum changed by %g (scale %g)", norm_ld(px, py, pz), mom_scale);
        }
        if (!b->is_static) {
            ld jx = (ld)b->mass * (r.vb.x - (ld)b->v.x), jy = (ld)b->mass * (r.vb.y - (ld)b->v.y),
               jz = (ld)b->mass * (r.vb.z - (ld)b->v.z);
            CHECK(norm_ld(r.impulse.x - jx, r.impulse.y - jy, r.impulse.z - jz) <=
                      PROPERTY_REL * mom_scale,
                  "impulse is not b's change of momentum");
        }
        if (!a->is_static) {
            ld jx = (ld)a->mass * ((ld)a->v.x - r.va.x), jy = (ld)a->mass * ((ld)a->v.y - r.va.y),
               jz = (ld)a->mass * ((ld)a->v.z - r.va.z);
            CHECK(norm_ld(r.impulse.x - jx, r.impulse.y - jy, r.impulse.z - jz) <=
                      PROPERTY_REL * mom_scale,
                  "impulse is not minus a's change of momentum");
        }

        /* the relative velocity after: normal part -e un, tangential part k ut */
        imp_vec3 u2 = imp_sub(r.vb, r.va);
        ld un2 = (ld)u2.x * nx + (ld)u2.y * ny + (ld)u2.z * nz;
        ld ut2x = u2.x - un2 * nx, ut2y = u2.y - un2 * ny, ut2z = u2.z - un2 * nz;
        CHECK(fabsl(un2 + e * un) <= PROPERTY_REL * scale, "normal part %Lg, want -%g * %Lg", un2,
              e, un);
        CHECK(norm_ld(ut2x - k * utx, ut2y - k * uty, ut2z - k * utz) <= PROPERTY_REL * scale,
              "tangential part is not k = %g times the one before", k);
        if (e == 0.0) {
            ++inelastic;
            CHECK(fabsl(un2) <= PROPERTY_REL * scale, "e = 0 left a normal velocity %Lg", un2);
        }

        /* e = k = 1: energy conserved, unless a moving (kinematic) static body does work */
        int kinematic = (a->is_static && !vec_eq(a->v, V(0, 0, 0))) ||
                        (b->is_static && !vec_eq(b->v, V(0, 0, 0)));
        if (e == 1.0 && k == 1.0 && !kinematic) {
            ++elastic;
            CHECK(fabs(r.ke_after - r.ke_before) <= PROPERTY_REL * r.ke_before,
                  "elastic contact changed the energy from %.17g to %.17g", r.ke_before,
                  r.ke_after);
        }
#undef CHECK
    }
    /* the random pairs must cover every case */
    print_message("resolved %ld (elastic %ld, e = 0 %ld, with a static body %ld), unchanged %ld\n",
                  resolved, elastic, inelastic, with_static, separating);
    assert_true(resolved > PROPERTY_PAIRS / 3 && separating > PROPERTY_PAIRS / 3);
    assert_true(elastic > 5000 && inelastic > 1000 && with_static > 5000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_on_equal_masses_elastic_swap),
        cmocka_unit_test(test_head_on_inelastic_common_velocity),
        cmocka_unit_test(test_head_on_unequal_masses),
        cmocka_unit_test(test_static_wall),
        cmocka_unit_test(test_separating_unchanged),
        cmocka_unit_test(test_resting_and_sliding_unchanged),
        cmocka_unit_test(test_both_static),
        cmocka_unit_test(test_oblique_3d),
        cmocka_unit_test(test_unit_normal),
        cmocka_unit_test(test_property_random_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
