/*
 * toi_shapes.h - time of impact of any two placed shapes: picks the exact
 * solver for the pair.
 *
 * Solved: two spheres (2D and 3D); every pair of 2D shapes; two 3D boxes or
 * polyhedra; any shape with one halfspace (2D and 3D). imp_toi_shapes_supported says whether a pair
 * is; imp_toi_shapes returns state IMP_TOI_FAILED for a pair that is not
 * (and on allocation failure).
 * Thread-safety: pure and reentrant.
 */
#ifndef IMP_TOI_SHAPES_H
#define IMP_TOI_SHAPES_H

#include "shape.h"
#include "toi.h"

/* 1 when imp_toi_shapes solves shapes a and b in `dim` dimensions. */
int imp_toi_shapes_supported(const imp_shape *a, const imp_shape *b, int dim);

/* Shape a on motion ma, b on mb (the motion's p is the shape's position;
 * a halfspace ignores it but moves with v and a), over [0, horizon]. */
imp_toi_result imp_toi_shapes(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, int dim, double horizon);

#endif
