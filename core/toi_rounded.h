/*
 * toi_rounded.h - time of impact of two translating rounded convex shapes
 * (a core of 1, 2 or more vertices rounded by a radius: spheres, capsules,
 * segments, boxes, polygons, polyhedra), linear or parabolic motion: every
 * 2D pair, and in 3D the pairs where one side has no faces.
 *
 * Thread-safety: pure and reentrant; allocates scratch memory (in 3D the
 * hull of the Minkowski difference), freed before returning.
 */
#ifndef IMP_TOI_ROUNDED_H
#define IMP_TOI_ROUNDED_H

#include <stddef.h>

#include "shape.h"
#include "toi.h"

typedef struct imp_toi_rounded_input {
    imp_motion a, b;
    const imp_vec3 *va, *vb; /* cores relative to the positions: 1 point, 2 segment ends,
                                or >= 3 counter-clockwise convex vertices; z = 0 */
    size_t na, nb;
    double ra, rb;  /* radii >= 0 */
    double horizon; /* > 0; INFINITY searches all t >= 0 */
} imp_toi_rounded_input;

/* As imp_toi_polygons: HIT, OVERLAPPING at t = 0 (depth, normal), NONE, or
 * FAILED on allocation failure; has_closest is never set. */
imp_toi_result imp_toi_rounded_2d(const imp_toi_rounded_input *in);

/*
 * 3D: shapes a and b (spheres, capsules, segments, boxes, polyhedra; not
 * two boxes or polyhedra, which imp_toi_polytopes_3d solves, nor
 * halfspaces) on motions ma and mb (p is the shape's position), over
 * [0, horizon]. Exact, as imp_toi_rounded_2d, with *out as imp_toi_shapes
 * gives it. Returns 0 with *out set; -1 out of memory; 1 when the pair has
 * neither volume nor radius (two segments; a point and a segment), for
 * which *out is not meaningful.
 */
int imp_toi_rounded_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                       const imp_motion *mb, double horizon, imp_toi_result *out);

#endif
