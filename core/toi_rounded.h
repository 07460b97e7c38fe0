/*
 * toi_rounded.h - time of impact of two translating rounded convex shapes
 * in 2D (a core of 1, 2 or >= 3 vertices rounded by a radius: spheres,
 * capsules, segments, boxes, polygons), linear or parabolic motion.
 *
 * Thread-safety: pure and reentrant; allocates one scratch array (freed
 * before returning).
 */
#ifndef IMP_TOI_ROUNDED_H
#define IMP_TOI_ROUNDED_H

#include <stddef.h>

#include "toi.h"

typedef struct imp_toi_rounded_input {
    imp_motion a, b;
    const imp_vec3 *va, *vb; /* cores relative to the positions: 1 point, 2 segment ends,
                                or >= 3 counter-clockwise convex vertices; z = 0 */
    size_t na, nb;
    double ra, rb;           /* radii >= 0 */
    double horizon;          /* > 0; INFINITY searches all t >= 0 */
} imp_toi_rounded_input;

/* As imp_toi_polygons: HIT, OVERLAPPING at t = 0 (depth, normal), NONE, or
 * FAILED on allocation failure; has_closest is never set. */
imp_toi_result imp_toi_rounded_2d(const imp_toi_rounded_input *in);

#endif
