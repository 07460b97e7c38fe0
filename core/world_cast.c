/*
 * world_cast.c - the first contact of a moving body with a world.
 *
 * DESIGN
 * What: imp_world_shapecast and its per-primitive test: a body of any
 * shape on a parabolic path p + v t + a t^2 / 2, against every triangle,
 * segment and convex collider, over [0, horizon], with the rules of
 * imp_toi_shapes (the contract's /v1/toi).
 * How: per primitive, the existing exact casts. A triangle is a flat
 * convex polygon: the body's points (core/shape.h) against the triangle's
 * three corners go to the configuration-space cast of core/toi_rounded.h
 * (imp_toi_rounded_3d_points), which builds the Minkowski difference of
 * the two point sets (a prism or polytope; flat for a sphere, a point, or a
 * segment parallel to the triangle) and finds the first root over its
 * faces, edges and vertices grown by the body's radius: exact roots, for
 * every body shape, with flat_ok so that a point or a segment of radius 0
 * crossing the triangle is a contact too. A 2D chain segment is a segment
 * shape and a convex collider itself, both through imp_toi_shapes. The
 * normal is turned to run from the collider towards the body; a one-sided
 * triangle or segment ignores a contact whose normal points to its back.
 * Before solving, cheap necessary conditions: the body's projection on
 * a triangle's (or segment's) normal, swept over the whole window, must
 * reach the triangle's plane, and likewise on the separating axes of the
 * sweep (the motion's direction or chord across each edge, the body's
 * segment across both, the normal of a bending path's plane): most
 * triangles near a path are never reached, and the exact cast costs
 * quartic roots per edge and vertex. Each test is inside the
 * per-primitive function, so the loop over primitives makes it too; it
 * only has to drop no contact the solver would report, which its padding
 * ensures (may_reach_along).
 * The walk: the body's swept bounds over [0, T] are a box that grows with
 * T (per axis the start box, plus the negative parts of v T and a T^2 / 2
 * below and their positive parts above, plus a padding of
 * IMP_WORLD_PAD_REL of the scale both ways; each term is monotone in T in
 * floating point too, so the box for a smaller T lies inside the one for
 * a larger T). Nodes are entered
 * while they meet the box for the best time so far (the horizon at
 * first), nearer child first along the motion; so the time bound shrinks
 * as contacts are found. A primitive's own test keeps a contact only if
 * its box meets the swept box at the contact's time (a contact outside
 * is beyond anything rounding explains, and is dropped), so a primitive
 * the walk skipped could not have come first, and the answer equals the
 * loop over every primitive in the order time, overlapping before hitting,
 * collider, index. A primitive whose solver failed matters when its box
 * meets the swept box at the final time; the first such by collider and
 * index fails the query, in the walk and in the loop alike. So the walk
 * also skips, within a leaf, a primitive whose box misses the swept box
 * at the best time so far (beyond_bound).
 * Turning bodies (a shape other than a sphere with angular velocity w):
 * imp_toi_rotating against each primitive (a triangle as the flat polytope
 * of its corners, b_triangle), so every time is certified with its
 * tolerance; the body's bounds are those of every orientation within the
 * horizon (imp_shape_turning_bounds), constant in T, and the culling axes
 * see its bounding sphere. The walk searches a primitive only up to
 * imp_world_cast_window of the best time so far (four refinement widths
 * past it): the solver's steps from t = 0 do not depend on where its window
 * ends until they reach it, so every contact up to the best is found as
 * over the whole horizon, and anything found later loses; the walk still
 * equals the loop (for |w| horizon <= IMP_ROT_MAX_ANGLE, where no search
 * fails).
 * Why: the exact casts already exist; the world only adds the flat
 * triangle (no hull of three points) and the time-bounded walk.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "toi_rotating.h"
#include "toi_rounded.h"
#include "toi_shapes.h"
#include "tolerance.h"
#include "world_impl.h"

imp_world_cast_prep imp_world_cast_prepare(const imp_world *w, const imp_world_cast *cast) {
    assert(cast->shape->type != IMP_SHAPE_HALFSPACE && cast->horizon > 0.0);
    imp_world_cast_prep p;
    memset(&p, 0, sizeof p);
    p.cast = cast;
    p.dim = w->dim;
    double extent = world_shape_bounds(cast->shape, w->dim, imp_v3(0, 0, 0), &p.blo, &p.bhi);
    p.turning = imp_shape_turns(cast->shape, cast->w);
    if (p.turning) { /* every orientation it takes within the horizon (an unbounded one: the
                        bounding sphere, to which the chord's box gives way) */
        extent = p.turn_extent = imp_shape_extent(cast->shape, w->dim);
        imp_shape_turning_bounds(cast->shape, cast->w, imp_fmin(cast->horizon, DBL_MAX), w->dim,
                                 &p.blo, &p.bhi);
    }
    p.pad = IMP_WORLD_PAD_REL * (w->scale + imp_max_abs(cast->motion.p) + extent);
    return p;
}

/* The swept box over [0, T] (T may be INFINITY); monotone in T. */
static void swept(const imp_world_cast_prep *p, double T, double lo[3], double hi[3]) {
    const imp_motion *m = &p->cast->motion;
    double P[3] = {m->p.x, m->p.y, m->p.z}, V[3] = {m->v.x, m->v.y, m->v.z};
    double A[3] = {m->a.x, m->a.y, m->a.z};
    double bl[3] = {p->blo.x, p->blo.y, p->blo.z}, bh[3] = {p->bhi.x, p->bhi.y, p->bhi.z};
    double vm = imp_max_abs(m->v), am = imp_max_abs(m->a);
    double pad =
        p->pad + IMP_WORLD_PAD_REL * ((vm > 0.0 ? vm * T : 0.0) + (am > 0.0 ? am * T * T : 0.0));
    for (int k = 0; k < 3; ++k) {
        /* v t and a t^2 / 2 over [0, T] lie between 0 and their values at T, each
         * monotone in T (and T may be infinite: no 0 * inf) */
        double vt = V[k] != 0.0 ? V[k] * T : 0.0;
        double at = A[k] != 0.0 ? 0.5 * A[k] * T * T : 0.0;
        lo[k] = P[k] + bl[k] + (vt < 0.0 ? vt : 0.0) + (at < 0.0 ? at : 0.0) - pad;
        hi[k] = P[k] + bh[k] + (vt > 0.0 ? vt : 0.0) + (at > 0.0 ? at : 0.0) + pad;
    }
}

/* world_prim_bounds of a bounded primitive, as arrays (a triangle's or
 * segment's by world_corner_box). */
static void prim_box(const imp_world *w, const world_prim *pr, double a[3], double b[3]) {
    imp_world_collider_kind kind = w->colliders[pr->collider].kind;
    if (kind != IMP_WORLD_SHAPE) {
        world_corner_box(pr, kind == IMP_WORLD_CHAIN ? 2 : 3, a, b);
        return;
    }
    imp_vec3 lo, hi;
    world_prim_bounds(w, pr, &lo, &hi);
    a[0] = lo.x, a[1] = lo.y, a[2] = lo.z, b[0] = hi.x, b[1] = hi.y, b[2] = hi.z;
}

int imp_world_cast_reaches(const imp_world *w, const imp_world_cast_prep *p, size_t i, double t) {
    assert(i < w->n_prims);
    if (i >= w->n_bvh) return 1; /* a halfspace */
    double a[3], b[3], sl[3], sh[3];
    prim_box(w, &w->prims[i], a, b);
    swept(p, t, sl, sh);
    return world_boxes_meet(a, b, sl, sh);
}

/* The range [*lo, *hi] of p + v t + a t^2 / 2 over t in [0, T], T possibly
 * infinite (then a side that grows without bound is infinite). */
static void scalar_range(double p, double v, double a, double T, double *lo, double *hi) {
    if (isfinite(T)) {
        imp_path_range(p, v, a, T, lo, hi);
        return;
    }
    double apex = p;
    if (a != 0.0 && -v / a > 0.0) apex = p + 0.5 * v * (-v / a);
    *lo = a < 0.0 || (a == 0.0 && v < 0.0) ? -INFINITY : imp_fmin(p, apex);
    *hi = a > 0.0 || (a == 0.0 && v > 0.0) ? INFINITY : imp_fmax(p, apex);
}

/* The body's points relative to its position and its radius (the rounded
 * hull of the points is the body), as the solvers see it. */
typedef struct body_points {
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    size_t n;
    double r;
    double pad; /* the swept bounds' padding over the whole horizon */
} body_points;

/* Whether the body may come within reach of flat primitive pr (a
 * triangle, or a 2D segment) along the unit axis n within the horizon:
 * the body's projection on n (its points' projections widened by its
 * radius), swept over [0, horizon], must come within the padding of the
 * primitive's own projection. The projections of two sets that touch
 * overlap on every axis, so a gap along any one axis rules out a contact:
 * a necessary condition for any contact the solvers report (they report
 * one only within their tolerances, at most IMP_TOI_ADVANCE_REL or
 * IMP_CONTACT_REL of the pair's scale, of touching), and the padding
 * (IMP_WORLD_PAD_REL of the position's, the world's, the body's and the
 * path's magnitudes, as the swept bounds) exceeds those tolerances and
 * the few ulps of each dot product and of the path's range here by orders
 * of magnitude. */
static int may_reach_along(const imp_world *w, const imp_world_cast_prep *p, const world_prim *pr,
                           const body_points *b, imp_vec3 n) {
    int nv = w->colliders[pr->collider].kind == IMP_WORLD_CHAIN ? 2 : 3;
    double plo = INFINITY, phi = -INFINITY; /* finite dot products: plain comparisons */
    for (int i = 0; i < nv; ++i) {
        double x = imp_dot(n, pr->v[i]);
        plo = x < plo ? x : plo;
        phi = x > phi ? x : phi;
    }
    double blo = INFINITY, bhi = -INFINITY;
    for (size_t i = 0; i < b->n; ++i) {
        double x = imp_dot(n, b->pts[i]);
        blo = x < blo ? x : blo;
        bhi = x > bhi ? x : bhi;
    }
    const imp_motion *m = &p->cast->motion;
    double lo, hi;
    scalar_range(imp_dot(n, m->p), imp_dot(n, m->v), imp_dot(n, m->a), p->cast->horizon, &lo, &hi);
    return lo + blo - b->r - b->pad <= phi && hi + bhi + b->r + b->pad >= plo;
}

/* The same along u x v made unit; 1 when that is zero (no axis). */
static int may_reach_across(const imp_world *w, const imp_world_cast_prep *p, const world_prim *pr,
                            const body_points *b, imp_vec3 u, imp_vec3 v) {
    imp_vec3 n = imp_normalize_or(imp_cross(u, v), imp_v3(0, 0, 0));
    return imp_max_abs(n) == 0.0 || may_reach_along(w, p, pr, b, n);
}

/* Whether the body may reach flat primitive pr within the horizon (a
 * necessary condition, far cheaper than the cast, which costs quartic
 * roots per edge and vertex): no gap along the plane's normal (or a 2D
 * segment's) and, for a 3D triangle, along the separating axes of a body
 * moving along d on a straight line: d x e for each edge e of the
 * triangle, and for a segment or capsule of axis s, d x s and s x e; d is
 * v, or the chord v T + a T^2 / 2 of a bending path (whose bulge the
 * path's range along each axis covers), which then adds the axis v x a
 * normal to the path's plane. Every axis is a separating axis candidate only: a gap
 * along any of them rules a contact out (may_reach_along), so the choice
 * of axes decides how many triangles are culled, never an answer. */
static int may_reach(const imp_world *w, const imp_world_cast_prep *p, const world_prim *pr) {
    body_points b;
    b.n = imp_shape_points(p->cast->shape, w->dim, b.buf, &b.pts, &b.r);
    if (p->turning) { /* in any orientation: its bounding sphere about the position */
        b.buf[0] = imp_v3(0, 0, 0);
        b.pts = b.buf;
        b.n = 1;
        b.r = p->turn_extent;
    }
    const imp_motion *m = &p->cast->motion;
    double T = p->cast->horizon, vm = imp_max_abs(m->v), am = imp_max_abs(m->a);
    b.pad =
        p->pad + IMP_WORLD_PAD_REL * ((vm > 0.0 ? vm * T : 0.0) + (am > 0.0 ? am * T * T : 0.0));
    imp_vec3 n = imp_normalize_or(world_prim_front(w, pr), imp_v3(0, 0, 0));
    if (imp_max_abs(n) != 0.0 && !may_reach_along(w, p, pr, &b, n)) return 0;
    if (w->dim != 3 || w->colliders[pr->collider].kind == IMP_WORLD_CHAIN) return 1;
    /* the chord of the whole window when the path bends (it is along v
     * when it does not), and the normal of the path's plane, along which
     * the path does not move at all */
    imp_vec3 d = m->v;
    if (imp_max_abs(m->a) > 0.0) {
        d = imp_madd(imp_scale(m->v, T), m->a, 0.5 * T * T);
        if (imp_max_abs(m->v) > 0.0 && !may_reach_across(w, p, pr, &b, m->v, m->a)) return 0;
    }
    const imp_shape *sh = p->cast->shape;
    int seg = !p->turning && (sh->type == IMP_SHAPE_CAPSULE || sh->type == IMP_SHAPE_SEGMENT);
    imp_vec3 s = imp_sub(sh->b, sh->a);
    if (seg && !may_reach_across(w, p, pr, &b, d, s)) return 0;
    for (int i = 0; i < 3; ++i) {
        imp_vec3 e = imp_sub(pr->v[(i + 1) % 3], pr->v[i]);
        if (!may_reach_across(w, p, pr, &b, d, e)) return 0;
        if (seg && !may_reach_across(w, p, pr, &b, s, e)) return 0;
    }
    return 1;
}

/* A turning body against primitive pr, as imp_toi_rotating answers (normal from the body):
 * a convex collider itself, a 2D chain's segment as a segment shape, a triangle as the
 * flat polytope of its three corners (b_triangle). *stopped as imp_toi_rotating's. */
static imp_toi_result solve_turning(const imp_world *w, const imp_world_cast_prep *p,
                                    const world_prim *pr, double window, int *stopped) {
    const imp_world_cast *c = p->cast;
    const world_collider *col = &w->colliders[pr->collider];
    imp_vec3 corners[3] = {pr->v[0], pr->v[1], pr->v[2]};
    imp_shape prim = {.type = IMP_SHAPE_SEGMENT, .a = pr->v[0], .b = pr->v[1]};
    imp_toi_rotating_input in = {.a = c->shape,
                                 .b = &prim,
                                 .ma = c->motion,
                                 .wa = c->w,
                                 .dim = w->dim,
                                 .horizon = window,
                                 .stop = c->stop};
    if (col->kind == IMP_WORLD_SHAPE) {
        in.b = &col->shape;
        in.mb.p = col->position;
    } else if (col->kind != IMP_WORLD_CHAIN) {
        prim = (imp_shape){.type = IMP_SHAPE_POLYHEDRON, .verts = corners, .n_verts = 3};
        in.b_triangle = 1;
    }
    return imp_toi_rotating(&in, stopped);
}

/* The body against primitive pr, as imp_toi_shapes answers (normal from the body). */
static imp_toi_result solve(const imp_world *w, const imp_world_cast_prep *p, const world_prim *pr,
                            double window, int *stopped) {
    const imp_world_cast *c = p->cast;
    const world_collider *col = &w->colliders[pr->collider];
    imp_motion still = {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)};
    if (p->turning) return solve_turning(w, p, pr, window, stopped);
    if (col->kind == IMP_WORLD_SHAPE) {
        still.p = col->position;
        return imp_toi_shapes(c->shape, &c->motion, &col->shape, &still, w->dim, c->horizon);
    }
    if (col->kind == IMP_WORLD_CHAIN) {
        imp_shape seg = {.type = IMP_SHAPE_SEGMENT, .a = pr->v[0], .b = pr->v[1]};
        return imp_toi_shapes(c->shape, &c->motion, &seg, &still, w->dim, c->horizon);
    }
    imp_vec3 buf[8];
    imp_toi_rounded_input in = {.a = c->motion, .b = still, .horizon = c->horizon};
    in.na = imp_shape_points(c->shape, 3, buf, &in.va, &in.ra);
    in.vb = pr->v;
    in.nb = 3;
    return imp_toi_rounded_3d_points(&in, 1);
}

imp_world_cast_result imp_world_cast_prim(const imp_world *w, const imp_world_cast_prep *p,
                                          size_t i) {
    return imp_world_cast_prim_within(w, p, i, p->cast->horizon);
}

double imp_world_cast_window(const imp_world_cast_prep *p, double bound) {
    if (!p->turning) return p->cast->horizon;
    return imp_fmin(p->cast->horizon, bound + 4.0 * IMP_ROT_TIME_REL * imp_fmax(1.0, bound));
}

imp_world_cast_result imp_world_cast_prim_within(const imp_world *w, const imp_world_cast_prep *p,
                                                 size_t i, double window) {
    assert(i < w->n_prims);
    const world_prim *pr = &w->prims[i];
    const world_collider *col = &w->colliders[pr->collider];
    imp_world_cast_result res;
    memset(&res, 0, sizeof res);
    if (!world_prim_touches(w, pr, p->cast->filter)) return res;
    if (!imp_world_cast_reaches(w, p, i, p->cast->horizon)) return res;
    if (col->kind != IMP_WORLD_SHAPE && !may_reach(w, p, pr)) return res;
    int stopped = 0;
    imp_toi_result r = solve(w, p, pr, window, &stopped);
    if (stopped) {
        res.state = IMP_WORLD_STOPPED;
        res.stopped_by = stopped;
        return res;
    }
    if (r.state == IMP_TOI_FAILED) {
        res.state = IMP_WORLD_FAILED;
        res.failure = r.failure;
        return res;
    }
    if (r.state == IMP_TOI_NONE) return res;
    imp_vec3 n = imp_neg(r.normal);
    if (col->one_sided && col->kind != IMP_WORLD_SHAPE && imp_dot(world_prim_front(w, pr), n) < 0.0)
        return res;
    if (!imp_world_cast_reaches(w, p, i, r.time)) return res;
    res.state = r.state == IMP_TOI_OVERLAPPING ? IMP_WORLD_OVERLAPPING : IMP_WORLD_HIT;
    res.time = r.time;
    res.point = r.point;
    res.normal = imp_v3(n.x + 0.0, n.y + 0.0, n.z + 0.0);
    res.position = r.pa;
    res.depth = r.depth;
    res.tolerance = r.tolerance;
    res.collider = pr->collider;
    res.index = pr->index;
    res.kind = (uint32_t)world_prim_kind(w, pr);
    return res;
}

int imp_world_cast_cmp(const imp_world_cast_result *a, const imp_world_cast_result *b) {
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    int oa = a->state == IMP_WORLD_OVERLAPPING, ob = b->state == IMP_WORLD_OVERLAPPING;
    if (oa != ob) return oa ? -1 : 1;
    if (a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* A cast's work between two polls counts each primitive's solve as this many. */
#define CAST_WORK 16

typedef struct cast_query {
    const imp_world *w;
    imp_world_cast_prep p;
    imp_vec3 dir; /* along the motion: which child to visit first */
    world_poll poll;
    int stopped_by, nomem;
    int have;
    imp_world_cast_result best;
    world_fails fails;
    double swept_t, sl[3], sh[3]; /* the swept box for bound swept_t (NaN: none yet) */
} cast_query;

static double bound(const cast_query *q) { return q->have ? q->best.time : q->p.cast->horizon; }

/* The swept box for the current bound, computed again only when the bound changed. */
static void swept_now(cast_query *q) {
    double b = bound(q);
    if (!(b == q->swept_t)) {
        swept(&q->p, b, q->sl, q->sh);
        q->swept_t = b;
    }
}

static int enter(void *ctx, const double lo[3], const double hi[3]) {
    cast_query *q = ctx;
    swept_now(q);
    return world_boxes_meet(lo, hi, q->sl, q->sh);
}

/* Children whose centre lies further back along the motion go first. */
static double order(void *ctx, const double lo[3], const double hi[3]) {
    const cast_query *q = ctx;
    double key = 0.0, d[3] = {q->dir.x, q->dir.y, q->dir.z};
    for (int k = 0; k < 3; ++k)
        key += d[k] * (lo[k] + hi[k]);
    return key;
}

/* Whether primitive i need not be tested: it is in the hierarchy and its
 * box misses the swept box at the current bound B (imp_world_cast_reaches
 * at B, with the swept box kept for B). Then every contact it could
 * report comes after B: imp_world_cast_prim keeps a contact at t only if
 * the box meets the swept box at t, which for t <= B lies inside the one
 * at B (monotone in T). And its failure could not fail the query: that
 * needs the box to meet the swept box at the final time, <= B. */
static int beyond_bound(cast_query *q, size_t i) {
    if (i >= q->w->n_bvh) return 0;
    double a[3], b[3];
    prim_box(q->w, &q->w->prims[i], a, b);
    swept_now(q);
    return !world_boxes_meet(a, b, q->sl, q->sh);
}

static int test_prims(void *ctx, size_t first, size_t count) {
    cast_query *q = ctx;
    for (size_t i = first; i < first + count; ++i) {
        if (beyond_bound(q, i)) continue;
        /* a turning body's search need not go past the best contact so far */
        double window = imp_world_cast_window(&q->p, bound(q));
        imp_world_cast_result r = imp_world_cast_prim_within(q->w, &q->p, i, window);
        if (r.state == IMP_WORLD_STOPPED) {
            q->stopped_by = r.stopped_by;
            return 1;
        }
        if (r.state == IMP_WORLD_FAILED && world_fails_push(&q->fails, i, r.failure) != 0) {
            q->nomem = 1;
            return 1;
        }
        if ((r.state == IMP_WORLD_HIT || r.state == IMP_WORLD_OVERLAPPING) &&
            (!q->have || imp_world_cast_cmp(&r, &q->best) < 0)) {
            q->best = r;
            q->have = 1;
        }
        if ((q->stopped_by = world_poll_add(&q->poll, CAST_WORK)) != 0) return 1;
    }
    return 0;
}

static int cast_blocks(void *ctx, size_t i) {
    const cast_query *q = ctx;
    return imp_world_cast_reaches(q->w, &q->p, i, bound(q));
}

imp_world_cast_result imp_world_shapecast(const imp_world *w, const imp_world_cast *cast,
                                          const imp_stop *stop) {
    cast_query q;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.p = imp_world_cast_prepare(w, cast);
    q.dir = imp_max_abs(cast->motion.v) > 0.0 ? cast->motion.v : cast->motion.a;
    q.poll.stop = stop;
    q.swept_t = NAN;
    world_walk walk = {enter, order, test_prims, &q};
    if (!test_prims(&q, w->n_bvh, w->n_prims - w->n_bvh)) (void)world_bvh_walk(w, &walk);
    imp_world_cast_result res;
    memset(&res, 0, sizeof res);
    if (q.stopped_by || q.nomem) {
        free(q.fails.f);
        res.state = q.stopped_by ? IMP_WORLD_STOPPED : IMP_WORLD_FAILED;
        res.failure = q.stopped_by ? IMP_FAILURE_NONE : IMP_FAILURE_NOMEM;
        res.stopped_by = q.stopped_by;
        return res;
    }
    size_t failed_prim;
    imp_failure why = world_fails_first(w, &q.fails, cast_blocks, &q, &failed_prim);
    if (why != IMP_FAILURE_NONE) {
        res.state = IMP_WORLD_FAILED;
        res.failure = why;
        return res;
    }
    return q.have ? q.best : res;
}
