/*
 * test_simulate.c - the event-driven simulation (core/simulate.h).
 *
 * DESIGN
 * Known answers (Newton's cradle, head-on and kinematic pushes, a moving
 * wall), invariants over long runs (a billiard break: kinetic energy to
 * 1e-9 over 100,000 contacts, no pair interpenetrating by more than 1e-9
 * of the box, checked with the static overlap test at sampled times),
 * bouncing under gravity (apex heights shrink by exactly e^2), an
 * independent fixed-step integrator on short runs, the grid against the
 * all-pairs reference, max_events, the resting and collapse guards, and
 * pairs grazing within 1e-9 of touching against the pairwise solver.
 * Random scenes use fixed seeds, printed on failure.
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
#include "core/toi.h"
#include "core/tolerance.h"
#include "tests/countdown.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

#define MAXB 256

typedef struct scene {
    imp_shape shapes[MAXB];
    imp_sim_body b[MAXB];
    size_t n;
} scene;

static size_t add_ball(scene *s, double r, imp_vec3 p, imp_vec3 v, double e) {
    size_t i = s->n++;
    s->shapes[i] = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = r};
    s->b[i] = (imp_sim_body){{p, v, imp_v3(0, 0, 0)}, &s->shapes[i], 1.0, 0, e, 1.0, NULL};
    return i;
}

/* The halfspace {x : n.x <= offset}, static. */
static size_t add_wall(scene *s, imp_vec3 n, double offset, double e) {
    size_t i = s->n++;
    s->shapes[i] = (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = n, .offset = offset};
    s->b[i] = (imp_sim_body){
        {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)}, &s->shapes[i], 1.0, 1, e, 1.0, NULL};
    return i;
}

/* Four walls around [0, w]^2 (2D) or six around [0, w]^3. */
static void add_box(scene *s, double w, int dim, double e) {
    for (int k = 0; k < dim; ++k) {
        imp_vec3 n = imp_v3(k == 0, k == 1, k == 2);
        add_wall(s, n, 0, e);           /* the solid x_k <= 0 */
        add_wall(s, imp_neg(n), -w, e); /* the solid x_k >= w */
    }
}

static imp_sim_input input(const scene *s, int dim, double horizon) {
    imp_sim_input in = {s->b, s->n,         dim,  horizon, imp_v3(0, 0, 0), 1000000, 1,
                        0,    {NULL, NULL}, NULL, NULL};
    return in;
}

static double kinetic(const imp_sim *sim, const scene *s, double t) {
    double k = 0;
    for (size_t i = 0; i < s->n; ++i) {
        if (s->b[i].is_static) continue;
        imp_vec3 p, v;
        imp_sim_body_state(sim, i, t, &p, &v);
        k += 0.5 * s->b[i].mass * imp_dot(v, v);
    }
    return k;
}

/* Largest interpenetration depth over all pairs at time t (independent static test). */
static double max_depth(const imp_sim *sim, const scene *s, double t, int dim) {
    double worst = 0;
    for (size_t i = 0; i < s->n; ++i) {
        for (size_t j = i + 1; j < s->n; ++j) {
            if (s->b[i].is_static && s->b[j].is_static) continue;
            imp_vec3 pi, pj, v;
            imp_sim_body_state(sim, i, t, &pi, &v);
            imp_sim_body_state(sim, j, t, &pj, &v);
            imp_overlap_result r = imp_overlap(s->b[i].shape, pi, s->b[j].shape, pj, dim);
            assert_int_not_equal(r.state, IMP_OVERLAP_FAILED);
            if (r.state == IMP_OVERLAP_OVERLAPPING && r.depth > worst) worst = r.depth;
        }
    }
    return worst;
}

/* ---- known answers ------------------------------------------------------------------------ */

/* The event queue (a heap for the current bucket of time, a calendar of buckets and an
 * overflow for the rest) against the analytic answer: balls in lanes far enough apart
 * never to meet, each bouncing between two walls at a speed from 1e-3 to 1e2 (seeded;
 * every fifth a copy of the one before, so that events tie exactly), and one at rest. Ball
 * k's j-th contact is at t1 + j T exactly in arithmetic (t1 its first, T = (w - 2r) / |v|);
 * every one within the horizon must come out, in time order, at its time to 1e-9. The
 * spread of periods (1e5) makes the queue rebuild its buckets many times over, with
 * widths that suit the fast balls and put the slow ones in the overflow. */
static void test_queue_order_bouncing_lanes(void **state) {
    (void)state;
    const uint64_t seed = 0xca1e;
    const double w = 10, r = 0.1, horizon = 100;
    const int nb = 60;
    scene s = {0};
    uint64_t rng = seed;
    double t1[64], T[64];
    size_t want = 0;
    for (int k = 0; k < nb; ++k) {
        double x, v;
        if (k % 5 == 4) {
            x = s.b[k - 1].m.p.x;
            v = s.b[k - 1].m.v.x;
        } else {
            x = imp_rng_uniform(&rng, 2 * r, w - 2 * r);
            v = pow(10.0, imp_rng_uniform(&rng, -3, 2)) *
                (imp_rng_uniform(&rng, -1, 1) < 0 ? -1 : 1);
        }
        if (k == nb - 1) v = 0;
        add_ball(&s, r, imp_v3(x, 1 + 0.5 * k, 0), imp_v3(v, 0, 0), 1);
        T[k] = v == 0 ? INFINITY : (w - 2 * r) / fabs(v);
        t1[k] = v > 0 ? (w - r - x) / v : v < 0 ? (x - r) / -v : INFINITY;
        for (double t = t1[k]; t <= horizon; t += T[k]) {
            /* no contact within rounding of the horizon, where either answer would do */
            assert_true(fabs(t - horizon) > 1e-6);
            ++want;
        }
    }
    add_wall(&s, imp_v3(1, 0, 0), 0, 1);
    add_wall(&s, imp_v3(-1, 0, 0), -w, 1);
    imp_sim_input in = input(&s, 2, horizon);
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_HORIZON);
    printf("seed %#llx: %zu contacts, %zu expected\n", (unsigned long long)seed, out.n_events,
           want);
    assert_int_equal(out.n_events, want);
    size_t seen[64] = {0};
    for (size_t e = 0; e < out.n_events; ++e) {
        const imp_sim_event *ev = &out.events[e];
        if (e > 0) assert_true(ev->time >= out.events[e - 1].time);
        assert_true(ev->a < (uint32_t)nb && ev->b >= (uint32_t)nb);
        double t = t1[ev->a] + (double)seen[ev->a]++ * T[ev->a];
        if (!(fabs(ev->time - t) <= 1e-9 * (1 + t)))
            fail_msg("seed %#llx: ball %u contact %zu at %.17g, expected %.17g",
                     (unsigned long long)seed, ev->a, seen[ev->a] - 1, ev->time, t);
    }
    imp_sim_output_free(&out);
}

static void test_newtons_cradle(void **state) {
    (void)state;
    scene s = {0};
    add_ball(&s, 0.5, imp_v3(-3, 0, 0), imp_v3(1, 0, 0), 1);
    for (int k = 0; k < 5; ++k)
        add_ball(&s, 0.5, imp_v3(k, 0, 0), imp_v3(0, 0, 0), 1);
    imp_sim_input in = input(&s, 2, 10);
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_HORIZON);
    assert_int_equal(out.stats.events, 5);
    for (size_t i = 0; i < 5; ++i) {
        assert_true(fabs(out.bodies[i].v.x) < 1e-12);
        assert_true(fabs(out.bodies[i].v.y) < 1e-12);
    }
    assert_true(fabs(out.bodies[5].v.x - 1) < 1e-12);
    /* the striker stops at x = -1 at t = 2; the last ball leaves x = 4 at t = 2 */
    assert_true(fabs(out.bodies[0].p.x + 1) < 1e-12);
    assert_true(fabs(out.bodies[5].p.x - 12) < 1e-12);
    for (size_t k = 0; k < out.n_events; ++k) {
        assert_true(fabs(out.events[k].time - 2) < 1e-12);
        assert_int_equal(out.events[k].a, k);
        assert_int_equal(out.events[k].b, k + 1);
    }
    imp_sim_output_free(&out);
}

/* Pairs that pass within a hair of touching (the sum of radii times 1 -+ 1e-6 and 1e-9),
 * with and without relative acceleration: the simulation's first contact is the one
 * imp_toi_spheres gives for the pair over the horizon (the prediction culls pairs
 * that cannot meet before asking it; a cull too eager would drop the near ones), and a
 * ball falling on a floor touches it only when the horizon reaches the analytic time. */
static void test_grazing_pairs_match_solver(void **state) {
    (void)state;
    static const double f[] = {1 - 1e-6, 1 - 1e-9, 1 + 1e-9, 1 + 1e-6};
    for (int acc = 0; acc < 2; ++acc)
        for (size_t k = 0; k < sizeof f / sizeof f[0]; ++k) {
            scene s = {0};
            add_ball(&s, 0.5, imp_v3(0, 0, 0), imp_v3(1, 0, 0), 1);
            add_ball(&s, 0.25, imp_v3(3, 0.75 * f[k] + (acc ? 0.5 : 0), 0), imp_v3(0, 0, 0), 1);
            if (acc) s.b[1].m.a = imp_v3(0, -1.0 / 9.0, 0); /* falls 0.5 by t = 3 */
            imp_sim_input in = input(&s, 2, 4);
            imp_sim_output out;
            assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
            imp_toi_spheres_input ti = {s.b[0].m, s.b[1].m, 0.5, 0.25, 4};
            imp_toi_result r = imp_toi_spheres(&ti);
            if (r.state == IMP_TOI_HIT) {
                assert_true(out.n_events >= 1);
                /* predicted later, from a cell crossing, so from other rounded
                 * positions: a nearly tangent root moves by about the square root of
                 * that (8.6e-12 measured at 1 - 1e-9) */
                assert_true(fabs(out.events[0].time - r.time) < 1e-9);
                assert_true(out.events[0].a == 0 && out.events[0].b == 1);
            } else {
                assert_int_equal(r.state, IMP_TOI_NONE);
                assert_int_equal(out.n_events, 0);
            }
            /* the near side touches, the far side does not (without acceleration) */
            if (!acc) assert_int_equal(r.state == IMP_TOI_HIT, f[k] < 1);
            imp_sim_output_free(&out);
        }
    /* floor {y <= 0}; a ball of radius 0.5 from height 2.5 under acceleration 1 lands at
     * t = 2 */
    for (int after = 0; after < 2; ++after) {
        scene s = {0};
        add_ball(&s, 0.5, imp_v3(0, 2.5, 0), imp_v3(0.3, 0, 0), 1);
        s.b[0].m.a = imp_v3(0, -1, 0);
        add_wall(&s, imp_v3(0, 1, 0), 0, 1);
        imp_sim_input in = input(&s, 2, after ? 2 * (1 + 1e-9) : 2 * (1 - 1e-9));
        imp_sim_output out;
        assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
        assert_int_equal(out.n_events, (size_t)after);
        if (after) assert_true(fabs(out.events[0].time - 2) < 1e-14);
        imp_sim_output_free(&out);
    }
}

static void test_head_on_exchange_3d(void **state) {
    (void)state;
    scene s = {0};
    add_ball(&s, 0.5, imp_v3(0, 0, 0), imp_v3(1, 0, 0), 1);
    add_ball(&s, 0.5, imp_v3(3, 0, 0), imp_v3(-1, 0, 0), 1);
    imp_sim_input in = input(&s, 3, 3);
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.n_events, 1);
    assert_true(fabs(out.events[0].time - 1) < 1e-15);
    assert_true(fabs(out.events[0].point.x - 1.5) < 1e-15);
    assert_true(fabs(out.events[0].impulse.x - 2) < 1e-15);
    assert_true(fabs(out.bodies[0].v.x + 1) < 1e-15 && fabs(out.bodies[1].v.x - 1) < 1e-15);
    assert_true(fabs(out.bodies[0].p.x + 1) < 1e-14 && fabs(out.bodies[1].p.x - 4) < 1e-14);
    imp_sim_output_free(&out);
}

static void test_static_and_kinematic(void **state) {
    (void)state;
    /* a ball against a static ball: bounces back, the static one never moves */
    scene s = {0};
    add_ball(&s, 0.5, imp_v3(0, 0, 0), imp_v3(1, 0, 0), 1);
    size_t st = add_ball(&s, 0.5, imp_v3(3, 0, 0), imp_v3(0, 0, 0), 1);
    s.b[st].is_static = 1;
    /* a kinematic static ball (a paddle) at speed 2 into a resting ball: it leaves at 4 */
    size_t pad = add_ball(&s, 0.5, imp_v3(0, 10, 0), imp_v3(2, 0, 0), 1);
    s.b[pad].is_static = 1;
    size_t hit = add_ball(&s, 0.5, imp_v3(3, 10, 0), imp_v3(0, 0, 0), 1);
    imp_sim_input in = input(&s, 2, 5);
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_true(fabs(out.bodies[0].v.x + 1) < 1e-14);
    assert_true(fabs(out.bodies[0].p.x - (2 - 3)) < 1e-13); /* hit at t = 2 at x = 2 */
    assert_true(out.bodies[st].v.x == 0 && out.bodies[st].p.x == 3);
    /* the paddle's front reaches x = 2.5 at t = 1; the ball leaves at 4 from x = 3 */
    assert_true(fabs(out.bodies[hit].v.x - 4) < 1e-13);
    assert_true(fabs(out.bodies[hit].p.x - (3 + 4 * 4)) < 1e-12);
    assert_true(fabs(out.bodies[pad].v.x - 2) < 1e-15);
    assert_true(fabs(out.bodies[pad].p.x - 10) < 1e-13);
    assert_int_equal(out.stats.events, 2);
    imp_sim_output_free(&out);

    /* a moving wall: the solid x >= 10 - t pushes a resting ball (r 0.5 at x 5) at t = 4.5 */
    scene s2 = {0};
    size_t wall = add_wall(&s2, imp_v3(-1, 0, 0), -10, 1);
    s2.b[wall].m.v = imp_v3(-1, 0, 0);
    size_t pushed = add_ball(&s2, 0.5, imp_v3(5, 0, 0), imp_v3(0, 0, 0), 1);
    in = input(&s2, 2, 5);
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stats.events, 1);
    assert_true(fabs(out.events[0].time - 4.5) < 1e-14);
    assert_true(fabs(out.bodies[pushed].v.x + 2) < 1e-13);
    assert_true(fabs(out.bodies[pushed].p.x - (5 - 2 * 0.5)) < 1e-12);
    imp_sim_output_free(&out);
}

/* ---- long runs ------------------------------------------------------------------------------ */

/* A triangle rack of `rows` rows of touching-but-for-a-hair balls hit by a cue ball, in a box of
 * four walls of side w. */
static void billiard(scene *s, int rows, double w, uint64_t seed) {
    const double r = 0.5, gap = 1e-7;
    double dx = sqrt(3.0) * (r + gap), x0 = w * 0.6;
    for (int k = 0; k < rows; ++k)
        for (int j = 0; j <= k; ++j)
            add_ball(s, r, imp_v3(x0 + k * dx, w / 2 + (j - k / 2.0) * (2 * r + 2 * gap), 0),
                     imp_v3(0, 0, 0), 1);
    uint64_t rng = seed;
    add_ball(s, r, imp_v3(w * 0.2, w / 2 + imp_rng_uniform(&rng, -0.1, 0.1), 0), imp_v3(10, 0, 0),
             1);
    add_box(s, w, 2, 1);
}

static void test_billiard_break_energy_and_overlap(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0001;
    scene s = {0};
    const double w = 30;
    billiard(&s, 10, w, seed); /* 55 + 1 balls */
    imp_sim_input in = input(&s, 2, 1e6);
    in.max_events = 100000;
    in.record = 0;
    imp_sim *sim;
    assert_int_equal(imp_sim_create(&in, &sim, NULL), IMP_SIM_OK);
    assert_non_null(sim);
    double k0 = kinetic(sim, &s, 0), worst = 0;
    int rc = IMP_SIM_STOP_HORIZON;
    int samples = 0;
    for (double t = 0.37; rc == IMP_SIM_STOP_HORIZON; t += 0.37) {
        rc = imp_sim_advance(sim, t);
        assert_true(rc != IMP_SIM_STOP_FAILED);
        double now = imp_sim_time(sim);
        if (samples++ % 8 == 0) worst = fmax(worst, max_depth(sim, &s, now, 2));
        assert_true(t < 1e5);
    }
    assert_int_equal(rc, IMP_SIM_STOP_MAX_EVENTS);
    double now = imp_sim_time(sim);
    worst = fmax(worst, max_depth(sim, &s, now, 2));
    double k1 = kinetic(sim, &s, now);
    const imp_sim_stats *st = imp_sim_get_stats(sim);
    if (fabs(k1 - k0) > 1e-9 * k0 || worst > 1e-9 * w || st->events != 100000)
        fail_msg("seed %#llx: energy %.17g -> %.17g, depth %.3g, events %zu",
                 (unsigned long long)seed, k0, k1, worst, st->events);
    imp_sim_destroy(sim);
}

/* A 3D room whose six walls are static boxes (slabs 1 thick just outside
 * [0, w]^3, one of them turned a little about its normal), holding balls,
 * tumbling-free boxes, capsules and a polyhedron, e = 1, no gravity: energy
 * and momentum-free walls conserve the kinetic energy to 1e-9, no pair ever
 * interpenetrates by more than 1e-9 of the room, nobody leaves it, and the
 * box walls take their share of the contacts. */
static void test_box_walls_3d(void **state) {
    (void)state;
    const uint64_t seed = 0x3DB0;
    uint64_t rng = seed;
    const double w = 12;
    scene s = {0};
    static imp_vec3 oct[6] = {{0.6, 0, 0},  {-0.6, 0, 0}, {0, 0.6, 0},
                              {0, -0.6, 0}, {0, 0, 0.6},  {0, 0, -0.6}};
    for (int i = 0; i < 40; ++i) {
        imp_vec3 p = imp_v3(1.5 + (i % 4) * 3, 1.5 + (i / 4 % 4) * 3, 1.5 + (i / 16) * 4);
        size_t k = add_ball(&s, 0.5, p, random_vec(&rng, 4), 1);
        if (i % 4 == 1)
            s.shapes[k] = (imp_shape){
                .type = IMP_SHAPE_BOX, .half = imp_v3(0.5, 0.4, 0.3), .rot = random_rotation(&rng)};
        else if (i % 4 == 2)
            s.shapes[k] = (imp_shape){.type = IMP_SHAPE_CAPSULE,
                                      .a = imp_v3(-0.4, 0.2, 0),
                                      .b = imp_v3(0.4, -0.2, 0.1),
                                      .radius = 0.3};
        else if (i == 3)
            s.shapes[k] = (imp_shape){.type = IMP_SHAPE_POLYHEDRON, .verts = oct, .n_verts = 6};
    }
    size_t first_wall = s.n;
    for (int k = 0; k < 3; ++k)
        for (int side = 0; side < 2; ++side) {
            size_t i = s.n++;
            imp_vec3 half = imp_v3(k == 0 ? 0.5 : w, k == 1 ? 0.5 : w, k == 2 ? 0.5 : w);
            imp_vec3 c = imp_v3(w / 2, w / 2, w / 2);
            double at = side ? w + 0.5 : -0.5;
            if (k == 0) c.x = at;
            if (k == 1) c.y = at;
            if (k == 2) c.z = at;
            imp_quat q = {1, 0, 0, 0};
            if (k == 2 && side) /* the ceiling turned about its normal: an oriented box */
                q = (imp_quat){cos(0.2), 0, 0, sin(0.2)};
            s.shapes[i] = (imp_shape){.type = IMP_SHAPE_BOX, .half = half, .rot = q};
            s.b[i] = (imp_sim_body){
                {c, imp_v3(0, 0, 0), imp_v3(0, 0, 0)}, &s.shapes[i], 1.0, 1, 1, 1, NULL};
        }
    imp_sim_input in = input(&s, 3, 1e6);
    in.max_events = 20000;
    in.record = 1;
    imp_sim *sim;
    assert_int_equal(imp_sim_create(&in, &sim, NULL), IMP_SIM_OK);
    assert_non_null(sim);
    double k0 = kinetic(sim, &s, 0), worst = 0;
    int rc = IMP_SIM_STOP_HORIZON;
    for (double t = 1.7; rc == IMP_SIM_STOP_HORIZON; t += 1.7) {
        rc = imp_sim_advance(sim, t);
        assert_true(rc != IMP_SIM_STOP_FAILED && t < 1e5);
        double now = imp_sim_time(sim);
        worst = fmax(worst, max_depth(sim, &s, now, 3));
        for (size_t i = 0; i < first_wall; ++i) {
            imp_vec3 p, v;
            imp_sim_body_state(sim, i, now, &p, &v);
            if (!(fmin(p.x, fmin(p.y, p.z)) > 0 && fmax(p.x, fmax(p.y, p.z)) < w))
                fail_msg("seed %#llx: body %zu left the room at t = %.17g",
                         (unsigned long long)seed, i, now);
        }
    }
    assert_int_equal(rc, IMP_SIM_STOP_MAX_EVENTS);
    double now = imp_sim_time(sim), k1 = kinetic(sim, &s, now);
    size_t n_ev, on_walls = 0;
    const imp_sim_event *ev = imp_sim_events(sim, &n_ev);
    for (size_t i = 0; i < n_ev; ++i)
        on_walls += ev[i].b >= first_wall;
    if (fabs(k1 - k0) > 1e-9 * k0 || worst > 1e-9 * w || on_walls < n_ev / 10)
        fail_msg("seed %#llx: energy %.17g -> %.17g, depth %.3g, %zu of %zu contacts on walls",
                 (unsigned long long)seed, k0, k1, worst, on_walls, n_ev);
    print_message("3D box walls: %zu contacts (%zu on walls) to t = %.3g, depth %.3g\n", n_ev,
                  on_walls, now, worst);
    imp_sim_destroy(sim);
}

/* n balls on a lattice filling [0, w]^dim with random velocities plus `drift`, in a box of
 * walls when `walls`. */
static void gas(scene *s, size_t n, int dim, double w, imp_vec3 drift, int walls, uint64_t seed) {
    uint64_t rng = seed;
    int per = (int)ceil(dim == 3 ? cbrt((double)n) : sqrt((double)n));
    double sp = w / per;
    for (size_t i = 0; i < n; ++i) {
        size_t ix = i % (size_t)per, iy = (i / (size_t)per) % (size_t)per,
               iz = i / ((size_t)per * per);
        imp_vec3 p = imp_v3((ix + 0.5) * sp, (iy + 0.5) * sp, dim == 3 ? (iz + 0.5) * sp : 0);
        imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0);
        double r = sp * imp_rng_uniform(&rng, 0.2, 0.4);
        add_ball(s, r, p, imp_add(v, drift), 1);
        s->b[i].mass = imp_rng_uniform(&rng, 0.5, 2);
    }
    if (walls) add_box(s, w, dim, 1);
}

/* The first `compare` events of two runs are the same contacts at the same times. */
static void same_events(const imp_sim_output *x, const imp_sim_output *y, size_t compare,
                        uint64_t seed, int dim) {
    assert_true(x->n_events >= compare && y->n_events >= compare);
    for (size_t k = 0; k < compare; ++k) {
        const imp_sim_event *p = &x->events[k], *q = &y->events[k];
        if (p->a != q->a || p->b != q->b || fabs(p->time - q->time) > 1e-9 * (1 + p->time))
            fail_msg("seed %#llx dim %d: event %zu differs: (%u,%u) at %.17g vs (%u,%u) at %.17g",
                     (unsigned long long)seed, dim, k, p->a, p->b, p->time, q->a, q->b, q->time);
    }
}

/* The grid gives the same contacts as predicting every body against every other. */
static void test_grid_matches_all_pairs(void **state) {
    (void)state;
    for (int dim = 2; dim <= 3; ++dim) {
        const uint64_t seed = 0xabc0 + (uint64_t)dim;
        scene s = {0};
        gas(&s, 200, dim, 20, imp_v3(0, 0, 0), 1, seed);
        imp_sim_input in = input(&s, dim, 1e6);
        in.max_events = 3000;
        /* contacts are predicted at different times in the two runs (the grid adds crossing
         * events), so their rounding differs and chaos amplifies it: compare the first 800 */
        imp_sim_output a, b;
        assert_int_equal(imp_sim_run(&in, &a, NULL), IMP_SIM_OK);
        in.no_grid = 1;
        assert_int_equal(imp_sim_run(&in, &b, NULL), IMP_SIM_OK);
        assert_int_equal(a.n_events, 3000);
        assert_int_equal(b.n_events, 3000);
        assert_true(a.stats.crossings > 0 && b.stats.crossings == 0);
        same_events(&a, &b, 800, seed, dim);
        imp_sim_output_free(&a);
        imp_sim_output_free(&b);
    }
}

/* Cells outside the box the grid bodies start in hash into buckets (bucket_of): a gas
 * drifting with no walls leaves that box and must still meet the same contacts as all-pairs
 * prediction; and so must the same gas with one body 1e7 away, whose box would be too large
 * to keep as dense cells, so that every cell hashes from the start. */
static void test_grid_beyond_start_box(void **state) {
    (void)state;
    for (int dim = 2; dim <= 3; ++dim)
        for (int outlier = 0; outlier <= 1; ++outlier) {
            const uint64_t seed = 0xd21f7 + (uint64_t)dim + 8 * (uint64_t)outlier;
            scene s = {0};
            const double w = 20, drift = 10;
            gas(&s, 200, dim, w, imp_v3(drift, -drift, dim == 3 ? drift : 0), 0, seed);
            if (outlier) add_ball(&s, 1, imp_v3(1e7, 0, 0), imp_v3(0, 0, 0), 1);
            /* by t = 60 the drift has carried every body 600 away */
            imp_sim_input in = input(&s, dim, 60);
            imp_sim_output a, b;
            assert_int_equal(imp_sim_run(&in, &a, NULL), IMP_SIM_OK);
            in.no_grid = 1;
            assert_int_equal(imp_sim_run(&in, &b, NULL), IMP_SIM_OK);
            assert_int_equal(a.stopped, IMP_SIM_STOP_HORIZON);
            same_events(&a, &b, 150, seed, dim);
            /* every body left the starting box [0, w]^dim by the end */
            size_t inside = 0;
            for (size_t i = 0; i < 200; ++i)
                inside += a.bodies[i].p.x < w + 2 && a.bodies[i].p.y > -2;
            if (inside != 0)
                fail_msg("seed %#llx dim %d: %zu bodies still inside at t = %g",
                         (unsigned long long)seed, dim, inside, a.time);
            imp_sim_output_free(&a);
            imp_sim_output_free(&b);
        }
}

static void test_max_events_stops(void **state) {
    (void)state;
    scene s = {0};
    billiard(&s, 5, 20, 7);
    imp_sim_input in = input(&s, 2, 100);
    in.max_events = 11;
    imp_sim_output a, b;
    assert_int_equal(imp_sim_run(&in, &a, NULL), IMP_SIM_OK);
    in.max_events = 10;
    assert_int_equal(imp_sim_run(&in, &b, NULL), IMP_SIM_OK);
    assert_int_equal(b.stopped, IMP_SIM_STOP_MAX_EVENTS);
    assert_int_equal(b.stats.events, 10);
    assert_int_equal(b.n_events, 10);
    assert_true(b.time < 100);
    /* it stopped at the time of the contact it did not process */
    assert_true(b.time == a.events[10].time);
    in.max_events = 0;
    imp_sim_output c;
    assert_int_equal(imp_sim_run(&in, &c, NULL), IMP_SIM_OK);
    assert_int_equal(c.stopped, IMP_SIM_STOP_MAX_EVENTS);
    assert_int_equal(c.n_events, 0);
    assert_true(c.time == a.events[0].time);
    imp_sim_output_free(&a);
    imp_sim_output_free(&b);
    imp_sim_output_free(&c);
}

/* ---- gravity --------------------------------------------------------------------------------- */

static void test_bounce_apex_follows_e_squared(void **state) {
    (void)state;
    const double g = 9.81, e = 0.8, r = 0.5, h0 = 10;
    scene s = {0};
    add_ball(&s, r, imp_v3(1, h0 + r, 0), imp_v3(0, 0, 0), e);
    add_wall(&s, imp_v3(0, 1, 0), 0, 1); /* the floor: the solid y <= 0 */
    imp_sim_input in = input(&s, 2, 12);
    in.gravity = imp_v3(0, -g, 0);
    in.max_events = 8;
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_MAX_EVENTS);
    assert_int_equal(out.n_events, 8);
    const imp_sim_event *ev = out.events;
    /* first contact: fall from h0 */
    assert_true(fabs(ev[0].time - sqrt(2 * h0 / g)) < 1e-12);
    /* a second run, stopped at each apex (half-way between contacts): its height there */
    imp_sim *sim;
    assert_int_equal(imp_sim_create(&in, &sim, NULL), IMP_SIM_OK);
    assert_non_null(sim);
    double prev = h0;
    for (size_t k = 0; k + 1 < out.n_events; ++k) {
        double apex_t = 0.5 * (ev[k].time + ev[k + 1].time);
        assert_int_equal(imp_sim_advance(sim, apex_t), IMP_SIM_STOP_HORIZON);
        imp_vec3 p, v;
        imp_sim_body_state(sim, 0, apex_t, &p, &v);
        double h = p.y - r, dt = ev[k + 1].time - ev[k].time;
        assert_true(fabs(v.y) < 1e-9 * sqrt(2 * g * h0));
        assert_true(fabs(h - g * dt * dt / 8) < 1e-9 * h);
        if (fabs(h / prev - e * e) > 1e-9)
            fail_msg("bounce %zu: apex %.17g after %.17g, ratio %.17g", k, h, prev, h / prev);
        prev = h;
        /* the impulses shrink by e too */
        assert_true(fabs(ev[k + 1].impulse.y / ev[k].impulse.y - e) < 1e-9);
    }
    imp_sim_output_free(&out);
    imp_sim_destroy(sim);
}

static void test_inelastic_ball_comes_to_rest(void **state) {
    (void)state;
    const double g = 9.81, r = 0.5;
    scene s = {0};
    add_ball(&s, r, imp_v3(0, 1 + r, 0), imp_v3(0.3, 0, 0), 0.5);
    add_wall(&s, imp_v3(0, 1, 0), 0, 1);
    imp_sim_input in = input(&s, 2, 10);
    in.gravity = imp_v3(0, -g, 0);
    in.max_events = 100000;
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_HORIZON);
    assert_true(out.stats.events < 100);
    assert_true(out.stats.rests >= 1);
    assert_true(fabs(out.bodies[0].p.y - r) < 1e-9);
    assert_true(fabs(out.bodies[0].v.y) < 1e-9);
    /* it slides on: frictionless floor, tangential efficiency 1 */
    assert_true(fabs(out.bodies[0].v.x - 0.3) < 1e-12);
    imp_sim_output_free(&out);

    /* a ball resting on the floor from the start stays there */
    scene s2 = {0};
    add_ball(&s2, r, imp_v3(0, r, 0), imp_v3(0, 0, 0), 1);
    add_wall(&s2, imp_v3(0, 1, 0), 0, 1);
    in = input(&s2, 2, 10);
    in.gravity = imp_v3(0, -g, 0);
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_true(fabs(out.bodies[0].p.y - r) < 1e-9 && out.stats.events <= 1);
    imp_sim_output_free(&out);
}

/* Three balls in a row, the middle one hit with a tiny restitution: the textbook inelastic
 * collapse (e < 7 - 4 sqrt 3) ends after finitely many contacts. */
static void test_inelastic_collapse_terminates(void **state) {
    (void)state;
    scene s = {0};
    const double e = sqrt(0.05);
    add_ball(&s, 0.5, imp_v3(-2, 0, 0), imp_v3(1, 0, 0), e);
    add_ball(&s, 0.5, imp_v3(0, 0, 0), imp_v3(0, 0, 0), e);
    add_ball(&s, 0.5, imp_v3(1, 0, 0), imp_v3(0, 0, 0), e);
    imp_sim_input in = input(&s, 2, 10);
    in.max_events = 100000;
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_HORIZON);
    assert_true(out.stats.events < 10000);
    double p = 0;
    for (int i = 0; i < 3; ++i)
        p += out.bodies[i].v.x;
    assert_true(fabs(p - 1) < 1e-12); /* momentum */
    imp_sim_output_free(&out);
}

/* ---- against a fixed-step integrator -----------------------------------------------------------
 */

/* Independent reference: step dt, move, then resolve every approaching overlapping pair
 * (balls, and balls against the box walls) with the normal through the centres. */
static void brute(const scene *s, size_t nb, double w, double horizon, double dt, imp_vec3 *p,
                  imp_vec3 *v) {
    for (size_t i = 0; i < nb; ++i) {
        p[i] = s->b[i].m.p;
        v[i] = s->b[i].m.v;
    }
    long steps = lround(horizon / dt);
    for (long k = 0; k < steps; ++k) {
        for (size_t i = 0; i < nb; ++i)
            p[i] = imp_madd(p[i], v[i], dt);
        for (size_t i = 0; i < nb; ++i) {
            double r = s->shapes[i].radius, e = s->b[i].restitution;
            double *x = &p[i].x, *u = &v[i].x;
            for (int a = 0; a < 2; ++a) {
                if (x[a] - r < 0 && u[a] < 0) u[a] = -e * u[a];
                if (x[a] + r > w && u[a] > 0) u[a] = -e * u[a];
            }
            for (size_t j = i + 1; j < nb; ++j) {
                imp_vec3 d = imp_sub(p[j], p[i]);
                double dist = imp_len(d), rr = r + s->shapes[j].radius;
                if (dist >= rr) continue;
                imp_vec3 n = imp_scale(d, 1 / dist);
                double vn = imp_dot(imp_sub(v[j], v[i]), n);
                if (vn >= 0) continue;
                double ee = e * s->b[j].restitution, mi = s->b[i].mass, mj = s->b[j].mass;
                double jn = -(1 + ee) * vn / (1 / mi + 1 / mj);
                v[i] = imp_madd(v[i], n, -jn / mi);
                v[j] = imp_madd(v[j], n, jn / mj);
            }
        }
    }
}

static void test_against_fixed_step(void **state) {
    (void)state;
    const double w = 6, horizon = 2, dt = 1e-6;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
        scene s = {0};
        for (int i = 0; i < 3; ++i) {
            imp_vec3 p = imp_v3(1 + 2 * i, imp_rng_uniform(&rng, 1, 5), 0);
            imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1), 0);
            add_ball(&s, 0.5, p, v, imp_rng_uniform(&rng, 0.7, 1));
            s.b[i].mass = imp_rng_uniform(&rng, 0.5, 2);
        }
        add_box(&s, w, 2, 1);
        imp_sim_input in = input(&s, 2, horizon);
        imp_sim_output out;
        assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
        imp_vec3 p[3], v[3];
        brute(&s, 3, w, horizon, dt, p, v);
        /* each contact is detected up to one step late (error <= |v| dt in position, and a normal
         * off by about |v| dt / r); allow 100 such errors per contact */
        double tol = 100 * (1 + (double)out.stats.events) * 2 * dt / 0.5 * 2;
        for (int i = 0; i < 3; ++i) {
            double dp = imp_len(imp_sub(p[i], out.bodies[i].p));
            double dv = imp_len(imp_sub(v[i], out.bodies[i].v));
            if (dp > tol || dv > tol)
                fail_msg("seed %llu body %d: position off by %.3g, velocity by %.3g (tol %.3g, "
                         "%zu events)",
                         (unsigned long long)seed, i, dp, dv, tol, out.stats.events);
        }
        assert_true(out.stats.events >= 1);
        imp_sim_output_free(&out);
    }
}

/* Found by tests/fuzz/fuzz_api.c: a ball held against a tilted floor by enormous
 * gravity slides down it, crossing cells and never touching anything. That is work, not
 * contacts: max_events does not stop it (it once did, under a budget of non-contact work
 * that reported itself as max_events). It once crossed cells until the server's time
 * budget stopped it; now the cells end OUTER_CELLS (4096) beyond the box the bodies start
 * in, so it crosses at most that many per axis on its way out and reaches the horizon. */
static void test_degenerate_run_is_bounded(void **state) {
    (void)state;
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 1.5};
    imp_shape floor_ = {.type = IMP_SHAPE_HALFSPACE,
                        .normal = imp_v3(5 / sqrt(26.0), 1 / sqrt(26.0), 0),
                        .offset = 0};
    imp_sim_body b[2] = {
        {.m = {imp_v3(0, 3, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)},
         .shape = &ball,
         .mass = 1,
         .restitution = 1,
         .tangential = 1},
        {.shape = &floor_, .is_static = 1, .mass = 1, .restitution = 1, .tangential = 1},
    };
    imp_sim_input in = {.bodies = b,
                        .n = 2,
                        .dim = 2,
                        .horizon = 5,
                        .gravity = imp_v3(0, -3333333335.81, 0),
                        .max_events = 1000};
    countdown c = {0, 40};
    in.stop = (imp_stop){stop_after, &c};
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_HORIZON);
    assert_true(out.stats.events < 1000);
    /* it leaves the one-cell starting box through 4096 cells on each axis it moves along */
    assert_true(out.stats.crossings >= 4096);
    assert_true(out.stats.crossings <= 2 * (4096 + 2));
    assert_true(out.time == 5);
    imp_sim_output_free(&out);
}

/* A stopped simulation is consistent: its state at the time it stopped is exactly that of
 * the same simulation advanced, without a stop, to that time (positions bit for bit), and
 * it goes on from there when asked again. */
static void test_stop_check(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0007;
    scene s = {0};
    billiard(&s, 10, 30, seed);
    imp_sim_input in = input(&s, 2, 1e6);
    in.max_events = 100000;
    in.record = 0;
    countdown c = {0, 3};
    in.stop = (imp_stop){stop_after, &c};
    imp_sim *a, *b;
    assert_int_equal(imp_sim_create(&in, &a, NULL), IMP_SIM_OK);
    assert_int_equal(imp_sim_advance(a, 1e6), IMP_SIM_STOP_STOPPED);
    assert_int_equal(imp_sim_stopped_by(a), 7);
    assert_int_equal(c.calls, 3); /* polled every IMP_STOP_POLL_EVENTS queue entries */
    double t = imp_sim_time(a);
    assert_true(t > 0.0 && t < 1e6);
    in.stop = (imp_stop){NULL, NULL};
    assert_int_equal(imp_sim_create(&in, &b, NULL), IMP_SIM_OK);
    assert_int_equal(imp_sim_advance(b, t), IMP_SIM_STOP_HORIZON);
    for (size_t i = 0; i < s.n; ++i) {
        imp_vec3 pa, va, pb, vb;
        imp_sim_body_state(a, i, t, &pa, &va);
        imp_sim_body_state(b, i, t, &pb, &vb);
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
    /* the stop check keeps saying stop; with it gone the run goes on to more events */
    assert_int_equal(imp_sim_advance(a, 1e6), IMP_SIM_STOP_STOPPED);
    imp_sim_destroy(a);
    imp_sim_destroy(b);
    /* imp_sim_run reports it too */
    c = (countdown){0, 2};
    in.stop = (imp_stop){stop_after, &c};
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.stopped, IMP_SIM_STOP_STOPPED);
    assert_int_equal(out.stopped_by, 7);
    imp_sim_output_free(&out);
}

/* Filters: balls whose filters keep them apart pass through each other and are never
 * reported; a negative group never touches even with matching masks, a positive group always
 * does even with masks that exclude each other. */
static void test_filters(void **state) {
    (void)state;
    static const imp_filter apart_a = {1, 0x1, 0}, apart_b = {2, 0x2, 0};
    static const imp_filter never = {1, 0xffffffffu, -4}, always = {1, 0x0, 9};
    const imp_filter *cases[3][2] = {{&apart_a, &apart_b}, {&never, &never}, {&always, &always}};
    for (int c = 0; c < 3; ++c) {
        for (int dim = 2; dim <= 3; ++dim) {
            scene s = {0};
            size_t a = add_ball(&s, 0.5, imp_v3(0, 0, 0), imp_v3(1, 0, 0), 1.0);
            size_t b = add_ball(&s, 0.5, imp_v3(4, 0, 0), imp_v3(-1, 0, 0), 1.0);
            s.b[a].filter = cases[c][0];
            s.b[b].filter = cases[c][1];
            imp_sim_input in = input(&s, dim, 4.0);
            imp_sim_output out;
            assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
            if (c < 2) {
                /* they pass through: nothing reported, each ends where it would alone */
                assert_int_equal(out.n_events, 0);
                assert_true(out.bodies[a].p.x == 4.0 && out.bodies[b].p.x == 0.0);
                assert_true(out.bodies[a].v.x == 1.0 && out.bodies[b].v.x == -1.0);
            } else {
                /* elastic head-on: they meet at t = 1.5 and swap velocities */
                assert_int_equal(out.n_events, 1);
                assert_true(fabs(out.events[0].time - 1.5) <= 1e-12);
                assert_true(fabs(out.bodies[a].v.x + 1.0) <= 1e-12);
                assert_true(fabs(out.bodies[b].v.x - 1.0) <= 1e-12);
            }
            imp_sim_output_free(&out);
        }
    }
    /* a ball filtered out of a wall's mask falls through it; others in the same run bounce */
    scene s = {0};
    size_t w = add_wall(&s, imp_v3(0, 1, 0), 0, 1.0); /* the floor: y <= 0 */
    size_t ghost = add_ball(&s, 0.5, imp_v3(0, 2, 0), imp_v3(0, -1, 0), 1.0);
    size_t ball = add_ball(&s, 0.5, imp_v3(5, 2, 0), imp_v3(0, -1, 0), 1.0);
    static const imp_filter floor_f = {4, 0x1, 0}, ghost_f = {2, 0xffffffffu, 0};
    s.b[w].filter = &floor_f;
    s.b[ghost].filter = &ghost_f;
    imp_sim_input in = input(&s, 2, 4.0);
    imp_sim_output out;
    assert_int_equal(imp_sim_run(&in, &out, NULL), IMP_SIM_OK);
    assert_int_equal(out.n_events, 1);
    assert_true(out.events[0].a == w && out.events[0].b == ball);
    assert_true(out.bodies[ghost].p.y == -2.0);
    assert_true(fabs(out.bodies[ball].p.y - 3.0) <= 1e-12); /* bounced at t = 1.5 */
    imp_sim_output_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_degenerate_run_is_bounded),
        cmocka_unit_test(test_grid_beyond_start_box),
        cmocka_unit_test(test_newtons_cradle),
        cmocka_unit_test(test_queue_order_bouncing_lanes),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_stop_check),
        cmocka_unit_test(test_head_on_exchange_3d),
        cmocka_unit_test(test_static_and_kinematic),
        cmocka_unit_test(test_billiard_break_energy_and_overlap),
        cmocka_unit_test(test_box_walls_3d),
        cmocka_unit_test(test_grid_matches_all_pairs),
        cmocka_unit_test(test_max_events_stops),
        cmocka_unit_test(test_bounce_apex_follows_e_squared),
        cmocka_unit_test(test_inelastic_ball_comes_to_rest),
        cmocka_unit_test(test_inelastic_collapse_terminates),
        cmocka_unit_test(test_against_fixed_step),
        cmocka_unit_test(test_grazing_pairs_match_solver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
