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

/* Coplanarity of the convex hull (dimensionless, relative to the points'
 * scale: their largest coordinate magnitude after centring them on their
 * bounding box). A point within this distance of a face's plane is on it,
 * not outside, and adjacent triangles whose vertices are within it of one
 * plane are merged into one polygonal face. Plane distances computed from
 * a triangle carry a few units of 1e-16 of the scale (more for slivers),
 * so 1e-13 keeps three orders above that noise (grid points, decimal
 * input); it stays one order below IMP_POLYHEDRON_FLAT_REL, so a
 * polyhedron the api accepts as not flat is never too flat for the hull. */
#define IMP_HULL_PLANE_REL 1e-13

/* Parallel edge directions (dimensionless: the sine of the angle between
 * two unit directions). Directions closer than this are one direction of
 * the hull, and the separating axis test skips edge pairs this close to
 * parallel: their cross product is dominated by rounding (parallel grid
 * edges differ by about 1e-16 relative), and the axis it would give changes
 * the depth by at most the edge length times this sine, which the face
 * normals bound (skipping an axis can only overestimate the depth, so the
 * reported translation still separates). */
#define IMP_EDGE_PARALLEL_SIN 1e-9

/* Convergence of the GJK distance (dimensionless): iteration stops when the
 * support point improves the squared distance v.v by less than this
 * fraction of it (or by less than IMP_CONTACT_REL of the scale times |v|,
 * the rounding floor), which bounds the reported distance's excess over
 * the true one by this fraction plus the contact tolerance. For polytopes
 * GJK ends exactly in finitely many steps; this only stops rounding from
 * cycling. */
#define IMP_GJK_REL 1e-13

/* Most GJK iterations (count). Each adds one support point; polytopes of
 * IMP_SHAPE_MAX_VERTICES converge in far fewer (tens), and the best
 * simplex so far is kept if the cap is ever reached. */
#define IMP_GJK_MAX_ITER 256

/* Most steps of conservative advancement (count; core/toi_advance.c). Each
 * step costs one distance query. Against a transversal approach the
 * separating-plane bound lands on the contact in one or two steps and a
 * tangential (double-root) touch halves the remaining gap per step, so
 * about 40 reach 1e-9 of the scale; 1000 leaves room for polytope
 * feature changes and still bounds a request's work to a few milliseconds
 * for game shapes. A run that reaches it reports `failed`, unless a bound
 * proves the rest of the window free. */
#define IMP_ADVANCE_MAX_ITER 1000

/* Queue entries other than contacts (cell crossings, re-predictions of
 * stale events) a simulation may process per allowed contact and per body
 * (count). A hard-sphere gas needs about 2 crossings and 1-3 stale entries
 * per contact (tests/bench/bench_simulate.c); 64 leaves a wide margin for
 * sparse, fast scenes and still bounds a degenerate run that crosses cell
 * boundaries without ever colliding. */
#define IMP_SIM_WORK_PER_EVENT 64

/* Flat GJK tetrahedron (dimensionless: its volume times 6 over the cube of
 * its longest edge). Below this the orientation tests that decide whether
 * the origin lies inside are rounding noise (each carries about 1e-16 of
 * the cube), so the tetrahedron is reduced to its closest face instead of
 * declaring the shapes intersecting; 1e-10 keeps four orders of margin. A
 * pair of boxes 4.7e-5 apart was reported touching before this. */
#define IMP_GJK_FLAT_REL 1e-10

/* Tolerance of the conservative-advancement fallback (dimensionless,
 * relative to the pair's scale: positions and shape sizes): the contract's
 * own bound, "a touch whose penetration would exceed 1e-9 of the scene
 * scale is never reported as none"; the fallback stops within this gap and
 * reports it, where closed forms are exact. */
#define IMP_TOI_ADVANCE_REL 1e-9

/* Slack of an edge's span in the rounded-shape cast (dimensionless, a
 * fraction of the edge): a relative path crossing the corner between two
 * edges of the Minkowski difference gives each edge's root a position at
 * the very end of its span, and rounding can put both just outside, so a
 * vertex meeting a vertex would be missed. Accepting 1e-9 of the edge past
 * either end reports a contact at most that far from the corner, inside
 * the contract's 1e-9 of the scene scale. */
#define IMP_EDGE_SPAN_REL 1e-9

#endif
