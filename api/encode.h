/*
 * encode.h - building response JSON.
 *
 * Numbers are written (api/jsonout.h) in the fewest digits that parse back
 * to exactly the double that was computed (contract: "Numbers in responses
 * round-trip"). A quantity that does not exist is left out rather than
 * written as NaN.
 *
 * Allocation failures are sticky: helpers take an `ok` flag that turns 0
 * when anything could not be allocated; the caller answers 500 then.
 */
#ifndef IMP_API_ENCODE_H
#define IMP_API_ENCODE_H

#include <jansson.h>
#include <time.h>

#include "api/decode.h"
#include "api/jsonout.h"

/* obj[key] = val, stealing val; clears *ok when val is NULL or set fails. */
void imp_put(json_t *obj, const char *key, json_t *val, int *ok);
void imp_put_real(json_t *obj, const char *key, double x, int *ok);
/* A Vec of `dim` (2 or 3) components. */
json_t *imp_enc_vec(imp_vec3 v, int dim);
/* An orientation (unit quaternion; 2D: about z) in the contract's form: 2D the angle in
 * radians in (-pi, pi], 3D [w, x, y, z] with w >= 0 (q and -q are one rotation). */
json_t *imp_enc_turn(imp_quat q, int dim);
/* The body's id as given, or its index. */
json_t *imp_enc_id(const imp_body *b);

/* The same two written as text (api/jsonout.h), for replies too long for a tree. */
void imp_jbuf_vec(imp_jbuf *w, imp_vec3 v, int dim);
void imp_jbuf_id(imp_jbuf *w, const imp_body *b);

/* Milliseconds from clock reading t0 to t1: a reply's elapsed_ms. */
double imp_enc_elapsed_ms(const struct timespec *t0, const struct timespec *t1);

#endif
