/*
 * vec.h - small value types for 2D/3D vector math, passed by value.
 *
 * Every solver works in 3D; a 2D query keeps z = 0 throughout, which the
 * operations below preserve (cross products of 2D vectors point along z and
 * are only used where the 2D code asks for them). Header-only and inline:
 * these are called in the innermost loops of the solvers.
 */
#ifndef IMP_VEC_H
#define IMP_VEC_H

#include <math.h>

typedef struct imp_vec3 {
    double x, y, z;
} imp_vec3;

static inline imp_vec3 imp_v3(double x, double y, double z) {
    imp_vec3 r = {x, y, z};
    return r;
}
static inline imp_vec3 imp_add(imp_vec3 a, imp_vec3 b) {
    return imp_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline imp_vec3 imp_sub(imp_vec3 a, imp_vec3 b) {
    return imp_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline imp_vec3 imp_scale(imp_vec3 a, double s) { return imp_v3(a.x * s, a.y * s, a.z * s); }
static inline imp_vec3 imp_neg(imp_vec3 a) { return imp_v3(-a.x, -a.y, -a.z); }
static inline double imp_dot(imp_vec3 a, imp_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline imp_vec3 imp_cross(imp_vec3 a, imp_vec3 b) {
    return imp_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double imp_len(imp_vec3 a) { return sqrt(imp_dot(a, a)); }
/* a + b*s */
static inline imp_vec3 imp_madd(imp_vec3 a, imp_vec3 b, double s) {
    return imp_v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
static inline double imp_max_abs(imp_vec3 a) { return fmax(fabs(a.x), fmax(fabs(a.y), fabs(a.z))); }

/* Unit vector along a; returns `fallback` when a has zero (or non-finite) length. */
static inline imp_vec3 imp_normalize_or(imp_vec3 a, imp_vec3 fallback) {
    double l = imp_len(a);
    if (!(l > 0.0) || !isfinite(l)) return fallback;
    return imp_scale(a, 1.0 / l);
}

/* Position on a parabolic path p(t) = p + v t + a t^2 / 2, evaluated in the
 * nested form so that t = 0 gives p exactly. */
static inline imp_vec3 imp_path_at(imp_vec3 p, imp_vec3 v, imp_vec3 a, double t) {
    return imp_add(p, imp_scale(imp_madd(v, a, 0.5 * t), t));
}
/* Velocity on that path: v + a t. */
static inline imp_vec3 imp_path_vel(imp_vec3 v, imp_vec3 a, double t) { return imp_madd(v, a, t); }

#endif
