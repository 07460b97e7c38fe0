/*
 * decode.h - validated decoding of request JSON into core inputs.
 *
 * Every decoder takes the decoding state `imp_dec`, which tracks the JSON
 * Pointer of the value being read and, on failure, records an error code,
 * a constant message and the pointer of the offending value. Decoders
 * return 0 on success and -1 on failure (the state then says why); they
 * check every number (finite, within range) before anything reaches core,
 * whose asserts request data must never trip.
 *
 * Thread-safety: a state belongs to one request; nothing is shared.
 */
#ifndef IMP_API_DECODE_H
#define IMP_API_DECODE_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>

#include "api/api.h"
#include "api/problem.h"
#include "core/filter.h"
#include "core/inertia.h"
#include "core/shape.h"
#include "core/toi.h"

#define IMP_PTR_MAX 256

/* Largest magnitude accepted for any number (422 beyond). Squares and
 * fourth powers of such values stay far inside double range, so no solver
 * overflows; game coordinates are many orders smaller. */
#define IMP_API_MAX_MAGNITUDE 1e60

struct imp_body;

struct imp_budget;
struct imp_dec_world_shape;

/* Which bodies may have a non-zero angular_velocity in an endpoint's request. */
typedef enum imp_dec_spin {
    IMP_DEC_SPIN_REFUSED = 0, /* none (the default: an endpoint that has no use for a spin) */
    IMP_DEC_SPIN_SERVED       /* every shape but a halfspace (/v1/toi, /v1/overlap, ...) */
} imp_dec_spin;

typedef struct imp_dec {
    const imp_api_ctx *ctx;
    struct imp_budget *budget; /* the request's time budget (api/budget.h); NULL: none */
    char ptr[IMP_PTR_MAX];     /* pointer of the value being decoded */
    size_t len;
    int dim; /* 0 until the first vector fixes it to 2 or 3 */
    imp_errcode code;
    const char *msg;           /* constant: "must be a finite number >= 0" */
    char err_ptr[IMP_PTR_MAX]; /* pointer of the offending value */
    char detail[256];          /* optional extra detail (e.g. parser position) */
    int stopped;               /* imp_dec_stopped's reason */
    /* set while decoding a world's colliders: a body's mesh, heightfield or chain shape is
     * decoded here (api/decode_world.h) instead of being 422 unsupported-field */
    struct imp_dec_world_shape *world;
    /* what the endpoint does with a body's rotation (the contract's "Rotating bodies"): a
     * non-zero angular_velocity it cannot honour is 422 unsupported-field, never ignored */
    imp_dec_spin spin;
} imp_dec;

void imp_dec_init(imp_dec *d, const imp_api_ctx *ctx);

/* Pointer stack: push returns the previous length for imp_dec_pop. */
size_t imp_dec_push_key(imp_dec *d, const char *key);
size_t imp_dec_push_index(imp_dec *d, size_t index);
void imp_dec_pop(imp_dec *d, size_t len);

/* Records an error at the current pointer; returns -1. */
int imp_dec_fail(imp_dec *d, imp_errcode code, const char *msg);
/* The same at member `key` of the current value. */
int imp_dec_fail_at(imp_dec *d, const char *key, imp_errcode code, const char *msg);

/*
 * Parses a request text as every path does: duplicate keys rejected (an
 * object with two "radius" members has no single meaning), every number a
 * double (an integer too large for 64 bits is a number, not a parse error),
 * any JSON value at the top (a scalar is then a 400 wrong-type from the
 * endpoint, as a batch item's scalar body is). NULL with IMP_E_MALFORMED
 * recorded (the detail gives line and column, and names no library
 * internals) when the text is not JSON; the caller owns the result.
 */
json_t *imp_dec_parse(imp_dec *d, const char *text, size_t len);

/* The problem+json object of the error recorded in `d` (NULL on allocation
 * failure; the caller owns it). */
json_t *imp_dec_problem(const imp_dec *d);

/*
 * Strict members: every member of object `obj` must be one of `known`
 * (NULL-terminated). A member the contract defines but this version does
 * not serve yet, listed in `unsupported` (NULL-terminated, or NULL), is 422
 * unsupported-field at it; any other is 400 unknown-field at it. Returns 0,
 * or -1 with the error recorded. `obj` must be an object.
 */
int imp_dec_members(imp_dec *d, const json_t *obj, const char *const *known,
                    const char *const *unsupported);

/* imp_dec_object, then imp_dec_members. */
int imp_dec_strict_object(imp_dec *d, const json_t *obj, const char *const *known,
                          const char *const *unsupported);

/*
 * A request object: imp_dec_strict_object with the members every request
 * may carry added to `known` ("time_budget_ms": a number > 0, which sets
 * the request's budget, clipped to the server's maximum). Returns 0 or -1.
 */
int imp_dec_request(imp_dec *d, const json_t *req, const char *const *known,
                    const char *const *unsupported);

/*
 * Records why work stopped before it finished (the stop check's `reason`,
 * an imp_stop_reason): 503 time-budget-exceeded with the budget, the time
 * spent and `progress` ("12 of 40 items done") in the detail; 503 draining;
 * or the code of a request whose client has gone. Returns -1.
 */
int imp_dec_stopped(imp_dec *d, int reason, const char *progress);

/* What every number of a request must be: finite, of magnitude <= 1e60 (422 otherwise). */
static inline int imp_dec_magnitude_ok(double x) {
    return isfinite(x) && fabs(x) <= IMP_API_MAX_MAGNITUDE;
}

/* x within [min, max] (open_min: min itself excluded), as imp_dec_number checks it. */
static inline int imp_dec_range_ok(double x, double min, int open_min, double max) {
    return !(x < min || (open_min && x == min) || x > max);
}

/* A numeric body id: an integer of magnitude <= 2^53. */
static inline int imp_dec_id_number_ok(double x) {
    return x == floor(x) && fabs(x) <= 9007199254740992.0;
}

/* The object itself must be a JSON object (400 otherwise). */
int imp_dec_object(imp_dec *d, const json_t *v);

/*
 * Member `key` of object `obj` as a number in [min, max] (inclusive unless
 * `open_min`, in which case min itself is rejected). Absent: -1 with
 * IMP_E_MISSING when `required`, else *out keeps its value and 0 returns.
 * `msg` is the range message ("must be a finite number > 0").
 */
int imp_dec_number(imp_dec *d, const json_t *obj, const char *key, int required, double min,
                   int open_min, double max, const char *msg, double *out);

/* Member `key` as a Vec of the request's dimension (the first vector read
 * fixes it). Absent: as imp_dec_number. */
int imp_dec_vec(imp_dec *d, const json_t *obj, const char *key, int required, imp_vec3 *out);

/* Member `key` as a boolean. */
int imp_dec_bool(imp_dec *d, const json_t *obj, const char *key, int *out);

/* A decoded body. `id` is borrowed from the request JSON (NULL: use the
 * index); the shape's vertices (polygon, polyhedron) are owned: free the
 * body with imp_body_free. */
typedef struct imp_body {
    const json_t *id;
    size_t index;
    imp_motion m;
    imp_shape shape;
    double mass;
    int is_static;
    double restitution, tangential;
    imp_filter filter; /* IMP_FILTER_DEFAULT unless the body has a `filter` */
    /* rotation (the contract's orientation, angular_velocity, inertia): */
    imp_quat orientation; /* unit (2D: about z); identity by default; `shape` is already
                             turned by it (imp_shape_rotate), so solvers see the shape at t = 0 */
    imp_vec3 omega;       /* angular velocity about world axes, rad/s (2D: z only); a sphere's
                             is kept, though it moves no point of the shape */
    imp_vec3 inertia;     /* principal moments in the body frame (2D: z only); all 0 when
                             absent (the default: a uniform solid of the shape and mass) */
} imp_body;

/* Member `key` as a Body (required). On failure nothing is left to free. */
int imp_dec_body(imp_dec *d, const json_t *obj, const char *key, size_t index, imp_body *out);
/* `body` itself (NULL: missing) as a Body at the current pointer. */
int imp_dec_body_value(imp_dec *d, const json_t *body, size_t index, imp_body *out);

/* Member `filter` of obj: {"category": bits, "mask": bits, "group": integer}, each
 * optional (defaults: category 1, mask all bits, group 0); absent: the default. 0, or -1
 * with a problem at the member. */
int imp_dec_filter(imp_dec *d, const json_t *obj, imp_filter *out);
/* Frees what a decoded body owns; accepts NULL. */
void imp_body_free(imp_body *b);
/* Frees n decoded bodies and the array; accepts NULL. */
void imp_bodies_free(imp_body *bodies, size_t n);
/*
 * Body ids must tell results apart: 422 duplicate-id at the id of the first
 * body (in order) whose id repeats an earlier one's, `key` naming the array
 * member that holds them (the pointer is /key/i/id from the current one).
 * Bodies without an id are told apart by their index. Returns 0 or -1.
 */
int imp_dec_unique_ids(imp_dec *d, const imp_body *bodies, size_t n, const char *key);

/* 1 when body b turns a shape that a turn moves (angular_velocity non-zero, not a sphere). */
int imp_dec_turns(const imp_body *b);

/*
 * The turn of the bodies[0..n) of array member `key` (the pointer is at the request) within
 * [0, horizon]: a body that turns (imp_dec_turns) by more than IMP_ROT_MAX_ANGLE radians
 * cannot be placed to the accuracy a certified contact needs (core/toi_rotating.h), so it is
 * a 422 invalid-geometry at key/i/angular_velocity; `window` names the span in the detail
 * ("the horizon"). 0, or -1 with the error in `d`.
 */
int imp_dec_turn_within(imp_dec *d, const imp_body *bodies, size_t n, const char *key,
                        double horizon, const char *window);
/* The same for one body b at the current pointer (the body's). */
int imp_dec_turn_ok(imp_dec *d, const imp_body *b, double horizon, const char *window);
/*
 * The inertia tensor (world frame, about the position, of the shape as placed) and its
 * inverse of non-static body b, whose JSON object is `body` (the pointer is the body's):
 * the client's principal moments turned by its orientation when the body has `inertia`, a
 * point sphere's none (zero: it never turns), else a uniform solid of its shape and mass
 * (core/inertia.h). A static body gets zeros. 0, or -1 with a 422 at its inertia (a shape
 * with no volume, or moments too far apart to invert) or 500 out of memory.
 */
int imp_dec_body_inertia(imp_dec *d, const json_t *body, const imp_body *b, imp_mat3 *inertia,
                         imp_mat3 *inv);
/*
 * Member "vertices" of `obj`: an array of `min` (>= 1) to `max` Vecs of the
 * request's dimension, malloc'd into *out (*n of them; the caller frees
 * *out, also on failure once it is set). Fewer than `min` is 422 with the
 * message `few`, more than `max` 422 limit-exceeded. Returns 0 or -1.
 */
int imp_dec_vertices(imp_dec *d, const json_t *obj, size_t min, size_t max, const char *few,
                     imp_vec3 **out, size_t *n);
/* `v` itself as a Vec of the request's dimension, at the current pointer. */
int imp_dec_vec_value(imp_dec *d, const json_t *v, imp_vec3 *out);

#endif
