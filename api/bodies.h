/*
 * bodies.h - decoding of a scene's "bodies" array, shared by
 * POST /v1/scenes/predict and POST /v1/scenes/simulate.
 *
 * Thread-safety: as decode.h (a decoding state belongs to one request).
 */
#ifndef IMP_API_BODIES_H
#define IMP_API_BODIES_H

#include <jansson.h>
#include <stddef.h>

#include "api/decode.h"

/*
 * Member "bodies" of `req` (required array, at most d->ctx->max_bodies and
 * UINT32_MAX entries) into *bodies (malloc'd, *n entries). Each body must
 * pair with every other body a scene takes: every shape in 2D; spheres and
 * halfspaces in 3D (422 at its shape/type otherwise). Returns 0, or -1 with
 * the error in `d`; either way the first *decoded bodies own their shapes:
 * free with imp_bodies_free(*bodies, *decoded) (accepts NULL).
 */
int imp_dec_scene_bodies(imp_dec *d, const json_t *req, imp_body **bodies, size_t *n,
                         size_t *decoded);

/* Frees n decoded bodies and the array; accepts NULL. */
void imp_bodies_free(imp_body *bodies, size_t n);

#endif
