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
#include <string.h>

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
        if (!isfinite(x) || fabs(x) > IMP_API_MAX_MAGNITUDE)
            rc = imp_dec_fail(d, IMP_E_VALUE, "must be a finite number of magnitude <= 1e60");
        else if (x < min || (open_min && x == min) || x > max)
            rc = imp_dec_fail(d, IMP_E_VALUE, msg);
        else
            *out = x;
    }
    imp_dec_pop(d, saved);
    return rc;
}

int imp_dec_vec(imp_dec *d, const json_t *obj, const char *key, int required, imp_vec3 *out) {
    const json_t *v = json_object_get(obj, key);
    size_t saved = imp_dec_push_key(d, key);
    int rc = 0;
    if (!v) {
        if (required) rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
        imp_dec_pop(d, saved);
        return rc;
    }
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n < 2 || n > 3) {
        rc = imp_dec_fail(d, IMP_E_TYPE, "must be an array of 2 or 3 numbers");
    } else if (d->dim != 0 && (int)n != d->dim) {
        rc = imp_dec_fail(d, IMP_E_DIMENSION,
                          "has a different dimension from the request's first vector");
    } else {
        double c[3] = {0, 0, 0};
        for (size_t i = 0; i < n && rc == 0; ++i) {
            const json_t *e = json_array_get(v, i);
            size_t s2 = imp_dec_push_index(d, i);
            if (!json_is_number(e))
                rc = imp_dec_fail(d, IMP_E_TYPE, "must be a number");
            else if (!isfinite(json_number_value(e)) ||
                     fabs(json_number_value(e)) > IMP_API_MAX_MAGNITUDE)
                rc = imp_dec_fail(d, IMP_E_VALUE, "must be a finite number of magnitude <= 1e60");
            else
                c[i] = json_number_value(e);
            imp_dec_pop(d, s2);
        }
        if (rc == 0) {
            d->dim = (int)n;
            *out = imp_v3(c[0], c[1], c[2]);
        }
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
        double x = json_number_value(id);
        if (x != floor(x) || fabs(x) > 9007199254740992.0)
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

static int dec_shape(imp_dec *d, const json_t *body, imp_body *out) {
    const json_t *shape = json_object_get(body, "shape");
    if (!shape) {
        if (!json_object_get(body, "radius")) {
            size_t saved = imp_dec_push_key(d, "shape");
            int rc = imp_dec_fail(d, IMP_E_MISSING, "is required (or a bare radius)");
            imp_dec_pop(d, saved);
            return rc;
        }
        return imp_dec_number(d, body, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG, &out->radius);
    }
    size_t saved = imp_dec_push_key(d, "shape");
    int rc = imp_dec_object(d, shape);
    if (rc == 0) {
        const json_t *type = json_object_get(shape, "type");
        size_t s2 = imp_dec_push_key(d, "type");
        if (!type)
            rc = imp_dec_fail(d, IMP_E_MISSING, "is required");
        else if (!json_is_string(type))
            rc = imp_dec_fail(d, IMP_E_TYPE, "must be a string");
        else if (strcmp(json_string_value(type), "sphere") != 0)
            rc = imp_dec_fail(d, IMP_E_VALUE, "must be one of: sphere");
        imp_dec_pop(d, s2);
    }
    if (rc == 0)
        rc = imp_dec_number(d, shape, "radius", 1, 0.0, 0, INFINITY, RADIUS_MSG, &out->radius);
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
        if (dec_id(d, body, out) || dec_shape(d, body, out) ||
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
    }
    return rc;
}

int imp_errcode_status(imp_errcode code) {
    static const int status[] = {
        [IMP_E_OK] = 200,        [IMP_E_MALFORMED] = 400, [IMP_E_TYPE] = 400,
        [IMP_E_MISSING] = 400,   [IMP_E_DIMENSION] = 400, [IMP_E_VALUE] = 422,
        [IMP_E_GEOMETRY] = 422,  [IMP_E_LIMIT] = 422,     [IMP_E_NOMEM] = 500,
    };
    return (code >= 0 && (size_t)code < sizeof status / sizeof status[0]) ? status[code] : 500;
}
