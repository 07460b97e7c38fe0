/*
 * test_no_alloc.c - the convex solvers allocate nothing per call.
 *
 * DESIGN
 * The binary is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
 * (Makefile), so every allocation that core (a static library) makes goes
 * through the counters below. For random pairs of each kind (fixed seed,
 * printed), linear and accelerated, imp_toi_shapes and imp_overlap run
 * between two readings of the counter, which must not move: 2D polygon
 * pairs, circle and polygon, boxes in 2D and 3D, and polyhedra prepared as
 * the api prepares them (imp_shape_prepare: the hull built once), against
 * each other and against boxes, and in 3D spheres and capsules against
 * boxes, polyhedra and each other (toi_rounded_3d.c builds their Minkowski
 * difference in a scratch buffer on the stack, imp_hull_build_in). A
 * polyhedron without a prepared hull still builds one per call; that is
 * checked too, so the counter is seen to count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/hull.h"
#include "core/overlap.h"
#include "core/shape.h"
#include "core/toi_shapes.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static size_t allocations;

void *__wrap_malloc(size_t n) {
    ++allocations;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n) {
    ++allocations;
    return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n) {
    ++allocations;
    return __real_realloc(p, n);
}

#define PAIRS 400

/* Allocations made by PAIRS random pairs of kinds ka and kb, TOI and overlap, each shape
 * prepared or not. */
static size_t allocations_of(uint64_t *rng, int dim, int ka, int kb, int accel, int prepare) {
    imp_vec3 ba[32], bb[32];
    size_t made = 0;
    for (int i = 0; i < PAIRS; ++i) {
        imp_shape a = random_shape_of(rng, dim, ka, ba), b = random_shape_of(rng, dim, kb, bb);
        if (prepare) {
            assert_int_equal(imp_shape_prepare(&a), 0);
            assert_int_equal(imp_shape_prepare(&b), 0);
        }
        imp_motion ma, mb;
        random_pair_motions(rng, dim, accel, &ma, &mb);
        size_t before = allocations;
        imp_toi_result r = imp_toi_shapes(&a, &ma, &b, &mb, dim, 2.0);
        imp_overlap_result o = imp_overlap(&a, ma.p, &b, mb.p, dim);
        made += allocations - before;
        assert_true(r.state != IMP_TOI_FAILED);
        assert_true(o.state == IMP_OVERLAP_APART || o.state == IMP_OVERLAP_OVERLAPPING);
        imp_shape_unprepare(&a);
        imp_shape_unprepare(&b);
    }
    return made;
}

static void test_convex_solvers_allocate_nothing(void **state) {
    (void)state;
    const uint64_t seed = 0xA110C;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    static const struct {
        int dim, a, b;
    } kinds[] = {
        {2, IMP_TEST_KIND_POLYTOPE, IMP_TEST_KIND_POLYTOPE},
        {2, IMP_TEST_KIND_SPHERE, IMP_TEST_KIND_POLYTOPE},
        {2, IMP_TEST_KIND_BOX, IMP_TEST_KIND_BOX},
        {2, IMP_TEST_KIND_BOX, IMP_TEST_KIND_POLYTOPE},
        {3, IMP_TEST_KIND_BOX, IMP_TEST_KIND_BOX},
        {3, IMP_TEST_KIND_POLYTOPE, IMP_TEST_KIND_POLYTOPE},
        {3, IMP_TEST_KIND_BOX, IMP_TEST_KIND_POLYTOPE},
        {3, IMP_TEST_KIND_SPHERE, IMP_TEST_KIND_POLYTOPE},
        {3, IMP_TEST_KIND_SPHERE, IMP_TEST_KIND_BOX},
        {3, IMP_TEST_KIND_CAPSULE, IMP_TEST_KIND_POLYTOPE},
        {3, IMP_TEST_KIND_CAPSULE, IMP_TEST_KIND_BOX},
        {3, IMP_TEST_KIND_SPHERE, IMP_TEST_KIND_CAPSULE},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        for (int accel = 0; accel <= 1; ++accel) {
            size_t n = allocations_of(&rng, kinds[k].dim, kinds[k].a, kinds[k].b, accel, 1);
            print_message("%dD kinds %d and %d, accel %d: %zu\n", kinds[k].dim, kinds[k].a,
                          kinds[k].b, accel, n);
            if (n != 0)
                fail_msg("seed %#llx: %dD kinds %d and %d, accel %d: %zu allocations in %d pairs",
                         (unsigned long long)seed, kinds[k].dim, kinds[k].a, kinds[k].b, accel, n,
                         PAIRS);
        }
    /* unprepared polyhedra build their hulls: the counter counts */
    size_t n = allocations_of(&rng, 3, IMP_TEST_KIND_POLYTOPE, IMP_TEST_KIND_POLYTOPE, 1, 0);
    print_message("unprepared polyhedra: %zu allocations in %d pairs\n", n, PAIRS);
    assert_true(n >= PAIRS);
}

static int same_toi(const imp_toi_result *x, const imp_toi_result *y) {
    return x->state == y->state && x->time == y->time && x->depth == y->depth &&
           x->point.x == y->point.x && x->point.y == y->point.y && x->point.z == y->point.z &&
           x->normal.x == y->normal.x && x->normal.y == y->normal.y && x->normal.z == y->normal.z &&
           x->tolerance == y->tolerance;
}

/* A prepared hull changes no answer, bit for bit; a turned copy drops it (it would no longer
 * fit) while the original keeps its own. */
static void test_prepared_hull_changes_nothing(void **state) {
    (void)state;
    const uint64_t seed = 0x9A11;
    uint64_t rng = seed;
    size_t hits = 0;
    for (int i = 0; i < 2 * PAIRS; ++i) {
        imp_vec3 ba[32], bb[32];
        int kb = i % 3 == 0 ? IMP_TEST_KIND_BOX : IMP_TEST_KIND_POLYTOPE;
        imp_shape a = random_shape_of(&rng, 3, IMP_TEST_KIND_POLYTOPE, ba);
        imp_shape b = random_shape_of(&rng, 3, kb, bb);
        imp_motion ma, mb;
        random_pair_motions(&rng, 3, i % 2, &ma, &mb);
        imp_toi_result plain = imp_toi_shapes(&a, &ma, &b, &mb, 3, 2.0);
        imp_overlap_result oplain = imp_overlap(&a, ma.p, &b, mb.p, 3);
        assert_int_equal(imp_shape_prepare(&a), 0);
        assert_int_equal(imp_shape_prepare(&b), 0);
        assert_non_null(a.hull);
        assert_true(kb == IMP_TEST_KIND_BOX ? b.hull == NULL : b.hull != NULL);
        imp_toi_result prepared = imp_toi_shapes(&a, &ma, &b, &mb, 3, 2.0);
        imp_overlap_result oprep = imp_overlap(&a, ma.p, &b, mb.p, 3);
        if (!same_toi(&plain, &prepared))
            fail_msg("seed %#llx pair %d: the prepared hull changed the time of impact",
                     (unsigned long long)seed, i);
        assert_true(oplain.state == oprep.state && oplain.depth == oprep.depth &&
                    oplain.distance == oprep.distance && oplain.normal.x == oprep.normal.x &&
                    oplain.normal.y == oprep.normal.y && oplain.normal.z == oprep.normal.z);
        hits += plain.state == IMP_TOI_HIT;
        imp_vec3 turned_verts[32];
        imp_shape turned = a;
        for (size_t k = 0; k < a.n_verts; ++k)
            turned_verts[k] = a.verts[k];
        turned.verts = turned_verts;
        imp_shape_rotate(&turned, random_rotation(&rng));
        assert_null(turned.hull);
        assert_non_null(a.hull);
        imp_shape_unprepare(&a);
        imp_shape_unprepare(&b);
    }
    print_message("seed %#llx: %zu hits in %d pairs\n", (unsigned long long)seed, hits, 2 * PAIRS);
    assert_true(hits > PAIRS / 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convex_solvers_allocate_nothing),
        cmocka_unit_test(test_prepared_hull_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
