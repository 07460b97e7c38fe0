/*
 * test_scenes.c - POST /v1/scenes/predict through HTTP.
 *
 * DESIGN
 * Known answers on hand-built scenes; every broadphase kind returns the
 * same collisions and overlaps on random 2D and 3D scenes; the scene's
 * answer equals the pairwise /v1/toi answer for every pair (sent as one
 * /v1/batch: an independent path through the same solver, with no
 * broadphase at all); max_results, ids, and the error contract.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "replies.h"
#include "tests/rng.h"

static imp_test_daemon daemon_;

static int setup(void **state) {
    (void)state;
    static const char *const args[] = {"--max-bodies", "5000", NULL};
    return imp_test_daemon_start(&daemon_, args, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

/* POSTs doc (stolen) to path; returns the parsed reply (caller decrefs)
 * and its status. */
static json_t *post(const char *path, json_t *doc, long *status) {
    char *body = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    assert_non_null(body);
    char url[160];
    snprintf(url, sizeof url, "%s%s", daemon_.url, path);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, strlen(body), &r), 0);
    free(body);
    *status = r.status;
    json_error_t err;
    json_t *reply = json_loads(r.body, 0, &err);
    if (!reply) fail_msg("reply is not JSON: %.200s", r.body);
    imp_http_result_free(&r);
    return reply;
}

static json_t *vec(double x, double y, double z, int dim) {
    return dim == 3 ? json_pack("[fff]", x, y, z) : json_pack("[ff]", x, y);
}

static json_t *body(double r, json_t *p, json_t *v) {
    json_t *b = json_pack("{s:f,s:o}", "radius", r, "position", p);
    if (v) json_object_set_new(b, "velocity", v);
    return b;
}

static json_t *member(const json_t *o, const char *path) { return imp_test_member(o, path); }

static void test_known_answer(void **state) {
    (void)state;
    /* A (0) moves right at 1 toward B (3, static): gap 2 closes at t = 2.
     * C and D are static and overlap: a static pair, skipped. E overlaps B now;
     * A would reach E at t = 3 - sqrt(0.3125) ~ 2.44, after the horizon of 2.2. */
    json_t *bodies = json_array();
    json_array_append_new(bodies, body(0.5, vec(0, 0, 0, 2), vec(1, 0, 0, 2)));
    json_t *b = body(0.5, vec(3, 0, 0, 2), NULL);
    json_object_set_new(b, "static", json_true());
    json_object_set_new(b, "id", json_string("wall"));
    json_array_append_new(bodies, b);
    for (int i = 0; i < 2; ++i) {
        json_t *s = body(1, vec(20 + 0.5 * i, 0, 0, 2), NULL);
        json_object_set_new(s, "static", json_true());
        json_array_append_new(bodies, s);
    }
    json_array_append_new(bodies, body(0.25, vec(3, 0.5, 0, 2), NULL));
    long status;
    json_t *r =
        post("/v1/scenes/predict",
             json_pack("{s:o,s:f,s:s}", "bodies", bodies, "horizon", 2.2, "broadphase", "brute"),
             &status);
    assert_int_equal(status, 200);
    json_t *col = json_object_get(r, "collisions");
    assert_int_equal(json_array_size(col), 1);
    assert_int_equal(json_integer_value(member(r, "collisions.0.a")), 0);
    assert_string_equal(json_string_value(member(r, "collisions.0.b")), "wall");
    assert_true(json_real_value(member(r, "collisions.0.time")) == 2.0);
    assert_true(json_real_value(member(r, "collisions.0.point.0")) == 2.5);
    assert_true(json_real_value(member(r, "collisions.0.normal.0")) == 1.0);
    /* E (index 4) overlaps the wall: 0.5 + 0.25 - 0.5 = 0.25 deep */
    json_t *ov = json_object_get(r, "overlapping");
    assert_int_equal(json_array_size(ov), 1);
    assert_string_equal(json_string_value(member(r, "overlapping.0.a")), "wall");
    assert_int_equal(json_integer_value(member(r, "overlapping.0.b")), 4);
    assert_true(fabs(json_real_value(member(r, "overlapping.0.depth")) - 0.25) < 1e-15);
    assert_int_equal(json_integer_value(member(r, "stats.bodies")), 5);
    assert_string_equal(json_string_value(member(r, "stats.broadphase")), "brute");
    /* brute examines every pair but those of two static bodies (wall, C, D): 5*4/2 - 3 */
    assert_int_equal(json_integer_value(member(r, "stats.candidate_pairs")), 7);
    assert_true(json_is_real(member(r, "stats.elapsed_ms")));
    json_decref(r);
}

/* Other shapes and a wall: a box sliding into a halfspace, a capsule far off. */
static void test_shapes_and_wall(void **state) {
    (void)state;
    json_t *bodies =
        json_pack("[{s:{s:s,s:[ff]},s:[ff],s:[ff]},"
                  " {s:s,s:{s:s,s:[ff],s:f},s:[ff],s:b},"
                  " {s:{s:s,s:[ff],s:[ff],s:f},s:[ff]}]",
                  "shape", "type", "box", "half_extents", 1.0, 1.0, "position", 0.0, 0.0,
                  "velocity", 1.0, 0.0, "id", "wall", "shape", "type", "halfspace", "normal", -1.0,
                  0.0, "offset", -5.0, "position", 0.0, 0.0, "static", 1, "shape", "type",
                  "capsule", "a", -1.0, 0.0, "b", 1.0, 0.0, "radius", 0.5, "position", 0.0, 50.0);
    assert_non_null(bodies);
    for (int k = 0; k < 2; ++k) {
        long status;
        json_t *r = post("/v1/scenes/predict",
                         json_pack("{s:O,s:f,s:s}", "bodies", bodies, "horizon", 10.0, "broadphase",
                                   k ? "brute" : "grid"),
                         &status);
        assert_int_equal(status, 200);
        assert_int_equal(json_array_size(json_object_get(r, "collisions")), 1);
        assert_int_equal(json_integer_value(member(r, "collisions.0.a")), 0);
        assert_string_equal(json_string_value(member(r, "collisions.0.b")), "wall");
        assert_true(json_real_value(member(r, "collisions.0.time")) == 4.0);
        assert_true(json_real_value(member(r, "collisions.0.point.0")) == 5.0);
        assert_true(json_real_value(member(r, "collisions.0.normal.0")) == 1.0);
        json_decref(r);
    }
    json_decref(bodies);
}

/* A random scene: clustered or uniform, some static, some accelerated. */
static json_t *random_scene(uint64_t *rng, size_t n, int dim, int clustered) {
    json_t *bodies = json_array();
    for (size_t i = 0; i < n; ++i) {
        double cx = 0, cy = 0, cz = 0, spread = 40;
        if (clustered) {
            int c = (int)(imp_rng_unit(rng) * 4);
            cx = 100.0 * c;
            cy = -50.0 * c;
            spread = 5;
        }
        json_t *b = body(imp_rng_uniform(rng, 0.05, 1.5),
                         vec(cx + imp_rng_uniform(rng, -spread, spread),
                             cy + imp_rng_uniform(rng, -spread, spread),
                             cz + imp_rng_uniform(rng, -spread, spread), dim),
                         vec(imp_rng_uniform(rng, -3, 3), imp_rng_uniform(rng, -3, 3),
                             imp_rng_uniform(rng, -3, 3), dim));
        if (imp_rng_unit(rng) < 0.2) json_object_set_new(b, "acceleration", vec(0, -9.81, 0, dim));
        if (imp_rng_unit(rng) < 0.1) json_object_set_new(b, "static", json_true());
        if (imp_rng_unit(rng) < 0.3) json_object_set_new(b, "id", json_sprintf("body-%zu", i));
        json_array_append_new(bodies, b);
    }
    return bodies;
}

static void test_every_broadphase_agrees(void **state) {
    (void)state;
    static const char *const kinds[] = {"brute", "grid", "sap", "bvh", "auto"};
    const uint64_t seed = 0x5CE7E5;
    uint64_t rng = seed;
    for (int dim = 2; dim <= 3; ++dim) {
        for (int clustered = 0; clustered <= 1; ++clustered) {
            json_t *bodies = random_scene(&rng, 400, dim, clustered);
            json_t *first = NULL;
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
                long status;
                json_t *r = post("/v1/scenes/predict",
                                 json_pack("{s:O,s:f,s:s}", "bodies", bodies, "horizon", 4.0,
                                           "broadphase", kinds[k]),
                                 &status);
                assert_int_equal(status, 200);
                json_t *answer =
                    json_pack("{s:O,s:O}", "collisions", json_object_get(r, "collisions"),
                              "overlapping", json_object_get(r, "overlapping"));
                if (!first) {
                    first = answer;
                    /* the scene must be interesting */
                    assert_true(json_array_size(json_object_get(r, "collisions")) > 20);
                } else {
                    if (!json_equal(first, answer))
                        fail_msg("seed %#llx dim %d clustered %d: %s differs from brute",
                                 (unsigned long long)seed, dim, clustered, kinds[k]);
                    json_decref(answer);
                }
                json_decref(r);
            }
            json_decref(first);
            json_decref(bodies);
        }
    }
}

/* The scene's answer equals /v1/toi on every pair (sent as one batch). */
static void test_equals_pairwise_toi(void **state) {
    (void)state;
    const uint64_t seed = 0xBA7C4;
    uint64_t rng = seed;
    for (int dim = 2; dim <= 3; ++dim) {
        const size_t n = 45;
        json_t *bodies = random_scene(&rng, n, dim, 0);
        /* shrink the world so that many pairs meet */
        for (size_t i = 0; i < n; ++i) {
            json_t *p = json_object_get(json_array_get(bodies, i), "position");
            for (size_t k = 0; k < json_array_size(p); ++k)
                json_array_set_new(p, k, json_real(json_real_value(json_array_get(p, k)) / 4));
        }
        long status;
        json_t *scene = post("/v1/scenes/predict",
                             json_pack("{s:O,s:f}", "bodies", bodies, "horizon", 3.0), &status);
        assert_int_equal(status, 200);

        json_t *requests = json_array();
        for (size_t a = 0; a < n; ++a)
            for (size_t b = a + 1; b < n; ++b)
                json_array_append_new(requests,
                                      json_pack("{s:s,s:{s:O,s:O,s:f}}", "op", "toi", "body", "a",
                                                json_array_get(bodies, a), "b",
                                                json_array_get(bodies, b), "horizon", 3.0));
        json_t *batch = post("/v1/batch", json_pack("{s:o}", "requests", requests), &status);
        assert_int_equal(status, 200);

        /* walk the pairs in order, matching them against the scene's lists */
        size_t k = 0, hits = 0, overlaps = 0;
        for (size_t a = 0; a < n; ++a) {
            for (size_t b = a + 1; b < n; ++b, ++k) {
                const json_t *ja = json_array_get(bodies, a), *jb = json_array_get(bodies, b);
                int both_static = json_is_true(json_object_get(ja, "static")) &&
                                  json_is_true(json_object_get(jb, "static"));
                const json_t *t = member(batch, "results");
                t = json_object_get(json_array_get(t, k), "body");
                const char *st = json_string_value(json_object_get(t, "status"));
                if (both_static || strcmp(st, "none") == 0) continue;
                const char *list = strcmp(st, "hit") == 0 ? "collisions" : "overlapping";
                hits += strcmp(st, "hit") == 0;
                overlaps += strcmp(st, "overlapping") == 0;
                /* find (a, b) in the scene's list: ids may be strings */
                const json_t *arr = json_object_get(scene, list);
                const json_t *found = NULL;
                for (size_t i = 0; i < json_array_size(arr) && !found; ++i) {
                    const json_t *c = json_array_get(arr, i);
                    const json_t *ida = json_object_get(ja, "id"), *idb = json_object_get(jb, "id");
                    json_t *wa = ida ? json_incref((json_t *)ida) : json_integer((json_int_t)a);
                    json_t *wb = idb ? json_incref((json_t *)idb) : json_integer((json_int_t)b);
                    if (json_equal(json_object_get(c, "a"), wa) &&
                        json_equal(json_object_get(c, "b"), wb))
                        found = c;
                    json_decref(wa);
                    json_decref(wb);
                }
                if (!found)
                    fail_msg("seed %#llx dim %d: pair (%zu, %zu) %s is missing from the scene",
                             (unsigned long long)seed, dim, a, b, st);
                const char *field = strcmp(st, "hit") == 0 ? "time" : "depth";
                assert_true(json_real_value(json_object_get(found, field)) ==
                            json_real_value(json_object_get(t, field)));
                assert_true(
                    json_equal(json_object_get(found, "normal"), json_object_get(t, "normal")));
            }
        }
        /* and nothing more */
        assert_int_equal(json_array_size(json_object_get(scene, "collisions")), hits);
        assert_int_equal(json_array_size(json_object_get(scene, "overlapping")), overlaps);
        assert_true(hits > 10);
        /* sorted by time */
        const json_t *col = json_object_get(scene, "collisions");
        for (size_t i = 1; i < json_array_size(col); ++i)
            assert_true(json_real_value(json_object_get(json_array_get(col, i - 1), "time")) <=
                        json_real_value(json_object_get(json_array_get(col, i), "time")));
        json_decref(scene);
        json_decref(batch);
        json_decref(bodies);
    }
}

static void test_max_results(void **state) {
    (void)state;
    uint64_t rng = 0x3A7;
    json_t *bodies = random_scene(&rng, 300, 2, 0);
    long status;
    json_t *all = post("/v1/scenes/predict",
                       json_pack("{s:O,s:f}", "bodies", bodies, "horizon", 4.0), &status);
    assert_int_equal(status, 200);
    json_t *few = post(
        "/v1/scenes/predict",
        json_pack("{s:O,s:f,s:i}", "bodies", bodies, "horizon", 4.0, "max_results", 5), &status);
    assert_int_equal(status, 200);
    json_t *ca = json_object_get(all, "collisions"), *cf = json_object_get(few, "collisions");
    assert_true(json_array_size(ca) > 5);
    assert_int_equal(json_array_size(cf), 5);
    for (size_t i = 0; i < 5; ++i) /* the earliest five */
        assert_true(json_equal(json_array_get(ca, i), json_array_get(cf, i)));
    assert_true(json_is_true(member(few, "stats.truncated")));
    assert_true(json_is_false(member(all, "stats.truncated")));
    assert_int_equal(json_integer_value(member(few, "stats.collisions_total")),
                     json_array_size(ca));
    json_decref(all);
    json_decref(few);
    json_decref(bodies);
}

static void expect_problem(const char *json, long want_status, const char *want_pointer) {
    imp_test_expect_problem(&daemon_, "/v1/scenes/predict", json, want_status, NULL, want_pointer,
                            NULL);
}

static void test_errors(void **state) {
    (void)state;
    expect_problem("{\"horizon\": 1}", 400, "/bodies");
    expect_problem("{\"bodies\": 3, \"horizon\": 1}", 400, "/bodies");
    expect_problem("{\"bodies\": []}", 400, "/horizon");
    expect_problem("{\"bodies\": [], \"horizon\": 0}", 422, "/horizon");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"broadphase\": \"quad\"}", 422,
                   "/broadphase");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"max_results\": -1}", 422, "/max_results");
    expect_problem("{\"bodies\": [], \"horizon\": 1, \"max_results\": 1.5}", 400, "/max_results");
    expect_problem("{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]},"
                   " {\"radius\": -1, \"position\": [0, 0]}], \"horizon\": 1}",
                   422, "/bodies/1/radius");
    expect_problem("{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]},"
                   " {\"radius\": 1, \"position\": [0, 0, 0]}], \"horizon\": 1}",
                   400, "/bodies/1/position");
    expect_problem("{\"bodies\": [{\"radius\": 1}], \"horizon\": 1}", 400, "/bodies/0/position");
    /* empty scene: fine */
    long status;
    json_t *r =
        post("/v1/scenes/predict", json_pack("{s:[],s:f}", "bodies", "horizon", 1.0), &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_array_size(json_object_get(r, "collisions")), 0);
    json_decref(r);
}

static void test_limits(void **state) {
    (void)state;
    /* more bodies than --max-bodies 5000 */
    json_t *bodies = json_array();
    for (int i = 0; i < 5001; ++i)
        json_array_append_new(bodies, body(0.1, vec(i, 0, 0, 2), NULL));
    long status;
    json_t *r = post("/v1/scenes/predict", json_pack("{s:o,s:f}", "bodies", bodies, "horizon", 1.0),
                     &status);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(r, "pointer")), "/bodies");
    json_decref(r);
    /* 4,500 bodies all in one place: ~10 million candidate pairs, over the bound */
    bodies = json_array();
    for (int i = 0; i < 4500; ++i)
        json_array_append_new(bodies, body(1, vec(0.001 * (i % 7), 0, 0, 2), NULL));
    r = post("/v1/scenes/predict", json_pack("{s:o,s:f}", "bodies", bodies, "horizon", 1.0),
             &status);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(r, "type")), "limit-exceeded");
    json_decref(r);
    /* brute on 4,500 spread bodies: no bounds overlap, but brute's 10,122,750 pairs
     * are over the bound too, while grid answers */
    for (int k = 0; k < 2; ++k) {
        bodies = json_array();
        for (int i = 0; i < 4500; ++i)
            json_array_append_new(bodies, body(0.1, vec(10.0 * i, 0, 0, 2), NULL));
        r = post("/v1/scenes/predict",
                 json_pack("{s:o,s:f,s:s}", "bodies", bodies, "horizon", 1.0, "broadphase",
                           k ? "grid" : "brute"),
                 &status);
        assert_int_equal(status, k ? 200 : 422);
        if (!k)
            assert_string_equal(json_string_value(json_object_get(r, "pointer")), "/bodies");
        else
            assert_int_equal(json_integer_value(member(r, "stats.candidate_pairs")), 0);
        json_decref(r);
    }
    /* and the daemon is fine */
    char url[128];
    snprintf(url, sizeof url, "%s/healthz", daemon_.url);
    imp_http_result h;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &h), 0);
    assert_int_equal(h.status, 200);
    imp_http_result_free(&h);
}

/* A blade (box 10 x 0.1) turning at 1 rad/s about its centre sweeps a ball of radius 0.2
 * centred 3 above it only by turning: its face meets the ball when 3 cos t = 0.25, at
 * t* = acos(1/12). Every broadphase reports it, certified (time <= t* <= time + tolerance,
 * tolerance <= 1e-9 max(1, time)), with the orientations at `time`: the blade's angle is
 * `time` (2D), the quaternion of the turn by `time` about z (3D, the ball turning about x
 * beside it). */
static void test_turning_blade(void **state) {
    (void)state;
    static const char *const kinds[] = {"brute", "grid", "sap", "bvh", "auto"};
    const double ts = acos(1.0 / 12.0);
    for (int dim = 2; dim <= 3; ++dim)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
            json_t *blade =
                json_pack("{s:s,s:{s:s,s:o},s:o}", "id", "blade", "shape", "type", "box",
                          "half_extents", vec(5, 0.05, 0.05, dim), "position", vec(0, 0, 0, dim));
            json_object_set_new(blade, "angular_velocity",
                                dim == 2 ? json_real(1) : json_pack("[fff]", 0.0, 0.0, 1.0));
            json_t *ball = body(0.2, vec(0, 3, 0, dim), NULL);
            if (dim == 3)
                json_object_set_new(ball, "angular_velocity", json_pack("[fff]", 2., 0., 0.));
            long status;
            json_t *r = post("/v1/scenes/predict",
                             json_pack("{s:[oo],s:f,s:s}", "bodies", blade, ball, "horizon", 2.0,
                                       "broadphase", kinds[k]),
                             &status);
            assert_int_equal(status, 200);
            assert_int_equal(json_array_size(json_object_get(r, "collisions")), 1);
            assert_string_equal(json_string_value(member(r, "collisions.0.a")), "blade");
            double t = json_real_value(member(r, "collisions.0.time")),
                   tol = json_real_value(member(r, "collisions.0.tolerance"));
            if (!(t <= ts && ts <= t + tol && tol > 0 && tol <= 1e-9 * fmax(1, t)))
                fail_msg("%dD %s: time %.17g tolerance %.3g, exact %.17g", dim, kinds[k], t, tol,
                         ts);
            if (dim == 2) {
                /* the angle of the quaternion of a turn by t: t to its rounding */
                double a = json_real_value(member(r, "collisions.0.a_orientation"));
                if (!(fabs(a - t) <= 4 * DBL_EPSILON * t))
                    fail_msg("2D %s: a_orientation %.17g at time %.17g", kinds[k], a, t);
                assert_true(json_real_value(member(r, "collisions.0.b_orientation")) == 0.0);
            } else {
                double c = cos(t / 2), s = sin(t / 2), c2 = cos(t), s2 = sin(t);
                const double qa[4] = {c, 0, 0, s}, qb[4] = {c2, s2, 0, 0};
                for (int i = 0; i < 4; ++i) {
                    char pa[48], pb[48];
                    snprintf(pa, sizeof pa, "collisions.0.a_orientation.%d", i);
                    snprintf(pb, sizeof pb, "collisions.0.b_orientation.%d", i);
                    assert_true(fabs(json_real_value(member(r, pa)) - qa[i]) < 1e-15);
                    assert_true(fabs(json_real_value(member(r, pb)) - qb[i]) < 1e-15);
                }
            }
            json_decref(r);
        }
    /* the same blade too fast for its horizon: 422 at its angular_velocity, every broadphase */
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        json_t *blade =
            json_pack("{s:{s:s,s:[ff]},s:[ff],s:f}", "shape", "type", "box", "half_extents", 5.0,
                      0.05, "position", 0.0, 0.0, "angular_velocity", 1e6);
        long status;
        json_t *r = post("/v1/scenes/predict",
                         json_pack("{s:[oo],s:f,s:s}", "bodies", body(0.2, vec(90, 3, 0, 2), NULL),
                                   blade, "horizon", 2.0, "broadphase", kinds[k]),
                         &status);
        assert_int_equal(status, 422);
        assert_string_equal(json_string_value(json_object_get(r, "pointer")),
                            "/bodies/1/angular_velocity");
        json_decref(r);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answer),
        cmocka_unit_test(test_every_broadphase_agrees),
        cmocka_unit_test(test_equals_pairwise_toi),
        cmocka_unit_test(test_max_results),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_shapes_and_wall),
        cmocka_unit_test(test_turning_blade),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
