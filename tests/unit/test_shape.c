/*
 * test_shape.c - shape validation: convex polygons in either winding,
 * non-convex and star polygons with the vertex at fault, flat and
 * repeated vertices, polyhedra spanning 3D, quaternion rotation.
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

#include "core/shape.h"
#include "core/vec.h"
#include "tests/rng.h"

static imp_polygon_status check(const double (*xy)[2], size_t n, imp_vec3 *out, size_t *bad) {
    for (size_t i = 0; i < n; ++i)
        out[i] = imp_v3(xy[i][0], xy[i][1], 0);
    return imp_polygon_normalize(out, n, bad);
}

static double area2(const imp_vec3 *v, size_t n) {
    double a = 0;
    for (size_t i = 0; i < n; ++i)
        a += v[i].x * v[(i + 1) % n].y - v[(i + 1) % n].x * v[i].y;
    return a;
}

static void test_convex_either_winding(void **state) {
    (void)state;
    static const double ccw[][2] = {{0, 0}, {2, 0}, {2, 1}, {0, 1}};
    static const double cw[][2] = {{0, 0}, {0, 1}, {2, 1}, {2, 0}};
    imp_vec3 v[4];
    size_t bad = 99;
    assert_int_equal(check(ccw, 4, v, &bad), IMP_POLYGON_OK);
    assert_true(area2(v, 4) == 4.0);
    assert_true(v[1].x == 2 && v[1].y == 0); /* unchanged */
    assert_int_equal(check(cw, 4, v, &bad), IMP_POLYGON_OK);
    assert_true(area2(v, 4) == 4.0); /* reversed to counter-clockwise */
    assert_true(v[0].x == 2 && v[0].y == 0 && v[3].x == 0 && v[3].y == 0);
    /* a collinear vertex on an edge is still convex */
    static const double mid[][2] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {0, 1}};
    imp_vec3 w[5];
    assert_int_equal(check(mid, 5, w, &bad), IMP_POLYGON_OK);
    /* a triangle */
    static const double tri[][2] = {{0, 0}, {1, 0}, {0, 1}};
    assert_int_equal(check(tri, 3, v, &bad), IMP_POLYGON_OK);
}

static void test_nonconvex_points_at_the_flip(void **state) {
    (void)state;
    /* an arrow: vertex 3 (1, 0.5) turns the other way */
    static const double arrow[][2] = {{0, 0}, {2, 0}, {2, 2}, {1, 0.5}, {0, 2}};
    imp_vec3 v[5];
    size_t bad = 99;
    assert_int_equal(check(arrow, 5, v, &bad), IMP_POLYGON_NONCONVEX);
    assert_int_equal(bad, 3);
    /* the same clockwise: the reflex vertex is still the one reported (index 1 now) */
    static const double arrow_cw[][2] = {{0, 2}, {1, 0.5}, {2, 2}, {2, 0}, {0, 0}};
    assert_int_equal(check(arrow_cw, 5, v, &bad), IMP_POLYGON_NONCONVEX);
    assert_int_equal(bad, 1);
}

static void test_star_is_not_convex(void **state) {
    (void)state;
    /* a pentagram: every turn has the same sign, but the boundary winds twice */
    double xy[5][2];
    for (int i = 0; i < 5; ++i) {
        double a = 2 * 3.14159265358979323846 * (2 * i) / 5;
        xy[i][0] = cos(a);
        xy[i][1] = sin(a);
    }
    imp_vec3 v[5];
    size_t bad = 99;
    assert_int_equal(check((const double(*)[2])xy, 5, v, &bad), IMP_POLYGON_NONCONVEX);
    assert_true(bad < 5);
}

static void test_flat_and_repeated(void **state) {
    (void)state;
    static const double flat[][2] = {{0, 0}, {1, 1}, {3, 3}};
    static const double rep[][2] = {{0, 0}, {1, 0}, {1, 0}, {0, 1}};
    imp_vec3 v[4];
    size_t bad = 99;
    assert_int_equal(check(flat, 3, v, &bad), IMP_POLYGON_FLAT);
    assert_int_equal(check(rep, 4, v, &bad), IMP_POLYGON_REPEATED);
    assert_int_equal(bad, 2);
}

/* Random convex polygons (sorted angles on an ellipse, either winding) pass and come
 * out counter-clockwise; swapping two neighbours of a large one makes it fail. */
static void test_random_polygons(void **state) {
    (void)state;
    const uint64_t seed = 0x5A9E;
    uint64_t rng = seed;
    for (int k = 0; k < 2000; ++k) {
        size_t n = 3 + (size_t)(imp_rng_unit(&rng) * 30);
        double ang[40];
        for (size_t i = 0; i < n; ++i)
            ang[i] = imp_rng_uniform(&rng, 0, 6.283185307179586);
        for (size_t i = 1; i < n; ++i) /* insertion sort */
            for (size_t j = i; j > 0 && ang[j - 1] > ang[j]; --j) {
                double t = ang[j];
                ang[j] = ang[j - 1];
                ang[j - 1] = t;
            }
        double sx = imp_rng_uniform(&rng, 0.1, 10), sy = imp_rng_uniform(&rng, 0.1, 10);
        double cx = imp_rng_uniform(&rng, -1e3, 1e3), cy = imp_rng_uniform(&rng, -1e3, 1e3);
        int reverse = k % 2;
        imp_vec3 v[40];
        for (size_t i = 0; i < n; ++i) {
            size_t j = reverse ? n - 1 - i : i;
            v[j] = imp_v3(cx + sx * cos(ang[i]), cy + sy * sin(ang[i]), 0);
        }
        size_t bad;
        imp_polygon_status st = imp_polygon_normalize(v, n, &bad);
        if (st == IMP_POLYGON_REPEATED || st == IMP_POLYGON_FLAT)
            continue; /* two equal angles: fine either way */
        if (st != IMP_POLYGON_OK)
            fail_msg("seed %#llx case %d: a convex %zu-gon rejected at %zu",
                     (unsigned long long)seed, k, n, bad);
        assert_true(area2(v, n) > 0);
    }
}

static void test_polyhedron(void **state) {
    (void)state;
    imp_vec3 tet[] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    assert_int_equal(imp_polyhedron_check(tet, 4), 0);
    imp_vec3 flat[] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.5, 0}};
    assert_int_equal(imp_polyhedron_check(flat, 5), -1);
    imp_vec3 line[] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
    assert_int_equal(imp_polyhedron_check(line, 4), -1);
    imp_vec3 same[] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
    assert_int_equal(imp_polyhedron_check(same, 4), -1);
    assert_int_equal(imp_polyhedron_check(tet, 3), -1);
    /* a tiny but real tetrahedron far away is fine */
    imp_vec3 far[] = {
        {1e6, 1e6, 1e6}, {1e6 + 1e-3, 1e6, 1e6}, {1e6, 1e6 + 1e-3, 1e6}, {1e6, 1e6, 1e6 + 1e-3}};
    assert_int_equal(imp_polyhedron_check(far, 4), 0);
}

static void test_quaternions(void **state) {
    (void)state;
    imp_quat q;
    assert_int_equal(imp_quat_normalize((imp_quat){0, 0, 0, 0}, &q), -1);
    assert_int_equal(imp_quat_normalize((imp_quat){2, 0, 0, 0}, &q), 0);
    assert_true(q.w == 1 && q.x == 0);
    /* a quarter turn about z maps x to y, in 2D by angle and in 3D by quaternion */
    imp_vec3 r = imp_quat_rotate(imp_quat_from_angle(3.14159265358979323846 / 2), imp_v3(1, 0, 0));
    assert_true(fabs(r.x) < 1e-15 && fabs(r.y - 1) < 1e-15 && r.z == 0);
    assert_int_equal(imp_quat_normalize((imp_quat){1e-200, 0, 0, 1e-200}, &q), 0);
    r = imp_quat_rotate(q, imp_v3(1, 0, 0));
    assert_true(fabs(r.x) < 1e-15 && fabs(r.y - 1) < 1e-15);
    /* rotation preserves length */
    imp_quat_normalize((imp_quat){0.3, -0.5, 0.7, 0.1}, &q);
    r = imp_quat_rotate(q, imp_v3(3, 4, 12));
    assert_true(fabs(imp_len(r) - 13) < 1e-13);
}

/* imp_fmax and imp_fmin are C's fmax and fmin bit for bit: over every pair of special and
 * ordinary values, a NaN operand gives the other one, and of two equal operands (zeros of
 * either sign) the second; imp_fmax_run is imp_fmax for a running maximum that is a number,
 * but for the sign of equal zeros. */
static void test_fmax_fmin(void **state) {
    (void)state;
    const double v[] = {-INFINITY, -1.5, -0.0, 0.0, 4.9e-324, 1.5, INFINITY, NAN};
    const int n = (int)(sizeof v / sizeof v[0]);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double a = v[i], b = v[j];
            double got[2] = {imp_fmax(a, b), imp_fmin(a, b)};
            double want[2] = {isnan(b)   ? a
                              : isnan(a) ? b
                              : a > b    ? a
                                         : b,
                              isnan(b)   ? a
                              : isnan(a) ? b
                              : a < b    ? a
                                         : b};
            double libm[2] = {fmax(a, b), fmin(a, b)};
            for (int k = 0; k < 2; ++k) {
                if (memcmp(&got[k], &want[k], sizeof got[k]) != 0 &&
                    !(isnan(got[k]) && isnan(want[k])))
                    fail_msg("%s(%g, %g) = %g, want %g", k ? "fmin" : "fmax", a, b, got[k],
                             want[k]);
                if (!(got[k] == libm[k] || (isnan(got[k]) && isnan(libm[k]))))
                    fail_msg("%s(%g, %g) = %g, libm %g", k ? "fmin" : "fmax", a, b, got[k],
                             libm[k]);
            }
            if (!isnan(a)) {
                double r = imp_fmax_run(a, b);
                double keep = a == 0.0 && b == 0.0 ? a : got[0]; /* equal zeros: a's sign */
                if (memcmp(&r, &keep, sizeof r) != 0 && !(isnan(r) && isnan(keep)))
                    fail_msg("imp_fmax_run(%g, %g) = %g", a, b, r);
            }
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convex_either_winding),
        cmocka_unit_test(test_nonconvex_points_at_the_flip),
        cmocka_unit_test(test_star_is_not_convex),
        cmocka_unit_test(test_flat_and_repeated),
        cmocka_unit_test(test_random_polygons),
        cmocka_unit_test(test_polyhedron),
        cmocka_unit_test(test_quaternions),
        cmocka_unit_test(test_fmax_fmin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
