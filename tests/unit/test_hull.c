/*
 * test_hull.c - convex hull of 3D points.
 *
 * Known hulls (a cube from its corners plus interior, face, edge and
 * repeated points; a tetrahedron; the regular icosahedron and
 * dodecahedron; grids, also rotated and jittered by rounding), degenerate
 * input, and a property test on random clouds of several kinds checked
 * against the definition: every input point inside or on every face
 * plane, every hull vertex an input point, faces convex, planar and
 * outward, every edge shared by two faces, V - E + F = 2, and the hull
 * reaching as far as the points in random directions.
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

#include "core/hull.h"
#include "core/shape.h"
#include "tests/rng.h"

#define PI 3.14159265358979323846

static double scale_of(const imp_vec3 *p, size_t n) {
    imp_vec3 lo = p[0], hi = p[0];
    for (size_t i = 1; i < n; ++i) {
        lo = imp_v3(fmin(lo.x, p[i].x), fmin(lo.y, p[i].y), fmin(lo.z, p[i].z));
        hi = imp_v3(fmax(hi.x, p[i].x), fmax(hi.y, p[i].y), fmax(hi.z, p[i].z));
    }
    return imp_max_abs(imp_sub(hi, lo));
}

/* Checks every property of a hull of p[0..n); `what` names the case. */
static void check_hull(const imp_hull *h, const imp_vec3 *p, size_t n, const char *what) {
    double tol = 1e-11 * scale_of(p, n);
    if (h->n_verts < 4 || h->n_faces < 4)
        fail_msg("%s: %zu vertices, %zu faces", what, h->n_verts, h->n_faces);
    for (size_t i = 0; i < h->n_verts; ++i) {
        size_t k = h->input[i];
        if (k >= n || memcmp(&p[k], &h->verts[i], sizeof p[k]) != 0)
            fail_msg("%s: vertex %zu is not input point %zu", what, i, k);
    }
    size_t loop_total = 0;
    size_t *uses = calloc(h->n_verts, sizeof *uses);
    assert_non_null(uses);
    for (size_t f = 0; f < h->n_faces; ++f) {
        size_t s0 = h->face_start[f], s1 = h->face_start[f + 1], m = s1 - s0;
        imp_vec3 nf = h->normals[f];
        if (m < 3 || fabs(imp_len(nf) - 1) > 1e-12)
            fail_msg("%s: face %zu has %zu vertices, |n| = %.17g", what, f, m, imp_len(nf));
        loop_total += m;
        for (size_t k = 0; k < m; ++k) {
            size_t a = h->face_verts[s0 + k], b = h->face_verts[s0 + (k + 1) % m],
                   c = h->face_verts[s0 + (k + 2) % m];
            ++uses[a];
            imp_vec3 va = h->verts[a], vb = h->verts[b], vc = h->verts[c];
            if (fabs(imp_dot(nf, va) - h->offsets[f]) > tol)
                fail_msg("%s: face %zu vertex %zu off its plane by %.3g", what, f, a,
                         imp_dot(nf, va) - h->offsets[f]);
            /* convex and counter-clockwise seen from outside */
            double turn = imp_dot(imp_cross(imp_sub(vb, va), imp_sub(vc, vb)), nf);
            if (!(turn > 0)) fail_msg("%s: face %zu turns by %.3g at vertex %zu", what, f, turn, b);
        }
        for (size_t i = 0; i < n; ++i)
            if (imp_dot(nf, p[i]) > h->offsets[f] + tol)
                fail_msg("%s: point %zu is %.3g outside face %zu", what, i,
                         imp_dot(nf, p[i]) - h->offsets[f], f);
    }
    for (size_t i = 0; i < h->n_verts; ++i)
        if (uses[i] < 3) fail_msg("%s: vertex %zu on %zu faces", what, i, uses[i]);
    free(uses);
    if (loop_total != 2 * h->n_edges)
        fail_msg("%s: loops hold %zu edge sides for %zu edges", what, loop_total, h->n_edges);
    for (size_t e = 0; e < h->n_edges; ++e) {
        const imp_hull_edge *x = &h->edges[e];
        if (x->face[1] == IMP_HULL_NONE || x->face[0] == x->face[1])
            fail_msg("%s: edge %zu has one face", what, e);
    }
    long euler = (long)h->n_verts - (long)h->n_edges + (long)h->n_faces;
    if (euler != 2)
        fail_msg("%s: V - E + F = %zu - %zu + %zu = %ld", what, h->n_verts, h->n_edges, h->n_faces,
                 euler);
    /* unique directions: unit, pairwise not parallel, every edge parallel to one */
    for (size_t i = 0; i < h->n_dirs; ++i) {
        assert_true(fabs(imp_len(h->dirs[i]) - 1) < 1e-12);
        for (size_t j = 0; j < i && h->n_dirs < 400; ++j)
            if (imp_len(imp_cross(h->dirs[i], h->dirs[j])) < 1e-9)
                fail_msg("%s: directions %zu and %zu parallel", what, i, j);
    }
    for (size_t e = 0; e < h->n_edges && h->n_dirs < 400; ++e) {
        imp_vec3 d = imp_sub(h->verts[h->edges[e].v[1]], h->verts[h->edges[e].v[0]]);
        d = imp_scale(d, 1 / imp_len(d));
        int found = 0;
        for (size_t j = 0; j < h->n_dirs; ++j)
            found |= imp_len(imp_cross(d, h->dirs[j])) < 1e-9;
        if (!found) fail_msg("%s: edge %zu has no direction", what, e);
    }
    /* the hull reaches as far as the points: support in random directions */
    uint64_t rng = 0x5EED;
    for (int k = 0; k < 64; ++k) {
        imp_vec3 d = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            imp_rng_uniform(&rng, -1, 1));
        double hp = -INFINITY, hh = -INFINITY;
        for (size_t i = 0; i < n; ++i)
            hp = fmax(hp, imp_dot(d, p[i]));
        for (size_t i = 0; i < h->n_verts; ++i)
            hh = fmax(hh, imp_dot(d, h->verts[i]));
        if (hh < hp - tol) fail_msg("%s: hull reaches %.17g, points %.17g", what, hh, hp);
    }
}

static imp_hull *build(const imp_vec3 *p, size_t n, const char *what) {
    imp_hull *h = (imp_hull *)(uintptr_t)0x1; /* poisoned: build must set it */
    imp_hull_status st = imp_hull_build(p, n, &h, NULL);
    if (st != IMP_HULL_OK || !h) fail_msg("%s: status %d", what, (int)st);
    check_hull(h, p, n, what);
    return h;
}

static void expect_counts(const imp_hull *h, size_t v, size_t e, size_t f, size_t d,
                          size_t face_size, const char *what) {
    if (h->n_verts != v || h->n_edges != e || h->n_faces != f || h->n_dirs != d)
        fail_msg("%s: V %zu E %zu F %zu dirs %zu, want %zu %zu %zu %zu", what, h->n_verts,
                 h->n_edges, h->n_faces, h->n_dirs, v, e, f, d);
    for (size_t k = 0; face_size && k < h->n_faces; ++k)
        if (h->face_start[k + 1] - h->face_start[k] != face_size)
            fail_msg("%s: face %zu has %zu vertices", what, k,
                     h->face_start[k + 1] - h->face_start[k]);
}

static void test_cube_with_extra_points(void **state) {
    (void)state;
    imp_vec3 p[200];
    size_t n = 0;
    uint64_t rng = 0xC0BE;
    /* interior, face, edge and repeated points first, so that they meet the
     * starting simplex and the merge before the corners */
    for (int i = 0; i < 30; ++i)
        p[n++] = imp_v3(imp_rng_uniform(&rng, -0.9, 0.9), imp_rng_uniform(&rng, -0.9, 0.9),
                        imp_rng_uniform(&rng, -0.9, 0.9));
    for (int i = 0; i < 30; ++i) { /* on faces */
        double u = imp_rng_uniform(&rng, -1, 1), v = imp_rng_uniform(&rng, -1, 1);
        int ax = i % 3;
        double s = i % 2 ? 1 : -1;
        p[n++] = ax == 0 ? imp_v3(s, u, v) : ax == 1 ? imp_v3(u, s, v) : imp_v3(u, v, s);
    }
    for (int i = 0; i < 24; ++i) { /* on edges, midpoints included */
        double u = i < 12 ? 0 : imp_rng_uniform(&rng, -1, 1);
        double s1 = i & 1 ? 1 : -1, s2 = i & 2 ? 1 : -1;
        int ax = (i / 4) % 3;
        p[n++] = ax == 0 ? imp_v3(u, s1, s2) : ax == 1 ? imp_v3(s1, u, s2) : imp_v3(s1, s2, u);
    }
    for (int i = 0; i < 8; ++i) /* corners, each twice */
        for (int r = 0; r < 2; ++r)
            p[n++] = imp_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    imp_hull *h = build(p, n, "cube");
    expect_counts(h, 8, 12, 6, 3, 4, "cube");
    for (size_t f = 0; f < h->n_faces; ++f) {
        imp_vec3 nf = h->normals[f];
        assert_true(fabs(imp_max_abs(nf) - 1) < 1e-15 && fabs(h->offsets[f] - 1) < 1e-15);
    }
    imp_hull_destroy(h);
    /* the same points in the reverse order */
    for (size_t i = 0; i < n / 2; ++i) {
        imp_vec3 t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
    h = build(p, n, "cube reversed");
    expect_counts(h, 8, 12, 6, 3, 4, "cube reversed");
    imp_hull_destroy(h);
    imp_hull_destroy(NULL);
}

static void test_tetrahedron(void **state) {
    (void)state;
    imp_vec3 p[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}};
    imp_hull *h = build(p, 5, "tetrahedron");
    expect_counts(h, 4, 6, 4, 6, 3, "tetrahedron");
    for (size_t i = 0; i < h->n_verts; ++i)
        assert_true(h->input[i] < 4);
    imp_hull_destroy(h);
}

static void test_platonic(void **state) {
    (void)state;
    const double g = (1 + sqrt(5.0)) / 2;
    imp_vec3 ico[12];
    size_t n = 0;
    for (int s1 = -1; s1 <= 1; s1 += 2)
        for (int s2 = -1; s2 <= 1; s2 += 2) {
            ico[n++] = imp_v3(0, s1, s2 * g);
            ico[n++] = imp_v3(s1, s2 * g, 0);
            ico[n++] = imp_v3(s2 * g, 0, s1);
        }
    imp_hull *h = build(ico, 12, "icosahedron");
    expect_counts(h, 12, 30, 20, 15, 3, "icosahedron");
    for (size_t f = 0; f < h->n_faces; ++f) /* the face planes are at the inradius */
        assert_true(fabs(h->offsets[f] - g * g / sqrt(3.0)) < 1e-14);
    imp_hull_destroy(h);
    imp_vec3 dod[20];
    n = 0;
    for (int i = 0; i < 8; ++i)
        dod[n++] = imp_v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    for (int s1 = -1; s1 <= 1; s1 += 2)
        for (int s2 = -1; s2 <= 1; s2 += 2) {
            dod[n++] = imp_v3(0, s1 / g, s2 * g);
            dod[n++] = imp_v3(s1 / g, s2 * g, 0);
            dod[n++] = imp_v3(s2 * g, 0, s1 / g);
        }
    h = build(dod, 20, "dodecahedron");
    expect_counts(h, 20, 30, 12, 15, 5, "dodecahedron");
    imp_hull_destroy(h);
}

static imp_vec3 rotate(imp_vec3 v, double angle, imp_vec3 axis) {
    axis = imp_scale(axis, 1 / imp_len(axis));
    imp_quat q = {cos(angle / 2), sin(angle / 2) * axis.x, sin(angle / 2) * axis.y,
                  sin(angle / 2) * axis.z};
    return imp_quat_rotate(q, v);
}

static void test_grids(void **state) {
    (void)state;
    static const int dims[][3] = {{2, 2, 2}, {3, 3, 3}, {5, 4, 3}, {16, 16, 16}, {2, 9, 2}};
    imp_vec3 *p = malloc(4096 * sizeof *p);
    assert_non_null(p);
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; ++c) {
        for (int variant = 0; variant < 3; ++variant) {
            size_t n = 0;
            for (int i = 0; i < dims[c][0]; ++i)
                for (int j = 0; j < dims[c][1]; ++j)
                    for (int k = 0; k < dims[c][2]; ++k) {
                        imp_vec3 v = imp_v3(0.1 * i, 0.3 * j, 0.7 * k); /* decimal steps */
                        if (variant == 1) /* rotated and moved: coplanar up to rounding */
                            v = imp_add(rotate(v, 0.7, imp_v3(1, 2, 3)), imp_v3(5, -3, 100));
                        if (variant == 2) /* far from the origin */
                            v = imp_add(v, imp_v3(1e4, 1e4, -1e4));
                        p[n++] = v;
                    }
            char what[64];
            snprintf(what, sizeof what, "grid %dx%dx%d variant %d", dims[c][0], dims[c][1],
                     dims[c][2], variant);
            imp_hull *h = build(p, n, what);
            expect_counts(h, 8, 12, 6, 3, 4, what);
            imp_hull_destroy(h);
        }
    }
    free(p);
}

static void test_degenerate(void **state) {
    (void)state;
    imp_vec3 flat[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.2, 0}};
    imp_vec3 line[4] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
    imp_vec3 same[4] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
    imp_hull *h = (imp_hull *)(uintptr_t)0x1;
    assert_int_equal(imp_hull_build(flat, 5, &h, NULL), IMP_HULL_DEGENERATE);
    assert_null(h);
    h = (imp_hull *)(uintptr_t)0x1;
    assert_int_equal(imp_hull_build(line, 4, &h, NULL), IMP_HULL_DEGENERATE);
    assert_null(h);
    assert_int_equal(imp_hull_build(same, 4, &h, NULL), IMP_HULL_DEGENERATE);
    assert_int_equal(imp_hull_build(flat, 3, &h, NULL), IMP_HULL_DEGENERATE);
    /* the error struct, poisoned first so that a forgotten fill is caught */
    imp_error err = {-1, NULL};
    assert_int_equal(imp_hull_build(line, 4, &h, &err), IMP_HULL_DEGENERATE);
    assert_int_equal(err.code, IMP_HULL_DEGENERATE);
    assert_non_null(err.message);
    err = (imp_error){-1, NULL};
    assert_int_equal(imp_hull_build(flat, 3, &h, &err), IMP_HULL_DEGENERATE);
    assert_int_equal(err.code, IMP_HULL_DEGENERATE);
    assert_non_null(err.message);
    /* thin, but not too thin for the api: a hull */
    imp_vec3 thin[5] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.5, 1e-11}};
    assert_int_equal(imp_polyhedron_check(thin, 5), 0);
    h = build(thin, 5, "thin pyramid");
    /* the slant edges to opposite corners are within 3e-11 rad of parallel: one direction */
    expect_counts(h, 5, 8, 5, 4, 0, "thin pyramid");
    imp_hull_destroy(h);
}

static void test_random_clouds(void **state) {
    (void)state;
    const uint64_t seed = 0x4811;
    uint64_t rng = seed;
    imp_vec3 *p = malloc(IMP_SHAPE_MAX_VERTICES * sizeof *p);
    assert_non_null(p);
    for (int c = 0; c < 400; ++c) {
        size_t n = c % 50 == 49 ? IMP_SHAPE_MAX_VERTICES : 4 + (size_t)(imp_rng_unit(&rng) * 200);
        int kind = c % 5;
        for (size_t i = 0; i < n; ++i) {
            imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                                imp_rng_uniform(&rng, -1, 1));
            if (kind == 1 || kind == 2) /* on a sphere: every point a vertex */
                v = imp_scale(v, 1 / imp_len(v));
            if (kind == 2) /* rounded to a coarse lattice: many coplanar faces */
                v = imp_v3(round(v.x * 4) / 4, round(v.y * 4) / 4, round(v.z * 4) / 4);
            if (kind == 3 && i > 0 && imp_rng_unit(&rng) < 0.3) /* repeated points */
                v = p[(size_t)(imp_rng_unit(&rng) * (double)i)];
            if (kind == 4) /* a flat-ish slab, scaled and moved */
                v = imp_add(imp_v3(100 * v.x, 100 * v.y, 0.01 * v.z), imp_v3(-50, 20, 7));
            p[i] = v;
        }
        if (imp_polyhedron_check(p, n) != 0) continue;
        char what[80];
        snprintf(what, sizeof what, "seed %#llx cloud %d (kind %d, %zu points)",
                 (unsigned long long)seed, c, kind, n);
        imp_hull *h = NULL;
        imp_hull_status st = imp_hull_build(p, n, &h, NULL);
        if (st != IMP_HULL_OK) fail_msg("%s: status %d", what, (int)st);
        check_hull(h, p, n, what);
        imp_hull_destroy(h);
    }
    free(p);
}

/* The decoder's one question: do these points make a polyhedron the solvers accept? */
static void test_polyhedron_validate(void **state) {
    (void)state;
    const imp_vec3 cube[8] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0},
                              {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    imp_error err = {-7, "poison"};
    assert_int_equal(imp_polyhedron_validate(cube, 8, NULL, &err), IMP_HULL_OK);
    assert_int_equal(err.code, -7); /* untouched on success */
    /* four points in one plane: the flatness check refuses them, and says so */
    const imp_vec3 flat[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    assert_int_equal(imp_polyhedron_validate(flat, 4, NULL, &err), IMP_HULL_DEGENERATE);
    assert_int_equal(err.code, IMP_HULL_DEGENERATE);
    assert_non_null(err.message);
    assert_int_equal(imp_polyhedron_validate(flat, 4, NULL, NULL), IMP_HULL_DEGENERATE);
    /* three distinct points, one repeated: not a solid */
    const imp_vec3 few[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}};
    assert_int_equal(imp_polyhedron_validate(few, 4, NULL, NULL), IMP_HULL_DEGENERATE);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cube_with_extra_points),
        cmocka_unit_test(test_tetrahedron),
        cmocka_unit_test(test_polyhedron_validate),
        cmocka_unit_test(test_platonic),
        cmocka_unit_test(test_grids),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_random_clouds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
