/*
 * decode_world.h - the shapes only world colliders take: mesh and
 * heightfield (3D), chain (2D) (../shared/spec/API.md, "Shapes").
 *
 * Thread-safety: as decode.h.
 */
#ifndef IMP_API_DECODE_WORLD_H
#define IMP_API_DECODE_WORLD_H

#include <stdint.h>

#include "api/decode.h"
#include "core/world.h"

/* A world collider's geometry, decoded into d->world while it is set. `kind` stays
 * IMP_WORLD_SHAPE (0) for a body of an ordinary shape. Arrays are malloc'd: free with
 * imp_dec_world_shape_free. */
typedef struct imp_dec_world_shape {
    imp_world_collider_kind kind;
    int one_sided, loop;
    imp_vec3 *verts; /* mesh, chain */
    size_t n_verts;
    uint32_t *tris; /* mesh: 3 per triangle */
    size_t n_tris;
    size_t rows, cols; /* heightfield */
    double dx, dz;
    double *heights;
    size_t triangles; /* what the collider adds to the world: mesh and heightfield */
} imp_dec_world_shape;

/*
 * Decodes `shape` (an object, at the current pointer) of world type `type` ("mesh",
 * "heightfield" or "chain") into d->world: members checked strictly; a vertex index out of
 * range 422 at the index (/triangles/17/2); a heightfield's heights not rows*cols numbers
 * 422 at /heights; a collider of more triangles than ctx->max_world_triangles 422
 * limit-exceeded. Returns 0, or -1 with the error recorded (nothing left to free).
 */
int imp_dec_world_collider_shape(imp_dec *d, const json_t *shape, const char *type);

/* Frees what a decoded world shape holds and zeroes it; accepts NULL. */
void imp_dec_world_shape_free(imp_dec_world_shape *w);

#endif
