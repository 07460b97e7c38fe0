/*
 * test_broadphase.c - every broadphase kind against brute force, and brute
 * force against the test's own double loop, on seeded random scenes of
 * every awkward shape (sparse, dense, all in one region, sizes spanning
 * 1e4, far-apart clusters, exactly touching lattices, zero-size boxes,
 * static flags, log-uniform sizes) in 2D and 3D, serially and on a two-thread runner; the
 * unordered pairs left in blocks (imp_broadphase_blocks) against the same pairs joined; the
 * max_pairs limit; choose and names.
 *
 * A failure prints the scene, dimension, n, kind, runner and seed; the
 * scene is a pure function of those, so the line reproduces it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <pthread.h>

#include "core/broadphase.h"
#include "tests/rng.h"

/* ---- a two-thread runner ----------------------------------------------------------------- */

/* Splits [0, n) into grain-sized chunks; chunk c runs on thread c % 2
 * (the spawned thread takes the even chunks, the caller the odd ones). */
typedef struct split_job {
    size_t n, grain;
    imp_range_fn fn;
    void *ctx;
    size_t first; /* 0 or 1 */
} split_job;

static void *split_worker(void *p) {
    split_job *j = p;
    for (size_t b = j->first * j->grain; b < j->n; b += 2 * j->grain)
        j->fn(j->ctx, b, j->n - b > j->grain ? b + j->grain : j->n);
    return NULL;
}

static void split_run(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx) {
    (void)runner;
    if (grain == 0) grain = 1;
    split_job even = {n, grain, fn, ctx, 0}, odd = {n, grain, fn, ctx, 1};
    pthread_t t;
    if (pthread_create(&t, NULL, split_worker, &even) != 0) {
        split_worker(&even); /* still correct, just serial */
        split_worker(&odd);
        return;
    }
    split_worker(&odd);
    pthread_join(t, NULL);
}

static const imp_parallel two_threads = {split_run, NULL, {NULL, NULL}};

/* ---- scenes ------------------------------------------------------------------------------ */

typedef enum scene_kind {
    SC_SPARSE,  /* uniform, about half an overlap per box */
    SC_DENSE,   /* uniform, about eight overlaps per box */
    SC_REGION,  /* everything in one small region: most pairs overlap */
    SC_SPAN,    /* 1% of boxes 1e4 times bigger; small ones spread and in patches */
    SC_CLUSTER, /* four tight clusters 1e6 apart, 5% strays; some static */
    SC_TOUCH,   /* integer lattice boxes sharing faces, edges, corners; duplicates */
    SC_DEGEN,   /* points, flat boxes and unit boxes on a lattice */
    SC_STATIC,  /* dense, 60% static, plus static ground boxes under everything */
    SC_LOGSIZE, /* sizes log-uniform over [1, 1e4]: every size class present */
    SC_COUNT
} scene_kind;

static const char *const scene_names[SC_COUNT] = {"sparse", "dense", "region", "span",   "cluster",
                                                  "touch",  "degen", "static", "logsize"};

typedef struct scene {
    imp_aabb *box;
    unsigned char *st; /* NULL when the scene has no static flags */
    size_t n;
    int dim;
    uint64_t seed;
} scene;

/* A box from its centre and per-axis size; in 2D z gets a random flat
 * value that must be ignored. */
static imp_aabb make_box(const double c[3], const double s[3], int dim, uint64_t *rng) {
    imp_aabb b;
    b.lo = imp_v3(c[0] - 0.5 * s[0], c[1] - 0.5 * s[1], c[2] - 0.5 * s[2]);
    b.hi = imp_v3(c[0] + 0.5 * s[0], c[1] + 0.5 * s[1], c[2] + 0.5 * s[2]);
    if (dim == 2) b.lo.z = b.hi.z = imp_rng_uniform(rng, -5.0, 5.0);
    return b;
}

/* A box from integer corner and integer sizes, exact. */
static imp_aabb lattice_box(const double c[3], const double s[3], int dim, uint64_t *rng) {
    imp_aabb b;
    b.lo = imp_v3(c[0], c[1], c[2]);
    b.hi = imp_v3(c[0] + s[0], c[1] + s[1], c[2] + s[2]);
    if (dim == 2) b.lo.z = b.hi.z = imp_rng_uniform(rng, -5.0, 5.0);
    return b;
}

static void uniform_point(double c[3], double lo, double hi, uint64_t *rng) {
    for (int k = 0; k < 3; ++k)
        c[k] = imp_rng_uniform(rng, lo, hi);
}

static void uniform_size(double s[3], double lo, double hi, uint64_t *rng) {
    for (int k = 0; k < 3; ++k)
        s[k] = imp_rng_uniform(rng, lo, hi);
}

static scene make_scene(scene_kind kind, int dim, size_t n, uint64_t seed) {
    scene sc = {NULL, NULL, n, dim, seed};
    if (n == 0) return sc;
    uint64_t rng = seed;
    sc.box = malloc(n * sizeof *sc.box);
    assert_non_null(sc.box);
    double d = (double)dim, c[3], s[3];
    switch (kind) {
    case SC_SPARSE:
    case SC_DENSE:
    case SC_STATIC: {
        double per_box = kind == SC_SPARSE ? 0.5 : 8.0;
        double L = 2.0 * pow((double)n / per_box, 1.0 / d);
        for (size_t i = 0; i < n; ++i) {
            uniform_point(c, 0.0, L, &rng);
            uniform_size(s, 0.5, 1.5, &rng);
            sc.box[i] = make_box(c, s, dim, &rng);
        }
        if (kind == SC_STATIC) {
            sc.st = malloc(n);
            assert_non_null(sc.st);
            for (size_t i = 0; i < n; ++i)
                sc.st[i] = imp_rng_unit(&rng) < 0.6;
            /* ground boxes: static, under everything */
            for (size_t i = 0; i < n && i < 2; ++i) {
                size_t at = (size_t)(imp_rng_next(&rng) % n);
                double gc[3] = {0.5 * L, 0.5 * L, 0.5 * L}, gs[3] = {L + 4, L + 4, L + 4};
                sc.box[at] = make_box(gc, gs, dim, &rng);
                sc.st[at] = 1;
            }
        }
        break;
    }
    case SC_REGION:
        for (size_t i = 0; i < n; ++i) {
            uniform_point(c, 0.0, 3.0, &rng);
            uniform_size(s, 0.5, 1.5, &rng);
            sc.box[i] = make_box(c, s, dim, &rng);
        }
        break;
    case SC_SPAN: {
        /* A big box (about 0.75e4 across) covers about 20 * 0.75^dim boxes' centres. */
        double L = 1e4 * pow((double)n / 20.0, 1.0 / d);
        size_t big = n / 100 ? n / 100 : 1;
        double patch[8][3];
        for (int p = 0; p < 8; ++p)
            uniform_point(patch[p], 0.0, L, &rng);
        double half = 0.5 * pow(fmax(1.0, (double)n / 16.0), 1.0 / d);
        sc.st = malloc(n);
        assert_non_null(sc.st);
        for (size_t i = 0; i < n; ++i) {
            if (i % (n / big) == 0) {
                uniform_point(c, 0.0, L, &rng);
                uniform_size(s, 0.5e4, 1e4, &rng);
            } else if (imp_rng_unit(&rng) < 0.5) {
                uniform_point(c, 0.0, L, &rng);
                uniform_size(s, 0.5, 1.0, &rng);
            } else {
                const double *p = patch[imp_rng_next(&rng) % 8];
                for (int k = 0; k < 3; ++k)
                    c[k] = p[k] + imp_rng_uniform(&rng, -half, half);
                uniform_size(s, 0.5, 1.0, &rng);
            }
            sc.box[i] = make_box(c, s, dim, &rng);
            sc.st[i] = imp_rng_unit(&rng) < 0.2;
        }
        break;
    }
    case SC_CLUSTER: {
        double centre[4][3];
        for (int p = 0; p < 4; ++p)
            uniform_point(centre[p], 0.0, 1e6, &rng);
        double per = fmax(1.0, 0.95 * (double)n / 4.0);
        double side = 1.5 * pow(per / 4.0, 1.0 / d);
        sc.st = malloc(n);
        assert_non_null(sc.st);
        for (size_t i = 0; i < n; ++i) {
            if (imp_rng_unit(&rng) < 0.05) {
                uniform_point(c, 0.0, 1e6, &rng);
            } else {
                const double *p = centre[imp_rng_next(&rng) % 4];
                for (int k = 0; k < 3; ++k)
                    c[k] = p[k] + imp_rng_uniform(&rng, 0.0, side);
            }
            uniform_size(s, 0.5, 1.5, &rng);
            sc.box[i] = make_box(c, s, dim, &rng);
            sc.st[i] = imp_rng_unit(&rng) < 0.3;
        }
        break;
    }
    case SC_TOUCH: {
        uint64_t k = (uint64_t)ceil(0.5 * pow((double)n, 1.0 / d)) + 1;
        for (size_t i = 0; i < n; ++i) {
            for (int a = 0; a < 3; ++a) {
                c[a] = (double)(imp_rng_next(&rng) % k);
                s[a] = (double)(1 + imp_rng_next(&rng) % 2);
            }
            sc.box[i] = lattice_box(c, s, dim, &rng);
        }
        break;
    }
    case SC_DEGEN: {
        uint64_t k = (uint64_t)ceil(0.5 * pow((double)n, 1.0 / d)) + 1;
        for (size_t i = 0; i < n; ++i) {
            double r = imp_rng_unit(&rng);
            for (int a = 0; a < 3; ++a) {
                c[a] = 0.5 * (double)(imp_rng_next(&rng) % (2 * k));
                s[a] = r < 0.4 ? 0.0 : 1.0;
            }
            if (r >= 0.4 && r < 0.7) s[imp_rng_next(&rng) % (uint64_t)dim] = 0.0; /* flat */
            sc.box[i] = lattice_box(c, s, dim, &rng);
        }
        break;
    }
    case SC_LOGSIZE: {
        /* E[(s + s')^dim] is about 1.3e7 (2D), 9.6e10 (3D): ~4 overlaps per box */
        double L = pow((double)n * (dim == 2 ? 1.3e7 : 9.6e10) / 4.0, 1.0 / d);
        for (size_t i = 0; i < n; ++i) {
            uniform_point(c, 0.0, L, &rng);
            double size = pow(1e4, imp_rng_unit(&rng));
            uniform_size(s, 0.5 * size, size, &rng);
            sc.box[i] = make_box(c, s, dim, &rng);
        }
        break;
    }
    case SC_COUNT: break;
    }
    return sc;
}

static void free_scene(scene *sc) {
    free(sc->box);
    free(sc->st);
}

/* ---- checks ------------------------------------------------------------------------------ */

static const imp_broadphase_kind all_kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH, IMP_BROAD_AUTO};
#define NKINDS (sizeof all_kinds / sizeof all_kinds[0])

static imp_broadphase_input input_of(const scene *sc, const imp_parallel *par, size_t max_pairs) {
    imp_broadphase_input in = {sc->box, sc->st, sc->n, sc->dim, max_pairs, par, 0};
    return in;
}

/* The test's own reference: a double loop with its own overlap test. */
static bool touches(const imp_aabb *a, const imp_aabb *b, int dim) {
    double alo[3] = {a->lo.x, a->lo.y, a->lo.z}, ahi[3] = {a->hi.x, a->hi.y, a->hi.z};
    double blo[3] = {b->lo.x, b->lo.y, b->lo.z}, bhi[3] = {b->hi.x, b->hi.y, b->hi.z};
    for (int k = 0; k < dim; ++k)
        if (alo[k] > bhi[k] || blo[k] > ahi[k]) return false;
    return true;
}

static void check_reference(const scene *sc, const imp_pair *got, size_t count, const char *what) {
    size_t at = 0;
    for (size_t a = 0; a < sc->n; ++a)
        for (size_t b = a + 1; b < sc->n; ++b) {
            if (!touches(&sc->box[a], &sc->box[b], sc->dim) || (sc->st && sc->st[a] && sc->st[b]))
                continue;
            if (at >= count || got[at].a != a || got[at].b != b) {
                print_error("%s: brute differs from the double loop at pair %zu (want %zu,%zu)\n",
                            what, at, a, b);
                fail();
            }
            at++;
        }
    if (at != count) {
        print_error("%s: brute has %zu pairs, the double loop %zu\n", what, count, at);
        fail();
    }
}

static int by_pair(const void *x, const void *y) {
    const imp_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/* imp_broadphase_blocks on in: OK, no block empty, and the blocks in order are list[0..n)
 * (imp_broadphase_pairs' unordered answer), pair for pair. */
static void check_blocks(imp_broadphase_kind kind, const imp_broadphase_input *in,
                         const imp_pair *list, size_t n, const char *what) {
    imp_pair_blocks b = {(imp_pair_block *)&b, 99, 99}; /* poison: must be overwritten */
    assert_int_equal(imp_broadphase_blocks(kind, in, &b, NULL), IMP_BROADPHASE_OK);
    size_t at = 0;
    bool same = b.n_pairs == n && (b.n_blocks > 0) == (n > 0);
    for (size_t q = 0; q < b.n_blocks && same; ++q) {
        same = b.block[q].n > 0 && at + b.block[q].n <= n &&
               memcmp(b.block[q].pairs, list + at, b.block[q].n * sizeof *list) == 0;
        at += b.block[q].n;
    }
    if (!same || at != n) {
        print_error("%s kind %s par %s blocks: %zu pairs in %zu blocks, the list %zu\n", what,
                    imp_broadphase_name(kind), in->par ? "2 threads" : "none", b.n_pairs,
                    b.n_blocks, n);
        fail();
    }
    imp_pair_blocks_free(&b);
    assert_null(b.block);
}

static void check_scene(scene_kind kind, int dim, size_t n) {
    uint64_t seed = 0x5eed0000u + 1000u * (uint64_t)kind + 100u * (uint64_t)dim + n;
    scene sc = make_scene(kind, dim, n, seed);
    char what[160];
    snprintf(what, sizeof what, "scene %s dim %d n %zu seed 0x%llx", scene_names[kind], dim, n,
             (unsigned long long)seed);

    imp_broadphase_input in = input_of(&sc, NULL, SIZE_MAX);
    imp_pair *ref = NULL;
    size_t nref = 0;
    if (imp_broadphase_pairs(IMP_BROAD_BRUTE, &in, &ref, &nref, NULL) != IMP_BROADPHASE_OK) {
        print_error("%s: brute failed\n", what);
        fail();
    }
    if (nref == 0) assert_null(ref);
    check_reference(&sc, ref, nref, what);

    for (int p = 0; p < 2; ++p) {
        const imp_parallel *par = p ? &two_threads : NULL;
        in = input_of(&sc, par, SIZE_MAX);
        for (size_t k = 0; k < NKINDS; ++k) {
            imp_pair *got = (imp_pair *)&seed; /* poison: must be overwritten */
            size_t ngot = 12345;
            int rc = imp_broadphase_pairs(all_kinds[k], &in, &got, &ngot, NULL);
            bool same = rc == 0 && ngot == nref &&
                        (nref == 0 ? got == NULL : memcmp(got, ref, nref * sizeof *ref) == 0);
            if (!same) {
                size_t first = 0;
                while (rc == 0 && got && first < nref && first < ngot &&
                       got[first].a == ref[first].a && got[first].b == ref[first].b)
                    ++first;
                print_error(
                    "%s kind %s par %s: rc %d, %zu pairs, brute %zu; first difference at %zu\n",
                    what, imp_broadphase_name(all_kinds[k]), par ? "2 threads" : "none", rc, ngot,
                    nref, first);
                fail();
            }
            free(got);
        }
    }
    /* unordered: the same pairs in the order found, which threads do not change */
    for (size_t k = 0; k < NKINDS; ++k) {
        imp_pair *got[2] = {NULL, NULL};
        size_t ngot[2] = {0, 0};
        for (int p = 0; p < 2; ++p) {
            in = input_of(&sc, p ? &two_threads : NULL, SIZE_MAX);
            in.unordered = 1;
            assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got[p], &ngot[p], NULL), 0);
            check_blocks(all_kinds[k], &in, got[p], ngot[p], what);
        }
        if (ngot[0] != nref || ngot[1] != nref ||
            (nref && memcmp(got[0], got[1], nref * sizeof *ref) != 0)) {
            print_error("%s kind %s unordered: %zu and %zu pairs (1 and 2 threads), brute %zu\n",
                        what, imp_broadphase_name(all_kinds[k]), ngot[0], ngot[1], nref);
            fail();
        }
        if (nref) qsort(got[0], nref, sizeof *ref, by_pair);
        if (nref && memcmp(got[0], ref, nref * sizeof *ref) != 0) {
            print_error("%s kind %s unordered: not brute's pairs\n", what,
                        imp_broadphase_name(all_kinds[k]));
            fail();
        }
        free(got[0]);
        free(got[1]);
    }
    free(ref);
    free_scene(&sc);
}

static const size_t sizes[] = {0, 1, 2, 17, 500, 3000};

static void check_kind_all_sizes(scene_kind kind) {
    for (int dim = 2; dim <= 3; ++dim)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
            check_scene(kind, dim, sizes[i]);
}

static void test_sparse(void **state) {
    (void)state;
    check_kind_all_sizes(SC_SPARSE);
}
static void test_dense(void **state) {
    (void)state;
    check_kind_all_sizes(SC_DENSE);
}
static void test_one_region(void **state) {
    (void)state;
    check_kind_all_sizes(SC_REGION);
}
static void test_sizes_span_1e4(void **state) {
    (void)state;
    check_kind_all_sizes(SC_SPAN);
}
static void test_far_clusters(void **state) {
    (void)state;
    check_kind_all_sizes(SC_CLUSTER);
}
static void test_touching_lattice(void **state) {
    (void)state;
    check_kind_all_sizes(SC_TOUCH);
}
static void test_zero_size_boxes(void **state) {
    (void)state;
    check_kind_all_sizes(SC_DEGEN);
}
static void test_static_flags(void **state) {
    (void)state;
    check_kind_all_sizes(SC_STATIC);
}
static void test_log_uniform_sizes(void **state) {
    (void)state;
    check_kind_all_sizes(SC_LOGSIZE);
}

/* Scenes large enough for the parallel paths (chunked radix sorts from
 * 131072 keys, the BVH's parallel subtree build from 16384 boxes): too big
 * for brute force here, so every kind and runner must agree with the
 * serial grid (three independent methods agreeing pair for pair). */
static void check_large(scene_kind kind, int dim, size_t n) {
    uint64_t seed = 0x1a49e000u + 1000u * (uint64_t)kind + 100u * (uint64_t)dim;
    scene sc = make_scene(kind, dim, n, seed);
    imp_broadphase_input in = input_of(&sc, NULL, SIZE_MAX);
    imp_pair *ref = NULL;
    size_t nref = 0;
    assert_int_equal(imp_broadphase_pairs(IMP_BROAD_GRID, &in, &ref, &nref, NULL),
                     IMP_BROADPHASE_OK);
    assert_true(nref > n / 10);
    for (int p = 0; p < 2; ++p)
        for (size_t k = 1; k < NKINDS; ++k) {
            in = input_of(&sc, p ? &two_threads : NULL, SIZE_MAX);
            imp_pair *got = NULL;
            size_t ngot = 0;
            int rc = imp_broadphase_pairs(all_kinds[k], &in, &got, &ngot, NULL);
            if (rc != 0 || ngot != nref || memcmp(got, ref, nref * sizeof *ref) != 0) {
                print_error("scene %s dim %d n %zu seed 0x%llx kind %s par %d: rc %d, %zu pairs, "
                            "serial grid %zu\n",
                            scene_names[kind], dim, n, (unsigned long long)seed,
                            imp_broadphase_name(all_kinds[k]), p, rc, ngot, nref);
                fail();
            }
            free(got);
        }
    free(ref);
    free_scene(&sc);
}

static void test_large_scenes_agree(void **state) {
    (void)state;
    check_large(SC_SPARSE, 2, 140000);
    check_large(SC_STATIC, 3, 20000);
    check_large(SC_SPAN, 3, 20000);
    check_large(SC_CLUSTER, 2, 20000);
}

/* Two boxes sharing only a corner point, and two boxes apart by one ulp. */
static void test_touching_corner_and_ulp_gap(void **state) {
    (void)state;
    imp_aabb box[3] = {
        {{0, 0, 0}, {1, 1, 1}},
        {{1, 1, 1}, {2, 2, 2}},                   /* corner of box 0 */
        {{nextafter(2.0, 3.0), 0, 0}, {3, 1, 1}}, /* one ulp right of box 1 */
    };
    for (int dim = 2; dim <= 3; ++dim)
        for (size_t k = 0; k < NKINDS; ++k) {
            imp_broadphase_input in = {box, NULL, 3, dim, SIZE_MAX, NULL, 0};
            imp_pair *got = NULL;
            size_t n = 0;
            assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                             IMP_BROADPHASE_OK);
            assert_int_equal(n, 1);
            assert_int_equal(got[0].a, 0);
            assert_int_equal(got[0].b, 1);
            free(got);
        }
}

/* In 2D the z bounds are ignored, however they are set. */
static void test_2d_ignores_z(void **state) {
    (void)state;
    imp_aabb box[2] = {{{0, 0, 0}, {1, 1, 0}}, {{0.5, 0.5, 7}, {2, 2, 8}}};
    for (size_t k = 0; k < NKINDS; ++k) {
        imp_broadphase_input in = {box, NULL, 2, 2, SIZE_MAX, NULL, 0};
        imp_pair *got = NULL;
        size_t n = 0;
        assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                         IMP_BROADPHASE_OK);
        assert_int_equal(n, 1);
        free(got);
        in.dim = 3;
        assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                         IMP_BROADPHASE_OK);
        assert_int_equal(n, 0);
        assert_null(got);
    }
}

static void test_max_pairs(void **state) {
    (void)state;
    for (int dim = 2; dim <= 3; ++dim) {
        uint64_t seed = 0xa11ce + (uint64_t)dim;
        scene sc = make_scene(SC_DENSE, dim, 500, seed);
        imp_broadphase_input in = input_of(&sc, NULL, SIZE_MAX);
        imp_pair *ref = NULL;
        size_t m = 0;
        assert_int_equal(imp_broadphase_pairs(IMP_BROAD_BRUTE, &in, &ref, &m, NULL),
                         IMP_BROADPHASE_OK);
        assert_true(m > 10);
        for (int p = 0; p < 2; ++p)
            for (size_t k = 0; k < NKINDS; ++k) {
                in = input_of(&sc, p ? &two_threads : NULL, m - 1);
                imp_pair *got = (imp_pair *)&seed;
                size_t n = 777;
                if (imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL) !=
                        IMP_BROADPHASE_TOO_MANY ||
                    got || n) {
                    print_error("seed 0x%llx dim %d kind %s par %d: max_pairs m-1 not refused\n",
                                (unsigned long long)seed, dim, imp_broadphase_name(all_kinds[k]),
                                p);
                    fail();
                }
                in.max_pairs = 0;
                got = (imp_pair *)&seed;
                n = 777;
                assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                                 IMP_BROADPHASE_TOO_MANY);
                assert_null(got);
                assert_int_equal(n, 0);
                in.max_pairs = m - 1; /* blocks: refused alike, and nothing left to free */
                imp_pair_blocks b = {(imp_pair_block *)&b, 99, 99};
                assert_int_equal(imp_broadphase_blocks(all_kinds[k], &in, &b, NULL),
                                 IMP_BROADPHASE_TOO_MANY);
                assert_true(b.block == NULL && b.n_blocks == 0 && b.n_pairs == 0);
                in.max_pairs = m;
                assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                                 IMP_BROADPHASE_OK);
                assert_int_equal(n, m);
                assert_memory_equal(got, ref, m * sizeof *ref);
                free(got);
            }
        free(ref);
        free_scene(&sc);
    }
}

/* 20000 boxes that all overlap (2e8 pairs) with a budget of 1000 pairs:
 * refused without storing them all (this would take seconds and 1.6 GB). */
static void test_max_pairs_stops_early(void **state) {
    (void)state;
    size_t n = 20000;
    imp_aabb *box = malloc(n * sizeof *box);
    assert_non_null(box);
    uint64_t rng = 0xfeed;
    for (size_t i = 0; i < n; ++i) {
        double x = imp_rng_uniform(&rng, 0.0, 0.1), y = imp_rng_uniform(&rng, 0.0, 0.1);
        box[i] = (imp_aabb){{x, y, 0}, {x + 1, y + 1, 0}};
    }
    for (int p = 0; p < 2; ++p)
        for (size_t k = 0; k < NKINDS; ++k) {
            imp_broadphase_input in = {box, NULL, n, 2, 1000, p ? &two_threads : NULL, 0};
            imp_pair *got = NULL;
            size_t c = 0;
            imp_error err = {-1, NULL}; /* poisoned: the failure must fill it */
            assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &c, &err),
                             IMP_BROADPHASE_TOO_MANY);
            assert_null(got);
            assert_int_equal(err.code, IMP_BROADPHASE_TOO_MANY);
            assert_non_null(err.message);
        }
    free(box);
}

static void test_trivial_sizes(void **state) {
    (void)state;
    imp_aabb one = {{0, 0, 0}, {1, 1, 1}};
    for (size_t k = 0; k < NKINDS; ++k) {
        imp_pair *got = (imp_pair *)&one;
        size_t n = 5;
        imp_broadphase_input in = {NULL, NULL, 0, 3, 0, NULL, 0};
        assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                         IMP_BROADPHASE_OK);
        assert_null(got);
        assert_int_equal(n, 0);
        in.boxes = &one;
        in.n = 1;
        got = (imp_pair *)&one;
        n = 5;
        assert_int_equal(imp_broadphase_pairs(all_kinds[k], &in, &got, &n, NULL),
                         IMP_BROADPHASE_OK);
        assert_null(got);
        assert_int_equal(n, 0);
    }
}

static void test_choose_and_names(void **state) {
    (void)state;
    assert_string_equal(imp_broadphase_name(IMP_BROAD_AUTO), "auto");
    assert_string_equal(imp_broadphase_name(IMP_BROAD_BRUTE), "brute");
    assert_string_equal(imp_broadphase_name(IMP_BROAD_GRID), "grid");
    assert_string_equal(imp_broadphase_name(IMP_BROAD_SAP), "sap");
    assert_string_equal(imp_broadphase_name(IMP_BROAD_BVH), "bvh");
    for (int kind = 0; kind < SC_COUNT; ++kind)
        for (int dim = 2; dim <= 3; ++dim)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
                scene sc = make_scene((scene_kind)kind, dim, sizes[i], 0xc0de + sizes[i]);
                imp_broadphase_input in = input_of(&sc, NULL, SIZE_MAX);
                imp_broadphase_kind got = imp_broadphase_choose(&in);
                assert_true(got == IMP_BROAD_BRUTE || got == IMP_BROAD_GRID ||
                            got == IMP_BROAD_SAP || got == IMP_BROAD_BVH);
                /* the documented rule */
                imp_broadphase_kind want = sizes[i] < 16     ? IMP_BROAD_BRUTE
                                           : sizes[i] < 1024 ? IMP_BROAD_SAP
                                                             : IMP_BROAD_GRID;
                if (got != want) {
                    print_error("scene %s dim %d n %zu: auto chose %s, the rule says %s\n",
                                scene_names[kind], dim, sizes[i], imp_broadphase_name(got),
                                imp_broadphase_name(want));
                    fail();
                }
                free_scene(&sc);
            }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trivial_sizes),
        cmocka_unit_test(test_touching_corner_and_ulp_gap),
        cmocka_unit_test(test_2d_ignores_z),
        cmocka_unit_test(test_sparse),
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_one_region),
        cmocka_unit_test(test_sizes_span_1e4),
        cmocka_unit_test(test_far_clusters),
        cmocka_unit_test(test_touching_lattice),
        cmocka_unit_test(test_zero_size_boxes),
        cmocka_unit_test(test_static_flags),
        cmocka_unit_test(test_log_uniform_sizes),
        cmocka_unit_test(test_large_scenes_agree),
        cmocka_unit_test(test_max_pairs),
        cmocka_unit_test(test_max_pairs_stops_early),
        cmocka_unit_test(test_choose_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
