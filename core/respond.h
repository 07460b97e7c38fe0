/*
 * respond.h - collision response of two bodies at the moment of contact.
 *
 * Follows the contract of POST /v1/respond (../shared/spec/API.md): with
 * e = a.restitution * b.restitution and k = a.tangential * b.tangential,
 * the relative normal velocity becomes -e times what it was, the relative
 * tangential velocity k times what it was, and momentum is conserved (a
 * static body has infinite mass and keeps its velocity). Bodies already
 * separating (or resting) along the normal are returned unchanged.
 *
 * Thread-safety: pure functions, reentrant, no global state.
 * Preconditions (asserted; the api layer validates requests first):
 * finite velocities, mass > 0 and finite for a non-static body (ignored
 * for a static one), restitution and tangential in [0, 1], and a finite
 * normal that is not the zero vector (any length: it is normalised here).
 */
#ifndef IMP_RESPOND_H
#define IMP_RESPOND_H

#include "inertia.h"
#include "vec.h"

typedef enum imp_respond_state {
    IMP_RESPOND_RESOLVED = 0, /* approaching: velocities changed by the impulse */
    IMP_RESPOND_SEPARATING,   /* relative normal velocity >= 0: nothing changed */
    IMP_RESPOND_BOTH_STATIC   /* two infinite masses: nothing can change */
} imp_respond_state;

typedef struct imp_respond_body {
    imp_vec3 v;         /* velocity at the moment of contact */
    double mass;        /* > 0; unused when is_static */
    int is_static;      /* infinite mass: never pushed, energy not counted */
    double restitution; /* normal efficiency in [0, 1] */
    double tangential;  /* tangential efficiency in [0, 1] */
} imp_respond_body;

typedef struct imp_respond_input {
    imp_respond_body a, b;
    imp_vec3 normal; /* contact normal from a towards b; any non-zero length */
} imp_respond_input;

typedef struct imp_respond_result {
    imp_respond_state state;
    imp_vec3 va, vb;  /* velocities after the contact (the inputs unless RESOLVED) */
    imp_vec3 impulse; /* impulse applied to b (a receives its negative); zero unless RESOLVED */
    imp_vec3 normal;  /* the unit normal used, from a towards b */
    double e, k;      /* the pair's restitution and tangential efficiency */
    double ke_before; /* 0.5 m |v|^2 summed over the non-static bodies */
    double ke_after;  /* the same after the contact */
    /* with imp_respond_resolve_turning only (else zero): */
    imp_vec3 wa, wb; /* angular velocities after the contact (world axes; 2D: z) */
    int clamped;     /* 1: the tangential impulse was cut short so as not to add energy */
} imp_respond_result;

/* A body's rotation for imp_respond_resolve_turning (unused for a static body). */
typedef struct imp_respond_turn {
    imp_vec3 position;    /* the centre of mass */
    imp_vec3 omega;       /* angular velocity, world axes (2D: z only) */
    imp_mat3 inertia;     /* world-frame inertia tensor about `position` (2D: m[8] only) */
    imp_mat3 inv_inertia; /* its inverse (2D: m[8] only) */
} imp_respond_turn;

/* Resolves one contact (impulse-based, with the pair's reduced mass). */
imp_respond_result imp_respond_resolve(const imp_respond_input *in);

/*
 * Resolves one contact of two bodies that may turn: the impulse J on b (-J
 * on a) acts at `point` and changes the angular velocities through the
 * inverse inertias. J = jn n + Jt with Jt in the contact plane: the
 * relative normal velocity at the point becomes exactly -e times what it
 * was, and the relative tangential velocity at the point becomes k times
 * what a frictionless impulse (Jt = 0, the answer for k = 1) would leave,
 * unless that would add energy over the frictionless answer, where Jt is
 * cut short (r.clamped). Linear and angular momentum are conserved; kinetic
 * energy (linear + rotational) exactly when e = k = 1, never increased
 * otherwise. dim is 2 or 3 (2D: z components and inertia m[8] only).
 */
imp_respond_result imp_respond_resolve_turning(const imp_respond_input *in,
                                               const imp_respond_turn *ta,
                                               const imp_respond_turn *tb, imp_vec3 point);

#endif
