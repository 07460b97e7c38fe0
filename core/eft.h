/*
 * eft.h - error-free transformations and compensated dot products.
 *
 * two_sum / two_prod return the rounding error of one addition or product
 * exactly (Knuth's TwoSum; the FMA form of Dekker's TwoProduct), so a sum
 * or dot product can carry its own error term and come out as accurate as
 * if computed in twice the working precision (Ogita, Rump & Oishi,
 * "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005, Dot2).
 * The gap polynomials of the TOI solvers use them: their constant term is
 * |dp|^2 - R^2, which cancels completely exactly when bodies touch.
 */
#ifndef IMP_EFT_H
#define IMP_EFT_H

#include <math.h>

/* s + e == a + b exactly, s = fl(a + b). */
static inline double imp_two_sum(double a, double b, double *e) {
    double s = a + b;
    double z = s - a;
    *e = (a - (s - z)) + (b - z);
    return s;
}

/* p + e == a * b exactly, p = fl(a * b) (barring underflow). */
static inline double imp_two_prod(double a, double b, double *e) {
    double p = a * b;
    *e = fma(a, b, -p);
    return p;
}

/* p + e == a * b exactly as imp_two_prod, by Veltkamp's split and Dekker's
 * product (Dekker, "A floating-point technique for extending the available
 * precision", Numer. Math. 18, 1971) in plain operations, which stay in
 * registers where fma is a library call; exact only for |a|, |b| in
 * [2^-480, 2^480] or zero (no overflow in the split, no underflow in the
 * error), which the caller checks. */
static inline double imp_two_prod_split(double a, double b, double *e) {
    double ca = 134217729.0 * a, cb = 134217729.0 * b; /* 2^27 + 1 */
    double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
    double p = a * b;
    *e = al * bl - (((p - ah * bh) - al * bh) - ah * bl);
    return p;
}

/* Dot2 with a given error-free product (both give the same result where
 * both are exact). */
static inline double imp_dot2_by(const double *x, const double *y, int n,
                                 double (*prod)(double, double, double *)) {
    double e;
    double s = prod(x[0], y[0], &e);
    double c = e;
    for (int i = 1; i < n; ++i) {
        double pe, se;
        double p = prod(x[i], y[i], &pe);
        s = imp_two_sum(s, p, &se);
        c += pe + se;
    }
    return s + c;
}

/* sum_i x[i] * y[i] with Dot2 accuracy. */
static inline double imp_dot2(const double *x, const double *y, int n) {
    return imp_dot2_by(x, y, n, imp_two_prod);
}

/*
 * Exact sign (-1, 0 or 1) of x[0] + ... + x[n - 1] (n <= 32), by Shewchuk's
 * Grow-Expansion ("Adaptive Precision Floating-Point Arithmetic and Fast
 * Robust Geometric Predicates", Discrete Comput. Geom. 18, 1997): the terms
 * are gathered into a nonoverlapping expansion of increasing magnitude,
 * whose most significant nonzero component has the sign of the exact sum.
 * Barring overflow; O(n^2), for the rare cases a filter cannot decide.
 */
static inline int imp_sum_sign(const double *x, int n) {
    double e[32];
    int m = 0;
    for (int i = 0; i < n && i < 32; ++i) {
        double q = x[i];
        for (int j = 0; j < m; ++j) {
            double h;
            q = imp_two_sum(q, e[j], &h);
            e[j] = h;
        }
        e[m++] = q;
    }
    for (int j = m - 1; j >= 0; --j)
        if (e[j] != 0.0) return e[j] > 0.0 ? 1 : -1;
    return 0;
}

/* Exact sign of a b - c d (barring underflow of the products' errors): the
 * rounded difference when it is clearly away from zero (its error is at
 * most 3 units of roundoff of |a b| + |c d|), else the four exact terms. */
static inline int imp_prod_diff_sign(double a, double b, double c, double d) {
    double p = a * b, q = c * d, r = p - q;
    if (fabs(r) > 0x1.0p-50 * (fabs(p) + fabs(q))) return r > 0.0 ? 1 : -1;
    double t[4];
    t[0] = p;
    t[1] = -q;
    t[2] = fma(a, b, -p);
    t[3] = -fma(c, d, -q);
    return imp_sum_sign(t, 4);
}

#endif
