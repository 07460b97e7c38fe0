/*
 * ep_scenes_simulate.c - POST /v1/scenes/simulate: event-driven simulation
 * with collision response.
 *
 * DESIGN
 * What: decodes the bodies (api/bodies.h: the same bodies, limits and errors
 * as /v1/scenes/predict), the horizon, gravity, max_events and record; runs
 * imp_sim_run (core/simulate.h); encodes the stop time, the contacts in time
 * order (unless record is "none"), every body's final position and velocity
 * and stats.
 * How: max_events defaults to the server's --max-events and may not exceed
 * it (422), so one request's work and its event list are bounded by
 * configuration. elapsed_ms is the simulation alone (monotonic clock).
 * Why: the simulation runs on one worker; its cost is proportional to the
 * events processed (core/simulate.c keeps the cost per event flat in n), so
 * max_events is the knob that bounds it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/bodies.h"
#include "api/encode.h"
#include "api/endpoints.h"
#include "core/simulate.h"

/* "max_events": an integer in [0, ctx->max_events]; absent: ctx->max_events. */
static int dec_max_events(imp_dec *d, const json_t *req, size_t *out) {
    *out = d->ctx->max_events;
    const json_t *v = json_object_get(req, "max_events");
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, "max_events");
    int rc = 0;
    if (!json_is_number(v)) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be an integer >= 0");
    } else {
        double x = json_number_value(v);
        if (!isfinite(x) || x != floor(x)) {
            rc = imp_dec_fail(d, IMP_E_TYPE, "must be an integer >= 0");
        } else if (x < 0) {
            rc = imp_dec_fail(d, IMP_E_VALUE, "must be an integer >= 0");
        } else if (x > (double)d->ctx->max_events) {
            snprintf(d->detail, sizeof d->detail, "the limit is %zu", d->ctx->max_events);
            rc = imp_dec_fail(d, IMP_E_LIMIT, "is more than this server's --max-events");
        } else {
            *out = (size_t)x;
        }
    }
    imp_dec_pop(d, saved);
    return rc;
}

/* "record": "events" (default) or "none". */
static int dec_record(imp_dec *d, const json_t *req, int *out) {
    *out = 1;
    const json_t *v = json_object_get(req, "record");
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, "record");
    int rc = 0;
    if (!json_is_string(v))
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    else if (strcmp(json_string_value(v), "events") == 0)
        *out = 1;
    else if (strcmp(json_string_value(v), "none") == 0)
        *out = 0;
    else
        rc = imp_dec_fail(d, IMP_E_VALUE, "must be one of: events, none");
    imp_dec_pop(d, saved);
    return rc;
}

static json_t *enc_event(const imp_sim_event *e, const imp_body *bodies,
                         const imp_world_entry *world, int dim) {
    json_t *o = json_object();
    int ok = o != NULL;
    if (!ok) return NULL;
    imp_put_real(o, "time", e->time, &ok);
    imp_put(o, "a", imp_enc_id(&bodies[e->a]), &ok);
    if (e->world)
        imp_ep_world_put_prim(o, world, "b", e->b, e->index, e->kind, &ok);
    else
        imp_put(o, "b", imp_enc_id(&bodies[e->b]), &ok);
    imp_put(o, "point", imp_enc_vec(e->point, dim), &ok);
    imp_put(o, "normal", imp_enc_vec(e->normal, dim), &ok);
    imp_put(o, "impulse", imp_enc_vec(e->impulse, dim), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The angle of a turn about z (imp_enc_turn's, as a number). */
static double turn_angle(imp_quat q) { return atan2(2.0 * q.w * q.z, q.w * q.w - q.z * q.z); }

/* a in (-pi, pi] (unchanged when already there, so a turn that stays in range is exact). */
static double angle_in_range(double a) {
    const double pi = 3.14159265358979323846;
    if (a > -pi && a <= pi) return a;
    double r = remainder(a, 2.0 * pi);
    return r <= -pi ? r + 2.0 * pi : r;
}

static json_t *enc_state(const imp_sim_state *st, const imp_body *b, int dim) {
    json_t *o = json_object();
    int ok = o != NULL;
    if (!ok) return NULL;
    imp_put(o, "id", imp_enc_id(b), &ok);
    imp_put(o, "position", imp_enc_vec(st->p, dim), &ok);
    imp_put(o, "velocity", imp_enc_vec(st->v, dim), &ok);
    if (dim == 2) /* the given angle plus the turn summed in core, in (-pi, pi] */
        imp_put_real(o, "orientation", angle_in_range(turn_angle(b->orientation) + st->angle), &ok);
    else
        imp_put(o, "orientation", imp_enc_turn(st->q, dim), &ok);
    if (dim == 2)
        imp_put_real(o, "angular_velocity", st->w.z, &ok);
    else
        imp_put(o, "angular_velocity", imp_enc_vec(st->w, dim), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *enc_response(const imp_sim_output *out, const imp_body *bodies, size_t n,
                            const imp_world_entry *world, int dim, int record, double ms) {
    int ok = 1;
    json_t *o = json_object(), *events = record ? json_array() : NULL, *states = json_array(),
           *stats = json_object();
    if (!o || (record && !events) || !states || !stats) ok = 0;
    for (size_t i = 0; ok && record && i < out->n_events; ++i)
        if (json_array_append_new(events, enc_event(&out->events[i], bodies, world, dim)) != 0)
            ok = 0;
    for (size_t i = 0; ok && i < n; ++i)
        if (json_array_append_new(states, enc_state(&out->bodies[i], &bodies[i], dim)) != 0) ok = 0;
    if (ok) {
        imp_put_real(o, "time", out->time, &ok);
        if (record) {
            imp_put(o, "events", events, &ok);
            events = NULL;
        }
        imp_put(o, "bodies", states, &ok);
        states = NULL;
        imp_put(stats, "events", json_integer((json_int_t)out->stats.events), &ok);
        imp_put(stats, "stopped",
                json_string(out->stopped == IMP_SIM_STOP_MAX_EVENTS ? "max_events"
                            : out->stopped == IMP_SIM_STOP_STOPPED  ? "time_budget"
                                                                    : "horizon"),
                &ok);
        imp_put_real(stats, "elapsed_ms", ms, &ok);
        imp_put(stats, "bodies", json_integer((json_int_t)n), &ok);
        imp_put(stats, "cell_crossings", json_integer((json_int_t)out->stats.crossings), &ok);
        imp_put(stats, "slow_contacts", json_integer((json_int_t)out->stats.slow_contacts), &ok);
        imp_put(stats, "rests", json_integer((json_int_t)out->stats.rests), &ok);
        imp_put(stats, "sleeps", json_integer((json_int_t)out->stats.sleeps), &ok);
        imp_put(stats, "wakes", json_integer((json_int_t)out->stats.wakes), &ok);
        imp_put(o, "stats", stats, &ok);
        stats = NULL;
    }
    json_decref(events);
    json_decref(states);
    json_decref(stats);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Candidate pairs the start check may examine (8 bytes each, as for /v1/scenes/predict); a
 * scene whose bodies' boxes overlap more than this gets no interpenetration warnings. */
#define WARN_MAX_PAIRS ((size_t)8000000)

/* The window of the start check's scene (seconds): only the pairs already interpenetrating
 * at t = 0 are read from it, so it is short, to keep the broadphase's boxes near the bodies. */
#define WARN_WINDOW 1e-9

/* The reply's warnings about the start: pairs of bodies (and a body and a world collider)
 * interpenetrating at t = 0, by a, then b; static halfspaces with every moving body on their
 * solid side (an inside-out wall). NULL when out of memory; an empty array when all is well. */
static json_t *start_warnings(imp_dec *d, const imp_scene_in *s, const imp_world_entry *world,
                              int dim, double horizon) {
    json_t *list = json_array();
    if (!list) return NULL;
    int ok = 1;
    imp_scene_body *scene = NULL;
    if (imp_scene_bodies(d, s, &scene) != 0) {
        json_decref(list);
        return NULL;
    }
    imp_scene_input in = {scene,
                          s->n,
                          dim,
                          fmin(horizon, WARN_WINDOW),
                          IMP_BROAD_AUTO,
                          WARN_MAX_PAIRS,
                          &d->ctx->parallel,
                          world ? world->world : NULL};
    imp_scene_output out;
    if (imp_scene_predict(&in, &out, NULL) == IMP_SCENE_OK) {
        for (size_t k = 0; ok && k < out.n_overlapping; ++k) {
            const imp_scene_contact *c = &out.overlapping[k];
            json_t *w = json_object();
            if (!w) {
                ok = 0;
                break;
            }
            imp_put(w, "kind", json_string("interpenetrating"), &ok);
            imp_put(w, "a", imp_enc_id(&s->bodies[c->a]), &ok);
            if (c->world)
                imp_ep_world_put_prim(w, world, "b", c->b, c->index, c->kind, &ok);
            else
                imp_put(w, "b", imp_enc_id(&s->bodies[c->b]), &ok);
            imp_put_real(w, "depth", c->depth, &ok);
            if (json_array_append_new(list, w) != 0) ok = 0;
        }
        imp_scene_output_free(&out);
    }
    free(scene);
    /* a static halfspace {x : n . x <= offset} that holds every moving body's position */
    size_t moving = 0;
    for (size_t i = 0; i < s->n; ++i)
        moving += !s->bodies[i].is_static;
    for (size_t h = 0; ok && moving > 0 && h < s->n; ++h) {
        const imp_body *hb = &s->bodies[h];
        if (!hb->is_static || hb->shape.type != IMP_SHAPE_HALFSPACE) continue;
        size_t inside = 0;
        for (size_t i = 0; i < s->n; ++i)
            inside += !s->bodies[i].is_static &&
                      imp_dot(hb->shape.normal, s->bodies[i].m.p) <= hb->shape.offset;
        if (inside < moving) continue;
        json_t *w = json_object();
        if (!w) {
            ok = 0;
            break;
        }
        imp_put(w, "kind", json_string("inside_out_halfspace"), &ok);
        imp_put(w, "halfspace", imp_enc_id(hb), &ok);
        imp_put(w, "bodies", json_integer((json_int_t)moving), &ok);
        if (json_array_append_new(list, w) != 0) ok = 0;
    }
    if (!ok) {
        json_decref(list);
        return NULL;
    }
    return list;
}

/* Body i's object in the request (NULL for a scene of plain spheres read from text). */
static const json_t *body_json(const imp_scene_in *s, size_t i) {
    return json_array_get(json_object_get(s->req, "bodies"), i);
}

/* The index of the first body that names its rotation (angular_velocity or inertia), or n:
 * then the scene is simulated by translation alone, exactly as before rotation was served. */
static size_t first_turning(const imp_scene_in *s) {
    size_t i = 0;
    for (; i < s->n; ++i) {
        const json_t *b = body_json(s, i);
        if (json_object_get(b, "angular_velocity") || json_object_get(b, "inertia")) break;
    }
    return i;
}

/* Every body's rotation for core (malloc'd into *out): angular velocity, orientation and
 * inertia (imp_dec_body_inertia). A world with rotation is 422 at the first body that names
 * it (core/simulate.c does not turn bodies against a world yet). 0, or -1 with the error in
 * `d`. */
static int turns_of(imp_dec *d, const imp_scene_in *s, const imp_world_entry *world,
                    imp_sim_turn **out) {
    *out = NULL;
    size_t first = first_turning(s);
    if (first == s->n) return 0;
    size_t s1 = imp_dec_push_key(d, "bodies"), s2 = imp_dec_push_index(d, first);
    if (world) {
        const char *key = json_object_get(body_json(s, first), "angular_velocity")
                              ? "angular_velocity"
                              : "inertia";
        imp_dec_fail_at(d, key, IMP_E_UNSUPPORTED,
                        "is not served with a stored world yet: the simulation does not yet "
                        "turn a body (or let a contact turn it) against a world's colliders");
        imp_dec_pop(d, s1);
        return -1;
    }
    imp_dec_pop(d, s1);
    imp_sim_turn *t = calloc(s->n ? s->n : 1, sizeof *t);
    if (!t) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n; ++i) {
        const imp_body *b = &s->bodies[i];
        t[i].w = b->omega;
        t[i].orientation = b->orientation;
        imp_mat3 inv;
        s1 = imp_dec_push_key(d, "bodies");
        s2 = imp_dec_push_index(d, i);
        int rc = b->shape.type != IMP_SHAPE_HALFSPACE &&
                 imp_dec_body_inertia(d, body_json(s, i), b, &t[i].inertia, &inv);
        imp_dec_pop(d, s2);
        imp_dec_pop(d, s1);
        if (rc) {
            free(t);
            return -1;
        }
    }
    *out = t;
    return 0;
}

/* Runs the decoded simulation and encodes its reply (the caller frees s and the world). */
static int simulate(imp_dec *d, imp_scene_in *s, const imp_world_entry *world, double horizon,
                    imp_vec3 gravity, size_t max_events, int record, imp_api_out *out) {
    int dim = d->dim ? d->dim : 2; /* no vector at all: an empty scene */
    const imp_body *bodies = s->bodies;
    size_t n = s->n;

    imp_sim_turn *turns;
    if (turns_of(d, s, world, &turns) != 0) return -1;
    imp_sim_body *sb = malloc((n ? n : 1) * sizeof *sb);
    if (!sb) {
        free(turns);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
        const imp_body *b = &bodies[i];
        sb[i] = (imp_sim_body){b->m,           &b->shape,     b->mass,   b->is_static,
                               b->restitution, b->tangential, &b->filter};
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    imp_sim_input sin = {sb,
                         n,
                         dim,
                         horizon,
                         gravity,
                         max_events,
                         record,
                         0,
                         d->ctx->parallel.stop,
                         world ? world->world : NULL,
                         turns};
    imp_sim_output sout;
    imp_sim_status st = imp_sim_run(&sin, &sout, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free(sb);
    free(turns);
    if (st != IMP_SIM_OK) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (sout.stopped == IMP_SIM_STOP_STOPPED && sout.stopped_by != IMP_STOP_TIME_BUDGET) {
        /* a client that left or a shutdown: no state to report to anyone who wants it */
        char progress[96];
        snprintf(progress, sizeof progress, "stopped at t = %.17g after %zu contacts", sout.time,
                 (size_t)sout.stats.events);
        int why = sout.stopped_by;
        imp_sim_output_free(&sout);
        return imp_dec_stopped(d, why, progress);
    }
    /* the budget ran out: 200 with the state reached, stopped "time_budget" (the contract) */
    out->stopped = sout.stopped == IMP_SIM_STOP_STOPPED ? sout.stopped_by : 0;
    json_t *o = enc_response(&sout, bodies, n, world, dim, record, imp_enc_elapsed_ms(&t0, &t1));
    imp_sim_output_free(&sout);
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    json_t *warnings = start_warnings(d, s, world, dim, horizon);
    int ok = warnings != NULL;
    if (ok && json_array_size(warnings) > 0)
        imp_put(o, "warnings", warnings, &ok);
    else
        json_decref(warnings);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    out->doc = o;
    return 0;
}

int imp_ep_scenes_simulate(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    d->spin = IMP_DEC_SPIN_SERVED; /* core/simulate.c turns them (rigid response) */
    static const char *const MEMBERS[] = {"bodies", "horizon", "gravity", "max_events",
                                          "record", "world",   NULL};
    imp_scene_in s;
    const imp_world_entry *world = NULL;
    size_t max_events = 0;
    double horizon = 0;
    imp_vec3 gravity = imp_v3(0, 0, 0);
    int record = 1;
    int rc = imp_dec_scene(d, in, &s) || imp_dec_request(d, s.req, MEMBERS, NULL) ||
             imp_dec_number(d, s.req, "horizon", 1, 0.0, 1, INFINITY, "must be a finite number > 0",
                            &horizon) ||
             imp_dec_vec(d, s.req, "gravity", 0, &gravity) ||
             dec_max_events(d, s.req, &max_events) || dec_record(d, s.req, &record) ||
             imp_dec_scene_world(d, s.req, &world) ||
             imp_dec_turn_within(d, s.bodies, s.n, "bodies", horizon, "the horizon");
    if (rc) {
        if (world) imp_world_store_release(d->ctx->worlds, world);
        imp_scene_in_free(&s);
        return -1;
    }
    rc = simulate(d, &s, world, horizon, gravity, max_events, record, out);
    if (world) imp_world_store_release(d->ctx->worlds, world);
    imp_scene_in_free(&s);
    return rc;
}
