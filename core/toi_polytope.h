/*
 * toi_polytope.h - time of impact of two translating convex polytopes by
 * swept separating axes: polygons (boxes are 4-gons) in 2D, boxes and
 * polyhedra in 3D; linear or parabolic motion.
 *
 * Files: toi_polytope.c holds the swept test, which is the same in every
 * dimension; toi_polytope_2d.c the polygons' axes and contact point;
 * toi_polytope_3d.c the 3D polytopes'.
 *
 * Thread-safety: pure and reentrant; allocates scratch memory only for
 * large inputs (polygons of more than 64 edges in all, more than 128 axes)
 * and, in 3D, for a polyhedron's hull and the candidate axes, freed before
 * returning.
 */
#ifndef IMP_TOI_POLYTOPE_H
#define IMP_TOI_POLYTOPE_H

#include <math.h>
#include <stddef.h>

#include "shape.h"
#include "toi.h"

typedef struct imp_toi_polygons_input {
    imp_motion a, b;         /* the polygons' reference points: vertices are relative to them */
    const imp_vec3 *va, *vb; /* counter-clockwise convex vertices, z = 0 */
    size_t na, nb;           /* >= 3 each */
    double horizon;          /* > 0; INFINITY searches all t >= 0 */
    /* each polygon's edge normals as imp_shape_polygon_normals gives them, or NULL: computed
     * here; and with them the shape's reach (imp_points_reach of its points) */
    const imp_vec3 *normals_a, *normals_b;
    double reach_a, reach_b;
} imp_toi_polygons_input;

/* HIT (time, point, unit normal from a to b, positions), OVERLAPPING at
 * t = 0 (depth and the normal along which moving b by depth separates
 * them), NONE, or FAILED (failure NOMEM) when scratch memory could not be
 * allocated.
 * has_closest is never set. Touching at t = 0 and separating or sliding is
 * no contact: the answer is the next touch. */
imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in);

/* The same for two translating 3D boxes or polyhedra (a polyhedron is its
 * points' convex hull): swept separating axes over the face normals of
 * both and the edge-direction cross products that are faces of their
 * Minkowski difference. FAILED with failure NOMEM when memory runs out,
 * DEGENERATE when a polyhedron's points have no hull, UNSUPPORTED when
 * either shape is not a box or polyhedron. The contact point is a touching vertex, the
 * crossing of two touching edges, or the centroid of the smaller touching
 * face or edge. */
imp_toi_result imp_toi_polytopes_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                    const imp_motion *mb, double horizon);

/* The first try of imp_toi_polytopes_3d for a pair that is not two boxes: under linear
 * motion, a GJK ray cast over the points, its answer certified by the swept test on one
 * axis (imp_toi_cast). 1 with *out (HIT or NONE) when certified, else 0 (accelerating
 * pairs among others: the hull path decides). */
int imp_toi_polytopes_3d_cast(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, double horizon, imp_toi_result *out);

/* The same by the hull path alone: every candidate axis of both hulls, for any motion
 * (imp_toi_polytopes_3d's answer when neither two boxes nor a certified ray cast under
 * linear motion gives it; the reference its fast paths are tested against). */
imp_toi_result imp_toi_polytopes_3d_hull(const imp_shape *a, const imp_motion *ma,
                                         const imp_shape *b, const imp_motion *mb, double horizon);

/* ---- the swept test, shared by toi_polytope_2d.c and toi_polytope_3d.c ------------------ */

/* Two translating convex vertex sets and the axes to sweep them over. */
typedef struct imp_toi_swept_input {
    imp_motion a, b;
    const imp_vec3 *va, *vb; /* relative to the positions */
    size_t na, nb;
    const imp_vec3 *axes; /* unit candidate separating axes */
    size_t n_axes;
    double horizon;
} imp_toi_swept_input;

/* One candidate axis of the swept test: the band [lo, hi] of b's shift
 * f(t) = c1 t + c2 t^2 along the unit axis n (in a's frame) in which the
 * projections overlap; the band's sides are +-INFINITY when only one side
 * can bind. */
typedef struct imp_toi_band {
    imp_vec3 n;
    double lo, hi;
    double c1, c2;
} imp_toi_band;

/* The swept separating axis test (toi_polytope.c's DESIGN): HIT, OVERLAPPING
 * or NONE as imp_toi_polygons, FAILED (NOMEM) when scratch memory runs out,
 * with
 * everything but the contact point, which depends on the dimension: for a
 * HIT or OVERLAPPING result the caller finds it from the features within
 * *feature_tol (a length) of touching along the normal. */
imp_toi_result imp_toi_swept(const imp_toi_swept_input *in, double *feature_tol);

/* The swept test one band at a time, for callers that build their own
 * bands (no allocation): the set of t in [0, horizon] at which every band
 * so far holds, as at most IMP_TOI_MAX_SPANS intervals. */
#define IMP_TOI_MAX_SPANS 32
typedef struct imp_toi_span {
    double lo, hi;
} imp_toi_span;
typedef struct imp_toi_sweep {
    imp_toi_span s[IMP_TOI_MAX_SPANS];
    int n;
} imp_toi_sweep;

void imp_toi_sweep_init(imp_toi_sweep *acc, double horizon);
/* A band of acceleration (c2 != 0) narrowing acc: imp_toi_sweep_narrow's out-of-line half. */
int imp_toi_sweep_narrow_curved(imp_toi_sweep *acc, const imp_toi_band *b, double horizon);

/* Narrows acc to the t at which band b holds too; 0 when nothing is left (NONE: b's axis
 * separates them over the whole window). A linear band (c2 = 0), the common one, in line:
 * it holds on one interval, [lo / c1, hi / c1] or reversed, whose ends are the roots the
 * quadratic case would find (the same quotients), so acc narrows in place. */
static inline int imp_toi_sweep_narrow(imp_toi_sweep *acc, const imp_toi_band *b, double horizon) {
    if (b->c2 != 0.0) return imp_toi_sweep_narrow_curved(acc, b, horizon);
    double t0 = -INFINITY, t1 = INFINITY;
    if (b->c1 != 0.0) {
        /* an open side stays open (no division by c1 there) */
        double c1 = b->c1, inf = c1 > 0.0 ? INFINITY : -INFINITY;
        double u = b->lo == -INFINITY ? -inf : b->lo / c1 + 0.0;
        double w = b->hi == INFINITY ? inf : b->hi / c1 + 0.0;
        t0 = c1 > 0.0 ? u : w;
        t1 = c1 > 0.0 ? w : u;
    } else if (!(b->lo <= 0.0 && b->hi >= 0.0)) {
        acc->n = 0;
    }
    int n = 0;
    for (int i = 0; i < acc->n; ++i) {
        double lo = acc->s[i].lo > t0 ? acc->s[i].lo : t0;
        double hi = acc->s[i].hi < t1 ? acc->s[i].hi : t1;
        if (lo <= hi) acc->s[n++] = (imp_toi_span){lo, hi};
    }
    acc->n = n;
    return n > 0;
}

/* The answer of imp_toi_swept once every band (in->n_axes of them) has
 * narrowed acc; in->va and in->vb give the pair's scale. */
imp_toi_result imp_toi_sweep_resolve(const imp_toi_swept_input *in, const imp_toi_band *bands,
                                     const imp_toi_sweep *acc, double *feature_tol);

/* The certified ray cast of 3D polytopes under linear motion (0 for any acceleration): a GJK ray
 * cast over in->va and in->vb (imp_ov_gjk_raycast) proposes the first time and the
 * triangle of their Minkowski difference the relative path enters through; the swept test
 * on that triangle's normal alone certifies it: its corners on the difference's support
 * plane along the normal (up to rounding, so a face of it), the pair apart along it until
 * then, the path crossing at an angle and strictly inside the triangle (touching, then
 * interpenetrating). A miss is certified by the cast's last two planes, each keeping the
 * pair apart by more than IMP_CONTACT_REL of the scale over its part of the window. 1
 * with *out (HIT without its contact point, *feature_tol as imp_toi_swept gives it; or
 * NONE) when certified, else 0 (overlapping at t = 0 among others): the caller's full
 * test decides. in->axes and in->n_axes are not read. (For two polygons the cast measured
 * no faster than their O(n + m) swept test.) */
int imp_toi_cast(const imp_toi_swept_input *in, imp_toi_result *out, double *feature_tol);

/* imp_quadratic_roots(c2, c1, c0, 0, h, r) with the linear case (c2 = 0)
 * in line: the one root -c0 / c1 (exactly 0 when c0 is), as imp_poly_roots
 * computes it; no root when c0 is infinite (an open side of a band). */
int imp_toi_quadratic_roots(double c2, double c1, double c0, double h, double r[2]);

/* 1 when the spheres of radius ra about a's position and rb about b's stay
 * apart over [0, horizon], by a margin above rounding: a certain miss for
 * shapes inside them. Linear motion only (0 when either accelerates). */
int imp_toi_bounds_miss(const imp_motion *a, double ra, const imp_motion *b, double rb,
                        double horizon);

/* Projection interval [*lo, *hi] of the vertices v[0..n), displaced by off,
 * on axis. */
void imp_toi_project(const imp_vec3 *v, size_t n, imp_vec3 off, imp_vec3 axis, double *lo,
                     double *hi);

#endif
