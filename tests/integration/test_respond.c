/*
 * test_respond.c - POST /v1/respond through HTTP.
 *
 * DESIGN
 * Known answers with exact velocities, impulses, normals and energies
 * (head-on swap, a wall with restitution 0.5 and the default normal, an
 * oblique 3D contact with a normal that is not unit length, separating and
 * static pairs), the same contact as a /v1/batch item, and every 4xx case
 * with its status, content type, problem type and JSON Pointer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "replies.h"

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    return imp_test_daemon_start(&daemon_, NULL, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

/* POSTs `body` (JSON text) to path with content type `ct`; returns the parsed
 * reply (caller decrefs), its status and content type. */
static json_t *post_text(const char *path, const char *ct, const char *body, long *status,
                         char *content_type, size_t ct_cap) {
    return imp_test_post_json(&daemon_, path, ct, body, status, content_type, ct_cap);
}

/* POSTs a JSON request to /v1/respond, expects 200 application/json. */
static json_t *respond_ok(const char *body) {
    return imp_test_post_ok(&daemon_, "/v1/respond", body);
}

static json_t *member(const json_t *o, const char *path) { return imp_test_member(o, path); }

/* The array at `path` has exactly the values want[0..n) (within tol; 0: exact). */
static void expect_vec(const json_t *r, const char *path, const double *want, size_t n,
                       double tol) {
    imp_test_expect_vec(r, path, want, n, tol);
}

static void expect_real(const json_t *r, const char *path, double want, double tol) {
    imp_test_expect_real(r, path, want, tol);
}

#define VEC2(path, x, y, tol)                                                                      \
    do {                                                                                           \
        const double w_[2] = {(x), (y)};                                                           \
        expect_vec(r, (path), w_, 2, (tol));                                                       \
    } while (0)
#define VEC3(path, x, y, z, tol)                                                                   \
    do {                                                                                           \
        const double w_[3] = {(x), (y), (z)};                                                      \
        expect_vec(r, (path), w_, 3, (tol));                                                       \
    } while (0)

static const char HEAD_ON[] =
    "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
    " \"b\": {\"radius\": 0.5, \"position\": [1, 0], \"velocity\": [-1, 0]}}";

static void test_head_on_swap(void **state) {
    (void)state;
    json_t *r = respond_ok(HEAD_ON);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "resolved");
    VEC2("a.velocity", -1, 0, 0);
    VEC2("b.velocity", 1, 0, 0);
    VEC2("impulse", 2, 0, 0);
    VEC2("normal", 1, 0, 0);
    expect_real(r, "kinetic_energy.before", 1.0, 0);
    expect_real(r, "kinetic_energy.after", 1.0, 0);
    VEC2("point", 0.5, 0, 0); /* where the two surfaces touch */
    assert_int_equal(json_object_size(r), 7);
    json_decref(r);

    /* acceleration plays no part; the normal given overrides the centres. With no point
     * given, the point is the shapes' (the middle of the surface points on the centre line
     * (1, -5) / sqrt 26): p = ([0, 5] + 3 (1, -5) / sqrt 26 + [1, 0]) / 2, which is off a's
     * centre across the normal [1, 0] by ra.y = p.y - 5 = -(5 + 15 / sqrt 26) / 2: a non-
     * central contact, so a (a disk of radius 3, mass 1, I = 9/2) turns; b is a point and
     * never turns. un = -2, e = 1: K = 1 + 1 + ra.y^2 / (9/2), jn = 4 / K, va = 1 - jn,
     * vb = -1 + jn, wa = -(ra x J) / I = ra.y jn / I (clockwise: pushed back below its
     * centre). The same normal at a's centre line is the translational swap. */
    r = respond_ok("{\"a\": {\"radius\": 3, \"position\": [0, 5], \"velocity\": [1, 0],"
                   " \"acceleration\": [0, -9.81]},"
                   " \"b\": {\"shape\": {\"type\": \"sphere\", \"radius\": 0},"
                   " \"position\": [1, 0], \"velocity\": [-1, 0], \"acceleration\": [7, 7]},"
                   " \"normal\": [2, 0]}");
    double s26 = sqrt(26.0), ray = -(5 + 15 / s26) / 2, jn = 4 / (2 + ray * ray / 4.5);
    VEC2("point", (1 + 3 / s26) / 2, 5 + ray, 1e-15);
    VEC2("a.velocity", 1 - jn, 0, 1e-15);
    expect_real(r, "a.angular_velocity", ray * jn / 4.5, 1e-15);
    VEC2("b.velocity", -1 + jn, 0, 1e-15);
    expect_real(r, "b.angular_velocity", 0, 0);
    VEC2("normal", 1, 0, 0);
    expect_real(r, "kinetic_energy.after", 1.0, 1e-15);
    json_decref(r);
    r = respond_ok("{\"a\": {\"radius\": 3, \"position\": [0, 5], \"velocity\": [1, 0],"
                   " \"acceleration\": [0, -9.81]},"
                   " \"b\": {\"shape\": {\"type\": \"sphere\", \"radius\": 0},"
                   " \"position\": [1, 0], \"velocity\": [-1, 0], \"acceleration\": [7, 7]},"
                   " \"normal\": [2, 0], \"point\": [1, 5]}");
    VEC2("a.velocity", -1, 0, 0);
    VEC2("b.velocity", 1, 0, 0);
    expect_real(r, "a.angular_velocity", 0, 0);
    json_decref(r);
}

static void test_inelastic_and_unequal_masses(void **state) {
    (void)state;
    /* e = 0: common velocity 1 */
    json_t *r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [3, 0],"
                           " \"restitution\": 0},"
                           " \"b\": {\"radius\": 1, \"position\": [2, 0], \"velocity\": [-1, 0]}}");
    VEC2("a.velocity", 1, 0, 0);
    VEC2("b.velocity", 1, 0, 0);
    VEC2("impulse", 2, 0, 0);
    expect_real(r, "kinetic_energy.before", 5.0, 0);
    expect_real(r, "kinetic_energy.after", 1.0, 0);
    json_decref(r);
    /* masses 1 and 3, elastic: -2 and 2 */
    r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0, 0], \"velocity\": [4, 0, 0]},"
                   " \"b\": {\"radius\": 1, \"position\": [2, 0, 0], \"mass\": 3}}");
    VEC3("a.velocity", -2, 0, 0, 0);
    VEC3("b.velocity", 2, 0, 0, 0);
    VEC3("impulse", 6, 0, 0, 0);
    expect_real(r, "kinetic_energy.after", 8.0, 0);
    json_decref(r);
}

static void test_wall_default_normal(void **state) {
    (void)state;
    /* a (mass 2) rises into a static wall above it, wall restitution 0.5: the normal part
     * halves and flips, the tangential part stays; the wall's energy is not counted */
    json_t *r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [5, 0], \"velocity\": [2, 3],"
                           " \"mass\": 2},"
                           " \"b\": {\"radius\": 9, \"position\": [5, 10], \"static\": true,"
                           " \"mass\": 1000, \"restitution\": 0.5}}");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "resolved");
    VEC2("normal", 0, 1, 0);
    VEC2("a.velocity", 2, -1.5, 0);
    VEC2("b.velocity", 0, 0, 0);
    VEC2("impulse", 0, 9, 0);
    expect_real(r, "kinetic_energy.before", 13.0, 0);
    expect_real(r, "kinetic_energy.after", 6.25, 0);
    json_decref(r);
    /* the centre-to-centre normal (3, 4) / 5, a static a: b's velocity along it reflects */
    r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"static\": true},"
                   " \"b\": {\"radius\": 4, \"position\": [3, 4], \"velocity\": [-3, -4]}}");
    VEC2("normal", 0.6, 0.8, 0);
    VEC2("b.velocity", 3, 4, 1e-14);
    VEC2("a.velocity", 0, 0, 0);
    VEC2("impulse", 6, 8, 1e-14);
    json_decref(r);
    /* tangential 0 (a's) kills the slide along the static wall */
    r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [2, 3],"
                   " \"tangential\": 0},"
                   " \"b\": {\"radius\": 1, \"position\": [0, 2], \"static\": true}}");
    VEC2("a.velocity", 0, -3, 0);
    VEC2("impulse", 2, 6, 0);
    expect_real(r, "kinetic_energy.after", 4.5, 0);
    json_decref(r);
}

static void test_oblique_3d(void **state) {
    (void)state;
    /* n = (1, 2, 2) / 3, u = (-3, -3, 0), e = 1, k = 0.5 (a's tangential), equal masses.
     * b sits along n from a ([3, 6, 6] = 9 n), so the contact point (on the centre line) is
     * central for both and the translational rule holds; b at [9, 9, 9] would put the
     * line of the normal off both centres, and both balls would turn. */
    json_t *r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0, 0], \"tangential\": 0.5},"
                           " \"b\": {\"radius\": 1, \"position\": [3, 6, 6],"
                           " \"velocity\": [-3, -3, 0]}, \"normal\": [1, 2, 2]}");
    VEC3("normal", 1.0 / 3, 2.0 / 3, 2.0 / 3, 2e-16);
    VEC3("a.velocity", -1.5, -2.25, -1.5, 4e-15);
    VEC3("b.velocity", -1.5, -0.75, 1.5, 4e-15);
    VEC3("impulse", 1.5, 2.25, 1.5, 4e-15);
    expect_real(r, "kinetic_energy.before", 9.0, 0);
    expect_real(r, "kinetic_energy.after", 7.3125, 1e-14);
    json_decref(r);
}

static void test_rotation(void **state) {
    (void)state;
    /* a rod (length 2, mass 1: the uniform solid's inertia 1/3) struck at its end by a ball
     * falling at 1, e = 1: K = 1 + 1 + 1 / (1/3) = 5, jn = 2 / 5, w = -1 * jn / (1/3) */
    json_t *r =
        respond_ok("{\"a\": {\"shape\": {\"type\": \"segment\", \"a\": [-1, 0], \"b\": [1, 0]},"
                   " \"position\": [0, 0], \"angular_velocity\": 0},"
                   " \"b\": {\"radius\": 0.5, \"position\": [1, 0.5], \"velocity\": [0, -1]},"
                   " \"point\": [1, 0]}");
    VEC2("point", 1, 0, 0);
    VEC2("normal", 0, 1, 0);
    VEC2("a.velocity", 0, -0.4, 1e-15);
    expect_real(r, "a.angular_velocity", -1.2, 1e-15);
    VEC2("b.velocity", 0, -0.6, 1e-15);
    expect_real(r, "b.angular_velocity", 0, 0);
    VEC2("impulse", 0, 0.4, 1e-15);
    expect_real(r, "kinetic_energy.before", 0.5, 0);
    expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
    json_decref(r);
    /* a disk (radius 1, mass 2, inertia 1) sliding at (3, -2) onto a floor, e = k = 0: the
     * contact point stops, the disk rolls away at 2 with w = -2 */
    r = respond_ok(
        "{\"a\": {\"radius\": 1, \"position\": [0, 1], \"velocity\": [3, -2],"
        " \"mass\": 2, \"restitution\": 0, \"tangential\": 0, \"angular_velocity\": 0},"
        " \"b\": {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1], \"offset\": 0},"
        " \"position\": [0, 0], \"static\": true}, \"point\": [0, 0]}");
    VEC2("normal", 0, -1, 0);
    VEC2("a.velocity", 2, 0, 1e-15);
    expect_real(r, "a.angular_velocity", -2, 1e-15);
    expect_real(r, "kinetic_energy.before", 13, 0);
    expect_real(r, "kinetic_energy.after", 6, 1e-14);
    json_decref(r);
    /* 3D: a thin box turned a quarter about z (its long axis along y), its inertia given in
     * the body frame [0.02, 1.01, 1.01] (mass 3), struck at (0, 1, 0.1) along z: r x n =
     * (1, 0, 0) meets the world moment Ixx = 1.01; the default inertia of the box is the
     * same tensor, so leaving it out gives the same answer */
    for (int given = 0; given < 2; ++given) {
        char req[1024];
        snprintf(req, sizeof req,
                 "{\"a\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 0.1, 0.1]},"
                 " \"position\": [0, 0, 0], \"mass\": 3,"
                 " \"orientation\": [0.7071067811865476, 0, 0, 0.7071067811865476], %s},"
                 " \"b\": {\"radius\": 0.5, \"position\": [0, 1, 0.6], \"velocity\": [0, 0, -1]},"
                 " \"normal\": [0, 0, 1], \"point\": [0, 1, 0.1]}",
                 given ? "\"inertia\": [0.02, 1.01, 1.01]" : "\"angular_velocity\": [0, 0, 0]");
        r = respond_ok(req);
        double jn = 2.0 / (1.0 / 3.0 + 1.0 + 1.0 / 1.01);
        VEC3("impulse", 0, 0, jn, 1e-15);
        VEC3("a.velocity", 0, 0, -jn / 3.0, 1e-15);
        VEC3("a.angular_velocity", -jn / 1.01, 0, 0, 1e-14);
        VEC3("b.velocity", 0, 0, -1 + jn, 1e-15);
        VEC3("b.angular_velocity", 0, 0, 0, 0);
        expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
        json_decref(r);
    }
    /* no rotation named: the translational answer, angular velocities 0 */
    r = respond_ok("{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
                   " \"b\": {\"radius\": 0.5, \"position\": [1, 0], \"velocity\": [-1, 0],"
                   " \"mass\": 3}}");
    VEC2("a.velocity", -2, 0, 0);
    expect_real(r, "a.angular_velocity", 0, 0);
    json_decref(r);
}

/* The rod of test_rotation struck at its end, with no rotation named: the contact is off
 * the rod's centre, so it turns exactly as when angular_velocity 0 is named (K = 1 + 1 +
 * 1 / (1/3) = 5, jn = 2/5, w = -1.2); without `point` the contact point is the ball's touch
 * on the rod's end, [1, 0] (the rod's side is flat but the ball touches it at one point). */
static void test_off_centre_turns_unnamed(void **state) {
    (void)state;
    for (int given = 0; given < 2; ++given) {
        char req[512];
        snprintf(req, sizeof req,
                 "{\"a\": {\"shape\": {\"type\": \"segment\", \"a\": [-1, 0], \"b\": [1, 0]},"
                 " \"position\": [0, 0]},"
                 " \"b\": {\"radius\": 0.5, \"position\": [1, 0.5], \"velocity\": [0, -1]}%s}",
                 given ? ", \"point\": [1, 0]" : "");
        json_t *r = respond_ok(req);
        /* found from the shapes, the point carries the rounding of moving b out and back */
        VEC2("point", 1, 0, given ? 0 : 1e-16);
        VEC2("normal", 0, 1, 0);
        VEC2("a.velocity", 0, -0.4, 1e-15);
        expect_real(r, "a.angular_velocity", -1.2, 1e-15);
        VEC2("b.velocity", 0, -0.6, 1e-15);
        expect_real(r, "b.angular_velocity", 0, 0);
        VEC2("impulse", 0, 0.4, 1e-15);
        expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
        json_decref(r);
    }
}

/* Face contacts act at the centre of the touching region (manifold clipping). */
static void test_face_contact_point(void **state) {
    (void)state;
    /* a box (half extents [1, 1]) landing flat on a floor, sliding at 2, tangential 0.5: the
     * region is its bottom side x in [3, 5], the point [4, 0] right under its centre, so it
     * does not spin; the fall reflects and the slide halves (translation: k ut = 1) */
    json_t *r = respond_ok(
        "{\"a\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1]},"
        " \"position\": [4, 1], \"velocity\": [2, -1], \"tangential\": 0.5},"
        " \"b\": {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1], \"offset\": 0},"
        " \"position\": [0, 0], \"static\": true}}");
    VEC2("point", 4, 0, 0);
    VEC2("normal", 0, -1, 0);
    VEC2("a.velocity", 1, 1, 0);
    expect_real(r, "a.angular_velocity", 0, 0);
    json_decref(r);
    /* two boxes (half extents [1, 1], mass 1, I = (4 + 4) / 12 = 2/3) face to face, b
     * at [2, 0.5]: the sides x = 1 share y in [-0.5, 1], point [1, 0.25], normal [1, 0].
     * a moves at 1 into b, e = 1: ra = [1, 0.25], rb = [-1, -0.25], (r x n)^2 = 1/16 each,
     * K = 1 + 1 + 2 (1/16) / (2/3) = 35/16, jn = 2 / K = 32/35; a keeps 1 - 32/35 = 3/35, b
     * gets 32/35; wa = -(3/2) (ra x J) = -(3/2)(-0.25 * 32/35) = 12/35 and wb = (3/2)(rb x
     * J) = 12/35; energy 0.5 (9 + 1024) / 1225 + 2 (1/2)(2/3)(144/1225) = 0.5 */
    r = respond_ok("{\"a\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1]},"
                   " \"position\": [0, 0], \"velocity\": [1, 0]},"
                   " \"b\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1]},"
                   " \"position\": [2, 0.5]}}");
    VEC2("point", 1, 0.25, 0);
    VEC2("normal", 1, 0, 0);
    VEC2("impulse", 32.0 / 35, 0, 1e-15);
    VEC2("a.velocity", 3.0 / 35, 0, 1e-15);
    VEC2("b.velocity", 32.0 / 35, 0, 1e-15);
    expect_real(r, "a.angular_velocity", 12.0 / 35, 1e-15);
    expect_real(r, "b.angular_velocity", 12.0 / 35, 1e-15);
    expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
    json_decref(r);
    /* a capsule (axis [-1, 0]..[2, 0], radius 0.5, inertia 1 given) lying on a floor: its
     * axis is flat, the region x in [-1, 2], point [0.5, 0], off its centre by 0.5 across the
     * normal [0, -1]. Falling at 1, e = 1: K = 1 + 0.5^2 / 1 = 1.25, jn = 1.6, v = -1 + 1.6,
     * w = -(ra x Jb) = -(0.5 * -1.6) = 0.8 with ra = [0.5, -0.5], Jb = [0, -1.6] */
    r = respond_ok("{\"a\": {\"shape\": {\"type\": \"capsule\", \"a\": [-1, 0], \"b\": [2, 0],"
                   " \"radius\": 0.5}, \"position\": [0, 0.5], \"velocity\": [0, -1],"
                   " \"inertia\": 1},"
                   " \"b\": {\"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1],"
                   " \"offset\": 0}, \"position\": [0, 0], \"static\": true}}");
    VEC2("point", 0.5, 0, 0);
    VEC2("a.velocity", 0, 0.6, 1e-15);
    expect_real(r, "a.angular_velocity", 0.8, 1e-15);
    expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
    json_decref(r);
    /* 3D: a cube b (half 1, mass 1, I = 2/3 on every axis) turned 45 degrees about z rests
     * with its bottom face (a diamond about (1, 1) with corners sqrt 2 away) on the top face
     * of a static cube at the origin: the clipped region is the triangle (1, 1), (1 - sqrt 2,
     * 1), (1, 1 - sqrt 2), whose area centroid (1 - sqrt2/3, 1 - sqrt2/3, 1) is the point (the
     * mean of its clipped corners would not be, when a corner repeats). b falls at 1, e = 1:
     * rb = (-sqrt2/3, -sqrt2/3, -1), |rb x z|^2 = 4/9, K = 1 + (4/9)(3/2) = 5/3, jn = 6/5,
     * vb = 1/5 up, wb = (3/2)(6/5)(rb.y, -rb.x, 0) = (-3 sqrt2/5, 3 sqrt2/5, 0) */
    r = respond_ok("{\"a\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1, 1]},"
                   " \"position\": [0, 0, 0], \"static\": true},"
                   " \"b\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1, 1]},"
                   " \"position\": [1, 1, 2], \"velocity\": [0, 0, -1],"
                   " \"orientation\": [0.92387953251128674, 0, 0, 0.38268343236508978]}}");
    double s2 = sqrt(2.0);
    VEC3("point", 1 - s2 / 3, 1 - s2 / 3, 1, 1e-15);
    VEC3("normal", 0, 0, 1, 0);
    VEC3("impulse", 0, 0, 1.2, 1e-15);
    VEC3("b.velocity", 0, 0, 0.2, 1e-15);
    VEC3("b.angular_velocity", -3 * s2 / 5, 3 * s2 / 5, 0, 1e-15);
    expect_real(r, "kinetic_energy.after", 0.5, 1e-15);
    json_decref(r);
}

static void test_unchanged(void **state) {
    (void)state;
    /* separating along the default normal */
    json_t *r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [-1, 2]},"
                           " \"b\": {\"radius\": 1, \"position\": [2, 0], \"velocity\": [1, 0.5],"
                           " \"mass\": 2}}");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "separating");
    VEC2("a.velocity", -1, 2, 0);
    VEC2("b.velocity", 1, 0.5, 0);
    VEC2("impulse", 0, 0, 0);
    expect_real(r, "kinetic_energy.before", 3.75, 0);
    expect_real(r, "kinetic_energy.after", 3.75, 0);
    json_decref(r);
    /* two static bodies closing on each other: nothing can change, no energy counted */
    r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [1, 0],"
                   " \"static\": true},"
                   " \"b\": {\"radius\": 1, \"position\": [2, 0], \"velocity\": [-1, 0],"
                   " \"static\": true}}");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "static");
    VEC2("a.velocity", 1, 0, 0);
    VEC2("b.velocity", -1, 0, 0);
    VEC2("impulse", 0, 0, 0);
    VEC2("normal", 1, 0, 0);
    expect_real(r, "kinetic_energy.before", 0, 0);
    expect_real(r, "kinetic_energy.after", 0, 0);
    json_decref(r);
    /* coincident centres are fine when the normal is given */
    r = respond_ok("{\"a\": {\"radius\": 1, \"position\": [1, 1], \"velocity\": [1, 0]},"
                   " \"b\": {\"radius\": 1, \"position\": [1, 1]}, \"normal\": [1, 0]}");
    VEC2("a.velocity", 0, 0, 0);
    VEC2("b.velocity", 1, 0, 0);
    json_decref(r);
}

static void test_in_batch(void **state) {
    (void)state;
    char body[1024];
    snprintf(body, sizeof body,
             "{\"requests\": [{\"op\": \"respond\", \"body\": %s},"
             " {\"op\": \"respond\", \"body\": {\"a\": {\"radius\": 1, \"position\": [0, 0]},"
             " \"b\": {\"radius\": 1, \"position\": [0, 0]}}}]}",
             HEAD_ON);
    long status;
    json_t *r = post_text("/v1/batch", "application/json", body, &status, NULL, 0);
    assert_int_equal(status, 200);
    json_t *direct = respond_ok(HEAD_ON);
    assert_int_equal(json_integer_value(member(r, "results.0.status")), 200);
    assert_true(json_equal(member(r, "results.0.body"), direct));
    assert_int_equal(json_integer_value(member(r, "results.1.status")), 422);
    assert_string_equal(json_string_value(member(r, "results.1.body.pointer")), "/normal");
    json_decref(direct);
    json_decref(r);
}

/* ---- errors ---------------------------------------------------------------------------- */

#define A2 "\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [1, 0]}"
#define B2 "\"b\": {\"radius\": 1, \"position\": [3, 0]}"

static void expect_problem(const char *json, long want_status, const char *want_type,
                           const char *want_pointer, const char *want_detail) {
    imp_test_expect_problem(&daemon_, "/v1/respond", json, want_status, want_type, want_pointer,
                            want_detail);
}

static void test_errors_400(void **state) {
    (void)state;
    expect_problem("{}", 400, "missing-field", "/a", "a is required");
    expect_problem("{" A2 "}", 400, "missing-field", "/b", "b is required");
    expect_problem("{" B2 "}", 400, "missing-field", "/a", NULL);
    expect_problem("{\"a\": 3, " B2 "}", 400, "wrong-type", "/a", NULL);
    expect_problem("[1, 2]", 400, "wrong-type", "", NULL);
    expect_problem("{\"a\": {\"radius\": 1}, " B2 "}", 400, "missing-field", "/a/position", NULL);
    expect_problem("{\"a\": {\"position\": [0, 0]}, " B2 "}", 400, "missing-field", "/a/shape",
                   NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": \"up\"}", 400, "wrong-type", "/normal", NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": [1]}", 400, "wrong-type", "/normal", NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": [1, \"x\"]}", 400, "wrong-type", "/normal/1",
                   NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": null}", 400, "wrong-type", "/normal", NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": [1, 0, 0]}", 400, "mixed-dimensions", "/normal",
                   NULL);
    expect_problem("{" A2 ", \"b\": {\"radius\": 1, \"position\": [3, 0, 0]}}", 400,
                   "mixed-dimensions", "/b/position", NULL);
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [1, 0, 0]}, " B2
                   "}",
                   400, "mixed-dimensions", "/a/velocity", NULL);
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"static\": 1}, " B2 "}", 400,
                   "wrong-type", "/a/static", NULL);
    expect_problem("{" A2 ", \"b\": {\"radius\": 1, \"position\": [3, 0], \"mass\": \"9\"}}", 400,
                   "wrong-type", "/b/mass", NULL);
    expect_problem("{" A2 ", " B2 ",}", 400, "malformed-json", NULL, NULL);
}

static void test_errors_422(void **state) {
    (void)state;
    expect_problem("{" A2 ", " B2 ", \"normal\": [0, 0]}", 422, "invalid-geometry", "/normal",
                   "zero-length");
    expect_problem("{" A2 ", " B2 ", \"normal\": [-0.0, 0]}", 422, "invalid-geometry", "/normal",
                   "zero-length");
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [2, 7], \"velocity\": [1, 0]},"
                   " \"b\": {\"radius\": 1, \"position\": [2, 7]}}",
                   422, "invalid-geometry", "/normal", "normal is required when the centres");
    /* even when nothing could move: the request has no normal to report */
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0, 1], \"static\": true},"
                   " \"b\": {\"radius\": 1, \"position\": [0, 0, 1], \"static\": true}}",
                   422, "invalid-geometry", "/normal", "coincide");
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"mass\": -1}, " B2 "}", 422,
                   "invalid-field", "/a/mass", "> 0");
    expect_problem("{" A2 ", \"b\": {\"radius\": 1, \"position\": [3, 0], \"mass\": 0}}", 422,
                   "invalid-field", "/b/mass", NULL);
    expect_problem("{\"a\": {\"radius\": -1, \"position\": [0, 0]}, " B2 "}", 422, "invalid-field",
                   "/a/radius", NULL);
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"restitution\": 1.5}, " B2 "}",
                   422, "invalid-field", "/a/restitution", "[0, 1]");
    expect_problem("{" A2 ", \"b\": {\"radius\": 1, \"position\": [3, 0], \"tangential\": -0.1}}",
                   422, "invalid-field", "/b/tangential", NULL);
    expect_problem("{\"a\": {\"radius\": 1, \"position\": [0, 0], \"velocity\": [1e61, 0]}, " B2
                   "}",
                   422, "invalid-field", "/a/velocity/0", NULL);
    expect_problem("{" A2 ", " B2 ", \"normal\": [1e300, 0]}", 422, "invalid-field", "/normal/0",
                   NULL);
}

static void test_http_errors(void **state) {
    (void)state;
    char url[160];
    snprintf(url, sizeof url, "%s/v1/respond", daemon_.url);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &r), 0);
    assert_int_equal(r.status, 405);
    assert_non_null(strstr(r.allow, "POST"));
    assert_string_equal(r.content_type, "application/problem+json");
    imp_http_result_free(&r);
    assert_int_equal(imp_http(NULL, "POST", url, "text/plain", HEAD_ON, sizeof HEAD_ON - 1, &r), 0);
    assert_int_equal(r.status, 415);
    assert_string_equal(r.content_type, "application/problem+json");
    imp_http_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_on_swap),
        cmocka_unit_test(test_inelastic_and_unequal_masses),
        cmocka_unit_test(test_wall_default_normal),
        cmocka_unit_test(test_oblique_3d),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_off_centre_turns_unnamed),
        cmocka_unit_test(test_face_contact_point),
        cmocka_unit_test(test_unchanged),
        cmocka_unit_test(test_in_batch),
        cmocka_unit_test(test_errors_400),
        cmocka_unit_test(test_errors_422),
        cmocka_unit_test(test_http_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
