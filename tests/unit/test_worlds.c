/*
 * test_worlds.c - the worlds endpoints through the api entry point, with an
 * in-process store: ids against an independent SHA-256 (sha256sum), decode
 * errors with their pointers, upload / metadata / delete, queries against a
 * brute-force loop written here, the store's eviction and reference counts,
 * and queries running while other threads upload and delete.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>
#include <pthread.h>
#include <unistd.h>

#include "api/api.h"
#include "api/world_store.h"
#include "tests/rng.h"
#include "tests/sha256sum.h"

static imp_api_ctx ctx_;

static int setup(void **state) {
    (void)state;
    imp_api_ctx_init(&ctx_);
    ctx_.max_world_triangles = 100000;
    ctx_.worlds = imp_world_store_create((size_t)1 << 30);
    return ctx_.worlds ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    imp_world_store_destroy(ctx_.worlds);
    return 0;
}

/* Runs route `op` with path id `id` (NULL: none) on `body`; the parsed reply (NULL for an
 * empty body) and its status. */
static json_t *call(const char *op, const char *id, const char *body, int *status) {
    imp_api_response r;
    *status = imp_api_handle_route(imp_endpoint_by_op(op), id, body, strlen(body), &ctx_, &r);
    json_t *doc = r.len ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    if (r.len && !doc) fail_msg("%s: reply is not JSON: %s", op, r.body);
    imp_api_response_free(&r);
    return doc;
}

static json_t *call_ok(const char *op, const char *id, const char *body, int want) {
    int status;
    json_t *r = call(op, id, body, &status);
    if (status != want) {
        char *s = r ? json_dumps(r, JSON_COMPACT) : NULL;
        fail_msg("%s %.200s: got %d %s", op, body, status, s ? s : "");
    }
    return r;
}

static void expect_problem(const char *op, const char *id, const char *body, int status,
                           const char *type, const char *pointer) {
    int got;
    json_t *p = call(op, id, body, &got);
    const char *t = json_string_value(json_object_get(p, "type"));
    const char *ptr = json_string_value(json_object_get(p, "pointer"));
    if (got != status || !t || strcmp(t, type) != 0 ||
        (pointer ? !ptr || strcmp(ptr, pointer) != 0 : ptr != NULL)) {
        char *s = json_dumps(p, JSON_COMPACT);
        fail_msg("%s %.300s: want %d %s at %s, got %d %s", op, body, status, type,
                 pointer ? pointer : "(none)", got, s);
    }
    json_decref(p);
}

/* Uploads a world; its id (static buffer per call site: copy it). */
static void upload(const char *body, int want, char id[IMP_WORLD_ID_LEN + 1]) {
    json_t *r = call_ok("worlds", NULL, body, want);
    snprintf(id, IMP_WORLD_ID_LEN + 1, "%s", json_string_value(json_object_get(r, "id")));
    json_decref(r);
}

/* ---- ids ---------------------------------------------------------------------------------- */

static void test_id_is_sha256_of_the_body(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1];
    /* FIPS 180-2's test vector */
    imp_world_id_of("abc", 3, id);
    assert_string_equal(id, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* and an upload's id against sha256sum of the same bytes */
    static const char W[] = "{\"colliders\": [{\"radius\": 1, \"position\": [0, 0, 0]}],\n"
                            " \"time_budget_ms\": 1000}";
    char want[IMP_WORLD_ID_LEN + 1] = "";
    assert_int_equal(imp_test_sha256sum(W, strlen(W), want), 0);
    upload(W, 201, id);
    assert_string_equal(id, want);
    assert_true(imp_world_id_valid(id));
    assert_false(imp_world_id_valid("ABC"));
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* ---- decoding ----------------------------------------------------------------------------- */

#define MESH3                                                                                      \
    "{\"type\": \"mesh\", \"vertices\": [[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [[0,2,1]]}"

static void test_decode_errors(void **state) {
    (void)state;
    expect_problem(
        "worlds", NULL,
        "{\"colliders\": [{\"radius\": 1, \"position\": [0,0,0]}, {\"shape\": {\"type\": "
        "\"mesh\", \"vertices\": [[0,0,0],[1,0,0],[0,0,1]], \"triangles\": "
        "[[0,1,2],[0,1,3]]}, \"position\": [0,0,0]}]}",
        422, "invalid-field", "/colliders/1/shape/triangles/1/2");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
                   "[[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [[0,1,1e300]]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "invalid-field", "/colliders/0/shape/triangles/0/2");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
                   "[[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [[0,1,0.5]]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "invalid-field", "/colliders/0/shape/triangles/0/2");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
                   "[[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [[0,1]]}, \"position\": [0,0,0]}]}",
                   400, "wrong-type", "/colliders/0/shape/triangles/0");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"heightfield\", \"rows\": 2, "
                   "\"cols\": 3, \"spacing\": [1, 1], \"heights\": [0,0,0,0,0]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "invalid-geometry", "/colliders/0/shape/heights");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"heightfield\", \"rows\": 1, "
                   "\"cols\": 3, \"spacing\": [1, 1], \"heights\": [0,0,0]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "invalid-field", "/colliders/0/shape/rows");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"heightfield\", \"rows\": 2, "
                   "\"cols\": 2, \"spacing\": [1, 0], \"heights\": [0,0,0,0]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "invalid-field", "/colliders/0/shape/spacing/1");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"chain\", \"vertices\": [[0,0]]}, "
                   "\"position\": [0,0]}]}",
                   422, "invalid-geometry", "/colliders/0/shape/vertices");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"radius\": 1, \"position\": [0,0,0]}, {\"shape\": "
                   "{\"type\": \"chain\", \"vertices\": [[0,0],[1,0]]}, \"position\": [0,0]}]}",
                   422, "invalid-geometry", "/colliders/1/shape/type");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"radius\": 1, \"position\": [0,0]}, {\"shape\": " MESH3
                   ", \"position\": [0,0,0]}]}",
                   422, "invalid-geometry", "/colliders/1/shape/type");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": " MESH3
                   ", \"position\": [0,0,0], \"velocity\": [0,1,0]}]}",
                   422, "invalid-geometry", "/colliders/0/velocity");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"radius\": 1, \"position\": [0,0,0], \"acceleration\": "
                   "[0,-9.8,0]}]}",
                   422, "invalid-geometry", "/colliders/0/acceleration");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
                   "[[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [], \"sides\": 2}, \"position\": "
                   "[0,0,0]}]}",
                   400, "unknown-field", "/colliders/0/shape/sides");
    expect_problem("worlds", NULL, "{\"colliders\": []}", 422, "invalid-geometry", "/colliders");
    expect_problem("worlds", NULL, "{}", 400, "missing-field", "/colliders");
    expect_problem("worlds", NULL, "{\"colliders\": [], ", 400, "malformed-json", NULL);
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"id\": 1, \"radius\": 1, \"position\": [0,0,0]}, {\"id\": "
                   "1, \"radius\": 1, \"position\": [5,0,0]}]}",
                   422, "duplicate-id", "/colliders/1/id");
    /* the triangle limit, per mesh and for the world */
    size_t saved = ctx_.max_world_triangles;
    ctx_.max_world_triangles = 1;
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
                   "[[0,0,0],[1,0,0],[0,0,1]], \"triangles\": [[0,2,1],[0,1,2]]}, \"position\": "
                   "[0,0,0]}]}",
                   422, "limit-exceeded", "/colliders/0/shape/triangles");
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"shape\": " MESH3
                   ", \"position\": [0,0,0]}, {\"shape\": " MESH3 ", \"position\": [0,0,0]}]}",
                   422, "limit-exceeded", "/colliders/1");
    ctx_.max_world_triangles = saved;
    /* world shapes stay unsupported outside worlds */
    expect_problem("toi", NULL,
                   "{\"a\": {\"shape\": " MESH3 ", \"position\": [0,0,0]}, \"b\": {\"radius\": 1, "
                   "\"position\": [3,0,0]}}",
                   422, "unsupported-field", "/a/shape/type");
}

/* ---- upload, metadata, delete ------------------------------------------------------------- */

static void test_upload_get_delete(void **state) {
    (void)state;
    static const char W[] =
        "{\"colliders\": [{\"id\": \"floor\", \"shape\": {\"type\": \"mesh\", \"vertices\": "
        "[[0,0,0],[10,0,0],[10,0,10],[0,0,10],[5,0,5]], \"triangles\": "
        "[[0,2,1],[0,3,2],[0,0,1],[0,4,2]]}, \"position\": [0,0,0]}, {\"shape\": {\"type\": "
        "\"heightfield\", \"rows\": 3, \"cols\": 3, \"spacing\": [1, 2], \"heights\": "
        "[0,1,2,3,4,5,6,7,8]}, \"position\": [20,0,0]}, {\"radius\": 1, \"position\": "
        "[0,10,0]}]}";
    char id[IMP_WORLD_ID_LEN + 1];
    json_t *r = call_ok("worlds", NULL, W, 201);
    assert_int_equal(json_integer_value(json_object_get(r, "dimension")), 3);
    assert_int_equal(json_integer_value(json_object_get(r, "colliders")), 3);
    /* 4 mesh triangles, one of them (0, 0, 1) and one (0, 4, 2) of zero area; 8 cells' */
    assert_int_equal(json_integer_value(json_object_get(r, "triangles")), 2 + 8);
    assert_int_equal(json_integer_value(json_object_get(r, "degenerate_triangles")), 2);
    const json_t *hi = json_object_get(json_object_get(r, "bounds"), "max");
    assert_true(json_real_value(json_array_get(hi, 0)) == 22.0);
    assert_true(json_real_value(json_array_get(hi, 1)) == 11.0);
    assert_true(json_integer_value(json_object_get(r, "bytes")) > 0);
    snprintf(id, sizeof id, "%s", json_string_value(json_object_get(r, "id")));
    json_decref(r);
    /* the same bytes again: 200, the same reply's metadata */
    upload(W, 200, id);
    r = call_ok("worlds/get", id, "", 200);
    assert_string_equal(json_string_value(json_object_get(r, "id")), id);
    json_decref(r);
    assert_null(call_ok("worlds/delete", id, "", 204));
    expect_problem("worlds/get", id, "", 404, "unknown-world", NULL);
    expect_problem("worlds/delete", id, "", 404, "unknown-world", NULL);
    expect_problem("worlds/raycast", id, "{\"rays\": []}", 404, "unknown-world", NULL);
    expect_problem("worlds/get", "not-an-id", "", 404, "unknown-world", NULL);
    expect_problem("worlds/get", NULL, "", 404, "unknown-world", NULL);
    /* no store: 501 */
    imp_world_store *s = ctx_.worlds;
    ctx_.worlds = NULL;
    expect_problem("worlds", NULL, W, 501, "not-implemented", NULL);
    ctx_.worlds = s;
}

/* ---- queries against a brute-force loop ------------------------------------------------- */

typedef struct tri {
    double a[3], b[3], c[3];
} tri;

static void sub(const double *a, const double *b, double *o) {
    for (int i = 0; i < 3; ++i)
        o[i] = a[i] - b[i];
}
static void cross(const double *a, const double *b, double *o) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Moller-Trumbore: t of the hit, or -1; *margin the smallest barycentric coordinate (a ray
 * close to an edge is skipped by the caller: there the two tests may differ in rounding). */
static double ray_tri(const double *o, const double *d, const tri *t, double *margin) {
    double e1[3], e2[3], p[3], s[3], q[3];
    sub(t->b, t->a, e1);
    sub(t->c, t->a, e2);
    cross(d, e2, p);
    double det = dot(e1, p);
    *margin = 1.0;
    if (fabs(det) < 1e-300) return -1;
    sub(o, t->a, s);
    double u = dot(s, p) / det;
    cross(s, e1, q);
    double v = dot(d, q) / det;
    double w = 1 - u - v;
    *margin = fmin(fabs(u), fmin(fabs(v), fabs(w)));
    if (u < 0 || v < 0 || w < 0) return -1;
    double tt = dot(e2, q) / det;
    return tt >= 0 ? tt : -1;
}

/* A collider's orientation turns its mesh: a triangle in the x-z plane turned a quarter
 * about x lies in the x-y plane, where a ray down z meets it at t = 5; a heightfield's grid
 * cannot turn yet (422 at the orientation). */
static void test_collider_orientation(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1];
    upload(
        "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": [[-1, 0, -1], [1, 0, "
        "-1], [0, 0, 1]], \"triangles\": [[0, 1, 2]]}, \"position\": [0, 0, 0], \"orientation\": "
        "[1, 1, 0, 0]}]}",
        201, id);
    json_t *r = call_ok("worlds/raycast", id,
                        "{\"rays\": [{\"origin\": [0, 0, 5], \"direction\": [0, 0, -1]}]}", 200);
    const json_t *hit = json_array_get(json_object_get(r, "hits"), 0);
    assert_true(json_is_true(json_object_get(hit, "hit")));
    assert_true(fabs(json_number_value(json_object_get(hit, "t")) - 5.0) < 1e-12);
    json_decref(r);
    expect_problem(
        "worlds", NULL,
        "{\"colliders\": [{\"shape\": {\"type\": \"heightfield\", \"rows\": 2, "
        "\"cols\": 2, \"spacing\": [1, 1], \"heights\": [0, 0, 0, 0]}, \"position\": [0, "
        "0, 0], \"orientation\": [1, 1, 0, 0]}]}",
        422, "unsupported-field", "/colliders/0/orientation");
}

static void test_raycast_against_brute_force(void **state) {
    (void)state;
    enum { NT = 300, NR = 400 };
    uint64_t rng = 16;
    tri *tris = malloc(NT * sizeof *tris);
    size_t cap = NT * 200 + 256, len = 0;
    char *w = malloc(cap);
    len += (size_t)snprintf(w + len, cap - len,
                            "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": [");
    for (int i = 0; i < NT; ++i) {
        double *v[3] = {tris[i].a, tris[i].b, tris[i].c};
        double cx = imp_rng_uniform(&rng, -10, 10), cy = imp_rng_uniform(&rng, -10, 10),
               cz = imp_rng_uniform(&rng, -10, 10);
        for (int k = 0; k < 3; ++k) {
            v[k][0] = cx + imp_rng_uniform(&rng, -2, 2);
            v[k][1] = cy + imp_rng_uniform(&rng, -2, 2);
            v[k][2] = cz + imp_rng_uniform(&rng, -2, 2);
            len += (size_t)snprintf(w + len, cap - len, "%s[%.17g,%.17g,%.17g]", i || k ? "," : "",
                                    v[k][0], v[k][1], v[k][2]);
        }
    }
    len += (size_t)snprintf(w + len, cap - len, "], \"triangles\": [");
    for (int i = 0; i < NT; ++i)
        len += (size_t)snprintf(w + len, cap - len, "%s[%d,%d,%d]", i ? "," : "", 3 * i, 3 * i + 1,
                                3 * i + 2);
    snprintf(w + len, cap - len, "]}, \"position\": [0, 0, 0]}]}");
    char id[IMP_WORLD_ID_LEN + 1];
    upload(w, 201, id);

    double(*rays)[6] = malloc(NR * sizeof *rays);
    cap = NR * 160 + 64;
    char *q = malloc(cap);
    len = (size_t)snprintf(q, cap, "{\"mode\": \"closest\", \"rays\": [");
    for (int i = 0; i < NR; ++i) {
        for (int k = 0; k < 6; ++k)
            rays[i][k] = imp_rng_uniform(&rng, -12, 12);
        len += (size_t)snprintf(q + len, cap - len,
                                "%s{\"origin\": [%.17g,%.17g,%.17g], \"direction\": "
                                "[%.17g,%.17g,%.17g]}",
                                i ? "," : "", rays[i][0], rays[i][1], rays[i][2], rays[i][3],
                                rays[i][4], rays[i][5]);
    }
    snprintf(q + len, cap - len, "]}");
    json_t *r = call_ok("worlds/raycast", id, q, 200);
    const json_t *hits = json_object_get(r, "hits");
    assert_int_equal(json_array_size(hits), NR);
    int checked = 0, hit_count = 0;
    for (int i = 0; i < NR; ++i) {
        double best = INFINITY, near_edge = 0;
        int best_k = -1;
        for (int k = 0; k < NT; ++k) {
            double m, t = ray_tri(rays[i], rays[i] + 3, &tris[k], &m);
            if (m < 1e-7) near_edge = 1;
            if (t >= 0 && t < best) best = t, best_k = k;
        }
        if (near_edge) continue;
        ++checked;
        const json_t *h = json_array_get(hits, (size_t)i);
        assert_int_equal(json_integer_value(json_object_get(h, "id")), i);
        int hit = json_is_true(json_object_get(h, "hit"));
        if (hit != (best_k >= 0))
            fail_msg("ray %d: hit %d, brute force %d (t %g)", i, hit, best_k >= 0, best);
        if (!hit) continue;
        ++hit_count;
        double t = json_real_value(json_object_get(h, "t"));
        assert_true(fabs(t - best) <= 1e-9 * fmax(1.0, best));
        assert_int_equal(json_integer_value(json_object_get(h, "triangle")), best_k);
        assert_int_equal(json_integer_value(json_object_get(h, "collider")), 0);
    }
    assert_true(checked > NR * 3 / 4);
    assert_true(hit_count > 20);
    json_decref(r);
    /* mode any agrees on hit or miss; mode all lists at least the closest */
    memcpy(q + 9, "\"any\",    ", 10);
    r = call_ok("worlds/raycast", id, q, 200);
    json_t *r2;
    memcpy(q + 9, "\"all\",    ", 10);
    r2 = call_ok("worlds/raycast", id, q, 200);
    for (int i = 0; i < NR; ++i) {
        const json_t *a = json_array_get(json_object_get(r, "hits"), (size_t)i);
        const json_t *b = json_array_get(json_object_get(r2, "hits"), (size_t)i);
        assert_int_equal(json_is_true(json_object_get(a, "hit")),
                         json_is_true(json_object_get(b, "hit")));
        assert_int_equal(json_is_true(json_object_get(b, "hit")),
                         json_array_size(json_object_get(b, "all")) > 0);
    }
    json_decref(r);
    json_decref(r2);
    json_decref(call_ok("worlds/delete", id, "", 204));
    free(q);
    free(rays);
    free(w);
    free(tris);
}

/* A flat heightfield at y = 2 over [0, 10] x [0, 10]. */
static const char GROUND[] =
    "{\"colliders\": [{\"id\": \"ground\", \"shape\": {\"type\": \"heightfield\", \"rows\": "
    "3, \"cols\": 3, \"spacing\": [5, 5], \"heights\": [2,2,2,2,2,2,2,2,2]}, \"position\": "
    "[0,0,0]}]}";

static void test_query_errors_and_casts(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1];
    upload(GROUND, 201, id);
    json_t *r = call_ok("worlds/shapecast", id,
                        "{\"bodies\": [{\"id\": \"ball\", \"radius\": 0.5, \"position\": [3, 10, "
                        "3], \"velocity\": [0, -2, 0]}, {\"radius\": 0.5, \"position\": [3, 10, "
                        "3], \"velocity\": [1, 0, 0]}], \"horizon\": 100}",
                        200);
    const json_t *c = json_array_get(json_object_get(r, "results"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "status")), "hit");
    assert_string_equal(json_string_value(json_object_get(c, "id")), "ball");
    assert_string_equal(json_string_value(json_object_get(c, "collider")), "ground");
    assert_true(fabs(json_real_value(json_object_get(c, "time")) - 3.75) < 1e-12);
    c = json_array_get(json_object_get(r, "results"), 1);
    assert_string_equal(json_string_value(json_object_get(c, "status")), "none");
    json_decref(r);
    r = call_ok("worlds/overlap", id, "{\"body\": {\"radius\": 1, \"position\": [5, 2.5, 5]}}",
                200);
    const json_t *ov = json_object_get(r, "overlaps");
    assert_true(json_array_size(ov) >= 2); /* the four cells meeting at (5, 5) */
    for (size_t i = 0; i < json_array_size(ov); ++i)
        assert_true(fabs(json_real_value(json_object_get(json_array_get(ov, i), "depth")) - 0.5) <
                    1e-12);
    json_decref(r);
    r = call_ok("worlds/overlap", id, "{\"body\": {\"radius\": 1, \"position\": [5, 9, 5]}}", 200);
    assert_int_equal(json_array_size(json_object_get(r, "overlaps")), 0);
    json_decref(r);

    expect_problem("worlds/raycast", id,
                   "{\"rays\": [{\"origin\": [0,5,0], \"direction\": [0,0,0]}]}", 422,
                   "invalid-geometry", "/rays/0/direction");
    expect_problem("worlds/raycast", id, "{\"rays\": [{\"origin\": [0,5], \"direction\": [0,1]}]}",
                   400, "mixed-dimensions", "/rays/0/origin");
    expect_problem("worlds/raycast", id,
                   "{\"rays\": [{\"origin\": [0,5,0], \"direction\": [0,-1,0], \"filter\": "
                   "{\"mask\": -1}}]}",
                   422, "invalid-field", "/rays/0/filter/mask");
    expect_problem("worlds/raycast", id,
                   "{\"rays\": [{\"origin\": [0,5,0], \"direction\": [0,-1,0], \"max_t\": 0}]}",
                   422, "invalid-field", "/rays/0/max_t");
    expect_problem("worlds/raycast", id, "{\"rays\": [], \"mode\": \"first\"}", 422,
                   "invalid-field", "/mode");
    expect_problem("worlds/raycast", id, "{\"rays\": {}}", 400, "wrong-type", "/rays");
    expect_problem("worlds/shapecast", id,
                   "{\"bodies\": [{\"shape\": {\"type\": \"halfspace\", \"normal\": [0,1,0], "
                   "\"offset\": 0}, \"position\": [0,0,0], \"static\": true}]}",
                   422, "invalid-field", "/bodies/0/shape/type");
    expect_problem("worlds/shapecast", id,
                   "{\"bodies\": [{\"shape\": " MESH3 ", \"position\": [0,0,0]}]}", 422,
                   "unsupported-field", "/bodies/0/shape/type");
    expect_problem("worlds/overlap", id, "{}", 400, "missing-field", "/body");
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* Filters (Box2D's rule) between world colliders and rays, cast bodies and overlap bodies:
 * two floors, the upper of category 2; a query whose mask leaves out bit 2 sees only the
 * lower, a negative group shared with the upper passes through it too. */
static void test_filters(void **state) {
    (void)state;
    static const char W[] =
        "{\"colliders\": [{\"id\": \"low\", \"shape\": {\"type\": \"heightfield\", \"rows\": 2, "
        "\"cols\": 2, \"spacing\": [10, 10], \"heights\": [0,0,0,0]}, \"position\": [0,0,0]}, "
        "{\"id\": \"high\", \"shape\": {\"type\": \"heightfield\", \"rows\": 2, \"cols\": 2, "
        "\"spacing\": [10, 10], \"heights\": [0,0,0,0]}, \"position\": [0,4,0], \"filter\": "
        "{\"category\": 2, \"group\": -3}}]}";
    char id[IMP_WORLD_ID_LEN + 1];
    upload(W, 201, id);
    json_t *r =
        call_ok("worlds/raycast", id,
                "{\"rays\": [{\"origin\": [5,9,5], \"direction\": [0,-1,0]}, {\"origin\": "
                "[5,9,5], \"direction\": [0,-1,0], \"filter\": {\"mask\": 1}}, "
                "{\"origin\": [5,9,5], \"direction\": [0,-1,0], \"filter\": {\"group\": -3}}, "
                "{\"origin\": [5,9,5], \"direction\": [0,-1,0], \"filter\": {\"category\": 4, "
                "\"mask\": 4}}]}",
                200);
    static const char *const WANT_RAY[] = {"high", "low", "low", NULL};
    static const double WANT_T[] = {5.0, 9.0, 9.0};
    for (size_t i = 0; i < 4; ++i) {
        const json_t *h = json_array_get(json_object_get(r, "hits"), i);
        assert_int_equal(json_is_true(json_object_get(h, "hit")), WANT_RAY[i] != NULL);
        if (!WANT_RAY[i]) continue;
        assert_string_equal(json_string_value(json_object_get(h, "collider")), WANT_RAY[i]);
        assert_true(json_real_value(json_object_get(h, "t")) == WANT_T[i]);
    }
    json_decref(r);
    r = call_ok("worlds/shapecast", id,
                "{\"bodies\": [{\"radius\": 1, \"position\": [5,9,5], \"velocity\": [0,-1,0]}, "
                "{\"radius\": 1, \"position\": [5,9,5], \"velocity\": [0,-1,0], \"filter\": "
                "{\"mask\": 5}}]}",
                200);
    const json_t *c0 = json_array_get(json_object_get(r, "results"), 0);
    const json_t *c1 = json_array_get(json_object_get(r, "results"), 1);
    assert_string_equal(json_string_value(json_object_get(c0, "collider")), "high");
    assert_true(json_real_value(json_object_get(c0, "time")) == 4.0);
    assert_string_equal(json_string_value(json_object_get(c1, "collider")), "low");
    assert_true(json_real_value(json_object_get(c1, "time")) == 8.0);
    json_decref(r);
    r = call_ok("worlds/overlap", id,
                "{\"body\": {\"radius\": 5, \"position\": [5,2,5], \"filter\": {\"group\": -3}}}",
                200);
    const json_t *ov = json_object_get(r, "overlaps");
    assert_true(json_array_size(ov) >= 1);
    for (size_t i = 0; i < json_array_size(ov); ++i)
        assert_string_equal(json_string_value(json_object_get(json_array_get(ov, i), "collider")),
                            "low");
    json_decref(r);
    /* a move down through both floors: blocked by "high", unless the body's mask leaves
     * out category 2, then by "low"; a scene and a simulation see the same */
    char path[160], req[512];
    snprintf(path, sizeof path, "%s", id);
    json_t *v = call_ok("worlds/validate", path,
                        "{\"body\": {\"radius\": 0.5, \"position\": [5, 9, 5], \"filter\": "
                        "{\"mask\": 1}}, \"to\": [5, -3, 5], \"dt\": 1}",
                        200);
    const json_t *viol = json_object_get(v, "violations");
    assert_int_equal(json_array_size(viol), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(viol, 0), "collider")),
                        "low");
    json_decref(v);
    v = call_ok("worlds/validate", path,
                "{\"body\": {\"radius\": 0.5, \"position\": [5, 9, 5]}, \"to\": [5, -3, 5], "
                "\"dt\": 1}",
                200);
    viol = json_object_get(v, "violations");
    assert_int_equal(json_array_size(viol), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(viol, 0), "collider")),
                        "high");
    json_decref(v);
    snprintf(req, sizeof req,
             "{\"bodies\": [{\"radius\": 0.5, \"position\": [5, 9, 5], \"velocity\": [0, -1, 0], "
             "\"filter\": {\"mask\": 1}}], \"horizon\": 20, \"world\": \"%s\"}",
             id);
    v = call_ok("scenes/predict", NULL, req, 200);
    const json_t *cs = json_object_get(v, "collisions");
    assert_int_equal(json_array_size(cs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cs, 0), "b")), "low");
    assert_true(json_real_value(json_object_get(json_array_get(cs, 0), "time")) == 8.5);
    json_decref(v);
    v = call_ok("scenes/simulate", NULL, req, 200);
    const json_t *ev = json_object_get(v, "events");
    assert_true(json_array_size(ev) >= 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "b")), "low");
    json_decref(v);
    expect_problem("worlds", NULL,
                   "{\"colliders\": [{\"radius\": 1, \"position\": [0,0,0], \"filter\": "
                   "{\"category\": 4294967296}}]}",
                   422, "invalid-field", "/colliders/0/filter/category");
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* A scene against a stored world: bodies' contacts with its colliders come with the pairs',
 * `b` the collider and `triangle` the heightfield's triangle; first_per_body keeps a body's
 * earliest contact whether with a body or with the world. */
static void test_scene_predict_with_world(void **state) {
    (void)state;
    static const char SCENE[] =
        "{\"bodies\": [{\"id\": \"b0\", \"radius\": 0.5, \"position\": [3, 10, 1], "
        "\"velocity\": [0, -2, 0]}, {\"id\": \"b1\", \"radius\": 0.5, \"position\": [6, 9, 6], "
        "\"velocity\": [1, 0, 0]}, {\"id\": \"b2\", \"radius\": 0.5, \"position\": [8, 9, 6], "
        "\"velocity\": [-1, -1, 0]}], \"horizon\": 10, \"world\": \"%s\"%s}";
    char id[IMP_WORLD_ID_LEN + 1], req[1024];
    upload(GROUND, 201, id);
    /* ball 0 falls onto the ground at t = 3.75 (cell (0, 0), x = 3 > z = 1: triangle 0);
     * balls 1 and 2 meet at t = 1 above it, 2 would reach the ground at t = 7 */
    snprintf(req, sizeof req, SCENE, id, "");
    json_t *r = call_ok("scenes/predict", NULL, req, 200);
    const json_t *cs = json_object_get(r, "collisions");
    assert_int_equal(json_array_size(cs), 3);
    const json_t *c = json_array_get(cs, 0);
    assert_string_equal(json_string_value(json_object_get(c, "a")), "b1");
    assert_string_equal(json_string_value(json_object_get(c, "b")), "b2");
    c = json_array_get(cs, 1);
    assert_string_equal(json_string_value(json_object_get(c, "a")), "b0");
    assert_string_equal(json_string_value(json_object_get(c, "b")), "ground");
    assert_int_equal(json_integer_value(json_object_get(c, "triangle")), 0);
    assert_true(json_real_value(json_object_get(c, "time")) == 3.75);
    const json_t *n = json_object_get(c, "normal");
    assert_true(fabs(json_real_value(json_array_get(n, 1)) + 1.0) < 1e-12);
    c = json_array_get(cs, 2);
    assert_string_equal(json_string_value(json_object_get(c, "a")), "b2");
    assert_string_equal(json_string_value(json_object_get(c, "b")), "ground");
    assert_true(json_real_value(json_object_get(c, "time")) == 6.5);
    json_decref(r);
    snprintf(req, sizeof req, SCENE, id, ", \"report\": \"first_per_body\"");
    r = call_ok("scenes/predict", NULL, req, 200);
    cs = json_object_get(r, "collisions");
    assert_int_equal(json_array_size(cs), 2); /* b1-b2 (the first of both), b0-ground */
    json_decref(r);
    expect_problem(
        "scenes/predict", NULL,
        "{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]}], \"horizon\": 1, "
        "\"world\": \"0000000000000000000000000000000000000000000000000000000000000000\"}",
        404, "unknown-world", "/world");
    snprintf(req, sizeof req,
             "{\"bodies\": [{\"radius\": 1, \"position\": [0, 0]}], \"horizon\": 1, \"world\": "
             "\"%s\"}",
             id);
    expect_problem("scenes/predict", NULL, req, 400, "mixed-dimensions", "/world");
    expect_problem("scenes/predict", NULL, "{\"bodies\": [], \"horizon\": 1, \"world\": [1]}", 400,
                   "wrong-type", "/world");
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* A simulation against a stored world: a ball bounces off the ground (e = 1) and the event
 * names the collider and triangle. */
static void test_simulate_with_world(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1], req[512];
    upload(GROUND, 201, id);
    snprintf(req, sizeof req,
             "{\"bodies\": [{\"id\": \"ball\", \"radius\": 0.5, \"position\": [3, 10, 1], "
             "\"velocity\": [0, -2, 0]}], \"horizon\": 5, \"world\": \"%s\"}",
             id);
    json_t *r = call_ok("scenes/simulate", NULL, req, 200);
    const json_t *ev = json_object_get(r, "events");
    assert_int_equal(json_array_size(ev), 1);
    const json_t *e = json_array_get(ev, 0);
    assert_string_equal(json_string_value(json_object_get(e, "a")), "ball");
    assert_string_equal(json_string_value(json_object_get(e, "b")), "ground");
    assert_int_equal(json_integer_value(json_object_get(e, "triangle")), 0);
    assert_true(json_real_value(json_object_get(e, "time")) == 3.75);
    const json_t *b = json_array_get(json_object_get(r, "bodies"), 0);
    /* back up at 2 m/s from y = 2.5 for 1.25 s */
    assert_true(fabs(json_real_value(json_array_get(json_object_get(b, "velocity"), 1)) - 2.0) <
                1e-12);
    assert_true(fabs(json_real_value(json_array_get(json_object_get(b, "position"), 1)) - 5.0) <
                1e-12);
    json_decref(r);
    expect_problem("scenes/simulate", NULL, "{\"bodies\": [], \"horizon\": 1, \"world\": 5}", 400,
                   "wrong-type", "/world");
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* A validation's reply carries the corrected path: a ball dropping onto the ground slides on
 * from its first contact; each leg's start time, position and velocity. */
static void test_validate_path(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1];
    upload(GROUND, 201, id);
    json_t *r = call_ok("worlds/validate", id,
                        "{\"body\": {\"radius\": 0.5, \"position\": [1, 4, 5]}, \"to\": [9, 2, 5], "
                        "\"dt\": 1}",
                        200);
    const json_t *path = json_object_get(r, "path");
    assert_int_equal(json_array_size(path), 2);
    const json_t *l0 = json_array_get(path, 0), *l1 = json_array_get(path, 1);
    assert_true(json_real_value(json_object_get(l0, "time")) == 0.0);
    assert_true(json_real_value(json_array_get(json_object_get(l0, "velocity"), 1)) == -2.0);
    /* the ball (radius 0.5) reaches the ground (y = 2) at t = 0.75, at x = 7 */
    assert_true(fabs(json_real_value(json_object_get(l1, "time")) - 0.75) < 1e-9);
    const json_t *p1 = json_object_get(l1, "position"), *v1 = json_object_get(l1, "velocity");
    assert_true(fabs(json_real_value(json_array_get(p1, 0)) - 7.0) < 1e-8);
    assert_true(fabs(json_real_value(json_array_get(p1, 1)) - 2.5) < 1e-8);
    assert_true(json_real_value(json_array_get(v1, 0)) == 8.0);
    assert_true(json_real_value(json_array_get(v1, 1)) == 0.0);
    const json_t *pos = json_object_get(r, "position");
    assert_true(fabs(json_real_value(json_array_get(pos, 0)) - 9.0) < 1e-8);
    json_decref(r);
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* A simulation's start is checked: bodies already interpenetrating (each other, or a world
 * collider) and static halfspaces with every moving body on their solid side are listed in
 * `warnings`, with ids and depth; a clean start has no `warnings`. */
static void test_simulate_warnings(void **state) {
    (void)state;
    char id[IMP_WORLD_ID_LEN + 1], req[768];
    upload(GROUND, 201, id);
    /* balls a and b overlap by 0.5; ball c sits 0.25 into the ground (y = 2); the floor
     * {y <= -10} holds no one, the inside-out wall {x <= 100} every moving body */
    snprintf(req, sizeof req,
             "{\"bodies\": [{\"id\": \"a\", \"radius\": 1, \"position\": [1, 5, 1]}, {\"id\": "
             "\"b\", \"radius\": 1, \"position\": [2.5, 5, 1]}, {\"id\": \"c\", \"radius\": 1, "
             "\"position\": [8, 2.75, 8]}, {\"id\": \"floor\", \"shape\": {\"type\": "
             "\"halfspace\", \"normal\": [0, 1, 0], \"offset\": -10}, \"position\": [0, 0, 0], "
             "\"static\": true}, {\"id\": \"inside-out\", \"shape\": {\"type\": \"halfspace\", "
             "\"normal\": [1, 0, 0], \"offset\": 100}, \"position\": [0, 0, 0], \"static\": "
             "true}], \"horizon\": 0.5, \"record\": \"none\", \"world\": \"%s\"}",
             id);
    json_t *r = call_ok("scenes/simulate", NULL, req, 200);
    /* by a, then b (bodies before colliders): a-b, each ball inside the inside-out wall
     * (its depth: the distance to the plane plus the radius), c-ground; then the wall */
    const json_t *w = json_object_get(r, "warnings");
    static const char *const A[] = {"a", "a", "b", "c", "c"};
    static const char *const B[] = {"b", "inside-out", "inside-out", "inside-out", "ground"};
    static const double DEPTH[] = {0.5, 100.0, 98.5, 93.0, 0.25};
    assert_int_equal(json_array_size(w), 6);
    for (size_t k = 0; k < 5; ++k) {
        const json_t *x = json_array_get(w, k);
        assert_string_equal(json_string_value(json_object_get(x, "kind")), "interpenetrating");
        assert_string_equal(json_string_value(json_object_get(x, "a")), A[k]);
        assert_string_equal(json_string_value(json_object_get(x, "b")), B[k]);
        assert_true(fabs(json_real_value(json_object_get(x, "depth")) - DEPTH[k]) < 1e-12);
        assert_int_equal(json_object_get(x, "triangle") != NULL, k == 4);
    }
    const json_t *w5 = json_array_get(w, 5);
    assert_string_equal(json_string_value(json_object_get(w5, "kind")), "inside_out_halfspace");
    assert_string_equal(json_string_value(json_object_get(w5, "halfspace")), "inside-out");
    assert_int_equal(json_integer_value(json_object_get(w5, "bodies")), 3);
    json_decref(r);
    r = call_ok("scenes/simulate", NULL,
                "{\"bodies\": [{\"radius\": 1, \"position\": [0, 5]}, {\"radius\": 1, "
                "\"position\": [3, 5]}], \"horizon\": 1}",
                200);
    assert_null(json_object_get(r, "warnings"));
    json_decref(r);
    json_decref(call_ok("worlds/delete", id, "", 204));
}

/* ---- the store -------------------------------------------------------------------------- */

static imp_world_entry *entry(const char *hex_digit, size_t bytes) {
    imp_world_collider c = {.kind = IMP_WORLD_SHAPE};
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE, .radius = 1};
    c.shape = &sphere;
    imp_world_input in = {3, &c, 1, {NULL, NULL}};
    imp_world *w = NULL;
    assert_int_equal(imp_world_build(&in, &w, NULL), IMP_WORLD_OK);
    imp_world_entry *e = imp_world_entry_create(w, 1);
    assert_non_null(e);
    for (int i = 0; i < IMP_WORLD_ID_LEN; ++i)
        e->meta.id[i] = hex_digit[0];
    e->meta.id[IMP_WORLD_ID_LEN] = '\0';
    e->meta.bytes = bytes;
    return e;
}

static void test_store_eviction_and_holds(void **state) {
    (void)state;
    imp_world_store *s = imp_world_store_create(100);
    char a[65], b[65], c[65];
    memset(a, 'a', 64), memset(b, 'b', 64), memset(c, 'c', 64);
    a[64] = b[64] = c[64] = '\0';
    assert_int_equal(imp_world_store_put(s, entry("a", 40)), IMP_WORLD_PUT_NEW);
    assert_int_equal(imp_world_store_put(s, entry("b", 40)), IMP_WORLD_PUT_NEW);
    assert_int_equal(imp_world_store_put(s, entry("a", 40)), IMP_WORLD_PUT_EXISTS);
    assert_int_equal(imp_world_store_put(s, entry("c", 101)), IMP_WORLD_PUT_TOO_BIG);
    /* a is used last: c evicts b */
    const imp_world_entry *held = imp_world_store_get(s, a);
    assert_non_null(held);
    assert_int_equal(imp_world_store_put(s, entry("c", 40)), IMP_WORLD_PUT_NEW);
    assert_null(imp_world_store_get(s, b));
    size_t n, bytes;
    imp_world_store_stats(s, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 80);
    imp_world_store_counters k;
    imp_world_store_counters_get(s, &k);
    assert_int_equal(k.evictions, 1);
    assert_int_equal(k.hits, 1);
    assert_int_equal(k.misses, 1);
    assert_int_equal(k.cap, 100);
    /* a deleted while held stays usable until released */
    assert_int_equal(imp_world_store_delete(s, a), 1);
    assert_int_equal(imp_world_store_delete(s, a), 0);
    assert_null(imp_world_store_get(s, a));
    assert_int_equal(imp_world_describe(held->world).colliders, 1);
    imp_world_store_release(s, held);
    const imp_world_entry *hc = imp_world_store_get(s, c);
    assert_non_null(hc);
    imp_world_store_release(s, hc);
    imp_world_store_destroy(s);
}

/* ---- a store with a backend: single flight, write-through, outages ---------------------- */

/* A backend in memory: one world's bytes under one id, a switch to make it unreachable, and
 * counts of its calls; fetch sleeps so that concurrent gets overlap. */
typedef struct fake_backend {
    pthread_mutex_t lock;
    char id[IMP_WORLD_ID_LEN + 1];
    char *bytes;
    size_t len;
    int down, fetches, builds, stores;
} fake_backend;

static imp_world_io fake_fetch(void *self, const char *id, char **bytes, size_t *len,
                               imp_world_err *err) {
    fake_backend *f = self;
    nanosleep(&(struct timespec){0, 50000000}, NULL);
    pthread_mutex_lock(&f->lock);
    f->fetches++;
    imp_world_io io = IMP_WORLD_IO_MISSING;
    if (f->down) {
        *err = IMP_WORLD_ERR_CONNECT;
        io = IMP_WORLD_IO_UNAVAILABLE;
    } else if (f->bytes && strcmp(id, f->id) == 0) {
        *bytes = malloc(f->len + 1);
        memcpy(*bytes, f->bytes, f->len + 1);
        *len = f->len;
        io = IMP_WORLD_IO_OK;
    }
    pthread_mutex_unlock(&f->lock);
    return io;
}

static imp_world_io fake_store(void *self, const char *id, const char *bytes, size_t len,
                               imp_world_err *err) {
    fake_backend *f = self;
    pthread_mutex_lock(&f->lock);
    imp_world_io io = IMP_WORLD_IO_OK;
    if (f->down) {
        *err = IMP_WORLD_ERR_TIMEOUT;
        io = IMP_WORLD_IO_UNAVAILABLE;
    } else if (f->bytes) {
        io = IMP_WORLD_IO_EXISTS;
    } else {
        f->bytes = malloc(len + 1);
        memcpy(f->bytes, bytes, len);
        f->bytes[len] = '\0';
        f->len = len;
        memcpy(f->id, id, sizeof f->id);
        f->stores++;
    }
    pthread_mutex_unlock(&f->lock);
    return io;
}

static imp_world_io fake_exists(void *self, const char *id, imp_world_err *err) {
    fake_backend *f = self;
    pthread_mutex_lock(&f->lock);
    imp_world_io io = f->down                              ? IMP_WORLD_IO_UNAVAILABLE
                      : f->bytes && strcmp(id, f->id) == 0 ? IMP_WORLD_IO_OK
                                                           : IMP_WORLD_IO_MISSING;
    if (f->down) *err = IMP_WORLD_ERR_CONNECT;
    pthread_mutex_unlock(&f->lock);
    return io;
}

static imp_world_io fake_remove(void *self, const char *id, imp_world_err *err) {
    fake_backend *f = self;
    imp_world_io io = fake_exists(self, id, err);
    pthread_mutex_lock(&f->lock);
    if (io == IMP_WORLD_IO_OK) {
        free(f->bytes);
        f->bytes = NULL;
    }
    pthread_mutex_unlock(&f->lock);
    return io;
}

static void fake_destroy(void *self) {
    fake_backend *f = self;
    free(f->bytes);
    f->bytes = NULL;
}

/* A World of one sphere, as a backend keeps it. */
static const char FW[] =
    "{\"colliders\": [{\"id\": \"ball\", \"radius\": 2, \"position\": [1, 2, 3]}]}";

/* The daemon's builder, counting its calls. */
static imp_world_entry *fake_build(const char *id, const char *bytes, size_t len, void *arg) {
    fake_backend *f = arg;
    pthread_mutex_lock(&f->lock);
    f->builds++;
    pthread_mutex_unlock(&f->lock);
    return imp_ep_worlds_build(id, bytes, len, &ctx_);
}

static imp_world_store *fake_store_open(fake_backend *f, size_t cache_bytes) {
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    imp_world_backend be = {"fake",      fake_fetch,   fake_store, fake_exists,
                            fake_remove, fake_destroy, f};
    imp_world_store_config c = {cache_bytes, &be, fake_build, f};
    imp_world_store *s = imp_world_store_open(&c);
    assert_non_null(s);
    return s;
}

typedef struct getter {
    imp_world_store *s;
    const char *id;
    const imp_world_entry *got;
    imp_world_get_status st;
} getter;

static void *get_one(void *arg) {
    getter *g = arg;
    g->got = imp_world_store_get_ex(g->s, g->id, &g->st);
    return NULL;
}

/* 8 threads get one uncached world at once: one fetch, one build, one entry for all. */
static void test_store_single_flight(void **state) {
    (void)state;
    fake_backend f;
    imp_world_store *s = fake_store_open(&f, (size_t)1 << 30);
    char id[65];
    imp_world_id_of(FW, strlen(FW), id);
    assert_int_equal(imp_world_store_write(s, id, FW, strlen(FW)), IMP_WORLD_IO_OK);
    assert_int_equal(imp_world_store_write(s, id, FW, strlen(FW)), IMP_WORLD_IO_EXISTS);
    assert_int_equal(f.stores, 1);
    enum { N = 8 };
    getter g[N];
    pthread_t t[N];
    for (int i = 0; i < N; ++i) {
        g[i] = (getter){s, id, NULL, IMP_WORLD_GET_UNAVAILABLE};
        assert_int_equal(pthread_create(&t[i], NULL, get_one, &g[i]), 0);
    }
    for (int i = 0; i < N; ++i)
        pthread_join(t[i], NULL);
    assert_int_equal(f.fetches, 1);
    assert_int_equal(f.builds, 1);
    for (int i = 0; i < N; ++i) {
        assert_int_equal(g[i].st, IMP_WORLD_GET_OK);
        assert_ptr_equal(g[i].got, g[0].got);
        assert_string_equal(g[i].got->meta.id, id);
        assert_int_equal(g[i].got->meta.colliders, 1);
    }
    for (int i = 0; i < N; ++i)
        imp_world_store_release(s, g[i].got);
    imp_world_store_counters c;
    imp_world_store_counters_get(s, &c);
    /* a thread that starts late finds it cached (a hit); the others waited for one fetch */
    assert_int_equal(c.misses + c.hits, N);
    assert_true(c.misses >= 1);
    unsigned long long hits = c.hits;
    assert_int_equal(c.count, 1);
    assert_int_equal(c.build_count, 1);
    /* cached now: a hit, no fetch; with the backend down it still answers */
    f.down = 1;
    const imp_world_entry *e = imp_world_store_get(s, id);
    assert_non_null(e);
    imp_world_store_release(s, e);
    assert_int_equal(f.fetches, 1);
    imp_world_store_counters_get(s, &c);
    assert_int_equal(c.hits, hits + 1);
    /* an uncached id with the backend down: unavailable, counted by kind */
    char other[65];
    imp_world_id_of("{}", 2, other);
    imp_world_get_status st;
    assert_null(imp_world_store_get_ex(s, other, &st));
    assert_int_equal(st, IMP_WORLD_GET_UNAVAILABLE);
    assert_int_equal(imp_world_store_write(s, other, "{}", 2), IMP_WORLD_IO_UNAVAILABLE);
    assert_int_equal(imp_world_store_remove(s, id), IMP_WORLD_IO_UNAVAILABLE);
    imp_world_store_counters_get(s, &c);
    assert_int_equal(c.errors[IMP_WORLD_ERR_CONNECT], 2);
    assert_int_equal(c.errors[IMP_WORLD_ERR_TIMEOUT], 1);
    /* back up: unknown ids are unknown, a removed world is gone from both */
    f.down = 0;
    assert_null(imp_world_store_get_ex(s, other, &st));
    assert_int_equal(st, IMP_WORLD_GET_UNKNOWN);
    assert_int_equal(imp_world_store_remove(s, id), IMP_WORLD_IO_OK);
    assert_int_equal(imp_world_store_exists(s, id), IMP_WORLD_IO_MISSING);
    assert_null(imp_world_store_get_ex(s, id, &st));
    assert_int_equal(st, IMP_WORLD_GET_UNKNOWN);
    imp_world_store_destroy(s);
    pthread_mutex_destroy(&f.lock);
}

/* A world larger than the cache is built for its callers and freed at the last release
 * (ASan and valgrind see the leak otherwise); it is fetched again each time. */
static void test_store_world_larger_than_cache(void **state) {
    (void)state;
    fake_backend f;
    imp_world_store *s = fake_store_open(&f, 10);
    char id[65];
    imp_world_id_of(FW, strlen(FW), id);
    assert_int_equal(imp_world_store_write(s, id, FW, strlen(FW)), IMP_WORLD_IO_OK);
    for (int round = 1; round <= 2; ++round) {
        const imp_world_entry *e = imp_world_store_get(s, id);
        assert_non_null(e);
        assert_true(e->meta.bytes > 10);
        imp_world_store_release(s, e);
        assert_int_equal(f.fetches, round);
    }
    size_t n, bytes;
    imp_world_store_stats(s, &n, &bytes);
    assert_int_equal(n, 0);
    assert_int_equal(bytes, 0);
    imp_world_store_destroy(s);
    pthread_mutex_destroy(&f.lock);
}

/* ---- queries while others upload and delete ------------------------------------------------ */

typedef struct query_job {
    const char *id;
    int failures;
} query_job;

static void *query_loop(void *arg) {
    query_job *j = arg;
    for (int i = 0; i < 200; ++i) {
        imp_api_response r;
        static const char Q[] =
            "{\"rays\": [{\"origin\": [1, 5, 1], \"direction\": [0, -1, 0]}], \"mode\": \"all\"}";
        int st = imp_api_handle_route(imp_endpoint_by_op("worlds/raycast"), j->id, Q, strlen(Q),
                                      &ctx_, &r);
        if (st != 200 || !strstr(r.body, "\"t\":5.0")) j->failures++;
        imp_api_response_free(&r);
    }
    return NULL;
}

static void test_queries_while_uploading(void **state) {
    (void)state;
    static const char W[] =
        "{\"colliders\": [{\"shape\": {\"type\": \"mesh\", \"vertices\": "
        "[[0,0,0],[10,0,0],[10,0,10],[0,0,10]], \"triangles\": [[0,2,1],[0,3,2]]}, \"position\": "
        "[0,0,0]}]}";
    char id[IMP_WORLD_ID_LEN + 1];
    upload(W, 201, id);
    enum { NT = 3 };
    pthread_t th[NT];
    query_job jobs[NT];
    for (int i = 0; i < NT; ++i) {
        jobs[i] = (query_job){id, 0};
        assert_int_equal(pthread_create(&th[i], NULL, query_loop, &jobs[i]), 0);
    }
    /* meanwhile other worlds come and go */
    for (int i = 0; i < 50; ++i) {
        char other[160], oid[IMP_WORLD_ID_LEN + 1];
        snprintf(other, sizeof other,
                 "{\"colliders\": [{\"radius\": %d, \"position\": [0, 0, 0]}]}", i + 1);
        upload(other, 201, oid);
        json_decref(call_ok("worlds/delete", oid, "", 204));
    }
    for (int i = 0; i < NT; ++i) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].failures, 0);
    }
    json_decref(call_ok("worlds/delete", id, "", 204));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_is_sha256_of_the_body),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_upload_get_delete),
        cmocka_unit_test(test_raycast_against_brute_force),
        cmocka_unit_test(test_query_errors_and_casts),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_collider_orientation),
        cmocka_unit_test(test_scene_predict_with_world),
        cmocka_unit_test(test_simulate_with_world),
        cmocka_unit_test(test_validate_path),
        cmocka_unit_test(test_simulate_warnings),
        cmocka_unit_test(test_store_eviction_and_holds),
        cmocka_unit_test(test_store_single_flight),
        cmocka_unit_test(test_store_world_larger_than_cache),
        cmocka_unit_test(test_queries_while_uploading),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
