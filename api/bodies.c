/*
 * bodies.c - the "bodies" array of the scene endpoints.
 *
 * DESIGN
 * What: one decoder for the bodies of /v1/scenes/predict and
 * /v1/scenes/simulate, so both take the same bodies with the same limits,
 * errors and pointers.
 * How: the array's size is checked against ctx->max_bodies before anything
 * is allocated; each body goes through imp_dec_body_value, then through the
 * scene shape rule (imp_toi_shapes must pair it with a sphere, which in 2D
 * admits every shape and in 3D spheres and halfspaces).
 * Why: the scene solvers assert that every pair is supported; request data
 * must be rejected here first.
 */
#include "api/bodies.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/toi_shapes.h"

void imp_bodies_free(imp_body *bodies, size_t n) {
    for (size_t i = 0; bodies && i < n; ++i)
        imp_body_free(&bodies[i]);
    free(bodies);
}

/* 0 when the body's shape pairs with every other body a scene takes. Else 422
 * at its shape/type (the current pointer is the body's). */
static int scene_shape(imp_dec *d, const imp_body *b) {
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE};
    if (imp_toi_shapes_closed_form(&b->shape, &sphere, d->dim)) return 0;
    size_t saved = imp_dec_push_key(d, "shape");
    size_t s2 = imp_dec_push_key(d, "type");
    imp_dec_fail(d, IMP_E_VALUE,
                 "is not supported in 3D scenes: a segment or a capsule of radius 0 has no "
                 "closed-form contact with a point or another segment");
    imp_dec_pop(d, s2);
    imp_dec_pop(d, saved);
    return -1;
}

int imp_dec_scene_bodies(imp_dec *d, const json_t *req, imp_body **bodies, size_t *n,
                         size_t *decoded) {
    *decoded = 0;
    *bodies = NULL;
    if (d->pre_bodies) {
        /* decoded from the request text already (api/scenetext.h) */
        *bodies = d->pre_bodies;
        *n = *decoded = d->pre_n;
        d->pre_bodies = NULL;
        return 0;
    }
    const json_t *arr = json_object_get(req, "bodies");
    size_t saved = imp_dec_push_key(d, "bodies");
    if (!arr) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(arr)) return imp_dec_fail(d, IMP_E_TYPE, "must be an array of bodies");
    *n = json_array_size(arr);
    if (*n > d->ctx->max_bodies || *n > UINT32_MAX) {
        snprintf(d->detail, sizeof d->detail, "%zu bodies, the limit is %zu", *n,
                 d->ctx->max_bodies);
        return imp_dec_fail(d, IMP_E_LIMIT, "has more bodies than this server accepts");
    }
    *bodies = malloc((*n ? *n : 1) * sizeof **bodies);
    if (!*bodies) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < *n; ++i) {
        imp_body *b = &(*bodies)[i];
        size_t s2 = imp_dec_push_index(d, i);
        if (imp_dec_body_value(d, json_array_get(arr, i), i, b)) return -1;
        ++*decoded;
        if (scene_shape(d, b)) return -1;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}
