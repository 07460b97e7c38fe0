/*
 * bodies.h - decoding of a scene request's "bodies" array, shared by
 * POST /v1/scenes/predict and POST /v1/scenes/simulate.
 *
 * Thread-safety: as decode.h (a decoding state belongs to one request).
 */
#ifndef IMP_API_BODIES_H
#define IMP_API_BODIES_H

#include <jansson.h>
#include <stddef.h>

#include "api/decode.h"
#include "api/endpoints.h"
#include "api/world_store.h"
#include "core/scene.h"

/* A scene request decoded as far as its bodies. */
typedef struct imp_scene_in {
    const json_t *req; /* the request object, for the endpoint's other members */
    imp_body *bodies;  /* malloc'd; the first `decoded` own their shapes */
    size_t n, decoded;
    json_t *owned; /* what this decoding parsed itself (NULL: the caller's tree) */
} imp_scene_in;

/*
 * The request's "bodies" (required array, at most d->ctx->max_bodies and
 * UINT32_MAX entries, ids unique). With a tree (in->json) they are decoded
 * from it; with text, a scene of plain spheres is decoded straight from the
 * text (api/scenetext.h) and anything else is parsed and decoded as a tree,
 * with the same result and the same errors. Each body must pair with every
 * other body a scene takes: every shape in 2D; spheres and halfspaces in 3D
 * (422 at its shape/type otherwise). Returns 0, or -1 with the error in
 * `d`; either way free *s with imp_scene_in_free.
 */
int imp_dec_scene(imp_dec *d, const imp_api_in *in, imp_scene_in *s);

/* Frees what *s holds; accepts a zeroed one. */
void imp_scene_in_free(imp_scene_in *s);

/* The core view of the decoded bodies (malloc'd into *scene; shapes and filters point into
 * s->bodies): spheres by radius, every other shape by pointer. 0, or -1 (out of memory) with
 * the error in `d`. */
int imp_scene_bodies(imp_dec *d, const imp_scene_in *s, imp_scene_body **scene);

/* A scene's optional `world`: the id of a stored world, held in *out (NULL when absent;
 * release it with imp_world_store_release). 404 unknown-world at /world when no world is
 * stored under it, 400 mixed-dimensions when it is not of the bodies' dimension (an empty
 * scene takes the world's). 0, or -1 with the error in `d`. */
int imp_dec_scene_world(imp_dec *d, const json_t *req, const imp_world_entry **out);

/* The stored world a request member "world" (a string, v) names, held in *out: 404
 * unknown-world, 503 world-store-unavailable (a world this replica has not cached while the
 * store cannot be reached) or 400 mixed-dimensions at /world otherwise; sets d->dim when no
 * vector did yet. 0, or -1 with the error in `d`. */
int imp_dec_world_ref(imp_dec *d, const json_t *v, const imp_world_entry **out);

#endif
