/*
 * toi_rotating.h - certified time of impact of two bodies that turn while they
 * move (the contract's "Rotating bodies", POST /v1/toi).
 *
 * A body turns about its position at a constant angular velocity w (world
 * axes, rad/s; 2D: about z) while the position follows p + v t + a t^2 / 2:
 * at time t its shape is the shape at t = 0 turned by the rotation vector
 * w t (imp_quat_from_rotvec). Shapes are given as placed at t = 0 (a body's
 * orientation already applied, imp_shape_rotate).
 *
 * Thread-safety: pure and reentrant, no global state. Allocates the turned
 * vertices of a polygon or polyhedron once per call (and imp_overlap a
 * polyhedron's hull per distance query).
 */
#ifndef IMP_TOI_ROTATING_H
#define IMP_TOI_ROTATING_H

#include "parallel.h"
#include "shape.h"
#include "toi.h"

typedef struct imp_toi_rotating_input {
    const imp_shape *a, *b; /* as placed at t = 0, relative to their positions */
    imp_motion ma, mb;      /* a halfspace ignores its p but is displaced by v t + a t^2 / 2 */
    imp_vec3 wa, wb;        /* angular velocities (2D: z only); a halfspace's must be 0 */
    int dim;                /* 2 or 3 */
    double horizon;         /* > 0; INFINITY: unbounded */
    const imp_stop *stop;   /* NULL: never; polled every IMP_ROT_POLL_STEPS distance queries */
    int b_triangle;         /* 3D: b is a polyhedron of three points standing for the flat
                               triangle they span (a world's), whose placements
                               imp_overlap_triangle answers (imp_overlap refuses three points:
                               no hull); b does not turn */
} imp_toi_rotating_input;

/* 1 when the pair needs imp_toi_rotating: a body other than a sphere turns (a
 * sphere's turn moves no point of it, so a pair of spheres, turning or not, is
 * the translational solver's, with exactly its answer). */
int imp_toi_rotating_needed(const imp_shape *a, imp_vec3 wa, const imp_shape *b, imp_vec3 wb);

/*
 * The first contact of the pair in [0, horizon], certified: for a HIT the exact
 * first contact t* satisfies time <= t* <= time + tolerance, with
 * 0 < tolerance <= IMP_ROT_TIME_REL * max(1, time); `normal` (a towards b) and
 * `point` are those of the shapes at `time` (closest points), pa and pb the
 * positions then. OVERLAPPING when the shapes interpenetrate at t = 0 by more
 * than the rounding of the query (depth and normal of imp_overlap). NONE when
 * the whole window is proven free. A contact is never passed over unless it
 * is shallower than IMP_ROT_DEPTH_REL of the pair's scale (a graze that
 * enters and leaves within one refinement step).
 * FAILED: UNDECIDED when a body would have to be placed after turning more
 * than IMP_ROT_MAX_ANGLE radians (doubles cannot place it to the accuracy
 * promised), NOMEM, or (with *stopped set to the stop check's reason) when
 * the stop check said stop. *stopped is 0 otherwise.
 * Work: each distance query either proves an interval free or advances by
 * at least min(IMP_ROT_TIME_REL max(1, t), delta / L) (one ulp of t at the
 * least), delta = IMP_ROT_DEPTH_REL * scale and L the bound of the
 * distance's rate; so at most 1 + T max(1e9, L / delta) queries, T the end
 * of the search (the horizon, IMP_ROT_MAX_ANGLE / |w|, or the time after
 * which the bounding spheres never meet), polled by the stop check.
 */
imp_toi_result imp_toi_rotating(const imp_toi_rotating_input *in, int *stopped);

/*
 * imp_toi_rotating for a pair that the caller knows to be in contact at t = 0 without
 * approaching (a standing contact: a graze, a pair just resolved and parting, or one that
 * starts interpenetrating), with standing > 0 the depth it may reach unreported: until a
 * placement proves the pair apart by standing / 2, a contact is the pair being no longer
 * provably shallower than `standing` (the same certified advancement on d + standing
 * instead of d, so every step proves that the pair is no deeper than that); from there
 * the search goes on as imp_toi_rotating's. Never OVERLAPPING. A HIT found within the
 * standing contact has `depth` = standing (it may be that deep at time + tolerance); 0
 * once the pair was proven apart by standing / 2. standing <= 0 is imp_toi_rotating. Each step
 * advances by at least min(standing - depth at its start, ...) / L as well as the refinement width,
 * so the work bound above holds.
 */
imp_toi_result imp_toi_rotating_standing(const imp_toi_rotating_input *in, double standing,
                                         int *stopped);

/* The orientation at time t of a body whose orientation at t = 0 is q0 and
 * whose angular velocity is w: the turn by w t after q0. */
imp_quat imp_spin_at(imp_quat q0, imp_vec3 w, double t);

#endif
