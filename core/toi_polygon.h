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

#include "toi.h"

typedef struct imp_toi_polygons_input {
    imp_motion a, b;        /* the polygons' reference points: vertices are relative to them */
    const imp_vec3 *va, *vb; /* counter-clockwise convex vertices, z = 0 */
    size_t na, nb;          /* >= 3 each */
    double horizon;         /* > 0; INFINITY searches all t >= 0 */
} imp_toi_polygons_input;

/* HIT (time, point, unit normal from a to b, positions), OVERLAPPING at
 * t = 0 (depth and the normal along which moving b by depth separates
 * them), NONE, or FAILED when scratch memory could not be allocated.
 * has_closest is never set. Touching at t = 0 and separating or sliding is
 * no contact: the answer is the next touch. */
imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in);

#endif
