/*
 * fuzz_api.c - arbitrary bytes into every endpoint function (libFuzzer;
 * also an AFL++ target through its libFuzzer driver).
 *
 * The first byte picks the operation, the rest is the request body, handed
 * to imp_api_handle exactly as the daemon does. Findings: a crash, a hang,
 * a sanitizer report, a 500 (a bug, per the contract: this context never
 * runs out of memory), or a body that is not JSON of the right media type.
 * Limits are small so that one input stays fast: scenes of at most 64
 * bodies, batches of at most 16 items, simulations of at most 1000 events.
 * A scene input the text path (api/scenetext.h) takes must also get the
 * answer the jansson path gives it, byte for byte (stats.elapsed_ms aside).
 * The world routes run with an in-process store (small limits; the least
 * recently used worlds are evicted): an upload stores the input's world, a
 * query runs on one of two fixed worlds (3D and 2D, picked by the length's
 * parity, uploaded again whenever evicted or deleted), and a delete forgets
 * the world the input itself would be. Scenes and validation run with both
 * fixed worlds stored, so an input may name either by its id.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/world_store.h"
#include "tests/scenetext_check.h"

/* The fixed worlds the queries run on: a mesh, a heightfield and a sphere (3D); a chain and
 * a box (2D). */
static const char WORLD3[] =
    "{\"colliders\":[{\"id\":\"m\",\"shape\":{\"type\":\"mesh\",\"vertices\":[[0,0,0],[10,0,0],"
    "[10,0,10],[0,0,10],[5,5,5]],\"triangles\":[[0,2,1],[0,3,2],[0,1,4],[1,2,4]],\"one_sided\":"
    "true},\"position\":[0,0,0]},{\"shape\":{\"type\":\"heightfield\",\"rows\":3,\"cols\":3,"
    "\"spacing\":[1,2],\"heights\":[0,1,0,1,2,1,0,1,0]},\"position\":[-5,0,0]},{\"radius\":1,"
    "\"position\":[0,3,0]}]}";
static const char WORLD2[] =
    "{\"colliders\":[{\"shape\":{\"type\":\"chain\",\"vertices\":[[0,0],[4,0],[4,4],[0,4]],"
    "\"loop\":true},\"position\":[0,0]},{\"shape\":{\"type\":\"box\",\"half_extents\":[1,1]},"
    "\"position\":[8,0]}]}";

static imp_world_store *store(void) {
    static imp_world_store *s;
    if (!s && !(s = imp_world_store_create((size_t)64 << 20))) abort();
    return s;
}

/* Stores fixed world w (again, when it was evicted or deleted). */
static void store_world(const char *w, const imp_api_ctx *ctx) {
    imp_api_response r;
    if (imp_api_handle("worlds", w, strlen(w), ctx, &r) >= 300) abort();
    imp_api_response_free(&r);
}

/* The id a templated route runs on (see the header). */
static void route_id(const imp_endpoint *ep, const uint8_t *body, size_t len,
                     const imp_api_ctx *ctx, char id[IMP_WORLD_ID_LEN + 1]) {
    if (strcmp(ep->method, "DELETE") == 0) {
        imp_world_id_of((const char *)body, len, id);
        return;
    }
    const char *w = len % 2 ? WORLD2 : WORLD3;
    store_world(w, ctx);
    imp_world_id_of(w, strlen(w), id);
}

/* The op of an input: its first byte picks one of the table's ops, or one that is none. */
static const char *pick_op(uint8_t b) {
    size_t n, k = 0;
    const imp_endpoint *eps = imp_endpoints(&n);
    for (size_t i = 0; i < n; ++i)
        k += eps[i].op != NULL;
    size_t want = b % (k + 1);
    for (size_t i = 0; i < n; ++i)
        if (eps[i].op && want-- == 0) return eps[i].op;
    return "nope";
}

/* A reply holds a negative zero among its numbers (strings, which may echo input, aside). */
static int has_negative_zero(const json_t *v) {
    const char *key;
    json_t *e;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_REAL: return json_real_value(v) == 0.0 && signbit(json_real_value(v));
    case JSON_OBJECT:
        json_object_foreach((json_t *)v, key, e) if (has_negative_zero(e)) return 1;
        return 0;
    case JSON_ARRAY: json_array_foreach(v, i, e) if (has_negative_zero(e)) return 1; return 0;
    default: return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *op = pick_op(data[0]);
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    ctx.max_bodies = 64;
    ctx.max_batch_items = 16;
    ctx.max_events = 1000;
    ctx.time_budget_ms = 0; /* answers must not depend on how fast an input ran */
    ctx.max_time_budget_ms = 0;
    ctx.max_world_triangles = 10000;
    ctx.worlds = store();
    imp_api_response r;
    const imp_endpoint *ep = imp_endpoint_by_op(op);
    char id[IMP_WORLD_ID_LEN + 1] = "";
    if (ep && strchr(ep->path, '{')) route_id(ep, data + 1, size - 1, &ctx, id);
    /* scenes and validation may name either fixed world by its id */
    if (strncmp(op, "scenes/", 7) == 0 || strcmp(op, "validate") == 0) {
        store_world(WORLD2, &ctx);
        store_world(WORLD3, &ctx);
    }
    imp_api_handle_route(ep, id, (const char *)data + 1, size - 1, &ctx, &r);
    if (r.status == 500 || r.status < 200 || r.status > 499) abort();
    if (r.status == 204) { /* a delete: no body */
        if (r.len != 0) abort();
        imp_api_response_free(&r);
        return 0;
    }
    json_error_t err;
    json_t *doc = json_loadb(r.body, r.len, 0, &err);
    if (!doc || !json_is_object(doc) || has_negative_zero(doc)) abort();
    int problem = r.status >= 300;
    if (problem != (strcmp(r.content_type, "application/problem+json") == 0)) abort();
    if (problem && json_integer_value(json_object_get(doc, "status")) != r.status) abort();
    json_decref(doc);
    imp_api_response_free(&r);
    if (strncmp(op, "scenes/", 7) == 0) {
        int status[2];
        char *fast, *slow;
        if (imp_scenetext_compare(op, (const char *)data + 1, size - 1, &ctx, status, &fast,
                                  &slow) == IMP_ST_DIFFERENT)
            abort();
    }
    return 0;
}
