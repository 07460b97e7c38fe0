/*
 * tolerance.h - every numerical tolerance of the solvers, in one place,
 * with its unit and the reason for its value.
 */
#ifndef IMP_TOLERANCE_H
#define IMP_TOLERANCE_H

#include <float.h>

/* Unit roundoff of double: half an ulp of 1. */
#define IMP_UNIT_ROUNDOFF (DBL_EPSILON / 2.0)

/*
 * Multiple-root threshold of the polynomial solver (dimensionless, in units
 * of the unit roundoff). A critical point c of p (a root of p') is taken as
 * a root of p of higher multiplicity when
 *     |p(c)| <= IMP_ROOT_MULTIPLE_TAU * u * sum_i |a_i| |c|^i,
 * i.e. when c is an exact multiple root of a polynomial whose coefficients
 * differ from p's by less than this fraction of their last bit. Below one
 * unit roundoff the coefficients rounded to double no longer decide whether
 * such a cluster is a multiple real root or a pair of complex roots with a
 * tiny imaginary part, so some choice is unavoidable. The value is the
 * middle of the window measured on ../shared/data/hard_quartics.json: the
 * double roots of odm19 (ratio 0.335) and odm21 (0.361) are at most this,
 * the complex pair of odm16 (0.482) above it, and distinct clustered roots
 * (odm2: 19.5, odm17: 13.2) far above it. For time of impact a reading as a
 * double root means a graze is reported as a touch, the safe side.
 */
#define IMP_ROOT_MULTIPLE_TAU 0.42

/* Iteration cap of the safeguarded Newton-bisection (count). Bisection on
 * the ordered bit patterns of doubles halves a 64-bit key range per step,
 * so 64 steps isolate any bracket to adjacent doubles; Newton steps come on
 * top of that. */
#define IMP_ROOT_MAX_ITER 160

/*
 * Contact tolerance (dimensionless, relative to the pair's scale: the
 * largest coordinate magnitude involved, or the sum of radii). Two bodies
 * whose surface gap at t = 0 is within this fraction of the scale are
 * touching, not overlapping or apart. Positions produced by evaluating
 * p + v t + a t^2/2 carry errors of a few ulps of the scale (about 1e-15);
 * an event-driven simulation leaves bodies at such "exact" contacts, and a
 * tolerance three orders above that noise keeps them from being reported as
 * interpenetrating. It is three orders below the contract's 1e-9 bound on
 * penetration that must never be missed.
 */
#define IMP_CONTACT_REL 1e-12

/* Approach-speed tolerance (dimensionless, relative to |dp| |dv|): a
 * touching pair whose d/dt (|dp|^2) is within this fraction of its largest
 * possible value is sliding, neither approaching nor separating. */
#define IMP_SLIDE_REL 1e-12

/* Collinear turn of a polygon (dimensionless: the sine of the turning
 * angle). A vertex whose edges' cross product is within this fraction of
 * the product of their lengths is straight, not a turn: decimal input
 * coordinates of collinear points are off a line by rounding only (a few
 * units of 1e-16 relative), which this covers with three orders to spare,
 * while any turn a game shape means is many orders larger. */
#define IMP_POLYGON_TURN_REL 1e-12

/* Flat polyhedron (dimensionless, relative to the points' extent): points
 * whose farthest distance from the plane through three of them is within
 * this fraction of their extent are coplanar. Same reasoning as
 * IMP_POLYGON_TURN_REL. */
#define IMP_POLYHEDRON_FLAT_REL 1e-12

#endif
