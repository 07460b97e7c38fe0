/*
 * test_toi_halfspace.c - a translating shape against a halfspace.
 *
 * Known answers (a ball dropped on a floor, a tilted 3D box landing on an
 * edge, touching then separating, overlapping, a moving floor, a graze at
 * the apex of a throw), and random shapes in 2D and 3D checked with the
 * static overlap test: touching at the hit, never inside earlier or at any
 * sampled time of a `none`.
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
#include "core/toi_halfspace.h"
#include "tests/rng.h"
#include "tests/shapes.h"
#include "tests/toi_check.h"

static imp_toi_result solve(const imp_shape *s, imp_motion m, imp_vec3 n, double offset,
                            imp_motion plane, int dim, double horizon) {
    imp_vec3 buf[8];
    imp_toi_halfspace_input in = {
        .body = m, .normal = n, .offset = offset, .plane = plane, .horizon = horizon};
    in.n = imp_shape_points(s, dim, buf, &in.verts, &in.radius);
    assert_true(in.n > 0);
    return imp_toi_halfspace(&in);
}

static const imp_motion STILL = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};

static void test_known_answers(void **state) {
    (void)state;
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 1};
    imp_vec3 up = imp_v3(0, 1, 0), o = imp_v3(0, 0, 0);
    /* dropped from 5 under a = -2: the bottom falls 4 = t^2 */
    imp_toi_result r =
        solve(&ball, motion3(imp_v3(0, 5, 0), o, imp_v3(0, -2, 0)), up, 0, STILL, 2, 10);
    assert_true(r.state == IMP_TOI_HIT && r.time == 2 && r.normal.y == -1);
    assert_true(r.point.x == 0 && r.point.y == 0 && r.pa.y == 1);
    /* thrown up at 2 from a gap of 0: touching and leaving; it comes back at t = 2 */
    r = solve(&ball, motion3(imp_v3(0, 1, 0), imp_v3(0, 2, 0), imp_v3(0, -2, 0)), up, 0, STILL, 2,
              10);
    assert_true(r.state == IMP_TOI_HIT && r.time == 2);
    /* its apex just grazes a ceiling (a halfspace y >= 3, normal down): no contact */
    r = solve(&ball, motion3(imp_v3(0, 1, 0), imp_v3(0, 2, 0), imp_v3(0, -2, 0)), imp_v3(0, -1, 0),
              -3, STILL, 2, 10);
    assert_int_equal(r.state, IMP_TOI_NONE);
    /* overlapping by 0.25 */
    r = solve(&ball, motion3(imp_v3(0, 0.75, 0), o, o), up, 0, STILL, 2, 10);
    assert_true(r.state == IMP_TOI_OVERLAPPING && r.depth == 0.25);
    /* a floor rising at 1 meets a resting ball 2 above it at t = 2 */
    r = solve(&ball, motion3(imp_v3(0, 3, 0), o, o), up, 0, motion3(o, imp_v3(0, 1, 0), o), 2, 10);
    assert_true(r.state == IMP_TOI_HIT && r.time == 2 && r.pb.y == 2);
    /* a 3D box turned 45 degrees about x lands on its lowest edge, sqrt 2 below its centre */
    imp_shape bx = {
        .type = IMP_SHAPE_BOX,
        .half = imp_v3(1, 1, 1),
        .rot = {cos(3.14159265358979323846 / 8), sin(3.14159265358979323846 / 8), 0, 0}};
    r = solve(&bx, motion3(imp_v3(0, 0, 10), imp_v3(0, 0, -1), o), imp_v3(0, 0, 1), 0, STILL, 3,
              INFINITY);
    assert_int_equal(r.state, IMP_TOI_HIT);
    assert_true(fabs(r.time - (10 - sqrt(2.0))) < 1e-14);
    assert_true(fabs(r.point.z) < 1e-14 && fabs(r.point.y) < 1e-14);
}

static void test_random_against_static_overlap(void **state) {
    (void)state;
    const uint64_t seed = 0x4A1F;
    uint64_t rng = seed;
    int hits = 0, nones = 0;
    for (int k = 0; k < 20000; ++k) {
        int dim = 2 + k % 2;

        imp_shape s;
        double size = imp_rng_uniform(&rng, 0.2, 2);
        switch ((k / 2) % 3) {
        case 0: s = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = size}; break;
        case 1:
            s = (imp_shape){.type = IMP_SHAPE_CAPSULE,
                            .a = imp_v3(-size, 0, 0),
                            .b = imp_v3(size, imp_rng_uniform(&rng, -1, 1),
                                        dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0),
                            .radius = imp_rng_uniform(&rng, 0.05, 1)};
            break;
        default: {
            imp_quat q =
                dim == 3 ? (imp_quat){imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                                      imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1)}
                         : imp_quat_from_angle(imp_rng_uniform(&rng, -3, 3));
            imp_quat u;
            if (imp_quat_normalize(q, &u) != 0) u = (imp_quat){1, 0, 0, 0};
            s = (imp_shape){.type = IMP_SHAPE_BOX,
                            .half = imp_v3(size, imp_rng_uniform(&rng, 0.2, 2),
                                           dim == 3 ? imp_rng_uniform(&rng, 0.2, 2) : 0),
                            .rot = u};
        }
        }
        imp_vec3 n = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0);
        n = imp_scale(n, 1 / imp_len(n));
        double offset = imp_rng_uniform(&rng, -2, 2);
        imp_vec3 acc = k % 4 < 2
                           ? imp_v3(0, 0, 0)
                           : imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                                    dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0);
        imp_motion m = motion3(imp_v3(imp_rng_uniform(&rng, -5, 5), imp_rng_uniform(&rng, -5, 5),
                                      dim == 3 ? imp_rng_uniform(&rng, -5, 5) : 0),
                               imp_v3(imp_rng_uniform(&rng, -2, 2), imp_rng_uniform(&rng, -2, 2),
                                      dim == 3 ? imp_rng_uniform(&rng, -2, 2) : 0),
                               acc);
        imp_toi_result r = solve(&s, m, n, offset, STILL, dim, 5);
        imp_shape h = {.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset};
        const char *bad = imp_test_toi_check(&s, &m, &h, &STILL, dim, 5, &r, 1e-9 * 20, -1, 100);
        if (bad) fail_msg("seed %#llx case %d: %s", (unsigned long long)seed, k, bad);
        hits += r.state == IMP_TOI_HIT;
        nones += r.state == IMP_TOI_NONE;
    }
    assert_true(hits > 1000 && nones > 1000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_random_against_static_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
