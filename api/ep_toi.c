/*
 * ep_toi.c - POST /v1/toi: time of impact of two moving bodies (the solver
 * for the pair is chosen by core/toi_shapes.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/toi_rotating.h"
#include "core/toi_shapes.h"
#include "core/tolerance.h"

static const char *state_name(imp_toi_state s) {
    switch (s) {
    case IMP_TOI_HIT: return "hit";
    case IMP_TOI_OVERLAPPING: return "overlapping";
    default: return "none";
    }
}

/* Else 422 at the type of the first body that does not fit. */
static int supported(imp_dec *d, const imp_body *a, const imp_body *b) {
    int dim = d->dim;
    if (imp_toi_shapes_supported(&a->shape, &b->shape, dim)) return 0;
    /* a is at fault when it cannot pair even with a sphere, or both are halfspaces */
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE};
    int a_bad = !imp_toi_shapes_supported(&a->shape, &sphere, dim) ||
                (a->shape.type == IMP_SHAPE_HALFSPACE && b->shape.type == IMP_SHAPE_HALFSPACE);
    size_t saved = imp_dec_push_key(d, a_bad ? "a" : "b");
    size_t s2 = imp_dec_push_key(d, "shape");
    size_t s3 = imp_dec_push_key(d, "type");
    imp_dec_fail(d, IMP_E_VALUE, "is not supported by /v1/toi: two halfspaces");
    imp_dec_pop(d, s3);
    imp_dec_pop(d, s2);
    imp_dec_pop(d, saved);
    return -1;
}

int imp_ep_toi(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* core/toi_rotating.c */
    const json_t *req = in->json;
    imp_body a, b;
    double horizon = INFINITY;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    static const char *const MEMBERS[] = {"a", "b", "horizon", NULL};
    if (imp_dec_request(d, req, MEMBERS, NULL) || imp_dec_body(d, req, "a", 0, &a) ||
        imp_dec_body(d, req, "b", 1, &b) ||
        imp_dec_number(d, req, "horizon", 0, 0.0, 1, INFINITY, "must be a finite number > 0",
                       &horizon) ||
        supported(d, &a, &b)) {
        imp_body_free(&a);
        imp_body_free(&b);
        return -1;
    }
    /* orientations are reported when a body has one or turns (spheres included) */
    int turned = a.orientation.w != 1.0 || b.orientation.w != 1.0 || imp_max_abs(a.omega) > 0.0 ||
                 imp_max_abs(b.omega) > 0.0;
    int rotating = imp_toi_rotating_needed(&a.shape, a.omega, &b.shape, b.omega), stopped = 0;
    imp_toi_result r;
    if (rotating) {
        imp_toi_rotating_input ri = {
            &a.shape, &b.shape, a.m, b.m, a.omega, b.omega, d->dim, horizon, &d->ctx->parallel.stop,
            0};
        r = imp_toi_rotating(&ri, &stopped);
    } else {
        r = imp_toi_shapes(&a.shape, &a.m, &b.shape, &b.m, d->dim, horizon);
    }
    imp_body_free(&a);
    imp_body_free(&b);
    if (stopped) return imp_dec_stopped(d, stopped, "the rotating pair was not decided");
    if (rotating && r.state == IMP_TOI_FAILED && r.failure == IMP_FAILURE_UNDECIDED) {
        snprintf(d->detail, sizeof d->detail,
                 "a body would turn more than %.0f radians before the pair is decided, past "
                 "which a double cannot place it to 1e-9 of the scale",
                 IMP_ROT_MAX_ANGLE);
        /* at the faster spinner's angular_velocity */
        int a_faster = imp_max_abs(a.omega) >= imp_max_abs(b.omega);
        size_t saved = imp_dec_push_key(d, a_faster ? "a" : "b");
        imp_dec_fail_at(d, "angular_velocity", IMP_E_GEOMETRY,
                        "is too fast for a certified contact time within the search");
        imp_dec_pop(d, saved);
        return -1;
    }
    if (r.state == IMP_TOI_FAILED && r.failure == IMP_FAILURE_UNDECIDED) {
        /* conservative advancement could not settle it within its step budget */
        snprintf(d->detail, sizeof d->detail,
                 "conservative advancement did not reach a gap of %.3g within its step budget",
                 r.tolerance);
        return imp_dec_fail(d, IMP_E_GEOMETRY, "could not be decided for this pair");
    }
    /* NOMEM; supported() has answered the pairs core does not solve */
    if (r.state == IMP_TOI_FAILED) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");

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
        if (turned) {
            imp_put(o, "a_orientation",
                    imp_enc_turn(imp_spin_at(a.orientation, a.omega, r.time), dim), &ok);
            imp_put(o, "b_orientation",
                    imp_enc_turn(imp_spin_at(b.orientation, b.omega, r.time), dim), &ok);
        }
    }
    if (r.tolerance > 0.0) imp_put_real(o, "tolerance", r.tolerance, &ok);
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
    out->doc = o;
    return 0;
}
