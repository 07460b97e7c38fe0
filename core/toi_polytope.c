/*
 * toi_polytope.c - the swept separating axis test: the first touch of two
 * translating convex vertex sets over given axes, in any dimension.
 *
 * DESIGN
 * What: imp_toi_swept, the first t in [0, horizon] at which two convex
 * polytopes moving on parabolic paths touch with positive penetration
 * right after, with the normal; or that they overlap at t = 0 (depth and
 * normal); or none. toi_polytope_2d.c (polygons) and toi_polytope_3d.c
 * (boxes, polyhedra) supply the candidate axes and find the contact point.
 * How: swept separating axis test (Ericson, "Real-Time Collision
 * Detection", 5.5.8, generalised from linear to parabolic motion). In the
 * frame of a, b's projection on an axis n shifts by f(t) = n.dv t +
 * n.da t^2 / 2, and the projections overlap while lo <= f(t) <= hi with
 * lo = min_a - max_b and hi = max_a - min_b at t = 0. The set of such t
 * in the window is a union of at most three intervals, bounded by the
 * roots of the quadratics f(t) - lo and f(t) - hi (imp_quadratic_roots)
 * and classified at their midpoints (under linear motion the band holds
 * on the one interval between lo / c1 and hi / c1, the same roots). The polytopes touch exactly on
 * the intersection of these sets over all axes; the first interval of it in which the penetration
 * (the least overlap over the axes) becomes positive starts the contact. An interval along which
 * the penetration stays zero is sliding or grazing: no contact, per the contract. The contact
 * normal is the axis whose overlap is the binding (least) one at the contact, oriented from a to b.
 * Also here, imp_toi_cast: a GJK ray cast's proposal for two 3D polytopes
 * under linear motion, certified by this test on the one axis that binds.
 * Why: exact: every contact time is a root of a quadratic in the input,
 * found to the accuracy the coefficients allow, with no iteration to a
 * tolerance (conservative advancement stops within its tolerance). Cost
 * O(axes (n + m)) per query for vertex sets of n and m.
 */
#include "toi_polytope.h"

#include <math.h>
#include <stdlib.h>

#include "overlap_impl.h"
#include "roots.h"
#include "tolerance.h"

/* bands kept on the stack up to this many axes (malloc beyond) */
#define STACK_BANDS 256

typedef imp_toi_span span;
typedef imp_toi_sweep span_set;
#define MAX_INTERVALS IMP_TOI_MAX_SPANS

static double shift(const imp_toi_band *b, double t) { return (b->c2 * t + b->c1) * t; }

/* penetration on the axis at t: how far b must move along +n or -n to separate */
static double pen(const imp_toi_band *b, double t, int *plus) {
    double f = shift(b, t), up = b->hi - f, down = f - b->lo;
    *plus = up <= down;
    return up < down ? up : down;
}

void imp_toi_project(const imp_vec3 *v, size_t n, imp_vec3 off, imp_vec3 axis, double *lo,
                     double *hi) {
    double l = INFINITY, h = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        double x = imp_dot(imp_add(off, v[i]), axis);
        l = x < l ? x : l;
        h = x > h ? x : h;
    }
    *lo = l;
    *hi = h;
}

int imp_toi_quadratic_roots(double c2, double c1, double c0, double h, double r[2]) {
    if (!isfinite(c0)) return 0; /* an open side of a band */
    if (c2 != 0.0) return imp_quadratic_roots(c2, c1, c0, 0.0, h, r);
    if (c1 == 0.0) return 0;
    r[0] = c0 == 0.0 ? 0.0 : -c0 / c1;
    return r[0] >= 0.0 && r[0] <= h && isfinite(r[0]);
}

/* The t in [0, h] at which the band holds, as intervals. */
static void band_spans(const imp_toi_band *b, double h, span_set *out) {
    double cut[6];
    int nc = 0;
    cut[nc++] = 0.0;
    double r[2];
    int k = imp_toi_quadratic_roots(b->c2, b->c1, -b->lo, h, r);
    for (int i = 0; i < k; ++i)
        cut[nc++] = r[i];
    k = imp_toi_quadratic_roots(b->c2, b->c1, -b->hi, h, r);
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
    span r[MAX_INTERVALS];
    int n = 0;
    for (int i = 0; i < acc->n; ++i)
        for (int j = 0; j < b->n; ++j) {
            double lo = imp_fmax(acc->s[i].lo, b->s[j].lo), hi = imp_fmin(acc->s[i].hi, b->s[j].hi);
            if (lo <= hi && n < MAX_INTERVALS) r[n++] = (span){lo, hi};
        }
    for (int i = 0; i < n; ++i)
        acc->s[i] = r[i];
    acc->n = n;
}

/* The least penetration over the axes at t, and the axis index and side giving it; and, in
 * the same pass over the bands, the least at probe. */
static double least_pen_two(const imp_toi_band *bands, size_t nb, double t, size_t *which,
                            int *plus, double probe, double *at_probe) {
    double best = INFINITY, best2 = INFINITY;
    for (size_t i = 0; i < nb; ++i) {
        int p, p2;
        double d = pen(&bands[i], t, &p), d2 = pen(&bands[i], probe, &p2);
        if (d < best) {
            best = d;
            *which = i;
            *plus = p;
        }
        best2 = d2 < best2 ? d2 : best2;
    }
    *at_probe = best2;
    return best;
}

static double max_abs(imp_vec3 v) {
    double x = fabs(v.x), y = fabs(v.y), z = fabs(v.z);
    double m = x > y ? x : y;
    return m > z ? m : z;
}

/* the pair's scale: the largest coordinate of a's vertices and of b's
 * relative to a's position */
static double pair_scale(const imp_toi_swept_input *in, imp_vec3 dp) {
    double scale = 0.0;
    for (size_t i = 0; i < in->na; ++i) {
        double m = max_abs(in->va[i]);
        scale = m > scale ? m : scale;
    }
    for (size_t i = 0; i < in->nb; ++i) {
        double m = max_abs(imp_add(dp, in->vb[i]));
        scale = m > scale ? m : scale;
    }
    return scale;
}

/* The first interval of acc in which the penetration becomes positive. */
static imp_toi_result resolve(const imp_toi_swept_input *in, const imp_toi_band *bands, size_t nb,
                              const span_set *acc, double *feature_tol) {
    imp_toi_result r = imp_toi_none();
    const double tol = IMP_CONTACT_REL * pair_scale(in, imp_sub(in->b.p, in->a.p));
    for (int k = 0; k < acc->n; ++k) {
        double t0 = acc->s[k].lo, t1 = acc->s[k].hi;
        size_t which = 0;
        int plus = 1;
        /* a contact only if they then interpenetrate, not slide or graze: the penetration
         * at the probe, found in the same pass as at t0 */
        double probe = t1 == INFINITY ? t0 + 1.0 : 0.5 * (t0 + t1), p_probe;
        double p0 = least_pen_two(bands, nb, t0, &which, &plus, probe, &p_probe);
        if (t0 == 0.0 && p0 > tol) {
            r.state = IMP_TOI_OVERLAPPING;
            r.depth = p0;
        } else {
            if (!(t1 > t0) || p_probe <= tol) continue;
            r.state = IMP_TOI_HIT;
        }
        r.time = t0;
        r.normal = plus ? bands[which].n : imp_neg(bands[which].n);
        r.normal = imp_v3(r.normal.x + 0.0, r.normal.y + 0.0, r.normal.z + 0.0);
        r.pa = imp_path_at(in->a.p, in->a.v, in->a.a, t0);
        r.pb = imp_path_at(in->b.p, in->b.v, in->b.a, t0);
        *feature_tol = imp_fmax(tol, r.depth);
        break;
    }
    return r;
}

void imp_toi_sweep_init(imp_toi_sweep *acc, double horizon) {
    acc->s[0] = (span){0.0, horizon};
    acc->n = 1;
}

int imp_toi_sweep_narrow_curved(imp_toi_sweep *acc, const imp_toi_band *b, double horizon) {
    span_set s;
    band_spans(b, horizon, &s);
    intersect(acc, &s);
    return acc->n > 0;
}

imp_toi_result imp_toi_sweep_resolve(const imp_toi_swept_input *in, const imp_toi_band *bands,
                                     const imp_toi_sweep *acc, double *feature_tol) {
    return resolve(in, bands, in->n_axes, acc, feature_tol);
}

int imp_toi_bounds_miss(const imp_motion *a, double ra, const imp_motion *b, double rb,
                        double horizon) {
    if (imp_dot(a->a, a->a) != 0.0 || imp_dot(b->a, b->a) != 0.0) return 0;
    imp_vec3 dp = imp_sub(b->p, a->p), dv = imp_sub(b->v, a->v);
    double vv = imp_dot(dv, dv), t = vv > 0.0 ? -imp_dot(dp, dv) / vv : 0.0;
    t = t > horizon ? horizon : t > 0.0 ? t : 0.0;
    imp_vec3 step = imp_scale(dv, t), d = imp_add(dp, step);
    /* the rounding of d, the radii and the square, with room to spare */
    double m = (ra + rb) * (1.0 + 1e-9) + 1e-9 * (max_abs(dp) + max_abs(step));
    return isfinite(m) && imp_dot(d, d) > m * m;
}

imp_toi_result imp_toi_swept(const imp_toi_swept_input *in, double *feature_tol) {
    imp_vec3 dp = imp_sub(in->b.p, in->a.p), dv = imp_sub(in->b.v, in->a.v);
    imp_vec3 da = imp_sub(in->b.a, in->a.a);
    size_t nb = in->n_axes;
    imp_toi_band stack[STACK_BANDS], *bands = stack;
    if (nb > STACK_BANDS && !(bands = malloc(nb * sizeof *bands)))
        return imp_toi_failed(IMP_FAILURE_NOMEM);
    /* each band as it is needed: a separating axis ends the search */
    span_set acc;
    imp_toi_sweep_init(&acc, in->horizon);
    imp_toi_result r = imp_toi_none();
    size_t i = 0, kept = 0;
    for (; i < nb; ++i) {
        /* an axis that is the previous one reversed gives the same band mirrored (the
         * projections are exact negations), which the previous one already holds */
        imp_vec3 n = in->axes[i];
        if (kept > 0 && n.x == -bands[kept - 1].n.x && n.y == -bands[kept - 1].n.y &&
            n.z == -bands[kept - 1].n.z)
            continue;
        imp_toi_band *b = &bands[kept++];
        b->n = n;
        double a0, a1, b0, b1;
        imp_toi_project(in->va, in->na, imp_v3(0, 0, 0), b->n, &a0, &a1);
        imp_toi_project(in->vb, in->nb, dp, b->n, &b0, &b1);
        b->lo = a0 - b1;
        b->hi = a1 - b0;
        b->c1 = imp_dot(b->n, dv);
        b->c2 = 0.5 * imp_dot(b->n, da);
        if (!imp_toi_sweep_narrow(&acc, b, in->horizon)) break;
    }
    if (i == nb) r = resolve(in, bands, kept, &acc, feature_tol);
    if (bands != stack) free(bands);
    return r;
}

/* ---- the certified ray cast (3D polytopes under linear motion) -------------------------- */

/* The cast's margins (dimensionless). The entry triangle of the Minkowski difference
 * must not be thin (its sides above CAST_THIN_REL of the scale, the sine of their angle
 * above it too); its corners must lie within CAST_PLANE_REL of the scale of the
 * difference's support plane along its normal (a few ulps: rounding only, so a face of
 * the difference and not a cut through it); the ray must cross it at an angle (n . dv
 * below -CAST_ENTER_REL |dv|, so the time's error, the plane's over the approach speed,
 * stays within 1e-11 of the scale's travel time) and strictly inside it (every
 * barycentric coordinate above CAST_BARY_MIN). */
#define CAST_THIN_REL 1e-6
#define CAST_PLANE_REL 1e-14
#define CAST_ENTER_REL 1e-3
#define CAST_BARY_MIN 1e-9

static double max_abs_of(const imp_vec3 *v, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double x = max_abs(v[i]);
        m = x > m ? x : m;
    }
    return m;
}

/* The pair's gap along unit n at t = 0 (b's least projection, a at the origin and b at dp,
 * less a's greatest) and its rate, n . dv. */
static double gap_along(const imp_toi_swept_input *in, imp_vec3 dp, imp_vec3 dv, imp_vec3 n,
                        double *rate) {
    double a0, a1, b0, b1;
    imp_toi_project(in->va, in->na, imp_v3(0, 0, 0), n, &a0, &a1);
    imp_toi_project(in->vb, in->nb, dp, n, &b0, &b1);
    *rate = imp_dot(n, dv);
    return b0 - a1;
}

/* A miss of the ray cast, certified: the last plane the ray was advanced to (sep[1]) keeps
 * the pair apart until just before the ray reaches it, by more than the margin
 * (IMP_CONTACT_REL of the scale), and the final plane (sep[0]) from then to the horizon (a
 * gap linear in t is checked at the ends). */
static int certified_miss(const imp_toi_swept_input *in, imp_vec3 dp, imp_vec3 dv, double S,
                          const imp_vec3 sep[2]) {
    const double margin = IMP_CONTACT_REL * S;
    double from = 0.0, c1;
    imp_vec3 n = imp_normalize_or(sep[1], imp_v3(0, 0, 0));
    if (n.x != 0.0 || n.y != 0.0 || n.z != 0.0) {
        double g0 = gap_along(in, dp, dv, n, &c1);
        if (!(g0 > margin && c1 < 0.0)) return 0;
        from = (g0 - 2.0 * margin) / -c1; /* the gap there is 2 margins, less rounding */
        if (!(from >= 0.0 && from < INFINITY)) return 0;
    }
    n = imp_normalize_or(sep[0], imp_v3(0, 0, 0));
    double g0 = gap_along(in, dp, dv, n, &c1);
    double gf = g0 + c1 * from;
    double gh = in->horizon < INFINITY ? g0 + c1 * in->horizon : c1 >= 0.0 ? gf : -INFINITY;
    return gf > margin && gh > margin;
}

/* The triangle of the difference the ray enters through, the cast's simplex: its unit
 * normal (either way round) to *n; 0 when it is not a triangle or is thin. */
static int entry_face(const imp_vec3 *y, size_t ny, double S, imp_vec3 *n) {
    if (ny != 3) return 0;
    imp_vec3 e1 = imp_sub(y[1], y[0]), e2 = imp_sub(y[2], y[0]), c = imp_cross(e1, e2);
    double l1 = imp_len(e1), l2 = imp_len(e2), lc = imp_len(c);
    if (!(lc > CAST_THIN_REL * l1 * l2) || !(imp_fmin(l1, l2) > CAST_THIN_REL * S)) return 0;
    *n = imp_scale(c, 1.0 / lc);
    return 1;
}

/* 1 when x lies strictly inside triangle f (of its plane) */
static int strictly_inside(const imp_vec3 f[3], imp_vec3 x) {
    imp_vec3 e1 = imp_sub(f[1], f[0]), e2 = imp_sub(f[2], f[0]), r = imp_sub(x, f[0]);
    double d00 = imp_dot(e1, e1), d01 = imp_dot(e1, e2), d11 = imp_dot(e2, e2);
    double d20 = imp_dot(r, e1), d21 = imp_dot(r, e2), den = d00 * d11 - d01 * d01;
    double bv = (d11 * d20 - d01 * d21) / den, bw = (d00 * d21 - d01 * d20) / den;
    return bv >= CAST_BARY_MIN && bw >= CAST_BARY_MIN && 1.0 - bv - bw >= CAST_BARY_MIN;
}

int imp_toi_cast(const imp_toi_swept_input *in, imp_toi_result *out, double *feature_tol) {
    imp_vec3 dp = imp_sub(in->b.p, in->a.p), dv = imp_sub(in->b.v, in->a.v);
    imp_vec3 da = imp_sub(in->b.a, in->a.a);
    if (da.x != 0.0 || da.y != 0.0 || da.z != 0.0) return 0; /* a straight ray only */
    const double S = max_abs_of(in->va, in->na) + max_abs_of(in->vb, in->nb) + max_abs(dp);
    if (!(S < INFINITY)) return 0;
    double lam;
    imp_vec3 y[3], sep[2], n;
    size_t ny = 0;
    int k = imp_ov_gjk_raycast(in->va, in->na, in->vb, in->nb, dp, dv, in->horizon,
                               IMP_CONTACT_REL * S, &lam, y, &ny, sep);
    if (k < 0) return 0;
    if (k == 0) {
        if (!certified_miss(in, dp, dv, S, sep)) return 0;
        *out = imp_toi_none();
        return 1;
    }
    (void)lam; /* the time is the band's along the face's normal, not the cast's */
    if (!entry_face(y, ny, S, &n)) return 0;
    if (imp_dot(n, imp_sub(dp, y[0])) < 0.0) n = imp_neg(n); /* outward: x starts outside */
    imp_toi_band band = {.n = n, .c1 = imp_dot(n, dv), .c2 = 0.0};
    if (!(band.c1 < -CAST_ENTER_REL * imp_len(dv))) return 0;
    double a0, a1, b0, b1;
    imp_toi_project(in->va, in->na, imp_v3(0, 0, 0), n, &a0, &a1);
    imp_toi_project(in->vb, in->nb, imp_v3(0, 0, 0), n, &b0, &b1);
    const double support = a1 - b0; /* the difference's support along n */
    for (int i = 0; i < 3; ++i)
        if (!(fabs(imp_dot(n, y[i]) - support) <= CAST_PLANE_REL * S)) return 0;
    imp_toi_project(in->vb, in->nb, dp, n, &b0, &b1);
    band.lo = a0 - b1;
    band.hi = a1 - b0;
    span_set acc;
    imp_toi_sweep_init(&acc, in->horizon);
    if (!imp_toi_sweep_narrow(&acc, &band, in->horizon) || !(acc.s[0].lo > 0.0)) return 0;
    if (!strictly_inside(y, imp_madd(dp, dv, acc.s[0].lo))) return 0;
    imp_toi_result r = resolve(in, &band, 1, &acc, feature_tol);
    if (r.state != IMP_TOI_HIT) return 0;
    *out = r;
    return 1;
}
