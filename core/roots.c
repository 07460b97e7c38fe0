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
 * Why this way: Ferrari's and Cardano's formulas lose all digits on
 * clustered roots, double roots and roots spanning many orders of
 * magnitude; factoring methods (e.g. Orellana & De Michele, ACM TOMS
 * Algorithm 1010) are faster but their accuracy rests on a resolvent root
 * and iterative refinement. Isolation plus bracketed iteration cannot lose
 * or invent a simple root: each is bracketed by a sign change of a
 * correctly signed value. The cost is a few compensated evaluations per
 * root.
 */
#include "roots.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eft.h"
#include "tolerance.h"

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
        m = fmax(m, fabs(p->c[i]));
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

    poly d;
    d.n = n - 1;
    for (int i = 0; i < n; ++i)
        d.c[i] = (double)(i + 1) * p->c[i + 1];
    double crit[IMP_POLY_MAX_DEGREE];
    int nc = roots_rec(&d, lo, hi, crit);

    double bound = root_bound(p);
    double L = fmax(lo, -bound), H = fmin(hi, bound);
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
    double k[5] = {e, d, c, b, a};
    return imp_poly_roots(k, 4, lo, hi, roots);
}

double imp_poly_eval(const double *c, int degree, double t) {
    double s = c[degree];
    for (int i = degree - 1; i >= 0; --i)
        s = s * t + c[i];
    return s;
}
