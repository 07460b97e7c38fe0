/*
 * overlap_distance.c - closest features: the least distance between two
 * convex cores and the points that realise it.
 *
 * DESIGN
 * What: the distance family of the overlap module (overlap_impl.h): the
 * closest points of two segments, of two rounded 2D cores, and of two 3D
 * polytope cores by GJK, with its witness points.
 * How: two segments (either may be a point) by Ericson, "Real-Time
 * Collision Detection", 5.1.9: the line solution's parameter of the first
 * clamped, the second recomputed for it and clamped, the first recomputed
 * in turn. Two disjoint convex 2D cores: the closest pair always involves
 * a vertex, so the least vertex-to-edge distance in both directions is
 * theirs. Two 3D polytopes (a box, a polyhedron's hull, a segment or a
 * point each): GJK (Gilbert, Johnson, Keerthi 1988; van den Bergen,
 * "Collision Detection in Interactive 3D Environments", 2004, 4.3) on the
 * cores' vertices: the closest point v of B - A to the origin, approached
 * through simplices of support points, each simplex reduced to its closest
 * feature by the Voronoi regions of Ericson 5.1.5; a tetrahedron flatter
 * than IMP_GJK_FLAT_REL is reduced to its closest face rather than taken
 * as containing the origin. The witness points apply v's barycentric
 * coordinates in the final simplex to the support points each vertex came
 * from (van den Bergen 4.3.6).
 * The GJK ray cast (imp_ov_gjk_raycast) follows van den Bergen, "Ray
 * Casting against General Convex Objects with Application to Continuous
 * Collision Detection" (2004): the ray's point advances to each support
 * plane it has yet to cross while the simplex closes in on it; its answer
 * is a candidate only, which the caller certifies.
 * Why: exact and allocation-free for every 2D pair, O(n m) at worst for
 * polygons of n and m vertices (bounded by IMP_SHAPE_MAX_VERTICES). In 3D,
 * GJK rather than enumerating closest features because feature pairs grow
 * as Ea Eb while GJK needs a few support scans; for polytopes it ends
 * exactly in finitely many steps, IMP_GJK_REL only stops rounding from
 * cycling.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "overlap.h"
#include "overlap_impl.h"
#include "tolerance.h"

/* fmin(fmax(q, 0), 1) as glibc computes it (NaN to 0, -0 kept), without the two calls:
 * they are library calls at -O2, and the clamp runs once per vertex-edge pair. */
static inline double clamp01(double q) {
    return q > 0.0 ? (q < 1.0 ? q : 1.0) : q == 0.0 ? q : 0.0;
}

void imp_closest_segments(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1, imp_vec3 *cp,
                          imp_vec3 *cq) {
    imp_vec3 d1 = imp_sub(p1, p0), d2 = imp_sub(q1, q0), r = imp_sub(p0, q0);
    double a = imp_dot(d1, d1), e = imp_dot(d2, d2), f = imp_dot(d2, r);
    double s, t;
    if (a == 0.0 && e == 0.0) {
        s = t = 0.0;
    } else if (a == 0.0) {
        s = 0.0;
        t = clamp01(f / e);
    } else {
        double c = imp_dot(d1, r);
        if (e == 0.0) {
            t = 0.0;
            s = clamp01(-c / a);
        } else {
            double b = imp_dot(d1, d2), denom = a * e - b * b;
            s = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    *cp = imp_madd(p0, d1, s);
    *cq = imp_madd(q0, d2, t);
}

/* imp_closest_segments(v, v, e0, e1, x, y) (a point against a segment), with the same
 * arithmetic and so the same bits, without the general case's work. */
static void closest_point_segment(imp_vec3 v, imp_vec3 e0, imp_vec3 e1, imp_vec3 *x, imp_vec3 *y) {
    imp_vec3 d2 = imp_sub(e1, e0), r = imp_sub(v, e0);
    double e = imp_dot(d2, d2), f = imp_dot(d2, r);
    double t = e == 0.0 ? 0.0 : clamp01(f / e);
    *x = imp_madd(v, imp_v3(0.0, 0.0, 0.0), 0.0); /* v + 0: a -0 coordinate becomes +0 */
    *y = imp_madd(e0, d2, t);
}

double imp_ov_core_distance(const imp_ov_core *a, const imp_ov_core *b, imp_vec3 *ca,
                            imp_vec3 *cb) {
    double best = INFINITY, best_sq = INFINITY;
    const imp_ov_core *cs[2] = {a, b};
    for (int side = 0; side < 2; ++side) {
        const imp_ov_core *p = cs[side], *q = cs[1 - side];
        size_t qe = imp_ov_n_edges(q);
        for (size_t i = 0; i < p->n; ++i) {
            imp_vec3 v = imp_ov_vert(p, i);
            for (size_t j = 0; j < (qe ? qe : 1); ++j) {
                imp_vec3 e0, e1, x, y;
                if (qe)
                    imp_ov_edge(q, j, &e0, &e1);
                else
                    e0 = e1 = imp_ov_vert(q, 0);
                closest_point_segment(v, e0, e1, &x, &y);
                imp_vec3 xy = imp_sub(y, x);
                double dd = imp_dot(xy, xy);
                /* a square root below best needs dd below best^2 up to its rounding: the
                 * rest cannot win, so they skip the root */
                if (!(dd <= best_sq)) continue;
                double d = sqrt(dd);
                if (d < best) {
                    best = d;
                    best_sq = best * best * (1.0 + 1e-14);
                    *ca = side == 0 ? x : y;
                    *cb = side == 0 ? y : x;
                }
            }
        }
    }
    return best;
}

/* ---- GJK ---------------------------------------------------------------------------------- */

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
            edge = imp_fmax(edge, imp_len(imp_sub(w[i], w[0])));
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

/* GJK's state: the simplex w[0..n) of differences pb - pa with the two
 * support points each came from, and its closest point v to the origin. */
typedef struct gjk_simplex {
    imp_vec3 w[4], sa[4], sb[4], v;
    size_t n;
} gjk_simplex;

/* The GJK loop; fills *s and returns |v|, or 0 when the origin is within
 * `tol` of B - A (then s->v is the last point reached). */
static double gjk_run(const imp_ov_poly *A, const imp_ov_poly *B, double tol, gjk_simplex *s) {
    s->sa[0] = imp_add(A->pos, A->local[0]);
    s->sb[0] = imp_add(B->pos, B->local[0]);
    s->w[0] = imp_sub(s->sb[0], s->sa[0]);
    s->v = s->w[0];
    s->n = 1;
    for (int it = 0; it < IMP_GJK_MAX_ITER; ++it) {
        double vv = imp_dot(s->v, s->v);
        if (vv <= tol * tol) return 0.0;
        imp_vec3 pa, pb;
        (void)imp_ov_support(A, s->v, &pa);
        (void)imp_ov_support(B, imp_neg(s->v), &pb);
        imp_vec3 x = imp_sub(pb, pa);
        if (vv - imp_dot(s->v, x) <= imp_fmax(IMP_GJK_REL * vv, tol * sqrt(vv))) break;
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

double imp_ov_gjk(const imp_ov_poly *A, const imp_ov_poly *B, double tol, imp_vec3 *vout) {
    gjk_simplex s;
    double d = gjk_run(A, B, tol, &s);
    *vout = s.v;
    return d;
}

/* The witness points: v's barycentric coordinates in the final simplex applied to the support
 * points each of its vertices came from (van den Bergen 2004, 4.3.6). */
double imp_ov_gjk_closest(const imp_ov_poly *A, const imp_ov_poly *B, double tol, imp_vec3 *vout,
                          imp_vec3 *wa, imp_vec3 *wb) {
    gjk_simplex gs;
    double d = gjk_run(A, B, tol, &gs);
    *vout = gs.v;
    if (!(d > 0.0)) return 0.0;
    const imp_vec3 *w = gs.w, *sa = gs.sa, *sb = gs.sb;
    imp_vec3 v = gs.v;
    size_t n = gs.n;
    /* barycentric coordinates of v in w[0..n) (least squares; clamped, since
     * v lies on the simplex up to rounding) */
    double l[3] = {1.0, 0.0, 0.0};
    if (n == 2) {
        imp_vec3 e = imp_sub(w[1], w[0]);
        double ee = imp_dot(e, e), s = ee > 0.0 ? imp_dot(imp_sub(v, w[0]), e) / ee : 0.0;
        s = imp_fmin(imp_fmax(s, 0.0), 1.0);
        l[0] = 1.0 - s;
        l[1] = s;
    } else if (n >= 3) {
        imp_vec3 e1 = imp_sub(w[1], w[0]), e2 = imp_sub(w[2], w[0]), r = imp_sub(v, w[0]);
        double a11 = imp_dot(e1, e1), a12 = imp_dot(e1, e2), a22 = imp_dot(e2, e2);
        double b1 = imp_dot(r, e1), b2 = imp_dot(r, e2), det = a11 * a22 - a12 * a12;
        if (det > 0.0 && isfinite(det)) {
            double s = imp_fmax((b1 * a22 - b2 * a12) / det, 0.0);
            double t = imp_fmax((b2 * a11 - b1 * a12) / det, 0.0);
            double sum = s + t;
            if (sum > 1.0) {
                s /= sum;
                t /= sum;
            }
            l[0] = 1.0 - s - t;
            l[1] = s;
            l[2] = t;
        } else if (a11 > 0.0) { /* flat triangle: its first edge */
            double s = imp_fmin(imp_fmax(b1 / a11, 0.0), 1.0);
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

/* ---- 2D GJK, warm-started ------------------------------------------------------------- */

/* The simplex of a 2D run: its points w = d + b[ib] - a[ia] of B - A, by the indices they
 * come from, and the barycentric weights l of its closest point v to the origin. */
typedef struct gjk2 {
    double wx[3], wy[3], l[3];
    unsigned ia[3], ib[3];
    int n;
    double vx, vy;
} gjk2;

static void gjk2_set(gjk2 *s, int k, const imp_vec3 *a, const imp_vec3 *b, imp_vec3 d, unsigned i,
                     unsigned j) {
    s->ia[k] = i;
    s->ib[k] = j;
    s->wx[k] = (d.x + b[j].x) - a[i].x;
    s->wy[k] = (d.y + b[j].y) - a[i].y;
}

/* Keeps the simplex's points k0 (and k1 when k1 >= 0) with weights l0 (and l1), in order. */
static void gjk2_keep(gjk2 *s, int k0, double l0, int k1, double l1) {
    gjk2 o = *s;
    int ks[2] = {k0, k1};
    s->n = k1 < 0 ? 1 : 2;
    for (int m = 0; m < s->n; ++m) {
        s->wx[m] = o.wx[ks[m]], s->wy[m] = o.wy[ks[m]];
        s->ia[m] = o.ia[ks[m]], s->ib[m] = o.ib[ks[m]];
    }
    s->l[0] = l0;
    s->l[1] = l1;
}

/* The segment's weights where its closest point to the origin is inside it (the other's
 * weight at each end: -w_i.(w_j - w_i) for j's, w_j.(w_j - w_i) for i's), as the signed
 * areas of Gilbert, Johnson and Keerthi's sub-simplex test reduce to in 1D. */
static void seg_weights(const gjk2 *s, int i, int j, double *li, double *lj) {
    double ex = s->wx[j] - s->wx[i], ey = s->wy[j] - s->wy[i];
    *li = s->wx[j] * ex + s->wy[j] * ey;
    *lj = -(s->wx[i] * ex + s->wy[i] * ey);
}

/* Reduces the simplex to the feature closest to the origin and sets v (GJK's distance
 * sub-algorithm by Voronoi regions in the plane: Ericson, "Real-Time Collision
 * Detection", 5.1.5, and the barycentric form of Catto, "Computing Distance", GDC 2010).
 * Returns 1 when the origin is inside the triangle (all three weights positive). */
static int gjk2_solve(gjk2 *s) {
    if (s->n == 2) {
        double l0, l1;
        seg_weights(s, 0, 1, &l0, &l1);
        if (l1 <= 0.0)
            gjk2_keep(s, 0, 1.0, -1, 0.0);
        else if (l0 <= 0.0)
            gjk2_keep(s, 1, 1.0, -1, 0.0);
        else
            s->l[0] = l0 / (l0 + l1), s->l[1] = l1 / (l0 + l1);
    } else if (s->n == 3) {
        double a01, b01, a02, b02, a12, b12; /* each edge's end weights */
        seg_weights(s, 0, 1, &a01, &b01);
        seg_weights(s, 0, 2, &a02, &b02);
        seg_weights(s, 1, 2, &a12, &b12);
        /* the triangle's weights: each vertex's opposite sub-triangle's signed area, of the
         * triangle's orientation */
        double area = (s->wx[1] - s->wx[0]) * (s->wy[2] - s->wy[0]) -
                      (s->wy[1] - s->wy[0]) * (s->wx[2] - s->wx[0]);
        double t0 = area * (s->wx[1] * s->wy[2] - s->wy[1] * s->wx[2]);
        double t1 = area * (s->wx[2] * s->wy[0] - s->wy[2] * s->wx[0]);
        double t2 = area * (s->wx[0] * s->wy[1] - s->wy[0] * s->wx[1]);
        if (b01 <= 0.0 && b02 <= 0.0)
            gjk2_keep(s, 0, 1.0, -1, 0.0);
        else if (a01 > 0.0 && b01 > 0.0 && t2 <= 0.0)
            gjk2_keep(s, 0, a01 / (a01 + b01), 1, b01 / (a01 + b01));
        else if (a02 > 0.0 && b02 > 0.0 && t1 <= 0.0)
            gjk2_keep(s, 0, a02 / (a02 + b02), 2, b02 / (a02 + b02));
        else if (a01 <= 0.0 && b12 <= 0.0)
            gjk2_keep(s, 1, 1.0, -1, 0.0);
        else if (a02 <= 0.0 && a12 <= 0.0)
            gjk2_keep(s, 2, 1.0, -1, 0.0);
        else if (a12 > 0.0 && b12 > 0.0 && t0 <= 0.0)
            gjk2_keep(s, 1, a12 / (a12 + b12), 2, b12 / (a12 + b12));
        else if (t0 + t1 + t2 > 0.0 && isfinite(t0 + t1 + t2)) {
            double sum = t0 + t1 + t2;
            s->l[0] = t0 / sum, s->l[1] = t1 / sum, s->l[2] = t2 / sum;
            s->vx = s->vy = 0.0;
            return 1;
        } else { /* flat: rounding left no region; the nearest end of all */
            int k = 0;
            for (int m = 1; m < 3; ++m)
                if (s->wx[m] * s->wx[m] + s->wy[m] * s->wy[m] <
                    s->wx[k] * s->wx[k] + s->wy[k] * s->wy[k])
                    k = m;
            gjk2_keep(s, k, 1.0, -1, 0.0);
        }
    }
    if (s->n == 1) s->l[0] = 1.0;
    s->vx = s->vy = 0.0;
    for (int k = 0; k < s->n; ++k) {
        s->vx += s->l[k] * s->wx[k];
        s->vy += s->l[k] * s->wy[k];
    }
    return 0;
}

/* Index of the point of p[0..n) farthest along (x, y). */
static unsigned farthest2(const imp_vec3 *p, size_t n, double x, double y) {
    unsigned best = 0;
    double top = p[0].x * x + p[0].y * y;
    for (size_t i = 1; i < n; ++i) {
        double h = p[i].x * x + p[i].y * y;
        if (h > top) top = h, best = (unsigned)i;
    }
    return best;
}

/* The run itself: returns 1 when the origin is inside the final triangle, else 0 with s's v
 * the closest point found. The cache's simplex, where it names points of these shapes, is
 * the start; the final one goes back into it. */
static int gjk2_run(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb, imp_vec3 d,
                    double tol, imp_gjk2_cache *cache, gjk2 *s) {
    s->n = 0;
    if (cache && cache->n >= 1 && cache->n <= 3) {
        s->n = cache->n;
        for (int k = 0; k < s->n; ++k)
            if (cache->ia[k] >= na || cache->ib[k] >= nb) s->n = 0;
        for (int k = 0; k < s->n; ++k)
            gjk2_set(s, k, a, b, d, cache->ia[k], cache->ib[k]);
    }
    if (s->n == 0) { /* cold: the supports along the line of the positions */
        gjk2_set(s, 0, a, b, d, farthest2(a, na, d.x, d.y), farthest2(b, nb, -d.x, -d.y));
        s->n = 1;
    }
    int inside = gjk2_solve(s);
    for (int it = 0; !inside && it < IMP_GJK_MAX_ITER; ++it) {
        double vv = s->vx * s->vx + s->vy * s->vy;
        if (vv <= tol * tol) break;
        unsigned i = farthest2(a, na, s->vx, s->vy), j = farthest2(b, nb, -s->vx, -s->vy);
        int dup = 0;
        for (int k = 0; k < s->n; ++k)
            dup |= s->ia[k] == i && s->ib[k] == j;
        if (dup) break;
        gjk2 next = *s;
        gjk2_set(&next, next.n++, a, b, d, i, j);
        double vw = s->vx * next.wx[next.n - 1] + s->vy * next.wy[next.n - 1];
        if (vv - vw <= imp_fmax(IMP_GJK_REL * vv, tol * sqrt(vv))) break;
        inside = gjk2_solve(&next);
        if (!inside && !(next.vx * next.vx + next.vy * next.vy < vv))
            break; /* no progress: rounding; s is the best found */
        *s = next;
    }
    if (cache) {
        cache->n = s->n;
        for (int k = 0; k < s->n; ++k)
            cache->ia[k] = s->ia[k], cache->ib[k] = s->ib[k];
    }
    return inside;
}

double imp_ov_gjk2_closest(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb, imp_vec3 d,
                           double tol, imp_gjk2_cache *cache, imp_vec3 *v, imp_vec3 *wa,
                           imp_vec3 *wb) {
    gjk2 s;
    int inside = gjk2_run(a, na, b, nb, d, tol, cache, &s);
    *v = imp_v3(s.vx, s.vy, 0.0);
    double vv = s.vx * s.vx + s.vy * s.vy;
    if (inside || vv <= tol * tol) return 0.0;
    imp_vec3 ra = imp_v3(0, 0, 0), rb = imp_v3(0, 0, 0);
    for (int k = 0; k < s.n; ++k) {
        ra = imp_madd(ra, a[s.ia[k]], s.l[k]);
        rb = imp_madd(rb, b[s.ib[k]], s.l[k]);
    }
    *wa = imp_v3(ra.x, ra.y, 0.0);
    *wb = imp_v3(rb.x, rb.y, 0.0);
    return sqrt(vv);
}

int imp_ov_gjk2_encloses(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb, imp_vec3 d,
                         double tol, double slack, imp_gjk2_cache *cache) {
    gjk2 s;
    if (!gjk2_run(a, na, b, nb, d, tol, cache, &s)) return 0;
    int sign = 0;
    for (int i = 0; i < 3; ++i) {
        int j = i == 2 ? 0 : i + 1;
        double px = s.wx[i], py = s.wy[i], qx = s.wx[j], qy = s.wy[j];
        /* twice the signed area of (0, p, q), which each point's error (slack) moves by at
         * most slack (|p| + |q|) + slack^2, and its own rounding by 2u of its terms */
        double det = px * qy - py * qx;
        double err = slack * (sqrt(px * px + py * py) + sqrt(qx * qx + qy * qy) + slack) +
                     DBL_EPSILON * (fabs(px * qy) + fabs(py * qx));
        int sg = det > err ? 1 : det < -err ? -1 : 0;
        if (sg == 0 || (sign != 0 && sg != sign)) return 0;
        sign = sg;
    }
    return 1;
}

/* ---- GJK ray cast ------------------------------------------------------------------------- */

int imp_ov_gjk_raycast(const imp_vec3 *va, size_t na, const imp_vec3 *vb, size_t nb, imp_vec3 s,
                       imp_vec3 r, double h, double tol, double *lam, imp_vec3 y[3], size_t *ny,
                       imp_vec3 sep[2]) {
    double l = 0.0;
    sep[1] = imp_v3(0, 0, 0);
    imp_vec3 x = s, Y[4], v = imp_sub(x, imp_sub(va[0], vb[0]));
    size_t n = 0;
    for (int it = 0; it < IMP_GJK_MAX_ITER; ++it) {
        double vv = imp_dot(v, v);
        if (vv <= tol * tol) break;
        imp_vec3 p =
            imp_sub(va[imp_ov_farthest(va, na, v)], vb[imp_ov_farthest(vb, nb, imp_neg(v))]);
        double vw = imp_dot(v, imp_sub(x, p));
        int advanced = vw > 0.0;
        if (advanced) { /* p's plane along v has x on its far side: advance to it or miss */
            double vr = imp_dot(v, r);
            if (vr >= 0.0) {
                sep[0] = v;
                return 0;
            }
            l -= vw / vr;
            if (!(l <= h)) {
                sep[0] = v;
                return 0;
            }
            x = imp_add(s, imp_scale(r, l));
            sep[1] = v;
        }
        /* a support point already in the simplex: the simplex is only measured again from
         * the advanced point, or, where nothing advanced, no progress is left above
         * rounding */
        int dup = 0;
        for (size_t i = 0; i < n; ++i)
            dup |= Y[i].x == p.x && Y[i].y == p.y && Y[i].z == p.z;
        if ((dup && !advanced) || (!dup && n == 4)) return -1;
        if (!dup) Y[n++] = p;
        imp_vec3 w[4], kept[4];
        for (size_t i = 0; i < n; ++i)
            w[i] = kept[i] = imp_sub(x, Y[i]);
        size_t m = n;
        if (closest_on_simplex(w, &m, &v)) return -1; /* x inside: no plane to certify */
        /* closest_on_simplex kept a subset of the points in order: match them */
        size_t k = 0;
        for (size_t i = 0; i < n && k < m; ++i)
            if (kept[i].x == w[k].x && kept[i].y == w[k].y && kept[i].z == w[k].z) Y[k++] = Y[i];
        if (k != m) return -1;
        n = m;
    }
    if (!(imp_dot(v, v) <= tol * tol) || n > 3) return -1;
    *lam = l;
    for (size_t i = 0; i < n; ++i)
        y[i] = Y[i];
    *ny = n;
    return 1;
}
