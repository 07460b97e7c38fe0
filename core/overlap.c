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
 * 3D pairs with a box or polyhedron (core/hull.c gives a polyhedron's
 * faces, edges and unique edge directions; a box has 6 faces, 12 edges, 3
 * directions): GJK (van den Bergen 2004, 4.3) on the cores' vertices gives
 * their distance and closest direction; apart by more than IMP_CONTACT_REL
 * of the scale, the shapes are apart (or overlap) by that distance less
 * the radii along it. Otherwise the separating axis theorem over the face
 * normals of both and the cross products of edge directions (a segment
 * core contributes its direction, a point nothing) gives the depth, plus
 * the radii. Small polytopes (up to SAT_DIRECT_PAIRS direction pairs, e.g.
 * two boxes) try every pair of unique directions both ways; larger ones
 * only the edge pairs whose Gauss map arcs cross (Gregorius 2013), which
 * are exactly the edge-edge faces of the Minkowski difference.
 * Why: exact and allocation-free for every 2D pair, the same code for all
 * of them, and O(n m) at worst for polygons of n and m vertices (bounded by
 * IMP_SHAPE_MAX_VERTICES). In 3D the cost is O(Fa Vb + Fb Va + Ea Eb) plus
 * a projection per Minkowski edge face; two overlapping polyhedra of 4096
 * points on a sphere take about a second, game shapes microseconds. GJK
 * rather than enumerating closest features because feature pairs grow as
 * Ea Eb while GJK needs a few support scans.
 */
#include "overlap.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hull.h"
#include "tolerance.h"

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
    if (c->n > 0) return 0;
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
    double d1 = cross2(imp_sub(p1, p0), imp_sub(q0, p0)),
           d2 = cross2(imp_sub(p1, p0), imp_sub(q1, p0));
    double d3 = cross2(imp_sub(q1, q0), imp_sub(p0, q0)),
           d4 = cross2(imp_sub(q1, q0), imp_sub(p1, q0));
    return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

/* 2D: is point x inside (or on) the counter-clockwise polygon core c? */
static int contains(const core *c, imp_vec3 x) {
    if (c->n < 3) return 0;
    for (size_t i = 0; i < c->n; ++i) {
        imp_vec3 e0, e1;
        edge_of(c, i, &e0, &e1);
        if (cross2(imp_sub(e1, e0), imp_sub(x, e0)) < 0.0) return 0;
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
            if (segments_cross(p0, p1, q0, q1)) return 1;
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
        r.depth = -gap + 0.0; /* + 0.0: touching is depth 0, not -0 */
    }
    return r;
}

/* a shape against the halfspace h; `h_is_b` says which side the halfspace is */
static imp_overlap_result against_halfspace(const imp_shape *s, imp_vec3 pos, const imp_shape *h,
                                            int dim, int h_is_b) {
    core c;
    imp_overlap_result r = {IMP_OVERLAP_UNSUPPORTED, 0, 0, imp_v3(0, 0, 0)};
    if (s->type == IMP_SHAPE_HALFSPACE) return r;
    (void)make_core(s, pos, dim, &c); /* every shape has vertices for this test */
    double low = INFINITY;
    for (size_t i = 0; i < c.n; ++i)
        low = fmin(low, imp_dot(vert(&c, i), h->normal));
    /* gap between the shape's lowest point along n and the boundary plane */
    double gap = low - c.r - h->offset;
    /* from the shape towards the halfspace is -n */
    return from_gap(gap, h_is_b ? imp_neg(h->normal) : h->normal);
}

/* ---- 3D boxes and polyhedra ------------------------------------------------------------ */

/* A placed 3D core for the polytope solver: its vertices, and for SAT its
 * outward face normals, its edges with the two faces meeting there (for the
 * Gauss map test) and its unique edge directions. A point has none of
 * these; a segment one direction; a box 6 normals, 12 edges, 3 directions;
 * a polyhedron its hull's. */
typedef struct poly3 {
    imp_vec3 pos;
    const imp_vec3 *local;
    size_t n;
    double r;
    const imp_vec3 *fn;
    size_t nf;
    const imp_hull_edge *edges;
    size_t ne;
    const imp_vec3 *dirs;
    size_t nd;
    imp_vec3 vbuf[8], fbuf[6], dbuf[3];
    imp_hull_edge ebuf[12];
    imp_hull *hull; /* owned: a polyhedron's hull, freed by poly3_free */
} poly3;

static void poly3_free(poly3 *p) { imp_hull_destroy(p->hull); }

/* 0; -1 when the hull cannot be built (out of memory, or points too flat
 * for IMP_HULL_PLANE_REL although the api found them not flat). */
static int make_poly3(const imp_shape *s, imp_vec3 pos, poly3 *p) {
    memset(p, 0, sizeof *p);
    p->pos = pos;
    if (s->type == IMP_SHAPE_POLYHEDRON) {
        if (imp_hull_build(s->verts, s->n_verts, &p->hull) != IMP_HULL_OK) return -1;
        p->local = p->hull->verts;
        p->n = p->hull->n_verts;
        p->fn = p->hull->normals;
        p->nf = p->hull->n_faces;
        p->edges = p->hull->edges;
        p->ne = p->hull->n_edges;
        p->dirs = p->hull->dirs;
        p->nd = p->hull->n_dirs;
        return 0;
    }
    p->n = imp_shape_points(s, 3, p->vbuf, &p->local, &p->r);
    if (s->type == IMP_SHAPE_BOX) {
        /* corner i has bit k set when it is on the + side of axis k (imp_shape_points);
         * face 2k + 1 is the + face of axis k, 2k the - face */
        imp_vec3 ax[3] = {imp_quat_rotate(s->rot, imp_v3(1, 0, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, 1, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, 0, 1))};
        size_t e = 0;
        for (size_t k = 0; k < 3; ++k) {
            p->fbuf[2 * k] = imp_neg(ax[k]);
            p->fbuf[2 * k + 1] = ax[k];
            p->dbuf[k] = ax[k];
            size_t k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            for (size_t s1 = 0; s1 < 2; ++s1)
                for (size_t s2 = 0; s2 < 2; ++s2) {
                    size_t c = (s1 << k1) | (s2 << k2);
                    p->ebuf[e].v[0] = c;
                    p->ebuf[e].v[1] = c | ((size_t)1 << k);
                    p->ebuf[e].face[0] = 2 * k1 + s1;
                    p->ebuf[e].face[1] = 2 * k2 + s2;
                    ++e;
                }
        }
        p->fn = p->fbuf;
        p->nf = 6;
        p->edges = p->ebuf;
        p->ne = 12;
        p->dirs = p->dbuf;
        p->nd = 3;
    } else if (p->n == 2) {
        p->dbuf[0] = imp_normalize_or(imp_sub(p->local[1], p->local[0]), imp_v3(0, 0, 0));
        p->dirs = p->dbuf;
        p->nd = 1;
    }
    return 0;
}

/* Largest projection of a placed core on n, and the vertex reaching it. */
static double support(const poly3 *p, imp_vec3 n, imp_vec3 *at) {
    size_t best = 0;
    double m = -INFINITY;
    for (size_t i = 0; i < p->n; ++i) {
        double x = imp_dot(p->local[i], n);
        if (x > m) {
            m = x;
            best = i;
        }
    }
    if (at) *at = imp_add(p->pos, p->local[best]);
    return m + imp_dot(p->pos, n);
}

/* Closest point to the origin on segment a-b; *keep gets bit 0 for a, 1 for b. */
static imp_vec3 closest_on_segment(imp_vec3 a, imp_vec3 b, unsigned *keep) {
    imp_vec3 d = imp_sub(b, a);
    double dd = imp_dot(d, d), t = dd > 0.0 ? -imp_dot(a, d) / dd : 0.0;
    if (t <= 0.0) {
        *keep = 1;
        return a;
    }
    if (t >= 1.0) {
        *keep = 2;
        return b;
    }
    *keep = 3;
    return imp_madd(a, d, t);
}

/* Closest point to the origin on triangle abc by its Voronoi regions
 * (Ericson, "Real-Time Collision Detection", 5.1.5); *keep: bits of the
 * vertices spanning the closest feature. A degenerate triangle falls back
 * to its best edge. */
static imp_vec3 closest_on_triangle(imp_vec3 a, imp_vec3 b, imp_vec3 c, unsigned *keep) {
    imp_vec3 ab = imp_sub(b, a), ac = imp_sub(c, a);
    double d1 = -imp_dot(ab, a), d2 = -imp_dot(ac, a);
    if (d1 <= 0 && d2 <= 0) {
        *keep = 1;
        return a;
    }
    double d3 = -imp_dot(ab, b), d4 = -imp_dot(ac, b);
    if (d3 >= 0 && d4 <= d3) {
        *keep = 2;
        return b;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        *keep = 3;
        return imp_madd(a, ab, d1 / (d1 - d3));
    }
    double d5 = -imp_dot(ab, c), d6 = -imp_dot(ac, c);
    if (d6 >= 0 && d5 <= d6) {
        *keep = 4;
        return c;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        *keep = 5;
        return imp_madd(a, ac, d2 / (d2 - d6));
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        *keep = 6;
        return imp_madd(b, imp_sub(c, b), (d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    double denom = va + vb + vc;
    if (denom > 0.0 && isfinite(denom)) {
        *keep = 7;
        return imp_add(a, imp_add(imp_scale(ab, vb / denom), imp_scale(ac, vc / denom)));
    }
    unsigned k1, k2, k3;
    imp_vec3 p1 = closest_on_segment(a, b, &k1), p2 = closest_on_segment(a, c, &k2),
             p3 = closest_on_segment(b, c, &k3);
    double l1 = imp_dot(p1, p1), l2 = imp_dot(p2, p2), l3 = imp_dot(p3, p3);
    k2 = (k2 & 1) | ((k2 & 2) << 1);
    k3 <<= 1;
    if (l1 <= l2 && l1 <= l3) {
        *keep = k1;
        return p1;
    }
    if (l2 <= l3) {
        *keep = k2;
        return p2;
    }
    *keep = k3;
    return p3;
}

/* Closest point to the origin on the simplex w[0..*n), which is reduced to
 * the vertices of the closest feature. Returns 1 when the origin is inside
 * a (non-degenerate) tetrahedron. */
static int closest_on_simplex(imp_vec3 *w, size_t *n, imp_vec3 *v) {
    unsigned keep = 1;
    if (*n == 1) {
        *v = w[0];
        return 0;
    }
    if (*n == 2) {
        *v = closest_on_segment(w[0], w[1], &keep);
    } else if (*n == 3) {
        *v = closest_on_triangle(w[0], w[1], w[2], &keep);
    } else {
        static const size_t face[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
        /* a nearly flat tetrahedron cannot say which side of a face the origin
         * is on (the signs below are rounding): take it as not containing the
         * origin and reduce it to its closest face instead */
        double edge = 0.0;
        for (int i = 1; i < 4; ++i)
            edge = fmax(edge, imp_len(imp_sub(w[i], w[0])));
        double vol =
            fabs(imp_dot(imp_cross(imp_sub(w[1], w[0]), imp_sub(w[2], w[0])), imp_sub(w[3], w[0])));
        int flat = !(vol > IMP_GJK_FLAT_REL * edge * edge * edge);
        int inside = !flat;
        double best = INFINITY;
        for (int f = 0; f < 4; ++f) {
            imp_vec3 a = w[face[f][0]], b = w[face[f][1]], c = w[face[f][2]], o = w[face[f][3]];
            imp_vec3 nrm = imp_cross(imp_sub(b, a), imp_sub(c, a));
            double so = imp_dot(nrm, imp_sub(o, a)), sp = -imp_dot(nrm, a);
            if (!flat && so != 0.0 && sp != 0.0 && (so > 0.0) == (sp > 0.0))
                continue; /* the origin is strictly on the inner side of this face */
            inside = 0;
            unsigned k;
            imp_vec3 p = closest_on_triangle(a, b, c, &k);
            double l = imp_dot(p, p);
            if (l < best) {
                best = l;
                *v = p;
                keep = 0;
                for (int j = 0; j < 3; ++j)
                    if (k & (1u << j)) keep |= 1u << face[f][j];
            }
        }
        if (inside) return 1;
    }
    size_t m = 0;
    for (size_t i = 0; i < *n; ++i)
        if (keep & (1u << i)) w[m++] = w[i];
    *n = m;
    return 0;
}

/*
 * Distance between two placed cores by GJK (Gilbert, Johnson, Keerthi 1988;
 * as in van den Bergen, "Collision Detection in Interactive 3D
 * Environments", 2004, 4.3): the closest point v of B - A to the origin,
 * approached through simplices of support points. Returns |v| (v points
 * from a towards b), or 0 when the origin is within `tol` of B - A
 * (intersecting or touching cores).
 */
/* GJK's state: the simplex w[0..n) of differences pb - pa with the two
 * support points each came from, and its closest point v to the origin. */
typedef struct gjk_simplex {
    imp_vec3 w[4], sa[4], sb[4], v;
    size_t n;
} gjk_simplex;

/* The GJK loop; fills *s and returns |v|, or 0 when the origin is within
 * `tol` of B - A (then s->v is the last point reached). */
static double gjk_run(const poly3 *A, const poly3 *B, double tol, gjk_simplex *s) {
    s->sa[0] = imp_add(A->pos, A->local[0]);
    s->sb[0] = imp_add(B->pos, B->local[0]);
    s->w[0] = imp_sub(s->sb[0], s->sa[0]);
    s->v = s->w[0];
    s->n = 1;
    for (int it = 0; it < IMP_GJK_MAX_ITER; ++it) {
        double vv = imp_dot(s->v, s->v);
        if (vv <= tol * tol) return 0.0;
        imp_vec3 pa, pb;
        (void)support(A, s->v, &pa);
        (void)support(B, imp_neg(s->v), &pb);
        imp_vec3 x = imp_sub(pb, pa);
        if (vv - imp_dot(s->v, x) <= fmax(IMP_GJK_REL * vv, tol * sqrt(vv))) break;
        int dup = 0;
        for (size_t i = 0; i < s->n; ++i)
            dup |= s->w[i].x == x.x && s->w[i].y == x.y && s->w[i].z == x.z;
        if (dup || s->n == 4) break;
        imp_vec3 tw[4], nv;
        memcpy(tw, s->w, s->n * sizeof *tw);
        tw[s->n] = x;
        size_t m = s->n + 1;
        if (closest_on_simplex(tw, &m, &nv)) return 0.0;
        if (!(imp_dot(nv, nv) < vv)) break; /* no progress: rounding; v is the best point found */
        /* closest_on_simplex kept a subset of distinct points in order: match them */
        imp_vec3 na[4], nb[4];
        for (size_t i = 0; i < m; ++i) {
            for (size_t j = 0; j <= s->n; ++j) {
                imp_vec3 o = j < s->n ? s->w[j] : x;
                if (o.x == tw[i].x && o.y == tw[i].y && o.z == tw[i].z) {
                    na[i] = j < s->n ? s->sa[j] : pa;
                    nb[i] = j < s->n ? s->sb[j] : pb;
                    break;
                }
            }
        }
        memcpy(s->w, tw, m * sizeof *tw);
        memcpy(s->sa, na, m * sizeof *na);
        memcpy(s->sb, nb, m * sizeof *nb);
        s->n = m;
        s->v = nv;
    }
    return imp_len(s->v);
}

static double gjk(const poly3 *A, const poly3 *B, double tol, imp_vec3 *vout) {
    gjk_simplex s;
    double d = gjk_run(A, B, tol, &s);
    *vout = s.v;
    return d;
}

/* Overlap of b beyond a along unit n: how far b must move along n to clear a. */
static double push_along(const poly3 *A, const poly3 *B, imp_vec3 n) {
    return support(A, n, NULL) + support(B, imp_neg(n), NULL);
}

/* A visitor of candidate axes (unit, oriented from a towards b). */
typedef void (*axis_fn)(void *ctx, imp_vec3 n);

typedef struct depth_ctx {
    const poly3 *A, *B;
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

static gauss_edge gauss_edge_of(const poly3 *p, size_t i, double sign) {
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
static int sat_gauss(const poly3 *A, const poly3 *B, axis_fn fn, void *ctx) {
    gauss_edge *gb = malloc(B->ne * sizeof *gb);
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
    free(gb);
    return 0;
}

/* Most direction pairs (count) tested directly, both signs, rather than
 * through the Gauss map: a box against a box (9) or a small polyhedron. */
#define SAT_DIRECT_PAIRS 64

/* Penetration of intersecting cores: the least push over the face normals
 * of both (b's reversed) and the edge-direction cross products, and the
 * direction from a towards b that removes it (Ericson 4.4 / 5.2.1 in 3D).
 * 0, or -1 when out of memory. */
/* Every candidate separating axis of two 3D cores, to fn: the face normals
 * of both (b's reversed) and the edge-direction cross products that can be
 * faces of their Minkowski difference (all of them, both signs, for few
 * directions; the Gauss map test otherwise). 0, or -1 when out of memory. */
static int sat_axes_3d(const poly3 *A, const poly3 *B, axis_fn fn, void *ctx) {
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

static int sat_depth_3d(const poly3 *A, const poly3 *B, double *depth, imp_vec3 *normal) {
    depth_ctx c = {A, B, INFINITY, imp_v3(1, 0, 0)};
    if (sat_axes_3d(A, B, consider, &c) != 0) return -1;
    *normal = c.bn;
    *depth = c.best == INFINITY ? 0.0 : fmax(c.best, 0.0);
    return 0;
}

/* ---- the pair for the swept test ------------------------------------------------------- */

typedef struct collect_ctx {
    imp_vec3 *axes;
    size_t n, cap;
    int nomem;
} collect_ctx;

static void collect(void *ctx, imp_vec3 n) {
    collect_ctx *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        imp_vec3 *a = realloc(c->axes, cap * sizeof *a);
        if (!a) {
            c->nomem = 1;
            return;
        }
        c->axes = a;
        c->cap = cap;
    }
    c->axes[c->n++] = n;
}

static imp_vec3 *copy_points(const poly3 *p) {
    imp_vec3 *v = malloc((p->n ? p->n : 1) * sizeof *v);
    if (v)
        for (size_t i = 0; i < p->n; ++i)
            v[i] = p->local[i];
    return v;
}

int imp_polytope_pair_build(const imp_shape *a, const imp_shape *b, imp_polytope_pair *out) {
    memset(out, 0, sizeof *out);
    poly3 A, B;
    int rc = -1;
    int okA = make_poly3(a, imp_v3(0, 0, 0), &A) == 0;
    int okB = okA && make_poly3(b, imp_v3(0, 0, 0), &B) == 0;
    if (okB && A.r == 0.0 && B.r == 0.0) {
        collect_ctx c = {0};
        if (sat_axes_3d(&A, &B, collect, &c) == 0 && !c.nomem) {
            out->axes = c.axes;
            out->n_axes = c.n;
            out->va = copy_points(&A);
            out->vb = copy_points(&B);
            out->na = A.n;
            out->nb = B.n;
            rc = out->va && out->vb ? 0 : -1;
        } else {
            free(c.axes);
        }
    }
    if (okA) poly3_free(&A);
    if (okB) poly3_free(&B);
    if (rc != 0) imp_polytope_pair_free(out);
    return rc;
}

void imp_polytope_pair_free(imp_polytope_pair *p) {
    if (!p) return;
    free(p->va);
    free(p->vb);
    free(p->axes);
    memset(p, 0, sizeof *p);
}

/* A 3D pair with a box or polyhedron (neither a halfspace): GJK distance of
 * the cores; apart by more than the contact tolerance: distance minus the
 * radii along the closest direction; otherwise SAT depth plus the radii. */
static imp_overlap_result overlap_polytope(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                           imp_vec3 pb) {
    imp_overlap_result failed = {IMP_OVERLAP_FAILED, 0, 0, imp_v3(0, 0, 0)};
    poly3 A, B;
    if (make_poly3(a, pa, &A) != 0) {
        poly3_free(&A);
        return failed;
    }
    if (make_poly3(b, pb, &B) != 0) {
        poly3_free(&A);
        poly3_free(&B);
        return failed;
    }
    double rr = A.r + B.r, scale = rr;
    const poly3 *ps[2] = {&A, &B};
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < ps[k]->n; ++i)
            scale = fmax(scale, imp_max_abs(imp_add(ps[k]->pos, ps[k]->local[i])));
    double tol = IMP_CONTACT_REL * scale;
    imp_vec3 v;
    double d = gjk(&A, &B, tol, &v);
    imp_overlap_result r;
    if (d > tol) {
        r = from_gap(d - rr, imp_scale(v, 1.0 / d));
    } else {
        imp_vec3 n;
        double depth;
        r = sat_depth_3d(&A, &B, &depth, &n) == 0 ? from_gap(-(depth + rr), n) : failed;
    }
    poly3_free(&A);
    poly3_free(&B);
    return r;
}

imp_overlap_result imp_overlap(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                               int dim) {
    imp_overlap_result none = {IMP_OVERLAP_UNSUPPORTED, 0, 0, imp_v3(0, 0, 0)};
    if (b->type == IMP_SHAPE_HALFSPACE) return against_halfspace(a, pa, b, dim, 1);
    if (a->type == IMP_SHAPE_HALFSPACE) return against_halfspace(b, pb, a, dim, 0);
    if (dim == 3 && (a->type == IMP_SHAPE_BOX || a->type == IMP_SHAPE_POLYHEDRON ||
                     b->type == IMP_SHAPE_BOX || b->type == IMP_SHAPE_POLYHEDRON))
        return overlap_polytope(a, pa, b, pb);
    core ca, cb;
    if (make_core(a, pa, dim, &ca) != 0 || make_core(b, pb, dim, &cb) != 0) return none;
    if (dim == 3 && (ca.n > 2 || cb.n > 2)) return none;
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
                n = imp_normalize_or(
                    imp_cross(imp_len(da) > 0 ? da : db, imp_v3(1, 0, 0)),
                    imp_normalize_or(imp_cross(imp_len(da) > 0 ? da : db, imp_v3(0, 1, 0)),
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

/* ---- closest points (imp_overlap_closest) ---------------------------------------------- */

/* Witness points of GJK's answer: the closest point v of the final simplex
 * to the origin, in barycentric coordinates of that simplex, applied to the
 * support points each vertex came from (van den Bergen 2004, 4.3.6).
 * Returns |v|, or 0 (witnesses unset) when the cores intersect or touch
 * within `tol`. */
static double gjk_witness(const poly3 *A, const poly3 *B, double tol, imp_vec3 *wa, imp_vec3 *wb) {
    gjk_simplex gs;
    if (!(gjk_run(A, B, tol, &gs) > 0.0)) return 0.0;
    const imp_vec3 *w = gs.w, *sa = gs.sa, *sb = gs.sb;
    imp_vec3 v = gs.v;
    size_t n = gs.n;
    /* barycentric coordinates of v in w[0..n) (least squares; clamped, since
     * v lies on the simplex up to rounding) */
    double l[3] = {1.0, 0.0, 0.0};
    if (n == 2) {
        imp_vec3 e = imp_sub(w[1], w[0]);
        double ee = imp_dot(e, e), s = ee > 0.0 ? imp_dot(imp_sub(v, w[0]), e) / ee : 0.0;
        s = fmin(fmax(s, 0.0), 1.0);
        l[0] = 1.0 - s;
        l[1] = s;
    } else if (n >= 3) {
        imp_vec3 e1 = imp_sub(w[1], w[0]), e2 = imp_sub(w[2], w[0]), r = imp_sub(v, w[0]);
        double a11 = imp_dot(e1, e1), a12 = imp_dot(e1, e2), a22 = imp_dot(e2, e2);
        double b1 = imp_dot(r, e1), b2 = imp_dot(r, e2), det = a11 * a22 - a12 * a12;
        if (det > 0.0 && isfinite(det)) {
            double s = fmax((b1 * a22 - b2 * a12) / det, 0.0);
            double t = fmax((b2 * a11 - b1 * a12) / det, 0.0);
            double sum = s + t;
            if (sum > 1.0) {
                s /= sum;
                t /= sum;
            }
            l[0] = 1.0 - s - t;
            l[1] = s;
            l[2] = t;
        } else if (a11 > 0.0) { /* flat triangle: its first edge */
            double s = fmin(fmax(b1 / a11, 0.0), 1.0);
            l[0] = 1.0 - s;
            l[1] = s;
        }
    }
    imp_vec3 ra = imp_v3(0, 0, 0), rb = imp_v3(0, 0, 0);
    for (size_t i = 0; i < n && i < 3; ++i) {
        ra = imp_madd(ra, sa[i], l[i]);
        rb = imp_madd(rb, sb[i], l[i]);
    }
    *wa = ra;
    *wb = rb;
    return imp_len(v);
}

imp_overlap_result imp_overlap_closest(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                       imp_vec3 pb, int dim, imp_vec3 *ca, imp_vec3 *cb) {
    imp_overlap_result r = imp_overlap(a, pa, b, pb, dim);
    if (r.state != IMP_OVERLAP_APART) return r;
    if (a->type == IMP_SHAPE_HALFSPACE || b->type == IMP_SHAPE_HALFSPACE) {
        /* the shape's lowest point along the halfspace normal, and its foot on the plane */
        int h_is_b = b->type == IMP_SHAPE_HALFSPACE;
        const imp_shape *h = h_is_b ? b : a;
        core c;
        (void)make_core(h_is_b ? a : b, h_is_b ? pa : pb, dim, &c);
        size_t lo = 0;
        double low = INFINITY;
        for (size_t i = 0; i < c.n; ++i) {
            double x = imp_dot(vert(&c, i), h->normal);
            if (x < low) {
                low = x;
                lo = i;
            }
        }
        imp_vec3 on_shape = imp_madd(vert(&c, lo), h->normal, -c.r);
        imp_vec3 on_plane =
            imp_madd(on_shape, h->normal, -(imp_dot(on_shape, h->normal) - h->offset));
        *ca = h_is_b ? on_shape : on_plane;
        *cb = h_is_b ? on_plane : on_shape;
        return r;
    }
    imp_vec3 qa = pa, qb = pb;
    double ra = 0.0, rb = 0.0;
    if (dim == 3 && (a->type == IMP_SHAPE_BOX || a->type == IMP_SHAPE_POLYHEDRON ||
                     b->type == IMP_SHAPE_BOX || b->type == IMP_SHAPE_POLYHEDRON)) {
        poly3 A, B;
        int ok = make_poly3(a, pa, &A) == 0;
        ok = make_poly3(b, pb, &B) == 0 && ok;
        if (ok) {
            /* the scale and tolerance of overlap_polytope, so that GJK retraces its steps */
            double scale = A.r + B.r;
            const poly3 *ps[2] = {&A, &B};
            for (int k = 0; k < 2; ++k)
                for (size_t i = 0; i < ps[k]->n; ++i)
                    scale = fmax(scale, imp_max_abs(imp_add(ps[k]->pos, ps[k]->local[i])));
            if (!(gjk_witness(&A, &B, IMP_CONTACT_REL * scale, &qa, &qb) > 0.0)) ok = 0;
            ra = A.r;
            rb = B.r;
        }
        poly3_free(&A);
        poly3_free(&B);
        if (!ok) { /* cannot happen after imp_overlap built the same hulls; keep a defined answer */
            r.state = IMP_OVERLAP_FAILED;
            return r;
        }
    } else {
        core A, B;
        (void)make_core(a, pa, dim, &A);
        (void)make_core(b, pb, dim, &B);
        if (dim == 3)
            closest_segments(vert(&A, 0), vert(&A, A.n - 1), vert(&B, 0), vert(&B, B.n - 1), &qa,
                             &qb);
        else
            (void)core_distance(&A, &B, &qa, &qb);
        ra = A.r;
        rb = B.r;
    }
    /* from the cores' closest points out through the radii along the normal */
    *ca = imp_madd(qa, r.normal, ra);
    *cb = imp_madd(qb, r.normal, -rb);
    return r;
}
