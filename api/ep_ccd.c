/*
 * ep_ccd.c - POST /v1/ccd: moving triangles, vertex-face and edge-edge.
 *
 * DESIGN
 * What: {"queries": [{"kind", "start": [4 points], "end": [4 points]}]} to
 * {"results": [{"hit": true, "time": t} | {"hit": false}]}, in order.
 *
 * How: every query is decoded and checked before any is solved (strict
 * members; "kind" one of two names; exactly four 3D points, each coordinate
 * finite and within the request magnitude cap), the count against
 * ctx->max_bodies (a query is four moving points: the same order of work
 * and memory as as many bodies). Then core/ccd.h answers each in order,
 * polling the request's stop check every IMP_STOP_POLL_PAIRS queries and
 * after every query the exact path answered: a query costs about a
 * microsecond on the filter, tens of microseconds to milliseconds on the
 * exact path (more for coordinates spanning hundreds of binades, whose
 * rationals are long).
 *
 * Why this way: the answers are exact (core/ccd.h), so the reply has no
 * tolerance to report; a query that cannot be decoded fails the request
 * with its pointer rather than being skipped, as in every other endpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/ccd.h"
#include "core/parallel.h"

static int nomem(imp_dec *d) { return imp_dec_fail(d, IMP_E_NOMEM, "out of memory"); }

/* Member `key` of the query: exactly four 3D points. */
static int dec_points(imp_dec *d, const json_t *query, const char *key, double pts[4][3]) {
    const json_t *v = json_object_get(query, key);
    size_t saved = imp_dec_push_key(d, key);
    if (!v) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(v) || json_array_size(v) != 4)
        return imp_dec_fail(d, IMP_E_TYPE, "must be an array of 4 points [x, y, z]");
    for (size_t i = 0; i < 4; ++i) {
        size_t s2 = imp_dec_push_index(d, i);
        const json_t *p = json_array_get(v, i);
        if (json_is_array(p) && json_array_size(p) == 2)
            return imp_dec_fail(d, IMP_E_DIMENSION, "must be a 3D point [x, y, z]");
        imp_vec3 x;
        d->dim = 3;
        if (imp_dec_vec_value(d, p, &x)) return -1;
        pts[i][0] = x.x;
        pts[i][1] = x.y;
        pts[i][2] = x.z;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}

static int dec_query(imp_dec *d, const json_t *v, imp_ccd_query *q) {
    static const char *const MEMBERS[] = {"kind", "start", "end", NULL};
    if (imp_dec_strict_object(d, v, MEMBERS, NULL)) return -1;
    const json_t *kind = json_object_get(v, "kind");
    size_t saved = imp_dec_push_key(d, "kind");
    if (!kind) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_string(kind)) return imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    if (strcmp(json_string_value(kind), "vertex-face") == 0)
        q->kind = IMP_CCD_VERTEX_FACE;
    else if (strcmp(json_string_value(kind), "edge-edge") == 0)
        q->kind = IMP_CCD_EDGE_EDGE;
    else
        return imp_dec_fail(d, IMP_E_VALUE, "must be one of: vertex-face, edge-edge");
    imp_dec_pop(d, saved);
    return dec_points(d, v, "start", q->start) || dec_points(d, v, "end", q->end) ? -1 : 0;
}

/* Every query of the request into *out (malloc'd; the caller frees it, also on failure). */
static int dec_queries(imp_dec *d, const json_t *req, imp_ccd_query **out, size_t *n) {
    const json_t *list = json_object_get(req, "queries");
    size_t saved = imp_dec_push_key(d, "queries");
    if (!list) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(list)) return imp_dec_fail(d, IMP_E_TYPE, "must be an array of queries");
    *n = json_array_size(list);
    if (*n > d->ctx->max_bodies) {
        snprintf(d->detail, sizeof d->detail, "%zu queries, the limit is %zu", *n,
                 d->ctx->max_bodies);
        return imp_dec_fail(d, IMP_E_LIMIT, "has more queries than this server accepts");
    }
    *out = malloc((*n ? *n : 1) * sizeof **out);
    if (!*out) return nomem(d);
    for (size_t i = 0; i < *n; ++i) {
        size_t s2 = imp_dec_push_index(d, i);
        if (dec_query(d, json_array_get(list, i), &(*out)[i])) return -1;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}

int imp_ep_ccd(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    const json_t *req = in->json;
    static const char *const MEMBERS[] = {"queries", NULL};
    imp_ccd_query *qs = NULL;
    size_t n = 0;
    if (imp_dec_request(d, req, MEMBERS, NULL) || dec_queries(d, req, &qs, &n)) {
        free(qs);
        return -1;
    }
    json_t *results = json_array();
    int ok = results != NULL, rc = 0;
    const imp_stop *stop = &d->ctx->parallel.stop;
    int slow = 0; /* the last query went to the exact path */
    for (size_t i = 0; i < n && ok; ++i) {
        if ((slow || i % IMP_STOP_POLL_PAIRS == 0) && stop->check) {
            int why = stop->check(stop->cls);
            if (why) {
                char progress[96];
                snprintf(progress, sizeof progress, "%zu of %zu queries done", i, n);
                rc = imp_dec_stopped(d, why, progress);
                break;
            }
        }
        imp_ccd_result r = imp_ccd(&qs[i]);
        slow = r.exact;
        json_t *o = json_object();
        if (o) {
            imp_put(o, "hit", json_boolean(r.hit), &ok);
            if (r.hit) imp_put_real(o, "time", r.time, &ok);
        }
        if (!o || json_array_append_new(results, o)) ok = 0;
    }
    free(qs);
    if (rc == 0 && ok) {
        out->doc = json_object();
        if (out->doc) {
            imp_put(out->doc, "results", results, &ok);
            results = NULL;
        } else {
            ok = 0;
        }
    }
    json_decref(results);
    if (rc) return rc;
    if (!ok) {
        json_decref(out->doc);
        out->doc = NULL;
        return nomem(d);
    }
    return 0;
}
