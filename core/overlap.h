/*
 * overlap.h - static overlap of two placed shapes, with the separation
 * vector (POST /v1/overlap).
 *
 * Supported: every pair of 2D shapes; in 3D every pair (spheres,
 * capsules, segments, boxes, polyhedra) and any shape against a halfspace.
 * Two halfspaces give IMP_OVERLAP_FAILED with failure UNSUPPORTED.
 *
 * Thread-safety: pure function. A pair with a 3D polyhedron allocates its
 * hull (core/hull.h) for the call and frees it before returning; if that
 * fails the state is IMP_OVERLAP_FAILED with failure NOMEM (or DEGENERATE
 * for points that have no hull). No other allocation.
 */
#ifndef IMP_CORE_OVERLAP_H
#define IMP_CORE_OVERLAP_H

#include "failure.h"
#include "hull.h"
#include "shape.h"
#include "vec.h"

typedef enum imp_overlap_state {
    IMP_OVERLAP_APART = 0,   /* distance > 0 */
    IMP_OVERLAP_OVERLAPPING, /* sharing interior, or touching (depth 0) */
    IMP_OVERLAP_FAILED       /* no answer; `failure` says why */
} imp_overlap_state;

typedef struct imp_overlap_result {
    imp_overlap_state state;
    double depth;        /* OVERLAPPING: length of the minimum translation (>= 0) */
    double distance;     /* APART: least distance between the shapes (> 0) */
    imp_vec3 normal;     /* unit, from a towards b: moving b along it by depth separates them */
    imp_failure failure; /* FAILED: why (IMP_FAILURE_NONE otherwise) */
} imp_overlap_result;

/* Shapes a and b placed at positions pa and pb (a halfspace ignores its
 * position), in `dim` (2 or 3) dimensions. */
imp_overlap_result imp_overlap(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                               int dim);

/* Two 3D boxes or polyhedra prepared for the swept separating axis test
 * (core/toi_polytope_3d.c): their vertices relative to their positions (a
 * polyhedron's hull vertices) and every candidate separating axis of the
 * pair (unit; face normals and the edge-direction crosses that are faces
 * of the Minkowski difference, which translation does not change). */
#define IMP_POLYTOPE_PAIR_INLINE 256 /* vertices and axes kept in the pair itself */
typedef struct imp_polytope_pair {
    imp_vec3 *va, *vb;
    size_t na, nb;
    imp_vec3 *axes;
    size_t n_axes;
    /* storage for small pairs (two boxes need no allocation); the pointers
     * may point here, so a built pair is not to be copied */
    imp_vec3 store[IMP_POLYTOPE_PAIR_INLINE];
} imp_polytope_pair;

/* Builds the pair of two 3D boxes or polyhedra (asserted). Returns
 * IMP_HULL_OK; IMP_HULL_NOMEM when an allocation fails; IMP_HULL_DEGENERATE
 * when a polyhedron's points have no hull. On failure *err (when not NULL)
 * says which and *out holds nothing to free. Free a built pair with
 * imp_polytope_pair_free, which accepts NULL and a zeroed pair. */
imp_hull_status imp_polytope_pair_build(const imp_shape *a, const imp_shape *b,
                                        imp_polytope_pair *out, imp_error *err);
void imp_polytope_pair_free(imp_polytope_pair *p);

/* Closest points *cp on segment p0-p1 and *cq on q0-q1 (either may be a
 * point: equal ends), by Ericson, "Real-Time Collision Detection", 5.1.9.
 * Where the closest pair is not unique (parallel segments), one of them. */
void imp_closest_segments(imp_vec3 p0, imp_vec3 p1, imp_vec3 q0, imp_vec3 q1, imp_vec3 *cp,
                          imp_vec3 *cq);

/* imp_overlap, and when the state is IMP_OVERLAP_APART also the closest
 * points of the two shapes: *ca on a, *cb on b, with cb - ca = distance *
 * normal up to rounding (for polytopes from the GJK simplex's barycentric
 * coordinates; where the closest features are parallel, one pair of many).
 * In any other state *ca and *cb are not written. The returned result is
 * exactly imp_overlap's, or FAILED (NOMEM) when building a polyhedron's
 * hull a second time for the points fails. Same thread-safety and
 * allocation as imp_overlap. */
imp_overlap_result imp_overlap_closest(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                       imp_vec3 pb, int dim, imp_vec3 *ca, imp_vec3 *cb);

/* A 2D GJK run's final simplex, by its points' indices into each shape's core points: a later
 * run on the same two shapes, a little moved or turned, starts from it (a warm start, as
 * Box2D's b2SimplexCache), which usually ends it within an iteration or two. n = 0: none
 * yet, a cold start. */
typedef struct imp_gjk2_cache {
    int n;
    unsigned ia[3], ib[3];
} imp_gjk2_cache;

/* A 2D shape's core placed: its points relative to pos (a point, a segment's two ends, or a
 * convex polygon's corners in order; z = 0) and the radius that rounds them. */
typedef struct imp_core2 {
    const imp_vec3 *pts;
    size_t n;
    double r;
    imp_vec3 pos;
} imp_core2;

/* Two 2D shapes (not halfspaces) measured by GJK over their cores, as 3D polytopes always
 * are: where GJK finds the cores apart by more than the contact tolerance and their radii,
 * an APART answer whose `distance` (the cores' GJK distance less the radii) exceeds the
 * true one by at most IMP_GJK_EXCESS_REL of the cores' distance, whose normal is the unit
 * direction of GJK's closest point of the cores' difference, and whose closest points (*ca,
 * *cb) follow from its witnesses. O(n + m) per GJK iteration where the exact 2D path
 * (imp_overlap_closest) scans every vertex-edge pair: for callers that need a certified
 * bound of the distance, not its last bits (core/toi_rotating.c). Otherwise FAILED: with
 * *near set when the shapes are such a pair (GJK found them within that, or overlapping),
 * which imp_overlap_closest then decides; UNSUPPORTED with near 0 when they are not (a
 * halfspace). `cache` (or NULL): imp_gjk2_cache, of earlier runs on these two shapes. */
imp_overlap_result imp_overlap_gjk_2d(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                      imp_vec3 pb, imp_gjk2_cache *cache, imp_vec3 *ca,
                                      imp_vec3 *cb, int *near);

/* Two 2D shapes (not halfspaces) placed at pa and pb: 1 when a GJK run over their cores
 * proves them overlapping, ending on a triangle of the cores' difference that holds the
 * origin inside by more than its points' rounding (imp_ov_gjk2_encloses); 0 when it does
 * not prove it (apart, touching, overlapping by about the rounding, or shapes it does not
 * take), which says nothing. O(n + m) per iteration: a cheap sufficient test of contact
 * where imp_overlap would scan every pair of edges (core/toi_rotating.c). `cache` as
 * imp_overlap_gjk_2d's. */
int imp_overlap_proven_2d(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                          imp_gjk2_cache *cache);

/* Two 3D shapes placed at pa and pb, one of them a box or polyhedron (not a halfspace), that
 * touch or all but do: the contact's normal, as the separating axis test finds it, into *n
 * (from a towards b): of *n as given and the separating axis test's best candidate (of the
 * face normals and the edge-direction cross products that can be faces of the Minkowski
 * difference, the axis of least push, imp_ov_sat_depth_3d), the direction along which the
 * gap between them is largest. Any direction's gap is at most their distance, and at a contact of
 * polytopes one of those axes meets it, where the direction between closest points a few ulps apart
 * is rounding's; so it is the contact's normal to within rounding. 0, or -1 (*n unchanged) for
 * another pair or when a polyhedron's hull cannot be built (NOMEM). */
int imp_overlap_contact_normal_3d(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                                  imp_vec3 *n);

/* imp_overlap_gjk_2d and imp_overlap_proven_2d on two placed cores, for a caller that has
 * them (core/toi_rotating.c); `scale` bounds the radii's sum and every placed coordinate's
 * magnitude from above (the contact tolerance's and the proof's rounding's scale), or 0 to
 * have it formed from the points. */
imp_overlap_result imp_overlap_gjk_core2(const imp_core2 *a, const imp_core2 *b, double scale,
                                         imp_gjk2_cache *cache, imp_vec3 *ca, imp_vec3 *cb,
                                         int *near);
int imp_overlap_proven_core2(const imp_core2 *a, const imp_core2 *b, double scale,
                             imp_gjk2_cache *cache);

/* Shape a (3D, not a halfspace) placed at pa against the flat triangle tri (corners in
 * world coordinates, not collinear): imp_overlap's rules, with the triangle a flat convex
 * polytope (its two faces, three edges and their directions), which a polyhedron of its
 * three points is not (it has no hull). With ca and cb both given, an APART answer also
 * gives the closest points as imp_overlap_closest does. FAILED: NOMEM or DEGENERATE as
 * imp_overlap for a, or UNDECIDED as imp_overlap_closest. */
imp_overlap_result imp_overlap_triangle(const imp_shape *a, imp_vec3 pa, const imp_vec3 tri[3],
                                        imp_vec3 *ca, imp_vec3 *cb);

#endif
