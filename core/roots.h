/*
 * roots.h - real roots of polynomials of degree <= 4.
 *
 * Thread-safety: all functions are pure and reentrant.
 * Preconditions (asserted): coefficients finite, lo <= hi (either may be
 * infinite), output arrays large enough for `degree` roots.
 */
#ifndef IMP_ROOTS_H
#define IMP_ROOTS_H

#define IMP_POLY_MAX_DEGREE 4

/*
 * Real roots of sum_{i=0}^{degree} c[i] t^i that lie in [lo, hi], written to
 * roots[] in ascending order, each repeated by its multiplicity (a double
 * root appears twice). Returns the number written (0..degree). Leading zero
 * coefficients lower the degree; an identically zero polynomial has no
 * isolated roots and returns 0. Accuracy: a simple root is found to about
 * the accuracy that the coefficients (taken as exact) determine; a cluster
 * that is a multiple root to within the coefficients' rounding is reported
 * as that multiple root (see IMP_ROOT_MULTIPLE_TAU).
 */
int imp_poly_roots(const double *c, int degree, double lo, double hi, double *roots);

/* a t^2 + b t + c, highest degree first; same contract as imp_poly_roots. */
int imp_quadratic_roots(double a, double b, double c, double lo, double hi, double roots[2]);
/* a t^3 + b t^2 + c t + d */
int imp_cubic_roots(double a, double b, double c, double d, double lo, double hi, double roots[3]);
/* a t^4 + b t^3 + c t^2 + d t + e */
int imp_quartic_roots(double a, double b, double c, double d, double e, double lo, double hi,
                      double roots[4]);

/* p(t) by Horner's rule (plain, for callers that need a quick value). */
double imp_poly_eval(const double *c, int degree, double t);

#endif
