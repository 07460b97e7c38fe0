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

/* sum_i x[i] * y[i] with Dot2 accuracy. */
static inline double imp_dot2(const double *x, const double *y, int n) {
    double e;
    double s = imp_two_prod(x[0], y[0], &e);
    double c = e;
    for (int i = 1; i < n; ++i) {
        double pe, se;
        double p = imp_two_prod(x[i], y[i], &pe);
        s = imp_two_sum(s, p, &se);
        c += pe + se;
    }
    return s + c;
}

#endif
