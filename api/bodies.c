/*
 * bodies.c - the "bodies" array of the scene endpoints.
 *
 * DESIGN
 * What: one decoder for the bodies of /v1/scenes/predict and
 * /v1/scenes/simulate, so both take the same bodies with the same limits,
 * errors and pointers, from a tree or from the request text.
 * How: from text, api/scenetext.c is tried first; it takes a scene of plain
 * spheres (and answers with the rest of the request as a tree) or declines,
 * and then the text is parsed whole and decoded as a tree. From a tree the
 * array's size is checked against ctx->max_bodies before anything is
 * allocated; each body goes through imp_dec_body_value, then through the
 * scene shape rule (imp_toi_shapes must pair it with a sphere, which in 2D
 * admits every shape and in 3D spheres and halfspaces). Ids are checked
 * for repeats last, on either path.
 * Why: the scene solvers assert that every pair is supported; request data
 * must be rejected here first. The text path only ever takes requests that
 * the tree path would accept with the same bodies, so it needs no error
 * handling of its own (tests/unit/test_scenetext.c compares the two).
 */
#include "api/bodies.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/scenetext.h"
#include "core/toi_shapes.h"

void imp_scene_in_free(imp_scene_in *s) {
    imp_bodies_free(s->bodies, s->decoded);
    json_decref(s->owned);
    memset(s, 0, sizeof *s);
}

/* 0 when the body's shape pairs with every other body a scene takes. Else 422
 * at its shape/type (the current pointer is the body's). */
static int scene_shape(imp_dec *d, const imp_body *b) {
    imp_shape sphere = {.type = IMP_SHAPE_SPHERE};
    if (imp_toi_shapes_closed_form(&b->shape, &sphere, d->dim)) return 0;
    size_t saved = imp_dec_push_key(d, "shape");
    imp_dec_fail_at(d, "type", IMP_E_VALUE,
                    "is not supported in 3D scenes: a segment or a capsule of radius 0 has no "
                    "closed-form contact with a point or another segment");
    imp_dec_pop(d, saved);
    return -1;
}

static int dec_tree(imp_dec *d, imp_scene_in *s) {
    if (imp_dec_object(d, s->req)) return -1;
    const json_t *arr = json_object_get(s->req, "bodies");
    size_t saved = imp_dec_push_key(d, "bodies");
    if (!arr) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(arr)) return imp_dec_fail(d, IMP_E_TYPE, "must be an array of bodies");
    s->n = json_array_size(arr);
    if (s->n > d->ctx->max_bodies || s->n > UINT32_MAX) {
        snprintf(d->detail, sizeof d->detail, "%zu bodies, the limit is %zu", s->n,
                 d->ctx->max_bodies);
        return imp_dec_fail(d, IMP_E_LIMIT, "has more bodies than this server accepts");
    }
    s->bodies = malloc((s->n ? s->n : 1) * sizeof *s->bodies);
    if (!s->bodies) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n; ++i) {
        imp_body *b = &s->bodies[i];
        size_t s2 = imp_dec_push_index(d, i);
        if (imp_dec_body_value(d, json_array_get(arr, i), i, b)) return -1;
        ++s->decoded;
        if (scene_shape(d, b)) return -1;
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return 0;
}

int imp_dec_scene(imp_dec *d, const imp_api_in *in, imp_scene_in *s) {
    memset(s, 0, sizeof *s);
    s->req = in->json;
    if (!s->req) {
        if (imp_scenetext_decode(in->text, in->len, d->ctx, &s->bodies, &s->n, &d->dim,
                                 &s->owned)) {
            s->decoded = s->n;
            s->req = s->owned;
        } else {
            if (!(s->owned = imp_dec_parse(d, in->text, in->len))) return -1;
            s->req = s->owned;
            if (dec_tree(d, s)) return -1;
        }
    } else if (dec_tree(d, s)) {
        return -1;
    }
    return imp_dec_unique_ids(d, s->bodies, s->n, "bodies");
}

int imp_dec_world_ref(imp_dec *d, const json_t *v, const imp_world_entry **out) {
    const char *id = json_string_value(v);
    imp_world_get_status st = IMP_WORLD_GET_UNKNOWN;
    *out = d->ctx->worlds ? imp_world_store_get_ex(d->ctx->worlds, id, &st) : NULL;
    if (!*out && st == IMP_WORLD_GET_UNAVAILABLE)
        return imp_dec_fail_at(d, "world", IMP_E_STORE_UNAVAILABLE,
                               "names a world this replica has not cached, and the world store "
                               "cannot be reached; retry later");
    if (!*out)
        return imp_dec_fail_at(d, "world", IMP_E_UNKNOWN_WORLD,
                               imp_world_id_valid(id)
                                   ? "names no stored world"
                                   : "must be a world id (64 lowercase hexadecimal digits)");
    if (d->dim && (*out)->meta.dim != d->dim) {
        imp_world_store_release(d->ctx->worlds, *out);
        *out = NULL;
        return imp_dec_fail_at(d, "world", IMP_E_DIMENSION,
                               "names a world of the other dimension than the bodies");
    }
    if (!d->dim) d->dim = (*out)->meta.dim;
    return 0;
}

int imp_dec_scene_world(imp_dec *d, const json_t *req, const imp_world_entry **out) {
    *out = NULL;
    const json_t *v = json_object_get(req, "world");
    if (!v) return 0;
    if (!json_is_string(v))
        return imp_dec_fail_at(d, "world", IMP_E_TYPE, "must be a world id (a string)");
    return imp_dec_world_ref(d, v, out);
}

int imp_scene_bodies(imp_dec *d, const imp_scene_in *s, imp_scene_body **scene) {
    *scene = malloc((s->n ? s->n : 1) * sizeof **scene);
    if (!*scene) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n; ++i) {
        const imp_body *b = &s->bodies[i];
        (*scene)[i] = (imp_scene_body){b->m,
                                       b->shape.radius,
                                       b->is_static,
                                       b->shape.type == IMP_SHAPE_SPHERE ? NULL : &b->shape,
                                       imp_filter_is_default(&b->filter) ? NULL : &b->filter,
                                       b->omega};
    }
    return 0;
}
