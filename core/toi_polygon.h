/*
 * toi_polygon.h - time of impact of two translating convex polygons in 2D
 * (boxes are 4-gons), linear or parabolic motion.
 *
 * Thread-safety: pure and reentrant; allocates a scratch array of one
 * axis per edge (freed before returning).
 */
#ifndef IMP_TOI_POLYGON_H
#define IMP_TOI_POLYGON_H

#include <stddef.h>

#include "shape.h"
#include "toi.h"

typedef struct imp_toi_polygons_input {
    imp_motion a, b;         /* the polygons' reference points: vertices are relative to them */
    const imp_vec3 *va, *vb; /* counter-clockwise convex vertices, z = 0 */
    size_t na, nb;           /* >= 3 each */
    double horizon;          /* > 0; INFINITY searches all t >= 0 */
} imp_toi_polygons_input;

/* HIT (time, point, unit normal from a to b, positions), OVERLAPPING at
 * t = 0 (depth and the normal along which moving b by depth separates
 * them), NONE, or FAILED when scratch memory could not be allocated.
 * has_closest is never set. Touching at t = 0 and separating or sliding is
 * no contact: the answer is the next touch. */
imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in);

/* The same for two translating 3D boxes or polyhedra (a polyhedron is its
 * points' convex hull): swept separating axes over the face normals of
 * both and the edge-direction cross products that are faces of their
 * Minkowski difference. FAILED when memory runs out or either shape is
 * not a box or polyhedron. The contact point is a touching vertex, the
 * crossing of two touching edges, or the centroid of the smaller touching
 * face or edge. */
imp_toi_result imp_toi_polytopes_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                    const imp_motion *mb, double horizon);

#endif
