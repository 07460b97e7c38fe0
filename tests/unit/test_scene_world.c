/*
 * test_scene_world.c - scenes against a stored world (core/scene.c with
 * core/world.h): every body's first contact with each collider.
 *
 * DESIGN
 * The reference is a different path through the world code: for each
 * body and each collider, a shape cast (imp_world_shapecast, the
 * hierarchy's time-bounded walk) against a world built of that collider
 * alone. The scene's answer (a box query per body, then every primitive
 * in it) must give, per (body, collider), the same first contact: time,
 * state (hit or overlapping), triangle. Seeds are fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "core/scene.h"
#include "core/world.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

#define N_BODIES 300
#define SIDE 21

/* A terrain (heightfield), a box of 12 triangles above it and a sphere collider. */
typedef struct level {
    double heights[SIDE * SIDE];
    imp_vec3 box[8];
    uint32_t tris[36];
    imp_shape ball;
    imp_world_collider c[3];
} level;

static void level_make(level *L, uint64_t *rng) {
    memset(L, 0, sizeof *L);
    for (int i = 0; i < SIDE * SIDE; ++i)
        L->heights[i] = imp_rng_uniform(rng, -1, 1);
    for (int k = 0; k < 8; ++k)
        L->box[k] = imp_v3(k & 1 ? 12 : 8, k & 2 ? 6 : 3, k & 4 ? 12 : 8);
    static const uint32_t T[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                                   2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
    memcpy(L->tris, T, sizeof T);
    L->ball = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = 1.5, .rot = {1, 0, 0, 0}};
    L->c[0].kind = IMP_WORLD_HEIGHTFIELD;
    L->c[0].heightfield = (imp_world_heightfield){SIDE, SIDE, 1.0, 1.0, L->heights};
    L->c[1].kind = IMP_WORLD_MESH;
    L->c[1].mesh = (imp_world_mesh){L->box, 8, L->tris, 12};
    L->c[2].kind = IMP_WORLD_SHAPE;
    L->c[2].shape = &L->ball;
    L->c[2].position = imp_v3(4, 8, 15);
}

static imp_world *build(const imp_world_collider *c, size_t n) {
    imp_world_input in = {3, c, n, {NULL, NULL}};
    imp_world *w = NULL;
    assert_int_equal(imp_world_build(&in, &w, NULL), IMP_WORLD_OK);
    return w;
}

/* The scene's contact of body a with collider k (hits, then overlapping), or NULL. */
static const imp_scene_contact *find(const imp_scene_output *o, uint32_t a, uint32_t k, int *over) {
    for (size_t i = 0; i < o->n_collisions; ++i)
        if (o->collisions[i].world && o->collisions[i].a == a && o->collisions[i].b == k)
            return *over = 0, &o->collisions[i];
    for (size_t i = 0; i < o->n_overlapping; ++i)
        if (o->overlapping[i].world && o->overlapping[i].a == a && o->overlapping[i].b == k)
            return *over = 1, &o->overlapping[i];
    return NULL;
}

static void test_first_contact_per_collider(void **state) {
    (void)state;
    const uint64_t seed = 0x5ce9e3017d;
    printf("seed %#llx\n", (unsigned long long)seed);
    uint64_t rng = seed;
    level L;
    level_make(&L, &rng);
    imp_world *w = build(L.c, 3), *single[3];
    for (int k = 0; k < 3; ++k)
        single[k] = build(&L.c[k], 1);
    imp_scene_body b[N_BODIES];
    imp_shape caps = {.type = IMP_SHAPE_CAPSULE,
                      .a = imp_v3(-0.3, 0, 0),
                      .b = imp_v3(0.3, 0, 0),
                      .radius = 0.2,
                      .rot = {1, 0, 0, 0}};
    for (int i = 0; i < N_BODIES; ++i) {
        imp_motion m = {imp_v3(imp_rng_uniform(&rng, 0, 20), imp_rng_uniform(&rng, -1, 10),
                               imp_rng_uniform(&rng, 0, 20)),
                        random_vec(&rng, 4), imp_v3(0, -9.81 * (i % 2), 0)};
        b[i] = (imp_scene_body){m, imp_rng_uniform(&rng, 0.1, 0.8), i % 17 == 0,
                                i % 5 == 0 ? &caps : NULL, NULL};
    }
    imp_scene_input in = {b, N_BODIES, 3, 1.5, IMP_BROAD_AUTO, SIZE_MAX, NULL, w};
    imp_scene_output out;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    size_t hits = 0, overlaps = 0;
    for (uint32_t i = 0; i < N_BODIES; ++i) {
        for (uint32_t k = 0; k < 3; ++k) {
            imp_shape sphere = {.type = IMP_SHAPE_SPHERE, .radius = b[i].radius, .rot = {1, 0, 0, 0}};
            imp_world_cast c = {b[i].shape ? b[i].shape : &sphere, b[i].m, in.horizon, NULL};
            imp_world_cast_result r = imp_world_shapecast(single[k], &c, NULL);
            int over = 0;
            const imp_scene_contact *got = find(&out, i, k, &over);
            if (b[i].is_static) {
                assert_null(got);
                continue;
            }
            int want = r.state == IMP_WORLD_HIT || r.state == IMP_WORLD_OVERLAPPING;
            if (want != (got != NULL))
                fail_msg("body %u collider %u: scene %s, shape cast %d", i, k,
                         got ? "contact" : "none", r.state);
            if (!want) continue;
            assert_int_equal(over, r.state == IMP_WORLD_OVERLAPPING);
            assert_true(got->time == r.time);
            assert_int_equal(got->index, r.index);
            assert_true(got->normal.x == -r.normal.x && got->normal.y == -r.normal.y &&
                        got->normal.z == -r.normal.z);
            hits += !over;
            overlaps += over;
        }
    }
    printf("%zu hits, %zu overlaps with colliders checked\n", hits, overlaps);
    assert_true(hits > 50 && overlaps > 5);
    /* sorted by (time, a), bodies' pairs before colliders at equal (time, a) */
    for (size_t i = 1; i < out.n_collisions; ++i)
        assert_true(out.collisions[i - 1].time <= out.collisions[i].time);
    /* first_per_body: one contact per body at most, the earliest with anything */
    imp_scene_output fp = out;
    fp.collisions = malloc(out.n_collisions * sizeof *fp.collisions + 1);
    assert_non_null(fp.collisions);
    memcpy(fp.collisions, out.collisions, out.n_collisions * sizeof *fp.collisions);
    assert_int_equal(imp_scene_first_per_body(&fp, N_BODIES), 0);
    for (uint32_t i = 0; i < N_BODIES; ++i) {
        double first = INFINITY;
        for (size_t k = 0; k < out.n_collisions; ++k)
            if (out.collisions[k].a == i || (!out.collisions[k].world && out.collisions[k].b == i))
                first = fmin(first, out.collisions[k].time);
        size_t mine = 0;
        for (size_t k = 0; k < fp.n_collisions; ++k)
            if (fp.collisions[k].a == i && fp.collisions[k].world) {
                ++mine;
                assert_true(fp.collisions[k].time == first);
            }
        assert_true(mine <= 1);
    }
    free(fp.collisions);
    imp_scene_output_free(&out);
    imp_world_destroy(w);
    for (int k = 0; k < 3; ++k)
        imp_world_destroy(single[k]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_contact_per_collider),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
