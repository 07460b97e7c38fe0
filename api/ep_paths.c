/*
 * ep_paths.c - POST /v1/paths/intersect: do two straight paths cross.
 *
 * Decodes {"p": [start, end], "q": [start, end], "kind"?, "tolerance"?},
 * calls imp_paths_closest (core/paths.h, where the choices for parallel
 * and zero-length paths are documented) and encodes every field of the
 * contract's answer; all of them always exist.
 */
#include <math.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/paths.h"

/* Member `key` of req as a path [start, end]. */
static int dec_path(imp_dec *d, const json_t *req, const char *key, imp_vec3 *start,
                    imp_vec3 *end) {
    const json_t *v = json_object_get(req, key);
    size_t saved = imp_dec_push_key(d, key);
    if (!v) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(v) || json_array_size(v) != 2)
        return imp_dec_fail(d, IMP_E_TYPE, "must be an array of 2 Vecs [start, end]");
    imp_vec3 *ends[2] = {start, end};
    for (size_t i = 0; i < 2; ++i) {
        size_t s2 = imp_dec_push_index(d, i);
        const json_t *e = json_array_get(v, i);
        if (!e) return imp_dec_fail(d, IMP_E_MISSING, "is required");
        if (imp_dec_vec_value(d, e, ends[i])) return -1;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}

/* One kind: "segment", "ray" or "line", at the current pointer. */
static int dec_one_kind(imp_dec *d, const json_t *v, imp_paths_kind *out) {
    static const struct {
        const char *name;
        imp_paths_kind kind;
    } KINDS[] = {{"segment", IMP_PATHS_SEGMENT}, {"ray", IMP_PATHS_RAY}, {"line", IMP_PATHS_LINE}};
    if (!json_is_string(v)) return imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; ++i) {
        if (strcmp(json_string_value(v), KINDS[i].name) == 0) {
            *out = KINDS[i].kind;
            return 0;
        }
    }
    return imp_dec_fail(d, IMP_E_VALUE, "must be one of: segment, ray, line");
}

/* "kind": one kind for both paths, or a pair [kind of p, kind of q]. */
static int dec_kind(imp_dec *d, const json_t *req, imp_paths_input *in) {
    const json_t *v = json_object_get(req, "kind");
    in->kind_p = in->kind_q = IMP_PATHS_SEGMENT;
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, "kind");
    int rc = 0;
    if (json_is_array(v)) {
        if (json_array_size(v) != 2)
            return imp_dec_fail(d, IMP_E_TYPE,
                                "must be a kind or a pair of kinds [kind of p, kind of q]");
        imp_paths_kind *kinds[2] = {&in->kind_p, &in->kind_q};
        for (size_t i = 0; i < 2 && rc == 0; ++i) {
            size_t s2 = imp_dec_push_index(d, i);
            rc = dec_one_kind(d, json_array_get(v, i), kinds[i]);
            if (rc == 0) imp_dec_pop(d, s2);
        }
    } else {
        rc = dec_one_kind(d, v, &in->kind_p);
        in->kind_q = in->kind_p;
    }
    if (rc == 0) imp_dec_pop(d, saved);
    return rc;
}

int imp_ep_paths_intersect(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    const json_t *req = in->json;
    imp_paths_input pin;
    memset(&pin, 0, sizeof pin);
    pin.tolerance = IMP_PATHS_TOL_DEFAULT;
    double tol = -1.0;
    static const char *const MEMBERS[] = {"p", "q", "kind", "tolerance", NULL};
    if (imp_dec_request(d, req, MEMBERS, NULL) || dec_path(d, req, "p", &pin.p0, &pin.p1) ||
        dec_path(d, req, "q", &pin.q0, &pin.q1) || dec_kind(d, req, &pin) ||
        imp_dec_number(d, req, "tolerance", 0, 0.0, 0, INFINITY, "must be a finite number >= 0",
                       &tol))
        return -1;
    if (tol >= 0.0) pin.tolerance = tol;
    pin.dim = d->dim;

    imp_paths_result r = imp_paths_closest(&pin);

    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    imp_put(o, "intersects", json_boolean(r.intersects), &ok);
    imp_put(o, "parallel", json_boolean(r.parallel), &ok);
    imp_put_real(o, "t", r.t, &ok);
    imp_put_real(o, "s", r.s, &ok);
    imp_put(o, "point", imp_enc_vec(r.point, dim), &ok);
    imp_put_real(o, "distance", r.distance, &ok);
    json_t *closest = json_object();
    if (closest) {
        imp_put(closest, "p", imp_enc_vec(r.cp, dim), &ok);
        imp_put(closest, "q", imp_enc_vec(r.cq, dim), &ok);
    }
    imp_put(o, "closest", closest, &ok);
    imp_put(o, "same_time", json_boolean(r.same_time), &ok);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    out->doc = o;
    return 0;
}
