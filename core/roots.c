/*
 * roots.c - real roots of polynomials of degree <= 4.
 *
 * DESIGN
 * What: every real root of p in an interval [lo, hi], ascending, with
 * multiplicity, as accurately as the double coefficients determine it.
 *
 * How: isolation by critical points. The real roots of p' split the line
 * into intervals on which p is monotone, so each holds at most one simple
 * root, found where p changes sign (the derivative sequence used by
 * Collins & Loos, "Real zeros of polynomials", 1983; p' is solved by the
 * same routine, down to a quadratic in closed form). Inside a bracket a
 * safeguarded Newton iteration runs with compensated Horner evaluation
 * (Graillat, Langlois & Louvet, "Compensated Horner scheme", 2005: the
 * value comes out as if computed in twice the working precision, so its
 * sign is right until within an ulp or two of the root), falling back to
 * bisection on the ordered bit patterns of doubles, which halves any
 * bracket, however many binades it spans, in at most 64 steps.
 * A critical point c with |p(c)| within IMP_ROOT_MULTIPLE_TAU units of the
 * coefficient rounding is a multiple root (multiplicity in p' plus one):
 * there p only touches zero, and no sign change would find it. For |x| > 1
 * the polynomial is evaluated reversed, as x^n r(1/x), so no power of x can
 * overflow however large the roots are (coefficients up to 1e307 with roots
 * up to 1e154 occur in the hard set). The quadratic uses the cancellation-
 * free formula with an FMA-exact discriminant (Kahan, "On the cost of
 * floating-point computation without extra-precise arithmetic", 2004).
 *
 * A quartic first tries a fast path (quartic_fast below): a factorisation
 * into two quadratics after Orellana & De Michele (ACM TOMS Algorithm
 * 1010), the real roots polished by the same compensated Newton, and the
 * whole root set certified by disjoint inclusion discs; the isolation runs
 * only when the certificate fails (clusters, multiple roots, extreme
 * ranges: 0.2% of random quartics, most of the hard set).
 *
 * Why this way: Ferrari's and Cardano's formulas lose all digits on
 * clustered roots, double roots and roots spanning many orders of
 * magnitude; factoring methods are fast but their accuracy rests on a
 * resolvent root and iterative refinement. Isolation plus bracketed
 * iteration cannot lose or invent a simple root: each is bracketed by a
 * sign change of a correctly signed value. The cost is a few compensated
 * evaluations per root, about 20 times a textbook Ferrari solve for a
 * quartic; the certified factorisation keeps the guarantee (no root lost
 * or invented) at under 3 times.
 */
#include "roots.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eft.h"
#include "tolerance.h"
#include "vec.h"

typedef struct poly {
    double c[IMP_POLY_MAX_DEGREE + 1]; /* ascending powers; c[n] != 0 */
    int n;
} poly;

/* One evaluation: `f` has the sign of p(x) (it is p(x) for |x| <= 1 and
 * p(x)/x^n beyond), `mag` is sum |a_i||x|^i in the same scaling, `step` is
 * the Newton step p(x)/p'(x) (non-finite where p' vanishes). */
typedef struct peval {
    double f, mag, step;
} peval;

static peval poly_eval_full(const poly *p, double x) {
    peval r;
    int n = p->n;
    if (fabs(x) <= 1.0) {
        double s = p->c[n], err = 0.0, d = 0.0, m = fabs(p->c[n]), ax = fabs(x);
        for (int i = n - 1; i >= 0; --i) {
            d = d * x + s;
            double pe, se;
            double pr = imp_two_prod(s, x, &pe);
            s = imp_two_sum(pr, p->c[i], &se);
            err = err * x + (pe + se);
            m = m * ax + fabs(p->c[i]);
        }
        r.f = s + err;
        r.mag = m;
        r.step = r.f / d;
    } else {
        /* r(u) = u^n p(1/u) = c[0] u^n + ... + c[n]; p(x) = x^n r(1/x). */
        double u = 1.0 / x;
        double s = p->c[0], err = 0.0, d = 0.0, m = fabs(p->c[0]), au = fabs(u);
        for (int i = 1; i <= n; ++i) {
            d = d * u + s;
            double pe, se;
            double pr = imp_two_prod(s, u, &pe);
            s = imp_two_sum(pr, p->c[i], &se);
            err = err * u + (pe + se);
            m = m * au + fabs(p->c[i]);
        }
        double v = s + err;
        r.f = ((n & 1) && x < 0.0) ? -v : v;
        r.mag = m;
        /* p/p' = x^n r / (n x^(n-1) r - x^(n-2) r') = x r / (n r - u r') */
        r.step = x * v / ((double)n * v - u * d);
    }
    return r;
}

static int sgn(double v) { return (v > 0.0) - (v < 0.0); }

static int is_numerically_zero(const peval *e) {
    return fabs(e->f) <= IMP_ROOT_MULTIPLE_TAU * IMP_UNIT_ROUNDOFF * e->mag;
}

/* Order-preserving map of doubles onto int64 (-0 and +0 both map to 0). */
static int64_t dkey(double x) {
    int64_t b;
    memcpy(&b, &x, sizeof b);
    return b >= 0 ? b : INT64_MIN - b;
}

static double dfromkey(int64_t k) {
    int64_t b = k >= 0 ? k : INT64_MIN - k;
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static int64_t key_mid(int64_t klo, int64_t khi) {
    return klo + (int64_t)(((uint64_t)khi - (uint64_t)klo) / 2u);
}

/*
 * The root of p in (lo, hi), where p has sign slo at lo and -slo at hi and
 * is monotone in between. Newton steps are taken while they stay inside
 * the bracket and shrink it fast enough; otherwise the bracket is bisected
 * in key space.
 */
static double solve_bracket(const poly *p, double lo, double hi, int slo) {
    int64_t klo = dkey(lo), khi = dkey(hi);
    double x = dfromkey(key_mid(klo, khi));
    /* Start from the plain midpoint unless the bracket spans many binades
     * on one side of zero (there the key midpoint, a geometric mean, is the
     * better guess): in the common case Newton converges from it at once. */
    double mid = 0.5 * lo + 0.5 * hi;
    if (!((lo > 0.0 && hi > 64.0 * lo) || (hi < 0.0 && lo < 64.0 * hi))) x = mid;
    double dx = INFINITY; /* the last step taken */
    double best = x, best_f = INFINITY;
    for (int it = 0; it < IMP_ROOT_MAX_ITER; ++it) {
        peval e = poly_eval_full(p, x);
        if (e.f == 0.0) return x;
        /* Newton has converged when its step is below the spacing of
         * doubles here, whether or not x - step rounds inside the bracket. */
        if (fabs(e.step) <= 2.0 * DBL_EPSILON * fabs(x)) {
            double xn = x - e.step;
            return (xn >= lo && xn <= hi) ? xn : x;
        }
        /* The two evaluation forms differ in scale by x^n: compare
         * residuals relative to sum |a_i||x|^i, which scales alike. */
        double rel = fabs(e.f) / e.mag;
        if (rel < best_f) {
            best_f = rel;
            best = x;
        }
        if (sgn(e.f) == slo) {
            lo = x;
            klo = dkey(x);
        } else {
            hi = x;
            khi = dkey(x);
        }
        uint64_t width = (uint64_t)khi - (uint64_t)klo;
        if (width <= 1u) return best;
        double xn = x - e.step;
        int newton_ok = isfinite(xn) && xn > lo && xn < hi;
        /* Newton must shrink the previous step (IMP_ROOT_NEWTON_SHRINK),
         * else bisect on keys: at most 64 steps whatever the span. */
        if (fabs(e.step) > IMP_ROOT_NEWTON_SHRINK * fabs(dx)) newton_ok = 0;
        /* Converging quadratically (this step tiny beside the last one)
         * and within IMP_ROOT_NEWTON_STOP_REL: the next step would be below
         * an ulp. */
        if (newton_ok && fabs(e.step) <= IMP_ROOT_NEWTON_STOP_REL * fabs(x) &&
            fabs(e.step) <= IMP_ROOT_NEWTON_QUAD_RATIO * fabs(dx))
            return xn;
        double xnext = newton_ok ? xn : dfromkey(key_mid(klo, khi));
        dx = xnext - x;
        x = xnext;
    }
    return best;
}

/* Fujiwara's bound: every root has |x| <= 2 max |a_i/a_n|^(1/(n-i)) (with
 * a_0 halved), enlarged by IMP_ROOT_BOUND_SLACK for its own rounding. */
static double root_bound(const poly *p) {
    int n = p->n;
    double an = fabs(p->c[n]), b = 0.0;
    for (int i = 0; i < n; ++i) {
        double q = fabs(p->c[i]) / an;
        if (i == 0) q *= 0.5;
        if (q == 0.0) continue;
        int k = n - i;
        double t = k == 1 ? q : k == 2 ? sqrt(q) : k == 3 ? cbrt(q) : sqrt(sqrt(q));
        if (t > b) b = t;
    }
    b *= 2.0 * (1.0 + IMP_ROOT_BOUND_SLACK);
    return b <= DBL_MAX ? b : DBL_MAX;
}

static int emit(double *out, int count, int cap, double r, int mult) {
    for (int k = 0; k < mult && count < cap; ++k)
        out[count++] = r;
    return count;
}

/* Scale the coefficients by a power of two (exact) when their magnitudes
 * are extreme. Large ones come down only as far as needed to bring the
 * largest within 2^480, so that neither evaluation form can overflow and
 * small coefficients keep as many binades as possible; below 1/2 they go
 * up until the largest is about 1, so that products of two coefficients
 * (the discriminant's 4ac) cannot underflow to zero. A nonzero coefficient that
 * would still underflow (a dynamic range beyond about 1500 binades) keeps
 * its sign as the smallest subnormal: turning it into an exact zero would
 * make t = 0 an exact root that the input does not have. */
static void poly_balance(poly *p) {
    double m = 0.0;
    for (int i = 0; i <= p->n; ++i)
        if (fabs(p->c[i]) > m) m = fabs(p->c[i]);
    if (m >= 0.5 && m < 0x1p480) return; /* the common case: nothing to do */
    int e;
    frexp(m, &e);
    int shift = e > 480 ? 480 - e : e < 0 ? -e : 0;
    if (shift == 0) return;
    for (int i = 0; i <= p->n; ++i) {
        double x = ldexp(p->c[i], shift);
        p->c[i] = x == 0.0 && p->c[i] != 0.0 ? copysign(DBL_TRUE_MIN, p->c[i]) : x;
    }
}

/* Coefficients arrive balanced (|c| < 2^482 after imp_poly_roots scaled
 * them), so b*b and 4ac cannot overflow. */
static int quadratic(const poly *p, double lo, double hi, double *out) {
    double a = p->c[2], b = p->c[1], c = p->c[0];
    double r[2];
    int nr = 0;
    double v = -b / (2.0 * a);
    peval ev = poly_eval_full(p, v);
    if (isfinite(v) && is_numerically_zero(&ev)) {
        r[0] = r[1] = v;
        nr = 2;
    } else {
        double pe, qe;
        double pp = imp_two_prod(b, b, &pe);
        double qq = imp_two_prod(4.0 * a, c, &qe);
        double disc = (pp - qq) + (pe - qe);
        if (disc < 0.0) return 0;
        double q = -0.5 * (b + copysign(sqrt(disc), b));
        if (q == 0.0) {
            r[0] = r[1] = 0.0;
        } else {
            r[0] = q / a;
            r[1] = c / q;
        }
        if (r[0] > r[1]) {
            double t = r[0];
            r[0] = r[1];
            r[1] = t;
        }
        nr = 2;
    }
    int count = 0;
    for (int i = 0; i < nr; ++i)
        if (r[i] >= lo && r[i] <= hi && isfinite(r[i])) out[count++] = r[i];
    return count;
}

/*
 * Fast path for the quartic: a factorisation into two quadratics, its real
 * roots polished by compensated Newton, the whole root set certified; the
 * isolation above is the fallback whenever the certificate fails.
 *
 * Factorisation (after Orellana & De Michele, "Algorithm 1010: Boosting
 * efficiency in solving quartic equations with no compromise in accuracy",
 * ACM TOMS 46(2), 2020): for the monic x^4 + a x^3 + b x^2 + c x + d,
 *     p = (x^2 + a/2 x + y/2)^2 - (A x^2 + B x + C),
 * A = a^2/4 - b + y, B = a y/2 - c, C = y^2/4 - d, is a difference of
 * squares when y solves the resolvent cubic 4AC = B^2; its largest real
 * root gives A >= 0 (the bracket is -B^2 <= 0 at A = 0), so
 *     p = (x^2 + (a/2 - sqrt A) x + y/2 - t)(x^2 + (a/2 + sqrt A) x + y/2 + t)
 * with t = B / (2 sqrt A) = sign(B) sqrt C. Of each pair of factor
 * coefficients the one without cancellation is computed directly and the
 * other from the products alpha1 alpha2 = b - y and beta1 beta2 = d, and
 * the four are refined by one Newton step on the coefficient equations
 * (as Orellana and De Michele do).
 *
 * Certificate: by p'/p = sum 1/(z - z_i), every disc |z - x| <= 4 |p(x)/p'(x)|
 * holds a root of p (Henrici, Applied and Computational Complex Analysis
 * I, 6.4). Bounding the rounding of p(x) (compensated Horner, Graillat,
 * Langlois & Louvet 2005: |f - p| <= u|p| + gamma_2n^2 sum|a_i||x|^i) and
 * of p'(x) (plain Horner, gamma_2n sum i|a_i||x|^(i-1)) gives a rigorous
 * radius. Four pairwise disjoint discs, one per candidate, then hold one
 * root each and so all of them; a disc about a real candidate holds a real
 * root (its conjugate would be a second root in the same disc), and a
 * disc about a complex candidate that stays off the real axis holds a
 * complex one. So the real roots are exactly the certified real
 * candidates, none lost or invented. Candidates closer than
 * FAST_SEPARATION of their size, real or a complex pair that nearly
 * meets the axis, are left to the isolation, which owns the rule that
 * reads a cluster as a multiple root (IMP_ROOT_MULTIPLE_TAU).
 */

/* Candidates closer than this fraction of their magnitude go to the
 * isolation (see above). */
#define FAST_SEPARATION 0x1p-10

/* A real candidate after polishing: the root estimate and the radius of a
 * disc about it that certainly holds a root. */
typedef struct fast_root {
    double x, rad;
} fast_root;

/* Two lanes of doubles (GCC/Clang generic vectors: SSE2 on x86-64, plain
 * code elsewhere); four candidates are evaluated in two of them. */
typedef double v2d __attribute__((vector_size(16)));
typedef long long v2i __attribute__((vector_size(16)));

static v2d vabs(v2d a) {
    const v2i mask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    return (v2d)((v2i)a & mask);
}

/* Veltkamp's split and Dekker's product (Dekker, "A floating-point
 * technique for extending the available precision", Numer. Math. 18,
 * 1971): p + e == a * b exactly for |a|, |b| below 2^996, barring
 * underflow, in plain operations, so that the candidates are evaluated side
 * by side without a call to fma. */
static void vsplit(v2d a, v2d *hi, v2d *lo) {
    v2d c = a * 134217729.0; /* 2^27 + 1 */
    *hi = c - (c - a);
    *lo = a - *hi;
}

/* The certified disc about each real x[k] (k < nx <= 4): 4 (|p(x)| + bound) /
 * (|p'(x)| - bound), with p(x) by compensated Horner, and the Newton step
 * at x; rad[k] is NAN where p'(x) is too small to certify anything. */
static void fast_eval4(const poly *p, int nx, const double *x, double *step, double *rad,
                       int *done) {
    const double u = IMP_UNIT_ROUNDOFF;
    double fo[4], dout[4], ddo[4], mo[4], mdo[4];
    for (int h = 0; h < 2; ++h) {
        if (2 * h >= nx) break;
        v2d X = {x[2 * h], x[2 * h + 1]}, AX = vabs(X), XH, XL;
        vsplit(X, &XH, &XL);
        v2d S = {p->c[4], p->c[4]}, M = vabs(S), zero = {0.0, 0.0};
        v2d E = zero, D = zero, DD = zero, MD = zero;
        for (int i = 3; i >= 0; --i) {
            v2d C = {p->c[i], p->c[i]};
            DD = DD * X + D;
            D = D * X + S;
            MD = MD * AX + M;
            v2d SH, SL;
            vsplit(S, &SH, &SL);
            v2d PR = S * X;
            v2d PE = SL * XL - (((PR - SH * XH) - SL * XH) - SH * XL);
            /* TwoSum(PR, C) */
            v2d SN = PR + C, Z = SN - PR;
            v2d SE = (PR - (SN - Z)) + (C - Z);
            S = SN;
            E = E * X + (PE + SE);
            M = M * AX + vabs(C);
        }
        v2d F = S + E;
        for (int l = 0; l < 2; ++l) {
            fo[2 * h + l] = F[l];
            dout[2 * h + l] = D[l];
            ddo[2 * h + l] = DD[l];
            mo[2 * h + l] = M[l];
            mdo[2 * h + l] = MD[l];
        }
    }
    for (int k = 0; k < nx; ++k) {
        double f = fo[k], d = dout[k], m = mo[k], ax = fabs(x[k]);
        /* gamma_8^2 < 65 u^2 and gamma_6 < 6.1 u, doubled for the rounding
         * of the bounds themselves; DBL_MIN covers underflow in the
         * products. A magnitude beyond 2^900 (or an overflow) fails. */
        double ef = 2.0 * u * fabs(f) + 130.0 * u * u * m + 8.0 * DBL_MIN;
        double ed = 13.0 * u * mdo[k] + 8.0 * DBL_MIN;
        double ad = fabs(d);
        step[k] = f / d;
        rad[k] = m <= 0x1p900 && ad > 2.0 * ed && isfinite(f)
                     ? 4.0 * (1.0 + 8.0 * u) * (fabs(f) + ef) / (ad - ed)
                     : NAN;
        /* x - step is within an ulp of the root when the step is far below
         * the distance to the other roots (2^-20 of |x|) and the quadratic
         * term of Newton's error, (p''/2p') step^2, is below u/4 of |x|:
         * the last step of solve_bracket, without a further evaluation */
        done[k] =
            fabs(step[k]) <= 0x1p-20 * ax && fabs(ddo[k]) * step[k] * step[k] <= 0.25 * u * ax * ad;
    }
}

/* The same disc about a complex z = re + i im, in plain complex Horner
 * (each step multiplies by at most (1 + 5u), so 64 u sum |a_i||z|^i bounds
 * the error of p(z) and of p'(z) with room to spare). */
static int fast_eval_complex(const poly *p, double re, double im, double *rad) {
    const double u = IMP_UNIT_ROUNDOFF;
    double az = sqrt(re * re + im * im);
    double sr = p->c[4], si = 0.0, dr = 0.0, di = 0.0, m = fabs(sr), md = 0.0;
    for (int i = 3; i >= 0; --i) {
        double tr = dr * re - di * im + sr, ti = dr * im + di * re + si;
        dr = tr;
        di = ti;
        md = md * az + m;
        tr = sr * re - si * im + p->c[i];
        ti = sr * im + si * re;
        sr = tr;
        si = ti;
        m = m * az + fabs(p->c[i]);
    }
    double ef = 64.0 * u * m + 8.0 * DBL_MIN, ed = 64.0 * u * md + 8.0 * DBL_MIN;
    /* sqrt(x^2 + y^2): an overflow fails the test below, an underflow only
     * shrinks |p'| (and the rounding is inside the margin of 8u) */
    double ad = sqrt(dr * dr + di * di) * (1.0 - 8.0 * u);
    if (!(m <= 0x1p1000) || !(ad > 2.0 * ed)) return 0;
    *rad = 4.0 * (1.0 + 8.0 * u) * (sqrt(sr * sr + si * si) * (1.0 + 8.0 * u) + ef) / (ad - ed);
    return 1;
}

/* |x + i y| rounded down a little (for distances that must exceed a
 * bound): an underflow only shortens it, and an overflow gives 0, which
 * fails every comparison. */
static double cdist(double x, double y) {
    double r = sqrt(x * x + y * y) * (1.0 - 4.0 * IMP_UNIT_ROUNDOFF);
    return isfinite(r) ? r : 0.0;
}

/* The real cube root of v to about 2e-5 relative, for the resolvent's start
 * only: the high word's exponent and leading bits divided by 3 (the first
 * guess of fdlibm's cbrt, about 5 bits), then one Halley step y (y^3 + 2x) /
 * (2 y^3 + x) (cubic convergence). cubic_largest's Newton step and the
 * quartic's certified polish finish what it leaves (of bench_roots' 600,000
 * roots, 175 end one ulp away from where libm's cbrt led, none further; the
 * hard set's errors are unchanged), at a fraction of libm's cbrt (which
 * reduces its argument through frexp and ldexp). Arguments beyond
 * 2^-300 to 2^300 in magnitude (zero, infinities and NaN among them) go to
 * cbrt. */
static inline double fast_cbrt(double v) {
    double x = fabs(v);
    if (!(x >= 0x1p-300 && x <= 0x1p300)) return cbrt(v); /* no overflow or underflow below */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    b = (uint64_t)((uint32_t)(b >> 32) / 3u + 715094163u) << 32;
    double y;
    memcpy(&y, &b, sizeof y);
    double y3 = y * y * y;
    y *= (y3 + 2.0 * x) / (2.0 * y3 + x);
    return copysign(y, v);
}

/* Largest real root of y^3 + e2 y^2 + e1 y + e0 (Cardano or the
 * trigonometric form), polished by one Newton step. */
static double cubic_largest(double e2, double e1, double e0) {
    double sh = e2 / 3.0;
    double P = e1 - 3.0 * sh * sh, Q = e0 - sh * e1 + 2.0 * sh * sh * sh;
    double h = 0.5 * Q, D = h * h + P * P * P * (1.0 / 27.0), z;
    if (D > 0.0) {
        double w = fast_cbrt(-h - copysign(sqrt(D), h));
        z = w == 0.0 ? 0.0 : w - P / (3.0 * w);
    } else {
        double m = sqrt(-P / 3.0);
        double cs = m > 0.0 ? -h / (m * m * m) : 0.0;
        cs = cs > 1.0 ? 1.0 : cs < -1.0 ? -1.0 : cs;
        /* z = m w with w^3 - 3w = 2 cs, w = 2 cos(acos(cs) / 3) in [1, 2]:
         * a fit good to 1e-2 (exact at cs = -1, 0, 1), then a Halley
         * step, in place of acos and cos; the Newton step on y below
         * finishes it */
        double w = 1.0 + sqrt(0.5 + 0.5 * cs) * (1.0353 - 0.0353 * cs);
        { /* one Halley step (cubic convergence: 1e-2 to about 1e-6) */
            double f = (w * w - 3.0) * w - 2.0 * cs, df = 3.0 * w * w - 3.0;
            double den = df * df - 3.0 * w * f;
            if (den > 0.0) w -= f * df / den;
        }
        z = m * w;
    }
    double y = z - sh;
    double g = ((y + e2) * y + e1) * y + e0, dg = (3.0 * y + 2.0 * e2) * y + e1;
    if (dg != 0.0 && isfinite(g / dg)) y -= g / dg;
    return y;
}

/* x^2 + al x + be: real roots to r (returns 2) or the complex pair
 * re +- i im (returns 0). */
static inline int fast_quadratic(double al, double be, double *r, double *re, double *im) {
    double disc = al * al - 4.0 * be;
    if (disc >= 0.0) {
        double q = -0.5 * (al + copysign(sqrt(disc), al));
        r[0] = q;
        r[1] = q != 0.0 ? be / q : 0.0;
        return 2;
    }
    *re = -0.5 * al;
    *im = 0.5 * sqrt(-disc);
    return 0;
}

/* The real roots of the quartic p (p->n == 4, p->c[0] != 0), ascending,
 * each simple, or -1 when the certificate fails. */
static int quartic_fast(const poly *p, double *out) {
    double i4 = 1.0 / p->c[4];
    double a = p->c[3] * i4, b = p->c[2] * i4, c = p->c[1] * i4, d = p->c[0] * i4;
    double y = cubic_largest(-b, a * c - 4.0 * d, 4.0 * b * d - a * a * d - c * c);
    double A = 0.25 * a * a - b + y, B = 0.5 * a * y - c, C = 0.25 * y * y - d;
    if (!isfinite(A + B + C)) return -1;
    double sA = A > 0.0 ? sqrt(A) : 0.0;
    double t = A * A >= fabs(C) && sA > 0.0 ? 0.5 * B / sA : copysign(C > 0.0 ? sqrt(C) : 0.0, B);
    /* factors x^2 + al_k x + be_k, al = a/2 +- sA with be = y/2 +- t; of
     * each pair the larger directly, the smaller from its product */
    double sg = a >= 0.0 ? 1.0 : -1.0;
    double al1 = 0.5 * a + sg * sA, be1 = 0.5 * y + sg * t;
    double al2 = 0.5 * a - sg * sA, be2 = 0.5 * y - sg * t;
    if (al1 != 0.0) al2 = (b - y) / al1;
    if (fabs(be1) >= fabs(be2)) {
        if (be1 != 0.0) be2 = d / be1;
    } else {
        be1 = d / be2;
    }
    double r[4] = {0.0, 0.0, 0.0, 0.0}, re[2], im[2];
    int nr = fast_quadratic(al1, be1, r, &re[0], &im[0]);
    int nc = nr == 0;
    int k = fast_quadratic(al2, be2, r + nr, &re[nc], &im[nc]);
    nc += k == 0;
    nr += k;
    /* polish the real candidates together: compensated Newton until the
     * step is below two ulps, as in solve_bracket */
    fast_root fr[4];
    double x[4] = {0.0, 0.0, 0.0, 0.0}, step[4], rad[4];
    int done[4];
    for (int i = 0; i < nr; ++i)
        x[i] = r[i];
    int todo = nr;
    for (int it = 0; todo > 0; ++it) {
        if (it == 4) return -1;
        fast_eval4(p, nr, x, step, rad, done);
        todo = 0;
        for (int i = 0; i < nr; ++i) {
            if (!(rad[i] < INFINITY)) return -1;
            if (done[i] || fabs(step[i]) <= 2.0 * DBL_EPSILON * fabs(x[i])) {
                fr[i].x = x[i] - step[i];
                fr[i].rad = rad[i] + fabs(step[i]);
            } else {
                x[i] -= step[i];
                ++todo;
            }
        }
    }
    double crad[2];
    for (int i = 0; i < nc; ++i) {
        if (!fast_eval_complex(p, re[i], im[i], &crad[i])) return -1;
        if (!(crad[i] < im[i]) || !(im[i] > FAST_SEPARATION * fabs(re[i]))) return -1;
    }
    /* disjoint and separated: each pair of real discs (in any order), each
     * real against each complex disc, and the two complex pairs (each disc
     * against both of the other pair, hence the distance to the nearer
     * conjugate); accumulated without branching on the data */
    int ok = 1;
    for (int i = 0; i < nr; ++i)
        for (int j = i + 1; j < nr; ++j) {
            double gap = fabs(fr[i].x - fr[j].x);
            double big = fabs(fr[i].x) > fabs(fr[j].x) ? fabs(fr[i].x) : fabs(fr[j].x);
            ok &= (gap > fr[i].rad + fr[j].rad) & (gap > FAST_SEPARATION * big);
        }
    for (int j = 0; j < nc; ++j)
        for (int i = 0; i < nr; ++i)
            ok &= cdist(fr[i].x - re[j], im[j]) > fr[i].rad + crad[j];
    if (nc == 2) {
        double dist = cdist(re[0] - re[1], im[0] - im[1]);
        double size = re[0] * re[0] + im[0] * im[0] > re[1] * re[1] + im[1] * im[1]
                          ? cdist(re[0], im[0])
                          : cdist(re[1], im[1]);
        ok &= (dist > crad[0] + crad[1]) & (dist > FAST_SEPARATION * size);
    }
    if (!ok) return -1;
    /* ascending: a sorting network on four, the missing ones +inf */
    double v[4];
    for (int i = 0; i < 4; ++i)
        v[i] = i < nr ? fr[i].x : INFINITY;
    static const int net[5][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}};
    for (int q = 0; q < 5; ++q) {
        double lo = v[net[q][0]], hi = v[net[q][1]];
        v[net[q][0]] = lo < hi ? lo : hi;
        v[net[q][1]] = lo < hi ? hi : lo;
    }
    for (int i = 0; i < nr; ++i)
        out[i] = v[i];
    return nr;
}

/* quartic_fast's roots in [lo, hi] to out, their count; -1 when the certificate fails. */
static int quartic_fast_in(const poly *p, double lo, double hi, double *out) {
    double r[4];
    int k = quartic_fast(p, r), count = 0;
    if (k < 0) return -1;
    for (int i = 0; i < k; ++i)
        if (r[i] >= lo && r[i] <= hi) out[count++] = r[i];
    return count;
}

typedef struct node {
    double x;
    int mult; /* multiplicity as a root of p' (0 for an interval end) */
    int zero; /* p(x) is (numerically) zero */
    int s;    /* sign of p(x) when not zero */
} node;

static int roots_rec(const poly *p, double lo, double hi, double *out) {
    int n = p->n;
    if (n == 0) return 0;
    if (n == 1) {
        double r = -p->c[0] / p->c[1];
        if (r >= lo && r <= hi && isfinite(r)) {
            out[0] = r;
            return 1;
        }
        return 0;
    }
    if (n == 2) return quadratic(p, lo, hi, out);
    if (n == 4) {
        int k = quartic_fast_in(p, lo, hi, out);
        if (k >= 0) return k;
    }

    poly d;
    d.n = n - 1;
    for (int i = 0; i < n; ++i)
        d.c[i] = (double)(i + 1) * p->c[i + 1];
    double crit[IMP_POLY_MAX_DEGREE];
    int nc = roots_rec(&d, lo, hi, crit);

    double bound = root_bound(p);
    double L = imp_fmax(lo, -bound), H = imp_fmin(hi, bound);
    if (!(L <= H)) return 0;

    node nodes[IMP_POLY_MAX_DEGREE + 2];
    int nn = 0;
    for (int i = 0; i < nc;) {
        int m = 1;
        while (i + m < nc && crit[i + m] == crit[i])
            ++m;
        if (crit[i] >= L && crit[i] <= H) nodes[nn++] = (node){crit[i], m, 0, 0};
        i += m;
    }
    if (nn == 0 || nodes[0].x > L) {
        memmove(nodes + 1, nodes, (size_t)nn * sizeof nodes[0]);
        nodes[0] = (node){L, 0, 0, 0};
        ++nn;
    }
    if (nodes[nn - 1].x < H) nodes[nn++] = (node){H, 0, 0, 0};

    for (int i = 0; i < nn; ++i) {
        peval e = poly_eval_full(p, nodes[i].x);
        nodes[i].zero = nodes[i].mult > 0 ? is_numerically_zero(&e) : e.f == 0.0;
        nodes[i].s = sgn(e.f);
    }

    int count = 0;
    for (int i = 0; i < nn; ++i) {
        if (i > 0 && !nodes[i - 1].zero && !nodes[i].zero && nodes[i - 1].s != nodes[i].s)
            count = emit(out, count, n,
                         solve_bracket(p, nodes[i - 1].x, nodes[i].x, nodes[i - 1].s), 1);
        if (nodes[i].zero) count = emit(out, count, n, nodes[i].x, nodes[i].mult + 1);
    }
    return count;
}

int imp_poly_roots(const double *c, int degree, double lo, double hi, double *roots) {
    assert(degree >= 0 && degree <= IMP_POLY_MAX_DEGREE);
    assert(!(lo > hi));
    poly p;
    p.n = degree;
    for (int i = 0; i <= degree; ++i) {
        assert(isfinite(c[i]));
        p.c[i] = c[i];
    }
    poly_balance(&p);
    while (p.n >= 0 && p.c[p.n] == 0.0)
        --p.n;
    if (p.n <= 0) return 0; /* a nonzero constant, or identically zero */
    /* Exact roots at zero: deflate them. */
    int z = 0;
    while (p.c[z] == 0.0)
        ++z;
    p.n -= z;
    if (z > 0) memmove(p.c, p.c + z, (size_t)(p.n + 1) * sizeof p.c[0]);

    double tmp[IMP_POLY_MAX_DEGREE];
    int k = roots_rec(&p, lo, hi, tmp);
    /* Merge the z zeros into the ascending list. */
    int count = 0, i = 0;
    int zero_in = (0.0 >= lo && 0.0 <= hi) ? z : 0;
    while (i < k && tmp[i] < 0.0)
        roots[count++] = tmp[i++];
    for (int j = 0; j < zero_in; ++j)
        roots[count++] = 0.0;
    while (i < k)
        roots[count++] = tmp[i++];
    return count;
}

int imp_quadratic_roots(double a, double b, double c, double lo, double hi, double roots[2]) {
    double k[3] = {c, b, a};
    return imp_poly_roots(k, 2, lo, hi, roots);
}

int imp_cubic_roots(double a, double b, double c, double d, double lo, double hi, double roots[3]) {
    double k[4] = {d, c, b, a};
    return imp_poly_roots(k, 3, lo, hi, roots);
}

int imp_quartic_roots(double a, double b, double c, double d, double e, double lo, double hi,
                      double roots[4]) {
    /* a quartic with nonzero end terms (no zero root to deflate) straight to the certified
     * fast path once balanced; anything else, or a certificate that fails, through
     * imp_poly_roots (whose own balancing leaves a balanced quartic as it is) */
    poly p = {{e, d, c, b, a}, 4};
    poly_balance(&p);
    if (p.c[4] != 0.0 && p.c[0] != 0.0 && !(lo > hi)) {
        int k = quartic_fast_in(&p, lo, hi, roots);
        if (k >= 0) return k;
    }
    return imp_poly_roots(p.c, 4, lo, hi, roots);
}

double imp_poly_eval(const double *c, int degree, double t) {
    double s = c[degree];
    for (int i = degree - 1; i >= 0; --i)
        s = s * t + c[i];
    return s;
}
