/*
 * test_move_check.c - the client-move checker (core/move_check.c): named moves with
 * exact answers, the edge rules, and a property test over random 2D scenes.
 *
 * DESIGN
 * Known answers: contact times and points are those of the exact pairwise
 * solvers (to a few ulps); corrected positions are the contact backed off
 * by the documented skin (IMP_MOVE_SKIN_REL of the move's scale) along
 * the path, so they are checked against that formula.
 * The property test does not trust the solver it checks: it samples the
 * straight path and every leg of the corrected path densely and measures
 * overlap with imp_overlap (SAT and closest features, a different method
 * from the swept time of impact), with obstacles placed by their own
 * parabolas. Scenes start clear: the mover at its start position is not
 * touched by any obstacle during the window (so "blocked: stay at the
 * start" is safe), which is what a game server sees from an honest
 * previous step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "core/move_check.h"
#include "core/overlap.h"
#include "core/toi_rotating.h"
#include "core/toi_shapes.h"
#include "tests/rng.h"

#define V(x, y, z) imp_v3((x), (y), (z))
#define PI 3.14159265358979323846

static imp_shape sphere(double r) {
    imp_shape s = {.type = IMP_SHAPE_SPHERE, .radius = r, .rot = {1, 0, 0, 0}};
    return s;
}
static imp_shape box2(double hx, double hy, double angle) {
    imp_shape s = {.type = IMP_SHAPE_BOX, .half = V(hx, hy, 0), .rot = imp_quat_from_angle(angle)};
    return s;
}
static imp_shape segment(imp_vec3 a, imp_vec3 b) {
    imp_shape s = {.type = IMP_SHAPE_SEGMENT, .a = a, .b = b, .rot = {1, 0, 0, 0}};
    return s;
}
static imp_shape capsule(imp_vec3 a, imp_vec3 b, double r) {
    imp_shape s = {.type = IMP_SHAPE_CAPSULE, .a = a, .b = b, .radius = r, .rot = {1, 0, 0, 0}};
    return s;
}
static imp_shape halfspace(imp_vec3 n, double offset) {
    imp_shape s = {.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset, .rot = {1, 0, 0, 0}};
    return s;
}
static imp_move_obstacle still(const imp_shape *s, imp_vec3 p) {
    imp_move_obstacle o = {s, {p, V(0, 0, 0), V(0, 0, 0)}, NULL, V(0, 0, 0)};
    return o;
}

static imp_move_result run(const imp_shape *mover, imp_vec3 from, imp_vec3 to, double dt,
                           const imp_move_obstacle *obs, size_t n, int dim, double max_speed,
                           int iterations) {
    imp_move_input in = {mover,     from,       to,   dt,   obs,  n,         dim,
                         max_speed, iterations, NULL, NULL, NULL, V(0, 0, 0)};
    imp_move_result r = imp_move_check(&in);
    assert_int_equal(r.state, IMP_MOVE_OK);
    return r;
}

static void near(double got, double want, double tol, const char *what) {
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.17g, want %.17g (+- %g)", what, got, want, tol);
}

#define assert_vec_near(got, ex, ey, ez, tol)                                                      \
    do {                                                                                           \
        imp_vec3 g_ = (got);                                                                       \
        if (!(fabs(g_.x - (ex)) <= (tol) && fabs(g_.y - (ey)) <= (tol) &&                          \
              fabs(g_.z - (ez)) <= (tol)))                                                         \
            fail_msg("%s = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g) +- %g", #got, g_.x,   \
                     g_.y, g_.z, (double)(ex), (double)(ey), (double)(ez), (double)(tol));         \
    } while (0)

#define assert_vec_eq(got, ex, ey, ez) assert_vec_near(got, ex, ey, ez, 0.0)

/* ---- known answers ------------------------------------------------------------------------- */

/* A circle (sphere in 3D) of radius 0.05 fired at 100 units/s through a wall at x = 5. */
static void check_bullet_dim(const imp_shape *wall, double face_x, int dim) {
    imp_shape bullet = sphere(0.05);
    imp_move_obstacle w = still(wall, V(5, 0, 0));
    imp_move_result r = run(&bullet, V(0, 0, 0), V(10, 0, 0), 0.1, &w, 1, dim, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 1);
    const imp_move_violation *v = &r.violations[0];
    assert_int_equal(v->kind, IMP_MOVE_TUNNELING);
    assert_int_equal(v->obstacle, 0);
    /* in 3D the face comes from the hull of the Minkowski difference: a few ulps more,
     * which the speed of 100 carries into the positions */
    const double tt = dim == 2 ? 1e-17 : 1e-15, pt = dim == 2 ? 1e-15 : 1e-13;
    near(v->time, (face_x - 0.05) / 100.0, tt, "contact time");
    assert_vec_near(v->point, face_x, 0, 0, pt);
    assert_vec_eq(v->normal, 1, 0, 0);
    /* stopped at the wall, backed off by the skin (scale 10), head-on: no slide */
    double skin = IMP_MOVE_SKIN_REL * 10.0;
    assert_vec_near(r.position, face_x - 0.05 - skin, 0, 0, fmax(pt, 1e-14));
    assert_true(r.position.x < face_x - 0.05);
    assert_vec_eq(r.velocity, 0, 0, 0);
    assert_int_equal(r.iterations, 1);
    assert_false(r.blocked);
    imp_move_result_free(&r);
}

static void check_bullet(const imp_shape *wall, double face_x) {
    check_bullet_dim(wall, face_x, 2);
}

static void test_bullet_through_thin_segment_wall(void **state) {
    (void)state;
    imp_shape wall = segment(V(0, -1, 0), V(0, 1, 0));
    check_bullet(&wall, 5.0);
}

static void test_bullet_through_thin_box_wall(void **state) {
    (void)state;
    imp_shape wall = box2(0.01, 1, 0);
    check_bullet(&wall, 4.99);
}

/* 3D: a thin slab, the same slab turned about its normal (an oriented box), a
 * thin polyhedron and a capsule standing in the way */
static void test_bullet_through_thin_3d_walls(void **state) {
    (void)state;
    imp_shape slab = {.type = IMP_SHAPE_BOX, .half = V(0.01, 1, 1), .rot = {1, 0, 0, 0}};
    check_bullet_dim(&slab, 4.99, 3);
    slab.rot = (imp_quat){cos(0.35), sin(0.35), 0, 0};
    check_bullet_dim(&slab, 4.99, 3);
    imp_vec3 pts[6] = {V(-0.01, -1, -1), V(-0.01, 1, -1), V(-0.01, 0, 1),
                       V(0.01, -1, -1),  V(0.01, 1, -1),  V(0.01, 0, 1)};
    imp_shape prism = {.type = IMP_SHAPE_POLYHEDRON, .verts = pts, .n_verts = 6};
    check_bullet_dim(&prism, 4.99, 3);
    imp_shape post = capsule(V(0, 0, -1), V(0, 0, 1), 0.01);
    check_bullet_dim(&post, 4.99, 3);
}

/* 3D collide-and-slide along a box wall: a ball pushed diagonally into the face
 * x = 2 of a big box slides along it in y and z. */
static void test_slide_along_3d_box(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5),
              wall = {.type = IMP_SHAPE_BOX, .half = V(1, 10, 10), .rot = {1, 0, 0, 0}};
    imp_move_obstacle w = still(&wall, V(3, 0, 0)); /* face at x = 2 */
    imp_move_result r = run(&ball, V(0, 0, 0), V(3, 2, 1), 1.0, &w, 1, 3, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    near(r.violations[0].time, 0.5, 1e-15, "face contact");
    assert_vec_near(r.violations[0].point, 2, 1, 0.5, 1e-15);
    assert_vec_eq(r.violations[0].normal, 1, 0, 0);
    /* slid: backed off the face along the path by the skin (scale |to - from|), then the
     * rest of the move without its normal part */
    double s14 = sqrt(14.0), skin = IMP_MOVE_SKIN_REL * s14;
    assert_vec_near(r.position, 1.5 - skin * 3 / s14, 2 - skin * 2 / s14, 1 - skin / s14, 1e-14);
    assert_true(r.position.x < 1.5);
    assert_vec_near(r.velocity, 0, 2, 1, 1e-15);
    assert_int_equal(r.iterations, 1);
    assert_false(r.blocked);
    imp_move_result_free(&r);
}

static void test_max_iterations_zero_stays_at_start(void **state) {
    (void)state;
    imp_shape bullet = sphere(0.05), wall = segment(V(0, -1, 0), V(0, 1, 0));
    imp_move_obstacle w = still(&wall, V(5, 0, 0));
    imp_move_result r = run(&bullet, V(0, 0, 0), V(10, 0, 0), 0.1, &w, 1, 2, INFINITY, 0);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 1);
    assert_true(r.blocked);
    assert_int_equal(r.iterations, 0);
    assert_vec_eq(r.position, 0, 0, 0);
    assert_vec_eq(r.velocity, 0, 0, 0);
    imp_move_result_free(&r);
    /* a clear move is still granted with no iterations */
    r = run(&bullet, V(0, 0, 0), V(4, 0.5, 0), 0.1, &w, 1, 2, INFINITY, 0);
    assert_true(r.valid);
    assert_vec_eq(r.position, 4, 0.5, 0);
    assert_vec_eq(r.velocity, 40, 5, 0);
    imp_move_result_free(&r);
}

/* A circle of radius 0.5 at the origin heading for (3, 2) in a
 * corner of walls x = 2 and y = 2: hits x = 2 at t = 0.5, slides up, hits
 * y = 2 at t = 0.75 and stops in the corner. */
static void test_corner_slides_then_stops(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), right = segment(V(0, -5, 0), V(0, 5, 0)),
              top = segment(V(-5, 0, 0), V(5, 0, 0));
    imp_move_obstacle w[2] = {still(&right, V(2, 0, 0)), still(&top, V(0, 2, 0))};
    imp_move_result r = run(&ball, V(0, 0, 0), V(3, 2, 0), 1.0, w, 2, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 3);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    assert_int_equal(r.violations[0].obstacle, 0);
    near(r.violations[0].time, 0.5, 1e-15, "first wall");
    assert_vec_near(r.violations[0].point, 2, 1, 0, 1e-15);
    assert_int_equal(r.violations[1].kind, IMP_MOVE_TUNNELING);
    assert_int_equal(r.violations[1].obstacle, 1);
    near(r.violations[1].time, 0.75, 1e-15, "second wall on the straight path");
    assert_int_equal(r.violations[2].kind, IMP_MOVE_PENETRATION);
    assert_int_equal(r.violations[2].obstacle, 1);
    near(r.violations[2].depth, 0.5, 1e-15, "to sits on the top wall");

    double s13 = sqrt(13.0), skin = IMP_MOVE_SKIN_REL * s13; /* scale |to - from| */
    assert_vec_near(r.position, 1.5 - skin * 3 / s13, 1.5 - skin, 0, 1e-14);
    assert_true(r.position.x < 1.5 && r.position.y < 1.5);
    assert_vec_eq(r.velocity, 0, 0, 0);
    assert_int_equal(r.iterations, 2);
    assert_int_equal(r.n_legs, 3);
    near(r.legs[1].t0, 0.5, 1e-15, "slide starts");
    assert_vec_near(r.legs[1].v, 0, 2, 0, 1e-15);
    near(r.legs[2].t0, 0.75, 1e-9, "stop");
    imp_move_result_free(&r);
}

/* A wedge narrower than 90 degrees: sliding along one wall runs into the
 * other, so the body stops at the first contact instead of zig-zagging until
 * the iterations run out (the crease rule). */
static void test_acute_wedge_stops_in_crease(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), upper = segment(V(5, 0, 0), V(-5, 4, 0)),
              lower = segment(V(5, 0, 0), V(-5, -4, 0));
    imp_move_obstacle w[2] = {still(&upper, V(0, 0, 0)), still(&lower, V(0, 0, 0))};
    imp_move_result r = run(&ball, V(0, 0, 0), V(10, 0, 0), 1.0, w, 2, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_false(r.blocked);
    assert_int_equal(r.iterations, 1);
    assert_vec_eq(r.velocity, 0, 0, 0);
    /* centre 0.5 from both walls: x = 5 - 0.5 / sin(atan(0.4)) */
    double xc = 5.0 - 0.5 * sqrt(116.0) / 4.0;
    assert_vec_near(r.position, xc - IMP_MOVE_SKIN_REL * 10.0, 0, 0, 1e-12);
    imp_move_result_free(&r);
}

/* Touching a floor and moving parallel to it: valid, `to` bit for bit. */
static void test_grazing_along_wall_is_valid(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), seg = segment(V(-5, 0, 0), V(5, 0, 0)), slab = box2(5, 0.5, 0),
              floor = halfspace(V(0, 1, 0), 0);
    imp_shape square = box2(0.5, 0.5, 0);
    imp_move_obstacle w[3] = {still(&seg, V(0, 0, 0)), still(&slab, V(0, -0.5, 0)),
                              still(&floor, V(0, 0, 0))};
    const imp_shape *movers[2] = {&ball, &square};
    for (int k = 0; k < 2; ++k) {
        imp_move_result r = run(movers[k], V(0, 0.5, 0), V(3, 0.5, 0), 0.5, w, 3, 2, INFINITY, 5);
        assert_true(r.valid);
        assert_int_equal(r.n_violations, 0);
        assert_vec_eq(r.position, 3, 0.5, 0);
        assert_vec_eq(r.velocity, 6, 0, 0);
        imp_move_result_free(&r);
    }
}

/* Resting on a floor: moving away is valid; moving into it is tunnelling at
 * t = 0 and the correction slides along the floor. */
static void test_start_in_contact(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), seg = segment(V(-5, 0, 0), V(5, 0, 0));
    imp_move_obstacle w = still(&seg, V(0, 0, 0));
    imp_move_result r = run(&ball, V(0, 0.5, 0), V(1, 2, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_true(r.valid);
    assert_vec_eq(r.position, 1, 2, 0);
    imp_move_result_free(&r);

    r = run(&ball, V(0, 0.5, 0), V(1, 0.3, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 2);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    assert_true(r.violations[0].time == 0.0);
    assert_vec_near(r.violations[0].normal, 0, -1, 0, 1e-15);
    assert_int_equal(r.violations[1].kind, IMP_MOVE_PENETRATION);
    near(r.violations[1].depth, 0.2, 1e-15, "depth at to");
    assert_vec_near(r.position, 1, 0.5, 0, 1e-15);
    assert_vec_near(r.velocity, 1, 0, 0, 1e-15);
    assert_int_equal(r.iterations, 1);
    imp_move_result_free(&r);
}

/* Starting inside (by 0.1) and moving out is let go; pushing deeper is
 * tunnelling at t = 0 with the starting depth. */
static void test_start_overlapping(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), slab = box2(5, 0.5, 0);
    imp_move_obstacle w = still(&slab, V(0, -0.5, 0));
    imp_move_result r = run(&ball, V(0, 0.4, 0), V(0.5, 2, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_true(r.valid);
    assert_vec_eq(r.position, 0.5, 2, 0);
    imp_move_result_free(&r);

    r = run(&ball, V(0, 0.4, 0), V(1, 0.3, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    assert_true(r.violations[0].time == 0.0);
    assert_true(r.violations[0].has_depth);
    near(r.violations[0].depth, 0.1, 1e-15, "starting depth");
    imp_move_result_free(&r);
}

/* A door (box 0.2 x 1) sliding down across a corridor at 4 units/s: clear
 * of the path at t = 0 (y in [1.5, 2.5]) and at t = dt (y in [-2.5, -1.5]),
 * but the ball (radius 0.5, 4 units/s along x) meets its face x = 2.9 at
 * t = 0.6, when the door spans y in [-0.9, 0.1]. */
static void test_moving_door_is_caught(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), door = box2(0.1, 0.5, 0);
    imp_move_obstacle w = {&door, {V(3, 2, 0), V(0, -4, 0), V(0, 0, 0)}, NULL, V(0, 0, 0)};
    imp_move_result r = run(&ball, V(0, 0, 0), V(4, 0, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 1);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    near(r.violations[0].time, 0.6, 1e-15, "door contact");
    assert_vec_near(r.violations[0].point, 2.9, 0, 0, 1e-15);
    assert_vec_eq(r.violations[0].normal, 1, 0, 0);
    /* head-on: stops at the door; the door then slides past along its face */
    assert_vec_near(r.position, 2.4 - IMP_MOVE_SKIN_REL * 4.0, 0, 0, 1e-14);
    assert_vec_eq(r.velocity, 0, 0, 0);
    assert_false(r.blocked);
    imp_move_result_free(&r);

    /* the same door checked only at t = 0 and t = dt would have let it pass */
    imp_vec3 end = imp_path_at(w.m.p, w.m.v, w.m.a, 1.0);
    assert_int_equal(imp_overlap(&ball, V(4, 0, 0), &door, end, 2).state, IMP_OVERLAP_APART);
}

/* 3D: a unit sphere dropping onto the floor y = 0 while moving along x:
 * touches at t = 1 at (2, 0, 0) and slides for the second that is left. */
static void test_halfspace_floor_3d(void **state) {
    (void)state;
    imp_shape ball = sphere(1), floor = halfspace(V(0, 1, 0), 0);
    imp_move_obstacle w = still(&floor, V(0, 0, 0));
    imp_move_result r = run(&ball, V(0, 5, 0), V(4, -3, 0), 2.0, &w, 1, 3, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 2);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    near(r.violations[0].time, 1.0, 1e-15, "floor contact");
    assert_vec_near(r.violations[0].point, 2, 0, 0, 1e-15);
    assert_vec_near(r.violations[0].normal, 0, -1, 0, 1e-15);
    assert_int_equal(r.violations[1].kind, IMP_MOVE_PENETRATION);
    near(r.violations[1].depth, 4.0, 1e-15, "depth at to");
    near(r.violations[1].time, 2.0, 0, "penetration at dt");
    double skin = IMP_MOVE_SKIN_REL * sqrt(80.0), s5 = sqrt(5.0);
    assert_vec_near(r.position, 4 - skin / s5, 1 + 2 * skin / s5, 0, 1e-14);
    assert_vec_near(r.velocity, 2, 0, 0, 1e-15);
    assert_int_equal(r.iterations, 1);
    imp_move_result_free(&r);

    /* two spheres in 3D: a moving one in the way */
    imp_shape other = sphere(1);
    imp_move_obstacle o = {&other, {V(5, 3, 0), V(0, -2, 0), V(0, 0, 0)}, NULL, V(0, 0, 0)};
    r = run(&ball, V(0, 0, 0), V(10, 0, 0), 1.0, &o, 1, 3, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    imp_move_result_free(&r);
}

/* `to` inside a box: tunnelling where the path meets its face and
 * penetration at `to` with the depth along x. */
static void test_penetration_inside_box(void **state) {
    (void)state;
    imp_shape ball = sphere(0.25), crate = box2(1, 1, 0);
    imp_move_obstacle w = still(&crate, V(5, 0, 0));
    imp_move_result r = run(&ball, V(0, 0, 0), V(4.5, 0, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 2);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    near(r.violations[0].time, 3.75 / 4.5, 1e-15, "face contact");
    const imp_move_violation *p = &r.violations[1];
    assert_int_equal(p->kind, IMP_MOVE_PENETRATION);
    assert_int_equal(p->obstacle, 0);
    near(p->time, 1.0, 0, "at dt");
    near(p->depth, 0.75, 1e-15, "depth");
    assert_vec_near(p->normal, 1, 0, 0, 1e-15);
    assert_vec_near(p->point, 4.375, 0, 0, 1e-15);
    assert_vec_near(r.position, 3.75 - IMP_MOVE_SKIN_REL * 4.5, 0, 0, 1e-14);
    imp_move_result_free(&r);

    /* arriving exactly at the face is no violation */
    r = run(&ball, V(0, 0, 0), V(3.75, 0, 0), 1.0, &w, 1, 2, INFINITY, 5);
    assert_true(r.valid);
    assert_vec_eq(r.position, 3.75, 0, 0);
    imp_move_result_free(&r);
}

static void test_speed_violation_clamps(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5);
    imp_move_result r = run(&ball, V(0, 0, 0), V(6, 8, 0), 1.0, NULL, 0, 2, 5.0, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 1);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_SPEED);
    near(r.violations[0].speed, 10.0, 0, "speed");
    assert_vec_near(r.position, 3, 4, 0, 1e-15);
    assert_vec_near(r.velocity, 3, 4, 0, 1e-15);
    imp_move_result_free(&r);

    /* exactly at the limit is fine */
    r = run(&ball, V(0, 0, 0), V(3, 4, 0), 1.0, NULL, 0, 2, 5.0, 5);
    assert_true(r.valid);
    imp_move_result_free(&r);
    /* max_speed 0: standing still only */
    r = run(&ball, V(1, 1, 0), V(1, 2, 0), 1.0, NULL, 0, 2, 0.0, 5);
    assert_false(r.valid);
    assert_vec_eq(r.position, 1, 1, 0);
    assert_vec_eq(r.velocity, 0, 0, 0);
    imp_move_result_free(&r);
}

/* ---- turning obstacles ------------------------------------------------------------------- */

static imp_move_obstacle turning(const imp_shape *s, imp_vec3 p, imp_vec3 w) {
    imp_move_obstacle o = {s, {p, V(0, 0, 0), V(0, 0, 0)}, NULL, w};
    return o;
}

/* A blade of half-length 2 and half-thickness 0.05 (a thin box spinning about its centre at
 * 1 rad/s from horizontal) and a ball of radius 0.1 at (0, 1): the blade's upper face, at
 * distance cos t from the ball's centre, reaches it at t* = acos(0.15). The ball walks along
 * the blade's direction at t* (0.5 units/s): before t* that only takes it further from the
 * face (n(t) . d* = sin(t* - t) > 0), so t* is still the first contact. 2D, and the same in
 * 3D with a slab spinning about z. */
/* A blade of half-length 2 and half-thickness 0.05 (3D: a slab 1 deep along z). */
static imp_shape blade_of(int dim) {
    if (dim == 2) return box2(2, 0.05, 0);
    return (imp_shape){.type = IMP_SHAPE_BOX, .half = V(2, 0.05, 0.5), .rot = {1, 0, 0, 0}};
}

static void check_spinning_blade(int dim) {
    const double ts = acos(0.15);
    imp_shape ball = sphere(0.1);
    imp_shape blade = blade_of(dim);
    imp_move_obstacle o = turning(&blade, V(0, 0, 0), V(0, 0, 1));
    imp_vec3 dir = V(cos(ts), sin(ts), 0), from = V(0, 1, 0), to = imp_madd(from, dir, 1.0);
    imp_move_result r = run(&ball, from, to, 2.0, &o, 1, dim, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.n_violations, 1);
    const imp_move_violation *v = &r.violations[0];
    assert_int_equal(v->kind, IMP_MOVE_TUNNELING);
    /* certified: time <= t* <= time + 1e-9 max(1, time) (t* to an ulp) */
    if (!(v->time <= ts + 4e-16 && ts <= v->time + 1e-9 * fmax(1, v->time)))
        fail_msg("%dD blade: time %.17g, exact %.17g", dim, v->time, ts);
    imp_vec3 n = V(-sin(ts), cos(ts), 0); /* the face normal at t*, towards the ball */
    assert_vec_near(v->normal, -n.x, -n.y, 0, 1e-7);
    imp_vec3 c = imp_madd(from, dir, 0.5 * ts);
    assert_vec_near(v->point, c.x - 0.1 * n.x, c.y - 0.1 * n.y, 0, 1e-7);
    imp_move_result_free(&r);
}

static void test_spinning_blade_caught_exact(void **state) {
    (void)state;
    check_spinning_blade(2);
    check_spinning_blade(3);
}

/* The mover at pos against obstacle o turned by w t about its position (2D; a polygon's
 * vertices turned in buf), by imp_overlap. */
static imp_overlap_result turned_overlap(const imp_shape *mover, imp_vec3 pos,
                                         const imp_move_obstacle *o, double t, imp_vec3 *buf) {
    imp_shape s = *o->shape;
    if (s.type == IMP_SHAPE_POLYGON) {
        for (size_t i = 0; i < s.n_verts; ++i)
            buf[i] = o->shape->verts[i];
        s.verts = buf;
    }
    imp_shape_rotate(&s, imp_quat_from_rotvec(imp_scale(o->w, t)));
    return imp_overlap(mover, pos, &s, o->m.p, 2);
}

/* Independent of the swept solvers: the mover (from + v t) and the turning obstacle (its shape
 * turned by w t about its position) sampled densely over [0, time] are apart, and they overlap
 * a little after `time`. */
static void check_first_contact(const imp_shape *mover, imp_vec3 from, imp_vec3 v,
                                const imp_move_obstacle *o, double time, const char *what) {
    imp_vec3 buf[8];
    for (int k = 0; k <= 20000; ++k) {
        double t = time * k / 20000;
        imp_overlap_result q = turned_overlap(mover, imp_madd(from, v, t), o, t, buf);
        if (q.state != IMP_OVERLAP_APART && !(k == 20000 && q.depth <= 1e-9))
            fail_msg("%s: the shapes meet at t = %.17g, before the reported %.17g", what, t, time);
    }
    double t = time + 1e-6;
    if (turned_overlap(mover, imp_madd(from, v, t), o, t, buf).state != IMP_OVERLAP_OVERLAPPING)
        fail_msg("%s: no overlap 1e-6 after the reported %.17g", what, time);
}

/* A ball crossing the blade's disc along x = 1.5 at 4 units/s while the blade turns from
 * pi/2 - 0.5 to pi/2 + 0.5 (its arms reach x <= 2 cos(1.07) + 0.05 < 1.4): the move is
 * valid, `to` exactly. The same move with the blade starting horizontal meets its right arm
 * sweeping up: caught, at the time the sampled overlap test finds. */
static void test_spinning_blade_gap(void **state) {
    (void)state;
    imp_shape ball = sphere(0.1), elsewhere = box2(2, 0.05, PI / 2 - 0.5), level = box2(2, 0.05, 0);
    imp_vec3 from = V(1.5, 2, 0), to = V(1.5, -2, 0);
    imp_move_obstacle o = turning(&elsewhere, V(0, 0, 0), V(0, 0, 1));
    imp_move_result r = run(&ball, from, to, 1.0, &o, 1, 2, INFINITY, 5);
    assert_true(r.valid);
    assert_int_equal(r.n_violations, 0);
    assert_vec_eq(r.position, 1.5, -2, 0);
    imp_move_result_free(&r);

    o = turning(&level, V(0, 0, 0), V(0, 0, 1));
    r = run(&ball, from, to, 1.0, &o, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    assert_true(r.violations[0].time > 0.2 && r.violations[0].time < 0.5);
    check_first_contact(&ball, from, V(0, -4, 0), &o, r.violations[0].time, "blade");
    imp_move_result_free(&r);
}

/* A door on a hinge at the origin: a polygon from the hinge out to 1.5 along its length, 0.1
 * thick, open at pi/2 and closing at 1 rad/s (clockwise). A ball of radius 0.2 at (0.5, 0.25)
 * (distance rho = sqrt(0.3125), angle alpha = atan2(0.25, 0.5)) is met by the door's face when
 * rho sin(phi - alpha) = 0.25: phi* = alpha + asin(0.25 / rho), t* = pi/2 - phi*; walking
 * along the door's direction at t* does not move that (as for the blade). */
static void test_closing_door_caught_exact(void **state) {
    (void)state;
    imp_vec3 v[4] = {V(0, -0.05, 0), V(1.5, -0.05, 0), V(1.5, 0.05, 0), V(0, 0.05, 0)};
    imp_quat open = imp_quat_from_angle(PI / 2);
    for (int i = 0; i < 4; ++i)
        v[i] = imp_quat_rotate(open, v[i]);
    imp_shape door = {.type = IMP_SHAPE_POLYGON, .verts = v, .n_verts = 4, .rot = {1, 0, 0, 0}};
    imp_shape ball = sphere(0.2);
    imp_move_obstacle o = turning(&door, V(0, 0, 0), V(0, 0, -1));
    double rho = sqrt(0.3125), alpha = atan2(0.25, 0.5), phi = alpha + asin(0.25 / rho);
    double ts = PI / 2 - phi;
    imp_vec3 from = V(0.5, 0.25, 0), dir = V(cos(phi), sin(phi), 0);
    imp_move_result r = run(&ball, from, imp_madd(from, dir, 0.5), 1.0, &o, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    const imp_move_violation *x = &r.violations[0];
    assert_int_equal(x->kind, IMP_MOVE_TUNNELING);
    if (!(x->time <= ts + 4e-16 && ts <= x->time + 1e-9))
        fail_msg("door: time %.17g, exact %.17g", x->time, ts);
    assert_vec_near(x->normal, -sin(phi), cos(phi), 0, 1e-7); /* from the ball to the door */
    imp_move_result_free(&r);

    /* straight down through the doorway at x = 0.75: at 1 unit/s the walker is through before
     * the door comes down; at 0.25 units/s the door catches it */
    from = V(0.75, 0.5, 0);
    imp_vec3 to = V(0.75, -0.5, 0);
    r = run(&ball, from, to, 1.0, &o, 1, 2, INFINITY, 5);
    assert_true(r.valid);
    assert_vec_eq(r.position, 0.75, -0.5, 0);
    imp_move_result_free(&r);
    r = run(&ball, from, to, 4.0, &o, 1, 2, INFINITY, 5);
    assert_false(r.valid);
    assert_true(r.violations[0].time > 0 && r.violations[0].time < 1);
    check_first_contact(&ball, from, V(0, -0.25, 0), &o, r.violations[0].time, "door");
    /* the door keeps coming: the correction cannot get the walker through */
    assert_true(r.position.y > 0);
    imp_move_result_free(&r);
}

/* The mover turns: the blade of check_spinning_blade now moves (along -d* at 0.5 units/s)
 * and spins, the ball is still: the same relative motion, so the same t* = acos(0.15). */
static void check_spinning_mover(int dim) {
    const double ts = acos(0.15);
    imp_shape ball = sphere(0.1);
    imp_shape blade = blade_of(dim);
    imp_move_obstacle o = still(&ball, V(0, 1, 0));
    imp_vec3 dir = V(cos(ts), sin(ts), 0);
    imp_move_input in = {
        &blade, V(0, 0, 0), imp_scale(dir, -1.0), 2.0, &o, 1, dim, INFINITY, 5, NULL, NULL,
        NULL,   V(0, 0, 1)};
    imp_move_result r = imp_move_check(&in);
    assert_int_equal(r.state, IMP_MOVE_OK);
    assert_false(r.valid);
    const imp_move_violation *v = &r.violations[0];
    assert_int_equal(v->kind, IMP_MOVE_TUNNELING);
    if (!(v->time <= ts + 4e-16 && ts <= v->time + 1e-9 * fmax(1, v->time)))
        fail_msg("%dD spinning mover: time %.17g, exact %.17g", dim, v->time, ts);
    assert_vec_near(v->normal, -sin(ts), cos(ts), 0, 1e-7); /* the face's, towards the ball */
    assert_vec_near(v->point, 0.1 * sin(ts), 1 - 0.1 * cos(ts), 0, 1e-7);
    imp_move_result_free(&r);
}

/* A blade that stays where it is and turns a quarter turn in dt = 1 sweeps into a post of
 * radius 0.1 at (0, 0.8): its face reaches it when 0.8 cos(theta) = 0.15, t* = acos(0.1875) /
 * (pi / 2), and at `to` the upright blade overlaps the post by 0.1 + 0.05. */
static void test_spinning_mover(void **state) {
    (void)state;
    check_spinning_mover(2);
    check_spinning_mover(3);
    imp_shape blade = box2(1, 0.05, 0), post = sphere(0.1);
    imp_move_obstacle o = still(&post, V(0, 0.8, 0));
    imp_move_input in = {&blade, V(0, 0, 0), V(0, 0, 0),     1.0, &o, 1, 2, INFINITY, 5, NULL,
                         NULL,   NULL,       V(0, 0, PI / 2)};
    imp_move_result r = imp_move_check(&in);
    assert_int_equal(r.state, IMP_MOVE_OK);
    assert_int_equal(r.n_violations, 2);
    const double ts = acos(0.1875) / (PI / 2);
    assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
    if (!(r.violations[0].time <= ts + 4e-16 && ts <= r.violations[0].time + 1e-9))
        fail_msg("turning in place: time %.17g, exact %.17g", r.violations[0].time, ts);
    assert_int_equal(r.violations[1].kind, IMP_MOVE_PENETRATION);
    near(r.violations[1].depth, 0.15, 1e-12, "the upright blade in the post");
    /* the post's centre is on the blade's axis: either side is as shallow */
    near(fabs(r.violations[1].normal.x), 1, 1e-12, "the overlap's normal across the blade");
    imp_move_result_free(&r);
    /* not turning, the same blade stays clear of the post: valid */
    in.w = V(0, 0, 0);
    r = imp_move_check(&in);
    assert_true(r.valid);
    imp_move_result_free(&r);
}

/* Every obstacle on the path is reported, in time order; far ones are not. */
static void test_every_obstacle_reported(void **state) {
    (void)state;
    imp_shape bullet = sphere(0.1), wall = segment(V(0, -1, 0), V(0, 1, 0)),
              pill = capsule(V(0, -1, 0), V(0, 1, 0), 0.2);
    imp_move_obstacle w[4] = {still(&wall, V(7, 0, 0)), still(&pill, V(3, 0, 0)),
                              still(&wall, V(5, 50, 0)), still(&wall, V(-2, 0, 0))};
    imp_move_result r = run(&bullet, V(0, 0, 0), V(10, 0, 0), 1.0, w, 4, 2, INFINITY, 5);
    assert_int_equal(r.n_violations, 2);
    assert_int_equal(r.violations[0].obstacle, 1);
    near(r.violations[0].time, 0.27, 1e-15, "capsule");
    assert_int_equal(r.violations[1].obstacle, 0);
    near(r.violations[1].time, 0.69, 1e-15, "wall");
    imp_move_result_free(&r);
}

/* ---- property test ------------------------------------------------------------------------- */

#define N_SCENES 10000
#define MAX_OBS 6
#define PATH_SAMPLES 64
#define LEG_SAMPLES 32

typedef struct scene {
    imp_shape mover;
    imp_vec3 mover_verts[8];
    imp_shape shapes[MAX_OBS];
    imp_vec3 verts[MAX_OBS][8];
    imp_move_obstacle obs[MAX_OBS];
    size_t n;
    imp_vec3 from, to;
    double dt, max_speed;
    int iterations;
    double scale;
} scene;

static imp_shape random_shape(uint64_t *rng, imp_vec3 *vbuf, int allow_halfspace) {
    int kind = (int)(imp_rng_unit(rng) * (allow_halfspace ? 6 : 5));
    double size = imp_rng_uniform(rng, 0.1, 1.5);
    switch (kind) {
    case 0: return sphere(size);
    case 1: return box2(size, imp_rng_uniform(rng, 0.05, 1.5), imp_rng_uniform(rng, -PI, PI));
    case 2: {
        size_t n = 3 + (size_t)(imp_rng_unit(rng) * 5);
        double a0 = imp_rng_uniform(rng, 0, 2 * PI);
        for (size_t i = 0; i < n; ++i) {
            double a = a0 + 2 * PI * ((double)i + imp_rng_uniform(rng, 0.1, 0.9)) / (double)n;
            vbuf[i] = V(size * cos(a), size * sin(a), 0);
        }
        imp_shape s = {.type = IMP_SHAPE_POLYGON, .verts = vbuf, .n_verts = n, .rot = {1, 0, 0, 0}};
        return s;
    }
    case 3: {
        double a = imp_rng_uniform(rng, -PI, PI);
        imp_vec3 e = V(size * cos(a), size * sin(a), 0);
        return capsule(imp_neg(e), e, imp_rng_uniform(rng, 0.01, 0.6));
    }
    case 4: {
        double a = imp_rng_uniform(rng, -PI, PI), l = imp_rng_uniform(rng, 0.5, 4);
        imp_vec3 e = V(l * cos(a), l * sin(a), 0);
        return segment(imp_neg(e), e);
    }
    default: {
        double a = imp_rng_uniform(rng, -PI, PI);
        return halfspace(V(cos(a), sin(a), 0), imp_rng_uniform(rng, -14, -6));
    }
    }
}

static imp_vec3 rvec(uint64_t *rng, double lo, double hi) {
    return V(imp_rng_uniform(rng, lo, hi), imp_rng_uniform(rng, lo, hi), 0);
}

/* Obstacle i placed at time t: shape copy (halfspace offset moved) and position. */
static void place(const imp_move_obstacle *o, double t, imp_shape *s, imp_vec3 *p) {
    *s = *o->shape;
    *p = imp_path_at(o->m.p, o->m.v, o->m.a, t);
    if (s->type == IMP_SHAPE_HALFSPACE)
        s->offset += imp_dot(s->normal, imp_path_at(V(0, 0, 0), o->m.v, o->m.a, t));
}

/* Deepest overlap of the mover at p with any obstacle at time t (0 when apart). */
static double depth_at(const scene *sc, imp_vec3 p, double t, size_t *which) {
    double worst = 0.0;
    for (size_t i = 0; i < sc->n; ++i) {
        imp_shape s;
        imp_vec3 q;
        place(&sc->obs[i], t, &s, &q);
        imp_overlap_result o = imp_overlap(&sc->mover, p, &s, q, 2);
        assert_int_not_equal(o.state, IMP_OVERLAP_FAILED);
        if (o.state == IMP_OVERLAP_OVERLAPPING && o.depth > worst) {
            worst = o.depth;
            *which = i;
        }
    }
    return worst;
}

/* A random scene whose start position no obstacle touches during [0, dt]. */
static void make_scene(uint64_t *rng, scene *sc) {
    for (;;) {
        sc->mover = random_shape(rng, sc->mover_verts, 0);
        sc->from = rvec(rng, -8, 8);
        sc->to = imp_add(sc->from, rvec(rng, -8, 8));
        sc->dt = imp_rng_uniform(rng, 0.05, 2);
        sc->n = 1 + (size_t)(imp_rng_unit(rng) * MAX_OBS);
        sc->iterations = (int)(imp_rng_unit(rng) * 8);
        sc->max_speed = imp_rng_unit(rng) < 0.2 ? imp_rng_uniform(rng, 0, 10) : INFINITY;
        int clear = 1;
        for (size_t i = 0; i < sc->n && clear; ++i) {
            sc->shapes[i] = random_shape(rng, sc->verts[i], 1);
            imp_motion m = {rvec(rng, -8, 8), V(0, 0, 0), V(0, 0, 0)};
            if (imp_rng_unit(rng) < 0.3) m.v = rvec(rng, -6, 6);
            if (imp_rng_unit(rng) < 0.15) m.a = rvec(rng, -6, 6);
            /* obstacles near the path now and then, so that most scenes collide */
            if (imp_rng_unit(rng) < 0.5) {
                double s = imp_rng_unit(rng);
                m.p = imp_add(imp_madd(sc->from, imp_sub(sc->to, sc->from), s), rvec(rng, -1, 1));
            }
            sc->obs[i] = (imp_move_obstacle){&sc->shapes[i], m, NULL, V(0, 0, 0)};
            imp_motion rest = {sc->from, V(0, 0, 0), V(0, 0, 0)};
            imp_toi_result r = imp_toi_shapes(&sc->mover, &rest, &sc->shapes[i], &m, 2, sc->dt);
            clear = r.state == IMP_TOI_NONE;
        }
        if (!clear) continue;
        double scale = fmax(imp_max_abs(sc->from), imp_max_abs(sc->to)) + 2.0;
        for (size_t i = 0; i < sc->n; ++i) {
            imp_shape s;
            imp_vec3 q0, q1;
            place(&sc->obs[i], 0, &s, &q0);
            place(&sc->obs[i], sc->dt, &s, &q1);
            scale = fmax(scale, fmax(imp_max_abs(q0), imp_max_abs(q1)) + 5.0);
            if (s.type == IMP_SHAPE_HALFSPACE) scale = fmax(scale, fabs(s.offset));
        }
        sc->scale = scale;
        return;
    }
}

static void test_property_random_scenes(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0f7a11dULL;
    uint64_t rng = seed;
    size_t n_valid = 0, n_blocked = 0, n_slid = 0, n_tunnel = 0;
    for (int k = 0; k < N_SCENES; ++k) {
        uint64_t scene_seed = rng;
        scene sc;
        make_scene(&rng, &sc);
        imp_move_input in = {&sc.mover,    sc.from,       sc.to, sc.dt, sc.obs, sc.n,      2,
                             sc.max_speed, sc.iterations, NULL,  NULL,  NULL,   V(0, 0, 0)};
        imp_move_result r = imp_move_check(&in);
        if (r.state != IMP_MOVE_OK)
            fail_msg("scene %d (seed %#llx, scene rng %#llx): failed", k, (unsigned long long)seed,
                     (unsigned long long)scene_seed);
        const double tol = 1e-9 * sc.scale;
        size_t which = 0;
        double dep;
        /* 1. the outcome overlaps nothing at t = dt */
        dep = depth_at(&sc, r.position, sc.dt, &which);
        if (dep > tol)
            fail_msg("scene %d (seed %#llx, scene rng %#llx): outcome overlaps obstacle %zu by "
                     "%.3g",
                     k, (unsigned long long)seed, (unsigned long long)scene_seed, which, dep);
        /* 2. a valid move: `to` unchanged and the straight path clear */
        imp_vec3 d = imp_sub(sc.to, sc.from);
        if (r.valid) {
            ++n_valid;
            assert_true(r.position.x == sc.to.x && r.position.y == sc.to.y);
            for (int j = 0; j <= PATH_SAMPLES; ++j) {
                double s = (double)j / PATH_SAMPLES;
                dep = depth_at(&sc, imp_madd(sc.from, d, s), s * sc.dt, &which);
                if (dep > tol)
                    fail_msg("scene %d (seed %#llx, scene rng %#llx): valid, but the path "
                             "overlaps obstacle %zu by %.3g at s = %g",
                             k, (unsigned long long)seed, (unsigned long long)scene_seed, which,
                             dep, s);
            }
        }
        /* 3. the corrected path passes through nothing */
        if (r.blocked) {
            ++n_blocked;
            assert_true(r.position.x == sc.from.x && r.position.y == sc.from.y);
            assert_true(r.velocity.x == 0 && r.velocity.y == 0);
            for (int j = 0; j <= LEG_SAMPLES; ++j) {
                double t = sc.dt * j / LEG_SAMPLES;
                dep = depth_at(&sc, sc.from, t, &which);
                if (dep > tol)
                    fail_msg("scene %d (seed %#llx): blocked start overlaps %zu", k,
                             (unsigned long long)seed, which);
            }
        } else {
            if (r.iterations > 0) ++n_slid;
            assert_true(r.n_legs >= 1);
            assert_true(r.iterations <= sc.iterations);
            for (int l = 0; l < r.n_legs; ++l) {
                const imp_move_leg *leg = &r.legs[l];
                double t1 = l + 1 < r.n_legs ? r.legs[l + 1].t0 : sc.dt;
                assert_true(t1 >= leg->t0);
                for (int j = 0; j <= LEG_SAMPLES; ++j) {
                    double u = (t1 - leg->t0) * j / LEG_SAMPLES;
                    dep = depth_at(&sc, imp_madd(leg->start, leg->v, u), leg->t0 + u, &which);
                    if (dep > tol)
                        fail_msg("scene %d (seed %#llx, scene rng %#llx): leg %d passes through "
                                 "obstacle %zu (depth %.3g at t = %g)",
                                 k, (unsigned long long)seed, (unsigned long long)scene_seed, l,
                                 which, dep, leg->t0 + u);
                }
            }
            /* the last leg ends where the outcome is */
            const imp_move_leg *last = &r.legs[r.n_legs - 1];
            imp_vec3 end = imp_madd(last->start, last->v, sc.dt - last->t0);
            if (imp_len(imp_sub(end, r.position)) > 1e-9 * sc.scale)
                fail_msg("scene %d (seed %#llx): last leg ends away from the outcome", k,
                         (unsigned long long)seed);
            /* never faster than the claim */
            if (imp_len(r.velocity) > imp_len(d) / sc.dt * (1 + 1e-12) + 1e-300)
                fail_msg("scene %d (seed %#llx): corrected velocity above the claim", k,
                         (unsigned long long)seed);
        }
        /* 4. tunnelling contacts are real contacts */
        for (size_t i = 0; i < r.n_violations; ++i) {
            const imp_move_violation *v = &r.violations[i];
            if (v->kind != IMP_MOVE_TUNNELING) continue;
            ++n_tunnel;
            imp_shape s;
            imp_vec3 q;
            place(&sc.obs[v->obstacle], v->time, &s, &q);
            imp_overlap_result o =
                imp_overlap(&sc.mover, imp_madd(sc.from, d, v->time / sc.dt), &s, q, 2);
            double gap = o.state == IMP_OVERLAP_APART ? o.distance : o.depth;
            if (gap > 1e-6 * sc.scale)
                fail_msg("scene %d (seed %#llx): tunnelling at %g is %g away from contact", k,
                         (unsigned long long)seed, v->time, gap);
        }
        /* 5. valid if and only if there is nothing to report */
        assert_int_equal(r.valid, r.n_violations == 0);
        imp_move_result_free(&r);
    }
    print_message("%d scenes: %zu valid, %zu slid, %zu blocked, %zu tunnelling contacts\n",
                  N_SCENES, n_valid, n_slid, n_blocked, n_tunnel);
    /* the generator must exercise every branch */
    assert_true(n_valid > N_SCENES / 20);
    assert_true(n_slid > N_SCENES / 20);
    assert_true(n_blocked > N_SCENES / 100);
}

/* Filters: a wall the mover cannot touch is ignored; one it can touch still blocks. */
static void test_filtered_out_wall(void **state) {
    (void)state;
    imp_shape ball = sphere(0.5), wall = box2(0.1, 5, 0);
    /* through: the wall's category 4 is not in its mask; blocked: it is; never: it is, but
     * mover and wall share a negative group */
    static const imp_filter wall_f = {4, 0xffffffffu, 0}, through = {1, 0x3, 0},
                            blocked = {1, 0x4, 0}, never = {4, 0xffffffffu, -2};
    imp_move_obstacle o = still(&wall, V(5, 0, 0));
    o.filter = &wall_f;
    const imp_filter *movers[3] = {&through, &blocked, &never};
    for (int k = 0; k < 3; ++k) {
        imp_move_obstacle ob = o;
        if (k == 2) ob.filter = &never;
        imp_move_input in = {&ball,    V(0, 0, 0), V(10, 0, 0), 1.0,  &ob,  1,         2,
                             INFINITY, 5,          movers[k],   NULL, NULL, V(0, 0, 0)};
        imp_move_result r = imp_move_check(&in);
        assert_int_equal(r.state, IMP_MOVE_OK);
        if (k == 1) {
            assert_false(r.valid);
            assert_int_equal(r.violations[0].kind, IMP_MOVE_TUNNELING);
            assert_true(r.position.x < 5);
        } else {
            assert_true(r.valid);
            assert_int_equal(r.n_violations, 0);
            assert_true(r.position.x == 10 && r.position.y == 0);
        }
        imp_move_result_free(&r);
    }
}

/* ---- property test: turning bodies --------------------------------------------------------- */

#define N_TURN_SCENES 1500
#define TURN_SAMPLES 400

/* s (as at t = 0) turned by w t about its position; a polygon's vertices into buf. */
static imp_shape turned(const imp_shape *s, imp_vec3 w, double t, imp_vec3 *buf) {
    imp_shape out = *s;
    if (out.type == IMP_SHAPE_POLYGON) {
        for (size_t i = 0; i < out.n_verts; ++i)
            buf[i] = s->verts[i];
        out.verts = buf;
    }
    if (out.type != IMP_SHAPE_HALFSPACE)
        imp_shape_rotate(&out, imp_quat_from_rotvec(imp_scale(w, t)));
    return out;
}

static imp_vec3 random_spin(uint64_t *rng) {
    double w = imp_rng_uniform(rng, -8, 8);
    if (imp_rng_unit(rng) < 0.15) w *= 5;
    return V(0, 0, w);
}

/* Random 2D moves among turning obstacles, the mover turning in half of them, each starting
 * clear (the turning mover at `from` meets no obstacle over [0, dt]). Checked by dense
 * sampling with the static overlap test, independent of the swept solvers: an obstacle the
 * sampled straight move overlaps by more than 1e-9 of the scale is reported as tunnelling no
 * later than that sample, and no sample before a reported time overlaps it that deeply. */
static void test_property_turning_scenes(void **state) {
    (void)state;
    const uint64_t seed = 0x7A7A11ULL;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    size_t n_tunnel = 0, n_scenes = 0, n_sampled = 0;
    while (n_scenes < N_TURN_SCENES) {
        scene sc;
        memset(&sc, 0, sizeof sc);
        sc.mover = random_shape(&rng, sc.mover_verts, 0);
        imp_vec3 wm = imp_rng_unit(&rng) < 0.5 ? random_spin(&rng) : V(0, 0, 0);
        sc.from = rvec(&rng, -8, 8);
        sc.to = imp_add(sc.from, rvec(&rng, -8, 8));
        sc.dt = imp_rng_uniform(&rng, 0.05, 2);
        sc.n = 1 + (size_t)(imp_rng_unit(&rng) * 4);
        int clear = 1;
        for (size_t i = 0; i < sc.n && clear; ++i) {
            sc.shapes[i] = random_shape(&rng, sc.verts[i], 1);
            imp_motion m = {rvec(&rng, -8, 8), V(0, 0, 0), V(0, 0, 0)};
            if (imp_rng_unit(&rng) < 0.3) m.v = rvec(&rng, -4, 4);
            if (imp_rng_unit(&rng) < 0.6) {
                double u = imp_rng_unit(&rng);
                m.p = imp_add(imp_madd(sc.from, imp_sub(sc.to, sc.from), u), rvec(&rng, -1, 1));
            }
            imp_vec3 w = sc.shapes[i].type != IMP_SHAPE_HALFSPACE && imp_rng_unit(&rng) < 0.7
                             ? random_spin(&rng)
                             : V(0, 0, 0);
            sc.obs[i] = (imp_move_obstacle){&sc.shapes[i], m, NULL, w};
            imp_toi_rotating_input q = {&sc.mover,
                                        &sc.shapes[i],
                                        {sc.from, V(0, 0, 0), V(0, 0, 0)},
                                        m,
                                        wm,
                                        w,
                                        2,
                                        sc.dt,
                                        NULL,
                                        0};
            int stopped = 0;
            clear = imp_toi_rotating(&q, &stopped).state == IMP_TOI_NONE;
        }
        if (!clear) continue;
        ++n_scenes;
        double scale = fmax(imp_max_abs(sc.from), imp_max_abs(sc.to)) + 20.0;
        imp_move_input in = {&sc.mover, sc.from, sc.to, sc.dt, sc.obs, sc.n, 2,
                             INFINITY,  5,       NULL,  NULL,  NULL,   wm};
        imp_move_result r = imp_move_check(&in);
        assert_int_equal(r.state, IMP_MOVE_OK);
        imp_vec3 v = imp_scale(imp_sub(sc.to, sc.from), 1.0 / sc.dt);
        for (size_t i = 0; i < sc.n; ++i) {
            double reported = INFINITY;
            for (size_t k = 0; k < r.n_violations; ++k)
                if (r.violations[k].kind == IMP_MOVE_TUNNELING && r.violations[k].obstacle == i)
                    reported = r.violations[k].time;
            n_tunnel += reported < INFINITY;
            for (int k = 0; k <= TURN_SAMPLES; ++k) {
                double t = sc.dt * k / TURN_SAMPLES;
                imp_vec3 bm[8], bo[8];
                imp_shape ms = turned(&sc.mover, wm, t, bm),
                          os = turned(&sc.shapes[i], sc.obs[i].w, t, bo);
                imp_vec3 q = imp_path_at(sc.obs[i].m.p, sc.obs[i].m.v, sc.obs[i].m.a, t);
                if (os.type == IMP_SHAPE_HALFSPACE)
                    os.offset += imp_dot(os.normal, imp_sub(q, sc.obs[i].m.p));
                imp_overlap_result o = imp_overlap(&ms, imp_madd(sc.from, v, t), &os, q, 2);
                if (o.state != IMP_OVERLAP_OVERLAPPING || !(o.depth > 1e-9 * scale)) continue;
                ++n_sampled;
                if (!(reported <= t + 1e-12))
                    fail_msg("seed %#llx scene %zu obstacle %zu: overlapping by %g at t = %.17g, "
                             "reported %.17g",
                             (unsigned long long)seed, n_scenes, i, o.depth, t, reported);
                break;
            }
        }
        imp_move_result_free(&r);
    }
    print_message("%d turning scenes: %zu tunnelling contacts, %zu found by sampling too\n",
                  N_TURN_SCENES, n_tunnel, n_sampled);
    assert_true(n_sampled > N_TURN_SCENES / 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filtered_out_wall),
        cmocka_unit_test(test_bullet_through_thin_segment_wall),
        cmocka_unit_test(test_bullet_through_thin_box_wall),
        cmocka_unit_test(test_bullet_through_thin_3d_walls),
        cmocka_unit_test(test_slide_along_3d_box),
        cmocka_unit_test(test_max_iterations_zero_stays_at_start),
        cmocka_unit_test(test_corner_slides_then_stops),
        cmocka_unit_test(test_acute_wedge_stops_in_crease),
        cmocka_unit_test(test_grazing_along_wall_is_valid),
        cmocka_unit_test(test_start_in_contact),
        cmocka_unit_test(test_start_overlapping),
        cmocka_unit_test(test_moving_door_is_caught),
        cmocka_unit_test(test_halfspace_floor_3d),
        cmocka_unit_test(test_penetration_inside_box),
        cmocka_unit_test(test_speed_violation_clamps),
        cmocka_unit_test(test_every_obstacle_reported),
        cmocka_unit_test(test_property_random_scenes),
        cmocka_unit_test(test_spinning_blade_caught_exact),
        cmocka_unit_test(test_spinning_blade_gap),
        cmocka_unit_test(test_closing_door_caught_exact),
        cmocka_unit_test(test_spinning_mover),
        cmocka_unit_test(test_property_turning_scenes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
