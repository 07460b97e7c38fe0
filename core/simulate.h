/*
 * simulate.h - event-driven simulation of bodies that move on exact
 * parabolic paths from contact to contact (POST /v1/scenes/simulate).
 *
 * Bodies are any shapes imp_toi_shapes pairs with each other (spheres in
 * 2D and 3D, every 2D shape, static halfspaces as walls). Each contact is
 * resolved by imp_respond_resolve (efficiencies multiplied, static bodies
 * have infinite mass and may be kinematic). Between contacts nothing is
 * stepped: every body keeps the time its path starts at and is evaluated
 * there when an event needs it.
 *
 * Guards (see simulate.c's DESIGN block for the reasons):
 *  - a contact whose approach speed is below IMP_SIM_SLOW_REL of the
 *    scene's speed scale is resolved with e = 0 (inelastic collapse);
 *  - a body that leaves a still static halfspace too slowly to rise more
 *    than IMP_SIM_REST_REL of the scene scale against its acceleration rests
 *    on it: normal velocity and the normal part of its acceleration are
 *    removed until a later contact lifts it off;
 *  - resting contacts: a body left too slow relative to what it touches,
 *    or meeting it slowly within t_c of its last contact (Luding and McNamara's TC
 *    criterion), falls asleep on it when that holds still, else rides on
 *    its cluster's path; released when met faster or when the path it
 *    rests on changes;
 *  - max_events bounds the contacts processed, and nothing else does (the
 *    stop check bounds the other work).
 *
 * Rotation (input.turns given): every body turns about its position at
 * its angular velocity w (gravity does not change it); a pair in which a
 * shape other than a sphere turns is predicted by imp_toi_rotating
 * (certified: the contact is at `time` with the shapes apart by at most
 * IMP_ROT_DEPTH_REL of the pair's scale) and every contact is resolved by
 * imp_respond_resolve_turning at the contact point through both inertias,
 * which changes both angular velocities. A contact whose point does not
 * approach (a graze, a pair just resolved and parting, one that starts
 * interpenetrating or slides in contact) is a standing contact: the search
 * goes on from it (imp_toi_rotating_standing) and finds the pair's next
 * contact once the pair has been proven apart exactly as any contact, and
 * one within the standing contact once it may be eta = depth + delta / 4
 * deep (delta = IMP_ROT_DEPTH_REL of the pair's scale; eta doubles when the
 * pair gets that deep without approaching). Guards 2 (resting on a halfspace) and the
 * clusters of guard 4 are off; a body falls asleep after a contact with what holds still
 * when no point of it moves faster than the rest speed, the support is below it and its
 * centre is over what it stands on (a box on a face, not on an edge or corner; a sphere
 * anywhere), and a slow contact pressed by gravity is a microcollision that leaves at the
 * rest speed (so a box pivoting on a corner topples by hops instead of meeting the floor
 * again at the same instant); guard 1 and max_events hold. A world
 * is not supported with rotation (precondition). A turn of more than
 * IMP_ROT_MAX_ANGLE / 2 within one prediction is split: the body is
 * predicted again at the end of the shorter window.
 *
 * Memory: imp_sim_create allocates everything the simulation needs (about
 * 200 bytes per body plus the event queue); imp_sim_destroy frees it and
 * accepts NULL. imp_sim_run's output arrays are freed by
 * imp_sim_output_free (accepts a zeroed output). The only failure is
 * running out of memory: imp_sim_create and imp_sim_run return
 * IMP_SIM_NOMEM (and fill an optional imp_error), imp_sim_advance
 * IMP_SIM_STOP_FAILED.
 * Thread-safety: a simulation belongs to one thread; no global state.
 * Preconditions (asserted): finite inputs, dim 2 or 3, horizon > 0 and
 * finite, mass > 0 for non-static bodies, efficiencies in [0, 1],
 * halfspaces static, every pair of shapes supported by imp_toi_shapes.
 */
#ifndef IMP_CORE_SIMULATE_H
#define IMP_CORE_SIMULATE_H

#include <stddef.h>
#include <stdint.h>

#include "failure.h"
#include "filter.h"
#include "inertia.h"
#include "parallel.h"
#include "shape.h"
#include "toi.h"
#include "tolerance.h"
#include "world.h"

/* Most bodies treated as global because they are larger than the grid's
 * bodies (count); never more than 1% of the bodies. */
#define IMP_SIM_MAX_GLOBAL 64

typedef struct imp_sim_body {
    imp_motion m;             /* at t = 0; m.a is the body's own acceleration */
    const imp_shape *shape;   /* borrowed for the simulation's lifetime */
    double mass;              /* > 0; ignored when static */
    int is_static;            /* infinite mass; may move (kinematic); gravity not added */
    double restitution;       /* [0, 1] */
    double tangential;        /* [0, 1] */
    const imp_filter *filter; /* NULL: the default; borrowed. Bodies whose filters say they
                                 cannot touch (filter.h) pass through each other: no contact
                                 between them is ever predicted */
} imp_sim_body;

/* A body's rotation (imp_sim_input.turns). */
typedef struct imp_sim_turn {
    imp_vec3 w;           /* angular velocity about the position, world axes, rad/s (2D: z);
                             0 for a halfspace */
    imp_mat3 inertia;     /* world-frame inertia tensor about the position of the shape as
                             given (2D: m[8] only); all zero: the body never turns from an
                             impulse (a point); ignored when static */
    imp_quat orientation; /* the orientation the shape is given in (already applied to it;
                             reported turned on); {0,0,0,0} is read as the identity */
} imp_sim_turn;

typedef struct imp_sim_input {
    const imp_sim_body *bodies; /* borrowed for the simulation's lifetime */
    size_t n;                   /* < 2^31 - 1 */
    int dim;                    /* 2 or 3 */
    double horizon;             /* > 0, finite: the simulation ends there */
    imp_vec3 gravity;           /* added to every non-static body's acceleration */
    size_t max_events;          /* most contacts processed */
    int record;                 /* keep the list of contacts */
    int no_grid;                /* 1: predict every body against every other (benchmark
                                   reference); 0: the cell grid */
    imp_stop stop;              /* polled every IMP_STOP_POLL_EVENTS queue entries; may be
                                   {NULL, NULL} */
    const imp_world *world;     /* NULL: none; else its colliders are static obstacles of
                                   infinite mass (efficiencies 1) for every non-static body */
    const imp_sim_turn *turns;  /* NULL: translation only; else one per body (borrowed for
                                   imp_sim_create): bodies turn (rigid response, see below) */
} imp_sim_input;

typedef struct imp_sim_event {
    double time;
    uint32_t a, b;    /* body indices, a < b; world: b is the world's collider */
    imp_vec3 point;   /* contact point */
    imp_vec3 normal;  /* unit, from a towards b */
    imp_vec3 impulse; /* applied to b (a received its negative) */
    uint32_t world;   /* 1: body a met the world's collider b */
    uint32_t index;   /* world: the primitive in the collider (0 for a shape) */
    uint32_t kind;    /* world: imp_world_prim_kind */
} imp_sim_event;

typedef enum imp_sim_stop {
    IMP_SIM_STOP_HORIZON = 0, /* reached the requested time */
    IMP_SIM_STOP_MAX_EVENTS,  /* the next contact would exceed max_events */
    IMP_SIM_STOP_STOPPED,     /* the caller's stop check said stop (imp_sim_stopped_by tells its
                                 reason); the state is consistent at the current time */
    IMP_SIM_STOP_FAILED       /* out of memory: the simulation is unusable */
} imp_sim_stop;

typedef struct imp_sim_stats {
    size_t events;        /* contacts processed */
    size_t crossings;     /* cell-crossing events */
    size_t stale;         /* invalidated events dropped from the queue */
    size_t predictions;   /* pairwise time-of-impact calls */
    size_t slow_contacts; /* contacts resolved with e = 0 by the collapse guard */
    size_t rests;         /* times a body came to rest on a halfspace */
    size_t sleeps;        /* times a body fell asleep (guard 4: resting contact) */
    size_t wakes;         /* times an asleep body woke */
    size_t global;        /* bodies predicted against everyone (halfspaces, huge bodies) */
    double cell_size;     /* grid cell edge (0 without the grid) */
} imp_sim_stats;

typedef struct imp_sim imp_sim;

typedef enum imp_sim_status { IMP_SIM_OK = 0, IMP_SIM_NOMEM } imp_sim_status;

/* Creates the simulation at t = 0 and predicts every body's first event
 * into *out. IMP_SIM_NOMEM on allocation failure: *out is NULL and *err
 * (when err is not NULL) says so. */
imp_sim_status imp_sim_create(const imp_sim_input *in, imp_sim **out, imp_error *err);

void imp_sim_destroy(imp_sim *s);

/*
 * Processes events up to time `until` (clamped to the horizon; never
 * backwards). Returns IMP_SIM_STOP_MAX_EVENTS when the next contact would
 * exceed max_events (the simulation then stays at that contact's time,
 * before it), else IMP_SIM_STOP_HORIZON with the time at `until`.
 * IMP_SIM_STOP_FAILED on allocation failure (the simulation is then
 * unusable: every later call returns it too). IMP_SIM_STOP_STOPPED when the
 * input's stop check said stop (polled every IMP_STOP_POLL_EVENTS queue
 * entries): the time is that of the last entry processed, and a later call
 * goes on from there.
 */
imp_sim_stop imp_sim_advance(imp_sim *s, double until);

/* The nonzero reason the stop check gave for the last IMP_SIM_STOP_STOPPED (0 before). */
int imp_sim_stopped_by(const imp_sim *s);

/* The simulation's current time. */
double imp_sim_time(const imp_sim *s);

/* Body i's position and velocity at time t (>= its last contact; any t
 * not earlier than the current time is exact on its path). */
void imp_sim_body_state(const imp_sim *s, size_t i, double t, imp_vec3 *p, imp_vec3 *v);

/* Body i's orientation and angular velocity at time t (as imp_sim_body_state). */
void imp_sim_body_turn(const imp_sim *s, size_t i, double t, imp_quat *q, imp_vec3 *w);

/* 2D: body i's turn about z since t = 0 at time t (imp_sim_state.angle). */
double imp_sim_body_angle(const imp_sim *s, size_t i, double t);

/* Changes the most contacts processed (a later imp_sim_advance stops before the contact
 * that would exceed it: a caller can stop before every contact to inspect the state). */
void imp_sim_set_max_events(imp_sim *s, size_t max_events);

const imp_sim_stats *imp_sim_get_stats(const imp_sim *s);

/* The recorded contacts so far, in time order (empty unless record). */
const imp_sim_event *imp_sim_events(const imp_sim *s, size_t *n);

typedef struct imp_sim_state {
    imp_vec3 p, v;
    imp_quat q;   /* orientation (the body's given one turned on; identity without rotation) */
    imp_vec3 w;   /* angular velocity (0 without rotation) */
    double angle; /* 2D: the turn about z since t = 0, summed as spin times time (exact for
                     one spin; q holds the same turn): an angle that has not lost the ulps of a
                     quaternion */
} imp_sim_state;

typedef struct imp_sim_output {
    double time; /* when it stopped */
    imp_sim_stop stopped;
    int stopped_by;        /* IMP_SIM_STOP_STOPPED: the stop check's reason */
    imp_sim_state *bodies; /* n, at `time` */
    imp_sim_event *events; /* n_events (record) or NULL */
    size_t n_events;
    imp_sim_stats stats;
} imp_sim_output;

/* Create, advance to the horizon, collect. On failure the output is empty
 * and *err (when err is not NULL) holds the status and a message. */
imp_sim_status imp_sim_run(const imp_sim_input *in, imp_sim_output *out, imp_error *err);

void imp_sim_output_free(imp_sim_output *out);

#endif
