/*
 * test_worlds.c - the worlds routes over HTTP: a generated terrain
 * (heightfield) and closed box (mesh) world uploaded, found with HEAD,
 * queried, re-uploaded (200), deleted (404 after); raycasts against heights
 * computed here from the heightfield's own definition; shape cast and
 * overlap; queries while another thread uploads and deletes other worlds;
 * metrics labelled by the route template, never the id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "tests/rng.h"
#include "tests/sha256sum.h"

static imp_test_daemon daemon_;

#define ROWS 40
#define COLS 50
#define DX 0.75
#define DZ 1.25
static double heights_[ROWS * COLS];
static char *world_;       /* the World's bytes */
static char world_id_[65]; /* sha256sum of them */

static int setup(void **state) {
    (void)state;
    static const char *const args[] = {"--max-world-triangles", "100000", NULL};
    return imp_test_daemon_start(&daemon_, args, NULL, 0);
}

static int teardown(void **state) {
    (void)state;
    free(world_);
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

static void http(const char *method, const char *path, const char *body, imp_http_result *r) {
    char url[256];
    snprintf(url, sizeof url, "%s%s", daemon_.url, path);
    assert_int_equal(imp_http(NULL, method, url, body ? "application/json" : NULL, body,
                              body ? strlen(body) : 0, r),
                     0);
}

static json_t *http_json(const char *method, const char *path, const char *body, long want) {
    imp_http_result r;
    http(method, path, body, &r);
    if (r.status != want) fail_msg("%s %s: %ld %s, want %ld", method, path, r.status, r.body, want);
    json_t *doc = json_loads(r.body, 0, NULL);
    assert_non_null(doc);
    imp_http_result_free(&r);
    return doc;
}

/* sha256sum of `s`: an implementation independent of the daemon's. */
static void sha256sum(const char *s, char out[65]) {
    assert_int_equal(imp_test_sha256sum(s, strlen(s), out), 0);
}

/* A terrain of random heights at the origin and a closed box (12 triangles) above it. */
static void make_world(void) {
    uint64_t rng = 7;
    size_t cap = ROWS * COLS * 32 + 4096, n = 0;
    world_ = malloc(cap);
    n += (size_t)snprintf(world_ + n, cap - n,
                          "{\"colliders\": [{\"id\": \"terrain\", \"shape\": {\"type\": "
                          "\"heightfield\", \"rows\": %d, \"cols\": %d, \"spacing\": [%.17g, "
                          "%.17g], \"heights\": [",
                          ROWS, COLS, DX, DZ);
    for (int i = 0; i < ROWS * COLS; ++i) {
        heights_[i] = imp_rng_uniform(&rng, -2, 2);
        n += (size_t)snprintf(world_ + n, cap - n, "%s%.17g", i ? "," : "", heights_[i]);
    }
    snprintf(world_ + n, cap - n,
             "]}, \"position\": [0, 0, 0]}, {\"id\": \"box\", \"shape\": {\"type\": \"mesh\", "
             "\"vertices\": [[0,0,0],[1,0,0],[1,1,0],[0,1,0],[0,0,1],[1,0,1],[1,1,1],[0,1,1]], "
             "\"triangles\": [[0,2,1],[0,3,2],[4,5,6],[4,6,7],[0,1,5],[0,5,4],[2,3,7],[2,7,6],"
             "[1,2,6],[1,6,5],[0,4,7],[0,7,3]]}, \"position\": [10, 20, 10]}]}");
    sha256sum(world_, world_id_);
}

/* The terrain's height at (x, z) and the triangle there, from the contract's definition;
 * 0 when (x, z) is too close to an edge or the diagonal to compare a rounded answer. */
static int terrain_at(double x, double z, double *h, int *tri) {
    int c = (int)floor(x / DX), r = (int)floor(z / DZ);
    if (c < 0 || r < 0 || c >= COLS - 1 || r >= ROWS - 1) return 0;
    double u = x / DX - c, v = z / DZ - r;
    if (u < 1e-6 || v < 1e-6 || u > 1 - 1e-6 || v > 1 - 1e-6 || fabs(u - v) < 1e-6) return 0;
    double h00 = heights_[r * COLS + c], h01 = heights_[r * COLS + c + 1];
    double h10 = heights_[(r + 1) * COLS + c], h11 = heights_[(r + 1) * COLS + c + 1];
    int k = r * (COLS - 1) + c;
    if (u >= v) {
        *h = h00 + u * (h01 - h00) + v * (h11 - h01);
        *tri = 2 * k;
    } else {
        *h = h00 + v * (h10 - h00) + u * (h11 - h10);
        *tri = 2 * k + 1;
    }
    return 1;
}

static void test_upload_head_get(void **state) {
    (void)state;
    make_world();
    char path[160];
    snprintf(path, sizeof path, "/v1/worlds/%s", world_id_);
    imp_http_result r;
    http("HEAD", path, NULL, &r);
    assert_int_equal(r.status, 404);
    imp_http_result_free(&r);
    http("POST", "/v1/worlds", world_, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(r.location, path);
    json_t *doc = json_loads(r.body, 0, NULL);
    imp_http_result_free(&r);
    assert_string_equal(json_string_value(json_object_get(doc, "id")), world_id_);
    assert_int_equal(json_integer_value(json_object_get(doc, "triangles")),
                     2 * (ROWS - 1) * (COLS - 1) + 12);
    assert_int_equal(json_integer_value(json_object_get(doc, "colliders")), 2);
    json_decref(doc);
    /* again: 200, already stored */
    http("POST", "/v1/worlds", world_, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.location, path);
    imp_http_result_free(&r);
    http("HEAD", path, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    imp_http_result_free(&r);
    doc = http_json("GET", path, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(doc, "id")), world_id_);
    json_decref(doc);
    /* a method the path does not take */
    http("PUT", path, "{}", &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "GET, HEAD, DELETE");
    imp_http_result_free(&r);
}

static void test_raycast_terrain(void **state) {
    (void)state;
    enum { N = 300 };
    uint64_t rng = 11;
    double xs[N], zs[N];
    size_t cap = N * 120 + 64, n = 0;
    char *q = malloc(cap);
    n += (size_t)snprintf(q + n, cap - n, "{\"rays\": [");
    for (int i = 0; i < N; ++i) {
        xs[i] = imp_rng_uniform(&rng, -1, (COLS - 1) * DX + 1);
        zs[i] = imp_rng_uniform(&rng, -1, (ROWS - 1) * DZ + 1);
        n += (size_t)snprintf(q + n, cap - n,
                              "%s{\"origin\": [%.17g, 10, %.17g], \"direction\": [0, -2, 0]}",
                              i ? "," : "", xs[i], zs[i]);
    }
    snprintf(q + n, cap - n, "]}");
    char path[160];
    snprintf(path, sizeof path, "/v1/worlds/%s/raycast", world_id_);
    json_t *doc = http_json("POST", path, q, 200);
    const json_t *hits = json_object_get(doc, "hits");
    assert_int_equal(json_array_size(hits), N);
    int compared = 0, misses = 0;
    for (int i = 0; i < N; ++i) {
        const json_t *h = json_array_get(hits, (size_t)i);
        double want;
        int tri;
        int inside =
            xs[i] >= 0 && zs[i] >= 0 && xs[i] <= (COLS - 1) * DX && zs[i] <= (ROWS - 1) * DZ;
        if (!inside) {
            assert_false(json_is_true(json_object_get(h, "hit")));
            ++misses;
            continue;
        }
        if (!terrain_at(xs[i], zs[i], &want, &tri)) continue;
        ++compared;
        assert_true(json_is_true(json_object_get(h, "hit")));
        assert_string_equal(json_string_value(json_object_get(h, "collider")), "terrain");
        assert_int_equal(json_integer_value(json_object_get(h, "triangle")), tri);
        double t = json_real_value(json_object_get(h, "t"));
        double dist = json_real_value(json_object_get(h, "distance"));
        /* the ray starts at y = 10 with direction -2: t = (10 - h) / 2, distance twice that */
        assert_true(fabs(t - (10 - want) / 2) <= 1e-12 * 10);
        assert_true(fabs(dist - 2 * t) <= 1e-15 * dist + 1e-300);
        assert_false(json_is_true(json_object_get(h, "back_face")));
    }
    assert_true(compared > N / 2);
    assert_true(misses > 0);
    json_decref(doc);
    free(q);
}

static void test_casts_and_overlaps(void **state) {
    (void)state;
    char path[160];
    /* a sphere dropped on the box's top face (y = 21) */
    snprintf(path, sizeof path, "/v1/worlds/%s/shapecast", world_id_);
    json_t *doc = http_json("POST", path,
                            "{\"bodies\": [{\"id\": \"s\", \"radius\": 0.25, \"position\": [10.5, "
                            "30, 10.5], \"velocity\": [0, -1, 0]}]}",
                            200);
    const json_t *c = json_array_get(json_object_get(doc, "results"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "status")), "hit");
    assert_string_equal(json_string_value(json_object_get(c, "collider")), "box");
    assert_true(fabs(json_real_value(json_object_get(c, "time")) - 8.75) < 1e-12);
    json_decref(doc);
    /* a sphere sunk 0.1 into the box's top */
    snprintf(path, sizeof path, "/v1/worlds/%s/overlap", world_id_);
    doc = http_json("POST", path, "{\"body\": {\"radius\": 0.2, \"position\": [10.5, 21.1, 10.5]}}",
                    200);
    const json_t *ov = json_object_get(doc, "overlaps");
    assert_true(json_array_size(ov) >= 1);
    c = json_array_get(ov, 0);
    assert_string_equal(json_string_value(json_object_get(c, "collider")), "box");
    assert_true(fabs(json_real_value(json_object_get(c, "depth")) - 0.1) < 1e-12);
    json_decref(doc);
}

/* Validation against the stored world: a ball dropped onto the terrain lands on the
 * triangle the contract's definition puts under it and slides on; one rolled along the box's
 * top face (two triangles) crosses their shared diagonal without a contact; one run into the
 * box's side is reported against "box" and stops before it. */
static void test_validate(void **state) {
    (void)state;
    char path[160], body[512];
    snprintf(path, sizeof path, "/v1/worlds/%s/validate", world_id_);
    double h = 0.0;
    int tri = -1;
    assert_true(terrain_at(5.3, 7.1, &h, &tri));
    snprintf(body, sizeof body,
             "{\"body\": {\"radius\": 0.25, \"position\": [5.3, 9, 7.1]}, \"to\": [5.3, %.17g, "
             "7.1], \"dt\": 1}",
             h - 1.0);
    json_t *doc = http_json("POST", path, body, 200);
    assert_false(json_is_true(json_object_get(doc, "valid")));
    const json_t *v = json_array_get(json_object_get(doc, "violations"), 0);
    assert_string_equal(json_string_value(json_object_get(v, "kind")), "tunneling");
    assert_string_equal(json_string_value(json_object_get(v, "collider")), "terrain");
    assert_int_equal(json_integer_value(json_object_get(v, "triangle")), tri);
    /* it ends on the terrain, never below it, wherever the slide took it */
    const json_t *pos = json_object_get(doc, "position");
    double px = json_real_value(json_array_get(pos, 0)),
           pz = json_real_value(json_array_get(pos, 2));
    double y = json_real_value(json_array_get(pos, 1)), h2 = 0.0;
    int tri2 = -1;
    assert_true(terrain_at(px, pz, &h2, &tri2));
    assert_true(y > h2 && y < h2 + 1.0);
    json_decref(doc);
    /* along the top of the box (y = 21), across its diagonal: valid, no snag */
    doc = http_json("POST", path,
                    "{\"body\": {\"radius\": 0.25, \"position\": [10.2, 21.25, 10.7]}, \"to\": "
                    "[10.8, 21.25, 10.3], \"dt\": 1}",
                    200);
    assert_true(json_is_true(json_object_get(doc, "valid")));
    json_decref(doc);
    /* into the box's side at x = 10 from x = 8 (y = 20.5 clears the terrain, |h| <= 2) */
    snprintf(body, sizeof body,
             "{\"body\": {\"radius\": 0.25, \"position\": [8, 20.5, 10.5]}, \"to\": [12, 20.5, "
             "10.5], \"dt\": 1, \"world\": \"%s\"}",
             world_id_);
    doc = http_json("POST", "/v1/validate", body, 200);
    v = json_array_get(json_object_get(doc, "violations"), 0);
    assert_string_equal(json_string_value(json_object_get(v, "obstacle")), "box");
    assert_true(fabs(json_real_value(json_object_get(v, "time")) - 1.75 / 4.0) < 1e-12);
    double x = json_real_value(json_array_get(json_object_get(doc, "position"), 0));
    assert_true(x < 9.75 && x > 9.75 - 1e-6);
    json_decref(doc);
}

/* Turning bodies beside and against a stored world: a blade spinning among the `obstacles`
 * (high above the terrain) catches a ball dropping through its disc, as in /v1/validate. A blade
 * (half extents 2, 0.05, 0.05) spinning at 1 rad/s about z, 2 above the closed box's top face,
 * reaches it at a* = pi/2 - 2 atan2(0.05, 2): the world's shape cast, a scene with the world and
 * a validated move each answer that contact, its time certified (time <= a* <= time +
 * tolerance), the blade's orientation then (a turn by the time about z); a spinning ball, whose
 * turn moves nothing, is answered as if still. */
static void test_turning_beside_world(void **state) {
    (void)state;
    char path[160], body[640];
    snprintf(path, sizeof path, "/v1/worlds/%s/validate", world_id_);
    json_t *doc = http_json("POST", path,
                            "{\"body\": {\"radius\": 0.1, \"position\": [1.5, 32, 0]}, \"to\": "
                            "[1.5, 28, 0], \"dt\": 1, \"obstacles\": [{\"id\": \"blade\", "
                            "\"shape\": {\"type\": \"box\", \"half_extents\": [2, 0.05, 0.5]}, "
                            "\"position\": [0, 30, 0], \"angular_velocity\": [0, 0, 1]}]}",
                            200);
    assert_false(json_is_true(json_object_get(doc, "valid")));
    const json_t *v = json_array_get(json_object_get(doc, "violations"), 0);
    assert_string_equal(json_string_value(json_object_get(v, "obstacle")), "blade");
    double t = json_real_value(json_object_get(v, "time"));
    assert_true(t > 0.2 && t < 0.5);
    json_decref(doc);

    const double star = 3.14159265358979323846 / 2 - 2 * atan2(0.05, 2);
    static const char BLADE[] = "{\"id\": \"blade\", \"shape\": {\"type\": \"box\", "
                                "\"half_extents\": [2, 0.05, 0.05]}, \"position\": [10.5, 23, "
                                "10.3], \"angular_velocity\": [0, 0, 1]}";
    /* the shape cast */
    snprintf(path, sizeof path, "/v1/worlds/%s/shapecast", world_id_);
    snprintf(body, sizeof body, "{\"horizon\": 3, \"bodies\": [%s]}", BLADE);
    doc = http_json("POST", path, body, 200);
    const json_t *r = json_array_get(json_object_get(doc, "results"), 0);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "hit");
    assert_string_equal(json_string_value(json_object_get(r, "collider")), "box");
    double time = json_real_value(json_object_get(r, "time"));
    double tol = json_real_value(json_object_get(r, "tolerance"));
    printf("shape cast: %.17g + %.3g (a* %.17g)\n", time, tol, star);
    assert_true(time <= star && star <= time + tol && tol > 0 && tol <= 1e-9 * time);
    const json_t *q = json_object_get(r, "orientation");
    assert_true(fabs(json_real_value(json_array_get(q, 0)) - cos(time / 2)) < 1e-15 &&
                fabs(json_real_value(json_array_get(q, 3)) - sin(time / 2)) < 1e-15);
    assert_true(fabs(json_real_value(json_array_get(json_object_get(r, "point"), 1)) - 21) < 1e-8);
    json_decref(doc);
    /* the scene with the world: the same contact */
    snprintf(body, sizeof body, "{\"horizon\": 3, \"world\": \"%s\", \"bodies\": [%s]}", world_id_,
             BLADE);
    doc = http_json("POST", "/v1/scenes/predict", body, 200);
    r = json_array_get(json_object_get(doc, "collisions"), 0);
    assert_string_equal(json_string_value(json_object_get(r, "b")), "box");
    assert_true(json_real_value(json_object_get(r, "time")) == time);
    assert_true(json_real_value(json_object_get(r, "tolerance")) == tol);
    assert_non_null(json_object_get(r, "a_orientation"));
    json_decref(doc);
    /* the blade turning in place as a move against the stored world: tunnelling at that time */
    snprintf(path, sizeof path, "/v1/worlds/%s/validate", world_id_);
    snprintf(body, sizeof body, "{\"dt\": 3, \"to\": [10.5, 23, 10.3], \"body\": %s}", BLADE);
    doc = http_json("POST", path, body, 200);
    assert_false(json_is_true(json_object_get(doc, "valid")));
    v = json_array_get(json_object_get(doc, "violations"), 0);
    assert_string_equal(json_string_value(json_object_get(v, "kind")), "tunneling");
    assert_string_equal(json_string_value(json_object_get(v, "collider")), "box");
    assert_true(fabs(json_real_value(json_object_get(v, "time")) - star) <= 1e-9 * star);
    json_decref(doc);
    /* a spinning ball: answered as the ball not spinning */
    snprintf(body, sizeof body,
             "{\"horizon\": 1, \"world\": \"%s\", \"bodies\": [{\"radius\": 1, \"position\": [3, "
             "40, 3], \"angular_velocity\": [0, 1, 0]}]}",
             world_id_);
    doc = http_json("POST", "/v1/scenes/predict", body, 200);
    json_decref(doc);
    doc = http_json("POST", path,
                    "{\"body\": {\"radius\": 1, \"position\": [3, 40, 3], \"angular_velocity\": "
                    "[0, 1, 0]}, \"to\": [3, 41, 3], \"dt\": 1}",
                    200);
    assert_true(json_is_true(json_object_get(doc, "valid")));
    json_decref(doc);
    /* a turning body's cast needs a horizon: it would turn past 1e6 radians without one */
    snprintf(path, sizeof path, "/v1/worlds/%s/shapecast", world_id_);
    snprintf(body, sizeof body, "{\"bodies\": [%s]}", BLADE);
    doc = http_json("POST", path, body, 422);
    assert_string_equal(json_string_value(json_object_get(doc, "pointer")),
                        "/bodies/0/angular_velocity");
    json_decref(doc);
}

typedef struct job {
    char path[160];
    int failures, done;
} job;

static void *raycast_loop(void *arg) {
    job *j = arg;
    char url[256];
    snprintf(url, sizeof url, "%s%s", daemon_.url, j->path);
    static const char Q[] = "{\"rays\": [{\"origin\": [10.5, 30, 10.5], \"direction\": [0, -1, "
                            "0]}], \"mode\": \"any\"}";
    for (int i = 0; i < 60; ++i) {
        imp_http_result r;
        if (imp_http(NULL, "POST", url, "application/json", Q, strlen(Q), &r) != 0 ||
            r.status != 200 || !strstr(r.body, "\"hit\":true"))
            j->failures++;
        imp_http_result_free(&r);
    }
    j->done = 1;
    return NULL;
}

static void test_queries_while_uploading(void **state) {
    (void)state;
    job j = {"", 0, 0};
    snprintf(j.path, sizeof j.path, "/v1/worlds/%s/raycast", world_id_);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, raycast_loop, &j), 0);
    for (int i = 0; i < 20; ++i) {
        char w[256], id[65], path[160];
        snprintf(w, sizeof w,
                 "{\"colliders\": [{\"shape\": {\"type\": \"heightfield\", \"rows\": 2, \"cols\": "
                 "2, \"spacing\": [1, 1], \"heights\": [%d, 0, 0, 0]}, \"position\": [0, 0, 0]}]}",
                 i);
        sha256sum(w, id);
        json_decref(http_json("POST", "/v1/worlds", w, 201));
        snprintf(path, sizeof path, "/v1/worlds/%s", id);
        imp_http_result r;
        http("DELETE", path, NULL, &r);
        assert_int_equal(r.status, 204);
        imp_http_result_free(&r);
    }
    pthread_join(th, NULL);
    assert_int_equal(j.failures, 0);
}

static void test_delete_and_metrics(void **state) {
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "/v1/worlds/%s", world_id_);
    imp_http_result r;
    http("DELETE", path, NULL, &r);
    assert_int_equal(r.status, 204);
    assert_int_equal(r.len, 0);
    imp_http_result_free(&r);
    json_t *doc = http_json("GET", path, NULL, 404);
    assert_string_equal(json_string_value(json_object_get(doc, "type")), "unknown-world");
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/worlds/%s/raycast", world_id_);
    json_decref(http_json("POST", path, "{\"rays\": []}", 404));
    http("GET", "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "route=\"/v1/worlds/{id}/raycast\""));
    assert_non_null(strstr(r.body, "route=\"/v1/worlds/{id}\""));
    assert_null(strstr(r.body, world_id_));
    imp_http_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_head_get),    cmocka_unit_test(test_raycast_terrain),
        cmocka_unit_test(test_casts_and_overlaps), cmocka_unit_test(test_queries_while_uploading),
        cmocka_unit_test(test_validate),           cmocka_unit_test(test_turning_beside_world),
        cmocka_unit_test(test_delete_and_metrics),
    };
    return cmocka_run_group_tests_name("worlds", tests, setup, teardown);
}
