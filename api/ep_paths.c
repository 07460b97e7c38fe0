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

static const char *const VEC_MSG = "must be an array of 2 or 3 numbers";
static const char *const MAGNITUDE_MSG = "must be a finite number of magnitude <= 1e60";

/* `v` (NULL: missing) as a Vec at the current pointer, with the checks of
 * imp_dec_vec (which reads object members only; a path's ends are array
 * elements). */
static int dec_vec_value(imp_dec *d, const json_t *v, imp_vec3 *out) {
    if (!v) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n < 2 || n > 3) return imp_dec_fail(d, IMP_E_TYPE, VEC_MSG);
    if (d->dim != 0 && (int)n != d->dim)
        return imp_dec_fail(d, IMP_E_DIMENSION,
                            "has a different dimension from the request's first vector");
    double c[3] = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; ++i) {
        const json_t *e = json_array_get(v, i);
        size_t saved = imp_dec_push_index(d, i);
        if (!json_is_number(e)) return imp_dec_fail(d, IMP_E_TYPE, "must be a number");
        double x = json_number_value(e);
        if (!isfinite(x) || fabs(x) > IMP_API_MAX_MAGNITUDE)
            return imp_dec_fail(d, IMP_E_VALUE, MAGNITUDE_MSG);
        c[i] = x;
        imp_dec_pop(d, saved);
    }
    d->dim = (int)n;
    *out = imp_v3(c[0], c[1], c[2]);
    return 0;
}

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
        if (dec_vec_value(d, json_array_get(v, i), ends[i])) return -1;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}

static int dec_kind(imp_dec *d, const json_t *req, imp_paths_kind *out) {
    static const struct {
        const char *name;
        imp_paths_kind kind;
    } KINDS[] = {{"segment", IMP_PATHS_SEGMENT}, {"ray", IMP_PATHS_RAY}, {"line", IMP_PATHS_LINE}};
    const json_t *v = json_object_get(req, "kind");
    *out = IMP_PATHS_SEGMENT;
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, "kind");
    if (!json_is_string(v)) return imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; ++i) {
        if (strcmp(json_string_value(v), KINDS[i].name) == 0) {
            *out = KINDS[i].kind;
            imp_dec_pop(d, saved);
            return 0;
        }
    }
    return imp_dec_fail(d, IMP_E_VALUE, "must be one of: segment, ray, line");
}

int imp_ep_paths_intersect(const json_t *req, imp_dec *d, json_t **resp) {
    imp_paths_input in;
    memset(&in, 0, sizeof in);
    in.tolerance = IMP_PATHS_TOL_DEFAULT;
    double tol = -1.0;
    if (imp_dec_object(d, req) || dec_path(d, req, "p", &in.p0, &in.p1) ||
        dec_path(d, req, "q", &in.q0, &in.q1) || dec_kind(d, req, &in.kind) ||
        imp_dec_number(d, req, "tolerance", 0, 0.0, 0, INFINITY, "must be a finite number >= 0",
                       &tol))
        return -1;
    if (tol >= 0.0) in.tolerance = tol;
    in.dim = d->dim;

    imp_paths_result r = imp_paths_closest(&in);

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
    *resp = o;
    return 0;
}
