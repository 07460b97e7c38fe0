/*
 * test_simulate_settle.c - the simulation under gravity (core/simulate.h):
 * honest stop reasons, and stacks and piles that settle.
 *
 * DESIGN
 * Many balls falling in a box: the run stops at the horizon, at the stop
 * check, or with max_events exactly when that many contacts were processed
 * (never earlier: no other budget may pass itself off as max_events).
 * Stacks, a column and a pile settle (simulated time reaches the horizon
 * within a bounded number of contacts), kinetic plus potential energy never
 * grows from one sample to the next, and no pair interpenetrates beyond
 * 1e-9 of the scale (an independent static overlap test, all pairs, at
 * sampled times). A ball bouncing to rest while sliding keeps exactly
 * k^n of its sliding speed after n floor contacts (tangential efficiency
 * k). Random scenes use fixed seeds, printed on failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/overlap.h"
#include "core/simulate.h"
#include "tests/countdown.h"
#include "tests/rng.h"

typedef struct scene {
    imp_shape *shapes;
    imp_sim_body *b;
    size_t n, cap;
    int dim;
} scene;

static scene scene_new(size_t cap, int dim) {
    scene s = {calloc(cap, sizeof(imp_shape)), calloc(cap, sizeof(imp_sim_body)), 0, cap, dim};
    assert_non_null(s.shapes);
    assert_non_null(s.b);
    return s;
}

static void scene_free(scene *s) {
    free(s->shapes);
    free(s->b);
}

static size_t add_ball(scene *s, double r, imp_vec3 p, imp_vec3 v, double e, double k) {
    assert_true(s->n < s->cap);
    size_t i = s->n++;
    s->shapes[i] = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = r};
    s->b[i] = (imp_sim_body){{p, v, imp_v3(0, 0, 0)}, &s->shapes[i], 1.0, 0, e, k, NULL};
    return i;
}

/* The halfspace {x : n.x <= offset}, static, efficiencies 1. */
static void add_wall(scene *s, imp_vec3 n, double offset) {
    assert_true(s->n < s->cap);
    size_t i = s->n++;
    s->shapes[i] = (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset};
    s->b[i] = (imp_sim_body){
        {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)}, &s->shapes[i], 1.0, 1, 1.0, 1.0, NULL};
}

/* Walls around [0, w]^dim; the floor is y = 0. */
static void add_box(scene *s, double w) {
    for (int k = 0; k < s->dim; ++k) {
        imp_vec3 n = imp_v3(k == 0, k == 1, k == 2);
        add_wall(s, n, 0);
        add_wall(s, imp_neg(n), -w);
    }
}

static imp_sim_input input(const scene *s, double horizon, double g) {
    imp_sim_input in = {.bodies = s->b,
                        .n = s->n,
                        .dim = s->dim,
                        .horizon = horizon,
                        .gravity = imp_v3(0, -g, 0),
                        .max_events = 1000000};
    return in;
}

/* ---- stop reasons ------------------------------------------------------------------------ */

/* 10,000 balls falling in a box with a long horizon: whatever stops the run, max_events is
 * reported only when exactly max_events contacts were processed. Run with a small max_events
 * (it must be reached, and reported as such) and with a large one (stopped by the stop check
 * long before, reported as a stop, not as max_events). */
static void test_stop_reasons_are_honest(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0019;
    uint64_t rng = seed;
    const double w = 40, r = 0.5;
    scene s = scene_new(10000 + 6, 3);
    for (int i = 0; s.n < 10000; ++i) {
        int x = i % 25, z = (i / 25) % 25, y = i / 625;
        imp_vec3 p = imp_v3(1 + 1.5 * x, 1 + 1.5 * y, 1 + 1.5 * z);
        imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            imp_rng_uniform(&rng, -1, 1));
        add_ball(&s, r, p, v, 0.5, 1.0);
    }
    add_box(&s, w);
    imp_sim_input in = input(&s, 1000, 9.81);
    in.record = 0;
    in.max_events = 20000;
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    if (out.stopped != IMP_SIM_STOP_MAX_EVENTS || out.stats.events != 20000)
        fail_msg("seed %#llx: stopped %d after %zu contacts", (unsigned long long)seed,
                 (int)out.stopped, out.stats.events);
    imp_sim_output_free(&out);

    countdown c = {0, 2000}; /* 512,000 queue entries */
    in.stop = (imp_stop){stop_after, &c};
    in.max_events = 100000000;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    if (out.stopped == IMP_SIM_STOP_MAX_EVENTS)
        fail_msg("seed %#llx: max_events after %zu contacts", (unsigned long long)seed,
                 out.stats.events);
    assert_true(out.stats.events < in.max_events);
    imp_sim_output_free(&out);
    scene_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_reasons_are_honest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
