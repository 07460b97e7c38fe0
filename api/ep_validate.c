/*
 * ep_validate.c - POST /v1/validate: check a client's reported move against
 * the world, and the server's corrected outcome.
 *
 * DESIGN
 * What: decodes the mover (`body`: its position is the start; its velocity
 * and acceleration are read and ignored, the move is the straight path to
 * `to`), `to`, `dt`, the obstacles (`world` as an array, and `obstacles`,
 * at most ctx->max_bodies each), `max_speed` and `max_iterations`; runs
 * imp_move_check; encodes valid, violations, position and velocity (plus
 * iterations and blocked). `world` may instead name a stored world (its
 * id; 404 unknown-world at /world when none is stored under it), and
 * POST /v1/worlds/{id}/validate takes the world from its path: the world's
 * colliders are then static obstacles beside `obstacles`, and a violation
 * against one names it in `obstacle` and `collider` with its `triangle`
 * or `segment`.
 * How: every number is checked before core sees it: dt finite > 0, and the
 * claimed speed |to - position| / dt at most IMP_API_MAX_MAGNITUDE (a tiny
 * dt would otherwise make it infinite); max_speed finite >= 0;
 * max_iterations an integer in [0, IMP_MOVE_MAX_ITERATIONS]. A pair
 * the time-of-impact solvers do not handle is a 422 at the shape type at
 * fault: the body's own when it cannot pair even with a sphere (a 3D box,
 * polyhedron, capsule or segment) or is a halfspace (a halfspace cannot
 * move), else the obstacle's (/world/i/shape/type). A stored world's
 * primitives pair with every mover; a primitive a solver cannot decide
 * (a 3D segment collider) is a 422 at /body. A request whose
 * numbers are each in range but whose motion over dt overflows double
 * precision (an acceleration of 1e60 for 1e60 s) is a 422 at /dt, found by
 * checking that every number of the answer is finite.
 * Rotating obstacles: a body of `world` (an array) or `obstacles` may turn
 * (angular_velocity, about its position; a door is a shape on one side of
 * its hinge), checked by imp_move_check with imp_toi_rotating; one that
 * would turn more than IMP_ROT_MAX_ANGLE radians over dt is a 422 at its
 * angular_velocity (imp_dec_turn_within). The mover may turn too (its
 * shape turns about its position while it goes straight to `to`), against
 * a stored world too (its casts turn the mover: core/world_cast.c).
 * Why: a problem at the field is worth more to a game server than a
 * partial answer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/bodies.h"
#include "api/encode.h"
#include "api/endpoints.h"
#include "core/move_check.h"
#include "core/toi_shapes.h"

static const char UNSUPPORTED_MSG[] =
    "is not supported by /v1/validate for this pair: in 3D two shapes without volume or radius "
    "(segments, capsules of radius 0, points) have no closed-form contact";

/* 422 at key/shape/type under the current pointer. */
static int fail_type(imp_dec *d, const char *key, const char *msg) {
    size_t s1 = key ? imp_dec_push_key(d, key) : d->len;
    size_t s2 = imp_dec_push_key(d, "shape");
    size_t s3 = imp_dec_push_key(d, "type");
    imp_dec_fail(d, IMP_E_VALUE, msg);
    imp_dec_pop(d, s3);
    imp_dec_pop(d, s2);
    imp_dec_pop(d, s1);
    return -1;
}

/* Optional max_iterations: an integer in [0, IMP_MOVE_MAX_ITERATIONS]. */
static int dec_iterations(imp_dec *d, const json_t *req, int *out) {
    static const char MSG[] = "must be an integer in [0, 64]";
    double x = *out;
    if (imp_dec_number(d, req, "max_iterations", 0, 0.0, 0, IMP_MOVE_MAX_ITERATIONS, MSG, &x))
        return -1;
    if (x != floor(x)) {
        size_t saved = imp_dec_push_key(d, "max_iterations");
        imp_dec_fail(d, IMP_E_TYPE, MSG);
        imp_dec_pop(d, saved);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* Decodes the array member `key` ("world" or "obstacles") into bodies[*n ...]
 * (the array holds room for ctx->max_bodies of each; entries from *n on are
 * freed by the caller, with imp_body_free, up to the *n it leaves), checking
 * each against the mover. */
static int dec_obstacles(imp_dec *d, const json_t *arr, const char *key, const imp_body *mover,
                         double dt, imp_body *bodies, size_t *n) {
    size_t saved = imp_dec_push_key(d, key), first = *n;
    if (!json_is_array(arr)) return imp_dec_fail(d, IMP_E_TYPE, "must be an array of bodies");
    size_t total = json_array_size(arr);
    if (total > d->ctx->max_bodies) {
        snprintf(d->detail, sizeof d->detail, "%zu bodies, the limit is %zu", total,
                 d->ctx->max_bodies);
        return imp_dec_fail(d, IMP_E_LIMIT, "has more bodies than this server accepts");
    }
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE};
    for (size_t i = 0; i < total; ++i) {
        size_t s2 = imp_dec_push_index(d, i);
        if (imp_dec_body_value(d, json_array_get(arr, i), i, &bodies[*n])) return -1;
        const imp_shape *sh = &bodies[(*n)++].shape;
        /* closed-form pairs only: the slide needs exact contacts */
        if (!imp_toi_shapes_closed_form(&mover->shape, sh, d->dim)) {
            if (!imp_toi_shapes_closed_form(&mover->shape, &sphere, d->dim)) {
                imp_dec_pop(d, 0);
                return fail_type(d, "body", UNSUPPORTED_MSG);
            }
            return fail_type(d, NULL, UNSUPPORTED_MSG);
        }
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return imp_dec_unique_ids(d, bodies + first, *n - first, key) ||
                   imp_dec_turn_within(d, bodies + first, *n - first, key, dt, "dt")
               ? -1
               : 0;
}

/* The obstacles of a request: `world` (an array, or the id of a stored
 * world unless the path named one: *held), and `obstacles`. */
typedef struct obstacles {
    imp_body *bodies;
    size_t n;
    const imp_world_entry *held; /* a stored world, or NULL */
} obstacles;

static int dec_all_obstacles(imp_dec *d, const json_t *req, const imp_body *mover, double dt,
                             obstacles *o) {
    const json_t *world = json_object_get(req, "world"), *more = json_object_get(req, "obstacles");
    size_t room = (world && json_is_array(world) ? json_array_size(world) : 0) +
                  (more && json_is_array(more) ? json_array_size(more) : 0);
    o->bodies = malloc((room ? room : 1) * sizeof *o->bodies);
    if (!o->bodies) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (!o->held) {
        if (!world) return imp_dec_fail_at(d, "world", IMP_E_MISSING, "is required");
        if (json_is_string(world)) {
            if (imp_dec_world_ref(d, world, &o->held)) return -1;
        } else if (dec_obstacles(d, world, "world", mover, dt, o->bodies, &o->n)) {
            return -1;
        }
    }
    return more ? dec_obstacles(d, more, "obstacles", mover, dt, o->bodies, &o->n) : 0;
}

static const char *kind_name(imp_move_kind k) {
    switch (k) {
    case IMP_MOVE_SPEED: return "speed";
    case IMP_MOVE_TUNNELING: return "tunneling";
    default: return "penetration";
    }
}

static json_t *enc_violation(const imp_move_violation *v, const obstacles *obs, int dim) {
    json_t *o = json_object();
    int ok = o != NULL;
    if (!ok) return NULL;
    imp_put(o, "kind", json_string(kind_name(v->kind)), &ok);
    if (v->kind == IMP_MOVE_SPEED) {
        imp_put_real(o, "speed", v->speed, &ok);
    } else {
        imp_put_real(o, "time", v->time, &ok);
        if (v->in_world) {
            imp_ep_world_put_prim(o, obs->held, "obstacle", v->collider, v->index, v->prim_kind,
                                  &ok);
            imp_ep_world_put_prim(o, obs->held, "collider", v->collider, v->index, v->prim_kind,
                                  &ok);
        } else {
            imp_put(o, "obstacle", imp_enc_id(&obs->bodies[v->obstacle]), &ok);
        }
        imp_put(o, "point", imp_enc_vec(v->point, dim), &ok);
        imp_put(o, "normal", imp_enc_vec(v->normal, dim), &ok);
        if (v->has_depth) imp_put_real(o, "depth", v->depth, &ok);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The corrected path: each leg's start time, position and velocity (empty when blocked: the
 * body stays at the start). */
static json_t *enc_path(const imp_move_result *r, int dim) {
    json_t *legs = json_array();
    for (int k = 0; legs && k < r->n_legs; ++k) {
        json_t *leg = json_object();
        int ok = leg != NULL;
        imp_put_real(leg, "time", r->legs[k].t0, &ok);
        imp_put(leg, "position", imp_enc_vec(r->legs[k].start, dim), &ok);
        imp_put(leg, "velocity", imp_enc_vec(r->legs[k].v, dim), &ok);
        if (!ok || json_array_append_new(legs, leg) != 0) {
            json_decref(legs);
            return NULL;
        }
    }
    return legs;
}

static int vec_finite(imp_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* Every number the response would carry is finite. Each input is at most
 * 1e60, but an acceleration of 1e60 over a dt of 1e60 carries an obstacle
 * 1e180 away, whose square no longer fits a double: such a request gets a
 * 422, never a NaN in the response (or a 500). */
static int result_finite(const imp_move_result *r) {
    if (!vec_finite(r->position) || !vec_finite(r->velocity)) return 0;
    for (size_t i = 0; i < r->n_violations; ++i) {
        const imp_move_violation *v = &r->violations[i];
        if (!isfinite(v->time) || !vec_finite(v->point) || !vec_finite(v->normal) ||
            !isfinite(v->depth) || !isfinite(v->speed))
            return 0;
    }
    return 1;
}

static void obstacles_free(imp_dec *d, obstacles *o) {
    imp_bodies_free(o->bodies, o->n);
    if (o->held) imp_world_store_release(d->ctx->worlds, o->held);
}

/* A solver failure against a stored world's primitive: 422 at /body (the
 * mover cannot be decided against that world), or out of memory. */
static int move_failed(imp_dec *d, imp_failure why) {
    imp_dec_pop(d, 0);
    if (why == IMP_FAILURE_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    return imp_dec_fail_at(d, "body", IMP_E_GEOMETRY,
                           "could not be decided against this world's colliders");
}

/* /v1/validate, and /v1/worlds/{id}/validate with the world held in *obs. */
static int validate(const imp_api_in *in, imp_dec *d, imp_api_out *out, obstacles *obs) {
    const json_t *req = in->json;
    imp_body body;
    imp_vec3 to = {0, 0, 0};
    double dt = 0.0, max_speed = INFINITY;
    int max_iterations = IMP_MOVE_DEFAULT_ITERATIONS;
    memset(&body, 0, sizeof body);
    static const char *const MEMBERS[] = {
        "body", "to", "dt", "world", "obstacles", "max_speed", "max_iterations", NULL};
    /* the path names the world: the request does not */
    static const char *const PATH_MEMBERS[] = {
        "body", "to", "dt", "obstacles", "max_speed", "max_iterations", NULL};
    d->spin = IMP_DEC_SPIN_SERVED; /* bodies turn: core/move_check.c */
    int rc = imp_dec_request(d, req, obs->held ? PATH_MEMBERS : MEMBERS, NULL) ||
             imp_dec_body(d, req, "body", 0, &body);
    if (!rc && body.shape.type == IMP_SHAPE_HALFSPACE)
        rc = fail_type(d, "body",
                       "must not be halfspace for the moving body: a halfspace "
                       "cannot move");
    rc = rc || imp_dec_vec(d, req, "to", 1, &to) ||
         imp_dec_number(d, req, "dt", 1, 0.0, 1, INFINITY, "must be a finite number > 0", &dt);
    if (!rc && !(imp_len(imp_sub(to, body.m.p)) / dt <= IMP_API_MAX_MAGNITUDE)) {
        size_t saved = imp_dec_push_key(d, "dt");
        rc = imp_dec_fail(d, IMP_E_VALUE,
                          "is too small for the move: |to - position| / dt must be <= 1e60");
        imp_dec_pop(d, saved);
    }
    if (!rc) {
        size_t saved = imp_dec_push_key(d, "body");
        rc = imp_dec_turn_ok(d, &body, dt, "dt");
        imp_dec_pop(d, saved);
    }
    rc = rc || dec_all_obstacles(d, req, &body, dt, obs);
    rc = rc ||
         imp_dec_number(d, req, "max_speed", 0, 0.0, 0, INFINITY, "must be a finite number >= 0",
                        &max_speed) ||
         dec_iterations(d, req, &max_iterations);
    if (rc) {
        imp_body_free(&body);
        return -1;
    }
    int dim = d->dim;
    size_t n = obs->n;
    imp_move_obstacle *mo = malloc((n ? n : 1) * sizeof *mo);
    if (!mo) {
        imp_body_free(&body);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; ++i)
        mo[i] = (imp_move_obstacle){&obs->bodies[i].shape, obs->bodies[i].m, &obs->bodies[i].filter,
                                    obs->bodies[i].omega};
    imp_move_input vin = {.shape = &body.shape,
                          .from = body.m.p,
                          .to = to,
                          .dt = dt,
                          .obstacles = mo,
                          .n_obstacles = n,
                          .dim = dim,
                          .max_speed = max_speed,
                          .max_iterations = max_iterations,
                          .filter = &body.filter,
                          .world = obs->held ? obs->held->world : NULL,
                          .stop = &d->ctx->parallel.stop,
                          .w = body.omega};
    imp_move_result *r = malloc(sizeof *r);
    if (r) *r = imp_move_check(&vin);
    free(mo);
    imp_body_free(&body);
    if (!r) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (r->state == IMP_MOVE_STOPPED) {
        int why = r->stopped_by;
        free(r);
        return imp_dec_stopped(d, why, "the move was not checked to its end");
    }
    /* FAILED against obstacles is NOMEM: the pairs the solvers do not handle were answered
     * above; against a stored world, a primitive a solver could not decide */
    if (r->state != IMP_MOVE_OK) {
        imp_failure why = r->failure;
        free(r);
        return move_failed(d, why);
    }

    if (!result_finite(r)) {
        imp_move_result_free(r);
        free(r);
        imp_dec_pop(d, 0);
        imp_dec_push_key(d, "dt");
        return imp_dec_fail(d, IMP_E_VALUE,
                            "makes the motion too large to compute: positions and velocities "
                            "over [0, dt] overflow double precision");
    }

    int ok = 1;
    json_t *o = json_object(), *list = json_array();
    if (!o || !list) ok = 0;
    for (size_t i = 0; ok && i < r->n_violations; ++i)
        if (json_array_append_new(list, enc_violation(&r->violations[i], obs, dim)) != 0) ok = 0;
    if (ok) {
        imp_put(o, "valid", json_boolean(r->valid), &ok);
        imp_put(o, "violations", list, &ok);
        list = NULL;
        imp_put(o, "position", imp_enc_vec(r->position, dim), &ok);
        imp_put(o, "velocity", imp_enc_vec(r->velocity, dim), &ok);
        imp_put(o, "iterations", json_integer(r->iterations), &ok);
        imp_put(o, "blocked", json_boolean(r->blocked), &ok);
        imp_put(o, "path", enc_path(r, dim), &ok);
    }
    json_decref(list);
    imp_move_result_free(r);
    free(r);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    out->doc = o;
    return 0;
}

int imp_ep_validate(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    obstacles obs = {NULL, 0, NULL};
    int rc = validate(in, d, out, &obs);
    obstacles_free(d, &obs);
    return rc;
}

int imp_ep_worlds_validate(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    obstacles obs = {NULL, 0, imp_ep_world_take(in, d, out)};
    if (!obs.held) return out->doc ? 0 : -1;
    int rc = validate(in, d, out, &obs);
    obstacles_free(d, &obs);
    return rc;
}
