/*
 * toi_advance.h - general time of impact of two translating shapes by
 * conservative advancement on the exact distance (core/overlap.h): the
 * fallback for 3D pairs without a closed-form solver.
 *
 * Thread-safety: pure and reentrant, no global state. Allocation only
 * inside imp_overlap (a polyhedron's hull, per distance query).
 */
#ifndef IMP_TOI_ADVANCE_H
#define IMP_TOI_ADVANCE_H

#include "shape.h"
#include "toi.h"

/*
 * First time in [0, horizon] at which shape a on motion ma and shape b on
 * mb come within `tolerance` (an absolute length, e.g. 1e-9 of the scene
 * scale) of each other. The motion's p is the shape's position; a
 * halfspace ignores it but is displaced by v t + a t^2 / 2 (as
 * imp_toi_shapes). Works for every pair imp_overlap solves (in 3D: any two
 * of sphere, capsule, segment, box, polyhedron, and one halfspace).
 *
 * Returns, as imp_toi_spheres:
 *   HIT at `time` with the normal (a towards b) of the last distance query
 *     and `point` midway between the shapes' closest points then; touching
 *     at t = 0 (gap <= tolerance) is a HIT at 0 only when closing along
 *     the normal, otherwise the answer is the next contact;
 *   OVERLAPPING at 0 when the shapes interpenetrate by more than
 *     `tolerance` at t = 0 (depth and normal of imp_overlap);
 *   NONE when a bound proves no contact in the rest of the window;
 *   FAILED with failure UNDECIDED when IMP_ADVANCE_MAX_ITER steps neither
 *     reached the contact nor proved its absence; with imp_overlap's
 *     failure when a distance query failed (NOMEM, or UNSUPPORTED for a
 *     pair such as two halfspaces).
 * Never NONE for a pair that interpenetrates by more than `tolerance`
 * inside the window. has_closest is never set.
 * Preconditions (asserted): dim 2 or 3, finite motions, horizon > 0
 * (INFINITY for unbounded), 0 < tolerance < INFINITY.
 */
imp_toi_result imp_toi_advance(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                               const imp_motion *mb, int dim, double horizon, double tolerance);

#endif
