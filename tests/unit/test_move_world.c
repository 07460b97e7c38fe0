/*
 * test_move_world.c - client moves checked against a static world
 * (core/move_check.c with core/world.h): no snagging on internal edges,
 * while real steps and creases still block.
 *
 * DESIGN
 * The reference for a tessellated surface is the same surface as one
 * piece: a floor of 10,000 coplanar triangles against the same floor as
 * two triangles, a wall of 20,000 against two, a flat heightfield against
 * two triangles, a 2D chain of 1,000 collinear segments against one. The
 * corrected outcome (position, velocity, iterations, violations) must be
 * the same to 4 ulps of the scene's scale (contact times against different
 * triangles of one plane round differently in their last bits), and within 1e-12 of the
 * answer against a halfspace (the exact plane, through another solver). Without the
 * internal-edge rule a body a hair below the floor reaches the next
 * triangle's edge with a normal tilted back against its motion and is
 * reported tunnelling: the "below the floor" cases catch that. The step,
 * wall and ramp cases check that genuine features still block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>

#include "core/move_check.h"
#include "core/world.h"

#define V(x, y, z) imp_v3((x), (y), (z))

typedef struct grid {
    imp_vec3 *v;
    uint32_t *t;
    size_t nv, nt;
} grid;

/* A plane patch from o along u (nu cells) and w (nw cells), triangles facing u x w. */
static grid patch(imp_vec3 o, imp_vec3 u, imp_vec3 w, size_t nu, size_t nw) {
    grid g = {malloc((nu + 1) * (nw + 1) * sizeof *g.v), malloc(6 * nu * nw * sizeof *g.t),
              (nu + 1) * (nw + 1), 2 * nu * nw};
    assert_non_null(g.v);
    assert_non_null(g.t);
    for (size_t j = 0; j <= nw; ++j)
        for (size_t i = 0; i <= nu; ++i)
            g.v[j * (nu + 1) + i] = imp_add(o, imp_add(imp_scale(u, (double)i / (double)nu),
                                                       imp_scale(w, (double)j / (double)nw)));
    size_t k = 0;
    for (size_t j = 0; j < nw; ++j)
        for (size_t i = 0; i < nu; ++i) {
            uint32_t a = (uint32_t)(j * (nu + 1) + i), b = a + 1, d = a + (uint32_t)(nu + 1),
                     c = d + 1;
            uint32_t tri[6] = {a, b, c, a, c, d};
            memcpy(g.t + k, tri, sizeof tri);
            k += 6;
        }
    return g;
}

static void grid_free(grid *g) {
    free(g->v);
    free(g->t);
}

static imp_world_collider mesh_of(const grid *g) {
    imp_world_collider c;
    memset(&c, 0, sizeof c);
    c.kind = IMP_WORLD_MESH;
    c.mesh = (imp_world_mesh){g->v, g->nv, g->t, g->nt};
    return c;
}

static imp_world *build(int dim, const imp_world_collider *c, size_t n) {
    imp_world_input in = {dim, c, n, {NULL, NULL}};
    imp_world *w = NULL;
    assert_int_equal(imp_world_build(&in, &w, NULL), IMP_WORLD_OK);
    return w;
}

static imp_move_result check(const imp_shape *s, imp_vec3 from, imp_vec3 to, const imp_world *w,
                             const imp_move_obstacle *obs, size_t n, int dim) {
    imp_move_input in = {.shape = s,
                         .from = from,
                         .to = to,
                         .dt = 1.0,
                         .obstacles = obs,
                         .n_obstacles = n,
                         .dim = dim,
                         .max_speed = INFINITY,
                         .max_iterations = IMP_MOVE_DEFAULT_ITERATIONS,
                         .world = w};
    imp_move_result r = imp_move_check(&in);
    assert_int_equal(r.state, IMP_MOVE_OK);
    return r;
}

/* Equal within ULPS units in the last place of the scene's scale (its coordinates reach
 * SCALE): contact times against different triangles of one plane round differently in their
 * last bits, and positions carry that through the move. */
#define ULPS 4.0
#define SCALE 10.0
static int same_x(double a, double b) { return fabs(a - b) <= ULPS * DBL_EPSILON * SCALE; }
static int same_vec(imp_vec3 a, imp_vec3 b) {
    return same_x(a.x, b.x) && same_x(a.y, b.y) && same_x(a.z, b.z);
}

/* The outcomes agree to a few ulps (violations: kind, time, point, normal, depth). */
static void assert_same(const imp_move_result *a, const imp_move_result *b, const char *what) {
    if (!same_vec(a->position, b->position) || !same_vec(a->velocity, b->velocity) ||
        a->iterations != b->iterations || a->blocked != b->blocked ||
        a->n_violations != b->n_violations || a->valid != b->valid)
        fail_msg(
            "%s: position (%.17g, %.17g, %.17g) vs (%.17g, %.17g, %.17g), velocity (%.17g, "
            "%.17g, %.17g) vs (%.17g, %.17g, %.17g), iterations %d vs %d, violations %zu vs %zu",
            what, a->position.x, a->position.y, a->position.z, b->position.x, b->position.y,
            b->position.z, a->velocity.x, a->velocity.y, a->velocity.z, b->velocity.x,
            b->velocity.y, b->velocity.z, a->iterations, b->iterations, a->n_violations,
            b->n_violations);
    for (size_t i = 0; i < a->n_violations; ++i) {
        const imp_move_violation *x = &a->violations[i], *y = &b->violations[i];
        /* a capsule lying on a face touches along a segment: any point of it is the contact
         * point, so only the points' heights above the surface must agree */
        double dh = imp_dot(imp_sub(x->point, y->point), x->normal);
        if (x->kind != y->kind || !same_x(x->time, y->time) ||
            !(fabs(dh) <= ULPS * DBL_EPSILON * SCALE) || !same_vec(x->normal, y->normal) ||
            !same_x(x->depth, y->depth))
            fail_msg("%s: violation %zu differs (kind %d/%d, time %.17g/%.17g, point %.17g %.17g "
                     "%.17g / %.17g %.17g %.17g, normal %.17g %.17g %.17g / %.17g %.17g %.17g)",
                     what, i, x->kind, y->kind, x->time, y->time, x->point.x, x->point.y,
                     x->point.z, y->point.x, y->point.y, y->point.z, x->normal.x, x->normal.y,
                     x->normal.z, y->normal.x, y->normal.y, y->normal.z);
    }
}

static void assert_close(const imp_move_result *a, const imp_move_result *b, double tol,
                         const char *what) {
    imp_vec3 d = imp_sub(a->position, b->position);
    /* a mesh floor is a surface, a halfspace a solid: ending below the floor is tunnelling
     * through one and penetration of the other, so the lists may differ; the outcome not */
    if (!(imp_max_abs(d) <= tol) || a->iterations != b->iterations)
        fail_msg("%s: position (%.17g, %.17g, %.17g) vs (%.17g, %.17g, %.17g), violations %zu vs "
                 "%zu, iterations %d vs %d",
                 what, a->position.x, a->position.y, a->position.z, b->position.x, b->position.y,
                 b->position.z, a->n_violations, b->n_violations, a->iterations, b->iterations);
}

static size_t count_kind(const imp_move_result *r, imp_move_kind k) {
    size_t n = 0;
    for (size_t i = 0; i < r->n_violations; ++i)
        n += r->violations[i].kind == k;
    return n;
}

/* A sphere and a capsule across a floor of 10,000 triangles, two triangles, a halfspace. */
static void test_floor_no_snagging(void **state) {
    (void)state;
    grid fine = patch(V(0, 0, 0), V(0, 0, 10), V(10, 0, 0), 100, 50);
    grid one = patch(V(0, 0, 0), V(0, 0, 10), V(10, 0, 0), 1, 1);
    assert_int_equal(fine.nt, 10000);
    imp_world_collider cf = mesh_of(&fine), co = mesh_of(&one);
    imp_world *wf = build(3, &cf, 1), *wo = build(3, &co, 1);
    imp_shape plane = {
        .type = IMP_SHAPE_HALFSPACE, .normal = V(0, 1, 0), .offset = 0.0, .rot = {1, 0, 0, 0}};
    imp_move_obstacle hs = {&plane, {V(0, 0, 0), V(0, 0, 0), V(0, 0, 0)}, NULL, V(0, 0, 0)};
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.5, .rot = {1, 0, 0, 0}};
    imp_shape cap = {.type = IMP_SHAPE_CAPSULE,
                     .a = V(-0.4, 0, 0.1),
                     .b = V(0.4, 0, -0.1),
                     .radius = 0.3,
                     .rot = {1, 0, 0, 0}};
    const imp_shape *movers[2] = {&ball, &cap};
    const double rest[2] = {0.5, 0.3};
    for (int k = 0; k < 2; ++k) {
        const imp_shape *s = movers[k];
        double h = rest[k];
        struct {
            imp_vec3 from, to;
            const char *what;
        } moves[] = {
            {V(1.03, h + 0.3, 1.07), V(9.11, h - 0.7, 5.13), "landing and sliding"},
            {V(1.03, h, 1.07), V(9.11, h, 5.13), "resting and sliding"},
            {V(1.03, h - 1e-7, 1.07), V(9.11, h - 1e-7, 5.13), "a hair below, sliding"},
            {V(1.03, h - 1e-3, 1.07), V(9.11, h - 0.5e-3, 7.13), "sunk and rising"},
            {V(8.91, h + 1e-9, 8.87), V(0.37, h - 2.0, 0.61), "steep into the floor"},
        };
        for (size_t m = 0; m < sizeof moves / sizeof moves[0]; ++m) {
            imp_move_result a = check(s, moves[m].from, moves[m].to, wf, NULL, 0, 3);
            imp_move_result b = check(s, moves[m].from, moves[m].to, wo, NULL, 0, 3);
            imp_move_result c = check(s, moves[m].from, moves[m].to, NULL, &hs, 1, 3);
            printf("%s, %s: position (%.17g, %.17g, %.17g), %zu violations, %d iterations\n",
                   k ? "capsule" : "sphere", moves[m].what, a.position.x, a.position.y,
                   a.position.z, a.n_violations, a.iterations);
            assert_same(&a, &b, moves[m].what);
            assert_close(&a, &c, 1e-12 * 10, moves[m].what);
            assert_int_equal(count_kind(&a, IMP_MOVE_TUNNELING) > 0, m == 0 || m == 4);
            imp_move_result_free(&a);
            imp_move_result_free(&b);
            imp_move_result_free(&c);
        }
    }
    imp_world_destroy(wf);
    imp_world_destroy(wo);
    grid_free(&fine);
    grid_free(&one);
}

/*
 * A turning mover over a stored world: a blade (half extents 2, 0.05, 0.05) spinning at 1 rad/s
 * about z, 2 above a floor, reaches it when its lowest point 2 sin a + 0.05 cos a is 2, at
 * a* = pi/2 - 2 atan2(0.05, 2), whatever it does along x. Against a floor of 10,000 triangles,
 * of two, and the same plane as a halfspace obstacle (no world): the move is tunnelling at a*
 * (each time certified to 1e-9), and the corrected outcomes agree; the same move not turning,
 * or turning only about its own long axis, is valid.
 */
static void test_turning_mover(void **state) {
    (void)state;
    const double star = 3.14159265358979323846 / 2 - 2 * atan2(0.05, 2);
    grid fine = patch(V(-10, 0, -10), V(0, 0, 20), V(20, 0, 0), 100, 50);
    grid one = patch(V(-10, 0, -10), V(0, 0, 20), V(20, 0, 0), 1, 1);
    imp_world_collider cf = mesh_of(&fine), co = mesh_of(&one);
    imp_world *wf = build(3, &cf, 1), *wo = build(3, &co, 1);
    imp_shape plane = {
        .type = IMP_SHAPE_HALFSPACE, .normal = V(0, 1, 0), .offset = 0.0, .rot = {1, 0, 0, 0}};
    imp_move_obstacle hs = {&plane, {V(0, 0, 0), V(0, 0, 0), V(0, 0, 0)}, NULL, V(0, 0, 0)};
    imp_shape blade = {.type = IMP_SHAPE_BOX, .half = V(2, 0.05, 0.05), .rot = {1, 0, 0, 0}};
    imp_vec3 spins[3] = {V(0, 0, 1), V(0, 0, 0), V(3, 0, 0)};
    imp_move_result r[3];
    for (int k = 0; k < 3; ++k) {
        const imp_world *w = k == 0 ? wf : k == 1 ? wo : NULL;
        for (int j = 0; j < 3; ++j) {
            imp_move_input in = {.shape = &blade,
                                 .from = V(0.31, 2, -0.17),
                                 .to = V(1.31, 2, -0.17),
                                 .dt = 2.0,
                                 .obstacles = w ? NULL : &hs,
                                 .n_obstacles = w ? 0 : 1,
                                 .dim = 3,
                                 .max_speed = INFINITY,
                                 .max_iterations = IMP_MOVE_DEFAULT_ITERATIONS,
                                 .world = w,
                                 .w = spins[j]};
            imp_move_result m = imp_move_check(&in);
            assert_int_equal(m.state, IMP_MOVE_OK);
            if (j > 0) { /* not reaching the floor */
                assert_true(m.valid && m.n_violations == 0);
                imp_move_result_free(&m);
                continue;
            }
            r[k] = m;
            assert_false(m.valid);
            assert_int_equal(m.violations[0].kind, IMP_MOVE_TUNNELING);
            printf("floor %d: tunnelling at %.17g (a* %.17g), ends at (%.17g, %.17g, %.17g)\n", k,
                   m.violations[0].time, star, m.position.x, m.position.y, m.position.z);
            assert_true(fabs(m.violations[0].time - star) <= 1e-9 * star);
            assert_true(fabs(m.violations[0].normal.y + 1) < 1e-6);
        }
    }
    assert_close(&r[0], &r[1], 1e-6, "turning: 10,000 triangles against two");
    assert_close(&r[0], &r[2], 1e-6, "turning: the mesh against the halfspace");
    for (int k = 0; k < 3; ++k)
        imp_move_result_free(&r[k]);
    imp_world_destroy(wf);
    imp_world_destroy(wo);
    grid_free(&fine);
    grid_free(&one);
}

/* A capsule along a wall of 20,000 triangles and along the same wall as two. */
static void test_wall_no_snagging(void **state) {
    (void)state;
    grid fine = patch(V(5, 0, 0), V(0, 4, 0), V(0, 0, 10), 100, 100);
    grid one = patch(V(5, 0, 0), V(0, 4, 0), V(0, 0, 10), 1, 1);
    imp_world_collider cf = mesh_of(&fine), co = mesh_of(&one);
    imp_world *wf = build(3, &cf, 1), *wo = build(3, &co, 1);
    imp_shape cap = {.type = IMP_SHAPE_CAPSULE,
                     .a = V(0, -0.5, 0),
                     .b = V(0, 0.5, 0),
                     .radius = 0.3,
                     .rot = {1, 0, 0, 0}};
    imp_vec3 from[3] = {V(3.01, 1.03, 1.07), V(4.7, 1.03, 1.07), V(4.7 + 1e-7, 2.01, 0.93)};
    imp_vec3 to[3] = {V(7.3, 1.2, 8.9), V(4.7, 1.53, 9.07), V(4.7 + 1e-7, 2.02, 9.31)};
    for (int m = 0; m < 3; ++m) {
        imp_move_result a = check(&cap, from[m], to[m], wf, NULL, 0, 3);
        imp_move_result b = check(&cap, from[m], to[m], wo, NULL, 0, 3);
        printf("wall move %d: position (%.17g, %.17g, %.17g), %zu violations\n", m, a.position.x,
               a.position.y, a.position.z, a.n_violations);
        assert_same(&a, &b, "wall");
        assert_int_equal(count_kind(&a, IMP_MOVE_TUNNELING), m == 0);
        if (m == 0) assert_true(a.position.x < 5.0 - 0.3 && a.position.z > 8.8);
        imp_move_result_free(&a);
        imp_move_result_free(&b);
    }
    imp_world_destroy(wf);
    imp_world_destroy(wo);
    grid_free(&fine);
    grid_free(&one);
}

/* Moves m of from/to against the fine and the one-piece world: the same outcome, and a
 * tunnelling violation exactly for move 0 (the one that lands). Frees both worlds. */
static void compare_three(imp_world *wf, imp_world *wo, const imp_shape *s, const imp_vec3 *from,
                          const imp_vec3 *to, int dim, const char *what) {
    for (int m = 0; m < 3; ++m) {
        imp_move_result a = check(s, from[m], to[m], wf, NULL, 0, dim);
        imp_move_result b = check(s, from[m], to[m], wo, NULL, 0, dim);
        assert_same(&a, &b, what);
        assert_int_equal(count_kind(&a, IMP_MOVE_TUNNELING), m == 0);
        imp_move_result_free(&a);
        imp_move_result_free(&b);
    }
    imp_world_destroy(wf);
    imp_world_destroy(wo);
}

/* A flat heightfield of 101 x 101 samples against the same floor as two triangles. */
static void test_heightfield_no_snagging(void **state) {
    (void)state;
    double *heights = calloc(101 * 101, sizeof *heights);
    assert_non_null(heights);
    imp_world_collider hf;
    memset(&hf, 0, sizeof hf);
    hf.kind = IMP_WORLD_HEIGHTFIELD;
    hf.heightfield = (imp_world_heightfield){101, 101, 0.1, 0.1, heights};
    grid one = patch(V(0, 0, 0), V(0, 0, 10), V(10, 0, 0), 1, 1);
    imp_world_collider co = mesh_of(&one);
    imp_world *wf = build(3, &hf, 1), *wo = build(3, &co, 1);
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.5, .rot = {1, 0, 0, 0}};
    imp_vec3 from[3] = {V(1.03, 0.8, 1.07), V(1.03, 0.5 - 1e-7, 1.07), V(2.01, 0.5, 8.03)};
    imp_vec3 to[3] = {V(9.11, -0.2, 5.13), V(9.11, 0.5 - 1e-7, 5.13), V(8.97, 0.5, 1.01)};
    compare_three(wf, wo, &ball, from, to, 3, "heightfield");
    grid_free(&one);
    free(heights);
}

/* A disc along a 2D chain of 1,000 collinear segments and along one segment. */
static void test_chain_no_snagging(void **state) {
    (void)state;
    imp_vec3 *pts = malloc(1001 * sizeof *pts);
    assert_non_null(pts);
    for (int i = 0; i <= 1000; ++i)
        pts[i] = V(10.0 - i / 100.0, 0, 0); /* right-hand side (the front) is +y */
    imp_vec3 two[2] = {V(10, 0, 0), V(0, 0, 0)};
    imp_world_collider cf, co;
    memset(&cf, 0, sizeof cf);
    cf.kind = IMP_WORLD_CHAIN;
    cf.chain = (imp_world_chain){pts, 1001, 0};
    co = cf;
    co.chain = (imp_world_chain){two, 2, 0};
    imp_world *wf = build(2, &cf, 1), *wo = build(2, &co, 1);
    imp_shape disc = {.type = IMP_SHAPE_SPHERE, .radius = 0.5, .rot = {1, 0, 0, 0}};
    imp_vec3 from[3] = {V(1.03, 0.8, 0), V(1.03, 0.5 - 1e-7, 0), V(9.03, 0.5, 0)};
    imp_vec3 to[3] = {V(9.11, -0.2, 0), V(9.11, 0.5 - 1e-7, 0), V(0.51, 0.5, 0)};
    compare_three(wf, wo, &disc, from, to, 2, "chain");
    free(pts);
}

/* A closed box mesh [x0, x1] x [0, h] x [0, 10]: 12 triangles facing out. */
static grid block(double x0, double x1, double h) {
    grid g = {malloc(8 * sizeof *g.v), malloc(36 * sizeof *g.t), 8, 12};
    assert_non_null(g.v);
    assert_non_null(g.t);
    for (int i = 0; i < 8; ++i)
        g.v[i] = V(i & 1 ? x1 : x0, i & 2 ? h : 0.0, i & 4 ? 10.0 : 0.0);
    static const uint32_t T[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                                   2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
    memcpy(g.t, T, sizeof T);
    return g;
}

/* Real features block: a low step, a high step, a ramp (a concave crease with the floor). */
static void test_steps_and_creases_block(void **state) {
    (void)state;
    grid floor_ = patch(V(0, 0, 0), V(0, 0, 10), V(10, 0, 0), 100, 50);
    grid low = block(5, 6, 0.2), high = block(5, 6, 2.0);
    /* a ramp rising 30 degrees from x = 5 */
    grid ramp =
        patch(V(5, 0, 0), V(0, 0, 10), V(3, 3 * tan(30 * 3.14159265358979 / 180), 0), 20, 20);
    grid *features[3] = {&low, &high, &ramp};
    const char *names[3] = {"low step", "high step", "ramp"};
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.5, .rot = {1, 0, 0, 0}};
    for (int f = 0; f < 3; ++f) {
        imp_world_collider c[2] = {mesh_of(&floor_), mesh_of(features[f])};
        imp_world *w = build(3, c, 2);
        imp_move_result r = check(&ball, V(1.03, 0.5, 5.07), V(9.03, 0.5, 5.07), w, NULL, 0, 3);
        printf("%s: position (%.17g, %.17g, %.17g), %zu violations, %d iterations\n", names[f],
               r.position.x, r.position.y, r.position.z, r.n_violations, r.iterations);
        assert_false(r.valid);
        assert_true(count_kind(&r, IMP_MOVE_TUNNELING) >= 1);
        const imp_move_violation *v = &r.violations[0];
        assert_int_equal(v->in_world, 1);
        assert_int_equal(v->collider, 1); /* the feature, never the floor */
        assert_int_equal(v->prim_kind, IMP_WORLD_PRIM_TRIANGLE);
        /* the first contact is where the ball meets the feature's edge or face */
        double want = f == 1 ? 4.5 : f == 0 ? 5.0 - sqrt(0.25 - 0.3 * 0.3) : 0.0;
        if (f != 2) assert_true(fabs(v->point.x - 5.0) < 1e-12 && v->time > 0.0);
        if (f == 1) assert_true(fabs(r.position.x - want) < 1e-6);
        if (f == 0) assert_true(fabs((1.03 + 8.0 * v->time) - want) < 1e-9); /* centre at contact */
        imp_move_result_free(&r);
        imp_world_destroy(w);
    }
    grid_free(&floor_);
    grid_free(&low);
    grid_free(&high);
    grid_free(&ramp);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_no_snagging),       cmocka_unit_test(test_wall_no_snagging),
        cmocka_unit_test(test_heightfield_no_snagging), cmocka_unit_test(test_chain_no_snagging),
        cmocka_unit_test(test_steps_and_creases_block), cmocka_unit_test(test_turning_mover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
