/*
 * world_surface.c - the surface around a contact: which primitives are near
 * a box, a placed shape against one primitive, and contact normals judged
 * against the triangles that share the contact's edge or vertex.
 *
 * DESIGN
 * What: what a move that slides over level geometry needs beyond the
 * queries of world.h (core/move_check.c): the primitives near a path, the
 * distance to each, and normals that do not snag on internal edges.
 * How: imp_world_surface_normal classifies the contact by where its point
 * lies on the primitive: the barycentric coordinates of its projection
 * (a segment's parameter), each within IMP_WORLD_FEATURE_REL of zero
 * marking the edge opposite. The interior is the face (answered with the
 * face's own normal, so every triangle of a plane gives one normal, not
 * the solver's roundoff of it: a grazing contact's normal is only good to
 * about the square root of the unit roundoff); one low coordinate is an
 * edge, two a vertex. The primitives sharing that
 * feature are found by a box query of the hierarchy around it, keeping the
 * triangles (or 2D segments) that have every corner of the feature, bit
 * for bit. The normal is genuine when its plane through the contact point
 * supports all of them: no corner lies above it by more than
 * IMP_WORLD_EDGE_REL of its distance from the point. That is the test of a normal against the
 * feature's Voronoi region in the union surface: on a convex edge the genuine normals are the cone
 * between the two faces' normals, on a flat or concave one (or a flat vertex) only the face
 * normals. A normal outside is an artefact of the tessellation (a body a hair below a floor reaches
 * the next triangle's edge with a normal tilted back against its motion) and is replaced by the
 * primitive's own face normal on its side. This is the technique of Bullet's
 * btAdjustInternalEdgeContacts and of Jolt's active edges (an edge is active only where the surface
 * is convex, and an inactive edge's contact takes the face normal), and, for 2D chains, what
 * Box2D's ghost vertices achieve (Catto, "Ghost collisions", 2010); here the
 * adjacency is found when a feature contact happens, so the world stores
 * nothing for it and meshes need no welding by index.
 * Why: a game's floor is thousands of coplanar triangles; a client whose
 * player slides across it must be answered as on the plane itself.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "overlap.h"
#include "tolerance.h"
#include "world_impl.h"

typedef struct box_query {
    double lo[3], hi[3];
    const imp_world *w;
    const imp_filter *f;
    size_t **out, *n, *cap;
    int nomem;
} box_query;

static int box_enter(void *ctx, const double lo[3], const double hi[3]) {
    const box_query *q = ctx;
    return world_boxes_meet(lo, hi, q->lo, q->hi);
}

static int box_push(box_query *q, size_t i) {
    if (!world_prim_touches(q->w, &q->w->prims[i], q->f)) return 0;
    if (world_grow((void **)q->out, q->cap, *q->n, sizeof **q->out) != 0) {
        q->nomem = 1;
        return 1;
    }
    (*q->out)[(*q->n)++] = i;
    return 0;
}

static int box_leaf(void *ctx, size_t first, size_t count) {
    box_query *q = ctx;
    imp_vec3 lo = imp_v3(q->lo[0], q->lo[1], q->lo[2]), hi = imp_v3(q->hi[0], q->hi[1], q->hi[2]);
    for (size_t i = first; i < first + count; ++i)
        if (imp_world_prim_meets_box(q->w, i, lo, hi) && box_push(q, i)) return 1;
    return 0;
}

int imp_world_prim_meets_box(const imp_world *w, size_t i, imp_vec3 lo, imp_vec3 hi) {
    assert(i < w->n_prims);
    if (i >= w->n_bvh) return 1;
    imp_vec3 a, b;
    world_prim_bounds(w, &w->prims[i], &a, &b);
    double pa[3] = {a.x, a.y, a.z}, pb[3] = {b.x, b.y, b.z}, ql[3] = {lo.x, lo.y, lo.z},
           qh[3] = {hi.x, hi.y, hi.z};
    return world_boxes_meet(pa, pb, ql, qh);
}

int imp_world_prims_in_box(const imp_world *w, imp_vec3 lo, imp_vec3 hi, const imp_filter *f,
                           size_t **out, size_t *n, size_t *cap) {
    box_query q = {{lo.x, lo.y, lo.z}, {hi.x, hi.y, hi.z}, w, f, out, n, cap, 0};
    for (size_t i = w->n_bvh; i < w->n_prims && !q.nomem; ++i)
        (void)box_push(&q, i);
    world_walk walk = {box_enter, NULL, box_leaf, &q};
    if (!q.nomem) (void)world_bvh_walk(w, &walk);
    return q.nomem ? -1 : 0;
}

imp_overlap_result imp_world_prim_overlap(const imp_world *w, const imp_shape *shape,
                                          imp_vec3 position, size_t i) {
    assert(i < w->n_prims && shape->type != IMP_SHAPE_HALFSPACE);
    const world_prim *pr = &w->prims[i];
    const world_collider *col = &w->colliders[pr->collider];
    imp_overlap_result r;
    if (col->kind == IMP_WORLD_SHAPE) {
        r = imp_overlap(shape, position, &col->shape, col->position, w->dim);
    } else if (col->kind == IMP_WORLD_CHAIN) {
        imp_shape seg = {.type = IMP_SHAPE_SEGMENT, .a = pr->v[0], .b = pr->v[1]};
        r = imp_overlap(shape, position, &seg, imp_v3(0, 0, 0), w->dim);
    } else {
        r = imp_overlap_triangle(shape, position, pr->v, NULL, NULL);
        if (r.state == IMP_OVERLAP_FAILED) return r;
    }
    /* r's normal runs from the body to the primitive: its front must face the body */
    if (r.state != IMP_OVERLAP_FAILED && col->one_sided && col->kind != IMP_WORLD_SHAPE &&
        imp_dot(world_prim_front(w, pr), r.normal) > 0.0) {
        r.state = IMP_OVERLAP_APART;
        r.distance = INFINITY;
        r.depth = 0.0;
    }
    return r;
}

/* Whether primitive j has every corner in f[0, nf) (bit-identical). */
static int has_corners(const imp_world *w, const world_prim *pj, const imp_vec3 *f, int nf) {
    int nv = w->colliders[pj->collider].kind == IMP_WORLD_CHAIN ? 2 : 3;
    for (int a = 0; a < nf; ++a) {
        int found = 0;
        for (int b = 0; b < nv && !found; ++b)
            found = pj->v[b].x == f[a].x && pj->v[b].y == f[a].y && pj->v[b].z == f[a].z;
        if (!found) return 0;
    }
    return 1;
}

typedef struct around {
    const imp_world *w;
    imp_vec3 f[2]; /* the feature's corners */
    int nf;
    imp_vec3 at; /* the contact point */
    imp_vec3 n;
    double lo[3], hi[3];
    int internal;
} around;

/* Whether n's plane through the contact point leaves primitive pj's corners below it. */
static int supports(const around *q, const world_prim *pj) {
    int nv = q->w->colliders[pj->collider].kind == IMP_WORLD_CHAIN ? 2 : 3;
    for (int b = 0; b < nv; ++b) {
        imp_vec3 d = imp_sub(pj->v[b], q->at);
        if (imp_dot(q->n, d) > IMP_WORLD_EDGE_REL * imp_len(d)) return 0;
    }
    return 1;
}

static int around_leaf(void *ctx, size_t first, size_t count) {
    around *q = ctx;
    for (size_t j = first; j < first + count; ++j) {
        const world_prim *pj = &q->w->prims[j];
        if (world_prim_is_flat(q->w, pj) && has_corners(q->w, pj, q->f, q->nf) &&
            !supports(q, pj)) {
            q->internal = 1;
            return 1;
        }
    }
    return 0;
}

static int around_enter(void *ctx, const double lo[3], const double hi[3]) {
    const around *q = ctx;
    return world_boxes_meet(lo, hi, q->lo, q->hi);
}

/* The corners of primitive pr that form the feature nearest `point`
 * (projected on its plane or line) into q->f: none for its interior. */
static void feature_at(const imp_world *w, const world_prim *pr, imp_vec3 point, around *q) {
    q->nf = 0;
    if (w->colliders[pr->collider].kind == IMP_WORLD_CHAIN) {
        imp_vec3 e = imp_sub(pr->v[1], pr->v[0]);
        double s = imp_dot(imp_sub(point, pr->v[0]), e) / imp_dot(e, e);
        if (s <= IMP_WORLD_FEATURE_REL) q->f[q->nf++] = pr->v[0];
        if (s >= 1.0 - IMP_WORLD_FEATURE_REL) q->f[q->nf++] = pr->v[1];
        return;
    }
    /* barycentric coordinates of the projection: the sub-triangles' signed areas */
    imp_vec3 N = world_prim_front(w, pr);
    double nn = imp_dot(N, N), lam[3];
    for (int k = 0; k < 3; ++k) {
        imp_vec3 b = imp_sub(pr->v[(k + 1) % 3], point), c = imp_sub(pr->v[(k + 2) % 3], point);
        lam[k] = imp_dot(imp_cross(b, c), N) / nn;
    }
    int low = 0;
    for (int k = 0; k < 3; ++k)
        low += lam[k] <= IMP_WORLD_FEATURE_REL;
    if (low == 1) { /* an edge: the corners other than the low one */
        for (int k = 0; k < 3; ++k)
            if (lam[k] > IMP_WORLD_FEATURE_REL) q->f[q->nf++] = pr->v[k];
    } else if (low >= 2) { /* a vertex: the highest coordinate's */
        int k = lam[0] >= lam[1] && lam[0] >= lam[2] ? 0 : lam[1] >= lam[2] ? 1 : 2;
        q->f[q->nf++] = pr->v[k];
    }
}

imp_vec3 imp_world_surface_normal(const imp_world *w, size_t i, imp_vec3 point, imp_vec3 n) {
    assert(i < w->n_prims);
    const world_prim *pr = &w->prims[i];
    if (!world_prim_is_flat(w, pr)) return n;
    imp_vec3 face = imp_normalize_or(world_prim_front(w, pr), imp_v3(0, 0, 0));
    double c = imp_dot(n, face);
    if (c == 0.0) return n; /* within the primitive's plane: no side to turn to */
    imp_vec3 side = c > 0.0 ? face : imp_neg(face);
    around q;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.n = n;
    q.at = point;
    feature_at(w, pr, point, &q);
    if (q.nf == 0) return side; /* the face itself: its own normal */
    /* on an edge or vertex but along the face's normal to rounding: the face's, exactly */
    if (imp_max_abs(imp_sub(n, side)) <= IMP_WORLD_FACE_SNAP) return side;
    imp_vec3 lo = q.f[0], hi = q.f[0];
    if (q.nf == 2) {
        lo = imp_v3(imp_fmin(lo.x, q.f[1].x), imp_fmin(lo.y, q.f[1].y), imp_fmin(lo.z, q.f[1].z));
        hi = imp_v3(imp_fmax(hi.x, q.f[1].x), imp_fmax(hi.y, q.f[1].y), imp_fmax(hi.z, q.f[1].z));
    }
    q.lo[0] = lo.x, q.lo[1] = lo.y, q.lo[2] = lo.z;
    q.hi[0] = hi.x, q.hi[1] = hi.y, q.hi[2] = hi.z;
    world_walk walk = {around_enter, NULL, around_leaf, &q};
    (void)world_bvh_walk(w, &walk);
    return q.internal ? side : n;
}
