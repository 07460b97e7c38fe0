/*
 * toi_rounded_2d.c - time of impact of two translating rounded convex shapes
 * in 2D: spheres, capsules and segments against each other and against
 * boxes and polygons.
 *
 * DESIGN
 * What: the first t in [0, horizon] at which two 2D shapes, each a convex
 * core (a point, a segment or a convex polygon) rounded by a radius, touch
 * and then interpenetrate; or their overlap at t = 0; or none.
 * How: configuration-space casting (Ericson, "Real-Time Collision
 * Detection", 5.5.7; van den Bergen, "Collision Detection in Interactive
 * 3D Environments", 2004, ch. 5). The shapes touch when q(t) = pb(t) - pa(t)
 * lies on the boundary of D + disk(ra + rb), where D = core_a - core_b is
 * the Minkowski difference of the cores, a convex polygon built in
 * O(n + m) by merging the cores' edges by angle (de Berg et al.,
 * "Computational Geometry", 13.3), each vertex remembering the pair of
 * core vertices it came from. q(t) is a parabola, so reaching the offset
 * line of an edge of D is a quadratic and reaching the circle around a
 * vertex a quartic (quadratic without acceleration), all solved by
 * imp_poly_roots; a root counts when the point is on that feature's part
 * of the rounded boundary (the edge's span, the vertex's normal cone) and
 * entering (moving inwards along the outward normal there, or at rest
 * there with an acceleration inwards). The earliest such root is the
 * contact. The normal is the outward normal of the rounded D there (from a
 * towards b), taken from the feature whose root won (at a contact with no
 * rounding radius, the direction from the nearest point of D would be
 * rounding noise), and the contact point follows from the feature's pair
 * of core points.
 * Speed: a pair whose bounding circles never meet over the window is a
 * miss at once (imp_toi_bounds_miss); D's edges (unit normals included)
 * are computed once per query and the nearest-feature search compares
 * squared distances; under linear motion a vertex whose circle the path
 * stays clear of before the best time so far is skipped, and an edge's
 * root is the quotient imp_toi_quadratic_roots gives in line. A linear
 * path from outside is decided without the loop over every feature when it
 * enters the polygon of D's offset edge lines inside an edge's span
 * (entry_by_edge), or beside a vertex whose circle it then meets inside the
 * vertex's cone (corner_hit: one circle's equation; a line enters the
 * convex rounded D once, so that root is the first contact). Both give what
 * the loop gives, bit for bit (3M random pairs, integer grids among them);
 * near a tie between features the loop decides. Circle against 8-gon
 * (bench_shapes): the corner path took the share of the queries past the
 * bounds test that went through the loop from 43% to 1%, 1.5x the queries
 * per second. No
 * allocation up to 65 core vertices in all.
 * Why: exact (roots of polynomials in the input), one code path for every
 * pair of rounded 2D shapes, and no iteration to a tolerance.
 */
#include "toi_rounded.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "roots.h"
#include "toi_polytope.h"
#include "tolerance.h"

typedef struct dvert {
    imp_vec3 p;    /* vertex of D */
    size_t ia, ib; /* the core vertices it is a[ia] - b[ib] of */
} dvert;

static double cross2(imp_vec3 a, imp_vec3 b) { return a.x * b.y - a.y * b.x; }

/* index of the lowest (then leftmost) vertex */
static size_t lowest(const imp_vec3 *v, size_t n, double sign) {
    size_t best = 0;
    for (size_t i = 1; i < n; ++i) {
        double yi = sign * v[i].y, yb = sign * v[best].y;
        double xi = sign * v[i].x, xb = sign * v[best].x;
        if (yi < yb || (yi == yb && xi < xb)) best = i;
    }
    return best;
}

/* edges of a core as a cyclic sequence: none for a point, two (there and
 * back) for a segment, n for a polygon */
static size_t core_edges(size_t n) { return n == 1 ? 0 : n; }

/* x mod n for x < 2 n, without a division (the merge below took a fifth of a circle-octagon
 * query in its four remainders a step) */
static size_t wrap(size_t x, size_t n) { return x >= n ? x - n : x; }

/* D = a - b: merge the edges of a and of -b by angle, from their lowest
 * vertices. Writes at most na + nb vertices. */
static size_t minkowski_difference(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb,
                                   dvert *out) {
    /* -b is b turned by 180 degrees: still counter-clockwise, its lowest vertex is b's highest */
    size_t i0 = lowest(a, na, 1.0), j0 = lowest(b, nb, -1.0);
    size_t ea = core_edges(na), eb = core_edges(nb);
    if (na == 1 || nb == 1) { /* a point core (a circle's): D is the other core moved, in the
                               * order the merge below gives it, without its steps */
        size_t m = ea + eb > 0 ? ea + eb : 1;
        for (size_t k = 0; k < m; ++k) {
            size_t ia = wrap(i0 + (na == 1 ? 0 : k), na), ib = wrap(j0 + (nb == 1 ? 0 : k), nb);
            out[k] = (dvert){imp_sub(a[ia], b[ib]), ia, ib};
        }
        return m;
    }
    size_t i = 0, j = 0, k = 0;
    while (i < ea || j < eb || k == 0) {
        size_t ia = wrap(i0 + i, na), ib = wrap(j0 + j, nb);
        out[k++] = (dvert){imp_sub(a[ia], b[ib]), ia, ib};
        if (i >= ea && j >= eb) break;
        imp_vec3 da = imp_sub(a[wrap(ia + 1, na)], a[ia]);
        imp_vec3 db = imp_sub(b[ib], b[wrap(ib + 1, nb)]); /* edge of -b */
        double c = i < ea && j < eb ? cross2(da, db) : 0.0;
        if (j >= eb || (i < ea && c > 0.0))
            ++i;
        else if (i >= ea || c < 0.0)
            ++j;
        else
            ++i, ++j;
        if (i >= ea && j >= eb) break;
    }
    return k;
}

typedef struct feature {
    int is_vertex;
    size_t k; /* vertex k, or edge k -> k+1 */
    double s; /* position along the edge, in [0, 1] */
} feature;

/* an edge k -> k+1 of D: its vector, squared length and outward unit normal
 * (zero for an edge of zero length), computed once per query */
typedef struct dedge {
    imp_vec3 e, en;
    double ee;
} dedge;

static void edges_of(const dvert *d, size_t n, dedge *out) {
    for (size_t k = 0; k < n; ++k) {
        imp_vec3 e = imp_sub(d[k + 1 == n ? 0 : k + 1].p, d[k].p);
        out[k].e = e;
        out[k].ee = imp_dot(e, e);
        out[k].en = imp_normalize_or(imp_v3(e.y, -e.x, 0), imp_v3(0, 0, 0)); /* outward: CCW */
    }
}

/* edges_of with a polygon core's prepared normals (imp_shape_polygon_normals: each
 * imp_normalize_or(v[k+1].y - v[k].y, v[k].x - v[k+1].x), (0, 0) for no length) where the
 * other core is the point 0 (a sphere's), so that D is the polygon moved: the same normals
 * bit for bit, signed zeros included, without a square root and a division each. Against
 * the point on b's side D's edge k is a's edge d[k].ia; on a's side (D = 0 - b, the
 * polygon reflected) it is b's edge d[k].ib reversed, whose normal is the negated one. A
 * component that is zero (the edge square to the other axis) takes the sign edges_of's
 * expression gives it. */
static void edges_prepared(const dvert *d, size_t n, const imp_vec3 *poly, size_t np,
                           const imp_vec3 *nrm, int reflected, dedge *out) {
    for (size_t k = 0; k < n; ++k) {
        imp_vec3 e = imp_sub(d[k + 1 == n ? 0 : k + 1].p, d[k].p);
        out[k].e = e;
        out[k].ee = imp_dot(e, e);
        size_t j = reflected ? d[k].ib : d[k].ia;
        imp_vec3 v0 = poly[j], v1 = poly[j + 1 == np ? 0 : j + 1], m = nrm[j];
        if (m.x == 0.0 && m.y == 0.0)
            out[k].en = imp_v3(0, 0, 0); /* no length: edges_of's fallback */
        else if (reflected)
            out[k].en = imp_v3(v1.y == v0.y ? 0.0 : -m.x, v1.x == v0.x ? -0.0 : -m.y, 0);
        else
            out[k].en = imp_v3(m.x, v1.x == v0.x ? -(v1.x - v0.x) : m.y, 0);
    }
}

/* The point 0 exactly, +0 in every coordinate (a sphere's core): subtracting it, or
 * subtracting from it, moves or reflects the other core without rounding. */
static int origin_point(const imp_vec3 *v, size_t nv) {
    return nv == 1 && v[0].x == 0.0 && v[0].y == 0.0 && v[0].z == 0.0 && !signbit(v[0].x) &&
           !signbit(v[0].y) && !signbit(v[0].z);
}

static double clamp01(double s) { return s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s; }

/* distance from x to D (0 inside for a polygon D) and the nearest feature;
 * for a polygon D also the signed distance (negative inside). Within `tol`
 * of an edge the normal is the edge's: the direction from a point that
 * close is rounding noise. */
static double signed_distance(const dvert *d, const dedge *ed, size_t n, imp_vec3 x, double tol,
                              feature *f, imp_vec3 *nrm) {
    if (n == 1) {
        imp_vec3 r = imp_sub(x, d[0].p);
        *f = (feature){1, 0, 0};
        *nrm = imp_normalize_or(r, imp_v3(1, 0, 0));
        return imp_len(r);
    }
    double best = INFINITY, inside = -INFINITY;
    int in = n >= 3;
    feature fin = {0, 0, 0};
    imp_vec3 nin = imp_v3(1, 0, 0), rbest = nin, nbest = nin;
    for (size_t k = 0; k < n; ++k) {
        imp_vec3 p0 = d[k].p, e = ed[k].e, en = ed[k].en;
        double ee = ed[k].ee;
        if (ee == 0.0) continue;
        imp_vec3 w = imp_sub(x, p0);
        double side = imp_dot(w, en);
        double s = clamp01(imp_dot(w, e) / ee);
        if (side > 0.0) in = 0;
        if (side > inside) {
            inside = side;
            fin = (feature){0, k, s};
            nin = en;
        }
        imp_vec3 r = imp_sub(x, imp_madd(p0, e, s));
        double dist2 = imp_dot(r, r); /* compared squared: one square root at the end */
        if (dist2 < best) {
            best = dist2;
            *f = (feature){s == 0.0 || s == 1.0, s == 1.0 ? (k + 1) % n : k, s};
            rbest = r;
            nbest = en;
        }
    }
    if (best == INFINITY) { /* every edge of zero length: D is a point */
        imp_vec3 r = imp_sub(x, d[0].p);
        *f = (feature){1, 0, 0};
        *nrm = imp_normalize_or(r, imp_v3(1, 0, 0));
        return imp_len(r);
    }
    if (in) {
        *f = fin;
        *nrm = nin;
        return inside; /* <= 0 */
    }
    best = sqrt(best);
    *nrm = best > tol ? imp_scale(rbest, 1.0 / best) : nbest;
    return best;
}

static double max_abs2(imp_vec3 v) {
    double x = fabs(v.x), y = fabs(v.y);
    return x > y ? x : y;
}

/* 1 when the linear path q over [0, t1] stays farther than rr (a radius)
 * from u, by a margin above rounding: no root of vertex u's quadratic there. */
static int passes_wide(const imp_motion *q, imp_vec3 u, double rr, double t1) {
    imp_vec3 w = imp_sub(q->p, u);
    double vv = imp_dot(q->v, q->v), t = vv > 0.0 ? -imp_dot(w, q->v) / vv : 0.0;
    t = t > t1 ? t1 : t > 0.0 ? t : 0.0;
    imp_vec3 step = imp_scale(q->v, t), x = imp_add(w, step);
    double m = rr * (1.0 + 1e-9) + 1e-9 * (max_abs2(w) + max_abs2(step));
    return isfinite(m) && imp_dot(x, x) > m * m;
}

/* A linear path that starts clearly outside and enters through an edge's span, or clearly
 * misses, decided without the distance or the loop below (Cyrus and Beck 1978): D rounded
 * by R lies inside the polygon of D's edges' offset lines, which the path enters at the
 * latest of the entering lines' crossings and leaves at the earliest of the leaving ones,
 * so no feature's contact comes earlier. Returns 1 when
 *  - the path starts outside an offset line by more than tol (so its gap to D rounded is
 *    more than tol, as the caller's first test would find), and
 *  - either it enters: the crossing of the entering line is inside its edge's span by
 *    CLEAR_SPAN of the edge on both sides (so no vertex circle, reached only beyond the
 *    span, ties with it), before every leaving crossing, in (0, h], and entering; then
 *    *best is that crossing (the quotient imp_toi_quadratic_roots gives the loop), *k the
 *    edge and *s the position along it: what the loop and the nearest-feature search find;
 *  - or it misses: it enters the offset polygon only after the window, leaves it before it
 *    enters (by 1e-9 of the times, beyond rounding) or runs along outside a line; *best
 *    stays infinite.
 * Otherwise 0: the loop decides. Then *corner is the vertex of D whose circle the path
 * meets first when it enters the offset polygon beyond its entering edge's span by
 * CLEAR_SPAN on that vertex's side (corner_hit), else n. D must be a polygon (n >= 3) and
 * R > 0. */
#define CLEAR_SPAN 1e-3

static int entry_by_edge(const dvert *d, const dedge *ed, size_t n, const imp_motion *q, double R,
                         double h, double tol, double *best, size_t *k_best, double *s_best,
                         size_t *corner) {
    *corner = n;
    if (n < 3 || !(R > 0.0)) return 0;
    double t_in = -INFINITY, t_out = INFINITY, outside = -INFINITY;
    size_t k_in = n;
    int parallel_out = 0;
    for (size_t k = 0; k < n; ++k) {
        imp_vec3 en = ed[k].en;
        if (en.x == 0.0 && en.y == 0.0) continue; /* an edge of zero length: no line */
        double c1 = imp_dot(q->v, en), c0 = imp_dot(imp_sub(q->p, d[k].p), en) - R;
        double t = c0 == 0.0 ? 0.0 : -c0 / c1;
        outside = c0 > outside ? c0 : outside;
        if (c1 < 0.0) {
            if (t > t_in) t_in = t, k_in = k;
        } else if (c1 > 0.0) {
            if (t < t_out) t_out = t;
        } else if (c0 > 0.0) {
            parallel_out = 1; /* along a line it is outside of: never inside */
        }
    }
    if (!(outside > tol)) return 0;
    const double slack =
        1e-9 * ((t_in > -INFINITY ? fabs(t_in) : 0.0) + (t_out < INFINITY ? fabs(t_out) : 0.0));
    if (parallel_out || k_in == n || t_in > t_out + slack || t_in > h + 1e-9 * h) return 1;
    if (!(t_in > 0.0 && t_in <= h && t_in < t_out - slack)) return 0;
    imp_vec3 en = ed[k_in].en, e = ed[k_in].e;
    double s = imp_dot(imp_sub(imp_motion_at(q, t_in), d[k_in].p), e) / ed[k_in].ee;
    if (s < -CLEAR_SPAN) *corner = k_in;
    if (s > 1.0 + CLEAR_SPAN) *corner = k_in + 1 == n ? 0 : k_in + 1;
    if (!(s >= CLEAR_SPAN && s <= 1.0 - CLEAR_SPAN) || !imp_toi_entering(q, t_in, en)) return 0;
    *best = t_in;
    *k_best = k_in;
    *s_best = s;
    return 1;
}

/* The earliest root of vertex k's circle (|q(t) - p_k| = R) in (0, before) that is a
 * contact: on the rounded boundary near the vertex and entering, with the nearest feature
 * and the normal there (*g, *gn); INFINITY when none. */
static double vertex_root(const dvert *d, const dedge *ed, size_t n, const imp_motion *q, double R,
                          double h, double tol, int linear, size_t k, double before, feature *g,
                          imp_vec3 *gn) {
    imp_vec3 p0 = d[k].p;
    double c[5], roots[4];
    imp_toi_distance_quartic(q, p0, R * R, c);
    int nr = imp_poly_roots(c, 4, 0.0, h, roots);
    for (int i = 0; i < nr; ++i) { /* ascending: the first that counts is the earliest */
        double t = roots[i];
        if (!(t > 0.0 && t < before)) continue;
        imp_vec3 x = imp_motion_at(q, t);
        /* under linear motion a root where the path clearly leaves the vertex's circle
         * cannot be entering: a normal accepted there is within 1e-4 rad of the radial
         * direction (the gap band), so it would face the motion too */
        if (linear && imp_dot(q->v, imp_sub(x, p0)) > 1e-3 * imp_len(q->v) * R) continue;
        feature f;
        imp_vec3 fn;
        double gap = signed_distance(d, ed, n, x, tol, &f, &fn) - R;
        /* on the rounded boundary near this vertex, and entering */
        if (fabs(gap) <= IMP_ROUNDED_VERTEX_BAND * tol + IMP_CONTACT_REL * R &&
            imp_toi_entering(q, t, fn)) {
            *g = f;
            *gn = fn;
            return t;
        }
    }
    return INFINITY;
}

/* A linear path that enters the offset polygon of D's edges beyond an edge's span, next to
 * vertex k (entry_by_edge's corner): 1 when its first contact is vertex k's, clearly, then
 * *t, *g and *gn are what the loop finds (the same root, feature and normal), decided by
 * one circle instead of every feature's equation; 0 when the loop must decide.
 * It is the earliest contact when the point of the circle's first root that counts (vertex_root)
 * lies inside the vertex's normal cone beyond both edges' spans by CLEAR_SPAN: there the
 * rounded boundary is the vertex's arc, whose outward normal is radial, so the path enters
 * the rounded D there; a contact on any feature before it would have put the path inside
 * the convex rounded D already, and a line inside a convex set does not enter it again.
 * Near the cone's sides an edge's root may tie with the vertex's, and a path that meets no
 * circle may still graze an edge: the loop decides those. */
static int corner_hit(const dvert *d, const dedge *ed, size_t n, const imp_motion *q, double R,
                      double h, double tol, size_t k, double *t, feature *g, imp_vec3 *gn) {
    size_t kp = k == 0 ? n - 1 : k - 1; /* the edges kp -> k and k -> k+1 meet at vertex k */
    if (ed[k].ee == 0.0 || ed[kp].ee == 0.0) return 0;
    feature f;
    imp_vec3 fn;
    double tk = vertex_root(d, ed, n, q, R, h, tol, 1, k, INFINITY, &f, &fn);
    if (tk == INFINITY) return 0;
    imp_vec3 x = imp_sub(imp_motion_at(q, tk), d[k].p);
    double s_next = imp_dot(x, ed[k].e) / ed[k].ee;   /* along k -> k+1 from vertex k */
    double s_prev = imp_dot(x, ed[kp].e) / ed[kp].ee; /* along kp -> k from vertex k */
    if (!(s_next < -CLEAR_SPAN && s_prev > CLEAR_SPAN)) return 0;
    *t = tk;
    *g = f;
    *gn = fn;
    return 1;
}

#define STACK_VERTS 66

imp_toi_result imp_toi_rounded_2d(const imp_toi_rounded_input *in) {
    assert(in->na >= 1 && in->nb >= 1 && in->horizon > 0.0);
    imp_toi_result r = imp_toi_none();
    double reach_a = in->normals_a ? in->reach_a : imp_points_reach(in->va, in->na);
    double reach_b = in->normals_b ? in->reach_b : imp_points_reach(in->vb, in->nb);
    if (imp_toi_bounds_miss(&in->a, reach_a + in->ra, &in->b, reach_b + in->rb, in->horizon))
        return r;
    dvert stack[STACK_VERTS], *d = stack;
    if (in->na + in->nb + 1 > STACK_VERTS && !(d = malloc((in->na + in->nb + 1) * sizeof *d)))
        return imp_toi_failed(IMP_FAILURE_NOMEM);
    size_t n = minkowski_difference(in->va, in->na, in->vb, in->nb, d);
    dedge ed_stack[STACK_VERTS], *ed = ed_stack;
    if (d != stack && !(ed = malloc((in->na + in->nb + 1) * sizeof *ed))) {
        free(d);
        return imp_toi_failed(IMP_FAILURE_NOMEM);
    }
    if (in->normals_b && in->nb >= 3 && origin_point(in->va, in->na))
        edges_prepared(d, n, in->vb, in->nb, in->normals_b, 1, ed);
    else if (in->normals_a && in->na >= 3 && origin_point(in->vb, in->nb))
        edges_prepared(d, n, in->va, in->na, in->normals_a, 0, ed);
    else
        edges_of(d, n, ed);
    const double R = in->ra + in->rb;
    imp_motion q = imp_toi_relative(&in->a, &in->b);
    const int linear = imp_dot(q.a, q.a) == 0.0;
    double scale = R;
    for (size_t k = 0; k < n; ++k) {
        double m = max_abs2(d[k].p);
        scale = m > scale ? m : scale;
    }
    scale = imp_fmax(scale, imp_max_abs(q.p));
    const double tol = IMP_CONTACT_REL * scale;

    feature f = {0, 0, 0.0};
    imp_vec3 nrm = imp_v3(1, 0, 0);
    double t_hit = -1.0, t_edge = INFINITY, s_edge = 0.0, t_corner;
    size_t k_edge = n, corner = n;
    const int decided = linear && entry_by_edge(d, ed, n, &q, R, in->horizon, tol, &t_edge, &k_edge,
                                                &s_edge, &corner);
    const int by_corner =
        !decided && corner < n &&
        corner_hit(d, ed, n, &q, R, in->horizon, tol, corner, &t_corner, &f, &nrm);
    double gap0 =
        decided || by_corner ? INFINITY : signed_distance(d, ed, n, q.p, tol, &f, &nrm) - R;
    if (decided) {
        if (t_edge < INFINITY) {
            r.state = IMP_TOI_HIT;
            t_hit = t_edge;
            nrm = ed[k_edge].en;
            f = (feature){0, k_edge, s_edge};
        }
    } else if (by_corner) {
        r.state = IMP_TOI_HIT;
        t_hit = t_corner;
    } else if (gap0 < -tol) {
        r.state = IMP_TOI_OVERLAPPING;
        r.depth = -gap0;
        t_hit = 0.0;
    } else if (gap0 <= tol && imp_toi_entering(&q, 0.0, nrm)) {
        r.state = IMP_TOI_HIT;
        t_hit = 0.0;
    } else {
        /* every root of every feature's equation, the earliest valid one wins */
        double best = INFINITY;
        imp_vec3 best_n = nrm;
        for (size_t k = 0; k < n; ++k) {
            imp_vec3 p0 = d[k].p;
            double roots[4];
            int nr = 0;
            /* under linear motion a feature whose outward normals all face along the motion
             * is never entered (imp_toi_entering asks vn < 0 without acceleration): an edge
             * with v.en >= 0, and a vertex between two such edges of nonzero length whose
             * normals turn by less than a half turn (so every normal of the vertex is a
             * positive combination of theirs; not so at a segment's end, whose normals
             * turn by a half turn through the segment's direction) */
            const int away = linear && n >= 2 && imp_dot(q.v, ed[k].en) >= 0.0;
            const size_t kp = k == 0 ? n - 1 : k - 1;
            const int vertex_away =
                away && ed[k].ee > 0.0 && ed[kp].ee > 0.0 && imp_dot(q.v, ed[kp].en) >= 0.0 &&
                (cross2(ed[kp].en, ed[k].en) > 1e-6 || imp_dot(ed[kp].en, ed[k].en) > 0.0);
            if (n >= 2 && !away) { /* edge k -> k+1: n.q(t) = n.p0 + R */
                imp_vec3 e = ed[k].e, en = ed[k].en;
                if (en.x != 0.0 || en.y != 0.0) {
                    nr = imp_toi_quadratic_roots(0.5 * imp_dot(q.a, en), imp_dot(q.v, en),
                                                 imp_dot(imp_sub(q.p, p0), en) - R, in->horizon,
                                                 roots);
                    for (int i = 0; i < nr; ++i) {
                        double t = roots[i];
                        imp_vec3 x = imp_sub(imp_motion_at(&q, t), p0);
                        double s = imp_dot(x, e) / imp_dot(e, e);
                        /* the span is closed and a hair wider: a path through a corner
                         * of D must not slip between its two edges by rounding (with no
                         * rounding radius there is no vertex circle to catch it) */
                        if (t < best && s >= -IMP_EDGE_SPAN_REL && s <= 1.0 + IMP_EDGE_SPAN_REL &&
                            t > 0.0 && imp_toi_entering(&q, t, en))
                            best = t, best_n = en;
                    }
                }
            }
            /* vertex k: |q(t) - p0|^2 = R^2, unless the path never comes that close
             * before the best time so far */
            if (R > 0.0 && !vertex_away &&
                !(linear && passes_wide(&q, p0, R, imp_fmin(best, in->horizon)))) {
                feature g;
                imp_vec3 gn;
                double t = vertex_root(d, ed, n, &q, R, in->horizon, tol, linear, k, best, &g, &gn);
                if (t < best) best = t, best_n = gn;
            }
        }
        if (best < INFINITY) {
            r.state = IMP_TOI_HIT;
            t_hit = best;
        }
        nrm = best_n;
    }
    if (t_hit >= 0.0) {
        /* the feature for the contact point; the normal is the one that decided the root
         * (recomputed from a point on the boundary of a D without radius it would be
         * rounding noise) */
        imp_vec3 x = imp_motion_at(&q, t_hit), unused;
        if (!decided && !by_corner)
            (void)signed_distance(d, ed, n, x, tol, &f, t_hit > 0.0 ? &unused : &nrm);
        /* the core point of a behind the nearest point of D */
        size_t k0 = f.k, k1 = f.is_vertex ? f.k : (f.k + 1) % n;
        double s = f.is_vertex ? 0.0 : f.s;
        imp_vec3 ca = imp_madd(in->va[d[k0].ia], imp_sub(in->va[d[k1].ia], in->va[d[k0].ia]), s);
        imp_toi_rounded_contact(&r, &in->a, &in->b, t_hit, nrm, ca, in->ra);
    }
    if (d != stack) free(d), free(ed);
    return r;
}
