/*
 * world_overlap.c - every primitive of a world that a placed shape
 * overlaps or touches.
 *
 * DESIGN
 * What: imp_world_overlap and its per-primitive test: for a body placed
 * where it stands, each triangle, segment and convex collider it overlaps,
 * with the depth and the unit normal along which moving the body by the
 * depth separates them.
 * How: the static overlap of core/overlap.h for every pair, through
 * imp_world_prim_overlap (world_surface.c, shared with the move checker). A triangle is
 * a flat convex polytope (imp_overlap_triangle: its two faces, its three
 * edges with their directions), so the body and the triangle go through
 * the same GJK distance and SAT depth as two polyhedra; a 2D chain segment
 * is a segment shape; a convex collider is itself. A one-sided triangle or segment counts only when
 * that normal points to its front (the body is pushed out on its front
 * side). The hierarchy is walked with the body's bounds padded by
 * IMP_WORLD_PAD_REL of the scale (far above the contact tolerance, within
 * which touching counts); each primitive's own test first compares its
 * box with the same padded bounds, so the walk skips exactly the
 * primitives whose test would say "apart" without solving, and the answer
 * equals the loop over every primitive. Contacts are sorted by collider,
 * then index.
 * Why: one overlap judge for the whole service; the triangle costs no hull
 * of its own (the polytope is filled by hand).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "tolerance.h"
#include "world_impl.h"

imp_world_overlap_prep imp_world_overlap_prepare(const imp_world *w, const imp_shape *shape,
                                                 imp_vec3 position, const imp_filter *filter) {
    assert(shape->type != IMP_SHAPE_HALFSPACE);
    imp_world_overlap_prep p;
    memset(&p, 0, sizeof p);
    p.shape = shape;
    p.position = position;
    p.filter = filter;
    p.dim = w->dim;
    imp_vec3 lo, hi;
    double extent = world_shape_bounds(shape, w->dim, position, &lo, &hi);
    double pad = IMP_WORLD_PAD_REL * (w->scale + imp_max_abs(position) + extent);
    p.lo = imp_v3(lo.x - pad, lo.y - pad, lo.z - pad);
    p.hi = imp_v3(hi.x + pad, hi.y + pad, hi.z + pad);
    return p;
}

int imp_world_overlap_prim(const imp_world *w, const imp_world_overlap_prep *p, size_t i,
                           imp_world_contact *c, imp_failure *why) {
    assert(i < w->n_prims);
    const world_prim *pr = &w->prims[i];
    memset(c, 0, sizeof *c);
    if (!world_prim_touches(w, pr, p->filter)) return 0;
    if (i < w->n_bvh) {
        imp_vec3 lo, hi;
        world_prim_bounds(w, pr, &lo, &hi);
        double a[3] = {lo.x, lo.y, lo.z}, b[3] = {hi.x, hi.y, hi.z};
        double ql[3] = {p->lo.x, p->lo.y, p->lo.z}, qh[3] = {p->hi.x, p->hi.y, p->hi.z};
        if (!world_boxes_meet(a, b, ql, qh)) return 0;
    }
    /* the pair as imp_overlap answers it, a one-sided primitive met from its back apart */
    imp_overlap_result r = imp_world_prim_overlap(w, p->shape, p->position, i);
    if (r.state == IMP_OVERLAP_FAILED) {
        *why = r.failure;
        return -1;
    }
    if (r.state != IMP_OVERLAP_OVERLAPPING) return 0;
    imp_vec3 n = imp_neg(r.normal); /* r's runs from the body to the primitive */
    c->collider = pr->collider;
    c->index = pr->index;
    c->kind = (uint32_t)world_prim_kind(w, pr);
    c->depth = r.depth;
    c->normal = imp_v3(n.x + 0.0, n.y + 0.0, n.z + 0.0);
    return 1;
}

static int contact_cmp(const void *pa, const void *pb) {
    const imp_world_contact *a = pa, *b = pb;
    if (a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

typedef struct overlap_query {
    const imp_world *w;
    imp_world_overlap_prep p;
    double lo[3], hi[3];
    world_poll poll;
    int stopped_by, nomem;
    imp_world_contact *c;
    size_t n, cap;
    world_fails fails;
} overlap_query;

static int enter(void *ctx, const double lo[3], const double hi[3]) {
    const overlap_query *q = ctx;
    return world_boxes_meet(lo, hi, q->lo, q->hi);
}

static int test_prims(void *ctx, size_t first, size_t count) {
    overlap_query *q = ctx;
    for (size_t i = first; i < first + count; ++i) {
        imp_world_contact c;
        imp_failure why = IMP_FAILURE_NONE;
        int rc = imp_world_overlap_prim(q->w, &q->p, i, &c, &why);
        if (rc < 0 && world_fails_push(&q->fails, i, why) != 0) q->nomem = 1;
        if (rc > 0) {
            void *items = q->c;
            if (world_grow(&items, &q->cap, q->n, sizeof c) != 0) {
                q->nomem = 1;
                return 1;
            }
            q->c = items;
            q->c[q->n++] = c;
        }
        if (q->nomem) return 1;
        if ((q->stopped_by = world_poll_add(&q->poll, 16)) != 0) return 1;
    }
    return 0;
}

static int always(void *ctx, size_t i) {
    (void)ctx, (void)i;
    return 1;
}

imp_world_overlap_result imp_world_overlap(const imp_world *w, const imp_shape *shape,
                                           imp_vec3 position, const imp_filter *filter,
                                           const imp_stop *stop) {
    imp_world_overlap_result res;
    memset(&res, 0, sizeof res);
    overlap_query q;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.p = imp_world_overlap_prepare(w, shape, position, filter);
    q.lo[0] = q.p.lo.x, q.lo[1] = q.p.lo.y, q.lo[2] = q.p.lo.z;
    q.hi[0] = q.p.hi.x, q.hi[1] = q.p.hi.y, q.hi[2] = q.p.hi.z;
    q.poll.stop = stop;
    world_walk walk = {enter, NULL, test_prims, &q};
    if (!test_prims(&q, w->n_bvh, w->n_prims - w->n_bvh)) (void)world_bvh_walk(w, &walk);
    size_t failed_prim;
    imp_failure why = IMP_FAILURE_NONE;
    if (q.stopped_by || q.nomem)
        free(q.fails.f);
    else
        why = world_fails_first(w, &q.fails, always, NULL, &failed_prim);
    if (q.stopped_by || q.nomem || why != IMP_FAILURE_NONE) {
        free(q.c);
        res.state = q.stopped_by ? IMP_WORLD_STOPPED : IMP_WORLD_FAILED;
        res.failure = q.stopped_by ? IMP_FAILURE_NONE : q.nomem ? IMP_FAILURE_NOMEM : why;
        res.stopped_by = q.stopped_by;
        return res;
    }
    if (q.n > 0) qsort(q.c, q.n, sizeof *q.c, contact_cmp);
    res.state = q.n > 0 ? IMP_WORLD_HIT : IMP_WORLD_NONE;
    res.contacts = q.n > 0 ? q.c : NULL;
    res.n_contacts = q.n;
    if (q.n == 0) free(q.c);
    return res;
}
