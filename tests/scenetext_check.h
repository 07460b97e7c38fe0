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

/* The reply's text (written by the endpoint, or doc's) without stats.elapsed_ms, the one
 * member that differs from run to run; NULL if it is not JSON. Consumes doc and d->text. */
static inline char *imp_stable_reply(imp_dec *d, json_t *doc) {
    if (d->text) {
        json_decref(doc);
        doc = json_loadb(d->text, d->text_len, 0, NULL);
        free(d->text);
        d->text = NULL;
    }
    if (!doc) return NULL;
    json_t *stats = json_object_get(doc, "stats");
    if (stats) json_object_del(stats, "elapsed_ms");
    size_t len;
    char *s = imp_json_dump(doc, &len);
    json_decref(doc);
    return s;
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
    imp_endpoint_fn fn = imp_api_find_op(op);
    imp_dec df, ds;
    imp_dec_init(&df, ctx);
    imp_dec_init(&ds, ctx);
    json_t *doc = NULL;
    *fast = *slow = NULL;
    status[0] = status[1] = 0;
    if (!imp_scenetext_run(fn, t, len, &df, &doc, &status[0])) return IMP_ST_DECLINED;
    *fast = imp_stable_reply(&df, doc);
    json_t *req = json_loadb(
        t, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, NULL);
    if (req) {
        json_t *other = NULL;
        status[1] = imp_api_run_dec(fn, req, &ds, &other);
        json_decref(req);
        *slow = imp_stable_reply(&ds, other);
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
