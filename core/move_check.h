/*
 * move_check.h - the client-move checker: a client's reported move checked against a
 * world of obstacles, with a corrected outcome (POST /v1/validate).
 *
 * The mover goes on the straight path from `from` to `to` at constant
 * velocity (to - from) / dt over [0, dt]; every obstacle moves on its own
 * parabolic path over the same window (time 0 is the start of the move).
 * The answer lists the violations (tunnelling, penetration of `to`, speed)
 * and the server's corrected position and velocity at t = dt ("collide and
 * slide"; move_check.c says exactly how, and which edge-case rules apply).
 *
 * Memory: the input is borrowed; the result owns its violations array, free
 * it with imp_move_result_free (which accepts NULL and a result whose
 * array is NULL).
 * Thread-safety: pure and reentrant; no global state.
 * Preconditions (asserted; api/ checks requests first): dim 2 or 3, finite
 * numbers, dt > 0, max_speed >= 0 (INFINITY: no limit), max_iterations in
 * [0, IMP_MOVE_MAX_ITERATIONS], the mover not a halfspace, and every
 * mover/obstacle pair solved in closed form (imp_toi_shapes_closed_form) (an unsupported
 * pair makes the result IMP_MOVE_FAILED, never a wrong answer). Obstacles and the mover
 * may turn (imp_move_obstacle.w, imp_move_input.w): their pairs go to imp_toi_rotating.
 */
#ifndef IMP_CORE_MOVE_CHECK_H
#define IMP_CORE_MOVE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "failure.h"
#include "filter.h"
#include "parallel.h"
#include "shape.h"
#include "toi.h"
#include "tolerance.h"
#include "vec.h"
#include "world.h"

/* Slide iterations of the correction when the request names none (count;
 * the contract's default). */
#define IMP_MOVE_DEFAULT_ITERATIONS 5

/* Most slide iterations one request may ask for (count; api/ answers 422
 * beyond). Each iteration costs one time-of-impact query per nearby
 * obstacle; a slide that has not settled after 64 contacts is stuck, and a
 * game server would rather have the answer. */
#define IMP_MOVE_MAX_ITERATIONS 64

typedef struct imp_move_obstacle {
    const imp_shape *shape;   /* borrowed; as placed at the start of the move */
    imp_motion m;             /* its path from the start of the move (a halfspace: v and a only) */
    const imp_filter *filter; /* NULL: the default; borrowed */
    imp_vec3 w;               /* angular velocity about world axes, rad/s (2D: z only): the shape
                                 turns about its position by w t (a spinning blade, a door on
                                 its hinge); 0 for a halfspace. A shape other than a sphere may
                                 turn at most IMP_ROT_MAX_ANGLE radians over dt (else the
                                 result is FAILED, UNDECIDED) */
} imp_move_obstacle;

typedef struct imp_move_input {
    const imp_shape *shape; /* the mover (not a halfspace) */
    imp_vec3 from, to;      /* where the client says it started and ended */
    double dt;              /* > 0: the move's duration */
    const imp_move_obstacle *obstacles;
    size_t n_obstacles;
    int dim;                  /* 2 or 3 */
    double max_speed;         /* >= 0; INFINITY: no speed check */
    int max_iterations;       /* [0, IMP_MOVE_MAX_ITERATIONS] */
    const imp_filter *filter; /* the mover's (NULL: the default); obstacles it cannot touch
                                 (filter.h) are ignored, as if absent */
    const imp_world *world;   /* NULL: none; else its primitives are static obstacles too
                                 (triangles, segments, convex colliders; core/world.h) */
    const imp_stop *stop;     /* NULL: never; polled every IMP_STOP_POLL_PAIRS solves */
    imp_vec3 w;               /* the mover's angular velocity about world axes, rad/s (2D: z
                                 only): its shape (as at the start) turns about its position by
                                 w t while it moves; 0: it does not. At most IMP_ROT_MAX_ANGLE
                                 radians over dt */
} imp_move_input;

typedef enum imp_move_kind {
    IMP_MOVE_SPEED = 0,  /* distance / dt above max_speed */
    IMP_MOVE_TUNNELING,  /* the straight path runs into an obstacle */
    IMP_MOVE_PENETRATION /* `to` lies inside an obstacle at t = dt */
} imp_move_kind;

typedef struct imp_move_violation {
    imp_move_kind kind;
    int in_world;    /* tunnelling, penetration: 1 for a collider of the world, 0 for an obstacle */
    size_t obstacle; /* of an obstacle: index into the obstacles */
    uint32_t collider, index, prim_kind; /* of the world: the collider, the primitive in it
                                            (imp_world_prim_kind), the first contact's (or the
                                            deepest overlap's); one violation of each kind per
                                            collider */
    double time;     /* tunnelling: first contact in [0, dt]; penetration: dt; speed: 0 */
    imp_vec3 point;  /* tunnelling: contact point; penetration: middle of the overlap */
    imp_vec3 normal; /* unit, from the mover towards the obstacle (not for speed) */
    double depth;    /* penetration: depth at `to`; tunnelling: depth when the mover starts
                        inside (time 0), else 0 */
    int has_depth;   /* depth is meaningful */
    double speed;    /* speed: distance / dt */
} imp_move_violation;

/* One leg of the corrected path: from `start` at time `t0` with velocity
 * `v` until the next leg's t0 (or dt for the last). */
typedef struct imp_move_leg {
    double t0;
    imp_vec3 start, v;
} imp_move_leg;

typedef enum imp_move_state {
    IMP_MOVE_OK = 0,
    IMP_MOVE_FAILED, /* `failure` says why; nothing else is set */
    IMP_MOVE_STOPPED /* the stop check said stop; `stopped_by` is its reason; nothing else set */
} imp_move_state;

typedef struct imp_move_result {
    imp_move_state state;
    int valid;                      /* no violations */
    imp_move_violation *violations; /* malloc'd; speed first, then by time, kind, obstacle */
    size_t n_violations;
    imp_vec3 position; /* corrected position at t = dt; exactly `to` when valid */
    imp_vec3 velocity; /* corrected velocity: the last leg's (0 when blocked) */
    int iterations;    /* slide iterations (contacts resolved) */
    int blocked;       /* still blocked after max_iterations: position is `from` */
    /* the corrected path (when not blocked): legs[0..n_legs) */
    imp_move_leg legs[IMP_MOVE_MAX_ITERATIONS + 1];
    int n_legs;
    imp_failure failure; /* FAILED: why (NOMEM; UNSUPPORTED for a pair the preconditions exclude;
                            UNDECIDED for a world primitive a solver could not decide) */
    int stopped_by;      /* STOPPED: the stop check's reason */
} imp_move_result;

/*
 * Checks the move (see move_check.c for the rules). Returns the result;
 * state IMP_MOVE_FAILED (failure NOMEM on allocation failure, UNSUPPORTED
 * for a pair the solvers do not handle), with nothing to free. Otherwise
 * free it with imp_move_result_free.
 */
imp_move_result imp_move_check(const imp_move_input *in);

/* Frees the violations and clears them; accepts NULL. */
void imp_move_result_free(imp_move_result *r);

#endif
