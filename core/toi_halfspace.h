/*
 * toi_halfspace.h - time of impact of a translating shape and a halfspace
 * {x : n.x <= offset} (2D or 3D).
 *
 * Thread-safety: pure and reentrant, no allocation.
 */
#ifndef IMP_TOI_HALFSPACE_H
#define IMP_TOI_HALFSPACE_H

#include <stddef.h>

#include "toi.h"

typedef struct imp_toi_halfspace_input {
    imp_motion body;       /* the shape's reference point */
    const imp_vec3 *verts; /* the shape's core (any points whose hull it is), relative to it */
    size_t n;              /* >= 1 */
    double radius;         /* >= 0: the core rounded by it */
    imp_vec3 normal;       /* unit */
    double offset;
    imp_motion plane;   /* the halfspace's motion: only v and a count (it is displaced
                           by v t + a t^2 / 2; its position is ignored) */
    double horizon;     /* > 0; INFINITY searches all t >= 0 */
    int halfspace_is_a; /* the normal of the result points from a to b */
} imp_toi_halfspace_input;

/* HIT, OVERLAPPING at t = 0 (depth) or NONE, as imp_toi_spheres. */
imp_toi_result imp_toi_halfspace(const imp_toi_halfspace_input *in);

#endif
