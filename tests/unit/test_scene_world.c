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
 * state (hit or overlapping), triangle, the tolerance of a turning body's
 * certified time. Seeds are fixed and printed.
 * Simulation: balls in a room whose walls are a closed mesh bounce as in
 * the same room made of six halfspaces (the exact planes, through another
 * solver): the same events, times within 1e-9, energy kept with e = 1.
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
#include "core/simulate.h"
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
    imp_shape box = {.type = IMP_SHAPE_BOX, .half = imp_v3(0.9, 0.1, 0.3), .rot = {1, 0, 0, 0}};
    size_t turning = 0, turning_hits = 0;
    for (int i = 0; i < N_BODIES; ++i) {
        imp_motion m = {imp_v3(imp_rng_uniform(&rng, 0, 20), imp_rng_uniform(&rng, -1, 10),
                               imp_rng_uniform(&rng, 0, 20)),
                        random_vec(&rng, 4), imp_v3(0, -9.81 * (i % 2), 0)};
        /* capsules and boxes; one body in three of them turns (the world's casts turn it) */
        const imp_shape *shape = i % 5 == 0 ? &caps : i % 7 == 0 ? &box : NULL;
        imp_vec3 spin = imp_v3(0, 0, 0);
        if (shape && i % 3 == 0) spin = imp_scale(random_dir(&rng, 3), imp_rng_uniform(&rng, 1, 8));
        turning += imp_max_abs(spin) > 0;
        b[i] = (imp_scene_body){m, imp_rng_uniform(&rng, 0.1, 0.8), i % 17 == 0, shape, NULL, spin};
    }
    /* A tie: body 1 meets the box's top (y = 6) and bodies 2 and 3 meet each other far above
     * the level, all at exactly t = 1. Body 1's contact with the world comes first (a = 1). */
    b[1] = (imp_scene_body){.m = {imp_v3(10, 7.5, 10), imp_v3(0, -1, 0)}, .radius = 0.5};
    b[2] = (imp_scene_body){.m = {imp_v3(0, 40, 0), imp_v3(1, 0, 0)}, .radius = 0.5};
    b[3] = (imp_scene_body){.m = {imp_v3(3, 40, 0), imp_v3(-1, 0, 0)}, .radius = 0.5};
    imp_scene_input in = {b, N_BODIES, 3, 1.5, IMP_BROAD_AUTO, SIZE_MAX, NULL, w};
    imp_scene_output out;
    assert_int_equal(imp_scene_predict(&in, &out, NULL), IMP_SCENE_OK);
    size_t hits = 0, overlaps = 0;
    for (uint32_t i = 0; i < N_BODIES; ++i) {
        for (uint32_t k = 0; k < 3; ++k) {
            imp_shape sphere = {
                .type = IMP_SHAPE_SPHERE, .radius = b[i].radius, .rot = {1, 0, 0, 0}};
            imp_world_cast c = {
                b[i].shape ? b[i].shape : &sphere, b[i].m, in.horizon, NULL, b[i].w, NULL};
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
            assert_true(got->time == r.time && got->tolerance == (over ? 0.0 : r.tolerance));
            assert_true((got->tolerance > 0.0) == (!over && imp_max_abs(b[i].w) > 0.0));
            assert_int_equal(got->index, r.index);
            assert_true(got->normal.x == -r.normal.x && got->normal.y == -r.normal.y &&
                        got->normal.z == -r.normal.z);
            hits += !over;
            overlaps += over;
            turning_hits += !over && got->tolerance > 0.0;
        }
    }
    printf("%zu hits, %zu overlaps with colliders checked (%zu bodies turn, %zu of the hits)\n",
           hits, overlaps, turning, turning_hits);
    assert_true(hits > 50 && overlaps > 5 && turning_hits > 5);
    /* sorted by (time, a), bodies' pairs before colliders at equal (time, a), then (b, index) */
    size_t tie = SIZE_MAX;
    for (size_t i = 0; i < out.n_collisions; ++i) {
        const imp_scene_contact *x = &out.collisions[i], *y = x + 1;
        if (x->a == 1 && x->world && x->time == 1.0) tie = i;
        if (i + 1 == out.n_collisions || x->time < y->time) continue;
        assert_true(x->time == y->time);
        assert_true(x->a < y->a ||
                    (x->a == y->a && (x->world < y->world ||
                                      (x->world == y->world &&
                                       (x->b < y->b || (x->b == y->b && x->index < y->index))))));
    }
    assert_true(tie + 1 < out.n_collisions && out.collisions[tie + 1].a == 2 &&
                out.collisions[tie + 1].b == 3 && out.collisions[tie + 1].time == 1.0);
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

/* A closed box mesh [0, w]^3 (12 triangles; two-sided). */
static void room_mesh(double w, imp_vec3 v[8], uint32_t t[36]) {
    for (int k = 0; k < 8; ++k)
        v[k] = imp_v3(k & 1 ? w : 0, k & 2 ? w : 0, k & 4 ? w : 0);
    static const uint32_t T[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                                   2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
    memcpy(t, T, sizeof T);
}

#define N_BALLS 12

static void test_simulate_in_a_mesh_room(void **state) {
    (void)state;
    const uint64_t seed = 0x51a7e;
    printf("seed %#llx\n", (unsigned long long)seed);
    uint64_t rng = seed;
    const double W = 10.0;
    imp_vec3 v[8];
    uint32_t t[36];
    room_mesh(W, v, t);
    imp_world_collider c;
    memset(&c, 0, sizeof c);
    c.kind = IMP_WORLD_MESH;
    c.mesh = (imp_world_mesh){v, 8, t, 12};
    imp_world *w = build(&c, 1);
    /* balls that pass through each other (one negative group): each bounces alone */
    imp_filter ghost = {1, 0xffffffffu, -1};
    imp_shape balls[N_BALLS], walls[6];
    imp_sim_body b[N_BALLS + 6];
    for (int i = 0; i < N_BALLS; ++i) {
        balls[i] = (imp_shape){.type = IMP_SHAPE_SPHERE,
                               .radius = imp_rng_uniform(&rng, 0.2, 1.0),
                               .rot = {1, 0, 0, 0}};
        imp_motion m = {imp_v3(imp_rng_uniform(&rng, 2, 8), imp_rng_uniform(&rng, 2, 8),
                               imp_rng_uniform(&rng, 2, 8)),
                        random_vec(&rng, 5), imp_v3(0, 0, 0)};
        b[i] = (imp_sim_body){m, &balls[i], 1.0, 0, 1.0, 1.0, &ghost};
    }
    for (int k = 0; k < 3; ++k) {
        imp_vec3 n = imp_v3(k == 0, k == 1, k == 2);
        walls[2 * k] = (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = 0};
        walls[2 * k + 1] =
            (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = imp_neg(n), .offset = -W};
    }
    for (int k = 0; k < 6; ++k)
        b[N_BALLS + k] = (imp_sim_body){
            {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)}, &walls[k], 1.0, 1, 1.0, 1.0, NULL};
    for (int g = 0; g < 2; ++g) {
        imp_vec3 gravity = imp_v3(0, -9.81 * g, 0);
        imp_sim_input with_world = {b, N_BALLS,      3, 6.0, gravity, 100000, 1,
                                    0, {NULL, NULL}, w, NULL};
        imp_sim_input with_walls = {b, N_BALLS + 6,  3,    6.0, gravity, 100000, 1,
                                    0, {NULL, NULL}, NULL, NULL};
        imp_sim_output ow, oh;
        assert_int_equal(imp_sim_run(&with_world, &ow, NULL), IMP_SIM_OK);
        assert_int_equal(imp_sim_run(&with_walls, &oh, NULL), IMP_SIM_OK);
        printf("gravity %d: %zu events against the mesh, %zu against the halfspaces\n", g,
               ow.n_events, oh.n_events);
        assert_int_equal(ow.stopped, IMP_SIM_STOP_HORIZON);
        assert_int_equal(ow.n_events, oh.n_events);
        assert_true(ow.n_events > 50);
        for (size_t k = 0; k < ow.n_events; ++k) {
            const imp_sim_event *x = &ow.events[k], *y = &oh.events[k];
            assert_int_equal(x->world, 1);
            assert_int_equal(x->a, y->a);
            if (!(fabs(x->time - y->time) <= 1e-9))
                fail_msg("event %zu: %.17g vs %.17g", k, x->time, y->time);
            /* the wall's normal, from the ball outwards */
            for (int q = 0; q < 3; ++q)
                assert_true(fabs((&x->normal.x)[q] - (&y->normal.x)[q]) <= 1e-9);
        }
        double e0 = 0, e1 = 0;
        for (int i = 0; i < N_BALLS; ++i) {
            imp_vec3 d = imp_sub(ow.bodies[i].p, oh.bodies[i].p);
            assert_true(imp_max_abs(d) <= 1e-8);
            e0 += imp_dot(b[i].m.v, b[i].m.v) + 2 * 9.81 * g * b[i].m.p.y;
            e1 += imp_dot(ow.bodies[i].v, ow.bodies[i].v) + 2 * 9.81 * g * ow.bodies[i].p.y;
        }
        assert_true(fabs(e1 - e0) <= 1e-9 * e0);
        imp_sim_output_free(&ow);
        imp_sim_output_free(&oh);
    }
    imp_world_destroy(w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_contact_per_collider),
        cmocka_unit_test(test_simulate_in_a_mesh_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
