/*
 * overlap_sat.c - separating axes: the penetration depth of intersecting
 * convex cores, and the candidate axes of two 3D polytopes.
 *
 * DESIGN
 * What: the separating axis family of the overlap module (overlap_impl.h):
 * whether two 2D cores intersect and by how much along which normal; the
 * same depth for two 3D polytope cores; and the pair of polytopes with
 * every candidate axis that the swept test of core/toi_polytope_3d.c
 * sweeps (imp_polytope_pair_build).
 * How: two convex shapes are disjoint exactly when their projections on
 * some axis are, and the least overlap over the candidate axes is the
 * penetration depth along that axis (Ericson, "Real-Time Collision
 * Detection", 4.4 and 5.2.1). In 2D the candidates are the edge normals of
 * both cores (for a segment core its normal, for a point core none), and
 * two cores intersect when an edge of one crosses an edge of the other or
 * one contains a vertex of the other. In 3D they are the face normals of
 * both and the cross products of edge directions (a segment core
 * contributes its direction, a point nothing). Small polytopes (up to
 * SAT_DIRECT_PAIRS direction pairs, e.g. two boxes) try every pair of
 * unique directions both ways; larger ones only the edge pairs whose Gauss
 * map arcs cross (Gregorius 2013), which are exactly the edge-edge faces of
 * the Minkowski difference.
 * Why: exact; O(n m) for polygons of n and m vertices, and in 3D
 * O(Fa Vb + Fb Va + Ea Eb) plus a projection per Minkowski edge face: two
 * overlapping polyhedra of 4096 points on a sphere take about a second,
 * game shapes microseconds. Axes closer to parallel than
 * IMP_EDGE_PARALLEL_SIN are skipped, which can only overestimate the depth.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "overlap_impl.h"
#include "tolerance.h"

static double cross2(imp_vec3 a, imp_vec3 b) { return a.x * b.y - a.y * b.x; }

/* 2D: do the segments cross at a point interior to both? */
static int segments_cross(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1) {
    double d1 = cross2(imp_sub(p1, p0), imp_sub(q0, p0)),
           d2 = cross2(imp_sub(p1, p0), imp_sub(q1, p0));
    double d3 = cross2(imp_sub(q1, q0), imp_sub(p0, q0)),
           d4 = cross2(imp_sub(q1, q0), imp_sub(p1, q0));
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

/* 2D: is point x inside (or on) the counter-clockwise polygon core c? */
static int contains(const imp_ov_core *c, imp_vec3 x) {
    if (c->n < 3) return 0;
    for (size_t i = 0; i < c->n; ++i) {
        imp_vec3 e0, e1;
        imp_ov_edge(c, i, &e0, &e1);
        if (cross2(imp_sub(e1, e0), imp_sub(x, e0)) < 0.0) return 0;
    }
    return 1;
}

int imp_ov_cores_intersect_2d(const imp_ov_core *a, const imp_ov_core *b) {
    size_t ae = imp_ov_n_edges(a), be = imp_ov_n_edges(b);
    for (size_t i = 0; i < ae; ++i) {
        imp_vec3 p0, p1;
        imp_ov_edge(a, i, &p0, &p1);
        for (size_t j = 0; j < be; ++j) {
            imp_vec3 q0, q1;
            imp_ov_edge(b, j, &q0, &q1);
            if (segments_cross(p0, p1, q0, q1)) return 1;
        }
    }
    return contains(a, imp_ov_vert(b, 0)) || contains(b, imp_ov_vert(a, 0));
}

/* Projection interval of a core on axis n. */
static void project(const imp_ov_core *c, imp_vec3 n, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < c->n; ++i) {
        double x = imp_dot(imp_ov_vert(c, i), n);
        *lo = imp_fmin(*lo, x);
        *hi = imp_fmax(*hi, x);
    }
}

double imp_ov_sat_depth_2d(const imp_ov_core *a, const imp_ov_core *b, imp_vec3 *normal) {
    double best = INFINITY;
    *normal = imp_v3(1, 0, 0); /* two point cores: every direction is as good */
    const imp_ov_core *cs[2] = {a, b};
    for (int side = 0; side < 2; ++side) {
        const imp_ov_core *c = cs[side];
        for (size_t i = 0; i < imp_ov_n_edges(c); ++i) {
            imp_vec3 e0, e1;
            imp_ov_edge(c, i, &e0, &e1);
            /* scaled, so that a subnormal edge still has its direction (its length
             * squared underflows); a zero-length edge gives no axis */
            imp_vec3 n;
            if (imp_unit_scaled(imp_v3(e1.y - e0.y, e0.x - e1.x, 0), &n, NULL) != 0) continue;
            double alo, ahi, blo, bhi;
            project(a, n, &alo, &ahi);
            project(b, n, &blo, &bhi);
            double push_pos = ahi - blo, push_neg = bhi - alo; /* move b along +n or -n */
            if (push_pos < best) {
                best = push_pos;
                *normal = n;
            }
            if (push_neg < best) {
                best = push_neg;
                *normal = imp_neg(n);
            }
        }
    }
    return best == INFINITY ? 0.0 : imp_fmax(best, 0.0);
}

/* ---- 3D ------------------------------------------------------------------------------- */

/* Overlap of b beyond a along unit n: how far b must move along n to clear a. */
static double push_along(const imp_ov_poly *A, const imp_ov_poly *B, imp_vec3 n) {
    return imp_ov_support(A, n, NULL) + imp_ov_support(B, imp_neg(n), NULL);
}

/* A visitor of candidate axes (unit, oriented from a towards b). */
typedef void (*axis_fn)(void *ctx, imp_vec3 n);

typedef struct depth_ctx {
    const imp_ov_poly *A, *B;
    double best;
    imp_vec3 bn;
} depth_ctx;

static void consider(void *ctx, imp_vec3 n) {
    depth_ctx *c = ctx;
    double x = push_along(c->A, c->B, n);
    if (x < c->best) {
        c->best = x;
        c->bn = n;
    }
}

/* Is unit n on the great arc between unit normals p and q (the Gauss image
 * of an edge)? Inclusive by IMP_EDGE_PARALLEL_SIN: an extra axis costs time,
 * never correctness. */
static int on_arc(imp_vec3 n, imp_vec3 p, imp_vec3 q) {
    double c = imp_dot(p, q) - IMP_EDGE_PARALLEL_SIN;
    return imp_dot(n, p) >= c && imp_dot(n, q) >= c;
}

/* An edge for the Gauss map test: unit direction and the normals of its
 * two faces (as seen in A - B: b's negated); `open` when it has one face. */
typedef struct gauss_edge {
    imp_vec3 d, n0, n1;
    int open;
} gauss_edge;

/* sat_gauss keeps up to this many edges of B on the stack (count; a hull of V vertices has
 * at most 3 V - 6), so that it allocates nothing for the shapes games use */
#define GAUSS_STACK_EDGES 96

static gauss_edge gauss_edge_of(const imp_ov_poly *p, size_t i, double sign) {
    const imp_hull_edge *e = &p->edges[i];
    gauss_edge g;
    g.d = imp_normalize_or(imp_sub(p->local[e->v[1]], p->local[e->v[0]]), imp_v3(0, 0, 0));
    g.open = e->face[1] == IMP_HULL_NONE;
    g.n0 = imp_scale(p->fn[e->face[0]], sign);
    g.n1 = g.open ? g.n0 : imp_scale(p->fn[e->face[1]], sign);
    return g;
}

/* Do the arc's end normals lie on opposite sides of (or on) the plane with
 * normal d? Inclusive by IMP_EDGE_PARALLEL_SIN. */
static int straddles(imp_vec3 d, imp_vec3 n0, imp_vec3 n1) {
    double x0 = imp_dot(d, n0), x1 = imp_dot(d, n1), s = IMP_EDGE_PARALLEL_SIN;
    return !((x0 > s && x1 > s) || (x0 < -s && x1 < -s));
}

/* Edge pairs of two polytopes with many edge directions: only the pairs
 * whose Gauss arcs cross are faces of the Minkowski difference (Gregorius,
 * "The Separating Axis Test between Convex Polyhedra", GDC 2013), so only
 * they can give the minimum; each is evaluated by full projections. Two
 * great arcs cross only if each one's end points straddle the other's
 * plane, which rejects most pairs with four dot products. 0, or -1 when out
 * of memory. */
static int sat_gauss(const imp_ov_poly *A, const imp_ov_poly *B, axis_fn fn, void *ctx) {
    gauss_edge stack[GAUSS_STACK_EDGES];
    gauss_edge *gb = B->ne <= GAUSS_STACK_EDGES ? stack : malloc(B->ne * sizeof *gb);
    if (!gb) return -1;
    for (size_t j = 0; j < B->ne; ++j)
        gb[j] = gauss_edge_of(B, j, -1.0);
    for (size_t i = 0; i < A->ne; ++i) {
        gauss_edge ga = gauss_edge_of(A, i, 1.0);
        for (size_t j = 0; j < B->ne; ++j) {
            const gauss_edge *g = &gb[j];
            int open = ga.open || g->open;
            if (!open && (!straddles(ga.d, g->n0, g->n1) || !straddles(g->d, ga.n0, ga.n1)))
                continue;
            imp_vec3 c = imp_cross(ga.d, g->d);
            double l = imp_len(c);
            if (!(l > IMP_EDGE_PARALLEL_SIN)) continue;
            imp_vec3 n = imp_scale(c, 1.0 / l);
            if (open) { /* no arc to test: both directions */
                fn(ctx, n);
                fn(ctx, imp_neg(n));
                continue;
            }
            if (imp_dot(n, imp_add(ga.n0, ga.n1)) < 0.0) n = imp_neg(n);
            if (on_arc(n, ga.n0, ga.n1) && on_arc(n, g->n0, g->n1)) fn(ctx, n);
        }
    }
    if (gb != stack) free(gb);
    return 0;
}

/* Most direction pairs (count) tested directly, both signs, rather than
 * through the Gauss map: a box against a box (9) or a small polyhedron. */
#define SAT_DIRECT_PAIRS 64

/* Every candidate separating axis of two 3D cores, to fn: the face normals
 * of both (b's reversed) and the edge-direction cross products that can be
 * faces of their Minkowski difference (all of them, both signs, for few
 * directions; the Gauss map test otherwise). 0, or -1 when out of memory. */
static int sat_axes_3d(const imp_ov_poly *A, const imp_ov_poly *B, axis_fn fn, void *ctx) {
    for (size_t i = 0; i < A->nf; ++i)
        fn(ctx, A->fn[i]);
    for (size_t i = 0; i < B->nf; ++i)
        fn(ctx, imp_neg(B->fn[i]));
    if (A->ne > 0 && B->ne > 0 && A->nd * B->nd > SAT_DIRECT_PAIRS) return sat_gauss(A, B, fn, ctx);
    for (size_t i = 0; i < A->nd; ++i)
        for (size_t j = 0; j < B->nd; ++j) {
            imp_vec3 c = imp_cross(A->dirs[i], B->dirs[j]);
            double l = imp_len(c);
            if (!(l > IMP_EDGE_PARALLEL_SIN)) continue;
            imp_vec3 n = imp_scale(c, 1.0 / l);
            fn(ctx, n);
            fn(ctx, imp_neg(n));
        }
    return 0;
}

int imp_ov_sat_depth_3d(const imp_ov_poly *A, const imp_ov_poly *B, double *depth,
                        imp_vec3 *normal) {
    depth_ctx c = {A, B, INFINITY, imp_v3(1, 0, 0)};
    if (sat_axes_3d(A, B, consider, &c) != 0) return -1;
    *normal = c.bn;
    *depth = c.best == INFINITY ? 0.0 : imp_fmax(c.best, 0.0);
    return 0;
}

/* ---- the pair for the swept test ------------------------------------------------------- */

typedef struct collect_ctx {
    imp_vec3 *axes, *store; /* axes starts in store (cap of them) and moves to the heap */
    size_t n, cap;
    int nomem;
} collect_ctx;

static void collect(void *ctx, imp_vec3 n) {
    collect_ctx *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        imp_vec3 *a =
            c->axes == c->store ? malloc(cap * sizeof *a) : realloc(c->axes, cap * sizeof *a);
        if (!a) {
            c->nomem = 1;
            return;
        }
        if (c->axes == c->store)
            for (size_t i = 0; i < c->n; ++i)
                a[i] = c->store[i];
        c->axes = a;
        c->cap = cap;
    }
    c->axes[c->n++] = n;
}

/* p's points, into *room (advancing it past them) when they fit in left */
static imp_vec3 *copy_points(const imp_ov_poly *p, imp_vec3 **room, size_t *left) {
    imp_vec3 *v;
    if (p->n <= *left) {
        v = *room;
        *room += p->n;
        *left -= p->n;
    } else {
        v = malloc((p->n ? p->n : 1) * sizeof *v);
    }
    if (v)
        for (size_t i = 0; i < p->n; ++i)
            v[i] = p->local[i];
    return v;
}

static int in_store(const imp_polytope_pair *p, const imp_vec3 *x) {
    uintptr_t u = (uintptr_t)x, s = (uintptr_t)p->store;
    return u >= s && u < s + sizeof p->store;
}

static int is_polytope_3d(const imp_shape *s) {
    return s->type == IMP_SHAPE_BOX || s->type == IMP_SHAPE_POLYHEDRON;
}

/* The vertices and candidate axes of polytopes A and B into *out: the
 * vertices first in out->store, the axes in what is left of it, each moving
 * to the heap when it does not fit. */
static imp_hull_status fill_pair(const imp_ov_poly *A, const imp_ov_poly *B,
                                 imp_polytope_pair *out) {
    imp_vec3 *room = out->store;
    size_t left = IMP_POLYTOPE_PAIR_INLINE;
    out->va = copy_points(A, &room, &left);
    out->vb = copy_points(B, &room, &left);
    out->na = A->n;
    out->nb = B->n;
    if (!out->va || !out->vb) return IMP_HULL_NOMEM;
    collect_ctx c = {.axes = room, .store = room, .cap = left};
    if (sat_axes_3d(A, B, collect, &c) != 0 || c.nomem) {
        if (c.axes != c.store) free(c.axes);
        return IMP_HULL_NOMEM;
    }
    out->axes = c.axes;
    out->n_axes = c.n;
    return IMP_HULL_OK;
}

imp_hull_status imp_polytope_pair_build(const imp_shape *a, const imp_shape *b,
                                        imp_polytope_pair *out, imp_error *err) {
    assert(is_polytope_3d(a) && is_polytope_3d(b));
    out->va = out->vb = out->axes = NULL;
    out->na = out->nb = out->n_axes = 0;
    imp_ov_poly A, B;
    imp_hull_status st = imp_ov_poly_make(a, imp_v3(0, 0, 0), &A);
    if (st == IMP_HULL_OK) {
        st = imp_ov_poly_make(b, imp_v3(0, 0, 0), &B);
        if (st == IMP_HULL_OK) st = fill_pair(&A, &B, out);
        imp_ov_poly_free(&B);
    }
    imp_ov_poly_free(&A);
    if (st == IMP_HULL_OK) return st;
    imp_polytope_pair_free(out);
    return (imp_hull_status)imp_error_set(
        err, st,
        st == IMP_HULL_NOMEM ? "out of memory" : "a polyhedron's points have no hull (too flat)");
}

void imp_polytope_pair_free(imp_polytope_pair *p) {
    if (!p) return;
    if (!in_store(p, p->va)) free(p->va);
    if (!in_store(p, p->vb)) free(p->vb);
    if (!in_store(p, p->axes)) free(p->axes);
    p->va = p->vb = p->axes = NULL;
    p->na = p->nb = p->n_axes = 0;
}
