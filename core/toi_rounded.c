/*
 * toi_rounded.c - what the two rounded-shape casts share.
 *
 * DESIGN
 * What: the pieces of configuration-space casting (toi_rounded_2d.c in 2D,
 * toi_rounded_3d.c in 3D) that do not depend on the dimension: the
 * relative motion, the entering test, the vertex-distance quartic and the
 * contact's fields.
 * How: the casts follow q(t) = pb(t) - pa(t), a parabola; a root of a
 * feature's equation counts only where q enters the rounded Minkowski
 * difference (moving inwards along the outward normal there, or at rest
 * and accelerating inwards), and reaching the sphere of radius R around a
 * vertex u is the quartic |q(t) - u|^2 = R^2.
 * Why: one definition of "entering" for both casts, so that a 2D pair and
 * the same pair in the plane z = 0 of 3D classify a touch alike.
 */
#include "toi_rounded.h"

#include <math.h>

#include "tolerance.h"

imp_motion imp_toi_relative(const imp_motion *a, const imp_motion *b) {
    imp_motion q = {imp_sub(b->p, a->p), imp_sub(b->v, a->v), imp_sub(b->a, a->a)};
    return q;
}

int imp_toi_entering(const imp_motion *q, double t, imp_vec3 n) {
    double vtol = IMP_SLIDE_REL * (imp_max_abs(q->v) + imp_max_abs(q->a) * t);
    double vn = imp_dot(imp_path_vel(q->v, q->a, t), n);
    if (vn < -vtol) return 1;
    if (vn > vtol) return 0;
    return imp_dot(q->a, n) < 0.0;
}

void imp_toi_distance_quartic(const imp_motion *q, imp_vec3 u, double rr, double c[5]) {
    imp_vec3 w = imp_sub(q->p, u);
    c[0] = imp_dot(w, w) - rr;
    c[1] = 2.0 * imp_dot(w, q->v);
    c[2] = imp_dot(q->v, q->v) + imp_dot(w, q->a);
    c[3] = imp_dot(q->v, q->a);
    c[4] = 0.25 * imp_dot(q->a, q->a);
}

void imp_toi_rounded_contact(imp_toi_result *r, const imp_motion *a, const imp_motion *b, double t,
                             imp_vec3 normal, imp_vec3 ca, double ra) {
    r->time = t;
    r->normal = imp_v3(normal.x + 0.0, normal.y + 0.0, normal.z + 0.0);
    r->pa = imp_motion_at(a, t);
    r->pb = imp_motion_at(b, t);
    r->point = imp_madd(imp_add(r->pa, ca), r->normal, ra - 0.5 * r->depth);
}
