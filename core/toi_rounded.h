/*
 * toi_rounded.h - time of impact of two translating rounded convex shapes
 * (a core of 1, 2 or more vertices rounded by a radius: spheres, capsules,
 * segments, boxes, polygons, polyhedra), linear or parabolic motion: every
 * 2D pair, and in 3D the pairs where one side has no faces.
 *
 * Files: toi_rounded_2d.c and toi_rounded_3d.c hold the casts, toi_rounded.c
 * what they share.
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
                                or >= 3 counter-clockwise convex vertices; z = 0 (any 3D
                                points for imp_toi_rounded_3d_points) */
    size_t na, nb;
    double ra, rb;  /* radii >= 0 */
    double horizon; /* > 0; INFINITY searches all t >= 0 */
    /* 2D: a polygon core's edge normals as imp_shape_polygon_normals gives them, or NULL
     * (used against a sphere's core, the point 0; computed here otherwise); and with them
     * the shape's reach (imp_points_reach of its points) */
    const imp_vec3 *normals_a, *normals_b;
    double reach_a, reach_b;
} imp_toi_rounded_input;

/* As imp_toi_polygons: HIT, OVERLAPPING at t = 0 (depth, normal), NONE, or
 * FAILED (NOMEM) on allocation failure; has_closest is never set. */
imp_toi_result imp_toi_rounded_2d(const imp_toi_rounded_input *in);

/*
 * 3D: shapes a and b (spheres, capsules, segments, boxes, polyhedra; not
 * two boxes or polyhedra, which imp_toi_polytopes_3d solves, nor
 * halfspaces) on motions ma and mb (p is the shape's position), over
 * [0, horizon]. Exact, as imp_toi_rounded_2d, with the result as
 * imp_toi_shapes gives it; FAILED with failure NOMEM on allocation
 * failure, UNSUPPORTED when the pair has neither volume nor radius (two
 * segments; a point and a segment), which has no closed form here.
 */
imp_toi_result imp_toi_rounded_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                  const imp_motion *mb, double horizon);

/* The same cast on point sets: in->va, in->vb any 3D points (relative to
 * the motions' positions) whose hulls, rounded by in->ra and in->rb, are the
 * shapes. With flat_ok, a pair with no radius whose Minkowski difference is
 * flat (a point or a segment against a triangle, a world's primitive) is
 * solved too: a HIT when the relative path crosses the flat difference
 * (the point passes through the triangle). Otherwise as imp_toi_rounded_3d. */
imp_toi_result imp_toi_rounded_3d_points(const imp_toi_rounded_input *in, int flat_ok);

/* ---- shared by toi_rounded_2d.c and toi_rounded_3d.c (toi_rounded.c) -------------------- */

/* b's motion relative to a's: q(t) = pb(t) - pa(t). */
imp_motion imp_toi_relative(const imp_motion *a, const imp_motion *b);

/* 1 when the relative motion q enters the rounded Minkowski difference at
 * time t through a boundary point with outward normal n: moving inwards,
 * or at rest (to within IMP_SLIDE_REL of the speeds involved) with an
 * inward acceleration. */
int imp_toi_entering(const imp_motion *q, double t, imp_vec3 n);

/* |q(t) - u|^2 - rr as a quartic in t, lowest degree first: when q reaches
 * the sphere of radius sqrt(rr) about u. */
void imp_toi_distance_quartic(const imp_motion *q, imp_vec3 u, double rr, double c[5]);

/* Fills the contact of a cast at time t into r (whose depth is set): the
 * time, the unit normal (signed zeros cleared), the bodies' positions on
 * motions a and b, and the point: a's core point ca (relative to a's
 * position) moved out along the normal by ra less half the depth. */
void imp_toi_rounded_contact(imp_toi_result *r, const imp_motion *a, const imp_motion *b, double t,
                             imp_vec3 normal, imp_vec3 ca, double ra);

#endif
