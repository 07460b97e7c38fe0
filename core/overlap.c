/*
 * overlap.c - static overlap and separation of two placed shapes.
 *
 * DESIGN
 * What: imp_overlap, the core of POST /v1/overlap: whether two shapes
 * overlap, by how much and along which unit normal (from a towards b), or
 * how far apart they are.
 * How: every shape but the halfspace is a convex core rounded by a radius:
 * a point (sphere), a segment (capsule, segment) or a convex polygon (box,
 * polygon) with radius 0. The Minkowski difference of two rounded shapes
 * is the difference of their cores grown by ra + rb, so
 *   - cores apart at distance d: the shapes are apart by d - ra - rb, or
 *     overlap by ra + rb - d, along the line of the cores' closest points;
 *   - cores intersecting: the shapes overlap by the cores' penetration
 *     depth plus ra + rb along the cores' minimum translation direction.
 * In 2D the cores' distance is the least vertex-to-edge distance (the
 * closest pair of two disjoint convex polygons always involves a vertex),
 * they intersect when an edge of one crosses an edge of the other or one
 * contains a vertex of the other, and their penetration is the separating
 * axis theorem over the edge normals of both (Ericson, "Real-Time
 * Collision Detection", 4.4 and 5.2.1; for a segment core its normal, for
 * a point core none). In 3D the supported cores are points and segments:
 * closest points of two segments (Ericson 5.1.9); crossing segments touch
 * with zero core depth along the cross product of their directions. A
 * halfspace {n.x <= offset} against any shape: the shape's lowest point
 * along n (a core vertex minus its radius) decides.
 * Why: exact and allocation-free for every 2D pair, the same code for all
 * of them, and O(n m) at worst for polygons of n and m vertices (bounded by
 * IMP_SHAPE_MAX_VERTICES). 3D boxes and polyhedra need face and edge-pair
 * axes from a hull and are not handled here yet.
 */
#include "overlap.h"

#include <math.h>
#include <stddef.h>

typedef struct core {
    imp_vec3 pos;          /* added to every local vertex */
    const imp_vec3 *local; /* n local vertices: 1 point, 2 segment, >= 3 CCW polygon */
    size_t n;
    double r;
    imp_vec3 buf[8]; /* the vertices of spheres, segments, capsules and boxes */
} core;

static imp_vec3 vert(const core *c, size_t i) { return imp_add(c->pos, c->local[i]); }

/* number of edges: none for a point, one for a segment, n for a polygon */
static size_t n_edges(const core *c) { return c->n == 1 ? 0 : c->n == 2 ? 1 : c->n; }

/* Fills c from a placed shape (not a halfspace). 0, or -1 when the shape
 * has no core in this dimension that the solver handles; then c still
 * holds the shape's vertices (a 3D box's corners, a polyhedron's points)
 * for the halfspace test. */
static int make_core(const imp_shape *s, imp_vec3 pos, int dim, core *c) {
    c->pos = pos;
    c->n = imp_shape_core(s, dim, c->buf, &c->local, &c->r);
    if (c->n > 0)
        return 0;
    c->n = imp_shape_points(s, dim, c->buf, &c->local, &c->r);
    return -1;
}

/* Closest points of segments p0-p1 and q0-q1 (either may be a point):
 * Ericson 5.1.9, clamping each parameter and recomputing the other. */
static void closest_segments(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1, imp_vec3 *cp,
                             imp_vec3 *cq) {
    imp_vec3 d1 = imp_sub(p1, p0), d2 = imp_sub(q1, q0), r = imp_sub(p0, q0);
    double a = imp_dot(d1, d1), e = imp_dot(d2, d2), f = imp_dot(d2, r);
    double s, t;
    if (a == 0.0 && e == 0.0) {
        s = t = 0.0;
    } else if (a == 0.0) {
        s = 0.0;
        t = fmin(fmax(f / e, 0.0), 1.0);
    } else {
        double c = imp_dot(d1, r);
        if (e == 0.0) {
            t = 0.0;
            s = fmin(fmax(-c / a, 0.0), 1.0);
        } else {
            double b = imp_dot(d1, d2), denom = a * e - b * b;
            s = denom > 0.0 ? fmin(fmax((b * f - c * e) / denom, 0.0), 1.0) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = fmin(fmax(-c / a, 0.0), 1.0);
            } else if (t > 1.0) {
                t = 1.0;
                s = fmin(fmax((b - c) / a, 0.0), 1.0);
            }
        }
    }
    *cp = imp_madd(p0, d1, s);
    *cq = imp_madd(q0, d2, t);
}

static double cross2(imp_vec3 a, imp_vec3 b) { return a.x * b.y - a.y * b.x; }

/* Edge i of a core as its two end points. */
static void edge_of(const core *c, size_t i, imp_vec3 *e0, imp_vec3 *e1) {
    *e0 = vert(c, i);
    *e1 = vert(c, (i + 1) % c->n);
}

/* Least distance between two cores, as their closest points, over vertex
 * against edge (or vertex, when the other has no edge) in both directions. */
static double core_distance(const core *a, const core *b, imp_vec3 *ca, imp_vec3 *cb) {
    double best = INFINITY;
    const core *cs[2] = {a, b};
    for (int side = 0; side < 2; ++side) {
        const core *p = cs[side], *q = cs[1 - side];
        size_t qe = n_edges(q);
        for (size_t i = 0; i < p->n; ++i) {
            imp_vec3 v = vert(p, i);
            for (size_t j = 0; j < (qe ? qe : 1); ++j) {
                imp_vec3 e0, e1, x, y;
                if (qe)
                    edge_of(q, j, &e0, &e1);
                else
                    e0 = e1 = vert(q, 0);
                closest_segments(v, v, e0, e1, &x, &y);
                double d = imp_len(imp_sub(y, x));
                if (d < best) {
                    best = d;
                    *ca = side == 0 ? x : y;
                    *cb = side == 0 ? y : x;
                }
            }
        }
    }
    return best;
}

/* 2D: do the segments cross at a point interior to both? */
static int segments_cross(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1) {
    double d1 = cross2(imp_sub(p1, p0), imp_sub(q0, p0)), d2 = cross2(imp_sub(p1, p0), imp_sub(q1, p0));
    double d3 = cross2(imp_sub(q1, q0), imp_sub(p0, q0)), d4 = cross2(imp_sub(q1, q0), imp_sub(p1, q0));
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

/* 2D: is point x inside (or on) the counter-clockwise polygon core c? */
static int contains(const core *c, imp_vec3 x) {
    if (c->n < 3)
        return 0;
    for (size_t i = 0; i < c->n; ++i) {
        imp_vec3 e0, e1;
        edge_of(c, i, &e0, &e1);
        if (cross2(imp_sub(e1, e0), imp_sub(x, e0)) < 0.0)
            return 0;
    }
    return 1;
}

static int cores_intersect_2d(const core *a, const core *b) {
    size_t ae = n_edges(a), be = n_edges(b);
    for (size_t i = 0; i < ae; ++i) {
        imp_vec3 p0, p1;
        edge_of(a, i, &p0, &p1);
        for (size_t j = 0; j < be; ++j) {
            imp_vec3 q0, q1;
            edge_of(b, j, &q0, &q1);
            if (segments_cross(p0, p1, q0, q1))
                return 1;
        }
    }
    return contains(a, vert(b, 0)) || contains(b, vert(a, 0));
}

/* Projection interval of a core on axis n. */
static void project(const core *c, imp_vec3 n, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < c->n; ++i) {
        double x = imp_dot(vert(c, i), n);
        *lo = fmin(*lo, x);
        *hi = fmax(*hi, x);
    }
}

/* 2D penetration of intersecting cores: the least overlap over the edge
 * normals of both, and the direction (from a towards b) that removes it. */
static double sat_depth_2d(const core *a, const core *b, imp_vec3 *normal) {
    double best = INFINITY;
    *normal = imp_v3(1, 0, 0); /* two point cores: every direction is as good */
    const core *cs[2] = {a, b};
    for (int side = 0; side < 2; ++side) {
        const core *c = cs[side];
        for (size_t i = 0; i < n_edges(c); ++i) {
            imp_vec3 e0, e1;
            edge_of(c, i, &e0, &e1);
            imp_vec3 n = imp_normalize_or(imp_v3(e1.y - e0.y, e0.x - e1.x, 0), imp_v3(0, 0, 0));
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
    return best == INFINITY ? 0.0 : fmax(best, 0.0);
}

static imp_overlap_result from_gap(double gap, imp_vec3 normal) {
    /* + 0.0 turns the -0.0 of a negated zero component into 0.0 */
    normal = imp_v3(normal.x + 0.0, normal.y + 0.0, normal.z + 0.0);
    imp_overlap_result r = {IMP_OVERLAP_OVERLAPPING, 0.0, 0.0, normal};
    if (gap > 0.0) {
        r.state = IMP_OVERLAP_APART;
        r.distance = gap;
    } else {
        r.depth = -gap;
    }
    return r;
}

/* a shape against the halfspace h; `h_is_b` says which side the halfspace is */
static imp_overlap_result against_halfspace(const imp_shape *s, imp_vec3 pos, const imp_shape *h,
                                            int dim, int h_is_b) {
    core c;
    imp_overlap_result r = {IMP_OVERLAP_UNSUPPORTED, 0, 0, imp_v3(0, 0, 0)};
    if (s->type == IMP_SHAPE_HALFSPACE)
        return r;
    (void)make_core(s, pos, dim, &c); /* every shape has vertices for this test */
    double low = INFINITY;
    for (size_t i = 0; i < c.n; ++i)
        low = fmin(low, imp_dot(vert(&c, i), h->normal));
    /* gap between the shape's lowest point along n and the boundary plane */
    double gap = low - c.r - h->offset;
    /* from the shape towards the halfspace is -n */
    return from_gap(gap, h_is_b ? imp_neg(h->normal) : h->normal);
}

imp_overlap_result imp_overlap(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                               int dim) {
    imp_overlap_result none = {IMP_OVERLAP_UNSUPPORTED, 0, 0, imp_v3(0, 0, 0)};
    if (b->type == IMP_SHAPE_HALFSPACE)
        return against_halfspace(a, pa, b, dim, 1);
    if (a->type == IMP_SHAPE_HALFSPACE)
        return against_halfspace(b, pb, a, dim, 0);
    core ca, cb;
    if (make_core(a, pa, dim, &ca) != 0 || make_core(b, pb, dim, &cb) != 0)
        return none;
    if (dim == 3 && (ca.n > 2 || cb.n > 2))
        return none;
    double rr = ca.r + cb.r;
    imp_vec3 qa, qb;
    double d;
    if (dim == 3) {
        closest_segments(vert(&ca, 0), vert(&ca, ca.n - 1), vert(&cb, 0), vert(&cb, cb.n - 1), &qa,
                         &qb);
        d = imp_len(imp_sub(qb, qa));
        if (d == 0.0) {
            /* crossing cores: zero core depth, across both directions */
            imp_vec3 da = imp_sub(vert(&ca, ca.n - 1), vert(&ca, 0));
            imp_vec3 db = imp_sub(vert(&cb, cb.n - 1), vert(&cb, 0));
            imp_vec3 n = imp_normalize_or(imp_cross(da, db), imp_v3(0, 0, 0));
            if (n.x == 0 && n.y == 0 && n.z == 0) /* parallel or a point: any normal of them */
                n = imp_normalize_or(imp_cross(imp_len(da) > 0 ? da : db, imp_v3(1, 0, 0)),
                                     imp_normalize_or(imp_cross(imp_len(da) > 0 ? da : db,
                                                                imp_v3(0, 1, 0)),
                                                      imp_v3(1, 0, 0)));
            return from_gap(-rr, n);
        }
    } else {
        if (cores_intersect_2d(&ca, &cb)) {
            imp_vec3 n;
            double depth = sat_depth_2d(&ca, &cb, &n);
            return from_gap(-(depth + rr), n);
        }
        d = core_distance(&ca, &cb, &qa, &qb);
    }
    /* cores apart by d along qa -> qb (d > 0 unless they touch exactly) */
    imp_vec3 n = imp_normalize_or(imp_sub(qb, qa), imp_v3(1, 0, 0));
    if (d == 0.0) {
        imp_vec3 m;
        (void)sat_depth_2d(&ca, &cb, &m);
        n = m;
    }
    return from_gap(d - rr, n);
}
