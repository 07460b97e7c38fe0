/*
 * toi_halfspace.c - a translating shape against a halfspace.
 *
 * DESIGN
 * What: the first t in [0, horizon] at which a shape (a convex core rounded
 * by a radius: every shape of the contract but the halfspace) moving on a
 * parabola touches a halfspace {x : n.x <= offset} and then enters it.
 * How: a translating shape's lowest point along n is always the same core
 * vertex, so the gap g(t) = n.p(t) + min_i n.v_i - radius - offset(t) is a
 * quadratic in t (offset(t) moves with the halfspace's own displacement);
 * its first root at which g' < 0 (or g' = 0 and g'' < 0) is the contact.
 * Why: exact in closed form for every shape, 2D and 3D, O(n) in vertices.
 */
#include "toi_halfspace.h"

#include <assert.h>
#include <math.h>

#include "roots.h"
#include "tolerance.h"

imp_toi_result imp_toi_halfspace(const imp_toi_halfspace_input *in) {
    assert(in->n >= 1 && in->horizon > 0.0);
    imp_toi_result r = imp_toi_none();
    const imp_vec3 n = in->normal;
    double low = INFINITY, scale = fabs(in->offset) + in->radius;
    for (size_t i = 0; i < in->n; ++i) {
        low = imp_fmin(low, imp_dot(in->verts[i], n));
        scale = imp_fmax(scale, imp_max_abs(in->verts[i]) + imp_max_abs(in->body.p));
    }
    /* g(t) = c0 + c1 t + c2 t^2: relative motion of the shape against the plane */
    imp_vec3 dv = imp_sub(in->body.v, in->plane.v), da = imp_sub(in->body.a, in->plane.a);
    double c0 = imp_dot(in->body.p, n) + low - in->radius - in->offset;
    double c1 = imp_dot(dv, n), c2 = 0.5 * imp_dot(da, n);
    const double tol = IMP_CONTACT_REL * scale;
    const double vtol = IMP_SLIDE_REL * (imp_max_abs(dv) + (c2 != 0.0 ? imp_max_abs(da) : 0.0));
    double t_hit = -1.0;
    if (c0 < -tol) {
        r.state = IMP_TOI_OVERLAPPING;
        r.depth = -c0;
        t_hit = 0.0;
    } else if (c0 <= tol && (c1 < -vtol || (fabs(c1) <= vtol && c2 < 0.0))) {
        r.state = IMP_TOI_HIT;
        t_hit = 0.0;
    } else {
        double roots[2];
        int k = imp_quadratic_roots(c2, c1, c0, 0.0, in->horizon, roots);
        for (int i = 0; i < k; ++i) {
            double t = roots[i], slope = c1 + 2.0 * c2 * t;
            /* a double root is a graze: no contact */
            if (t > 0.0 && slope < 0.0 && !(k == 2 && roots[0] == roots[1])) {
                r.state = IMP_TOI_HIT;
                t_hit = t;
                break;
            }
        }
    }
    if (t_hit < 0.0) return r;
    r.time = t_hit;
    imp_vec3 body_at = imp_path_at(in->body.p, in->body.v, in->body.a, t_hit);
    imp_vec3 shift = imp_path_at(imp_v3(0, 0, 0), in->plane.v, in->plane.a, t_hit);
    /* the contact point: the middle of the lowest core vertices, on the surface */
    imp_vec3 sum = imp_v3(0, 0, 0);
    double count = 0;
    for (size_t i = 0; i < in->n; ++i)
        if (imp_dot(in->verts[i], n) <= low + tol) {
            sum = imp_add(sum, in->verts[i]);
            count += 1;
        }
    r.point =
        imp_madd(imp_add(body_at, imp_scale(sum, 1.0 / count)), n, -(in->radius - 0.5 * r.depth));
    imp_vec3 from_a_to_b = in->halfspace_is_a ? n : imp_neg(n);
    r.normal = imp_v3(from_a_to_b.x + 0.0, from_a_to_b.y + 0.0, from_a_to_b.z + 0.0);
    if (in->halfspace_is_a) {
        r.pa = imp_add(in->plane.p, shift);
        r.pb = body_at;
    } else {
        r.pa = body_at;
        r.pb = imp_add(in->plane.p, shift);
    }
    return r;
}
