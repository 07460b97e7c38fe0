/*
 * ep_respond.c - POST /v1/respond: collision response of two bodies.
 *
 * The velocity at the moment of contact is each body's `velocity`
 * (acceleration and shape play no part). The optional `normal` is any
 * non-zero Vec of the request's dimension, normalised by core; without it
 * the normal is the direction from a's centre to b's, which does not exist
 * when the centres coincide. Both are 422 at /normal.
 */
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/respond.h"

static const char *state_name(imp_respond_state s) {
    switch (s) {
    case IMP_RESPOND_RESOLVED: return "resolved";
    case IMP_RESPOND_BOTH_STATIC: return "static";
    default: return "separating";
    }
}

static imp_respond_body core_body(const imp_body *b) {
    imp_respond_body r = {b->m.v, b->mass, b->is_static, b->restitution, b->tangential};
    return r;
}

static json_t *velocity_obj(imp_vec3 v, int dim) {
    json_t *o = json_object();
    int ok = o != NULL;
    if (ok) imp_put(o, "velocity", imp_enc_vec(v, dim), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Records a 422 at /normal. */
static int normal_fail(imp_dec *d, const char *msg) {
    size_t saved = imp_dec_push_key(d, "normal");
    imp_dec_fail(d, IMP_E_GEOMETRY, msg);
    imp_dec_pop(d, saved);
    return -1;
}

int imp_ep_respond(const json_t *req, imp_dec *d, json_t **resp) {
    imp_body a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int bad = imp_dec_object(d, req) || imp_dec_body(d, req, "a", 0, &a) ||
              imp_dec_body(d, req, "b", 1, &b);
    imp_body_free(&a); /* the response needs velocities and masses, not shapes */
    imp_body_free(&b);
    if (bad) return -1;
    imp_vec3 normal = imp_v3(0.0, 0.0, 0.0), unit;
    int has_normal = json_object_get(req, "normal") != NULL;
    if (has_normal) {
        if (imp_dec_vec(d, req, "normal", 1, &normal)) return -1;
        if (imp_unit_scaled(normal, &unit, NULL)) return normal_fail(d, "must not be zero-length");
    } else {
        normal = imp_sub(b.m.p, a.m.p);
        if (imp_unit_scaled(normal, &unit, NULL))
            return normal_fail(d, "is required when the centres of a and b coincide "
                                  "(the centre-to-centre direction is undefined)");
    }

    imp_respond_input in = {core_body(&a), core_body(&b), normal};
    imp_respond_result r = imp_respond_resolve(&in);

    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    imp_put(o, "status", json_string(state_name(r.state)), &ok);
    imp_put(o, "a", velocity_obj(r.va, dim), &ok);
    imp_put(o, "b", velocity_obj(r.vb, dim), &ok);
    imp_put(o, "impulse", imp_enc_vec(r.impulse, dim), &ok);
    imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
    json_t *ke = json_object();
    if (ke) {
        imp_put_real(ke, "before", r.ke_before, &ok);
        imp_put_real(ke, "after", r.ke_after, &ok);
    }
    imp_put(o, "kinetic_energy", ke, &ok);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    *resp = o;
    return 0;
}
