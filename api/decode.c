/*
 * decode.c - request validation shared by every endpoint.
 *
 * DESIGN
 * What: turns jansson values into core inputs, or into a precise error:
 * code, constant message and the JSON Pointer (RFC 6901) of the value at
 * fault.
 * How: a pointer stack in a fixed buffer follows the descent (push a key
 * or index, pop on the way back), so an error records where it happened
 * without allocating. The request's dimension is fixed by the first vector
 * decoded; any later vector of the other length is a 400 at its pointer.
 * Why: the contract promises a pointer for every field error, and core
 * asserts its preconditions, so every number is range-checked here.
 */
#include "api/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hull.h"

void imp_dec_init(imp_dec *d, const imp_api_ctx *ctx) {
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
}

static size_t push_raw(imp_dec *d, const char *s, int escape) {
    size_t old = d->len;
    if (d->len + 1 >= IMP_PTR_MAX) return old;
    d->ptr[d->len++] = '/';
    for (; *s && d->len + 2 < IMP_PTR_MAX; ++s) {
        if (escape && (*s == '~' || *s == '/')) {
            d->ptr[d->len++] = '~';
            d->ptr[d->len++] = *s == '~' ? '0' : '1';
        } else {
            d->ptr[d->len++] = *s;
        }
    }
    d->ptr[d->len] = '\0';
    return old;
}

size_t imp_dec_push_key(imp_dec *d, const char *key) { return push_raw(d, key, 1); }

size_t imp_dec_push_index(imp_dec *d, size_t index) {
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", index);
    return push_raw(d, buf, 0);
}

void imp_dec_pop(imp_dec *d, size_t len) {
    d->len = len;
    d->ptr[len] = '\0';
}

int imp_dec_fail(imp_dec *d, imp_errcode code, const char *msg) {
    d->code = code;
    d->msg = msg;
    memcpy(d->err_ptr, d->ptr, d->len + 1);
    return -1;
}

int imp_dec_object(imp_dec *d, const json_t *v) {
    if (!json_is_object(v)) return imp_dec_fail(d, IMP_E_TYPE, "must be an object");
    return 0;
}

int imp_dec_number(imp_dec *d, const json_t *obj, const char *key, int required, double min,
                   int open_min, double max, const char *msg, double *out) {
    const json_t *v = json_object_get(obj, key);
    size_t saved = imp_dec_push_key(d, key);
    int rc = 0;
    if (!v) {
        if (required) rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else if (!json_is_number(v)) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a number");
    } else {
        double x = json_number_value(v);
        if (!imp_dec_magnitude_ok(x))
            rc = imp_dec_fail(d, IMP_E_VALUE, "must be a finite number of magnitude <= 1e60");
        else if (!imp_dec_range_ok(x, min, open_min, max))
            rc = imp_dec_fail(d, IMP_E_VALUE, msg);
        else
            *out = x;
    }
    imp_dec_pop(d, saved);
    return rc;
}

/* The n elements of array v as finite numbers of magnitude <= 1e60 into out. */
static int dec_numbers(imp_dec *d, const json_t *v, size_t n, double *out) {
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; ++i) {
        const json_t *e = json_array_get(v, i);
        size_t s2 = imp_dec_push_index(d, i);
        if (!json_is_number(e))
            rc = imp_dec_fail(d, IMP_E_TYPE, "must be a number");
        else if (!imp_dec_magnitude_ok(json_number_value(e)))
            rc = imp_dec_fail(d, IMP_E_VALUE, "must be a finite number of magnitude <= 1e60");
        else
            out[i] = json_number_value(e);
        imp_dec_pop(d, s2);
    }
    return rc;
}

int imp_dec_vec_value(imp_dec *d, const json_t *v, imp_vec3 *out) {
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n < 2 || n > 3)
        return imp_dec_fail(d, IMP_E_TYPE, "must be an array of 2 or 3 numbers");
    if (d->dim != 0 && (int)n != d->dim)
        return imp_dec_fail(d, IMP_E_DIMENSION,
                            "has a different dimension from the request's first vector");
    double c[3] = {0, 0, 0};
    int rc = dec_numbers(d, v, n, c);
    if (rc == 0) {
        d->dim = (int)n;
        *out = imp_v3(c[0], c[1], c[2]);
    }
    return rc;
}

int imp_dec_vec(imp_dec *d, const json_t *obj, const char *key, int required, imp_vec3 *out) {
    const json_t *v = json_object_get(obj, key);
    size_t saved = imp_dec_push_key(d, key);
    int rc = 0;
    if (!v) {
        if (required) rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else {
        rc = imp_dec_vec_value(d, v, out);
    }
    imp_dec_pop(d, saved);
    return rc;
}

int imp_dec_bool(imp_dec *d, const json_t *obj, const char *key, int *out) {
    const json_t *v = json_object_get(obj, key);
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, key);
    int rc = 0;
    if (!json_is_boolean(v))
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be true or false");
    else
        *out = json_is_true(v);
    imp_dec_pop(d, saved);
    return rc;
}

static int dec_id(imp_dec *d, const json_t *body, imp_body *out) {
    const json_t *id = json_object_get(body, "id");
    out->id = NULL;
    if (!id) return 0;
    size_t saved = imp_dec_push_key(d, "id");
    int rc = 0;
    if (json_is_string(id)) {
        out->id = id;
    } else if (json_is_number(id)) {
        if (!imp_dec_id_number_ok(json_number_value(id)))
            rc = imp_dec_fail(d, IMP_E_TYPE, "must be a string or an integer");
        else
            out->id = id;
    } else {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a string or an integer");
    }
    imp_dec_pop(d, saved);
    return rc;
}

static const char *const RADIUS_MSG = "must be a finite number >= 0";
static const char *const TYPES_MSG =
    "must be one of: sphere, box, polygon, polyhedron, capsule, segment, halfspace";

/* Fails at member `key` (pushed and popped around the failure). */
static int fail_at(imp_dec *d, const char *key, imp_errcode code, const char *msg) {
    size_t saved = imp_dec_push_key(d, key);
    imp_dec_fail(d, code, msg);
    imp_dec_pop(d, saved);
    return -1;
}

/* box: half_extents (each > 0) and an optional rotation: an angle in 2D, a
 * quaternion [w, x, y, z] in 3D (normalised; all zero is 422). */
static int dec_box(imp_dec *d, const json_t *shape, imp_shape *out) {
    if (imp_dec_vec(d, shape, "half_extents", 1, &out->half)) return -1;
    double h[3] = {out->half.x, out->half.y, out->half.z};
    for (int i = 0; i < d->dim; ++i) {
        if (!(h[i] > 0.0)) {
            size_t saved = imp_dec_push_key(d, "half_extents");
            size_t s2 = imp_dec_push_index(d, (size_t)i);
            imp_dec_fail(d, IMP_E_VALUE, "must be > 0");
            imp_dec_pop(d, s2);
            imp_dec_pop(d, saved);
            return -1;
        }
    }
    out->rot = (imp_quat){1.0, 0.0, 0.0, 0.0};
    const json_t *r = json_object_get(shape, "rotation");
    if (!r) return 0;
    if (d->dim == 2) {
        double angle = 0.0;
        if (imp_dec_number(d, shape, "rotation", 1, -INFINITY, 0, INFINITY,
                           "must be an angle in radians", &angle))
            return -1;
        out->rot = imp_quat_from_angle(angle);
        return 0;
    }
    size_t saved = imp_dec_push_key(d, "rotation");
    double q[4];
    int rc;
    if (!json_is_array(r) || json_array_size(r) != 4)
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a quaternion [w, x, y, z] in 3D");
    else
        rc = dec_numbers(d, r, 4, q);
    if (rc == 0 && imp_quat_normalize((imp_quat){q[0], q[1], q[2], q[3]}, &out->rot) != 0)
        rc = imp_dec_fail(d, IMP_E_GEOMETRY, "must not be all zero");
    imp_dec_pop(d, saved);
    return rc;
}

/* vertices: an array of `min` to IMP_SHAPE_MAX_VERTICES Vecs, malloc'd into out. */
static int dec_vertices(imp_dec *d, const json_t *shape, size_t min, imp_shape *out) {
    const json_t *v = json_object_get(shape, "vertices");
    size_t saved = imp_dec_push_key(d, "vertices");
    int rc = 0;
    size_t n = json_array_size(v);
    if (!v) {
        rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else if (!json_is_array(v)) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be an array of Vecs");
    } else if (n < min) {
        rc = imp_dec_fail(d, IMP_E_GEOMETRY,
                          min == 3 ? "needs at least 3 vertices" : "needs at least 4 points");
    } else if (n > IMP_SHAPE_MAX_VERTICES) {
        snprintf(d->detail, sizeof d->detail, "%zu vertices, the limit is %d", n,
                 IMP_SHAPE_MAX_VERTICES);
        rc = imp_dec_fail(d, IMP_E_LIMIT, "has more vertices than this server accepts");
    } else if (!(out->verts = malloc(n * sizeof *out->verts))) {
        rc = imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    } else {
        out->n_verts = n;
        for (size_t i = 0; i < n && rc == 0; ++i) {
            size_t s2 = imp_dec_push_index(d, i);
            rc = imp_dec_vec_value(d, json_array_get(v, i), &out->verts[i]);
            imp_dec_pop(d, s2);
        }
    }
    imp_dec_pop(d, saved);
    return rc;
}

static int dec_polygon(imp_dec *d, const json_t *shape, imp_shape *out) {
    if (d->dim == 3) return fail_at(d, "type", IMP_E_GEOMETRY, "polygon is 2D only");
    if (dec_vertices(d, shape, 3, out)) return -1;
    if (d->dim == 3) return fail_at(d, "type", IMP_E_GEOMETRY, "polygon is 2D only");
    size_t bad;
    imp_polygon_status st = imp_polygon_normalize(out->verts, out->n_verts, &bad);
    if (st == IMP_POLYGON_OK) return 0;
    size_t saved = imp_dec_push_key(d, "vertices");
    if (st != IMP_POLYGON_FLAT) imp_dec_push_index(d, bad);
    imp_dec_fail(d, IMP_E_GEOMETRY,
                 st == IMP_POLYGON_REPEATED ? "repeats the vertex before it"
                 : st == IMP_POLYGON_FLAT   ? "has no area: all vertices lie on one line"
                                            : "makes the polygon non-convex: the turn flips here");
    imp_dec_pop(d, saved);
    return -1;
}

static int dec_polyhedron(imp_dec *d, const json_t *shape, imp_shape *out) {
    if (d->dim == 2) return fail_at(d, "type", IMP_E_GEOMETRY, "polyhedron is 3D only");
    if (dec_vertices(d, shape, 4, out)) return -1;
    if (d->dim == 2) return fail_at(d, "type", IMP_E_GEOMETRY, "polyhedron is 3D only");
    /* the hull the solvers build is the judge: a polyhedron is accepted only if
     * it has one (imp_polyhedron_check alone measures flatness from other planes) */
    imp_hull *hull = NULL;
    imp_hull_status hs = imp_polyhedron_check(out->verts, out->n_verts) != 0
                             ? IMP_HULL_DEGENERATE
                             : imp_hull_build(out->verts, out->n_verts, &hull, NULL);
    imp_hull_destroy(hull);
    if (hs == IMP_HULL_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (hs != IMP_HULL_OK)
        return fail_at(d, "vertices", IMP_E_GEOMETRY,
                       "must hold 4 points not in one plane (the shape is their convex hull)");
    return 0;
}

static int dec_halfspace(imp_dec *d, const json_t *shape, imp_shape *out) {
    imp_vec3 n;
    if (imp_dec_vec(d, shape, "normal", 1, &n) ||
        imp_dec_number(d, shape, "offset", 1, -INFINITY, 0, INFINITY, "must be a finite number",
                       &out->offset))
        return -1;
    /* scaled first so that neither tiny nor huge normals lose the direction */
    double ml[2];
    if (imp_unit_scaled(n, &out->normal, ml))
        return fail_at(d, "normal", IMP_E_GEOMETRY, "must not be zero-length");
    /* {n.x <= offset} is the same set after scaling */
    out->offset = out->offset / ml[0] / ml[1];
    if (!(fabs(out->offset) <= IMP_API_MAX_MAGNITUDE))
        return fail_at(d, "offset", IMP_E_VALUE,
                       "puts the boundary farther than 1e60 from the origin once the normal is "
                       "unit length (the normal is very short)");
    return 0;
}

static int dec_shape_fields(imp_dec *d, const json_t *shape, imp_shape *out) {
    switch (out->type) {
    case IMP_SHAPE_SPHERE:
        return imp_dec_number(d, shape, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG, &out->radius);
    case IMP_SHAPE_BOX: return dec_box(d, shape, out);
    case IMP_SHAPE_POLYGON: return dec_polygon(d, shape, out);
    case IMP_SHAPE_POLYHEDRON: return dec_polyhedron(d, shape, out);
    case IMP_SHAPE_CAPSULE:
        return imp_dec_vec(d, shape, "a", 1, &out->a) || imp_dec_vec(d, shape, "b", 1, &out->b) ||
                       imp_dec_number(d, shape, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG,
                                      &out->radius)
                   ? -1
                   : 0;
    case IMP_SHAPE_SEGMENT:
        return imp_dec_vec(d, shape, "a", 1, &out->a) || imp_dec_vec(d, shape, "b", 1, &out->b) ? -1
                                                                                                : 0;
    case IMP_SHAPE_HALFSPACE: return dec_halfspace(d, shape, out);
    }
    return imp_dec_fail(d, IMP_E_VALUE, TYPES_MSG);
}

static int dec_shape(imp_dec *d, const json_t *body, imp_shape *out) {
    const json_t *shape = json_object_get(body, "shape");
    out->type = IMP_SHAPE_SPHERE;
    if (!shape) {
        if (!json_object_get(body, "radius"))
            return fail_at(d, "shape", IMP_E_MISSING, "is required (or a bare radius)");
        return imp_dec_number(d, body, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG, &out->radius);
    }
    size_t saved = imp_dec_push_key(d, "shape");
    int rc = imp_dec_object(d, shape);
    if (rc == 0) {
        const json_t *type = json_object_get(shape, "type");
        rc = -1;
        if (!type) {
            fail_at(d, "type", IMP_E_MISSING, "is required");
        } else if (!json_is_string(type)) {
            fail_at(d, "type", IMP_E_TYPE, "must be a string");
        } else {
            for (int t = IMP_SHAPE_SPHERE; t <= IMP_SHAPE_HALFSPACE; ++t)
                if (strcmp(json_string_value(type), imp_shape_type_name((imp_shape_type)t)) == 0)
                    rc = 0, out->type = (imp_shape_type)t;
            if (rc != 0) fail_at(d, "type", IMP_E_VALUE, TYPES_MSG);
        }
    }
    if (rc == 0) rc = dec_shape_fields(d, shape, out);
    imp_dec_pop(d, saved);
    return rc;
}

int imp_dec_body(imp_dec *d, const json_t *obj, const char *key, size_t index, imp_body *out) {
    size_t saved = imp_dec_push_key(d, key);
    int rc = imp_dec_body_value(d, json_object_get(obj, key), index, out);
    imp_dec_pop(d, saved);
    return rc;
}

int imp_dec_body_value(imp_dec *d, const json_t *body, size_t index, imp_body *out) {
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->index = index;
    out->mass = 1.0;
    out->restitution = 1.0;
    out->tangential = 1.0;
    if (!body) {
        rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else if ((rc = imp_dec_object(d, body)) == 0) {
        if (dec_id(d, body, out) || dec_shape(d, body, &out->shape) ||
            imp_dec_vec(d, body, "position", 1, &out->m.p) ||
            imp_dec_vec(d, body, "velocity", 0, &out->m.v) ||
            imp_dec_vec(d, body, "acceleration", 0, &out->m.a) ||
            imp_dec_number(d, body, "mass", 0, 0.0, 1, INFINITY, "must be a finite number > 0",
                           &out->mass) ||
            imp_dec_bool(d, body, "static", &out->is_static) ||
            imp_dec_number(d, body, "restitution", 0, 0.0, 0, 1.0, "must be a number in [0, 1]",
                           &out->restitution) ||
            imp_dec_number(d, body, "tangential", 0, 0.0, 0, 1.0, "must be a number in [0, 1]",
                           &out->tangential))
            rc = -1;
        else if (out->shape.type == IMP_SHAPE_HALFSPACE && !out->is_static)
            rc = fail_at(d, "static", IMP_E_GEOMETRY, "must be true for a halfspace");
    }
    if (rc != 0) imp_body_free(out);
    return rc;
}

void imp_body_free(imp_body *b) {
    if (b) imp_shape_free(&b->shape);
}

int imp_errcode_status(imp_errcode code) {
    static const int status[] = {
        [IMP_E_OK] = 200,       [IMP_E_MALFORMED] = 400, [IMP_E_TYPE] = 400,
        [IMP_E_MISSING] = 400,  [IMP_E_DIMENSION] = 400, [IMP_E_VALUE] = 422,
        [IMP_E_GEOMETRY] = 422, [IMP_E_LIMIT] = 422,     [IMP_E_NOMEM] = 500,
    };
    return (code >= 0 && (size_t)code < sizeof status / sizeof status[0]) ? status[code] : 500;
}
