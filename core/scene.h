/*
 * scene.h - every pair's first contact in a scene of moving bodies.
 *
 * A scene is n bodies on parabolic paths over [0, horizon]. The answer is,
 * for every unordered pair that is not two static bodies and whose
 * filters let them touch (filter.h), its first contact in the window
 * ignoring any response: collisions sorted by (time, a, b) and pairs
 * already overlapping at t = 0 sorted by (a, b). Swept bounds feed a
 * broadphase (broadphase.h), whose candidates go through the pairwise time
 * of impact; every broadphase kind gives the same answer as brute force,
 * bit for bit.
 *
 * Bodies are spheres by default, or any shape whose pairs imp_toi_shapes
 * solves in closed form with a point (every 2D shape; in 3D every shape but
 * segments and capsules of radius 0). Halfspaces have no finite bounds: they
 * skip the broadphase and meet every body whose swept bounds reach into
 * them. A body may turn about its position at a constant angular velocity
 * (the contract's "Rotating bodies"): its swept bounds then hold every
 * orientation it takes (imp_swept_bounds_turning), and a pair in which a
 * shape other than a sphere turns goes to imp_toi_rotating (toi_rotating.h),
 * whose time carries a tolerance.
 *
 * Memory: imp_scene_predict allocates the output arrays; free them with
 * imp_scene_output_free (accepts a zeroed output).
 * Thread-safety: reentrant; in->par (may be NULL) spreads the narrowphase.
 */
#ifndef IMP_CORE_SCENE_H
#define IMP_CORE_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"
#include "failure.h"
#include "filter.h"
#include "parallel.h"
#include "shape.h"
#include "toi.h"
#include "tolerance.h"
#include "world.h"

typedef struct imp_scene_body {
    imp_motion m;
    double radius;            /* >= 0: the sphere's radius when shape is NULL */
    int is_static;            /* static pairs are skipped (a static body may still move) */
    const imp_shape *shape;   /* NULL: a sphere of `radius`; else borrowed, any shape whose pairs
                                 imp_toi_shapes solves in this dimension */
    const imp_filter *filter; /* NULL: the default; borrowed. Pairs whose filters say they
                                 cannot touch (filter.h) are never candidates */
    imp_vec3 w;               /* angular velocity about world axes, rad/s (2D: z only); 0 for a
                                 halfspace. |w| horizon <= IMP_ROT_MAX_ANGLE for a turning shape
                                 other than a sphere (else the pair may fail: UNDECIDED) */
} imp_scene_body;

/* Swept bounds of a sphere on its path over [0, horizon] (dim 2 or 3):
 * exact per axis (end points and the apex -v/a when inside the window),
 * grown by the radius and by `pad` on every side. */
imp_aabb imp_swept_bounds_sphere(const imp_motion *m, double radius, double horizon, int dim,
                                 double pad);
/* The same for any shape but the halfspace: its own bounds (exact: the hull
 * of its points and its radius) swept along the path. */
imp_aabb imp_swept_bounds_shape(const imp_motion *m, const imp_shape *shape, double horizon,
                                int dim, double pad);
/* The same for a shape that turns about its position at angular velocity w
 * (world axes; 2D: z only) over [0, horizon]: the path's range plus a box
 * holding the shape in every orientation it takes (imp_shape_turning_bounds).
 * w = 0: imp_swept_bounds_shape. */
imp_aabb imp_swept_bounds_turning(const imp_motion *m, const imp_shape *shape, imp_vec3 w,
                                  double horizon, int dim, double pad);

typedef struct imp_scene_input {
    const imp_scene_body *bodies;
    size_t n;
    int dim;                  /* 2 or 3 */
    double horizon;           /* > 0, finite */
    imp_broadphase_kind kind; /* AUTO chooses */
    size_t max_pairs;         /* bound on candidate pairs (memory); beyond it: failure */
    const imp_parallel *par;  /* may be NULL */
    const imp_world *world;   /* NULL: none; else every body that is not static also meets its
                                 colliders (core/world.h): each body-collider pair's first
                                 contact is reported like a pair's, with `world` set (a
                                 turning body's certified, with its tolerance) */
} imp_scene_input;

typedef struct imp_scene_contact {
    uint32_t a, b;    /* body indices, a < b; world: b is the collider */
    double time;      /* 0 for overlapping */
    imp_vec3 point;   /* contact point at time */
    imp_vec3 normal;  /* unit, from a towards b */
    double depth;     /* overlapping only */
    double tolerance; /* > 0: a turning pair's certified window, time <= t* <= time + tolerance
                         (imp_toi_rotating); 0: the time is exact */
    uint32_t world;   /* 1: a contact of body a with the world's collider b */
    uint32_t index;   /* world: the primitive (triangle, segment) in the collider; 0 for a shape */
    uint32_t kind;    /* world: imp_world_prim_kind */
} imp_scene_contact;

typedef enum imp_scene_status {
    IMP_SCENE_OK = 0,
    IMP_SCENE_NOMEM,    /* allocation failed */
    IMP_SCENE_TOO_MANY, /* more candidate pairs than max_pairs */
    IMP_SCENE_STOPPED,  /* the caller's stop check (in->par->stop) said stop */
    IMP_SCENE_UNDECIDED /* a turning pair could not be placed (a body turns more than
                           IMP_ROT_MAX_ANGLE within the horizon: the precondition on w) */
} imp_scene_status;

typedef struct imp_scene_output {
    imp_scene_contact *collisions; /* sorted by (time, a, b), a body before a collider for one a */
    size_t n_collisions;
    imp_scene_contact *overlapping; /* sorted by (a, b), likewise */
    size_t n_overlapping;
    size_t candidate_pairs;
    imp_broadphase_kind kind; /* the broadphase that ran (never AUTO) */
    size_t pairs_solved;      /* IMP_SCENE_STOPPED: pairs through the narrowphase by then */
    int stopped_by;           /* IMP_SCENE_STOPPED: the stop check's reason */
} imp_scene_output;

/* Fills *out. On failure the output is empty (nothing to free) and *err
 * (when err is not NULL) holds the status and a message; IMP_SCENE_STOPPED
 * leaves candidate_pairs, kind, pairs_solved and stopped_by set (the stop
 * check is polled every IMP_STOP_POLL_PAIRS pairs of every chunk). */
imp_scene_status imp_scene_predict(const imp_scene_input *in, imp_scene_output *out,
                                   imp_error *err);

void imp_scene_output_free(imp_scene_output *out);

/*
 * Keeps, of out->collisions (sorted by (time, a, b)), each body's earliest
 * contact only: a contact stays when it is the first, in that order, of a
 * or of b (a contact with the world: of a), so a contact that is the first
 * of both is kept once, and the order stays (time, a, b). n_bodies bounds the indices. overlapping
 * is left alone. Returns 0, or -1 when out of memory (out unchanged).
 */
int imp_scene_first_per_body(imp_scene_output *out, size_t n_bodies);

#endif
