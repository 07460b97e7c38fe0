/*
 * decode_world.c - mesh, heightfield and chain shapes of world colliders.
 *
 * DESIGN
 * What: the three shapes the contract allows only in a World, decoded and
 * checked before core's imp_world_build, which asserts its preconditions.
 * How: decode.c's shape decoder hands a shape of one of these types here
 * when the caller has set d->world (only POST /v1/worlds does); anywhere
 * else they stay 422 unsupported-field. Zero-area triangles are not an
 * error: core skips and counts them.
 * Why a file of its own: the world shapes are large arrays with their own
 * error pointers (an index inside a triangle), unlike the small shapes of
 * decode.c.
 */
#include "api/decode_world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_dec_world_shape_free(imp_dec_world_shape *w) {
    if (!w) return;
    free(w->verts);
    free(w->tris);
    free(w->heights);
    memset(w, 0, sizeof *w);
}

static int fail_index(imp_dec *d, const char *key, size_t i, imp_errcode code, const char *msg) {
    size_t saved = imp_dec_push_key(d, key);
    imp_dec_push_index(d, i);
    imp_dec_fail(d, code, msg);
    imp_dec_pop(d, saved);
    return -1;
}

/* A whole number in [min, max] at member key (required). */
static int dec_count(imp_dec *d, const json_t *obj, const char *key, double min, double max,
                     const char *msg, size_t *out) {
    double x = 0.0;
    if (imp_dec_number(d, obj, key, 1, min, 0, max, msg, &x)) return -1;
    if (x != floor(x)) return imp_dec_fail_at(d, key, IMP_E_VALUE, msg);
    *out = (size_t)x;
    return 0;
}

static int over_limit(imp_dec *d, const char *key, size_t triangles) {
    size_t limit = d->ctx->max_world_triangles;
    if (triangles <= limit) return 0;
    snprintf(d->detail, sizeof d->detail, "%zu triangles, the limit is %zu (--max-world-triangles)",
             triangles, limit);
    return imp_dec_fail_at(d, key, IMP_E_LIMIT, "has more triangles than this server accepts");
}

/* vertices: an array of at least `min` Vecs of the request's dimension. */
static int dec_verts(imp_dec *d, const json_t *shape, size_t min, imp_dec_world_shape *w) {
    return imp_dec_vertices(d, shape, min, UINT32_MAX,
                            min == 2 ? "needs at least 2 vertices" : "needs at least 3 vertices",
                            &w->verts, &w->n_verts);
}

static int dec_triangles(imp_dec *d, const json_t *shape, imp_dec_world_shape *w) {
    const json_t *t = json_object_get(shape, "triangles");
    if (!t) return imp_dec_fail_at(d, "triangles", IMP_E_MISSING, "is required");
    if (!json_is_array(t))
        return imp_dec_fail_at(d, "triangles", IMP_E_TYPE,
                               "must be an array of [i, j, k] vertex indices");
    size_t n = json_array_size(t);
    if (over_limit(d, "triangles", n)) return -1;
    if (n && !(w->tris = malloc(3 * n * sizeof *w->tris)))
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    w->n_tris = w->triangles = n;
    size_t saved = imp_dec_push_key(d, "triangles");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; ++i) {
        const json_t *tri = json_array_get(t, i);
        size_t s2 = imp_dec_push_index(d, i);
        if (!json_is_array(tri) || json_array_size(tri) != 3) {
            rc = imp_dec_fail(d, IMP_E_TYPE, "must be [i, j, k]: three vertex indices");
        } else {
            for (size_t k = 0; k < 3 && rc == 0; ++k) {
                const json_t *x = json_array_get(tri, k);
                double v = json_number_value(x);
                if (!json_is_number(x)) {
                    size_t s3 = imp_dec_push_index(d, k);
                    rc = imp_dec_fail(d, IMP_E_TYPE, "must be a vertex index (an integer)");
                    imp_dec_pop(d, s3);
                } else if (!(v >= 0 && v < (double)w->n_verts && v == floor(v))) {
                    size_t s3 = imp_dec_push_index(d, k);
                    snprintf(d->detail, sizeof d->detail, "the mesh has %zu vertices", w->n_verts);
                    rc = imp_dec_fail(d, IMP_E_VALUE,
                                      "is not the index of a vertex (an integer from 0 to the "
                                      "number of vertices - 1)");
                    imp_dec_pop(d, s3);
                } else {
                    w->tris[3 * i + k] = (uint32_t)v;
                }
            }
        }
        imp_dec_pop(d, s2);
    }
    imp_dec_pop(d, saved);
    return rc;
}

static int need_dim(imp_dec *d, int dim, const char *msg) {
    if (d->dim == 0) d->dim = dim;
    return d->dim == dim ? 0 : imp_dec_fail_at(d, "type", IMP_E_GEOMETRY, msg);
}

static int dec_mesh(imp_dec *d, const json_t *shape, imp_dec_world_shape *w) {
    static const char *const MEMBERS[] = {"type", "vertices", "triangles", "one_sided", NULL};
    static const char DIM_MSG[] = "mesh is 3D only";
    w->kind = IMP_WORLD_MESH;
    if (imp_dec_members(d, shape, MEMBERS, NULL) || need_dim(d, 3, DIM_MSG) ||
        dec_verts(d, shape, 3, w) || need_dim(d, 3, DIM_MSG) || dec_triangles(d, shape, w))
        return -1;
    return imp_dec_bool(d, shape, "one_sided", &w->one_sided);
}

static int dec_heightfield(imp_dec *d, const json_t *shape, imp_dec_world_shape *w) {
    static const char *const MEMBERS[] = {"type",    "rows",      "cols", "spacing",
                                          "heights", "one_sided", NULL};
    static const char COUNT_MSG[] = "must be a whole number >= 2";
    w->kind = IMP_WORLD_HEIGHTFIELD;
    if (imp_dec_members(d, shape, MEMBERS, NULL) || need_dim(d, 3, "heightfield is 3D only") ||
        dec_count(d, shape, "rows", 2.0, 4294967295.0, COUNT_MSG, &w->rows) ||
        dec_count(d, shape, "cols", 2.0, 4294967295.0, COUNT_MSG, &w->cols) ||
        imp_dec_bool(d, shape, "one_sided", &w->one_sided))
        return -1;
    const json_t *sp = json_object_get(shape, "spacing");
    if (!sp) return imp_dec_fail_at(d, "spacing", IMP_E_MISSING, "is required");
    if (!json_is_array(sp) || json_array_size(sp) != 2)
        return imp_dec_fail_at(d, "spacing", IMP_E_TYPE, "must be [dx, dz]: two numbers");
    double s[2];
    for (size_t i = 0; i < 2; ++i) {
        const json_t *x = json_array_get(sp, i);
        if (!json_is_number(x)) return fail_index(d, "spacing", i, IMP_E_TYPE, "must be a number");
        s[i] = json_number_value(x);
        if (!(s[i] > 0.0) || !imp_dec_magnitude_ok(s[i]))
            return fail_index(d, "spacing", i, IMP_E_VALUE, "must be a finite number > 0");
    }
    w->dx = s[0];
    w->dz = s[1];
    double cells = (double)(w->rows - 1) * (double)(w->cols - 1);
    if (over_limit(d, "rows", cells * 2.0 > (double)SIZE_MAX / 2 ? SIZE_MAX : (size_t)cells * 2))
        return -1;
    w->triangles = 2 * (w->rows - 1) * (w->cols - 1);
    const json_t *h = json_object_get(shape, "heights");
    if (!h) return imp_dec_fail_at(d, "heights", IMP_E_MISSING, "is required");
    if (!json_is_array(h))
        return imp_dec_fail_at(d, "heights", IMP_E_TYPE, "must be an array of numbers");
    size_t n = json_array_size(h);
    if ((double)n != (double)w->rows * (double)w->cols || n != w->rows * w->cols) {
        snprintf(d->detail, sizeof d->detail, "%zu numbers for %zu rows and %zu columns", n,
                 w->rows, w->cols);
        return imp_dec_fail_at(d, "heights", IMP_E_GEOMETRY,
                               "must hold rows * cols numbers (row-major)");
    }
    if (!(w->heights = malloc(n * sizeof *w->heights)))
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; ++i) {
        const json_t *x = json_array_get(h, i);
        if (!json_is_number(x)) return fail_index(d, "heights", i, IMP_E_TYPE, "must be a number");
        w->heights[i] = json_number_value(x);
        if (!imp_dec_magnitude_ok(w->heights[i]))
            return fail_index(d, "heights", i, IMP_E_VALUE,
                              "must be a finite number of magnitude <= 1e60");
    }
    return 0;
}

static int dec_chain(imp_dec *d, const json_t *shape, imp_dec_world_shape *w) {
    static const char *const MEMBERS[] = {"type", "vertices", "loop", "one_sided", NULL};
    static const char DIM_MSG[] = "chain is 2D only";
    w->kind = IMP_WORLD_CHAIN;
    if (imp_dec_members(d, shape, MEMBERS, NULL) || need_dim(d, 2, DIM_MSG) ||
        dec_verts(d, shape, 2, w) || need_dim(d, 2, DIM_MSG) ||
        imp_dec_bool(d, shape, "loop", &w->loop))
        return -1;
    return imp_dec_bool(d, shape, "one_sided", &w->one_sided);
}

int imp_dec_world_collider_shape(imp_dec *d, const json_t *shape, const char *type) {
    imp_dec_world_shape *w = d->world;
    imp_dec_world_shape_free(w);
    int rc = strcmp(type, "mesh") == 0          ? dec_mesh(d, shape, w)
             : strcmp(type, "heightfield") == 0 ? dec_heightfield(d, shape, w)
                                                : dec_chain(d, shape, w);
    if (rc) imp_dec_world_shape_free(w);
    return rc;
}
