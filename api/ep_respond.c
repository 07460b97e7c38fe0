/*
 * ep_respond.c - POST /v1/respond: collision response of two bodies.
 *
 * DESIGN
 * What: the velocities after one contact, from each body's `velocity` (the
 * velocity at the moment of contact; acceleration plays no part).
 * How: the optional `normal` is any non-zero Vec of the request's
 * dimension, normalised by core. Without it the normal is the contact
 * normal of the two shapes as placed, from a towards b (core/overlap.h:
 * SAT or closest features), so a ball on a floor is pushed along the
 * floor's normal and never towards the halfspace's ignored position. The
 * contact point, unless given, is taken the same way: where faces (2D:
 * sides; a capsule's axis; a halfspace's plane) touch flat, the centre of
 * the region they share, by manifold clipping (core/contact_region.h), so
 * a box resting flat on a floor is pushed under its centre; else (a
 * vertex or crossing edges) for shapes apart the
 * midpoint of their closest points; for shapes that overlap, b is moved
 * out along the normal by the depth (and a hair more), the closest points
 * of that touching pair are found, and b's is moved back (a halfspace b
 * stays put and a moves instead). Two spheres take the centre-to-centre
 * direction, exactly as before. Two halfspaces, or two spheres with one
 * centre, have no contact normal: 422, send `normal`.
 * Turning: the impulse acts at the point and turns the bodies (core
 * imp_respond_resolve_turning, default inertia a uniform solid) when a
 * body names `angular_velocity` or `inertia`, or when the line of the
 * normal through the point misses a body's centre (the lever arm's part
 * across the normal exceeds IMP_REGION_FLAT_REL of the body's extent): the
 * contract's "angular velocities or non-central contacts". The same test
 * holds for every shape: a sphere's own contact normal passes through its
 * centre, so it turns only when the client's normal or point puts the
 * line of action off it. A central contact of bodies that name no
 * rotation is answered by translation alone, also with tangential < 1:
 * the contract gives that case the translational rule (the relative
 * tangential velocity becomes k times what it was), and friction torque
 * would spin a ball sliding on a floor that the contract answers without
 * rotation. A client who wants friction torque names the rotation
 * (angular_velocity 0 is enough) and gets the rigid answer.
 * Why: the centre-to-centre direction is right for two spheres only; for
 * a box corner or a floor it answers a different collision.
 */
#include <math.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/contact_region.h"
#include "core/inertia.h"
#include "core/overlap.h"
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

static json_t *velocity_obj(imp_vec3 v, imp_vec3 w, int dim) {
    json_t *o = json_object();
    int ok = o != NULL;
    if (ok) imp_put(o, "velocity", imp_enc_vec(v, dim), &ok);
    if (ok && dim == 2) imp_put_real(o, "angular_velocity", w.z, &ok);
    if (ok && dim == 3) imp_put(o, "angular_velocity", imp_enc_vec(w, dim), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Records a 422 at /normal. */
static int normal_fail(imp_dec *d, const char *msg) {
    return imp_dec_fail_at(d, "normal", IMP_E_GEOMETRY, msg);
}

/* A gap that separates two shapes that touch at `pa`, `pb` with depth `depth`, and does
 * not move them measurably: relative to the depth and the distance of the centres. */
static double separating_gap(double depth, imp_vec3 pa, imp_vec3 pb) {
    return depth + 1e-9 * (1.0 + depth + imp_len(imp_sub(pa, pb)));
}

typedef enum contact_status {
    CONTACT_OK,
    CONTACT_CONCENTRIC, /* two spheres with one centre */
    CONTACT_NONE,       /* two halfspaces */
    CONTACT_NO_NORMAL,  /* shapes so small the overlap test's normal underflows to zero */
    CONTACT_NOMEM
} contact_status;

/* The contact normal (unit, from a towards b) and point of the two shapes as placed. */
static contact_status contact(const imp_body *a, const imp_body *b, int dim, imp_vec3 *normal,
                              imp_vec3 *point) {
    if (a->shape.type == IMP_SHAPE_SPHERE && b->shape.type == IMP_SHAPE_SPHERE) {
        /* the centre-to-centre direction, normalised by core as a given normal is */
        imp_vec3 u;
        if (imp_unit_scaled(imp_sub(b->m.p, a->m.p), &u, NULL)) return CONTACT_CONCENTRIC;
        *normal = imp_sub(b->m.p, a->m.p);
        imp_vec3 ca = imp_add(a->m.p, imp_scale(u, a->shape.radius));
        imp_vec3 cb = imp_sub(b->m.p, imp_scale(u, b->shape.radius));
        *point = imp_scale(imp_add(ca, cb), 0.5);
        return CONTACT_OK;
    }
    imp_vec3 ca, cb;
    imp_overlap_result r = imp_overlap_closest(&a->shape, a->m.p, &b->shape, b->m.p, dim, &ca, &cb);
    if (r.state == IMP_OVERLAP_FAILED)
        return r.failure == IMP_FAILURE_UNSUPPORTED ? CONTACT_NONE : CONTACT_NOMEM;
    imp_vec3 unit;
    if (imp_unit_scaled(r.normal, &unit, NULL)) return CONTACT_NO_NORMAL;
    *normal = r.normal;
    /* faces (2D: sides) that touch flat: the centre of the region they share */
    imp_region_status rs =
        imp_contact_region(&a->shape, a->m.p, &b->shape, b->m.p, dim, r.normal, point);
    if (rs == IMP_REGION_NOMEM) return CONTACT_NOMEM;
    if (rs == IMP_REGION_FOUND) return CONTACT_OK;
    if (r.state == IMP_OVERLAP_APART) {
        *point = imp_scale(imp_add(ca, cb), 0.5);
        return CONTACT_OK;
    }
    /* overlapping: part them along the normal, then take the touching pair's points */
    double gap = separating_gap(r.depth, a->m.p, b->m.p);
    int move_a = b->shape.type == IMP_SHAPE_HALFSPACE;
    imp_vec3 shift = imp_scale(r.normal, move_a ? -gap : gap);
    imp_vec3 pa = move_a ? imp_add(a->m.p, shift) : a->m.p;
    imp_vec3 pb = move_a ? b->m.p : imp_add(b->m.p, shift);
    imp_overlap_result t = imp_overlap_closest(&a->shape, pa, &b->shape, pb, dim, &ca, &cb);
    if (t.state == IMP_OVERLAP_FAILED) return CONTACT_NOMEM;
    if (t.state != IMP_OVERLAP_APART) {
        /* rounding kept them in touch: the midpoint of the centres is all that is left */
        *point = imp_scale(imp_add(a->m.p, b->m.p), 0.5);
        return CONTACT_OK;
    }
    if (move_a)
        ca = imp_sub(ca, shift);
    else
        cb = imp_sub(cb, shift);
    *point = imp_scale(imp_add(ca, cb), 0.5);
    return CONTACT_OK;
}

static int finite3(imp_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* Whether an impulse along the unit normal n at `point` misses body b's centre (its
 * position): the lever arm's part across n is longer than IMP_REGION_FLAT_REL of the body's
 * extent. The part across n, not |arm| itself: a floor's push under a box's centre has a long
 * arm along n and none across it. A static body and a point (no extent) never turn. */
static int off_centre(const imp_body *b, int dim, imp_vec3 point, imp_vec3 n) {
    if (b->is_static) return 0;
    double size = imp_shape_extent(&b->shape, dim);
    imp_vec3 arm = imp_sub(point, b->m.p);
    return size > 0.0 && imp_len(imp_madd(arm, n, -imp_dot(arm, n))) > IMP_REGION_FLAT_REL * size;
}

/* Whether body `key` of the request names its rotation (angular_velocity or inertia). */
static int names_rotation(const json_t *req, const char *key) {
    const json_t *b = json_object_get(req, key);
    return json_object_get(b, "angular_velocity") != NULL || json_object_get(b, "inertia") != NULL;
}

/* Body b's rotation for core (imp_dec_body_inertia); 0, or -1 with a problem at
 * /key/inertia. */
static int body_turn(imp_dec *d, const json_t *req, const char *key, const imp_body *b,
                     imp_respond_turn *t) {
    memset(t, 0, sizeof *t);
    t->position = b->m.p;
    t->omega = b->omega;
    size_t saved = imp_dec_push_key(d, key);
    int rc = imp_dec_body_inertia(d, json_object_get(req, key), b, &t->inertia, &t->inv_inertia);
    imp_dec_pop(d, saved);
    return rc;
}

int imp_ep_respond(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* the impulse turns bodies: core/respond.c */
    static const char *const MEMBERS[] = {"a", "b", "normal", "point", NULL};
    const json_t *req = in->json;
    imp_body a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    imp_vec3 normal = imp_v3(0.0, 0.0, 0.0), unit, point = normal, cn = normal;
    int has_normal = 0, has_point = 0;
    int bad = imp_dec_request(d, req, MEMBERS, NULL) || imp_dec_body(d, req, "a", 0, &a) ||
              imp_dec_body(d, req, "b", 1, &b);
    if (!bad && (has_normal = json_object_get(req, "normal") != NULL)) {
        bad = imp_dec_vec(d, req, "normal", 1, &normal) ||
              (imp_unit_scaled(normal, &unit, NULL) && normal_fail(d, "must not be zero-length"));
    }
    if (!bad && (has_point = json_object_get(req, "point") != NULL))
        bad = imp_dec_vec(d, req, "point", 1, &point);
    contact_status cs = CONTACT_NONE;
    imp_vec3 cp = point; /* the shapes' contact point: used only when none is given */
    if (!bad && (!has_normal || !has_point)) cs = contact(&a, &b, d->dim, &cn, &cp);
    if (!has_point) point = cp;
    /* the impulse acts at the point and turns the bodies when a body names its rotation or
     * the contact is off a body's centre; a central contact of bodies that name no rotation
     * is answered by translation alone (no friction torque: see DESIGN above) */
    imp_vec3 nu;
    int located = !bad && (has_point || cs == CONTACT_OK) && (has_normal || cs == CONTACT_OK) &&
                  imp_unit_scaled(has_normal ? normal : cn, &nu, NULL) == 0;
    int turning =
        !bad &&
        (names_rotation(req, "a") || names_rotation(req, "b") ||
         (located && (off_centre(&a, d->dim, point, nu) || off_centre(&b, d->dim, point, nu))));
    imp_respond_turn ta, tb;
    if (turning && cs != CONTACT_NOMEM)
        bad = body_turn(d, req, "a", &a, &ta) || body_turn(d, req, "b", &b, &tb);
    imp_body_free(&a); /* what follows needs velocities and masses, not shapes */
    imp_body_free(&b);
    if (bad) return -1;
    if (cs == CONTACT_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (!has_normal) {
        if (cs == CONTACT_CONCENTRIC)
            return normal_fail(d, "is required when the centres of a and b coincide (the "
                                  "centre-to-centre direction is undefined)");
        if (cs == CONTACT_NO_NORMAL)
            return normal_fail(d, "is required here: the shapes are too small (subnormal) for "
                                  "their contact normal to be found");
        if (cs != CONTACT_OK)
            return normal_fail(d, "is required for two halfspaces: they have no contact normal");
        normal = cn;
    }
    has_point = has_point || cs == CONTACT_OK;

    imp_respond_input rin = {core_body(&a), core_body(&b), normal};
    if (turning && !has_point) point = imp_scale(imp_add(a.m.p, b.m.p), 0.5); /* two statics */
    imp_respond_result r =
        turning ? imp_respond_resolve_turning(&rin, &ta, &tb, point) : imp_respond_resolve(&rin);

    if (turning && !(finite3(r.va) && finite3(r.vb) && finite3(r.wa) && finite3(r.wb) &&
                     finite3(r.impulse) && isfinite(r.ke_before) && isfinite(r.ke_after)))
        return imp_dec_fail_at(d, names_rotation(req, "a") ? "a" : "b", IMP_E_VALUE,
                               "has a rotation (angular_velocity, inertia, or a contact off its "
                               "centre) that makes the response overflow double precision");
    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    imp_put(o, "status", json_string(state_name(r.state)), &ok);
    imp_put(o, "a", velocity_obj(r.va, r.wa, dim), &ok);
    imp_put(o, "b", velocity_obj(r.vb, r.wb, dim), &ok);
    imp_put(o, "impulse", imp_enc_vec(r.impulse, dim), &ok);
    imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
    if (has_point) imp_put(o, "point", imp_enc_vec(point, dim), &ok);
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
    out->doc = o;
    return 0;
}
