/*
 * tolerance.h - every numerical tolerance of the solvers, in one place,
 * with its unit and the reason for its value.
 *
 * Sections: roots; contact and shapes; hull, SAT and GJK; time of impact;
 * scenes and simulation; the move checker. Limits that are counts of
 * things a request may hold (vertices, iterations) stay with their module.
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

/* Newton's share of the safeguarded iteration (dimensionless ratio): a
 * Newton step is taken only when it is at most this fraction of the step
 * before it (it shrinks the step 2.5-fold), else the iteration bisects on
 * keys. Near a simple root Newton converges quadratically and passes this
 * by far; far from the roots, or near a cluster, it creeps linearly (ratio
 * 1/2 and worse) and bisection, at most 64 steps whatever the span, takes
 * over. (rtsafe, Numerical Recipes 9.4, compares with the step before last
 * and a factor 2.) */
#define IMP_ROOT_NEWTON_SHRINK 0.4

/* Newton's stopping rule (dimensionless): a step of at most
 * IMP_ROOT_NEWTON_STOP_REL of |x| that is also at most
 * IMP_ROOT_NEWTON_QUAD_RATIO of the step before it is converging
 * quadratically (each relative step about the square of the last), so the
 * next one would move x by about (1e-9)^2 relative, below an ulp: x minus
 * this step is the root. The ratio keeps a step that is small only because
 * Newton creeps (near a cluster) from stopping the iteration early. */
#define IMP_ROOT_NEWTON_STOP_REL 1e-9
#define IMP_ROOT_NEWTON_QUAD_RATIO 1e-4

/* Enlargement of Fujiwara's root bound (dimensionless): the bound is
 * computed with pow-like functions (sqrt, cbrt) that round by about an ulp
 * (1e-16 relative); widening it by 1e-9 of itself covers that many times
 * over, so no root is lost just beyond the computed bound, and costs the
 * search interval nothing measurable. */
#define IMP_ROOT_BOUND_SLACK 1e-9

/* ---- contact and shapes ------------------------------------------------------------------ */

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

/* Slack on a polygon's total turning (radians): the edge directions of a
 * convex polygon turn by exactly 2 pi in all; n atan2 results carry about
 * n ulps of 2 pi, many orders below 1e-6, and a second winding (a star
 * polygon) adds a whole 2 pi. */
#define IMP_POLYGON_TURNING_SLACK 1e-6

/* ---- hull, SAT and GJK ------------------------------------------------------------------- */

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

/* Window of the hull's search for parallel edge directions (a length in
 * the direction's first component, as a multiple of IMP_EDGE_PARALLEL_SIN):
 * the unit directions, signed canonically, are sorted by x, and each is
 * compared only with the kept ones whose x is at most this far below its
 * own. Two unit directions whose sine of angle is s differ by about s in
 * every component, so 4 s leaves room for their rounding. */
#define IMP_HULL_DIR_WINDOW (4 * IMP_EDGE_PARALLEL_SIN)

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

/* How much the GJK distance may exceed the true one (dimensionless,
 * relative to it), as the motion bound of conservative advancement takes
 * it: GJK stops when the support point improves v.v by less than
 * IMP_GJK_REL of it, and then |v| exceeds the distance by at most
 * IMP_GJK_REL |v|; four times that also covers the rounding of |v| and of
 * the step computed from it. */
#define IMP_GJK_EXCESS_REL (4.0 * IMP_GJK_REL)

/* Most steps of conservative advancement (count; core/toi_advance.c). Each
 * step costs one distance query. Against a transversal approach the
 * separating-plane bound lands on the contact in one or two steps and a
 * tangential (double-root) touch halves the remaining gap per step, so
 * about 40 reach 1e-9 of the scale; 1000 leaves room for polytope
 * feature changes and still bounds a request's work to a few milliseconds
 * for game shapes. A run that reaches it reports `failed`, unless a bound
 * proves the rest of the window free. */
#define IMP_ADVANCE_MAX_ITER 1000

/* Flat GJK tetrahedron (dimensionless: its volume times 6 over the cube of
 * its longest edge). Below this the orientation tests that decide whether
 * the origin lies inside are rounding noise (each carries about 1e-16 of
 * the cube), so the tetrahedron is reduced to its closest face instead of
 * declaring the shapes intersecting; 1e-10 keeps four orders of margin. A
 * pair of boxes 4.7e-5 apart was reported touching before this. */
#define IMP_GJK_FLAT_REL 1e-10

/* ---- time of impact ---------------------------------------------------------------------- */

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

/* Acceptance band of a vertex-circle root in the 2D rounded cast (a count
 * of contact tolerances, IMP_CONTACT_REL of the pair's scale, to which
 * IMP_CONTACT_REL of the summed radius R is added): |q(t) - v|^2 = R^2 has
 * roots all around the circle about a vertex v of the Minkowski difference
 * D, but only the arc between its edges' normals is boundary of the
 * rounded D. A root counts when the signed distance of its point to D is
 * within this band of R. The band is 1e-9 of the scale, the contract's
 * bound, so a root it admits is a contact to within that bound, while the
 * rounding of a root's point is orders of magnitude smaller. */
#define IMP_ROUNDED_VERTEX_BAND 1e3

/* Range of the power-of-two scalings of the sphere pair (the exponent, a
 * count): lengths and times are divided by 2^e with |e| at most this, so
 * that the scale factors, their reciprocals and every product of two of
 * them stay normal doubles (the limits are 2^1023 and 2^-1022) and each
 * scaling is exact. */
#define IMP_SPHERE_SCALE_MAX_EXP 1000

/* ---- scenes and simulation --------------------------------------------------------------- */

/* Relative padding of swept bounds (of the scene scale S, the largest
 * |coordinate| any body reaches plus its radius). The bounds are computed
 * in floating point and the narrowphase accepts a touch within its own
 * rounding tolerance, whose distance equivalent is below 1e-8 S (two
 * points grazing: the squared gap is decided to about u S^2, so the gap to
 * sqrt(u) S); 1e-7 S covers both with room, and is far below anything that
 * changes the broadphase's work. */
#define IMP_SCENE_BOUNDS_PAD 1e-7

/* Approach speeds below this fraction of the scene's speed scale V (the
 * largest initial speed, or sqrt(|acceleration| S) when larger) are
 * resolved with e = 0 (dimensionless). Inelastic collapse drives approach
 * speeds geometrically to zero in finitely many time units but infinitely
 * many events; cutting at 1e-9 V ends it after a few dozen rounds while the
 * energy such a contact could still lose (about (1e-9 V)^2 relative) is far
 * below anything a caller can measure. */
#define IMP_SIM_SLOW_REL 1e-9

/* Resting height (dimensionless, relative to the scene scale S: the largest
 * |coordinate| plus bounding radius at t = 0). A body leaving a still
 * halfspace with normal speed w rests on it when w^2 <= 2 |a_n| REST_REL S,
 * i.e. when its next hop would rise less than 1e-9 S, three orders above
 * the positional noise of evaluated paths (about 1e-15 S) and at the
 * contract's interpenetration bound. Hops shrink by e^2 each, so this ends
 * the Zeno sequence of a ball bouncing to rest after finitely many events. */
#define IMP_SIM_REST_REL 1e-9

/* Wake height (dimensionless, relative to S): an asleep body (guard 4 of
 * simulate.c) met at an approach speed u with u^2 <= 2 |a| WAKE_REL S holds
 * still (the other body meets it as a still static one); met faster it
 * wakes. The gap above REST_REL (a factor 1e4 in height, 100 in speed) is a
 * hysteresis: with the two equal, the zero-time chains of contacts in a
 * pile (speeds passed down a column shrink geometrically through the rest
 * speed) woke at one contact the bodies put to sleep at the one before,
 * about one sleep and one wake per contact. A body that holds still takes
 * no energy, and the other one loses its own share, so energy never grows;
 * 1e-5 S is 0.1 mm for a 10 m scene. */
#define IMP_SIM_WAKE_REL 1e-5

/* Least scene scale S of a simulation (length): a scene of points at the
 * origin has S = 0, and the thresholds taken from S (the rest height
 * IMP_SIM_REST_REL S, the speed scale sqrt(|a| S)) would be exactly 0;
 * 1e-300 keeps them positive and still below anything a body can measure. */
#define IMP_SIM_MIN_SCALE 1e-300

/* Relative slack of the grid's cell size over the largest local body
 * diameter (dimensionless): positions on a cell boundary are evaluated
 * with a few ulps of error, so a body may sit a hair outside its cell. */
#define IMP_SIM_CELL_SLACK 1e-6

/* ---- the move checker -------------------------------------------------------------------- */

/*
 * Skin (dimensionless, relative to the move's scale: the largest of |from|,
 * |to| (max-norm), |to - from| and the mover's extent). After a contact the
 * corrected body backs off along its path by this much, so the next slide
 * leg starts a hair apart from the obstacle instead of exactly on it. It is
 * two orders above the solvers' contact tolerance (IMP_CONTACT_REL, 1e-12:
 * a gap below that is "touching") and one order below the contract's 1e-9
 * penetration bound, so it is visible to the solvers and invisible to a game.
 */
#define IMP_MOVE_SKIN_REL 1e-10

/*
 * Touch tolerance (dimensionless, relative to the pair's scale: the move's
 * scale or the obstacle's largest coordinate magnitude plus its extent,
 * whichever is larger). `to` inside an obstacle by at most this is
 * touching, not penetration; a contact after which the path could travel
 * at most this much further into the obstacle (it happens at the very end
 * of the move) is an arrival at contact, not tunnelling. An honest client
 * that computes a resting contact in floating point lands within a few ulps
 * (about 1e-16 relative) of it; this tolerates a hundred million times that
 * and stays ten times below the contract's 1e-9 bound.
 */
#define IMP_MOVE_TOUCH_REL 1e-10

/* Slide direction tolerance (dimensionless, relative to the speed): a
 * velocity whose component into a touching plane is at most this fraction
 * of its length runs along the plane. Clipping leaves roundoff of a few
 * ulps (1e-16) in that component; a direction a game means to point into a
 * wall is many orders above it. */
#define IMP_MOVE_SLIDE_REL 1e-9

/* Contact band for the touching planes of a slide (count of skins): the
 * body is backed off by at most one skin, so two more cover roundoff. */
#define IMP_MOVE_TOUCH_BAND_SKINS 3.0

/* Margin of the move checker's cull (dimensionless, relative to the
 * magnitudes involved): swept bounds are exact up to a few ulps; this is
 * far wider. */
#define IMP_MOVE_CULL_MARGIN_REL 1e-6

/* ---- worlds ------------------------------------------------------------------------------ */

/*
 * Padding of the bounds a world query compares with the hierarchy's boxes
 * (dimensionless, relative to the query's scale: the world's largest
 * coordinate magnitude plus the ray's, body's or path's). A primitive's own
 * test looks only where its padded box says it can answer (a ray's t is
 * kept inside the box's span, a cast's contact must lie within the swept
 * bounds at its time, an overlap needs the boxes to meet), and the
 * hierarchy prunes with the same padded boxes, so queries equal the
 * brute-force loop whatever the padding. The padding decides only whether
 * a true answer lies inside the box: contacts the solvers report within
 * their tolerances (IMP_TOI_ADVANCE_REL, 1e-9 of the pair's scale;
 * IMP_CONTACT_REL for touching), the roundoff of a watertight ray decision
 * (a few ulps), and root errors of grazing contacts (about the square root
 * of the unit roundoff, 1.5e-8 relative, at a double root) all stay well
 * inside 1e-7, which costs the culling nothing measurable.
 */
#define IMP_WORLD_PAD_REL 1e-7

/*
 * Internal edges (dimensionless). A contact with a triangle's (or chain
 * segment's) edge or vertex is judged against the surface around it
 * (core/world_surface.c): its normal is genuine when no corner of the
 * primitives sharing the feature lies above the contact plane by more than
 * this fraction of its distance from the feature. A normal that misses the
 * face normal by less than IMP_MOVE_SLIDE_REL already slides; this is the
 * same bound, so a feature contact counts as internal exactly when its
 * normal tilts enough to matter.
 */
#define IMP_WORLD_EDGE_REL 1e-9

/* A contact normal on a primitive's edge or vertex that differs from its face normal by at
 * most this (each component of two unit vectors: a few ulps, far below any real edge angle)
 * is the face normal: a ball landing on the shared edge of a flat floor gets the floor's
 * normal exactly, as it does anywhere else on it. */
#define IMP_WORLD_FACE_SNAP 1e-14

/* Where on a primitive a contact lies (dimensionless, a barycentric
 * coordinate, or a segment's parameter): within this of an edge (of an
 * end) is on it. Contact points of grazing contacts are good to about the
 * square root of the unit roundoff (1.5e-8); this is far wider, and a
 * contact classified on an edge that is in truth just inside is judged by
 * the neighbours' planes and keeps (nearly) the face normal either way. */
#define IMP_WORLD_FEATURE_REL 1e-6

/* ---- rotating bodies (core/toi_rotating.c) ------------------------------------------------ */

/* Time tolerance of a rotating pair's contact time (dimensionless, relative to
 * max(1, time)): the contract's bound, `tolerance <= 1e-9 * max(1, time)`. */
#define IMP_ROT_TIME_REL 1e-9

/* Depth below which a grazing contact of a rotating pair may be passed over
 * (dimensionless, relative to the pair's scale: positions and shape sizes). Half
 * the contract's 1e-9, so that this depth plus the rounding margin of the
 * distance (IMP_ROT_ROUND_ULPS) stays within it. */
#define IMP_ROT_DEPTH_REL 0.5e-9

/* Rounding margin of a posed distance (unit roundoffs, times the sum of the
 * magnitudes that enter it: positions, path terms and shape extents; the turned
 * arcs have IMP_ROT_TURN_ULPS). Placing a point p + v t + a t^2 / 2 + R(t) x
 * costs a few roundoffs of each term, the rotation of x by a quaternion a few
 * of |x|, a dot product with a unit normal a few more; 64 covers them with
 * room. */
#define IMP_ROT_ROUND_ULPS 64.0

/* Rounding margin of a turned point (unit roundoffs, times |w| t and the shape's reach): the
 * angle |w| t is computed with a relative error of about 2.5 u (|w t| from rounded
 * products and a square root); sine and cosine of it are correctly reduced, so their own
 * error does not grow with the angle (it is in IMP_ROT_ROUND_ULPS). 8 covers it. */
#define IMP_ROT_TURN_ULPS 8.0

/* Largest turn (radians, |w| t) at which a rotating pair is still placed: there the turn's
 * rounding margin (IMP_ROT_TURN_ULPS u |w| t) is 8.9e-10 of the shape's reach, within the
 * contract's 1e-9 of the scale; past it a double cannot place the shapes to that accuracy,
 * and the solver answers "undecided" rather than guess (about 160,000 turns). */
#define IMP_ROT_MAX_ANGLE 1e6

/* Distance queries between two polls of the stop check (count). */
#define IMP_ROT_POLL_STEPS 64

#endif
