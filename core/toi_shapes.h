/*
 * toi_shapes.h - time of impact of any two placed shapes: picks the exact
 * solver for the pair.
 *
 * Exact: every pair but two halfspaces, except 3D pairs with neither
 * volume nor radius (two segments or zero-radius capsules, a point and a
 * segment): those, and a box flat to rounding against such a shape, go to
 * conservative advancement to a reported tolerance.
 * imp_toi_shapes returns state IMP_TOI_FAILED with failure UNSUPPORTED for
 * two halfspaces, NOMEM on allocation failure, UNDECIDED when advancement
 * ran out of steps (the result's tolerance is then the one it aimed for).
 * Thread-safety: pure and reentrant.
 */
#ifndef IMP_TOI_SHAPES_H
#define IMP_TOI_SHAPES_H

#include "shape.h"
#include "toi.h"

/* 1 when imp_toi_shapes solves shapes a and b in `dim` dimensions: every
 * pair but two halfspaces. */
int imp_toi_shapes_supported(const imp_shape *a, const imp_shape *b, int dim);

/* 1 when the pair is solved in closed form (exact roots); else by
 * conservative advancement to a tolerance the result reports. */
int imp_toi_shapes_closed_form(const imp_shape *a, const imp_shape *b, int dim);

/* Shape a on motion ma, b on mb (the motion's p is the shape's position;
 * a halfspace ignores it but moves with v and a), over [0, horizon]. */
imp_toi_result imp_toi_shapes(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, int dim, double horizon);

#endif
