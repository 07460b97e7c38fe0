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
 * Turning obstacles (a spinning blade, a door on its hinge: the shape turns
 * about the obstacle's position at its angular velocity w): the obstacle at
 * time t is its shape turned by w t on its path, and each leg's pair goes
 * to imp_toi_rotating (certified conservative advancement; its time is at
 * most the true first contact, which follows within its tolerance). Two
 * rules change with it: the velocity of the obstacle at a contact is that
 * of its point there, v + w x (point - position), for "not deepening" at
 * the start; and a first touch without approach speed is no longer a graze
 * to let go (a turning body's distance is not convex in time: the blade
 * sliding past the mover's side may still cut into it), so only "arriving
 * at contact" lets it go, with the travel bounded by the relative speed
 * plus |w| times the obstacle's reach (every point of it moves no faster).
 * Reachability uses the obstacle's bounding sphere, which holds it in
 * every orientation. The mover may turn too (imp_move_input.w; a world's
 * casts turn it as well): it is placed turned by w t
 * wherever it is placed at time t (each leg's start, the touching planes,
 * `to` at dt), its point's velocity at a contact is v + w x arm, its extent
 * is its bounding sphere, and its pairs go to imp_toi_rotating.
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
#include <string.h>

#include "overlap.h"
#include "toi_rotating.h"
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
        e = imp_fmax(e, imp_max_abs(pts[i]));
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

/* Whether obstacle o turns a shape that its turn moves; the mover likewise. */
static int obstacle_turns(const imp_move_obstacle *o) {
    return imp_toi_rotating_needed(o->shape, o->w, o->shape, o->w);
}
static int mover_turns(const imp_move_input *in) {
    return imp_toi_rotating_needed(in->shape, in->w, in->shape, in->w);
}

/* Shape s (as at t = 0) turned by w t about its position, into *out (a shallow copy; a
 * polygon's or polyhedron's vertices into `verts`, room for its n_verts). */
static void turned_at(const imp_shape *s, imp_vec3 w, double t, imp_vec3 *verts, imp_shape *out) {
    *out = *s;
    if (!imp_toi_rotating_needed(s, w, s, w) || t == 0.0) return;
    if (out->verts) {
        memcpy(verts, s->verts, s->n_verts * sizeof *verts);
        out->verts = verts;
    }
    imp_shape_rotate(out, imp_quat_from_rotvec(imp_scale(w, t)));
}

/* Obstacle o as it is at time t: its shape (a shallow copy: a halfspace's
 * offset moves with its displacement; a turning shape turned by w t, a
 * polygon's or polyhedron's vertices into `verts`, room for its n_verts) and
 * its path from then on. */
static void obstacle_at(const imp_move_obstacle *o, double t, imp_vec3 *verts, imp_shape *s,
                        imp_motion *m) {
    turned_at(o->shape, o->w, t, verts, s);
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
    imp_vec3 *verts;  /* room for the turned vertices of any turning obstacle (obstacle_at) */
    imp_vec3 *mverts; /* and of the mover (mover_at) */
    double move_scale, extent;
    size_t *cand; /* indices of obstacles that can be reached */
    size_t n_cand;
    size_t *near; /* world primitives near the current query (growable): those whose bounds
                     meet the box [near_lo, near_hi] when near_valid */
    size_t n_near, cap_near;
    imp_vec3 near_lo, near_hi;
    int near_valid;
    size_t work;    /* solves since the last poll of the stop check */
    int stopped_by; /* the stop check's reason once it said stop */
    /* the world's first blocking contact on the straight move (from the tunnelling check):
     * the correction's first leg is the same move when no speed limit scales it */
    int straight_done, straight_have;
    imp_vec3 straight_v;
    struct contact *straight_best;
    /* the world primitives the straight move touches at all (any contact, blocking or not):
     * the only ones `to` can lie inside */
    size_t *touched;
    size_t n_touched, cap_touched;
} solver;

/* The mover's shape at time t (turned by w t), into *out. */
static void mover_at(const solver *sv, double t, imp_shape *out) {
    turned_at(sv->in->shape, sv->in->w, t, sv->mverts, out);
}

/* Counts one solve; 1 when the stop check says stop (its reason kept). */
static int poll_stop(solver *sv) {
    if (++sv->work < IMP_STOP_POLL_PAIRS) return 0;
    sv->work = 0;
    return (sv->stopped_by = imp_stop_now(sv->in->stop)) != 0;
}

/* Makes room for item n of the growable index array *a (capacity *cap). 0, or -1 out of
 * memory. */
static int world_grow_index(size_t **a, size_t *cap, size_t n) {
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 16;
    size_t *m = realloc(*a, c * sizeof *m);
    if (!m) return -1;
    *a = m;
    *cap = c;
    return 0;
}

/* The world primitives the mover can touch near the path from p at velocity
 * v over [0, T], grown by `band`, into sv->near. 0, or -1 out of memory. */
static int world_near(solver *sv, imp_vec3 p, imp_vec3 v, double T, double band) {
    if (!sv->in->world) {
        sv->n_near = 0;
        return 0;
    }
    imp_vec3 q = imp_madd(p, v, T);
    double e = sv->extent + band;
    e += IMP_MOVE_CULL_MARGIN_REL * (imp_max_abs(p) + imp_max_abs(q) + e);
    imp_vec3 lo = imp_v3(imp_fmin(p.x, q.x) - e, imp_fmin(p.y, q.y) - e, imp_fmin(p.z, q.z) - e);
    imp_vec3 hi = imp_v3(imp_fmax(p.x, q.x) + e, imp_fmax(p.y, q.y) + e, imp_fmax(p.z, q.z) + e);
    /* a box inside the last one: its primitives are among the last list's (the hierarchy
     * lists every primitive whose bounds meet the box; so does the filter here) */
    if (sv->near_valid && lo.x >= sv->near_lo.x && lo.y >= sv->near_lo.y && lo.z >= sv->near_lo.z &&
        hi.x <= sv->near_hi.x && hi.y <= sv->near_hi.y && hi.z <= sv->near_hi.z) {
        size_t k = 0;
        for (size_t j = 0; j < sv->n_near; ++j)
            if (imp_world_prim_meets_box(sv->in->world, sv->near[j], lo, hi))
                sv->near[k++] = sv->near[j];
        sv->n_near = k;
        sv->near_lo = lo, sv->near_hi = hi;
        return 0;
    }
    sv->n_near = 0;
    sv->near_valid = 0;
    if (imp_world_prims_in_box(sv->in->world, lo, hi, sv->in->filter, &sv->near, &sv->n_near,
                               &sv->cap_near) != 0)
        return -1;
    sv->near_valid = 1;
    sv->near_lo = lo, sv->near_hi = hi;
    return 0;
}

/* The pair's touch tolerance for obstacle shape s on path m (length). */
static double pair_tol(const solver *sv, const imp_shape *s, const imp_motion *m) {
    double scale = sv->move_scale;
    if (s->type == IMP_SHAPE_HALFSPACE)
        scale = imp_fmax(scale, fabs(s->offset));
    else
        scale = imp_fmax(scale, imp_max_abs(m->p) + shape_extent(s, sv->in->dim));
    return IMP_MOVE_TOUCH_REL * scale;
}

enum { LEG_NONE = 0, LEG_CONTACT = 1, LEG_FAILED = -1, LEG_STOPPED = -2 };

/* A contact of a leg: with obstacle `who`, or with world primitive `who`
 * (its collider, index and kind kept). r's normal runs from the mover. */
typedef struct contact {
    imp_toi_result r;
    int world;
    size_t who;
    uint32_t collider, index, kind;
} contact;

/* Leg order: time, obstacles before the world, then index (the world's:
 * collider, then primitive). */
static int contact_before(const contact *a, const contact *b) {
    if (a->r.time != b->r.time) return a->r.time < b->r.time;
    if (a->world != b->world) return !a->world;
    if (!a->world) return a->who < b->who;
    if (a->collider != b->collider) return a->collider < b->collider;
    return a->index < b->index;
}

/*
 * As leg_contact, against world primitive `prim` (static). The normal is
 * the surface's (imp_world_surface_normal: an internal edge of a
 * tessellated surface answers with its face normal). A contact the mover
 * does not move into, by more than IMP_MOVE_SLIDE_REL of its speed, is
 * none: overlapping, it is getting out or sliding; hitting, it grazes (the
 * distance between a convex primitive and a body on a straight line is
 * convex in time, so a first touch without approach speed is the least
 * distance and no penetration follows) - a body sliding across a floor of
 * many triangles crosses their edges without a contact each.
 */
static int world_leg_contact(solver *sv, const imp_world_cast_prep *prep, size_t prim, contact *c) {
    const imp_move_input *in = sv->in;
    const imp_vec3 v = prep->cast->motion.v;
    const double T = prep->cast->horizon;
    memset(c, 0, sizeof *c);
    c->world = 1;
    c->who = prim;
    if (poll_stop(sv)) return LEG_STOPPED;
    imp_world_cast_result wr = imp_world_cast_prim(in->world, prep, prim);
    if (wr.state == IMP_WORLD_STOPPED) {
        sv->stopped_by = wr.stopped_by;
        return LEG_STOPPED;
    }
    if (wr.state == IMP_WORLD_FAILED) {
        c->r = imp_toi_failed(wr.failure);
        return LEG_FAILED;
    }
    if (wr.state != IMP_WORLD_HIT && wr.state != IMP_WORLD_OVERLAPPING) return LEG_NONE;
    c->collider = wr.collider;
    c->index = wr.index;
    c->kind = wr.kind;
    c->r.state = wr.state == IMP_WORLD_HIT ? IMP_TOI_HIT : IMP_TOI_OVERLAPPING;
    c->r.time = wr.state == IMP_WORLD_HIT ? wr.time : 0.0;
    c->r.point = wr.point;
    c->r.normal = imp_neg(imp_world_surface_normal(in->world, prim, wr.point, wr.normal));
    c->r.pa = wr.position;
    c->r.depth = wr.depth;
    /* the mover's point at the contact moves at v, a turning mover's at v + w x arm; the
     * graze rule (a first touch without approach speed) holds for a mover that does not
     * turn only, as for the obstacles (leg_contact) */
    imp_vec3 mv = v;
    if (prep->turning) mv = imp_add(v, imp_cross(in->w, imp_sub(wr.point, wr.position)));
    int slides = imp_dot(mv, c->r.normal) <= IMP_MOVE_SLIDE_REL * imp_len(mv);
    if (c->r.state == IMP_TOI_OVERLAPPING) return slides ? LEG_NONE : LEG_CONTACT;
    if (slides && !prep->turning) return LEG_NONE;
    double spin = prep->turning ? imp_len(in->w) * sv->extent : 0.0;
    double travel = (imp_len(v) + spin) * (T - wr.time);
    if (travel <= IMP_MOVE_TOUCH_REL * imp_fmax(sv->move_scale, imp_max_abs(wr.point)))
        return LEG_NONE; /* arriving at contact */
    return LEG_CONTACT;
}

/*
 * The contact that blocks the mover going from p at velocity v, starting at
 * time t0, over [0, T] of leg time, against obstacle i. LEG_CONTACT with *r
 * (time in leg time; OVERLAPPING turned into a contact at 0 that keeps its
 * depth), LEG_NONE, or LEG_FAILED with *r FAILED (its failure says why).
 */
static int leg_contact(solver *sv, size_t i, imp_vec3 p, imp_vec3 v, double t0, double T,
                       imp_toi_result *r) {
    const imp_move_input *in = sv->in;
    const imp_move_obstacle *o = &in->obstacles[i];
    imp_shape s, ms;
    imp_motion m, mm = {p, v, ZERO};
    obstacle_at(o, t0, sv->verts, &s, &m);
    mover_at(sv, t0, &ms);
    int o_turns = obstacle_turns(o), m_turns = mover_turns(in), turning = o_turns || m_turns;
    if (turning) {
        imp_toi_rotating_input q = {&ms, &s, mm, m, in->w, o->w, in->dim, T, in->stop, 0};
        *r = imp_toi_rotating(&q, &sv->stopped_by);
        if (sv->stopped_by) return LEG_STOPPED;
    } else {
        *r = imp_toi_shapes(&ms, &mm, &s, &m, in->dim, T);
    }
    if (r->state == IMP_TOI_FAILED) return LEG_FAILED;
    if (r->state == IMP_TOI_NONE) return LEG_NONE;
    /* the bodies' velocities at the contact: their points' there (turning: v + w x arm) */
    imp_vec3 at = imp_path_at(m.p, m.v, m.a, r->time), ov = imp_path_vel(m.v, m.a, r->time);
    if (o_turns) ov = imp_add(ov, imp_cross(o->w, imp_sub(r->point, at)));
    imp_vec3 mv = v;
    if (m_turns) mv = imp_add(mv, imp_cross(in->w, imp_sub(r->point, imp_madd(p, v, r->time))));
    imp_vec3 w = imp_sub(mv, ov);
    if (r->state == IMP_TOI_OVERLAPPING) {
        /* not deepening to first order: the move is getting out (or sliding) */
        if (imp_dot(w, r->normal) <= IMP_MOVE_SLIDE_REL * imp_len(w)) return LEG_NONE;
        r->time = 0.0;
        return LEG_CONTACT;
    }
    double rest = T - r->time;
    /* a graze: with no relative acceleration the distance of two convex bodies is convex in
     * time, so a first touch without approach speed is their least distance (sliding along);
     * not so for a turning body */
    if (!turning && imp_max_abs(m.a) == 0.0 &&
        imp_dot(w, r->normal) <= IMP_MOVE_SLIDE_REL * imp_len(w))
        return LEG_NONE;
    /* how much further in the path could go: every point of a turning obstacle moves at most
     * |w| reach faster than its position */
    double spin = (o_turns ? imp_len(o->w) * imp_shape_extent(o->shape, in->dim) : 0.0) +
                  (m_turns ? imp_len(in->w) * sv->extent : 0.0);
    double travel = (imp_len(imp_sub(v, imp_path_vel(m.v, m.a, r->time))) + spin) * rest +
                    0.5 * imp_len(m.a) * rest * rest;
    if (travel <= pair_tol(sv, &s, &m)) return LEG_NONE; /* arriving at contact */
    return LEG_CONTACT;
}

/* Whether obstacle o can come within reach of the mover over [0, dt]: its
 * swept box, grown by its extent, meets the box around `from` of half size
 * |to - from| + the mover's extent. Halfspaces always can. */
static int reachable(const solver *sv, const imp_move_obstacle *o) {
    const imp_move_input *in = sv->in;
    if (o->shape->type == IMP_SHAPE_HALFSPACE) return 1;
    double ext =
        obstacle_turns(o) ? imp_shape_extent(o->shape, in->dim) : shape_extent(o->shape, in->dim);
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

/* Appends a violation (the array grows by doubling; *cap its room). 0, or -1 out of memory. */
static int add_violation(imp_move_result *res, size_t *cap, imp_move_violation v) {
    if (res->n_violations == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        imp_move_violation *m = realloc(res->violations, c * sizeof *m);
        if (!m) return -1;
        res->violations = m;
        *cap = c;
    }
    res->violations[res->n_violations++] = v;
    return 0;
}

static int cmp_violation(const void *pa, const void *pb) {
    const imp_move_violation *a = pa, *b = pb;
    if ((a->kind == IMP_MOVE_SPEED) != (b->kind == IMP_MOVE_SPEED))
        return a->kind == IMP_MOVE_SPEED ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->in_world != b->in_world) return a->in_world ? 1 : -1;
    if (a->in_world && a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    if (a->in_world) return (a->index > b->index) - (a->index < b->index);
    if (a->obstacle != b->obstacle) return a->obstacle < b->obstacle ? -1 : 1;
    return 0;
}

/* The world's violations of one kind by collider, the one to keep first:
 * tunnelling the earliest, penetration the deepest, then the lowest index. */
static int cmp_world_violation(const void *pa, const void *pb) {
    const imp_move_violation *a = pa, *b = pb;
    if (a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    if (a->kind == IMP_MOVE_TUNNELING && a->time != b->time) return a->time < b->time ? -1 : 1;
    if (a->kind == IMP_MOVE_PENETRATION && a->depth != b->depth)
        return a->depth > b->depth ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Keeps one of the world's violations per collider among v[first, n). */
static void keep_first_per_collider(imp_move_result *res, size_t first) {
    size_t n = res->n_violations - first, k = 0;
    if (n < 2) return;
    imp_move_violation *v = res->violations + first;
    qsort(v, n, sizeof *v, cmp_world_violation);
    for (size_t i = 0; i < n; ++i)
        if (k == 0 || v[i].collider != v[k - 1].collider) v[k++] = v[i];
    res->n_violations = first + k;
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

/* Appends plane n to the growable *planes (*k of them, room for *cap). 0, or -1 out of memory. */
static int add_plane(imp_vec3 **planes, size_t *k, size_t *cap, imp_vec3 n) {
    if (*k == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        imp_vec3 *m = realloc(*planes, c * sizeof *m);
        if (!m) return -1;
        *planes = m;
        *cap = c;
    }
    (*planes)[(*k)++] = n;
    return 0;
}

enum { CORRECT_OK = 0, CORRECT_FAILED = -1, CORRECT_STOPPED = -2 };

/* The first contact of the leg from p at velocity v over [0, T] from time t,
 * with the obstacles and the world, into *best; 1 when there is one, 0
 * when not, or CORRECT_FAILED (*why) / CORRECT_STOPPED. */
static int first_contact(solver *sv, imp_vec3 p, imp_vec3 v, double t, double T, contact *best,
                         imp_failure *why) {
    int have = 0;
    for (size_t c = 0; c < sv->n_cand; ++c) {
        contact cc = {.world = 0, .who = sv->cand[c]};
        int k = leg_contact(sv, sv->cand[c], p, v, t, T, &cc.r);
        if (k == LEG_STOPPED) return CORRECT_STOPPED;
        if (k == LEG_FAILED) return *why = cc.r.failure, CORRECT_FAILED;
        if (k == LEG_CONTACT && (!have || contact_before(&cc, best))) *best = cc, have = 1;
    }
    if (sv->straight_done && t == 0.0 && v.x == sv->straight_v.x && v.y == sv->straight_v.y &&
        v.z == sv->straight_v.z) {
        if (sv->straight_have && (!have || contact_before(sv->straight_best, best)))
            *best = *sv->straight_best, have = 1;
        return have;
    }
    if (world_near(sv, p, v, T, 0.0) != 0) return *why = IMP_FAILURE_NOMEM, CORRECT_FAILED;
    imp_shape ms;
    mover_at(sv, t, &ms);
    imp_world_cast cast = {&ms, {p, v, ZERO}, T, sv->in->filter, sv->in->w, sv->in->stop};
    imp_world_cast_prep prep;
    if (sv->n_near) prep = imp_world_cast_prepare(sv->in->world, &cast);
    for (size_t j = 0; j < sv->n_near; ++j) {
        contact cc;
        int k = world_leg_contact(sv, &prep, sv->near[j], &cc);
        if (k == LEG_STOPPED) return CORRECT_STOPPED;
        if (k == LEG_FAILED) return *why = cc.r.failure, CORRECT_FAILED;
        if (k == LEG_CONTACT && (!have || contact_before(&cc, best))) *best = cc, have = 1;
    }
    return have;
}

/* A lower bound of the distance between the body (its points pts[0..np) about p, grown
 * by r) and a triangle or segment with corners c[0..nc): the largest gap between their
 * projections on the primitive's normal and on its edges' normals within its plane (each
 * axis unit; a gap along a unit axis never exceeds the distance). Cheap next to the
 * distance itself, and 0 or less where it cannot tell. */
static double corner_gap(const imp_vec3 *c, int nc, const imp_vec3 *pts, size_t np, double r,
                         imp_vec3 p, int dim) {
    imp_vec3 axes[4];
    int na = 0;
    if (nc == 3) {
        imp_vec3 n = imp_cross(imp_sub(c[1], c[0]), imp_sub(c[2], c[0]));
        axes[na++] = n;
        for (int k = 0; k < 3; ++k)
            axes[na++] = imp_cross(imp_sub(c[(k + 1) % 3], c[k]), n);
    } else {
        imp_vec3 e = imp_sub(c[1], c[0]);
        axes[na++] = e;
        if (dim == 2) axes[na++] = imp_v3(e.y, -e.x, 0.0);
    }
    double best = -INFINITY;
    for (int a = 0; a < na; ++a) {
        double l = imp_len(axes[a]);
        if (!(l > 0.0)) continue;
        imp_vec3 u = imp_scale(axes[a], 1.0 / l);
        double clo = INFINITY, chi = -INFINITY, blo = INFINITY, bhi = -INFINITY;
        for (int k = 0; k < nc; ++k) {
            double x = imp_dot(u, c[k]);
            clo = imp_fmin(clo, x), chi = imp_fmax(chi, x);
        }
        for (size_t k = 0; k < np; ++k) {
            double x = imp_dot(u, imp_add(p, pts[k]));
            blo = imp_fmin(blo, x), bhi = imp_fmax(bhi, x);
        }
        best = imp_fmax(best, imp_fmax(blo - r - chi, clo - bhi - r));
    }
    return best;
}

/* The planes still touching the body at p, time t, after contact `hit`
 * (its own plane first), into *planes. CORRECT_OK, or CORRECT_FAILED (*why). */
static int touching_planes(solver *sv, imp_vec3 p, double t, const contact *hit, double skin,
                           imp_vec3 **planes, size_t *k, size_t *cap, imp_failure *why) {
    const imp_move_input *in = sv->in;
    *k = 0;
    if (add_plane(planes, k, cap, hit->r.normal)) return *why = IMP_FAILURE_NOMEM, CORRECT_FAILED;
    imp_shape ms;
    mover_at(sv, t, &ms);
    for (size_t c = 0; c < sv->n_cand; ++c) {
        if (!hit->world && sv->cand[c] == hit->who) continue;
        imp_shape s;
        imp_motion m;
        obstacle_at(&in->obstacles[sv->cand[c]], t, sv->verts, &s, &m);
        imp_overlap_result o = imp_overlap(&ms, p, &s, m.p, in->dim);
        if (o.state == IMP_OVERLAP_FAILED) return *why = o.failure, CORRECT_FAILED;
        if ((o.state == IMP_OVERLAP_OVERLAPPING ||
             o.distance <= IMP_MOVE_TOUCH_BAND_SKINS * skin + pair_tol(sv, &s, &m)) &&
            add_plane(planes, k, cap, o.normal))
            return *why = IMP_FAILURE_NOMEM, CORRECT_FAILED;
    }
    double band = IMP_MOVE_TOUCH_BAND_SKINS * skin +
                  IMP_MOVE_TOUCH_REL * imp_fmax(sv->move_scale, imp_max_abs(p));
    if (world_near(sv, p, ZERO, 0.0, band) != 0) return *why = IMP_FAILURE_NOMEM, CORRECT_FAILED;
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r;
    size_t np = imp_shape_points(&ms, in->dim, buf, &pts, &r);
    /* far above the band and the rounding of both distances (1e-6 of the scale) */
    double clear = band + IMP_MOVE_CULL_MARGIN_REL * imp_fmax(sv->move_scale, imp_max_abs(p));
    for (size_t j = 0; j < sv->n_near; ++j) {
        size_t prim = sv->near[j];
        if (hit->world && prim == hit->who) continue;
        imp_vec3 c[3];
        int nc = imp_world_prim_corners(in->world, prim, c);
        if (nc && np && corner_gap(c, nc, pts, np, r, p, in->dim) > clear) continue;
        imp_overlap_result o = imp_world_prim_overlap(in->world, &ms, p, prim);
        if (o.state == IMP_OVERLAP_FAILED) return *why = o.failure, CORRECT_FAILED;
        if (o.state != IMP_OVERLAP_OVERLAPPING && !(o.distance <= band)) continue;
        /* the contact point: the body's point nearest the primitive */
        imp_vec3 at = support(&ms, in->dim, p, o.normal);
        imp_vec3 n = imp_neg(imp_world_surface_normal(in->world, prim, at, imp_neg(o.normal)));
        if (add_plane(planes, k, cap, n)) return *why = IMP_FAILURE_NOMEM, CORRECT_FAILED;
    }
    return CORRECT_OK;
}

/* The corrected path: legs of collide and slide from `from` towards
 * `target`. CORRECT_OK, CORRECT_FAILED (*why says why a query failed) or
 * CORRECT_STOPPED. */
static int correct(solver *sv, imp_vec3 target, imp_move_result *res, imp_failure *why) {
    const imp_move_input *in = sv->in;
    const double skin = IMP_MOVE_SKIN_REL * sv->move_scale;
    imp_vec3 p = in->from, v = imp_scale(imp_sub(target, in->from), 1.0 / in->dt);
    imp_vec3 *planes = NULL;
    size_t cap = 0;
    double t = 0.0;
    int rc = CORRECT_OK;
    res->n_legs = 0;
    res->iterations = 0;
    for (;;) {
        double T = in->dt - t;
        if (!(T > 0.0)) break; /* the last contact came at dt: done */
        res->legs[res->n_legs++] = (imp_move_leg){t, p, v};
        contact best;
        memset(&best, 0, sizeof best);
        int have = first_contact(sv, p, v, t, T, &best, why);
        if (have < 0) {
            rc = have;
            break;
        }
        if (!have) {
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
        double th = best.r.time, speed = imp_len(v);
        imp_vec3 q = imp_madd(p, v, th);
        if (speed > 0.0 && imp_dot(v, best.r.normal) > 0.0)
            q = imp_madd(q, v, -imp_fmin(skin, speed * th) / speed);
        p = q;
        t += th;
        size_t k = 0;
        rc = touching_planes(sv, p, t, &best, skin, &planes, &k, &cap, why);
        if (rc != CORRECT_OK) break;
        v = slide(v, planes, k, in->dim);
    }
    free(planes);
    res->position = p;
    res->velocity = v;
    return rc;
}

/* The world's primitives the straight move runs into: one tunnelling
 * violation per collider (its first contact). 0, -1 failed (*why), -2 stopped. */
static int world_tunnelling(solver *sv, imp_vec3 v, imp_move_result *res, size_t *cap,
                            imp_failure *why) {
    const imp_move_input *in = sv->in;
    if (world_near(sv, in->from, v, in->dt, 0.0) != 0) return *why = IMP_FAILURE_NOMEM, -1;
    size_t first = res->n_violations;
    imp_world_cast cast = {in->shape, {in->from, v, ZERO}, in->dt, in->filter, in->w, in->stop};
    imp_world_cast_prep prep;
    if (sv->n_near) prep = imp_world_cast_prepare(in->world, &cast);
    for (size_t j = 0; j < sv->n_near; ++j) {
        contact c;
        int k = world_leg_contact(sv, &prep, sv->near[j], &c);
        if (k == LEG_STOPPED) return -2;
        if (k == LEG_FAILED) return *why = c.r.failure, -1;
        if (c.r.state != IMP_TOI_NONE) {
            if (world_grow_index(&sv->touched, &sv->cap_touched, sv->n_touched) != 0)
                return *why = IMP_FAILURE_NOMEM, -1;
            sv->touched[sv->n_touched++] = sv->near[j];
        }
        if (k != LEG_CONTACT) continue;
        if (!sv->straight_have || contact_before(&c, sv->straight_best))
            *sv->straight_best = c, sv->straight_have = 1;
        int over = c.r.state == IMP_TOI_OVERLAPPING;
        if (add_violation(res, cap,
                          (imp_move_violation){.kind = IMP_MOVE_TUNNELING,
                                               .in_world = 1,
                                               .collider = c.collider,
                                               .index = c.index,
                                               .prim_kind = c.kind,
                                               .time = c.r.time,
                                               .point = c.r.point,
                                               .normal = c.r.normal,
                                               .depth = over ? c.r.depth : 0.0,
                                               .has_depth = over}))
            return *why = IMP_FAILURE_NOMEM, -1;
    }
    keep_first_per_collider(res, first);
    sv->straight_done = 1;
    sv->straight_v = v;
    return 0;
}

/* The world's primitives `to` lies inside: one penetration violation per
 * collider (its deepest). 0, -1 failed (*why), -2 stopped. */
static int world_penetration(solver *sv, imp_move_result *res, size_t *cap, imp_failure *why) {
    const imp_move_input *in = sv->in;
    size_t first = res->n_violations;
    double tol = IMP_MOVE_TOUCH_REL * sv->move_scale;
    imp_shape ms; /* the mover as it ends, turned */
    mover_at(sv, in->dt, &ms);
    /* the body at `to` overlaps a primitive only if the straight move reached it: the
     * tunnelling check's cast reported some contact with it over [0, dt] */
    for (size_t j = 0; j < sv->n_touched; ++j) {
        if (poll_stop(sv)) return -2;
        size_t prim = sv->touched[j];
        imp_overlap_result o = imp_world_prim_overlap(in->world, &ms, in->to, prim);
        if (o.state == IMP_OVERLAP_FAILED) return *why = o.failure, -1;
        if (o.state != IMP_OVERLAP_OVERLAPPING || !(o.depth > tol)) continue;
        imp_vec3 deep = support(&ms, in->dim, in->to, o.normal);
        imp_vec3 n = imp_neg(imp_world_surface_normal(in->world, prim, deep, imp_neg(o.normal)));
        uint32_t collider, index;
        imp_world_prim_id(in->world, prim, &collider, &index);
        if (add_violation(res, cap,
                          (imp_move_violation){.kind = IMP_MOVE_PENETRATION,
                                               .in_world = 1,
                                               .collider = collider,
                                               .index = index,
                                               .prim_kind = imp_world_prim_kind_of(in->world, prim),
                                               .time = in->dt,
                                               .point = imp_madd(deep, o.normal, -0.5 * o.depth),
                                               .normal = n,
                                               .depth = o.depth,
                                               .has_depth = 1}))
            return *why = IMP_FAILURE_NOMEM, -1;
    }
    keep_first_per_collider(res, first);
    return 0;
}

imp_move_result imp_move_check(const imp_move_input *in) {
    assert(in->dim == 2 || in->dim == 3);
    assert(in->dt > 0.0 && isfinite(in->dt));
    assert(in->max_speed >= 0.0);
    assert(in->max_iterations >= 0 && in->max_iterations <= IMP_MOVE_MAX_ITERATIONS);
    assert(in->shape->type != IMP_SHAPE_HALFSPACE);
    assert(!in->world || imp_world_describe(in->world).dim == in->dim);
    imp_move_result res = {.state = IMP_MOVE_OK};
    imp_failure why = IMP_FAILURE_NOMEM;
    const size_t n = in->n_obstacles;
    size_t cap = 0;
    int rc = 0;

    imp_vec3 d = imp_sub(in->to, in->from);
    double dist = imp_len(d);
    contact straight_best;
    memset(&straight_best, 0, sizeof straight_best);
    solver sv = {.in = in,
                 .extent = mover_turns(in) ? imp_shape_extent(in->shape, in->dim)
                                           : shape_extent(in->shape, in->dim),
                 .straight_best = &straight_best};
    sv.move_scale =
        imp_fmax(imp_fmax(imp_max_abs(in->from), imp_max_abs(in->to)), imp_fmax(dist, sv.extent));
    sv.cand = malloc((n ? n : 1) * sizeof *sv.cand);
    size_t most_verts = 1;
    for (size_t i = 0; i < n; ++i)
        if (obstacle_turns(&in->obstacles[i]) && in->obstacles[i].shape->n_verts > most_verts)
            most_verts = in->obstacles[i].shape->n_verts;
    sv.verts = malloc(most_verts * sizeof *sv.verts);
    sv.mverts = malloc((in->shape->n_verts ? in->shape->n_verts : 1) * sizeof *sv.mverts);
    if (!sv.cand || !sv.verts || !sv.mverts) goto fail;
    for (size_t i = 0; i < n; ++i) {
        assert(imp_toi_shapes_closed_form(in->shape, in->obstacles[i].shape, in->dim));
        if (imp_filter_touch(in->filter, in->obstacles[i].filter) &&
            reachable(&sv, &in->obstacles[i]))
            sv.cand[sv.n_cand++] = i;
    }

    double speed = dist / in->dt;
    if (speed > in->max_speed &&
        add_violation(&res, &cap, (imp_move_violation){.kind = IMP_MOVE_SPEED, .speed = speed}))
        goto fail;

    imp_vec3 v = imp_scale(d, 1.0 / in->dt);
    for (size_t c = 0; c < sv.n_cand; ++c) {
        size_t i = sv.cand[c];
        imp_toi_result r;
        int k = leg_contact(&sv, i, in->from, v, 0.0, in->dt, &r);
        if (k == LEG_STOPPED) {
            rc = -2;
            goto fail;
        }
        if (k == LEG_FAILED) {
            why = r.failure;
            goto fail;
        }
        if (k == LEG_CONTACT &&
            add_violation(
                &res, &cap,
                (imp_move_violation){.kind = IMP_MOVE_TUNNELING,
                                     .obstacle = i,
                                     .time = r.time,
                                     .point = r.point,
                                     .normal = r.normal,
                                     .depth = r.state == IMP_TOI_OVERLAPPING ? r.depth : 0.0,
                                     .has_depth = r.state == IMP_TOI_OVERLAPPING}))
            goto fail;
    }
    if (in->world && (rc = world_tunnelling(&sv, v, &res, &cap, &why)) != 0) goto fail;
    for (size_t c = 0; c < sv.n_cand; ++c) {
        size_t i = sv.cand[c];
        imp_shape s;
        imp_motion m;
        obstacle_at(&in->obstacles[i], in->dt, sv.verts, &s, &m);
        imp_shape ms;
        mover_at(&sv, in->dt, &ms);
        imp_overlap_result o = imp_overlap(&ms, in->to, &s, m.p, in->dim);
        if (o.state == IMP_OVERLAP_FAILED) {
            why = o.failure;
            goto fail;
        }
        if (o.state == IMP_OVERLAP_OVERLAPPING && o.depth > pair_tol(&sv, &s, &m)) {
            imp_vec3 deep = support(&ms, in->dim, in->to, o.normal);
            if (add_violation(
                    &res, &cap,
                    (imp_move_violation){.kind = IMP_MOVE_PENETRATION,
                                         .obstacle = i,
                                         .time = in->dt,
                                         .point = imp_madd(deep, o.normal, -0.5 * o.depth),
                                         .normal = o.normal,
                                         .depth = o.depth,
                                         .has_depth = 1}))
                goto fail;
        }
    }
    if (in->world && (rc = world_penetration(&sv, &res, &cap, &why)) != 0) goto fail;
    if (res.n_violations > 1)
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
        rc = correct(&sv, target, &res, &why);
        if (rc != CORRECT_OK) goto fail;
    }
    free(sv.cand);
    free(sv.verts);
    free(sv.mverts);
    free(sv.near);
    free(sv.touched);
    return res;
fail:
    free(sv.cand);
    free(sv.verts);
    free(sv.mverts);
    free(sv.near);
    free(sv.touched);
    free(res.violations);
    if (rc == -2 || sv.stopped_by)
        return (imp_move_result){.state = IMP_MOVE_STOPPED, .stopped_by = sv.stopped_by};
    return (imp_move_result){.state = IMP_MOVE_FAILED, .failure = why};
}

void imp_move_result_free(imp_move_result *r) {
    if (!r) return;
    free(r->violations);
    r->violations = NULL;
    r->n_violations = 0;
}
