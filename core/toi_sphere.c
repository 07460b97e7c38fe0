/*
 * toi_sphere.c - time of impact and closest approach of two spheres.
 *
 * DESIGN
 * What: the first t in [0, horizon] at which two spheres (circles in 2D,
 * points for radius 0) on parabolic paths touch, per the contract of
 * POST /v1/toi, plus the time of least centre distance in the window.
 *
 * How: with d(t) = dp + dv t + da t^2/2 the relative position of b from
 * a and R = ra + rb, the squared gap f(t) = |d(t)|^2 - R^2 is a polynomial
 *     f = |da|^2/4 t^4 + (dv.da) t^3 + (|dv|^2 + dp.da) t^2 + 2 (dp.dv) t
 *         + (|dp|^2 - R^2),
 * a quadratic for linear motion and a quartic otherwise (Ericson, Real-Time
 * Collision Detection, 5.5.8 for the linear case). Each coefficient is a
 * dot product computed with Dot2 (eft.h): the constant term cancels
 * completely exactly when the bodies touch, and it decides between hit,
 * touching and overlapping. The roots come from imp_poly_roots, which
 * reports a graze (double root) as a touch. The first root after t = 0 is
 * the time of impact, since f > 0 until then.
 * Most pairs miss: when the gap polynomial is certainly positive on
 * [0, horizon] (surely_positive) the root solver is not called. For
 * linear motion the coefficients come from the same Dot2 sums with
 * Dekker's product kept in registers, and the closest approach is the
 * one root of a linear f' in closed form; imp_toi_spheres_impact leaves
 * the closest approach out for callers that need only the time of impact.
 * A pair touching at t = 0 (gap within IMP_CONTACT_REL of the scale) is
 * classified by the sign of the first non-vanishing derivative of f there:
 * approaching is a hit at 0; separating or sliding has the factor t
 * divided out of f exactly, and the next touch is the first root of the
 * quotient.
 *
 * Why: overlap tests after a time step miss fast bodies (tunnelling) and
 * conservative advancement only converges to a tolerance; the gap of two
 * spheres is a polynomial, so its first root is the exact answer.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eft.h"
#include "roots.h"
#include "toi.h"
#include "tolerance.h"

static double dot2v(imp_vec3 a, imp_vec3 b) {
    double x[3] = {a.x, a.y, a.z}, y[3] = {b.x, b.y, b.z};
    return imp_dot2(x, y, 3);
}

/* fmax and imp_max_abs without calls to fmax (the inputs are not NaN). */
static double max2(double x, double y) { return x > y ? x : y; }
static double max_abs3(imp_vec3 a) { return max2(max2(fabs(a.x), fabs(a.y)), fabs(a.z)); }

/* x = 0 or 2^-480 <= |x| <= 2^480: the products of two such numbers and
 * their rounding errors are representable, so Dekker's product is exact. */
static inline int tame(double x) {
    double a = fabs(x);
    return a == 0.0 || (a >= 0x1p-480 && a <= 0x1p480);
}

static inline int tame3(imp_vec3 a) { return tame(a.x) & tame(a.y) & tame(a.z); }

/* imp_dot2 for tame operands with Dekker's product: the same sums of the
 * same exact products and errors, so the same result, without fma calls. */
static double dot2_tame(const double *x, const double *y, int n) {
    return imp_dot2_by(x, y, n, imp_two_prod_split);
}

/* Ascending coefficients of f(t) = |d(t)|^2 - R^2 for linear motion (da =
 * 0), tame inputs, with the constant term c0 already made (gap0's): gap_poly's
 * values (a Dot2 with zero products added is the same Dot2: their products and
 * errors are exact zeros). */
static void gap_poly_linear(imp_vec3 dp, imp_vec3 dv, double c0, double c[5]) {
    double p3[3] = {dp.x, dp.y, dp.z}, v3[3] = {dv.x, dv.y, dv.z};
    c[0] = c0;
    c[1] = 2.0 * dot2_tame(p3, v3, 3);
    c[2] = dot2_tame(v3, v3, 3);
    c[3] = c[4] = 0.0;
}

/* Ascending coefficients of f(t) = |d(t)|^2 - R^2, with the constant term c0 (the Dot2 of
 * dp.dp - R^2) already made. */
static void gap_poly(imp_vec3 dp, imp_vec3 dv, imp_vec3 da, double c0, double c[5]) {
    c[0] = c0;
    c[1] = 2.0 * dot2v(dp, dv);
    double x2[6] = {dv.x, dv.y, dv.z, dp.x, dp.y, dp.z},
           y2[6] = {dv.x, dv.y, dv.z, da.x, da.y, da.z};
    c[2] = imp_dot2(x2, y2, 6);
    c[3] = dot2v(dv, da);
    c[4] = 0.25 * dot2v(da, da);
}

/* Least |d(t)| over [0, h]: at an end or where d/dt |d|^2 = f'(t) = 0, a
 * cubic whose coefficients are those of the gap polynomial c (f' / 2). */
static void closest_approach(imp_vec3 dp, imp_vec3 dv, imp_vec3 da, double R, double h,
                             const double c[5], imp_toi_result *out) {
    double g[4] = {0.5 * c[1], c[2], 1.5 * c[3], 2.0 * c[4]};
    double cand[5];
    int nc = 0;
    if (g[3] == 0.0 && g[2] == 0.0) {
        /* linear motion: f'/2 = g0 + g1 t, the one root imp_poly_roots
         * gives (-g0 / g1, or an exact 0 when g0 is 0) in closed form */
        if (g[1] != 0.0) {
            double r = g[0] == 0.0 ? 0.0 : -g[0] / g[1];
            if (r >= 0.0 && r <= h && isfinite(r)) cand[nc++] = r;
        }
    } else {
        nc = imp_poly_roots(g, 3, 0.0, h, cand);
    }
    cand[nc++] = 0.0;
    if (isfinite(h)) cand[nc++] = h;
    double best_t = 0.0, best_d = INFINITY;
    for (int i = 0; i < nc; ++i) {
        double dist = imp_len(imp_path_at(dp, dv, da, cand[i]));
        if (dist < best_d || (dist == best_d && cand[i] < best_t)) {
            best_d = dist;
            best_t = cand[i];
        }
    }
    out->has_closest = 1;
    out->closest_time = best_t;
    out->closest_distance = best_d - R;
}

/* Whether the Bernstein coefficients b[0..n] of f on an interval, or those of
 * its halves (de Casteljau at 1/2, Farouki & Rajan as above), up to `depth`
 * halvings deep, are all above the margin (m at this level, sub below): then f
 * stays above m there. Each coefficient of a half is a chain of at most n
 * averages of the ones above, none larger in magnitude than sum_i |c_i| h^i,
 * each rounding by at most u of it, so D halvings add at most D n u of that
 * sum: surely_positive's sub = 3 margin (48 u of it) covers the 12 u of the
 * coefficients' own rounding, the 0.42 u of the multiple-root rule and the
 * 5 x 4 u of SURE_DEPTH halvings of a quartic. */
#define SURE_DEPTH 5

static int bernstein_positive(const double b[5], int n, double m, double sub, int depth) {
    int all = 1;
    for (int i = 0; i <= n; ++i)
        all &= b[i] > m;
    if (all) return 1;
    if (depth == 0 || !(b[0] > sub) || !(b[n] > sub)) return 0;
    double t[5], l[5], r[5];
    for (int i = 0; i <= n; ++i)
        t[i] = b[i];
    l[0] = t[0];
    r[n] = t[n];
    for (int j = 1; j <= n; ++j) {
        for (int i = 0; i + j <= n; ++i)
            t[i] = 0.5 * (t[i] + t[i + 1]);
        l[j] = t[0];
        r[n - j] = t[n - j];
    }
    return bernstein_positive(l, n, sub, sub, depth - 1) &&
           bernstein_positive(r, n, sub, sub, depth - 1);
}

/*
 * 1 when the gap polynomial f (degree n, f(0) = c[0] > 0) certainly stays
 * above zero on [0, h], so that imp_poly_roots would find no root there:
 * the common miss, decided in a few operations. Two sufficient tests:
 *  - on [0, h] (h finite) the Bernstein coefficients of f are all
 *    positive, with a margin of 16 u sum_i |c_i| h^i (or, failing that,
 *    those of halves of [0, h], down to 1/32 of it, with a wider margin:
 *    bernstein_positive): f is a convex
 *    combination of them (Farouki & Rajan, "On the numerical condition of
 *    polynomials in Bernstein form", CAGD 4, 1987), and the margin covers
 *    both their rounding (at most 12 u of that sum) and the multiple-root
 *    rule of imp_poly_roots (0.42 u of sum_i |c_i| |t|^i);
 *  - for a quadratic, a discriminant c1^2 - 4 c0 c2 negative by more than
 *    1e-12 of c1^2 + 4 c0 c2 (its rounding is a few u of that): then f at
 *    its vertex exceeds 1e-12 / 3 of sum |c_i||t|^i there, far above the
 *    multiple-root rule, and f has no real root at all.
 */
static int surely_positive(const double c[5], int n, double h) {
    const double u = IMP_UNIT_ROUNDOFF;
    if (n == 2) {
        double q = c[1] * c[1], r = 4.0 * c[0] * c[2];
        if (q - r < -1e-12 * (q + r)) return 1;
    }
    if (!isfinite(h)) return 0;
    double a[5], mag = 0.0, hp = 1.0;
    for (int i = 0; i <= n; ++i) {
        a[i] = c[i] * hp;
        mag += fabs(a[i]);
        hp *= h;
    }
    double margin = 16.0 * u * mag;
    if (!(a[0] > margin)) return 0;
    double b[5];
    if (n == 2) {
        b[0] = a[0], b[1] = a[0] + 0.5 * a[1], b[2] = a[0] + a[1] + a[2];
    } else {
        b[0] = a[0], b[1] = a[0] + 0.25 * a[1], b[2] = a[0] + 0.5 * a[1] + a[2] / 6.0;
        b[3] = a[0] + 0.75 * a[1] + 0.5 * a[2] + 0.25 * a[3];
        b[4] = a[0] + a[1] + a[2] + a[3] + a[4];
    }
    /* else on halves of [0, h], down to 1/32 of it, with the margin for the halvings'
     * rounding (bernstein_positive) */
    return bernstein_positive(b, n, margin, 3.0 * margin, SURE_DEPTH);
}

/* Magnitude of the coordinates involved, the scale of rounding errors in
 * positions and so of the contact tolerance. */
static inline double coord_scale(const imp_toi_spheres_input *in) {
    return max2(max2(max_abs3(in->a.p), max_abs3(in->b.p)), in->ra + in->rb);
}

/* Fill the contact geometry of a touch at time t. */
static void contact_at(const imp_toi_spheres_input *in, double t, imp_toi_result *out) {
    out->time = t;
    out->pa = imp_path_at(in->a.p, in->a.v, in->a.a, t);
    out->pb = imp_path_at(in->b.p, in->b.v, in->b.a, t);
    imp_vec3 d = imp_sub(out->pb, out->pa);
    double scale = max2(coord_scale(in), max2(max_abs3(out->pa), max_abs3(out->pb)));
    /* Centres closer than rounding noise give no direction of their own (nor does a length
     * that is 0 or not finite: imp_normalize_or's fallback). Coincident centres (two points
     * meeting): b arrived against its relative velocity, so the normal from a to b points
     * back along it. That fallback is made only when it is taken (a contact's square root
     * and division fewer). */
    double l = imp_len(d);
    if (l <= IMP_CONTACT_REL * scale || !imp_len_directed(l)) {
        imp_vec3 rel_v =
            imp_sub(imp_path_vel(in->b.v, in->b.a, t), imp_path_vel(in->a.v, in->a.a, t));
        out->normal = imp_normalize_or(imp_neg(rel_v), imp_v3(1, 0, 0));
    } else {
        out->normal = imp_scale(d, 1.0 / l);
    }
    out->point = imp_madd(out->pa, out->normal, in->ra);
}

/* The power of two nearest x > 0, clamped to 2^-IMP_SPHERE_SCALE_MAX_EXP ..
 * 2^IMP_SPHERE_SCALE_MAX_EXP. */
static double pow2_near(double x) {
    int e;
    _Static_assert(IMP_SPHERE_SCALE_MAX_EXP >= 999, "the clamp is inactive on this range");
    if (x >= 0x1p-999 && x < 0x1p999) {
        /* the power of two frexp would give, from the exponent bits */
        uint64_t b;
        memcpy(&b, &x, sizeof b);
        b = ((b >> 52) + 1) << 52;
        double r;
        memcpy(&r, &b, sizeof r);
        return r;
    }
    frexp(x, &e);
    if (e > IMP_SPHERE_SCALE_MAX_EXP) e = IMP_SPHERE_SCALE_MAX_EXP;
    if (e < -IMP_SPHERE_SCALE_MAX_EXP) e = -IMP_SPHERE_SCALE_MAX_EXP;
    return ldexp(1.0, e);
}

/* Component k of p + v t + a t^2 / 2. */
static double comp(imp_vec3 x, int k) { return k == 0 ? x.x : k == 1 ? x.y : x.z; }

/* The first t in [0, h] at which p + v t + a t^2/2 = 0 in every component
 * (to within tol), or NAN; t = 0 is skipped when the points start together
 * (touching and separating is no contact). */
static double points_meet(imp_vec3 p, imp_vec3 v, imp_vec3 a, double h, double tol, int together) {
    /* the component whose path varies most decides the candidates */
    int k = -1;
    double best = 0.0;
    for (int i = 0; i < 3; ++i) {
        double w = fabs(comp(v, i)) + fabs(comp(a, i)) * (isfinite(h) ? h : 1.0);
        if (w > best) {
            best = w;
            k = i;
        }
    }
    if (k < 0) return NAN; /* no relative motion: together for ever, or never */
    double r[2];
    int n = imp_quadratic_roots(0.5 * comp(a, k), comp(v, k), comp(p, k), 0.0, h, r);
    for (int i = 0; i < n; ++i) {
        if (together && r[i] == 0.0) continue;
        imp_vec3 d = imp_path_at(p, v, a, r[i]);
        if (fabs(d.x) <= tol && fabs(d.y) <= tol && fabs(d.z) <= tol) return r[i];
    }
    return NAN;
}

/*
 * 1 when linear motion (no acceleration) of tame numbers certainly ends in
 * NONE by the exact path below, decided in plain doubles before any of it:
 * the gap polynomial f(t) = |dp + dv t|^2 - R^2 = c0 + 2 s t + c2 t^2 (s = dp.dv,
 * c2 = |dv|^2; dp and dv are the differences the exact path takes) with
 *  - c0 above the touching band (gap0 > tol: the exact path takes its gap branch),
 *    with twice the band to spare for that path's rounding, and
 *  - either s > 0 (f increases on t >= 0: every coefficient is positive, so the
 *    root finder, whose multiple-root rule needs f below 0.42 u sum |c_i| t^i,
 *    finds nothing), or a discriminant s^2 - c0 c2 below -2e-12 (s^2 + c0 c2)
 *    (surely_positive's discriminant test then holds for the exact path's
 *    coefficients, which are within a few u of the exact ones),
 *  - or s + c2 h below -1e-9 (|s| + c2 h) and f(h) above 1e-9 (c0 + R^2 + 2 |s| h + c2 h^2):
 *    f falls over the whole window [0, h] (its vertex is beyond it), so it is least at h,
 *    where it still exceeds 1e-9 of the sum of its terms' magnitudes; the exact path's
 *    coefficients are within a few u of these and its multiple-root rule needs f below
 *    0.42 u of that sum, so it finds no root in the window. These are the pairs that
 *    approach but do not reach each other within the horizon (1M clustered 3D spheres,
 *    horizon 1: 0.67M of 14.5M candidates, each a gap polynomial and a root search).
 * The exact values are bounded from the plain ones: with tame numbers no product
 * underflows, a sum of k products is within k u (1 + u) of the sum of their
 * magnitudes (taken 5 u, 4 u, 4 u here, with room), and the products of two
 * such sums add their errors' cross terms and 3 u of their magnitudes.
 */
/* The horizon test's margin in surely_misses_linear (relative): far above rounding. */
#define HORIZON_MISS_REL 1e-9

static int surely_misses_linear(imp_vec3 dp, imp_vec3 dv, double R, double cs, double h) {
    const double u = IMP_UNIT_ROUNDOFF;
    double pp = dp.x * dp.x + dp.y * dp.y + dp.z * dp.z;
    double a0 = pp + R * R, c0 = pp - R * R, e0 = 5.0 * u * a0;
    double d = max_abs3(dp);
    if (!(c0 - e0 > 2.0 * IMP_CONTACT_REL * cs * (1.8 * d + R) * (1.0 + 16.0 * u))) return 0;
    double sp = dp.x * dv.x + dp.y * dv.y + dp.z * dv.z;
    double es = 4.0 * u * (fabs(dp.x * dv.x) + fabs(dp.y * dv.y) + fabs(dp.z * dv.z));
    if (sp > es) return 1; /* moving apart */
    double c2 = dv.x * dv.x + dv.y * dv.y + dv.z * dv.z, e2 = 4.0 * u * c2;
    double q = sp * sp, r = c0 * c2;
    double err = es * (2.0 * fabs(sp) + es) + c0 * e2 + (c2 + e2) * e0 + 3.0 * u * (q + r);
    if (q - r + err * (1.0 + 16.0 * u) < -2e-12 * (q + r)) return 1;
    /* approaching, but not within the window: f still falls at h (its vertex -s / c2
     * beyond it) and is still clearly above 0 there */
    double ch = c2 * h;
    if (!(sp + ch < -HORIZON_MISS_REL * (fabs(sp) + ch))) return 0;
    double fh = c0 + h * (2.0 * sp + ch), mag = a0 + h * (2.0 * fabs(sp) + ch);
    return fh > HORIZON_MISS_REL * mag;
}

/* out (its closest approach kept) as the answer for spheres overlapping at t = 0 by -gap0
 * lam. */
static imp_toi_result overlapping(const imp_toi_spheres_input *in, double gap0, double lam,
                                  imp_toi_result out) {
    out.state = IMP_TOI_OVERLAPPING;
    contact_at(in, 0.0, &out);
    out.depth = -gap0 * lam;
    out.point = imp_madd(out.pa, out.normal, in->ra - 0.5 * out.depth);
    return out;
}

static imp_toi_result spheres(const imp_toi_spheres_input *in, int want_closest) {
    assert(in->ra >= 0.0 && in->rb >= 0.0);
    assert(in->horizon > 0.0);
    imp_vec3 dp = imp_sub(in->b.p, in->a.p);
    imp_vec3 dv = imp_sub(in->b.v, in->a.v);
    imp_vec3 da = imp_sub(in->b.a, in->a.a);
    double R = in->ra + in->rb;
    /* the common miss of two spheres in linear motion, when no closest approach is
     * asked for */
    if (!want_closest && R > 0.0 && da.x == 0.0 && da.y == 0.0 && da.z == 0.0 && tame3(dp) &&
        tame3(dv) && tame(R) && surely_misses_linear(dp, dv, R, coord_scale(in), in->horizon))
        return imp_toi_none();
    imp_toi_result out = imp_toi_none();

    /* Work in units where the pair's size is about 1 and the motion
     * covers that size in about unit time: lengths divided by lam, times by
     * ts, both powers of two (exact). Without this, |dv|^2 of a velocity of
     * 1e-165 underflows and the gap polynomial loses its leading term. */
    double size = max2(max_abs3(dp), R);
    double lam = size > 0.0 ? pow2_near(size) : 1.0;
    dp = imp_scale(dp, 1.0 / lam);
    dv = imp_scale(dv, 1.0 / lam);
    da = imp_scale(da, 1.0 / lam);
    R /= lam;
    /* The gap at t = 0 decides overlapping: it is the gap polynomial's constant term, made
     * here once for the polynomial below (a Dot2: dot2_tame's for linear motion of tame
     * numbers, the same value as imp_dot2's), and the time scale below does not change it.
     * Without a closest approach to make, an overlap (a third of a dense scene's contacts)
     * is answered before that scale and the other terms. */
    double x0[4] = {dp.x, dp.y, dp.z, R}, y0[4] = {dp.x, dp.y, dp.z, -R};
    int linear_tame = da.x == 0.0 && da.y == 0.0 && da.z == 0.0 && tame3(dp) && tame(R);
    double c0 = linear_tame ? dot2_tame(x0, y0, 4) : imp_dot2(x0, y0, 4);
    double dist0 = imp_len(dp);
    double scale = coord_scale(in) / lam;
    double gap0 = dist0 + R > 0.0 ? c0 / (dist0 + R) : 0.0;
    double tol = IMP_CONTACT_REL * scale;
    if (!want_closest && gap0 < -tol) return overlapping(in, gap0, lam, out);
    /* max-abs, not the length: |dv|^2 itself may underflow */
    double speed = max_abs3(dv), accel = max_abs3(da), tchar = INFINITY;
    if (speed > 0.0) tchar = 1.0 / speed;
    if (accel > 0.0) tchar = imp_fmin(tchar, sqrt(2.0 / accel));
    double ts = isfinite(tchar) ? pow2_near(tchar) : 1.0;
    dv = imp_scale(dv, ts);
    da = imp_scale(imp_scale(da, ts), ts); /* ts * ts may overflow */
    double h = in->horizon / ts;

    double c[5];
    int linear = da.x == 0.0 && da.y == 0.0 && da.z == 0.0;
    if (linear_tame && tame3(dv)) /* da stays 0 under the time scale */
        gap_poly_linear(dp, dv, c0, c);
    else
        gap_poly(dp, dv, da, c0, c);
    if (want_closest) {
        closest_approach(dp, dv, da, R, h, c, &out);
        out.closest_time *= ts;
        out.closest_distance *= lam;
    }

    if (gap0 < -tol) return overlapping(in, gap0, lam, out);

    double t = NAN;
    if (R == 0.0) {
        /* Two points: |d|^2 only touches zero, so every contact would be a
         * double root of the gap polynomial, found to sqrt(u) at best. They
         * meet where every component of d vanishes: take the roots of one
         * component's quadratic (simple, exact to the last bits) and keep
         * the first at which the others vanish too. */
        t = points_meet(dp, dv, da, h, tol, dist0 <= tol);
    } else if (gap0 > tol) {
        double r[IMP_POLY_MAX_DEGREE];
        if (!surely_positive(c, linear ? 2 : 4, h) && imp_poly_roots(c, 4, 0.0, h, r) > 0) t = r[0];
    } else {
        /* Touching: with c0 taken as 0, f = t q(t) exactly. */
        double q[4] = {c[1], c[2], c[3], c[4]};
        int n = 3;
        if (fabs(q[0]) <= IMP_SLIDE_REL * 2.0 * dist0 * imp_len(dv)) {
            /* Sliding (no normal velocity): f = t^2 q(t). */
            q[0] = q[1];
            q[1] = q[2];
            q[2] = q[3];
            n = 2;
        }
        int lead = 0;
        while (lead <= n && q[lead] == 0.0)
            ++lead;
        if (lead > n) return out; /* the bodies stay in contact: no new touch */
        if (q[lead] < 0.0) {
            t = 0.0; /* approaching: the gap turns negative at once */
        } else {
            double r[IMP_POLY_MAX_DEGREE];
            int k = imp_poly_roots(q, n, 0.0, h, r);
            for (int i = 0; i < k && isnan(t); ++i)
                if (r[i] > 0.0) t = r[i];
        }
    }
    if (!isnan(t)) {
        out.state = IMP_TOI_HIT;
        contact_at(in, t * ts, &out);
    }
    return out;
}

imp_toi_result imp_toi_spheres(const imp_toi_spheres_input *in) { return spheres(in, 1); }

imp_toi_result imp_toi_spheres_impact(const imp_toi_spheres_input *in) { return spheres(in, 0); }
