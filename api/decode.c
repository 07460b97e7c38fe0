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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/budget.h"
#include "api/decode_world.h"
#include "core/hull.h"
#include "core/tolerance.h"

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
    /* decimal digits from the end (snprintf's format machinery showed in a /v1/toi profile) */
    char buf[24], *p = buf + sizeof buf;
    *--p = '\0';
    do
        *--p = (char)('0' + index % 10);
    while ((index /= 10) != 0);
    return push_raw(d, p, 0);
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

int imp_dec_fail_at(imp_dec *d, const char *key, imp_errcode code, const char *msg) {
    size_t saved = imp_dec_push_key(d, key);
    imp_dec_fail(d, code, msg);
    imp_dec_pop(d, saved);
    return -1;
}

json_t *imp_dec_parse(imp_dec *d, const char *text, size_t len) {
    json_error_t jerr;
    json_t *req =
        json_loadb(text ? text : "", len,
                   JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &jerr);
    if (req) return req;
    d->code = IMP_E_MALFORMED;
    d->msg = "is not valid JSON";
    d->err_ptr[0] = '\0';
    /* the parser's words, less what names its own options: a string holding \u0000 is
     * refused unless a flag allows it, which a client cannot set */
    const char *why = strstr(jerr.text, "\\u0000") ? "a string holds \\u0000, which is not accepted"
                      : strstr(jerr.text, "JSON_") ? "invalid JSON"
                                                   : jerr.text;
    snprintf(d->detail, sizeof d->detail, "%s (line %d, column %d)", why, jerr.line, jerr.column);
    /* the parser quotes the bytes near the error, which may be half a UTF-8 sequence: a
     * detail that is not valid UTF-8 cannot become a JSON string (the problem would be
     * lost to a 500), so anything but printable ASCII is shown as '?' */
    for (char *q = d->detail; *q; ++q)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
    return NULL;
}

/* "/a/shape/radius" -> "a.shape.radius", "/bodies/3/radius" -> "bodies[3].radius" */
static void dotted_path(const char *ptr, char *out, size_t cap) {
    size_t n = 0;
    for (const char *s = ptr; *s && n + 2 < cap;) {
        ++s; /* skip '/' */
        const char *end = strchr(s, '/');
        size_t seg = end ? (size_t)(end - s) : strlen(s);
        int numeric = seg > 0 && strspn(s, "0123456789") >= seg;
        if (numeric) {
            if (n + seg + 3 >= cap) break;
            out[n++] = '[';
            memcpy(out + n, s, seg);
            n += seg;
            out[n++] = ']';
        } else {
            if (n > 0) out[n++] = '.';
            for (size_t i = 0; i < seg && n + 2 < cap; ++i) {
                /* unescape ~0 and ~1 */
                if (s[i] == '~' && i + 1 < seg && (s[i + 1] == '0' || s[i + 1] == '1')) {
                    out[n++] = s[i + 1] == '0' ? '~' : '/';
                    ++i;
                } else {
                    out[n++] = s[i];
                }
            }
        }
        s += seg;
    }
    out[n] = '\0';
}

json_t *imp_dec_problem(const imp_dec *d) {
    char path[IMP_PTR_MAX + 16], detail[IMP_PTR_MAX + 512];
    dotted_path(d->err_ptr, path, sizeof path);
    snprintf(detail, sizeof detail, "%s %s%s%s", path[0] ? path : "request body",
             d->msg ? d->msg : "is invalid", d->detail[0] ? ": " : "", d->detail);
    return imp_problem_doc(d->code, detail, d->code == IMP_E_MALFORMED ? NULL : d->err_ptr);
}

static int listed(const char *key, const char *const *list) {
    for (; list && *list; ++list)
        if (strcmp(key, *list) == 0) return 1;
    return 0;
}

int imp_dec_members(imp_dec *d, const json_t *obj, const char *const *known,
                    const char *const *unsupported) {
    const char *key;
    const json_t *v;
    /* jansson keeps insertion order, so the first bad member in the text is the one named */
    json_object_foreach((json_t *)obj, key, v) {
        (void)v;
        if (listed(key, known)) continue;
        if (listed(key, unsupported))
            return imp_dec_fail_at(d, key, IMP_E_UNSUPPORTED,
                                   "is defined by the contract but not served by this version yet");
        return imp_dec_fail_at(d, key, IMP_E_UNKNOWN_FIELD, "is not a member of this object");
    }
    return 0;
}

int imp_dec_strict_object(imp_dec *d, const json_t *obj, const char *const *known,
                          const char *const *unsupported) {
    return imp_dec_object(d, obj) || imp_dec_members(d, obj, known, unsupported) ? -1 : 0;
}

int imp_dec_request(imp_dec *d, const json_t *req, const char *const *known,
                    const char *const *unsupported) {
    if (imp_dec_object(d, req)) return -1;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)req, key, v) {
        (void)v;
        if (strcmp(key, "time_budget_ms") == 0 || listed(key, known)) continue;
        if (listed(key, unsupported))
            return imp_dec_fail_at(d, key, IMP_E_UNSUPPORTED,
                                   "is defined by the contract but not served by this version yet");
        return imp_dec_fail_at(d, key, IMP_E_UNKNOWN_FIELD, "is not a member of this object");
    }
    double ms = 0.0;
    if (imp_dec_number(d, req, "time_budget_ms", 0, 0.0, 1, INFINITY,
                       "must be a number of milliseconds > 0", &ms))
        return -1;
    /* a caller that wants runs independent of the clock (the text-path comparison, the
     * fuzz target) turns requests' budgets off with a maximum <= 0 */
    if (ms > 0.0 && d->budget && d->ctx->max_time_budget_ms > 0) imp_budget_set(d->budget, ms);
    return 0;
}

int imp_dec_stopped(imp_dec *d, int reason, const char *progress) {
    d->stopped = reason;
    if (reason == IMP_STOP_DRAINING) {
        snprintf(d->detail, sizeof d->detail, "%s", progress);
        return imp_dec_fail(d, IMP_E_DRAINING,
                            "was stopped: this instance is shutting down; retry on another one");
    }
    if (reason == IMP_STOP_CANCELLED) return imp_dec_fail(d, IMP_E_CANCELLED, "was abandoned");
    double budget = d->budget ? d->budget->budget_ms : 0.0;
    double spent = d->budget ? imp_budget_elapsed_ms(d->budget) : 0.0;
    snprintf(d->detail, sizeof d->detail, "the %.0f ms budget ran out after %.0f ms, %s", budget,
             spent, progress);
    return imp_dec_fail(d, IMP_E_TIME_BUDGET, "did not finish within its time budget");
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
    } else if (!json_is_number(id) || json_number_value(id) != floor(json_number_value(id))) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a string or an integer");
    } else if (!imp_dec_id_number_ok(json_number_value(id))) {
        /* a double holds every integer only up to 2^53: a larger one could come back
         * as another number, so it is refused rather than answered under another id */
        rc = imp_dec_fail(d, IMP_E_TYPE,
                          "must be a string, or an integer of magnitude <= 2^53 "
                          "(9007199254740992): a larger one is not exact as a double");
    } else {
        out->id = id;
    }
    imp_dec_pop(d, saved);
    return rc;
}

static const char *const RADIUS_MSG = "must be a finite number >= 0";
static const char *const TYPES_MSG =
    "must be one of: sphere, box, polygon, polyhedron, capsule, segment, halfspace";

/* The members of each shape type, "type" included (indexed by imp_shape_type). */
static const char *const *shape_members(imp_shape_type t) {
    static const char *const SPHERE[] = {"type", "radius", NULL};
    static const char *const BOX[] = {"type", "half_extents", "rotation", NULL};
    static const char *const VERTICES[] = {"type", "vertices", NULL};
    static const char *const CAPSULE[] = {"type", "a", "b", "radius", NULL};
    static const char *const SEGMENT[] = {"type", "a", "b", NULL};
    static const char *const HALFSPACE[] = {"type", "normal", "offset", NULL};
    switch (t) {
    case IMP_SHAPE_SPHERE: return SPHERE;
    case IMP_SHAPE_BOX: return BOX;
    case IMP_SHAPE_POLYGON:
    case IMP_SHAPE_POLYHEDRON: return VERTICES;
    case IMP_SHAPE_CAPSULE: return CAPSULE;
    case IMP_SHAPE_SEGMENT: return SEGMENT;
    case IMP_SHAPE_HALFSPACE: return HALFSPACE;
    }
    return SPHERE;
}

/* Shape types of the contract that only world colliders take (api/decode_world.c). */
static const char *const WORLD_SHAPE_TYPES[] = {"mesh", "heightfield", "chain", NULL};

/*
 * Member `key` of obj as a rotation into *out (identity when absent): 2D an
 * angle in radians, 3D a quaternion [w, x, y, z], normalised (all zero is
 * 422). The other dimension's form (a number in 3D, an array in 2D) is 400:
 * mixed-dimensions when `mixed` (a body's orientation), wrong type otherwise.
 */
static int dec_turn(imp_dec *d, const json_t *obj, const char *key, int mixed, imp_quat *out) {
    *out = (imp_quat){1.0, 0.0, 0.0, 0.0};
    const json_t *r = json_object_get(obj, key);
    if (!r) return 0;
    if (d->dim == 2 && !(mixed && json_is_array(r))) {
        double angle = 0.0;
        if (imp_dec_number(d, obj, key, 1, -INFINITY, 0, INFINITY, "must be an angle in radians",
                           &angle))
            return -1;
        *out = imp_quat_from_angle(angle);
        return 0;
    }
    size_t saved = imp_dec_push_key(d, key);
    double q[4] = {0.0, 0.0, 0.0, 0.0};
    int rc;
    if (d->dim == 2)
        rc = imp_dec_fail(d, IMP_E_DIMENSION,
                          "must be an angle in radians in 2D (a quaternion is 3D)");
    else if (mixed && json_is_number(r))
        rc = imp_dec_fail(d, IMP_E_DIMENSION,
                          "must be a quaternion [w, x, y, z] in 3D (an angle is 2D)");
    else if (!json_is_array(r) || json_array_size(r) != 4)
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be a quaternion [w, x, y, z] in 3D");
    else
        rc = dec_numbers(d, r, 4, q);
    if (rc == 0 && imp_quat_normalize((imp_quat){q[0], q[1], q[2], q[3]}, out) != 0)
        rc = imp_dec_fail(d, IMP_E_GEOMETRY, "must not be all zero");
    imp_dec_pop(d, saved);
    return rc;
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
    return dec_turn(d, shape, "rotation", 0, &out->rot);
}

int imp_dec_vertices(imp_dec *d, const json_t *obj, size_t min, size_t max, const char *few,
                     imp_vec3 **out, size_t *n_out) {
    const json_t *v = json_object_get(obj, "vertices");
    size_t saved = imp_dec_push_key(d, "vertices");
    int rc = 0;
    size_t n = json_array_size(v);
    if (!v) {
        rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else if (!json_is_array(v)) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be an array of Vecs");
    } else if (n < min) {
        rc = imp_dec_fail(d, IMP_E_GEOMETRY, few);
    } else if (n > max) {
        snprintf(d->detail, sizeof d->detail, "%zu vertices, the limit is %zu", n, max);
        rc = imp_dec_fail(d, IMP_E_LIMIT, "has more vertices than this server accepts");
    } else if (!(*out = malloc(n * sizeof **out))) {
        rc = imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    } else {
        *n_out = n;
        for (size_t i = 0; i < n && rc == 0; ++i) {
            size_t s2 = imp_dec_push_index(d, i);
            rc = imp_dec_vec_value(d, json_array_get(v, i), &(*out)[i]);
            imp_dec_pop(d, s2);
        }
    }
    imp_dec_pop(d, saved);
    return rc;
}

/* vertices: an array of `min` to IMP_SHAPE_MAX_VERTICES Vecs, malloc'd into out. */
static int dec_vertices(imp_dec *d, const json_t *shape, size_t min, imp_shape *out) {
    return imp_dec_vertices(d, shape, min, IMP_SHAPE_MAX_VERTICES,
                            min == 3 ? "needs at least 3 vertices" : "needs at least 4 points",
                            &out->verts, &out->n_verts);
}

static int dec_polygon(imp_dec *d, const json_t *shape, imp_shape *out) {
    if (d->dim == 3) return imp_dec_fail_at(d, "type", IMP_E_GEOMETRY, "polygon is 2D only");
    if (dec_vertices(d, shape, 3, out)) return -1;
    if (d->dim == 3) return imp_dec_fail_at(d, "type", IMP_E_GEOMETRY, "polygon is 2D only");
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

/* 1 when imp_shape_rotate by q leaves every coordinate of s's points as it is, bit for bit:
 * the identity adds zeros to them, which changes only a -0 (to +0). */
static int turn_keeps_points(const imp_shape *s, imp_quat q) {
    if (!(q.w == 1.0 && q.x == 0.0 && q.y == 0.0 && q.z == 0.0)) return 0;
    for (size_t i = 0; i < s->n_verts; ++i) {
        const double c[3] = {s->verts[i].x, s->verts[i].y, s->verts[i].z};
        for (int k = 0; k < 3; ++k)
            if (c[k] == 0.0 && signbit(c[k])) return 0;
    }
    return 1;
}

static int dec_polyhedron(imp_dec *d, const json_t *shape, imp_shape *out) {
    if (d->dim == 2) return imp_dec_fail_at(d, "type", IMP_E_GEOMETRY, "polyhedron is 3D only");
    if (dec_vertices(d, shape, 4, out)) return -1;
    if (d->dim == 2) return imp_dec_fail_at(d, "type", IMP_E_GEOMETRY, "polyhedron is 3D only");
    /* the hull that judges the points is kept for the queries (dec_rotation) */
    imp_hull_status hs = imp_polyhedron_validate(out->verts, out->n_verts, &out->hull, NULL);
    if (hs == IMP_HULL_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    if (hs != IMP_HULL_OK)
        return imp_dec_fail_at(
            d, "vertices", IMP_E_GEOMETRY,
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
        return imp_dec_fail_at(d, "normal", IMP_E_GEOMETRY, "must not be zero-length");
    /* {n.x <= offset} is the same set after scaling */
    out->offset = out->offset / ml[0] / ml[1];
    if (!(fabs(out->offset) <= IMP_API_MAX_MAGNITUDE))
        return imp_dec_fail_at(
            d, "offset", IMP_E_VALUE,
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
            return imp_dec_fail_at(d, "shape", IMP_E_MISSING, "is required (or a bare radius)");
        return imp_dec_number(d, body, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG, &out->radius);
    }
    if (json_object_get(body, "radius"))
        return imp_dec_fail_at(d, "radius", IMP_E_VALUE,
                               "must not stand beside shape: a bare radius is the short form "
                               "of a sphere shape");
    size_t saved = imp_dec_push_key(d, "shape");
    int rc = imp_dec_object(d, shape);
    if (rc == 0) {
        const json_t *type = json_object_get(shape, "type");
        rc = -1;
        if (!type) {
            imp_dec_fail_at(d, "type", IMP_E_MISSING, "is required");
        } else if (!json_is_string(type)) {
            imp_dec_fail_at(d, "type", IMP_E_TYPE, "must be a string");
        } else {
            for (int t = IMP_SHAPE_SPHERE; t <= IMP_SHAPE_HALFSPACE; ++t)
                if (strcmp(json_string_value(type), imp_shape_type_name((imp_shape_type)t)) == 0)
                    rc = 0, out->type = (imp_shape_type)t;
            if (rc != 0 && d->world && listed(json_string_value(type), WORLD_SHAPE_TYPES)) {
                rc = imp_dec_world_collider_shape(d, shape, json_string_value(type));
                imp_dec_pop(d, saved);
                return rc;
            }
            if (rc != 0 && listed(json_string_value(type), WORLD_SHAPE_TYPES))
                imp_dec_fail_at(d, "type", IMP_E_UNSUPPORTED,
                                "is a world collider type, not served by this version yet");
            else if (rc != 0)
                imp_dec_fail_at(d, "type", IMP_E_VALUE, TYPES_MSG);
        }
    }
    if (rc == 0) rc = imp_dec_members(d, shape, shape_members(out->type), NULL);
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

static const char *const BODY_MEMBERS[] = {
    "id",           "shape",       "radius",           "position",    "velocity",
    "acceleration", "mass",        "static",           "restitution", "tangential",
    "filter",       "orientation", "angular_velocity", "inertia",     NULL};

/*
 * A body's angular_velocity (2D a number, 3D a Vec; rad/s) or inertia (2D a
 * number > 0, 3D a Vec of moments each > 0) into *out (2D: its z; absent:
 * unchanged). The other dimension's form is 400 mixed-dimensions.
 */
static int dec_axial(imp_dec *d, const json_t *body, const char *key, int positive, imp_vec3 *out) {
    static const char ANY_MSG[] = "must be a finite number";
    static const char POS_MSG[] = "must be a finite number > 0";
    const char *msg = positive ? POS_MSG : ANY_MSG;
    const json_t *v = json_object_get(body, key);
    if (!v) return 0;
    size_t saved = imp_dec_push_key(d, key);
    int rc = 0;
    if (d->dim == 2) {
        double x = 0.0;
        if (json_is_array(v))
            rc = imp_dec_fail(d, IMP_E_DIMENSION, "must be a number in 2D (a Vec is 3D)");
        else if (!json_is_number(v))
            rc = imp_dec_fail(d, IMP_E_TYPE, msg);
        else if (!isfinite(x = json_number_value(v)) || (positive && !(x > 0.0)))
            rc = imp_dec_fail(d, isfinite(x) ? IMP_E_VALUE : IMP_E_TYPE, msg);
        else
            *out = imp_v3(0.0, 0.0, x);
    } else if (json_is_number(v)) {
        rc = imp_dec_fail(d, IMP_E_DIMENSION, "must be a Vec in 3D (a number is 2D)");
    } else if ((rc = imp_dec_vec_value(d, v, out)) == 0 && positive) {
        double c[3] = {out->x, out->y, out->z};
        for (size_t i = 0; i < 3 && rc == 0; ++i)
            if (!(c[i] > 0.0)) {
                size_t s2 = imp_dec_push_index(d, i);
                rc = imp_dec_fail(d, IMP_E_VALUE, "must be > 0");
                imp_dec_pop(d, s2);
            }
    }
    imp_dec_pop(d, saved);
    return rc;
}

/* A body's orientation, angular_velocity and inertia (after its shape and position), the
 * shape turned by the orientation, and the endpoint's rule on spin and inertia. */
static int dec_rotation(imp_dec *d, const json_t *body, imp_body *out) {
    if (dec_turn(d, body, "orientation", 1, &out->orientation) ||
        dec_axial(d, body, "angular_velocity", 0, &out->omega) ||
        dec_axial(d, body, "inertia", 1, &out->inertia))
        return -1;
    int spins = !(out->omega.x == 0.0 && out->omega.y == 0.0 && out->omega.z == 0.0);
    if (spins && out->shape.type == IMP_SHAPE_HALFSPACE)
        return imp_dec_fail_at(d, "angular_velocity", IMP_E_GEOMETRY,
                               "must be absent or zero for a halfspace: it has no position to "
                               "turn about");
    if (spins && d->world)
        return imp_dec_fail_at(d, "angular_velocity", IMP_E_GEOMETRY,
                               "must be absent or zero: a world collider does not move");
    if (spins && d->spin == IMP_DEC_SPIN_REFUSED)
        return imp_dec_fail_at(d, "angular_velocity", IMP_E_UNSUPPORTED,
                               "is not served by this endpoint yet: it would change the "
                               "response (/v1/toi, /v1/overlap, /v1/respond, "
                               "/v1/scenes/predict, /v1/scenes/simulate, /v1/validate and the "
                               "world queries take rotating bodies)");
    imp_quat q = out->orientation;
    if (d->world && d->world->kind != IMP_WORLD_SHAPE) {
        if (q.w == 1.0) return 0; /* the identity: what a normalised quaternion gives for it */
        if (d->world->kind == IMP_WORLD_HEIGHTFIELD)
            return imp_dec_fail_at(d, "orientation", IMP_E_UNSUPPORTED,
                                   "is not served for a heightfield yet: its grid is "
                                   "axis-aligned");
        for (size_t i = 0; i < d->world->n_verts; ++i) /* a mesh's or chain's vertices */
            d->world->verts[i] = imp_quat_rotate(q, d->world->verts[i]);
        return 0;
    }
    /* A polyhedron's hull, built once for every query on it: dec_polyhedron's, unless the
     * turn changes a bit of the points, then built again after it. */
    imp_hull *kept = out->shape.hull;
    if (kept && !turn_keeps_points(&out->shape, q)) {
        imp_hull_destroy(kept);
        kept = NULL;
    }
    imp_shape_rotate(&out->shape, q);
    out->shape.hull = kept;
    if (imp_shape_prepare(&out->shape) != 0) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    return 0;
}

/* Member `key` of a filter as an integer in [min, max] (absent: *out unchanged). */
static int dec_filter_int(imp_dec *d, const json_t *f, const char *key, double min, double max,
                          const char *msg, double *out) {
    if (imp_dec_number(d, f, key, 0, min, 0, max, msg, out)) return -1;
    if (*out == floor(*out)) return 0;
    return imp_dec_fail_at(d, key, IMP_E_VALUE, msg);
}

int imp_dec_filter(imp_dec *d, const json_t *body, imp_filter *out) {
    static const char *const MEMBERS[] = {"category", "mask", "group", NULL};
    static const char BITS_MSG[] = "must be an integer in [0, 4294967295] (32 bits)";
    static const char GROUP_MSG[] = "must be an integer in [-2147483648, 2147483647]";
    *out = IMP_FILTER_DEFAULT;
    const json_t *f = json_object_get(body, "filter");
    if (!f) return 0;
    size_t saved = imp_dec_push_key(d, "filter");
    double category = out->category, mask = out->mask, group = out->group;
    int rc = imp_dec_strict_object(d, f, MEMBERS, NULL) ||
                     dec_filter_int(d, f, "category", 0.0, 4294967295.0, BITS_MSG, &category) ||
                     dec_filter_int(d, f, "mask", 0.0, 4294967295.0, BITS_MSG, &mask) ||
                     dec_filter_int(d, f, "group", -2147483648.0, 2147483647.0, GROUP_MSG, &group)
                 ? -1
                 : 0;
    imp_dec_pop(d, saved);
    if (rc == 0) *out = (imp_filter){(uint32_t)category, (uint32_t)mask, (int32_t)group};
    return rc;
}

int imp_dec_body_value(imp_dec *d, const json_t *body, size_t index, imp_body *out) {
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->index = index;
    out->mass = 1.0;
    out->restitution = 1.0;
    out->tangential = 1.0;
    out->filter = IMP_FILTER_DEFAULT;
    out->orientation = (imp_quat){1.0, 0.0, 0.0, 0.0};
    if (!body) {
        rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
    } else if ((rc = imp_dec_strict_object(d, body, BODY_MEMBERS, NULL)) == 0) {
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
                           &out->tangential) ||
            imp_dec_filter(d, body, &out->filter) || dec_rotation(d, body, out))
            rc = -1;
        else if (out->shape.type == IMP_SHAPE_HALFSPACE && !out->is_static)
            rc = imp_dec_fail_at(d, "static", IMP_E_GEOMETRY, "must be true for a halfspace");
    }
    if (rc != 0) imp_body_free(out);
    return rc;
}

void imp_body_free(imp_body *b) {
    if (b) imp_shape_free(&b->shape);
}

void imp_bodies_free(imp_body *bodies, size_t n) {
    for (size_t i = 0; bodies && i < n; ++i)
        imp_body_free(&bodies[i]);
    free(bodies);
}

/* An id's hash: FNV-1a over its kind and its text or number bits. */
static uint64_t id_hash(const json_t *id) {
    uint64_t h = 1469598103934665603ull;
    unsigned char buf[sizeof(double)];
    const unsigned char *p;
    size_t n;
    if (json_is_string(id)) {
        p = (const unsigned char *)json_string_value(id);
        n = json_string_length(id);
        h = (h ^ 's') * 1099511628211ull;
    } else {
        double x = json_number_value(id) + 0.0; /* -0 and 0 are one id */
        memcpy(buf, &x, sizeof x);
        p = buf;
        n = sizeof buf;
    }
    for (size_t i = 0; i < n; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Orders ids of one kind: strings by length then bytes, numbers by value. */
static int id_cmp(const json_t *a, const json_t *b) {
    if (json_is_string(a) != json_is_string(b)) return json_is_string(a) ? 1 : -1;
    if (json_is_string(a)) {
        size_t la = json_string_length(a), lb = json_string_length(b);
        if (la != lb) return la < lb ? -1 : 1;
        return memcmp(json_string_value(a), json_string_value(b), la);
    }
    double x = json_number_value(a), y = json_number_value(b);
    return x < y ? -1 : x > y;
}

typedef struct id_slot {
    uint64_t hash; /* compared first: most pairs differ there */
    const json_t *id;
    size_t index;
} id_slot;

static int slot_cmp(const void *pa, const void *pb) {
    const id_slot *a = pa, *b = pb;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    int c = id_cmp(a->id, b->id);
    if (c != 0) return c < 0 ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

int imp_dec_unique_ids(imp_dec *d, const imp_body *bodies, size_t n, const char *key) {
    size_t m = 0;
    for (size_t i = 0; i < n; ++i)
        m += bodies[i].id != NULL;
    if (m < 2) return 0;
    id_slot *slots = malloc(m * sizeof *slots);
    if (!slots) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    m = 0;
    for (size_t i = 0; i < n; ++i)
        if (bodies[i].id) slots[m++] = (id_slot){id_hash(bodies[i].id), bodies[i].id, i};
    /* equal ids end up adjacent, in request order: the second of each run repeats the
     * first, and the earliest such second body is the one named */
    qsort(slots, m, sizeof *slots, slot_cmp);
    size_t worst = SIZE_MAX, first = SIZE_MAX;
    for (size_t j = 1; j < m; ++j)
        if (slots[j].index < worst && slots[j].hash == slots[j - 1].hash &&
            id_cmp(slots[j].id, slots[j - 1].id) == 0 &&
            (j < 2 || slots[j - 2].hash != slots[j].hash ||
             id_cmp(slots[j - 2].id, slots[j].id) != 0)) {
            worst = slots[j].index;
            first = slots[j - 1].index;
        }
    free(slots);
    if (worst == SIZE_MAX) return 0;
    size_t saved = imp_dec_push_key(d, key);
    imp_dec_push_index(d, worst);
    snprintf(d->detail, sizeof d->detail, "%s[%zu] has it too; results could not be told apart",
             key, first);
    imp_dec_fail_at(d, "id", IMP_E_DUPLICATE_ID, "repeats the id of another body");
    imp_dec_pop(d, saved);
    return -1;
}

int imp_dec_turns(const imp_body *b) {
    return b->shape.type != IMP_SHAPE_SPHERE &&
           !(b->omega.x == 0.0 && b->omega.y == 0.0 && b->omega.z == 0.0);
}

int imp_dec_turn_ok(imp_dec *d, const imp_body *b, double horizon, const char *window) {
    if (!imp_dec_turns(b) || imp_len(b->omega) * horizon <= IMP_ROT_MAX_ANGLE) return 0;
    snprintf(d->detail, sizeof d->detail,
             "the body would turn more than %.0f radians within %s, past which a double cannot "
             "place it to 1e-9 of the scale",
             IMP_ROT_MAX_ANGLE, window);
    return imp_dec_fail_at(d, "angular_velocity", IMP_E_GEOMETRY,
                           "is too fast for a certified contact time");
}

int imp_dec_body_inertia(imp_dec *d, const json_t *body, const imp_body *b, imp_mat3 *inertia,
                         imp_mat3 *inv) {
    memset(inertia, 0, sizeof *inertia);
    memset(inv, 0, sizeof *inv);
    if (b->is_static) return 0; /* infinite inertia: never turned by an impulse */
    imp_vec3 mo = b->inertia;
    if (json_object_get(body, "inertia")) {
        if (d->dim == 2) {
            inertia->m[8] = mo.z;
            inv->m[8] = 1.0 / mo.z;
        } else {
            *inertia = imp_mat3_principal(b->orientation, mo);
            *inv = imp_mat3_principal(b->orientation, imp_v3(1.0 / mo.x, 1.0 / mo.y, 1.0 / mo.z));
        }
        if (isfinite(inv->m[8]) && isfinite(inv->m[0])) return 0;
    } else if (b->shape.type == IMP_SHAPE_SPHERE && b->shape.radius == 0.0) {
        return 0; /* a point: no moment, and no lever about its own centre; it never turns */
    } else {
        imp_inertia_status st = imp_inertia_shape(&b->shape, d->dim, b->mass, inertia);
        if (st == IMP_INERTIA_NOMEM) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
        if (st == IMP_INERTIA_OK && imp_mat3_inverse_spd(inertia, d->dim, inv) == 0) return 0;
    }
    return imp_dec_fail_at(d, "inertia", IMP_E_GEOMETRY,
                           "is required for this body: its shape has no volume (a thin rod in "
                           "3D) or its moments are too far apart to invert, so a uniform solid "
                           "gives no usable inertia");
}

int imp_dec_turn_within(imp_dec *d, const imp_body *bodies, size_t n, const char *key,
                        double horizon, const char *window) {
    for (size_t i = 0; i < n; ++i) {
        size_t s1 = imp_dec_push_key(d, key), s2 = imp_dec_push_index(d, i);
        int rc = imp_dec_turn_ok(d, &bodies[i], horizon, window);
        imp_dec_pop(d, s2);
        imp_dec_pop(d, s1);
        if (rc) return -1;
    }
    return 0;
}
