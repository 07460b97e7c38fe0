/*
 * ep_toi.c - POST /v1/toi: time of impact of two moving bodies.
 */
#include <math.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"
#include "core/toi.h"
#include "core/toi_halfspace.h"
#include "core/toi_polygon.h"
#include "core/toi_rounded.h"

static const char *state_name(imp_toi_state s) {
    switch (s) {
    case IMP_TOI_HIT: return "hit";
    case IMP_TOI_OVERLAPPING: return "overlapping";
    default: return "none";
    }
}

static int is_polygon_2d(const imp_body *b, int dim) {
    return dim == 2 && (b->shape.type == IMP_SHAPE_BOX || b->shape.type == IMP_SHAPE_POLYGON);
}

/* Shapes /v1/toi solves with another in this version: spheres in 2D and 3D,
 * every shape in 2D; and any shape with a halfspace. */
static int solvable(const imp_body *b, const imp_body *other, int dim) {
    int hs = b->shape.type == IMP_SHAPE_HALFSPACE, other_hs = other->shape.type == IMP_SHAPE_HALFSPACE;
    if (hs || other_hs) return !(hs && other_hs);
    return b->shape.type == IMP_SHAPE_SPHERE || dim == 2;
}

/* Else 422 at the type of the first body that does not fit. */
static int supported(imp_dec *d, const imp_body *a, const imp_body *b) {
    int dim = d->dim;
    if (solvable(a, b, dim) && solvable(b, a, dim)) return 0;
    size_t saved = imp_dec_push_key(d, solvable(a, b, dim) ? "b" : "a");
    size_t s2 = imp_dec_push_key(d, "shape");
    size_t s3 = imp_dec_push_key(d, "type");
    imp_dec_fail(d, IMP_E_VALUE,
                 "is not supported by /v1/toi yet: in 3D only spheres with each other; in 2D "
                 "every shape; any shape with one halfspace");
    imp_dec_pop(d, s3);
    imp_dec_pop(d, s2);
    imp_dec_pop(d, saved);
    return -1;
}

int imp_ep_toi(const json_t *req, imp_dec *d, json_t **resp) {
    imp_body a, b;
    double horizon = INFINITY;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (imp_dec_object(d, req) || imp_dec_body(d, req, "a", 0, &a) ||
        imp_dec_body(d, req, "b", 1, &b) ||
        imp_dec_number(d, req, "horizon", 0, 0.0, 1, INFINITY, "must be a finite number > 0",
                       &horizon) ||
        supported(d, &a, &b)) {
        imp_body_free(&a);
        imp_body_free(&b);
        return -1;
    }
    imp_toi_result r;
    if (a.shape.type == IMP_SHAPE_SPHERE && b.shape.type == IMP_SHAPE_SPHERE) {
        imp_toi_spheres_input in = {a.m, b.m, a.shape.radius, b.shape.radius, horizon};
        r = imp_toi_spheres(&in);
    } else if (is_polygon_2d(&a, d->dim) && is_polygon_2d(&b, d->dim)) {
        imp_vec3 box_a[4], box_b[4];
        imp_toi_polygons_input in = {.a = a.m, .b = b.m, .horizon = horizon};
        in.na = imp_shape_polygon_vertices(&a.shape, box_a, &in.va);
        in.nb = imp_shape_polygon_vertices(&b.shape, box_b, &in.vb);
        r = imp_toi_polygons(&in);
    } else if (a.shape.type == IMP_SHAPE_HALFSPACE || b.shape.type == IMP_SHAPE_HALFSPACE) {
        int h_is_a = a.shape.type == IMP_SHAPE_HALFSPACE;
        const imp_body *h = h_is_a ? &a : &b, *o = h_is_a ? &b : &a;
        imp_vec3 buf[8];
        imp_toi_halfspace_input in = {.body = o->m, .normal = h->shape.normal,
                                      .offset = h->shape.offset, .plane = h->m,
                                      .horizon = horizon, .halfspace_is_a = h_is_a};
        in.n = imp_shape_points(&o->shape, d->dim, buf, &in.verts, &in.radius);
        r = imp_toi_halfspace(&in);
    } else {
        imp_vec3 core_a[4], core_b[4];
        imp_toi_rounded_input in = {.a = a.m, .b = b.m, .horizon = horizon};
        in.na = imp_shape_core(&a.shape, 2, core_a, &in.va, &in.ra);
        in.nb = imp_shape_core(&b.shape, 2, core_b, &in.vb, &in.rb);
        r = imp_toi_rounded_2d(&in);
    }
    imp_body_free(&a);
    imp_body_free(&b);
    if (r.state == IMP_TOI_FAILED) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");

    int ok = 1, dim = d->dim;
    json_t *o = json_object();
    if (!o) return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    imp_put(o, "status", json_string(state_name(r.state)), &ok);
    imp_put(o, "hit", json_boolean(r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING), &ok);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING) {
        imp_put_real(o, "time", r.time, &ok);
        imp_put(o, "point", imp_enc_vec(r.point, dim), &ok);
        imp_put(o, "normal", imp_enc_vec(r.normal, dim), &ok);
        imp_put(o, "a_position", imp_enc_vec(r.pa, dim), &ok);
        imp_put(o, "b_position", imp_enc_vec(r.pb, dim), &ok);
        if (r.state == IMP_TOI_OVERLAPPING) imp_put_real(o, "depth", r.depth, &ok);
    }
    if (r.has_closest) {
        json_t *ca = json_object();
        if (ca) {
            imp_put_real(ca, "time", r.closest_time, &ok);
            imp_put_real(ca, "distance", r.closest_distance, &ok);
        }
        imp_put(o, "closest_approach", ca, &ok);
    }
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, "out of memory");
    }
    *resp = o;
    return 0;
}
