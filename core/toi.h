/*
 * toi.h - predictive (a priori) time of impact of two moving bodies.
 *
 * Motion is translation on a parabolic path p(t) = p + v t + a t^2 / 2.
 * Results follow the contract of POST /v1/toi (../shared/spec/API.md):
 * first touch in [0, horizon]; "overlapping" when interpenetrating at
 * t = 0; touching at t = 0 and approaching is a hit at 0, touching and
 * separating or sliding is not a contact.
 *
 * Thread-safety: pure functions, reentrant. Preconditions (asserted):
 * finite inputs, radii >= 0, horizon > 0 (INFINITY for unbounded).
 */
#ifndef IMP_TOI_H
#define IMP_TOI_H

#include "failure.h"
#include "vec.h"

typedef enum imp_toi_state {
    IMP_TOI_NONE = 0,    /* no touch in the window */
    IMP_TOI_HIT,         /* first touch at `time` */
    IMP_TOI_OVERLAPPING, /* interpenetrating at t = 0 by `depth` */
    IMP_TOI_FAILED       /* no answer; `failure` says why (never for spheres) */
} imp_toi_state;

typedef struct imp_motion {
    imp_vec3 p, v, a; /* position, velocity, acceleration at t = 0 */
} imp_motion;

/* Position on the motion's path at time t. */
static inline imp_vec3 imp_motion_at(const imp_motion *m, double t) {
    return imp_path_at(m->p, m->v, m->a, t);
}

typedef struct imp_toi_result {
    imp_toi_state state;
    double time;             /* HIT, OVERLAPPING (0) */
    imp_vec3 point;          /* contact point at `time` */
    imp_vec3 normal;         /* unit, from a towards b */
    imp_vec3 pa, pb;         /* the bodies' positions at `time` */
    double depth;            /* OVERLAPPING: penetration depth along normal */
    int has_closest;         /* closest approach filled */
    double closest_time;     /* time in the window of least centre distance */
    double closest_distance; /* surface gap then; negative when overlapping */
    double tolerance;        /* 0: the time is exact (a root); > 0: it came from conservative
                                advancement, and the gap at `time` is within this length */
    imp_failure failure;     /* FAILED: why (IMP_FAILURE_NONE otherwise) */
} imp_toi_result;

/* A NONE result, every field zero. Written field by field: gcc clears the same result
 * written {.state = IMP_TOI_NONE} with a rep stos, whose start-up was a fifth of the time
 * of a sphere pair's miss. */
static inline imp_toi_result imp_toi_none(void) {
    imp_toi_result r;
    const imp_vec3 z = {0.0, 0.0, 0.0};
    r.state = IMP_TOI_NONE;
    r.time = 0.0;
    r.point = r.normal = r.pa = r.pb = z;
    r.depth = 0.0;
    r.has_closest = 0;
    r.closest_time = r.closest_distance = 0.0;
    r.tolerance = 0.0;
    r.failure = IMP_FAILURE_NONE;
    return r;
}

/* A FAILED result for the reason given. */
static inline imp_toi_result imp_toi_failed(imp_failure why) {
    imp_toi_result r = {.state = IMP_TOI_FAILED, .failure = why};
    return r;
}

typedef struct imp_toi_spheres_input {
    imp_motion a, b;
    double ra, rb;  /* radii >= 0; 0 is a point */
    double horizon; /* > 0; INFINITY searches all t >= 0 */
} imp_toi_spheres_input;

/* Two spheres (circles in 2D: keep z = 0). Linear motion gives a quadratic
 * gap, accelerated motion a quartic; both solved by imp_poly_roots. */
imp_toi_result imp_toi_spheres(const imp_toi_spheres_input *in);
/* The same without the closest approach (has_closest 0): for callers that
 * need only the time of impact, which skips its cubic. */
imp_toi_result imp_toi_spheres_impact(const imp_toi_spheres_input *in);

#endif
