/*
 * toi_polytope_2d.c - time of impact of two translating convex polygons
 * (boxes included) in 2D, with or without acceleration.
 *
 * DESIGN
 * What: imp_toi_polygons: the first touch of two polygons on parabolic
 * paths, its point and normal, or their overlap at t = 0, or none.
 * How: the swept separating axis test of toi_polytope.c over the edge
 * normals of both polygons (for two convex polygons the only candidate
 * axes), one side each: the faces of their Minkowski difference, whose
 * halfplanes imply the other sides. Along a's edge normals the least
 * vertex of b, and along b's that of a, come from rotating calipers
 * (O(n + m) in all, no projection of every vertex on every axis). Each
 * band narrows the set of candidate times as it is built, so a separating
 * axis ends the query; before any, a pair whose bounding circles (about
 * the reference points) never meet over the window is a miss
 * (imp_toi_bounds_miss). The contact point is the middle of the overlap of
 * the two touching features (a vertex or an edge each) along the contact
 * line. The arithmetic is 2D (a 2D pair's z is 0), with imp_dot's values to
 * the bit (dot2z); without acceleration the candidate span is narrowed in
 * registers (narrow_open); each polygon's bands are built by a loop of their
 * own (side_bands); the result is the resolver's, not a copy: make
 * bench-box2d, 3.1-3.3 M pairs/s before these, 3.8-4.0 after (B2/imp 0.54-0.63
 * to 0.46-0.49), every answer the same to the bit.
 * Why: exact (see toi_polytope.c); O(n + m) per query for polygons of n
 * and m vertices, and no allocation up to 64 edges in all.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "toi_polytope.h"

/* a . b for 2D vectors, compared only (the caliper's least vertex). */
static double dot2(imp_vec3 a, imp_vec3 b) { return a.x * b.x + a.y * b.y; }

/* a . b for 2D vectors (z 0), with imp_dot's value to the bit: its z term adds +0, which
 * turns a -0 into +0 (a zero coefficient's sign picks the quadratic formula's branch). */
static double dot2z(imp_vec3 a, imp_vec3 b) { return a.x * b.x + a.y * b.y + 0.0; }

/* The greatest (top 1) or least (top 0) of (off + v[i]) . axis: imp_toi_project's in 2D. */
static double extreme2(const imp_vec3 *v, size_t n, imp_vec3 off, imp_vec3 axis, int top) {
    double m = top ? -INFINITY : INFINITY;
    for (size_t i = 0; i < n; ++i) {
        double x = dot2z(imp_v3(off.x + v[i].x, off.y + v[i].y, 0.0), axis);
        m = top ? (x > m ? x : m) : (x < m ? x : m);
    }
    return m;
}

/* The extent along u of the vertices of v (placed at off) within tol of h along n, on the
 * side sign (+1: at or above h - tol, -1: at or below h + tol), into [*lo, *hi]. */
static void feature_extent(const imp_vec3 *v, size_t nv, imp_vec3 off, imp_vec3 n, imp_vec3 u,
                           double h, double tol, int sign, double *lo, double *hi) {
    for (size_t i = 0; i < nv; ++i) {
        imp_vec3 w = imp_v3(off.x + v[i].x, off.y + v[i].y, 0.0);
        double x = dot2z(w, n);
        if (sign > 0 ? x >= h - tol : x <= h + tol) {
            *lo = imp_fmin(*lo, dot2z(w, u));
            *hi = imp_fmax(*hi, dot2z(w, u));
        }
    }
}

/* Middle of the touching features along the contact line (2D): the vertices
 * of a at its top along n and of b at its bottom (within tol), in world
 * coordinates at the moment of contact. In 2D arithmetic (the z of a 2D pair is 0). */
static imp_vec3 contact_point(const imp_toi_swept_input *in, imp_vec3 pa, imp_vec3 pb, imp_vec3 n,
                              double tol) {
    double ha = extreme2(in->va, in->na, pa, n, 1), hb = extreme2(in->vb, in->nb, pb, n, 0);
    imp_vec3 u = imp_v3(-n.y, n.x, 0);
    double ua0 = INFINITY, ua1 = -INFINITY, ub0 = INFINITY, ub1 = -INFINITY;
    feature_extent(in->va, in->na, pa, n, u, ha, tol, 1, &ua0, &ua1);
    feature_extent(in->vb, in->nb, pb, n, u, hb, tol, -1, &ub0, &ub1);
    double lo = imp_fmax(ua0, ub0), hi = imp_fmin(ua1, ub1);
    double mid = lo <= hi ? 0.5 * (lo + hi) : 0.5 * (imp_fmin(ua1, ub1) + imp_fmax(ua0, ub0));
    return imp_add(imp_scale(n, 0.5 * (ha + hb)), imp_scale(u, mid));
}

/* The vertex of the convex polygon v least along axis: from vertex j
 * forward while the projection falls (rotating calipers: for axes turning
 * counter-clockwise the least vertex only moves forward). In line: called
 * from side_bands' two copies, gcc made it a call (6% of a pair). */
static inline size_t least_from(const imp_vec3 *v, size_t n, imp_vec3 axis, size_t j) {
    double d = dot2(v[j], axis);
    for (size_t s = 0; s < n; ++s) {
        size_t k = j + 1 == n ? 0 : j + 1;
        double e = dot2(v[k], axis);
        if (!(e < d)) break;
        j = k;
        d = e;
    }
    return j;
}

static inline size_t least_scan(const imp_vec3 *v, size_t n, imp_vec3 axis) {
    size_t j = 0;
    double d = dot2(v[0], axis);
    for (size_t k = 1; k < n; ++k) {
        double e = dot2(v[k], axis);
        if (e < d) j = k, d = e;
    }
    return j;
}

/* imp_toi_sweep_narrow for a band of no acceleration (c2 = 0) that is open on one side (side 0:
 * lo = -inf, side 1: hi = +inf) on one span [*lo, *hi], kept in registers: the same quotient,
 * the same comparisons, so the same span; 0 when it is empty. In memory, each band's
 * narrowing waited on the last one's stores. */
static inline int narrow_open(const imp_toi_band *b, int side, double *lo, double *hi) {
    double c1 = b->c1;
    if (c1 != 0.0) {
        double q = (side ? b->lo : b->hi) / c1 + 0.0;
        int start = (c1 > 0.0) == (side == 1); /* q is the band's start, else its end */
        double t0 = start ? q : -INFINITY, t1 = start ? INFINITY : q;
        *lo = *lo > t0 ? *lo : t0;
        *hi = *hi < t1 ? *hi : t1;
    } else if (!(side ? b->lo <= 0.0 : b->hi >= 0.0)) {
        return 0;
    }
    return *lo <= *hi;
}

/* One polygon's bands (side 0: a's edges, 1: b's), side a constant where it is called so
 * that each side's loop is its own code. */
static inline __attribute__((always_inline)) int
side_bands(const imp_toi_polygons_input *in, const int side, imp_vec3 dp, imp_vec3 dv, imp_vec3 da,
           imp_toi_band *bands, imp_toi_sweep *acc, int linear, double *lo, double *hi) {
    const imp_vec3 *own = side ? in->vb : in->va, *other = side ? in->va : in->vb;
    const imp_vec3 *own_n = side ? in->normals_b : in->normals_a;
    size_t n_own = side ? in->nb : in->na, n_other = side ? in->na : in->nb;
    imp_toi_band *out = side ? bands + in->na : bands;
    /* the unit normals first, in a loop of their own: their square roots and
     * divisions do not wait on each other, where inside the loop below each waited
     * for the last band's narrowing (7% of a query) */
    for (size_t k = 0; k < n_own && own_n; ++k) /* prepared: (0, 0) for no length */
        out[k].n = own_n[k].x == 0.0 && own_n[k].y == 0.0 ? imp_v3(1, 0, 0) : own_n[k];
    for (size_t k = 0; k < n_own && !own_n; ++k) {
        imp_vec3 e0 = own[k], e1 = own[k + 1 == n_own ? 0 : k + 1];
        out[k].n = imp_normalize_or(imp_v3(e1.y - e0.y, e0.x - e1.x, 0), imp_v3(1, 0, 0));
    }
    size_t j = 0;
    for (size_t k = 0; k < n_own; ++k) {
        imp_toi_band *b = &out[k];
        imp_vec3 e0 = own[k], e1 = own[k + 1 == n_own ? 0 : k + 1];
        /* the least vertex along the edge's unnormalised normal */
        imp_vec3 perp = imp_v3(e1.y - e0.y, e0.x - e1.x, 0);
        j = k == 0 ? least_scan(other, n_other, perp) : least_from(other, n_other, perp, j);
        b->c1 = dot2z(b->n, dv);
        b->c2 = 0.5 * dot2z(b->n, da);
        if (side == 0) { /* a's edge, b's least vertex */
            double a0 = dot2z(e0, b->n), a1 = dot2z(e1, b->n);
            b->hi = (a0 > a1 ? a0 : a1) - dot2z(imp_add(dp, other[j]), b->n);
            b->lo = -INFINITY;
        } else { /* b's edge, a's least vertex */
            double b0 = dot2z(imp_add(dp, e0), b->n), b1 = dot2z(imp_add(dp, e1), b->n);
            b->lo = dot2z(other[j], b->n) - (b0 > b1 ? b0 : b1);
            b->hi = INFINITY;
        }
        if (linear ? !narrow_open(b, side, lo, hi) : !imp_toi_sweep_narrow(acc, b, in->horizon))
            return 0;
    }
    return 1;
}

/* The faces of the Minkowski difference of two counter-clockwise polygons
 * as one-sided bands: along a's outward edge normal n, b's least vertex
 * may not pass a's edge (the band's hi; its lo is open); along b's, a's
 * least vertex may not pass b's edge (lo; hi open). The other sides of
 * these axes are implied by the faces (the Minkowski difference is the
 * intersection of its faces' halfplanes), so the swept test over these
 * bands gives the same contact set as over both sides of every axis.
 * O(n + m): the least vertices come from rotating calipers. Each band
 * narrows acc as it is built; 0 as soon as one separates the pair over the
 * whole window. */
static int face_bands(const imp_toi_polygons_input *in, imp_toi_band *bands, imp_toi_sweep *acc) {
    imp_vec3 dp = imp_sub(in->b.p, in->a.p), dv = imp_sub(in->b.v, in->a.v);
    imp_vec3 da = imp_sub(in->b.a, in->a.a);
    /* no acceleration: every band is linear and acc stays one span (narrow_open) */
    int linear = da.x == 0.0 && da.y == 0.0 && acc->n == 1;
    double lo = acc->s[0].lo, hi = acc->s[0].hi;
    if (!side_bands(in, 0, dp, dv, da, bands, acc, linear, &lo, &hi) ||
        !side_bands(in, 1, dp, dv, da, bands, acc, linear, &lo, &hi))
        return 0;
    if (linear) acc->s[0] = (imp_toi_span){lo, hi};
    return 1;
}

#define STACK_EDGES 64

imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in) {
    assert(in->na >= 3 && in->nb >= 3 && in->horizon > 0.0);
    double reach_a = in->normals_a ? in->reach_a : imp_points_reach(in->va, in->na);
    double reach_b = in->normals_b ? in->reach_b : imp_points_reach(in->vb, in->nb);
    if (imp_toi_bounds_miss(&in->a, reach_a, &in->b, reach_b, in->horizon)) return imp_toi_none();
    size_t n = in->na + in->nb;
    imp_toi_band stack[STACK_EDGES], *bands = stack;
    if (n > STACK_EDGES && !(bands = malloc(n * sizeof *bands)))
        return imp_toi_failed(IMP_FAILURE_NOMEM);
    imp_toi_sweep acc;
    imp_toi_sweep_init(&acc, in->horizon);
    if (!face_bands(in, bands, &acc)) {
        if (bands != stack) free(bands);
        return imp_toi_none();
    }
    imp_toi_swept_input s = {in->a, in->b, in->va, in->vb, in->na, in->nb, NULL, n, in->horizon};
    double ftol;
    /* r is the resolver's result, returned as it is: made NONE first and assigned it in a
     * branch, it was built on the stack and copied out in 16-byte pieces across fields
     * just stored one by one, which waited on each store (a tenth of a pair's time) */
    imp_toi_result r = imp_toi_sweep_resolve(&s, bands, &acc, &ftol);
    if (bands != stack) free(bands);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING)
        r.point = contact_point(&s, r.pa, r.pb, r.normal, ftol);
    return r;
}
