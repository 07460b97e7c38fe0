/*
 * move_check.c - a client's reported move checked against the world, and the
 * server's corrected outcome.
 *
 * DESIGN
 * What: imp_move_check, the core of POST /v1/validate. The mover goes
 * from `from` to `to` on a straight line at constant velocity over
 * [0, dt]; obstacles follow their own parabolas over the same window.
 * Violations:
 *   - speed: |to - from| / dt > max_speed.
 *   - tunnelling: EVERY obstacle the straight path runs into is reported,
 *     each once at its first contact (time, point, normal from the mover to
 *     the obstacle), from imp_toi_shapes over [0, dt]. A game server wants
 *     the whole list (which walls, which doors), not only the first.
 *   - penetration: `to` overlaps an obstacle (at its t = dt position) by
 *     more than IMP_MOVE_TOUCH_REL of the pair's scale (imp_overlap);
 *     the point is the middle of the overlap along the normal.
 * Edge cases, decided once for the check and the correction alike:
 *   - touching at the start: the time-of-impact contract applies, so a
 *     body resting against a wall and moving away or sliding along it is
 *     free; moving into it is tunnelling at t = 0.
 *   - overlapping at the start: a move that does not deepen the overlap to
 *     first order (relative normal velocity separating or sliding) is let
 *     go for that obstacle: it is how a body gets out; any other move is
 *     tunnelling at t = 0 (with the starting depth).
 *   - arriving at contact: a contact after which the path could go at most
 *     IMP_MOVE_TOUCH_REL of the pair's scale further into the obstacle
 *     (relative speed times the time left, plus the obstacle's
 *     acceleration term) is no tunnelling: a client that stops against a
 *     wall computed in floating point is honest.
 * Correction ("collide and slide", Fauerby 2003, "Improved Collision
 * detection and Response", sections 4-5; the multi-plane clip of id
 * Software's Quake III PM_SlideMove for creases): legs of constant
 * velocity. A leg starts at time t0 at p with velocity v and is checked
 * against every obstacle (rebased to t0) over [0, dt - t0] with
 * imp_toi_shapes. No contact: the leg runs to dt and the move is done.
 * Contact at leg time th (the earliest; ties to the lowest index): one
 * iteration is spent; the body stops at p + v th, backed off along its
 * path by the skin (IMP_MOVE_SKIN_REL of the move's scale, never
 * further back than the leg's start, and only when it was moving into the
 * obstacle: a door that hits a body from the side must not be backed
 * into); then the velocity loses its component into the contact normal
 * (the remaining displacement of a constant-velocity leg is v times the
 * time left, so clipping v clips the displacement and keeps its timing).
 * Every other obstacle still touching the body then (within a few skins)
 * adds its plane: the new velocity is the first of "v clipped by one
 * plane" that points into none of them, else (3D) v projected on the
 * crease of two planes, else zero: wedged in a corner the body stops there
 * instead of zig-zagging until the iterations run out. A contact when
 * max_iterations are spent means blocked: the outcome is the start
 * position with zero velocity (the contract). The corrected velocity is
 * the last leg's velocity: what the body ends up moving with (zero when
 * stopped against a wall); for a valid move it is (to - from) / dt and the
 * position is `to` bit for bit. With a speed violation the correction
 * starts from the move scaled down to max_speed (same direction): the
 * server never grants more than the limit. Moving obstacles are followed
 * exactly over each leg (a door translating across the path is caught at
 * its contact time even when it is clear at t = 0 and at t = dt); the
 * normal component is dropped from the mover's own velocity, so an
 * obstacle that keeps coming blocks the move.
 * Cost: obstacles whose swept bounds over [0, dt] stay farther than
 * |to - from| plus the mover's extent from `from` can touch neither path
 * (every leg moves slower than the straight move, so the corrected path
 * stays in that ball) and are dropped first; the rest cost one
 * time-of-impact query each for the check and per leg, O(n (k + 1)).
 * Why: every answer comes from the exact pairwise solvers (Ericson,
 * "Real-Time Collision Detection", 5.5 on swept tests), never from
 * sampling, so a bullet through a thin wall is always caught.
 */
#include "move_check.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlap.h"
#include "toi_shapes.h"
#include "tolerance.h"

static const imp_vec3 ZERO = {0.0, 0.0, 0.0};

/* Largest coordinate magnitude of the shape about its reference point, plus
 * its radius; a halfspace's |offset|. */
static double shape_extent(const imp_shape *s, int dim) {
    if (s->type == IMP_SHAPE_HALFSPACE) return fabs(s->offset);
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r;
    size_t n = imp_shape_points(s, dim, buf, &pts, &r);
    double e = 0.0;
    for (size_t i = 0; i < n; ++i)
        e = fmax(e, imp_max_abs(pts[i]));
    return e + r;
}

/* The mover's farthest point along unit n, placed at p. */
static imp_vec3 support(const imp_shape *s, int dim, imp_vec3 p, imp_vec3 n) {
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r;
    size_t k = imp_shape_points(s, dim, buf, &pts, &r);
    imp_vec3 best = ZERO;
    double bd = -INFINITY;
    for (size_t i = 0; i < k; ++i) {
        double d = imp_dot(pts[i], n);
        if (d > bd) {
            bd = d;
            best = pts[i];
        }
    }
    return imp_madd(imp_add(p, best), n, r);
}

/* Obstacle o as it is at time t: its shape (a shallow copy: a halfspace's
 * offset moves with its displacement) and its path from then on. */
static void obstacle_at(const imp_move_obstacle *o, double t, imp_shape *s, imp_motion *m) {
    *s = *o->shape;
    m->a = o->m.a;
    m->v = imp_path_vel(o->m.v, o->m.a, t);
    if (s->type == IMP_SHAPE_HALFSPACE) {
        imp_vec3 disp = imp_path_at(ZERO, o->m.v, o->m.a, t);
        s->offset += imp_dot(s->normal, disp);
        m->p = o->m.p;
    } else {
        m->p = imp_path_at(o->m.p, o->m.v, o->m.a, t);
    }
}

typedef struct solver {
    const imp_move_input *in;
    double move_scale, extent;
    size_t *cand; /* indices of obstacles that can be reached */
    size_t n_cand;
} solver;

/* The pair's touch tolerance for obstacle shape s on path m (length). */
static double pair_tol(const solver *sv, const imp_shape *s, const imp_motion *m) {
    double scale = sv->move_scale;
    if (s->type == IMP_SHAPE_HALFSPACE)
        scale = fmax(scale, fabs(s->offset));
    else
        scale = fmax(scale, imp_max_abs(m->p) + shape_extent(s, sv->in->dim));
    return IMP_MOVE_TOUCH_REL * scale;
}

enum { LEG_NONE = 0, LEG_CONTACT = 1, LEG_FAILED = -1 };

/*
 * The contact that blocks the mover going from p at velocity v, starting at
 * time t0, over [0, T] of leg time, against obstacle i. LEG_CONTACT with *r
 * (time in leg time; OVERLAPPING turned into a contact at 0 that keeps its
 * depth), LEG_NONE, or LEG_FAILED with *r FAILED (its failure says why).
 */
static int leg_contact(const solver *sv, size_t i, imp_vec3 p, imp_vec3 v, double t0, double T,
                       imp_toi_result *r) {
    const imp_move_input *in = sv->in;
    imp_shape s;
    imp_motion m, mm = {p, v, ZERO};
    obstacle_at(&in->obstacles[i], t0, &s, &m);
    *r = imp_toi_shapes(in->shape, &mm, &s, &m, in->dim, T);
    if (r->state == IMP_TOI_FAILED) return LEG_FAILED;
    if (r->state == IMP_TOI_NONE) return LEG_NONE;
    if (r->state == IMP_TOI_OVERLAPPING) {
        imp_vec3 w = imp_sub(v, m.v);
        /* not deepening to first order: the move is getting out (or sliding) */
        if (imp_dot(w, r->normal) <= IMP_MOVE_SLIDE_REL * imp_len(w)) return LEG_NONE;
        r->time = 0.0;
        return LEG_CONTACT;
    }
    double rest = T - r->time;
    imp_vec3 w = imp_sub(v, imp_path_vel(m.v, m.a, r->time));
    double travel = imp_len(w) * rest + 0.5 * imp_len(m.a) * rest * rest;
    if (travel <= pair_tol(sv, &s, &m)) return LEG_NONE; /* arriving at contact */
    return LEG_CONTACT;
}

/* Whether obstacle o can come within reach of the mover over [0, dt]: its
 * swept box, grown by its extent, meets the box around `from` of half size
 * |to - from| + the mover's extent. Halfspaces always can. */
static int reachable(const solver *sv, const imp_move_obstacle *o) {
    const imp_move_input *in = sv->in;
    if (o->shape->type == IMP_SHAPE_HALFSPACE) return 1;
    double ext = shape_extent(o->shape, in->dim);
    double reach = imp_len(imp_sub(in->to, in->from)) + sv->extent;
    const double p[3] = {o->m.p.x, o->m.p.y, o->m.p.z}, v[3] = {o->m.v.x, o->m.v.y, o->m.v.z},
                 a[3] = {o->m.a.x, o->m.a.y, o->m.a.z}, f[3] = {in->from.x, in->from.y, in->from.z};
    for (int k = 0; k < in->dim; ++k) {
        double lo, hi;
        imp_path_range(p[k], v[k], a[k], in->dt, &lo, &hi);
        double margin = IMP_MOVE_CULL_MARGIN_REL * (fabs(lo) + fabs(hi) + fabs(f[k]) + reach + ext);
        if (hi + ext + margin < f[k] - reach || lo - ext - margin > f[k] + reach) return 0;
    }
    return 1;
}

/* The array has room for every violation: one speed, two per obstacle. */
static void add_violation(imp_move_result *res, imp_move_violation v) {
    res->violations[res->n_violations++] = v;
}

static int cmp_violation(const void *pa, const void *pb) {
    const imp_move_violation *a = pa, *b = pb;
    if ((a->kind == IMP_MOVE_SPEED) != (b->kind == IMP_MOVE_SPEED))
        return a->kind == IMP_MOVE_SPEED ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->obstacle != b->obstacle) return a->obstacle < b->obstacle ? -1 : 1;
    return 0;
}

/* v without its component into n (unit), when it has one. */
static imp_vec3 clip(imp_vec3 v, imp_vec3 n) {
    double d = imp_dot(v, n);
    return d > 0.0 ? imp_madd(v, n, -d) : v;
}

static int admissible(imp_vec3 w, const imp_vec3 *planes, size_t k, double eps) {
    for (size_t j = 0; j < k; ++j)
        if (imp_dot(w, planes[j]) > eps) return 0;
    return 1;
}

/* The slide velocity after a contact: planes[0] is the contact's normal,
 * the rest the planes still touching (all from the body outwards). */
static imp_vec3 slide(imp_vec3 v, const imp_vec3 *planes, size_t k, int dim) {
    double eps = IMP_MOVE_SLIDE_REL * imp_len(v);
    for (size_t i = 0; i < k; ++i) {
        imp_vec3 w = clip(v, planes[i]);
        if (admissible(w, planes, k, eps)) return w;
    }
    if (dim == 3) {
        for (size_t i = 0; i < k; ++i) {
            for (size_t j = i + 1; j < k; ++j) {
                imp_vec3 c = imp_cross(planes[i], planes[j]);
                double l = imp_len(c);
                if (!(l > IMP_MOVE_SLIDE_REL)) continue; /* parallel planes: no crease */
                c = imp_scale(c, 1.0 / l);
                imp_vec3 w = imp_scale(c, imp_dot(v, c));
                if (admissible(w, planes, k, eps)) return w;
            }
        }
    }
    return ZERO;
}

/* The corrected path: legs of collide and slide from `from` towards
 * `target`. Returns IMP_FAILURE_NONE, or why a query failed. */
static imp_failure correct(const solver *sv, imp_vec3 target, imp_vec3 *planes,
                           imp_move_result *res) {
    const imp_move_input *in = sv->in;
    const double skin = IMP_MOVE_SKIN_REL * sv->move_scale;
    imp_vec3 p = in->from, v = imp_scale(imp_sub(target, in->from), 1.0 / in->dt);
    double t = 0.0;
    res->n_legs = 0;
    res->iterations = 0;
    for (;;) {
        double T = in->dt - t;
        if (!(T > 0.0)) break; /* the last contact came at dt: done */
        res->legs[res->n_legs++] = (imp_move_leg){t, p, v};
        size_t hit = 0;
        imp_toi_result best = {.state = IMP_TOI_NONE};
        for (size_t c = 0; c < sv->n_cand; ++c) {
            imp_toi_result r;
            int k = leg_contact(sv, sv->cand[c], p, v, t, T, &r);
            if (k == LEG_FAILED) return r.failure;
            if (k == LEG_CONTACT && (best.state == IMP_TOI_NONE || r.time < best.time)) {
                best = r;
                hit = sv->cand[c];
            }
        }
        if (best.state == IMP_TOI_NONE) {
            p = res->n_legs == 1 ? target : imp_madd(p, v, T);
            break;
        }
        if (res->iterations == in->max_iterations) {
            res->blocked = 1;
            res->n_legs = 0;
            p = in->from;
            v = ZERO;
            break;
        }
        res->iterations++;
        double th = best.time, speed = imp_len(v);
        imp_vec3 q = imp_madd(p, v, th);
        if (speed > 0.0 && imp_dot(v, best.normal) > 0.0)
            q = imp_madd(q, v, -fmin(skin, speed * th) / speed);
        p = q;
        t += th;
        /* planes: the contact's, then those of obstacles still touching */
        size_t k = 0;
        planes[k++] = best.normal;
        for (size_t c = 0; c < sv->n_cand; ++c) {
            if (sv->cand[c] == hit) continue;
            imp_shape s;
            imp_motion m;
            obstacle_at(&in->obstacles[sv->cand[c]], t, &s, &m);
            imp_overlap_result o = imp_overlap(in->shape, p, &s, m.p, in->dim);
            if (o.state == IMP_OVERLAP_FAILED) return o.failure;
            if (o.state == IMP_OVERLAP_OVERLAPPING ||
                o.distance <= IMP_MOVE_TOUCH_BAND_SKINS * skin + pair_tol(sv, &s, &m))
                planes[k++] = o.normal;
        }
        v = slide(v, planes, k, in->dim);
    }
    res->position = p;
    res->velocity = v;
    return IMP_FAILURE_NONE;
}

imp_move_result imp_move_check(const imp_move_input *in) {
    assert(in->dim == 2 || in->dim == 3);
    assert(in->dt > 0.0 && isfinite(in->dt));
    assert(in->max_speed >= 0.0);
    assert(in->max_iterations >= 0 && in->max_iterations <= IMP_MOVE_MAX_ITERATIONS);
    assert(in->shape->type != IMP_SHAPE_HALFSPACE);
    imp_move_result res = {.state = IMP_MOVE_OK};
    imp_failure why = IMP_FAILURE_NOMEM;
    const size_t n = in->n_obstacles;

    imp_vec3 d = imp_sub(in->to, in->from);
    double dist = imp_len(d);
    solver sv = {.in = in, .extent = shape_extent(in->shape, in->dim)};
    sv.move_scale = fmax(fmax(imp_max_abs(in->from), imp_max_abs(in->to)), fmax(dist, sv.extent));
    sv.cand = malloc((n ? n : 1) * sizeof *sv.cand);
    imp_vec3 *planes = malloc((n ? n : 1) * sizeof *planes);
    res.violations = malloc((2 * n + 1) * sizeof *res.violations);
    if (!sv.cand || !planes || !res.violations) goto fail;
    for (size_t i = 0; i < n; ++i) {
        assert(imp_toi_shapes_closed_form(in->shape, in->obstacles[i].shape, in->dim));
        if (imp_filter_touch(in->filter, in->obstacles[i].filter) &&
            reachable(&sv, &in->obstacles[i]))
            sv.cand[sv.n_cand++] = i;
    }

    double speed = dist / in->dt;
    if (speed > in->max_speed)
        add_violation(&res, (imp_move_violation){.kind = IMP_MOVE_SPEED, .speed = speed});

    imp_vec3 v = imp_scale(d, 1.0 / in->dt);
    for (size_t c = 0; c < sv.n_cand; ++c) {
        size_t i = sv.cand[c];
        imp_toi_result r;
        int k = leg_contact(&sv, i, in->from, v, 0.0, in->dt, &r);
        if (k == LEG_FAILED) {
            why = r.failure;
            goto fail;
        }
        if (k == LEG_CONTACT)
            add_violation(
                &res, (imp_move_violation){.kind = IMP_MOVE_TUNNELING,
                                           .obstacle = i,
                                           .time = r.time,
                                           .point = r.point,
                                           .normal = r.normal,
                                           .depth = r.state == IMP_TOI_OVERLAPPING ? r.depth : 0.0,
                                           .has_depth = r.state == IMP_TOI_OVERLAPPING});
    }
    for (size_t c = 0; c < sv.n_cand; ++c) {
        size_t i = sv.cand[c];
        imp_shape s;
        imp_motion m;
        obstacle_at(&in->obstacles[i], in->dt, &s, &m);
        imp_overlap_result o = imp_overlap(in->shape, in->to, &s, m.p, in->dim);
        if (o.state == IMP_OVERLAP_FAILED) {
            why = o.failure;
            goto fail;
        }
        if (o.state == IMP_OVERLAP_OVERLAPPING && o.depth > pair_tol(&sv, &s, &m)) {
            imp_vec3 deep = support(in->shape, in->dim, in->to, o.normal);
            add_violation(&res,
                          (imp_move_violation){.kind = IMP_MOVE_PENETRATION,
                                               .obstacle = i,
                                               .time = in->dt,
                                               .point = imp_madd(deep, o.normal, -0.5 * o.depth),
                                               .normal = o.normal,
                                               .depth = o.depth,
                                               .has_depth = 1});
        }
    }
    qsort(res.violations, res.n_violations, sizeof *res.violations, cmp_violation);
    res.valid = res.n_violations == 0;

    if (res.valid) {
        res.position = in->to;
        res.velocity = v;
        res.legs[0] = (imp_move_leg){0.0, in->from, v};
        res.n_legs = 1;
    } else {
        imp_vec3 target = in->to;
        if (speed > in->max_speed)
            target = dist > 0.0 ? imp_madd(in->from, d, in->max_speed * in->dt / dist) : in->from;
        why = correct(&sv, target, planes, &res);
        if (why != IMP_FAILURE_NONE) goto fail;
    }
    free(sv.cand);
    free(planes);
    return res;
fail:
    free(sv.cand);
    free(planes);
    free(res.violations);
    return (imp_move_result){.state = IMP_MOVE_FAILED, .failure = why};
}

void imp_move_result_free(imp_move_result *r) {
    if (!r) return;
    free(r->violations);
    r->violations = NULL;
    r->n_violations = 0;
}
