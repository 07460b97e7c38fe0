/*
 * scenetext_check.h - the scene endpoints' text path (api/scenetext.h)
 * against the jansson path, for the unit test and the api fuzz target.
 */
#ifndef IMP_TEST_SCENETEXT_CHECK_H
#define IMP_TEST_SCENETEXT_CHECK_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/endpoints.h"
#include "api/jsonout.h"
#include "api/scenetext.h"

/* The reply's text (the endpoint's own, or its tree's) without stats.elapsed_ms, the one
 * member that differs from run to run; NULL if it is not JSON. Consumes what *o holds. */
static inline char *imp_stable_reply(imp_api_out *o) {
    json_t *doc = o->doc;
    if (o->text) {
        json_decref(doc);
        doc = json_loadb(o->text, o->len, 0, NULL);
        free(o->text);
    }
    memset(o, 0, sizeof *o);
    if (!doc) return NULL;
    json_t *stats = json_object_get(doc, "stats");
    if (stats) json_object_del(stats, "elapsed_ms");
    size_t len;
    char *s = imp_json_dump(doc, &len);
    json_decref(doc);
    return s;
}

/* 1 when the text path takes scene request `t` (api/scenetext.h). */
static inline int imp_scenetext_takes(const char *t, size_t len, const imp_api_ctx *ctx) {
    imp_body *bodies = NULL;
    size_t n = 0;
    int dim = 0;
    json_t *rest = NULL;
    if (!imp_scenetext_decode(t, len, ctx, &bodies, &n, &dim, &rest)) return 0;
    imp_bodies_free(bodies, n);
    json_decref(rest);
    return 1;
}

typedef enum imp_scenetext_verdict {
    IMP_ST_DECLINED, /* the text path left the request to jansson */
    IMP_ST_SAME,     /* taken, and the same status and reply as the jansson path */
    IMP_ST_DIFFERENT /* taken, and not the same (or jansson rejects the text) */
} imp_scenetext_verdict;

/* Runs both paths on scene request `t`; for IMP_ST_DIFFERENT, *fast and *slow are the two
 * replies' texts (either may be NULL; the caller frees both) and the statuses. */
static inline imp_scenetext_verdict imp_scenetext_compare(const char *op, const char *t, size_t len,
                                                          const imp_api_ctx *ctx, int status[2],
                                                          char **fast, char **slow) {
    const imp_endpoint *ep = imp_endpoint_by_op(op);
    /* no time budgets: the two paths must not differ by how fast they ran */
    imp_api_ctx timeless = *ctx;
    timeless.time_budget_ms = 0;
    timeless.max_time_budget_ms = 0;
    ctx = &timeless;
    imp_dec df, ds;
    imp_dec_init(&df, ctx);
    imp_dec_init(&ds, ctx);
    *fast = *slow = NULL;
    status[0] = status[1] = 0;
    if (!imp_scenetext_takes(t, len, ctx)) return IMP_ST_DECLINED;
    imp_api_in text_in = {NULL, t, len, NULL};
    imp_api_out o;
    status[0] = imp_api_run(ep, &text_in, &df, &o);
    *fast = imp_stable_reply(&o);
    json_t *req = json_loadb(
        t, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, NULL);
    if (req) {
        imp_api_in tree_in = {req, NULL, 0, NULL};
        status[1] = imp_api_run(ep, &tree_in, &ds, &o);
        json_decref(req);
        *slow = imp_stable_reply(&o);
    }
    if (*fast && *slow && status[0] == status[1] && strcmp(*fast, *slow) == 0) {
        free(*fast);
        free(*slow);
        *fast = *slow = NULL;
        return IMP_ST_SAME;
    }
    return IMP_ST_DIFFERENT;
}

#endif
