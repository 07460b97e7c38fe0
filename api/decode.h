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
#include "core/shape.h"
#include "core/toi.h"

#define IMP_PTR_MAX 256

/* Largest magnitude accepted for any number (422 beyond). Squares and
 * fourth powers of such values stay far inside double range, so no solver
 * overflows; game coordinates are many orders smaller. */
#define IMP_API_MAX_MAGNITUDE 1e60

typedef enum imp_errcode {
    IMP_E_OK = 0,
    IMP_E_MALFORMED, /* 400 not JSON */
    IMP_E_TYPE,      /* 400 wrong JSON type */
    IMP_E_MISSING,   /* 400 required field absent */
    IMP_E_DIMENSION, /* 400 vectors of mixed dimension */
    IMP_E_VALUE,     /* 422 a value out of its range */
    IMP_E_GEOMETRY,  /* 422 geometrically invalid */
    IMP_E_LIMIT,     /* 422 more than a configured limit */
    IMP_E_NOMEM      /* 500 allocation failed */
} imp_errcode;

struct imp_body;

typedef struct imp_dec {
    const imp_api_ctx *ctx;
    /* the scene bodies, when api/scenetext.c decoded them from the request text already
     * (imp_dec_scene_bodies takes them instead of the request's "bodies"); NULL otherwise */
    struct imp_body *pre_bodies;
    size_t pre_n;
    /* a 200 reply the endpoint wrote as text (malloc'd, NUL-terminated; *resp left NULL),
     * when a jansson tree would cost more than the solve (scene prediction) */
    char *text;
    size_t text_len;
    char ptr[IMP_PTR_MAX]; /* pointer of the value being decoded */
    size_t len;
    int dim; /* 0 until the first vector fixes it to 2 or 3 */
    imp_errcode code;
    const char *msg;           /* constant: "must be a finite number >= 0" */
    char err_ptr[IMP_PTR_MAX]; /* pointer of the offending value */
    char detail[256];          /* optional extra detail (e.g. parser position) */
} imp_dec;

void imp_dec_init(imp_dec *d, const imp_api_ctx *ctx);

/* Pointer stack: push returns the previous length for imp_dec_pop. */
size_t imp_dec_push_key(imp_dec *d, const char *key);
size_t imp_dec_push_index(imp_dec *d, size_t index);
void imp_dec_pop(imp_dec *d, size_t len);

/* Records an error at the current pointer; returns -1. */
int imp_dec_fail(imp_dec *d, imp_errcode code, const char *msg);

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
} imp_body;

/* Member `key` as a Body (required). On failure nothing is left to free. */
int imp_dec_body(imp_dec *d, const json_t *obj, const char *key, size_t index, imp_body *out);
/* `body` itself (NULL: missing) as a Body at the current pointer. */
int imp_dec_body_value(imp_dec *d, const json_t *body, size_t index, imp_body *out);
/* Frees what a decoded body owns; accepts NULL. */
void imp_body_free(imp_body *b);
/* `v` itself as a Vec of the request's dimension, at the current pointer. */
int imp_dec_vec_value(imp_dec *d, const json_t *v, imp_vec3 *out);

/* HTTP status for an error code (the one table). */
int imp_errcode_status(imp_errcode code);

#endif
