/*
 * ep_toi.c - POST /v1/toi: time of impact of two moving bodies.
 */
#include <math.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/toi.h"

static const char *state_name(imp_toi_state s) {
    switch (s) {
    case IMP_TOI_HIT: return "hit";
    case IMP_TOI_OVERLAPPING: return "overlapping";
    default: return "none";
    }
}

int imp_ep_toi(const json_t *req, imp_dec *d, json_t **resp) {
    imp_body a, b;
    double horizon = INFINITY;
    if (imp_dec_object(d, req) || imp_dec_body(d, req, "a", 0, &a) ||
        imp_dec_body(d, req, "b", 1, &b) ||
        imp_dec_number(d, req, "horizon", 0, 0.0, 1, INFINITY, "must be a finite number > 0",
                       &horizon))
        return -1;

    imp_toi_spheres_input in = {a.m, b.m, a.radius, b.radius, horizon};
    imp_toi_result r = imp_toi_spheres(&in);

    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    imp_put(o, "status", json_string(state_name(r.state)), &ok);
    imp_put(o, "hit", json_boolean(r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING), &ok);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING) {
        imp_put_real(o, "time", r.time, &ok);
        imp_put(o, "point", imp_enc_vec(r.point, dim), &ok);
        imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
        imp_put(o, "a_position", imp_enc_vec(r.pa, dim), &ok);
        imp_put(o, "b_position", imp_enc_vec(r.pb, dim), &ok);
        if (r.state == IMP_TOI_OVERLAPPING) imp_put_real(o, "depth", r.depth, &ok);
    }
    if (r.has_closest) {
        json_t *ca = json_object();
        if (ca) {
            imp_put_real(ca, "time", r.closest_time, &ok);
            imp_put_real(ca, "distance", r.closest_distance, &ok);
        }
        imp_put(o, "closest_approach", ca, &ok);
    }
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    *resp = o;
    return 0;
}
