/*
 * test_contact_region.c - the centre of the region where two placed shapes
 * touch (core/contact_region.h), by pair type, with exact expected points.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "core/contact_region.h"

#define V(x, y, z) imp_v3((x), (y), (z))

static imp_shape box(double hx, double hy, double hz, imp_quat q) {
    imp_shape s = {0};
    s.type = IMP_SHAPE_BOX;
    s.half = V(hx, hy, hz);
    s.rot = q;
    return s;
}

static imp_shape capsule(imp_vec3 a, imp_vec3 b, double r) {
    imp_shape s = {0};
    s.type = r > 0 ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT;
    s.a = a;
    s.b = b;
    s.radius = r;
    return s;
}

static imp_shape floor_z(double offset) {
    imp_shape s = {0};
    s.type = IMP_SHAPE_HALFSPACE;
    s.normal = V(0, 0, 1);
    s.offset = offset;
    return s;
}

static const imp_quat ID = {1, 0, 0, 0};

static void expect_found(imp_region_status st, imp_vec3 got, imp_vec3 want, double tol) {
    assert_int_equal(st, IMP_REGION_FOUND);
    if (!(fabs(got.x - want.x) <= tol && fabs(got.y - want.y) <= tol &&
          fabs(got.z - want.z) <= tol))
        fail_msg("centre (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g) +- %g", got.x, got.y,
                 got.z, want.x, want.y, want.z, tol);
}

/* 3D: a capsule's axis along a box's top face, a rod on a rod, rods crossing */
static void test_axes_on_faces_3d(void **st) {
    (void)st;
    imp_vec3 c;
    /* the cube top z = 0, x, y in [-1, 1]; the capsule's axis x in [-1, 2] at y = 0, its
     * bottom at 0.5 - 0.5 = 0: the axis clipped to x in [-1, 1], centre (0, 0, 0) */
    imp_shape b = box(1, 1, 1, ID), cap = capsule(V(-1, 0, 0), V(2, 0, 0), 0.5);
    imp_region_status s =
        imp_contact_region(&b, V(0, 0, -1), &cap, V(0, 0, 0.5), 3, V(0, 0, 1), &c);
    expect_found(s, c, V(0, 0, 0), 0);
    /* a rod x in [-1, 1] under a capsule's axis x in [0, 3] (radius 1, at height 1): they
     * share x in [0, 1], centre (0.5, 0, 0), the capsule's bottom at height 0 */
    imp_shape rod = capsule(V(-1, 0, 0), V(1, 0, 0), 0), cap2 = capsule(V(0, 0, 0), V(3, 0, 0), 1);
    s = imp_contact_region(&rod, V(0, 0, 0), &cap2, V(0, 0, 1), 3, V(0, 0, 1), &c);
    expect_found(s, c, V(0.5, 0, 0), 0);
    /* the same capsule turned along y: the axes cross at a point, no region */
    imp_shape cross = capsule(V(0, -1, 0), V(0, 1, 0), 1);
    s = imp_contact_region(&rod, V(0, 0, 0), &cross, V(0, 0, 1), 3, V(0, 0, 1), &c);
    assert_int_equal(s, IMP_REGION_POINT);
    /* a ball on the cube: a vertex, no region */
    imp_shape ball = {0};
    ball.type = IMP_SHAPE_SPHERE;
    ball.radius = 1;
    s = imp_contact_region(&b, V(0, 0, -1), &ball, V(0.5, 0, 1), 3, V(0, 0, 1), &c);
    assert_int_equal(s, IMP_REGION_POINT);
}

/* 3D faces: a cube turned 45 degrees about z on a cube, centred (a regular octagon about
 * the axis: centroid (0, 0)) and a cube tilted 1e-3 about x on a floor (one edge down: its
 * two lowest corners make a segment, centre under the middle of that edge) */
static void test_faces_3d(void **st) {
    (void)st;
    imp_vec3 c;
    double h = 0.39269908169872414; /* pi / 8 */
    imp_quat q45 = {cos(h), 0, 0, sin(h)};
    imp_shape a = box(1, 1, 1, ID), b = box(1, 1, 1, q45);
    imp_region_status s = imp_contact_region(&a, V(0, 0, 0), &b, V(0, 0, 2), 3, V(0, 0, 1), &c);
    expect_found(s, c, V(0, 0, 1), 1e-15);
    /* tilted about x by 1e-3: the bottom edge y = -cos(t) + ... is lowest; the feature is
     * the two corners (+-1, y0, z0), whose middle is (0, y0, z0) with y0 = -cos t + sin t,
     * z0 = -sin t - cos t (corner (x, -1, -1) turned by t about x) */
    double t = 1e-3;
    imp_quat qt = {cos(t / 2), sin(t / 2), 0, 0};
    imp_shape tilted = box(1, 1, 1, qt), fl = floor_z(0);
    double y0 = -cos(t) + sin(t), z0 = -sin(t) - cos(t);
    s = imp_contact_region(&tilted, V(0, 0, -z0), &fl, V(0, 0, 0), 3, V(0, 0, -1), &c);
    expect_found(s, c, V(0, y0, 0), 1e-15);
}

/* 2D: a polygon's side on a floor, and a floor whose normal is not the contact normal */
static void test_sides_2d(void **st) {
    (void)st;
    imp_vec3 c, verts[4] = {V(0, 0, 0), V(3, 0, 0), V(3, 1, 0), V(1, 2, 0)};
    imp_shape poly = {0};
    poly.type = IMP_SHAPE_POLYGON;
    poly.verts = verts;
    poly.n_verts = 4;
    imp_shape fl = {0};
    fl.type = IMP_SHAPE_HALFSPACE;
    fl.normal = V(0, 1, 0);
    fl.offset = 0.25;
    /* its bottom side x in [0.5, 3.5] at y 0.25, on the floor y = 0.25: centre (2, 0.25) */
    imp_region_status s =
        imp_contact_region(&poly, V(0.5, 0.25, 0), &fl, V(0, 0, 0), 2, V(0, -1, 0), &c);
    expect_found(s, c, V(2, 0.25, 0), 0);
    /* a normal not the floor's: no region (the caller's closest points stand) */
    s = imp_contact_region(&poly, V(0.5, 0.25, 0), &fl, V(0, 0, 0), 2, V(0.6, -0.8, 0), &c);
    assert_int_equal(s, IMP_REGION_POINT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axes_on_faces_3d),
        cmocka_unit_test(test_faces_3d),
        cmocka_unit_test(test_sides_2d),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
