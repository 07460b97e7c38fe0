/*
 * test_scene.c - swept bounds and scene prediction in core.
 *
 * DESIGN
 * Swept bounds are checked against dense sampling of the path (they must
 * contain every sampled point, and be tight to the sampled extremes within
 * the sampling error). Scene prediction is checked against an independent
 * loop that calls imp_toi_spheres on every pair directly: same contacts,
 * same times (bit for bit), same order; for every broadphase kind, serial
 * and on a 2-thread runner, on uniform, clustered, accelerated, far-from-
 * origin and grazing scenes in 2D and 3D.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/scene.h"
#include "core/toi_rotating.h"
#include "core/toi_shapes.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

static void test_swept_bounds_parabola(void **state) {
    (void)state;
    /* thrown up at 10 m/s under g: apex at t = 10/9.81 inside [0, 3] */
    imp_motion m = {imp_v3(1, 2, 0), imp_v3(2, 10, 0), imp_v3(0, -9.81, 0)};
    imp_aabb b = imp_swept_bounds_sphere(&m, 0.5, 3.0, 2, 0.0);
    double apex = 2 + 10 * (10 / 9.81) - 0.5 * 9.81 * (10 / 9.81) * (10 / 9.81);
    assert_true(fabs(b.hi.y - (apex + 0.5)) < 1e-12);
    assert_true(fabs(b.lo.y - (2 + 10 * 3 - 0.5 * 9.81 * 9 - 0.5)) < 1e-12);
    assert_true(b.lo.x == 0.5 && b.hi.x == 7.5);
    assert_true(b.lo.z == 0 && b.hi.z == 0);
    /* random paths: every sample inside, extremes tight */
    uint64_t rng = 0xB0B;
    for (int k = 0; k < 2000; ++k) {
        imp_motion r;
        r.p = imp_v3(imp_rng_uniform(&rng, -5, 5), imp_rng_uniform(&rng, -5, 5),
                     imp_rng_uniform(&rng, -5, 5));
        r.v = imp_v3(imp_rng_uniform(&rng, -5, 5), imp_rng_uniform(&rng, -5, 5),
                     imp_rng_uniform(&rng, -5, 5));
        r.a = imp_v3(imp_rng_uniform(&rng, -20, 20), imp_rng_uniform(&rng, -20, 20),
                     imp_rng_uniform(&rng, -20, 20));
        double h = imp_rng_uniform(&rng, 0.1, 3), rad = imp_rng_uniform(&rng, 0, 1);
        imp_aabb bb = imp_swept_bounds_sphere(&r, rad, h, 3, 0.0);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        const int samples = 4000;
        for (int i = 0; i <= samples; ++i) {
            imp_vec3 p = imp_path_at(r.p, r.v, r.a, h * i / samples);
            double c[3] = {p.x, p.y, p.z};
            for (int a = 0; a < 3; ++a) {
                lo[a] = fmin(lo[a], c[a] - rad);
                hi[a] = fmax(hi[a], c[a] + rad);
            }
        }
        double blo[3] = {bb.lo.x, bb.lo.y, bb.lo.z}, bhi[3] = {bb.hi.x, bb.hi.y, bb.hi.z};
        for (int a = 0; a < 3; ++a) {
            if (blo[a] > lo[a] + 1e-12 || bhi[a] < hi[a] - 1e-12)
                fail_msg("seed 0xB0B case %d axis %d: sample outside the bounds", k, a);
            /* sampling step error: |v| h/N + |a| (h/N)^2 is below 1e-2 here */
            if (lo[a] - blo[a] > 1e-2 || bhi[a] - hi[a] > 1e-2)
                fail_msg("seed 0xB0B case %d axis %d: bounds not tight", k, a);
        }
    }
}

/* ---- a 2-thread runner ------------------------------------------------------------------- */

typedef struct half {
    imp_range_fn fn;
    void *ctx;
    size_t n, grain, start; /* this thread takes chunks start, start+2, ... */
} half;

static void *run_half(void *arg) {
    half *h = arg;
    for (size_t b = h->start * h->grain; b < h->n; b += 2 * h->grain)
        h->fn(h->ctx, b, b + h->grain < h->n ? b + h->grain : h->n);
    return NULL;
}

static void two_threads(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx) {
    (void)runner;
    if (grain == 0) grain = 1;
    half h[2] = {{fn, ctx, n, grain, 0}, {fn, ctx, n, grain, 1}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_half, &h[1]), 0);
    run_half(&h[0]);
    pthread_join(t, NULL);
}

/* ---- scenes ------------------------------------------------------------------------------ */

typedef enum scene_kind { UNIFORM, CLUSTERED, FAR, GRAZING } scene_kind;

static imp_scene_body *make_scene(uint64_t *rng, size_t n, int dim, scene_kind kind) {
    imp_scene_body *b = calloc(n, sizeof *b);
    double side = dim == 2 ? sqrt((double)n) * 3 : cbrt((double)n) * 3;
    for (size_t i = 0; i < n; ++i) {
        double off = kind == FAR ? 1e6 : 0;
        double c[3];
        for (int k = 0; k < 3; ++k)
            c[k] = off + imp_rng_uniform(rng, 0, side);
        if (kind == CLUSTERED)
            for (int k = 0; k < 3; ++k)
                c[k] = (double)(i % 5) * 100 + c[k] * 0.1;
        b[i].m.p = imp_v3(c[0], c[1], dim == 3 ? c[2] : 0);
        b[i].m.v = imp_v3(imp_rng_uniform(rng, -2, 2), imp_rng_uniform(rng, -2, 2),
                          dim == 3 ? imp_rng_uniform(rng, -2, 2) : 0);
        if (imp_rng_unit(rng) < 0.3) b[i].m.a = imp_v3(0, -9.81, 0);
        b[i].radius = imp_rng_uniform(rng, 0, 0.8);
        b[i].is_static = imp_rng_unit(rng) < 0.1;
    }
    if (kind == GRAZING) {
        /* pairs that graze exactly: b passes a at distance ra + rb, tangent at t = 1 */
        for (size_t i = 0; i + 1 < n; i += 2) {
            double y = b[i].m.p.y + b[i].radius + b[i + 1].radius;
            b[i].m.v = b[i].m.a = imp_v3(0, 0, 0);
            b[i + 1].m.p = imp_v3(b[i].m.p.x - 1, y, b[i].m.p.z);
            b[i + 1].m.v = imp_v3(1, 0, 0);
            b[i + 1].m.a = imp_v3(0, 0, 0);
            b[i].is_static = b[i + 1].is_static = 0;
        }
    }
    return b;
}

static int cmp_contact(const imp_scene_contact *x, const imp_scene_contact *y) {
    return x->a == y->a && x->b == y->b && x->time == y->time && x->depth == y->depth &&
           x->normal.x == y->normal.x && x->normal.y == y->normal.y && x->normal.z == y->normal.z &&
           x->point.x == y->point.x && x->point.y == y->point.y && x->point.z == y->point.z;
}

/* Every pair through imp_toi_spheres, in (a, b) order: the reference. */
static void reference(const imp_scene_body *b, size_t n, double h, size_t *hits, size_t *overlaps) {
    *hits = *overlaps = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            if (b[i].is_static && b[j].is_static) continue;
            imp_toi_spheres_input q = {b[i].m, b[j].m, b[i].radius, b[j].radius, h};
            imp_toi_result r = imp_toi_spheres(&q);
            *hits += r.state == IMP_TOI_HIT;
            *overlaps += r.state == IMP_TOI_OVERLAPPING;
        }
}

static void test_scene_equals_every_pair(void **state) {
    (void)state;
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH, IMP_BROAD_AUTO};
    const imp_parallel runner = {two_threads, NULL, {NULL, NULL}};
    const uint64_t seed = 0x5CE4E;
    uint64_t rng = seed;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int kind = UNIFORM; kind <= GRAZING; ++kind) {
            const size_t n = 600;
            imp_scene_body *b = make_scene(&rng, n, dim, (scene_kind)kind);
            size_t hits, overlaps;
            reference(b, n, 2.0, &hits, &overlaps);
            imp_scene_output ref;
            memset(&ref, 0, sizeof ref);
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
                for (int threaded = 0; threaded <= 1; ++threaded) {
                    imp_scene_input in = {
                        b, n, dim, 2.0, kinds[k], SIZE_MAX, threaded ? &runner : NULL, NULL};
                    imp_scene_output out;
                    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
                    assert_true(out.kind != IMP_BROAD_AUTO);
                    if (out.n_collisions != hits || out.n_overlapping != overlaps)
                        fail_msg("seed %#llx dim %d scene %d %s threaded %d: %zu/%zu contacts, "
                                 "every pair gives %zu/%zu",
                                 (unsigned long long)seed, dim, kind, imp_broadphase_name(kinds[k]),
                                 threaded, out.n_collisions, out.n_overlapping, hits, overlaps);
                    for (size_t i = 1; i < out.n_collisions; ++i)
                        assert_true(out.collisions[i - 1].time <= out.collisions[i].time);
                    if (k == 0 && !threaded) {
                        ref = out;
                        continue;
                    }
                    for (size_t i = 0; i < out.n_collisions; ++i)
                        if (!cmp_contact(&out.collisions[i], &ref.collisions[i]))
                            fail_msg("seed %#llx dim %d scene %d %s: collision %zu differs",
                                     (unsigned long long)seed, dim, kind,
                                     imp_broadphase_name(kinds[k]), i);
                    for (size_t i = 0; i < out.n_overlapping; ++i)
                        assert_true(cmp_contact(&out.overlapping[i], &ref.overlapping[i]));
                    imp_scene_output_free(&out);
                }
            }
            assert_true(hits > 0);
            imp_scene_output_free(&ref);
            free(b);
        }
    }
}

static void test_too_many_pairs(void **state) {
    (void)state;
    imp_scene_body b[50];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 50; ++i)
        b[i].radius = 1;
    imp_scene_input in = {b, 50, 2, 1.0, IMP_BROAD_GRID, 100, NULL, NULL};
    imp_scene_output out;
    imp_error err = {-1, NULL}; /* poisoned: the failure must fill it */
    assert_int_equal(imp_scene_predict(&in, &out, &err), IMP_SCENE_TOO_MANY);
    assert_null(out.collisions);
    assert_int_equal(err.code, IMP_SCENE_TOO_MANY);
    assert_non_null(err.message);
    in.max_pairs = 50 * 49 / 2;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    assert_int_equal(out.n_overlapping, 50 * 49 / 2);
    assert_int_equal(out.candidate_pairs, 50 * 49 / 2);
    imp_scene_output_free(&out);
    in.n = 0;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    assert_int_equal(out.n_collisions + out.n_overlapping, 0);
    imp_scene_output_free(&out);
}

/* brute examines every pair but static-static ones, boxes or not, and its
 * count is bounded by max_pairs like any broadphase's. */
static void test_brute_examines_every_pair(void **state) {
    (void)state;
    enum { N = 40, STATIC = 10 };
    imp_scene_body b[N];
    memset(b, 0, sizeof b);
    for (int i = 0; i < N; ++i) {
        b[i].m.p = imp_v3(1000.0 * i, 0, 0); /* far apart: no box overlaps */
        b[i].radius = 1;
        b[i].is_static = i < STATIC;
    }
    const size_t expect = N * (N - 1) / 2 - STATIC * (STATIC - 1) / 2;
    imp_scene_input in = {b, N, 2, 1.0, IMP_BROAD_BRUTE, SIZE_MAX, NULL, NULL};
    imp_scene_output out;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    assert_int_equal(out.candidate_pairs, expect);
    assert_int_equal(out.n_collisions + out.n_overlapping, 0);
    assert_int_equal(out.kind, IMP_BROAD_BRUTE);
    imp_scene_output_free(&out);
    in.kind = IMP_BROAD_GRID;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    assert_int_equal(out.candidate_pairs, 0);
    imp_scene_output_free(&out);
    in.kind = IMP_BROAD_BRUTE;
    in.max_pairs = expect - 1;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_TOO_MANY);
    assert_null(out.collisions);
}

/* ---- scenes of every shape, and walls ----------------------------------------------------- */

#define MIX_N 400

typedef struct mixed {
    int dim, walls;
    imp_scene_body b[MIX_N];
    imp_shape s[MIX_N];
    imp_vec3 v[MIX_N][8];
} mixed;

/* Boxes, polygons (polyhedra in 3D), capsules, segments (capsules in 3D, where
 * two segments have no closed form) and spheres moving (some accelerated, some
 * static) inside a room of static halfspace walls (the last 2 * dim). */
static void make_mixed(uint64_t *rng, mixed *m, int dim) {
    const double side = 40;
    memset(m, 0, sizeof *m);
    m->dim = dim, m->walls = 2 * dim;
    for (int i = 0; i < MIX_N - m->walls; ++i) {
        imp_shape *s = &m->s[i];
        double size = imp_rng_uniform(rng, 0.2, 1.5);
        switch (i % 5) {
        case 0: *s = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = size}; break;
        case 1:
            *s = (imp_shape){.type = IMP_SHAPE_BOX,
                             .half = imp_v3(size, imp_rng_uniform(rng, 0.2, 1.5),
                                            dim == 3 ? imp_rng_uniform(rng, 0.2, 1.5) : 0),
                             .rot = dim == 3 ? random_rotation(rng)
                                             : imp_quat_from_angle(imp_rng_uniform(rng, -3, 3))};
            break;
        case 2: {
            size_t n = dim == 3 ? 8 : 3 + (size_t)(imp_rng_unit(rng) * 4);
            for (size_t k = 0; k < n; ++k) {
                double a =
                    6.283185307179586 * ((double)k + imp_rng_uniform(rng, -0.3, 0.3)) / (double)n;
                m->v[i][k] = dim == 3 ? imp_scale(random_unit(rng), size)
                                      : imp_v3(size * cos(a), size * sin(a), 0);
            }
            *s = (imp_shape){.type = dim == 3 ? IMP_SHAPE_POLYHEDRON : IMP_SHAPE_POLYGON,
                             .verts = m->v[i],
                             .n_verts = n};
            break;
        }
        default: {
            imp_vec3 e = imp_scale(random_dir(rng, dim), size);
            int round = i % 5 == 3 || dim == 3;
            *s = (imp_shape){.type = round ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT,
                             .a = imp_neg(e),
                             .b = e,
                             .radius = round ? imp_rng_uniform(rng, 0.05, 0.5) : 0};
        }
        }
        imp_scene_body *b = &m->b[i];
        b->shape = i % 5 == 0 ? NULL : s;
        b->radius = s->radius;
        for (int k = 0; k < 3; ++k) {
            double *p = k == 0 ? &b->m.p.x : k == 1 ? &b->m.p.y : &b->m.p.z;
            double *v = k == 0 ? &b->m.v.x : k == 1 ? &b->m.v.y : &b->m.v.z;
            *p = k < dim ? imp_rng_uniform(rng, 2, side - 2) : 0;
            *v = k < dim ? imp_rng_uniform(rng, -3, 3) : 0;
        }
        if (i % 3 == 0) b->m.a = imp_v3(0, -2, 0);
        b->is_static = i % 11 == 0;
    }
    for (int w = 0; w < m->walls; ++w) { /* the solid outside the room: n.x <= offset */
        int i = MIX_N - m->walls + w;
        double sign = w % 2 ? -1 : 1;
        imp_vec3 n = imp_v3(w / 2 == 0 ? sign : 0, w / 2 == 1 ? sign : 0, w / 2 == 2 ? sign : 0);
        m->s[i] =
            (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = w % 2 ? -side : 0};
        m->b[i] = (imp_scene_body){.shape = &m->s[i], .is_static = 1};
    }
}

static void test_mixed_shapes_and_walls(void **state) {
    (void)state;
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH, IMP_BROAD_AUTO};
    const imp_parallel runner = {two_threads, NULL, {NULL, NULL}};
    const uint64_t seed = 0x3A11;
    uint64_t rng = seed;
    mixed *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int round = 0; round < 6; ++round) {
        int dim = round < 3 ? 2 : 3;
        make_mixed(&rng, m, dim);
        /* the reference: imp_toi_shapes on every pair that is not two static bodies */
        size_t hits = 0, overlaps = 0, wall_hits = 0;
        for (int i = 0; i < MIX_N; ++i)
            for (int j = i + 1; j < MIX_N; ++j) {
                if (m->b[i].is_static && m->b[j].is_static) continue;
                imp_shape si = {.type = IMP_SHAPE_SPHERE, .radius = m->b[i].radius};
                imp_shape sj = {.type = IMP_SHAPE_SPHERE, .radius = m->b[j].radius};
                const imp_shape *a = m->b[i].shape ? m->b[i].shape : &si;
                const imp_shape *b = m->b[j].shape ? m->b[j].shape : &sj;
                imp_toi_result r = imp_toi_shapes(a, &m->b[i].m, b, &m->b[j].m, dim, 2.0);
                assert_true(r.state != IMP_TOI_FAILED && r.tolerance == 0.0);
                hits += r.state == IMP_TOI_HIT;
                overlaps += r.state == IMP_TOI_OVERLAPPING;
                wall_hits += r.state == IMP_TOI_HIT && j >= MIX_N - m->walls;
            }
        imp_scene_output ref;
        memset(&ref, 0, sizeof ref);
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
            for (int threaded = 0; threaded <= 1; ++threaded) {
                imp_scene_input in = {
                    m->b, MIX_N, dim, 2.0, kinds[k], SIZE_MAX, threaded ? &runner : NULL, NULL};
                imp_scene_output out;
                assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
                if (out.n_collisions != hits || out.n_overlapping != overlaps)
                    fail_msg("seed %#llx round %d (%dD) %s threaded %d: %zu/%zu contacts, every "
                             "pair gives %zu/%zu",
                             (unsigned long long)seed, round, dim, imp_broadphase_name(kinds[k]),
                             threaded, out.n_collisions, out.n_overlapping, hits, overlaps);
                if (k == 0 && !threaded) {
                    ref = out;
                    continue;
                }
                for (size_t i = 0; i < out.n_collisions; ++i)
                    if (!cmp_contact(&out.collisions[i], &ref.collisions[i]))
                        fail_msg("seed %#llx round %d %s: collision %zu differs",
                                 (unsigned long long)seed, round, imp_broadphase_name(kinds[k]), i);
                imp_scene_output_free(&out);
            }
        }
        print_message("round %d (%dD): %zu hits (%zu on walls), %zu overlapping\n", round, dim,
                      hits, wall_hits, overlaps);
        assert_true(hits > 20 && wall_hits > 5);
        imp_scene_output_free(&ref);
    }
    free(m);
}

/* ---- filters ----------------------------------------------------------------------------- */

/* Box2D's rule, case by case. */
static void test_filter_rule(void **state) {
    (void)state;
    imp_filter def = IMP_FILTER_DEFAULT, wall = {4, 0xffffffffu, 0}, ghost = {2, 0x2, 0};
    assert_true(imp_filter_touch(NULL, NULL) && imp_filter_touch(&def, NULL));
    assert_true(imp_filter_is_default(NULL) && imp_filter_is_default(&def));
    assert_false(imp_filter_is_default(&wall));
    assert_true(imp_filter_touch(&wall, NULL));    /* wall's mask has 1, default's mask has 4 */
    assert_false(imp_filter_touch(&ghost, NULL));  /* ghost's mask lacks 1 */
    assert_false(imp_filter_touch(NULL, &ghost));  /* symmetric */
    assert_true(imp_filter_touch(&ghost, &ghost)); /* 2 & 2 */
    /* the same negative group never touches, even with matching masks */
    imp_filter neg = {1, 0xffffffffu, -7}, pos = {1, 0, 5};
    assert_false(imp_filter_touch(&neg, &neg));
    assert_true(imp_filter_touch(&neg, NULL)); /* other groups: the bits decide */
    imp_filter neg2 = {1, 0xffffffffu, -8};
    assert_true(imp_filter_touch(&neg, &neg2));
    /* the same positive group always touches, even with masks that exclude each other */
    assert_true(imp_filter_touch(&pos, &pos));
    assert_false(imp_filter_touch(&pos, NULL)); /* pos's mask is 0 */
}

/* A few filters: default, categories 1-3 with various masks, positive and negative groups. */
static const imp_filter FILTERS[] = {
    {1, 0xffffffffu, 0}, {2, 0x3, 0}, {4, 0x6, 0},  {2, 0x2, 0}, {1, 0x1, -1},
    {2, 0x0, 1},         {4, 0x5, 0}, {1, 0x4, -1}, {2, 0x1, 1}, {1, 0xffffffffu, -2},
};

/* Every pair that may touch (filters and statics) through the pairwise solver the scene
 * uses: hits sorted by (time, a, b), overlaps in (a, b) order. */
static void filtered_reference(const imp_scene_body *b, size_t n, int dim, double h,
                               imp_scene_output *out) {
    memset(out, 0, sizeof *out);
    out->collisions = malloc(n * n / 2 * sizeof *out->collisions + 1);
    out->overlapping = malloc(n * n / 2 * sizeof *out->overlapping + 1);
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            if ((b[i].is_static && b[j].is_static) || !imp_filter_touch(b[i].filter, b[j].filter))
                continue;
            imp_toi_result r;
            if (!b[i].shape && !b[j].shape) {
                imp_toi_spheres_input q = {b[i].m, b[j].m, b[i].radius, b[j].radius, h};
                r = imp_toi_spheres(&q);
            } else {
                imp_shape si = {.type = IMP_SHAPE_SPHERE, .radius = b[i].radius};
                imp_shape sj = {.type = IMP_SHAPE_SPHERE, .radius = b[j].radius};
                r = imp_toi_shapes(b[i].shape ? b[i].shape : &si, &b[i].m,
                                   b[j].shape ? b[j].shape : &sj, &b[j].m, dim, h);
            }
            imp_scene_contact c = {.a = (uint32_t)i,
                                   .b = (uint32_t)j,
                                   .time = r.time,
                                   .point = r.point,
                                   .normal = r.normal,
                                   .depth = r.depth};
            if (r.state == IMP_TOI_HIT) out->collisions[out->n_collisions++] = c;
            if (r.state == IMP_TOI_OVERLAPPING) out->overlapping[out->n_overlapping++] = c;
        }
    /* insertion sort by (time, a, b): stable, no comparator shared with the code under test */
    for (size_t k = 1; k < out->n_collisions; ++k) {
        imp_scene_contact c = out->collisions[k];
        size_t q = k;
        while (q > 0 && (out->collisions[q - 1].time > c.time ||
                         (out->collisions[q - 1].time == c.time &&
                          (out->collisions[q - 1].a > c.a ||
                           (out->collisions[q - 1].a == c.a && out->collisions[q - 1].b > c.b))))) {
            out->collisions[q] = out->collisions[q - 1];
            --q;
        }
        out->collisions[q] = c;
    }
}

static void expect_same_output(const imp_scene_output *got, const imp_scene_output *want,
                               const char *what, unsigned long long seed, int round,
                               imp_broadphase_kind kind) {
    if (got->n_collisions != want->n_collisions || got->n_overlapping != want->n_overlapping)
        fail_msg("seed %#llx %s round %d %s: %zu/%zu contacts, the reference gives %zu/%zu", seed,
                 what, round, imp_broadphase_name(kind), got->n_collisions, got->n_overlapping,
                 want->n_collisions, want->n_overlapping);
    for (size_t i = 0; i < got->n_collisions; ++i)
        if (!cmp_contact(&got->collisions[i], &want->collisions[i]) ||
            got->collisions[i].tolerance != want->collisions[i].tolerance)
            fail_msg("seed %#llx %s round %d %s: collision %zu differs", seed, what, round,
                     imp_broadphase_name(kind), i);
    for (size_t i = 0; i < got->n_overlapping; ++i)
        if (!cmp_contact(&got->overlapping[i], &want->overlapping[i]))
            fail_msg("seed %#llx %s round %d %s: overlap %zu differs", seed, what, round,
                     imp_broadphase_name(kind), i);
}

/* Each of kinds, on one thread and on two, gives want for in's bodies. */
static void expect_every_kind(imp_scene_input in, const imp_broadphase_kind *kinds, size_t n_kinds,
                              const imp_scene_output *want, const char *what,
                              unsigned long long seed, int round) {
    const imp_parallel runner = {two_threads, NULL, {NULL, NULL}};
    for (size_t k = 0; k < n_kinds; ++k)
        for (int threaded = 0; threaded <= 1; ++threaded) {
            in.kind = kinds[k];
            in.par = threaded ? &runner : NULL;
            imp_scene_output out;
            assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
            expect_same_output(&out, want, what, seed, round, kinds[k]);
            imp_scene_output_free(&out);
        }
}

/* ---- large scenes ------------------------------------------------------------------------ */

/* Contacts in the output's order, checked on their own: hits by (time, a, world, b,
 * index), overlaps by (a, world, b, index), each strictly. */
static int contact_before(const imp_scene_contact *x, const imp_scene_contact *y, int by_time) {
    if (by_time && x->time != y->time) return x->time < y->time;
    if (x->a != y->a) return x->a < y->a;
    if (x->world != y->world) return y->world;
    if (x->b != y->b) return x->b < y->b;
    return x->index < y->index;
}

/* Body k of a large scene: a box (in box) every 40th, and every 7th body a filter that
 * keeps it from every 7th (marked: every 14th of them). */
static void dress_body(imp_scene_body *b, imp_shape *box, size_t k, int dim,
                       const imp_filter *apart, const imp_filter *marked) {
    if (k % 40 == 5) {
        *box = (imp_shape){.type = IMP_SHAPE_BOX,
                           .half = imp_v3(0.4, 0.3, dim == 3 ? 0.5 : 0),
                           .rot = imp_quat_from_angle(0.3)};
        b->shape = box;
    }
    if (k % 7 == 3) b->filter = k % 14 == 3 ? marked : apart;
}

/* A scene with thousands of contacts, sorted by join's radix sort: every broadphase, one
 * thread and two, gives brute force's contacts bit for bit, and brute force's come in
 * order (checked on their own). Spheres (a tenth static) with a box every 40th body, a
 * filter that keeps every 7th body from every 7th, and a floor; in 2D the pairs of GRAZING
 * touch at exactly t = 1, so that many hits share a time. */
static void test_large_scene_equals_brute(void **state) {
    (void)state;
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_GRID, IMP_BROAD_SAP, IMP_BROAD_BVH,
                                                IMP_BROAD_AUTO};
    const imp_parallel runner = {two_threads, NULL, {NULL, NULL}};
    const uint64_t seed = 0x1A265CE;
    uint64_t rng = seed;
    const size_t n = 2500;
    const imp_filter apart = {1u, ~2u, 0}, marked = {2u, ~2u, 0};
    for (int dim = 2; dim <= 3; ++dim) {
        {
            int kind = dim == 2 ? GRAZING : UNIFORM;
            imp_scene_body *b = make_scene(&rng, n, dim, (scene_kind)kind);
            imp_shape *box = calloc(n, sizeof *box);
            assert_non_null(box);
            for (size_t i = 0; i < n; ++i)
                dress_body(&b[i], &box[i], i, dim, &apart, &marked);
            box[n - 1] =
                (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = imp_v3(0, 1, 0), .offset = 2.0};
            b[n - 1] = (imp_scene_body){.shape = &box[n - 1], .is_static = 1};
            imp_scene_input in = {b, n, dim, 2.0, IMP_BROAD_BRUTE, SIZE_MAX, &runner, NULL};
            imp_scene_output ref;
            assert_int_equal(imp_scene_predict(&in, &ref, NULL), IMP_SCENE_OK);
            for (size_t i = 1; i < ref.n_collisions; ++i)
                assert_true(contact_before(&ref.collisions[i - 1], &ref.collisions[i], 1));
            for (size_t i = 1; i < ref.n_overlapping; ++i)
                assert_true(contact_before(&ref.overlapping[i - 1], &ref.overlapping[i], 0));
            size_t tied = 0;
            for (size_t i = 1; i < ref.n_collisions; ++i)
                tied += ref.collisions[i - 1].time == ref.collisions[i].time;
            print_message("seed %#llx %dD scene %d: %zu hits (%zu tied with the one before), "
                          "%zu overlapping\n",
                          (unsigned long long)seed, dim, kind, ref.n_collisions, tied,
                          ref.n_overlapping);
            assert_true(ref.n_collisions > 500 && ref.n_overlapping > 200); /* radix sorted */
            assert_true(kind != GRAZING || tied > 300);
            expect_every_kind(in, kinds, sizeof kinds / sizeof kinds[0], &ref, "large",
                              (unsigned long long)seed, dim);
            imp_scene_output_free(&ref);
            free(box);
            free(b);
        }
    }
}

/* Contacts compared in the output's order (contact_before's), for qsort. */
static int by_output_order(const void *x, const void *y) {
    const imp_scene_contact *p = x, *q = y;
    return contact_before(p, q, 1) ? -1 : contact_before(q, p, 1) ? 1 : 0;
}

/* A scene of many tasks' worth of bodies (the swept bounds go over the runner in chunks of
 * 16,384, the broadphase's pairs in many blocks), with its one halfspace past the first
 * chunk: COPIES scenes of SLICE bodies (spheres, a tenth static, a box every 40th, filters
 * that keep every 7th body from every 7th) side by side, 1e4 apart so that no pair crosses
 * from one to another, and a floor last. Each slice with the floor is a scene of one chunk
 * (checked against brute force above); the whole scene's contacts, on every broadphase,
 * one thread and two, are theirs bit for bit, renumbered. */
static void test_large_scene_equals_its_slices(void **state) {
    (void)state;
    enum { SLICE = 2500, COPIES = 8 };
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_GRID, IMP_BROAD_SAP, IMP_BROAD_BVH,
                                                IMP_BROAD_AUTO};
    const uint64_t seed = 0x50127ED;
    uint64_t rng = seed;
    const size_t n = SLICE * COPIES + 1;
    const imp_filter apart = {1u, ~2u, 0}, marked = {2u, ~2u, 0};
    for (int dim = 2; dim <= 3; ++dim) {
        imp_scene_body *b = calloc(n, sizeof *b);
        imp_shape *box = calloc(n, sizeof *box);
        assert_true(b && box);
        for (size_t c = 0; c < COPIES; ++c) {
            imp_scene_body *part = make_scene(&rng, SLICE, dim, UNIFORM);
            for (size_t i = 0; i < SLICE; ++i) {
                size_t k = c * SLICE + i;
                b[k] = part[i];
                b[k].m.p.x += 1e4 * (double)c;
                dress_body(&b[k], &box[k], k, dim, &apart, &marked);
            }
            free(part);
        }
        box[n - 1] =
            (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = imp_v3(0, 1, 0), .offset = 2.0};
        b[n - 1] = (imp_scene_body){.shape = &box[n - 1], .is_static = 1};
        /* the reference: each slice and the floor, renumbered and put in the output's order */
        imp_scene_output want = {0};
        want.collisions = malloc(1);
        want.overlapping = malloc(1);
        imp_scene_body *slice = malloc((SLICE + 1) * sizeof *slice);
        assert_true(want.collisions && want.overlapping && slice);
        for (size_t c = 0; c < COPIES; ++c) {
            memcpy(slice, b + c * SLICE, SLICE * sizeof *slice);
            slice[SLICE] = b[n - 1];
            imp_scene_input in = {slice, SLICE + 1, dim, 2.0, IMP_BROAD_GRID, SIZE_MAX, NULL, NULL};
            imp_scene_output part;
            assert_int_equal(imp_scene_predict(&in, &part, NULL), IMP_SCENE_OK);
            for (int o = 0; o < 2; ++o) {
                imp_scene_contact **v = o ? &want.overlapping : &want.collisions;
                size_t *nv = o ? &want.n_overlapping : &want.n_collisions;
                size_t m = o ? part.n_overlapping : part.n_collisions;
                *v = realloc(*v, (*nv + m) * sizeof **v);
                assert_non_null(*v);
                for (size_t i = 0; i < m; ++i) {
                    imp_scene_contact x = o ? part.overlapping[i] : part.collisions[i];
                    x.a = x.a == SLICE ? (uint32_t)(n - 1) : (uint32_t)(c * SLICE + x.a);
                    x.b = x.b == SLICE ? (uint32_t)(n - 1) : (uint32_t)(c * SLICE + x.b);
                    (*v)[(*nv)++] = x;
                }
            }
            imp_scene_output_free(&part);
        }
        qsort(want.collisions, want.n_collisions, sizeof *want.collisions, by_output_order);
        qsort(want.overlapping, want.n_overlapping, sizeof *want.overlapping, by_output_order);
        size_t floor_hits = 0;
        for (size_t i = 0; i < want.n_collisions; ++i)
            floor_hits += want.collisions[i].b == n - 1;
        print_message(
            "seed %#llx %dD: %zu bodies, %zu hits (%zu with the floor), %zu overlapping\n",
            (unsigned long long)seed, dim, n, want.n_collisions, floor_hits, want.n_overlapping);
        assert_true(want.n_collisions > 5000 && floor_hits > 100 && want.n_overlapping > 1000);
        imp_scene_input in = {b, n, dim, 2.0, IMP_BROAD_GRID, SIZE_MAX, NULL, NULL};
        expect_every_kind(in, kinds, sizeof kinds / sizeof kinds[0], &want, "slices",
                          (unsigned long long)seed, dim);
        imp_scene_output_free(&want);
        free(slice);
        free(box);
        free(b);
    }
}

/* Each body's first contact, found independently of imp_scene_first_per_body. */
static void check_first_per_body(const imp_scene_output *all, size_t n) {
    imp_scene_output first = *all;
    first.collisions = malloc((all->n_collisions + 1) * sizeof *first.collisions);
    memcpy(first.collisions, all->collisions, all->n_collisions * sizeof *first.collisions);
    assert_int_equal(imp_scene_first_per_body(&first, n), 0);
    size_t want = 0;
    for (size_t k = 0; k < all->n_collisions; ++k) {
        const imp_scene_contact *c = &all->collisions[k];
        int first_of_a = 1, first_of_b = 1;
        for (size_t q = 0; q < k; ++q) {
            const imp_scene_contact *e = &all->collisions[q];
            if (e->a == c->a || e->b == c->a) first_of_a = 0;
            if (e->a == c->b || e->b == c->b) first_of_b = 0;
        }
        if (!first_of_a && !first_of_b) continue;
        assert_true(want < first.n_collisions);
        assert_true(cmp_contact(&first.collisions[want], c));
        ++want;
    }
    assert_int_equal(first.n_collisions, want);
    free(first.collisions);
}

/* Scenes with filters equal the filtered pairs' answers for every broadphase, bit for bit;
 * spheres (make_scene) and mixed shapes with walls (make_mixed). */
static void test_filtered_scene_equals_filtered_pairs(void **state) {
    (void)state;
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH, IMP_BROAD_AUTO};
    const uint64_t seed = 0xF117E5;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    mixed *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int round = 0; round < 8; ++round) {
        int dim = round % 2 ? 3 : 2, sphere_scene = round < 4;
        size_t n = sphere_scene ? 400 : MIX_N;
        imp_scene_body *b = NULL;
        if (sphere_scene) {
            b = make_scene(&rng, n, dim, round < 2 ? UNIFORM : CLUSTERED);
        } else {
            make_mixed(&rng, m, dim);
            b = m->b;
        }
        size_t unfiltered = 0;
        for (size_t i = 0; i < n; ++i) {
            size_t f = (size_t)(imp_rng_unit(&rng) * 10.0);
            b[i].filter = f < 10 && f > 0 ? &FILTERS[f] : NULL;
            unfiltered += b[i].filter == NULL;
        }
        imp_scene_output want;
        filtered_reference(b, n, dim, 2.0, &want);
        imp_scene_input in = {b, n, dim, 2.0, IMP_BROAD_AUTO, SIZE_MAX, NULL, NULL};
        expect_every_kind(in, kinds, sizeof kinds / sizeof kinds[0], &want,
                          sphere_scene ? "spheres" : "mixed", (unsigned long long)seed, round);
        print_message("round %d (%dD, %s): %zu hits, %zu overlapping, %zu default filters\n", round,
                      dim, sphere_scene ? "spheres" : "mixed", want.n_collisions,
                      want.n_overlapping, unfiltered);
        assert_true(want.n_collisions > 10);
        check_first_per_body(&want, n);
        imp_scene_output_free(&want);
        if (sphere_scene) free(b);
    }
    free(m);
}

/* Swept bounds of every shape contain the shape at every sampled time. */
static void test_swept_bounds_shapes(void **state) {
    (void)state;
    const uint64_t seed = 0xB0B5;
    uint64_t rng = seed;
    mixed *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int dim = 2; dim <= 3; ++dim) {
        make_mixed(&rng, m, dim);
        for (int i = 0; i < MIX_N - m->walls; ++i) {
            const imp_shape *s = &m->s[i];
            imp_aabb box = imp_swept_bounds_shape(&m->b[i].m, s, 2.0, dim, 0.0);
            imp_vec3 buf[8];
            const imp_vec3 *pts;
            double r;
            size_t n = imp_shape_points(s, dim, buf, &pts, &r);
            for (int k = 0; k <= 200; ++k) {
                imp_vec3 c = imp_path_at(m->b[i].m.p, m->b[i].m.v, m->b[i].m.a, 2.0 * k / 200);
                for (size_t j = 0; j < n; ++j)
                    for (int q = 0; q < 26; ++q) { /* the rounded boundary around each point */
                        imp_vec3 d = dim == 2 ? imp_v3(cos(q * 0.2417), sin(q * 0.2417), 0)
                                              : imp_normalize_or(imp_v3(q % 3 - 1, q / 3 % 3 - 1,
                                                                        q / 9 - 1 + (q == 13)),
                                                                 imp_v3(0, 0, 1));
                        imp_vec3 x = imp_madd(imp_add(c, pts[j]), d, r);
                        if (x.x < box.lo.x - 1e-12 || x.x > box.hi.x + 1e-12 ||
                            x.y < box.lo.y - 1e-12 || x.y > box.hi.y + 1e-12 ||
                            x.z < box.lo.z - 1e-12 || x.z > box.hi.z + 1e-12)
                            fail_msg(
                                "seed %#llx %dD body %d: a point of the shape leaves its swept "
                                "bounds",
                                (unsigned long long)seed, dim, i);
                    }
            }
        }
    }
    free(m);
}

/* ---- turning bodies ---------------------------------------------------------------------- */

/* Random angular velocities for the bodies of a mixed scene (walls excepted): slow (up to 3
 * rad/s) for most, fast (up to 40 rad/s) for one in five; spheres turn too (nothing moves). */
static void spin_mixed(uint64_t *rng, mixed *m) {
    for (int i = 0; i < MIX_N - m->walls; ++i) {
        double mag = imp_rng_uniform(rng, 0.2, 3.0) * (i % 5 == 4 ? 13.0 : 1.0);
        if (imp_rng_unit(rng) < 0.1) mag = 0.0;
        m->b[i].w = m->dim == 2 ? imp_v3(0, 0, imp_rng_unit(rng) < 0.5 ? -mag : mag)
                                : imp_scale(random_unit(rng), mag);
    }
}

static int box_holds(const imp_aabb *b, imp_vec3 x, double eps) {
    return !(x.x < b->lo.x - eps || x.x > b->hi.x + eps || x.y < b->lo.y - eps ||
             x.y > b->hi.y + eps || x.z < b->lo.z - eps || x.z > b->hi.z + eps);
}

/* Swept bounds of turning shapes hold the turned shape at every sampled time (its points and
 * the rounded boundary about them); each bound is no larger than the bounding sphere's sweep;
 * exact values for a spin about z in 3D (the z range is the shape's own) and a short turn in
 * 2D (the start box grown by the chord). */
static void test_swept_bounds_turning(void **state) {
    (void)state;
    const uint64_t seed = 0x7B0B5;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    mixed *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int dim = 2; dim <= 3; ++dim) {
        make_mixed(&rng, m, dim);
        spin_mixed(&rng, m);
        for (int i = 0; i < MIX_N - m->walls; ++i) {
            const imp_shape *s = &m->s[i];
            double h = i % 2 ? 2.0 : 0.05; /* long turns and short ones */
            imp_aabb box = imp_swept_bounds_turning(&m->b[i].m, s, m->b[i].w, h, dim, 0.0);
            imp_vec3 buf[8], turned[8];
            const imp_vec3 *pts;
            double r;
            size_t n = imp_shape_points(s, dim, buf, &pts, &r);
            imp_aabb ball =
                imp_swept_bounds_sphere(&m->b[i].m, imp_shape_extent(s, dim), h, dim, 0.0);
            assert_true(box.lo.x >= ball.lo.x - 1e-12 && box.hi.x <= ball.hi.x + 1e-12);
            assert_true(box.lo.y >= ball.lo.y - 1e-12 && box.hi.y <= ball.hi.y + 1e-12);
            assert_true(box.lo.z >= ball.lo.z - 1e-12 && box.hi.z <= ball.hi.z + 1e-12);
            for (int k = 0; k <= 400; ++k) {
                double t = h * k / 400;
                imp_vec3 c = imp_path_at(m->b[i].m.p, m->b[i].m.v, m->b[i].m.a, t);
                imp_quat q = imp_quat_from_rotvec(imp_scale(m->b[i].w, t));
                for (size_t j = 0; j < n; ++j)
                    turned[j] = imp_quat_rotate(q, pts[j]);
                for (size_t j = 0; j < n; ++j)
                    for (int e = 0; e < 26; ++e) {
                        imp_vec3 d = dim == 2 ? imp_v3(cos(e * 0.2417), sin(e * 0.2417), 0)
                                              : imp_normalize_or(imp_v3(e % 3 - 1, e / 3 % 3 - 1,
                                                                        e / 9 - 1 + (e == 13)),
                                                                 imp_v3(0, 0, 1));
                        if (!box_holds(&box, imp_madd(imp_add(c, turned[j]), d, r), 1e-12))
                            fail_msg("seed %#llx %dD body %d t %g: a point of the turned shape "
                                     "leaves its swept bounds",
                                     (unsigned long long)seed, dim, i, t);
                    }
            }
        }
    }
    free(m);
    /* 3D: a box 2 x 0.6 x 0.6 spinning about z keeps its z range [-0.3, 0.3] exactly */
    imp_shape b3 = box3(1, 0.3, 0.3, (imp_quat){1, 0, 0, 0});
    imp_motion still = {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)};
    imp_aabb z = imp_swept_bounds_turning(&still, &b3, imp_v3(0, 0, 5), 10.0, 3, 0.0);
    assert_true(z.lo.z == -0.3 && z.hi.z == 0.3);
    double reach = sqrt(1 + 0.09 + 0.09), rho = sqrt(1 + 0.09);
    assert_true(fabs(z.hi.x - rho) < 1e-15 && fabs(z.lo.y + rho) < 1e-15 && z.hi.x < reach);
    /* 2D: a 10 x 0.1 blade turning 0.01 rad: its start box grown by the chord 0.01 rho */
    imp_shape blade = box2(5, 0.05, 0);
    imp_aabb sb = imp_swept_bounds_turning(&still, &blade, imp_v3(0, 0, 1), 0.01, 2, 0.0);
    double chord = 0.01 * sqrt(25 + 0.0025);
    assert_true(fabs(sb.hi.y - (0.05 + chord)) < 1e-15 && fabs(sb.lo.y + 0.05 + chord) < 1e-15);
    assert_true(fabs(sb.hi.x - sqrt(25 + 0.0025)) < 1e-15); /* the sphere is tighter along x */
    /* a spin so slow its square underflows: the bounds are the shape's own, finite */
    imp_shape tilted = box3(1, 0.3, 0.2, imp_quat_from_rotvec(imp_v3(0.3, -0.2, 0.5)));
    imp_aabb own = imp_swept_bounds_shape(&still, &tilted, 1e6, 3, 0.0);
    imp_aabb slow =
        imp_swept_bounds_turning(&still, &tilted, imp_v3(1e-320, 0, -2e-320), 1e6, 3, 0.0);
    const double o[6] = {own.lo.x, own.lo.y, own.lo.z, own.hi.x, own.hi.y, own.hi.z},
                 g[6] = {slow.lo.x, slow.lo.y, slow.lo.z, slow.hi.x, slow.hi.y, slow.hi.z};
    for (int k = 0; k < 6; ++k)
        if (!(fabs(g[k] - o[k]) <= 1e-15))
            fail_msg("slow spin: side %d is %.17g, not %.17g", k, g[k], o[k]);
}

/* The pair's answer from the pairwise solvers, as the scene should have it. */
static imp_toi_result direct_pair(const imp_scene_body *a, const imp_scene_body *b, int dim,
                                  double h) {
    imp_shape sa = {.type = IMP_SHAPE_SPHERE, .radius = a->radius};
    imp_shape sb = {.type = IMP_SHAPE_SPHERE, .radius = b->radius};
    const imp_shape *xa = a->shape ? a->shape : &sa, *xb = b->shape ? b->shape : &sb;
    if (imp_toi_rotating_needed(xa, a->w, xb, b->w)) {
        imp_toi_rotating_input q = {xa, xb, a->m, b->m, a->w, b->w, dim, h, NULL, 0};
        int stopped = 0;
        imp_toi_result r = imp_toi_rotating(&q, &stopped);
        assert_int_equal(stopped, 0);
        return r;
    }
    if (!a->shape && !b->shape) {
        imp_toi_spheres_input q = {a->m, b->m, a->radius, b->radius, h};
        return imp_toi_spheres_impact(&q);
    }
    return imp_toi_shapes(xa, &a->m, xb, &b->m, dim, h);
}

/* Bodies in each turning scene (walls included): brute's cost is quadratic. */
#define TURN_N 280

/* Scenes of every shape turning (slow and fast spins, 2D and 3D, walls around, listed last
 * or first): grid, sap and bvh (auto picks one of them), serial and threaded, give exactly
 * brute's collisions; brute's contacts are those of the pairwise solver called directly
 * (imp_toi_rotating where a shape turns), bit for bit, and random pairs it does not list are
 * `none` there too. */

static void test_turning_scene_equals_brute(void **state) {
    (void)state;
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_GRID, IMP_BROAD_SAP, IMP_BROAD_BVH};
    const uint64_t seed = 0x70A11;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    mixed *m = malloc(sizeof *m);
    assert_non_null(m);
    for (int round = 0; round < 4; ++round) {
        int dim = round < 2 ? 2 : 3;
        make_mixed(&rng, m, dim);
        spin_mixed(&rng, m);
        /* the first TURN_N - walls bodies and the walls (brute's cost is quadratic) */
        for (int w = 0; w < m->walls; ++w)
            m->b[TURN_N - m->walls + w] = m->b[MIX_N - m->walls + w];
        if (round % 2) /* the walls first: a halfspace is then a pair's body a */
            for (int i = 0; i < TURN_N / 2; ++i) {
                imp_scene_body t = m->b[i];
                m->b[i] = m->b[TURN_N - 1 - i], m->b[TURN_N - 1 - i] = t;
            }
        imp_scene_input in = {m->b, TURN_N, dim, 2.0, IMP_BROAD_BRUTE, SIZE_MAX, NULL, NULL};
        imp_scene_output ref;
        assert_int_equal(imp_scene_predict(&in, &ref, NULL), IMP_SCENE_OK);
        size_t turning = 0;
        for (size_t i = 0; i < ref.n_collisions; ++i) {
            const imp_scene_contact *c = &ref.collisions[i];
            imp_toi_result r = direct_pair(&m->b[c->a], &m->b[c->b], dim, 2.0);
            if (r.state != IMP_TOI_HIT || r.time != c->time || r.tolerance != c->tolerance ||
                r.normal.x != c->normal.x || r.normal.y != c->normal.y ||
                r.normal.z != c->normal.z || r.point.x != c->point.x || r.point.y != c->point.y)
                fail_msg("seed %#llx round %d: collision %u-%u differs from the pair's own",
                         (unsigned long long)seed, round, c->a, c->b);
            turning += c->tolerance > 0.0;
        }
        for (size_t i = 0; i < ref.n_overlapping; ++i) {
            const imp_scene_contact *c = &ref.overlapping[i];
            imp_toi_result r = direct_pair(&m->b[c->a], &m->b[c->b], dim, 2.0);
            assert_true(r.state == IMP_TOI_OVERLAPPING && r.depth == c->depth);
        }
        for (int k = 0; k < 300; ++k) { /* pairs brute does not list: none */
            uint32_t a = (uint32_t)(imp_rng_unit(&rng) * TURN_N),
                     b = (uint32_t)(imp_rng_unit(&rng) * TURN_N);
            if (a == b || (m->b[a].is_static && m->b[b].is_static)) continue;
            if (a > b) {
                uint32_t t = a;
                a = b, b = t;
            }
            int listed = 0;
            for (size_t i = 0; i < ref.n_collisions; ++i)
                listed |= ref.collisions[i].a == a && ref.collisions[i].b == b;
            for (size_t i = 0; i < ref.n_overlapping; ++i)
                listed |= ref.overlapping[i].a == a && ref.overlapping[i].b == b;
            if (!listed) assert_int_equal(direct_pair(&m->b[a], &m->b[b], dim, 2.0).state, 0);
        }
        expect_every_kind(in, kinds, sizeof kinds / sizeof kinds[0], &ref, "turning",
                          (unsigned long long)seed, round);
        print_message("round %d (%dD): %zu hits (%zu certified by advancement), %zu overlapping\n",
                      round, dim, ref.n_collisions, turning, ref.n_overlapping);
        assert_true(turning > 20);
        imp_scene_output_free(&ref);
    }
    free(m);
}

/* A long thin box that only turns sweeps through a ball: its translation-only bounds miss the
 * ball, every broadphase reports the contact, at t* = acos(1/12) (the blade's face, 0.05 off
 * its axis, meets the ball of radius 0.2 centred 3 from the pivot when 3 cos t = 0.25). */
static void test_turning_blade_found_by_every_kind(void **state) {
    (void)state;
    imp_shape blade = box2(5, 0.05, 0);
    imp_scene_body b[2] = {
        {.m = {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)},
         .shape = &blade,
         .w = imp_v3(0, 0, 1)},
        {.m = {imp_v3(0, 3, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)}, .radius = 0.2}};
    imp_aabb still = imp_swept_bounds_shape(&b[0].m, &blade, 2.0, 2, 0.0);
    assert_true(still.hi.y < 2.8); /* translation alone: no candidate */
    const double t_star = acos(1.0 / 12.0);
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH, IMP_BROAD_AUTO};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        imp_scene_input in = {b, 2, 2, 2.0, kinds[k], SIZE_MAX, NULL, NULL};
        imp_scene_output out;
        assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
        assert_int_equal(out.n_collisions, 1);
        const imp_scene_contact *c = &out.collisions[0];
        assert_true(c->a == 0 && c->b == 1);
        assert_true(c->tolerance > 0 && c->tolerance <= 1e-9 * fmax(1, c->time));
        if (!(c->time <= t_star && t_star <= c->time + c->tolerance))
            fail_msg("%s: time %.17g tolerance %.3g, exact %.17g", imp_broadphase_name(kinds[k]),
                     c->time, c->tolerance, t_star);
        /* the normal is the blade's face normal then, from the blade towards the ball */
        assert_true(fabs(c->normal.x + sin(t_star)) < 1e-6 &&
                    fabs(c->normal.y - cos(t_star)) < 1e-6);
        imp_scene_output_free(&out);
    }
}

/* A stop check that says stop (reason 9) from its k-th call on; called from both threads. */
typedef struct countdown {
    atomic_int calls;
    int k;
} countdown;

static int stop_after(void *cls) {
    countdown *c = cls;
    return atomic_fetch_add(&c->calls, 1) + 1 >= c->k ? 9 : 0;
}

/* The caller's stop check stops the narrowphase: IMP_SCENE_STOPPED, with no contacts, the
 * reason passed through and fewer pairs solved than there are candidates; a check that
 * never says stop changes nothing. */
static void test_stop_check(void **state) {
    (void)state;
    const uint64_t seed = 0x5CE4F;
    uint64_t rng = seed;
    const size_t n = 600;
    imp_scene_body *b = make_scene(&rng, n, 2, UNIFORM);
    for (int threaded = 0; threaded <= 1; ++threaded) {
        countdown c = {0, 4};
        imp_parallel runner = {threaded ? two_threads : NULL, NULL, {stop_after, &c}};
        imp_scene_input in = {b, n, 2, 2.0, IMP_BROAD_BRUTE, SIZE_MAX, &runner, NULL};
        imp_scene_output out;
        imp_error err = {-1, NULL};
        assert_int_equal(imp_scene_predict(&in, &out, &err), IMP_SCENE_STOPPED);
        assert_int_equal(err.code, IMP_SCENE_STOPPED);
        assert_int_equal(out.stopped_by, 9);
        assert_int_equal(out.n_collisions, 0);
        assert_null(out.collisions);
        assert_true(out.pairs_solved < out.candidate_pairs);
        assert_true(out.pairs_solved <= 4 * IMP_STOP_POLL_PAIRS);
        imp_scene_output_free(&out);
        c = (countdown){0, 1 << 30};
        assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
        imp_scene_output_free(&out);
    }
    free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_shapes_and_walls),
        cmocka_unit_test(test_stop_check),
        cmocka_unit_test(test_large_scene_equals_its_slices),
        cmocka_unit_test(test_swept_bounds_shapes),
        cmocka_unit_test(test_brute_examines_every_pair),
        cmocka_unit_test(test_swept_bounds_parabola),
        cmocka_unit_test(test_scene_equals_every_pair),
        cmocka_unit_test(test_large_scene_equals_brute),
        cmocka_unit_test(test_too_many_pairs),
        cmocka_unit_test(test_filter_rule),
        cmocka_unit_test(test_filtered_scene_equals_filtered_pairs),
        cmocka_unit_test(test_swept_bounds_turning),
        cmocka_unit_test(test_turning_scene_equals_brute),
        cmocka_unit_test(test_turning_blade_found_by_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
