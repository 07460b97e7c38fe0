/*
 * toi_polygon.c - time of impact of two translating convex polygons
 * (boxes included) in 2D, with or without acceleration.
 *
 * DESIGN
 * What: the first t in [0, horizon] at which two convex polygons moving on
 * parabolic paths touch with positive penetration right after, the contact
 * point and normal; or that they overlap at t = 0 (depth and normal); or
 * none.
 * How: swept separating axis test (Ericson, "Real-Time Collision
 * Detection", 5.5.8, generalised from linear to parabolic motion). In the
 * frame of a, b's projection on an axis n (an edge normal of either
 * polygon: for two convex polygons these are the only candidate axes)
 * shifts by f(t) = n.dv t + n.da t^2 / 2, and the projections overlap while
 * lo <= f(t) <= hi with lo = min_a - max_b and hi = max_a - min_b at t = 0.
 * The set of such t in the window is a union of at most three intervals,
 * bounded by the roots of the quadratics f(t) - lo and f(t) - hi
 * (imp_quadratic_roots) and classified at their midpoints. The polygons
 * touch exactly on the intersection of these sets over all axes; the first
 * interval of it in which the penetration (the least overlap over the
 * axes) becomes positive starts the contact. An interval along which the
 * penetration stays zero is sliding or grazing: no contact, per the
 * contract. The contact normal is the axis whose overlap is the binding
 * (least) one at the contact, oriented from a to b; the contact point is
 * the middle of the overlap of the two touching features (a vertex or an
 * edge each) along the contact line.
 * Why: exact: every contact time is a root of a quadratic in the input,
 * found to the accuracy the coefficients allow, with no iteration to a
 * tolerance (conservative advancement stops within its tolerance).
 * Cost O((n + m)^2) per query for polygons of n and m vertices.
 */
#include "toi_polygon.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "overlap.h"
#include "roots.h"
#include "tolerance.h"

/* Intervals kept per set (count): an axis gives at most 3, and intersecting
 * sets sorted in time keeps the earliest ones, the only ones that matter. */
#define MAX_INTERVALS 32

typedef struct span {
    double lo, hi;
} span;

typedef struct span_set {
    span s[MAX_INTERVALS];
    int n;
} span_set;

typedef struct axis_band {
    imp_vec3 n;    /* unit axis */
    double lo, hi; /* band of the shift f at which the projections overlap */
    double c1, c2; /* f(t) = c1 t + c2 t^2 */
} axis_band;

static double shift(const axis_band *b, double t) { return (b->c2 * t + b->c1) * t; }

/* penetration on the axis at t: how far b must move along +n or -n to separate */
static double pen(const axis_band *b, double t, int *plus) {
    double f = shift(b, t), up = b->hi - f, down = f - b->lo;
    *plus = up <= down;
    return fmin(up, down);
}

static void project(const imp_vec3 *v, size_t n, imp_vec3 off, imp_vec3 axis, double *lo,
                    double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        double x = imp_dot(imp_add(off, v[i]), axis);
        *lo = fmin(*lo, x);
        *hi = fmax(*hi, x);
    }
}

/* The t in [0, h] at which the band holds, as intervals. */
static void band_spans(const axis_band *b, double h, span_set *out) {
    double cut[6];
    int nc = 0;
    cut[nc++] = 0.0;
    double r[2];
    int k = imp_quadratic_roots(b->c2, b->c1, -b->lo, 0.0, h, r);
    for (int i = 0; i < k; ++i)
        cut[nc++] = r[i];
    k = imp_quadratic_roots(b->c2, b->c1, -b->hi, 0.0, h, r);
    for (int i = 0; i < k; ++i)
        cut[nc++] = r[i];
    cut[nc++] = h;
    for (int i = 1; i < nc; ++i) /* insertion sort of at most 6 */
        for (int j = i; j > 0 && cut[j - 1] > cut[j]; --j) {
            double x = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = x;
        }
    out->n = 0;
    for (int i = 0; i + 1 < nc; ++i) {
        double u = cut[i], w = cut[i + 1];
        double m = w == INFINITY ? (u == 0.0 ? 1.0 : 2.0 * u) : 0.5 * (u + w);
        double f = shift(b, m);
        int inside = f >= b->lo && f <= b->hi;
        if (u == w) {
            /* a point of contact only: a root where the band is just touched (t = 0 too) */
            if (out->n > 0 && out->s[out->n - 1].hi == u) continue;
            f = shift(b, u);
            inside = f >= b->lo && f <= b->hi;
        }
        if (!inside) continue;
        if (out->n > 0 && out->s[out->n - 1].hi >= u)
            out->s[out->n - 1].hi = w;
        else if (out->n < MAX_INTERVALS)
            out->s[out->n++] = (span){u, w};
    }
}

static void intersect(span_set *acc, const span_set *b) {
    span_set r = {.n = 0};
    for (int i = 0; i < acc->n; ++i)
        for (int j = 0; j < b->n; ++j) {
            double lo = fmax(acc->s[i].lo, b->s[j].lo), hi = fmin(acc->s[i].hi, b->s[j].hi);
            if (lo <= hi && r.n < MAX_INTERVALS) r.s[r.n++] = (span){lo, hi};
        }
    *acc = r;
}

/* least penetration over the axes at t, and the axis index and side giving it */
static double least_pen(const axis_band *bands, size_t nb, double t, size_t *which, int *plus) {
    double best = INFINITY;
    for (size_t i = 0; i < nb; ++i) {
        int p;
        double d = pen(&bands[i], t, &p);
        if (d < best) {
            best = d;
            *which = i;
            *plus = p;
        }
    }
    return best;
}

/* The swept test of two translating convex vertex sets over given axes. */
typedef struct swept_in {
    imp_motion a, b;
    const imp_vec3 *va, *vb; /* relative to the positions */
    size_t na, nb;
    const imp_vec3 *axes; /* unit candidate separating axes */
    size_t n_axes;
    double horizon;
    int dim;
} swept_in;

/* Middle of the touching features along the contact line (2D): the vertices
 * of a at its top along n and of b at its bottom (within tol), in world
 * coordinates at the moment of contact. */
static imp_vec3 contact_point(const swept_in *in, imp_vec3 pa, imp_vec3 pb, imp_vec3 n,
                              double tol) {
    double ha, hb, lo_unused, hi_unused;
    project(in->va, in->na, pa, n, &lo_unused, &ha);
    project(in->vb, in->nb, pb, n, &hb, &hi_unused);
    imp_vec3 u = imp_v3(-n.y, n.x, 0);
    double ua0 = INFINITY, ua1 = -INFINITY, ub0 = INFINITY, ub1 = -INFINITY;
    for (size_t i = 0; i < in->na; ++i) {
        imp_vec3 w = imp_add(pa, in->va[i]);
        if (imp_dot(w, n) >= ha - tol) {
            ua0 = fmin(ua0, imp_dot(w, u));
            ua1 = fmax(ua1, imp_dot(w, u));
        }
    }
    for (size_t i = 0; i < in->nb; ++i) {
        imp_vec3 w = imp_add(pb, in->vb[i]);
        if (imp_dot(w, n) <= hb + tol) {
            ub0 = fmin(ub0, imp_dot(w, u));
            ub1 = fmax(ub1, imp_dot(w, u));
        }
    }
    double lo = fmax(ua0, ub0), hi = fmin(ua1, ub1);
    double mid = lo <= hi ? 0.5 * (lo + hi) : 0.5 * (fmin(ua1, ub1) + fmax(ua0, ub0));
    return imp_add(imp_scale(n, 0.5 * (ha + hb)), imp_scale(u, mid));
}

/* Closest points of segments p0-p1 and q0-q1 (Ericson 5.1.9), their midpoint. */
static imp_vec3 edges_midpoint(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1) {
    imp_vec3 d1 = imp_sub(p1, p0), d2 = imp_sub(q1, q0), r = imp_sub(p0, q0);
    double a = imp_dot(d1, d1), e = imp_dot(d2, d2), f = imp_dot(d2, r), c = imp_dot(d1, r);
    double b = imp_dot(d1, d2), den = a * e - b * b;
    double s = den > 0.0 ? fmin(fmax((b * f - c * e) / den, 0.0), 1.0) : 0.0;
    double t = e > 0.0 ? (b * s + f) / e : 0.0;
    if (t < 0.0 || t > 1.0) {
        t = fmin(fmax(t, 0.0), 1.0);
        s = a > 0.0 ? fmin(fmax((b * t - c) / a, 0.0), 1.0) : 0.0;
    }
    return imp_scale(imp_add(imp_madd(p0, d1, s), imp_madd(q0, d2, t)), 0.5);
}

/* The contact point in 3D: the touching features are a's vertices at its
 * top along n and b's at its bottom (within tol). A vertex touches where it
 * is; two edges where they cross; otherwise (a face involved) the centroid
 * of the smaller feature, moved to the middle plane. */
static imp_vec3 contact_point_3d(const swept_in *in, imp_vec3 pa, imp_vec3 pb, imp_vec3 n,
                                 double tol) {
    double ha, hb, unused;
    project(in->va, in->na, pa, n, &unused, &ha);
    project(in->vb, in->nb, pb, n, &hb, &unused);
    imp_vec3 sa = imp_v3(0, 0, 0), sb = imp_v3(0, 0, 0), ea[2] = {sa, sa}, eb[2] = {sa, sa};
    size_t ka = 0, kb = 0;
    for (size_t i = 0; i < in->na; ++i) {
        imp_vec3 w = imp_add(pa, in->va[i]);
        if (imp_dot(w, n) >= ha - tol) {
            if (ka < 2) ea[ka] = w;
            sa = imp_add(sa, w);
            ++ka;
        }
    }
    for (size_t i = 0; i < in->nb; ++i) {
        imp_vec3 w = imp_add(pb, in->vb[i]);
        if (imp_dot(w, n) <= hb + tol) {
            if (kb < 2) eb[kb] = w;
            sb = imp_add(sb, w);
            ++kb;
        }
    }
    imp_vec3 c;
    if (ka == 2 && kb == 2)
        c = edges_midpoint(ea[0], ea[1], eb[0], eb[1]);
    else
        c = ka <= kb ? imp_scale(sa, 1.0 / (double)ka) : imp_scale(sb, 1.0 / (double)kb);
    return imp_madd(c, n, 0.5 * (ha + hb) - imp_dot(c, n));
}

static imp_toi_result swept(const swept_in *in) {
    imp_toi_result r = {.state = IMP_TOI_NONE};
    imp_vec3 dp = imp_sub(in->b.p, in->a.p), dv = imp_sub(in->b.v, in->a.v);
    imp_vec3 da = imp_sub(in->b.a, in->a.a);
    double scale = 0.0;
    for (size_t i = 0; i < in->na; ++i)
        scale = fmax(scale, imp_max_abs(in->va[i]));
    for (size_t i = 0; i < in->nb; ++i)
        scale = fmax(scale, imp_max_abs(imp_add(dp, in->vb[i])));
    const double tol = IMP_CONTACT_REL * scale;

    size_t nb = in->n_axes;
    axis_band *bands = malloc((nb ? nb : 1) * sizeof *bands);
    if (!bands) {
        r.state = IMP_TOI_FAILED;
        return r;
    }
    for (size_t i = 0; i < nb; ++i) {
        axis_band *b = &bands[i];
        b->n = in->axes[i];
        double a0, a1, b0, b1;
        project(in->va, in->na, imp_v3(0, 0, 0), b->n, &a0, &a1);
        project(in->vb, in->nb, dp, b->n, &b0, &b1);
        b->lo = a0 - b1;
        b->hi = a1 - b0;
        b->c1 = imp_dot(b->n, dv);
        b->c2 = 0.5 * imp_dot(b->n, da);
    }

    span_set acc = {.s = {{0.0, in->horizon}}, .n = 1};
    for (size_t i = 0; i < nb && acc.n > 0; ++i) {
        span_set s;
        band_spans(&bands[i], in->horizon, &s);
        intersect(&acc, &s);
    }

    for (int k = 0; k < acc.n; ++k) {
        double t0 = acc.s[k].lo, t1 = acc.s[k].hi;
        size_t which;
        int plus;
        double p0 = least_pen(bands, nb, t0, &which, &plus);
        if (t0 == 0.0 && p0 > tol) {
            r.state = IMP_TOI_OVERLAPPING;
            r.depth = p0;
        } else {
            /* a contact only if they then interpenetrate, not slide or graze */
            double probe = t1 == INFINITY ? t0 + 1.0 : 0.5 * (t0 + t1);
            size_t w2;
            int p2;
            if (!(t1 > t0) || least_pen(bands, nb, probe, &w2, &p2) <= tol) continue;
            r.state = IMP_TOI_HIT;
        }
        r.time = t0;
        r.normal = plus ? bands[which].n : imp_neg(bands[which].n);
        r.normal = imp_v3(r.normal.x + 0.0, r.normal.y + 0.0, r.normal.z + 0.0);
        r.pa = imp_path_at(in->a.p, in->a.v, in->a.a, t0);
        r.pb = imp_path_at(in->b.p, in->b.v, in->b.a, t0);
        double ftol = fmax(tol, r.depth);
        r.point = in->dim == 2 ? contact_point(in, r.pa, r.pb, r.normal, ftol)
                               : contact_point_3d(in, r.pa, r.pb, r.normal, ftol);
        break;
    }
    free(bands);
    return r;
}

imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in) {
    assert(in->na >= 3 && in->nb >= 3 && in->horizon > 0.0);
    imp_toi_result r = {.state = IMP_TOI_FAILED};
    size_t n = in->na + in->nb;
    imp_vec3 *axes = malloc(n * sizeof *axes);
    if (!axes) return r;
    for (size_t i = 0; i < n; ++i) { /* the edge normals of both */
        const imp_vec3 *v = i < in->na ? in->va : in->vb;
        size_t m = i < in->na ? in->na : in->nb, k = i < in->na ? i : i - in->na;
        imp_vec3 e = imp_sub(v[(k + 1) % m], v[k]);
        axes[i] = imp_normalize_or(imp_v3(e.y, -e.x, 0), imp_v3(1, 0, 0));
    }
    swept_in s = {in->a, in->b, in->va, in->vb, in->na, in->nb, axes, n, in->horizon, 2};
    r = swept(&s);
    free(axes);
    return r;
}

imp_toi_result imp_toi_polytopes_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                    const imp_motion *mb, double horizon) {
    assert(horizon > 0.0);
    imp_toi_result r = {.state = IMP_TOI_FAILED};
    imp_polytope_pair pair;
    if (imp_polytope_pair_build(a, b, &pair) != 0) return r;
    swept_in s = {*ma, *mb, pair.va, pair.vb, pair.na, pair.nb, pair.axes, pair.n_axes, horizon, 3};
    r = swept(&s);
    imp_polytope_pair_free(&pair);
    return r;
}
