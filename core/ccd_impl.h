/*
 * ccd_impl.h - what core/ccd.c lends core/ccd_exact.c: the ball-arithmetic
 * static tests, so the exact path can settle a test at an exactly isolated
 * root with doubles before it builds polynomials on rationals.
 *
 * Thread-safety: pure and reentrant.
 */
#ifndef IMP_CCD_IMPL_H
#define IMP_CCD_IMPL_H

#include "ccd.h"

/* Answers of the ball tests: certainly no contact, certainly contact, undecided. */
enum { IMP_CCD_MISS = 0, IMP_CCD_HIT = 1, IMP_CCD_UNKNOWN = -1 };

/*
 * The static contact test of q (the vertex on the closed face; the closed edges meeting) for
 * coplanar points, in ball arithmetic over [tl, th] (0 <= tl <= th <= 1), given as the signs it
 * rests on so that the exact path can keep the certain ones. Returns 1 when the test's normal
 * is certainly nonzero on [tl, th] (vertex-face: n = (b - a) x (c - a); edge-edge: m = da x db),
 * with the orientation signs in sg[] (0 where uncertain; vertex-face: the vertex against edges
 * ab, bc, ca; edge-edge: b0, b1 against edge a, then a0, a1 against edge b); 0 when the normal
 * may vanish (sg[] unset).
 */
int imp_ccd_balls_signs(const imp_ccd_query *q, double tl, double th, int sg[4]);

/* Point p of q (an index 0..3) on the closed segment [a, b] of q: MISS when certainly off it
 * for every t in [tl, th], else UNKNOWN. */
int imp_ccd_balls_on_segment(const imp_ccd_query *q, int p, int a, int b, double tl, double th);

/* The static contact test decided exactly (core/ccd_exact.c) at the coplanarity cubic's root in
 * (tl, th), which the caller has certified to be its only root there, a simple one: HIT or MISS,
 * UNKNOWN when the exact signs of the cubic at tl and th do not bracket it. */
int imp_ccd_exact_static_at(const imp_ccd_query *q, double tl, double th);

/* An approximate root of sum a[i] t^i (n coefficients) in [lo, hi], where its sign at lo is slo:
 * Newton's method kept inside a bracket that shrinks by the signs as computed (no guarantee:
 * callers certify the result). */
double imp_ccd_newton(const double *a, int n, double lo, double hi, int slo);

#endif
