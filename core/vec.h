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
/* C's fmax and fmin as inline selects, with the same answers (a NaN operand gives the other
 * one; of two equal operands, b, as x86-64's maxsd and minsd and so libm's): gcc calls libm
 * for fmax and fmin unless told that no NaN occurs, a call on every solver's hot path. */
static inline double imp_fmax(double a, double b) {
    double m = a > b ? a : b; /* maxsd: b when a is NaN or they are equal */
    return b != b ? a : m;    /* a select, not a branch (a > b || b != b branched) */
}
static inline double imp_fmin(double a, double b) {
    double m = a < b ? a : b;
    return b != b ? a : m;
}
static inline double imp_max_abs(imp_vec3 a) {
    return imp_fmax(fabs(a.x), imp_fmax(fabs(a.y), fabs(a.z)));
}
/* A running maximum m (never NaN) taking x: imp_fmax(m, x) but for the sign of equal zeros
 * (m kept), a NaN x passed over as imp_fmax passes it; one maxsd, without imp_fmax's NaN
 * test and select. */
static inline double imp_fmax_run(double m, double x) { return x > m ? x : m; }

/* Whether a vector of length l has a direction: l is neither 0 nor non-finite. */
static inline int imp_len_directed(double l) { return l > 0.0 && isfinite(l); }

/* Unit vector along a; returns `fallback` when a has zero (or non-finite) length. */
static inline imp_vec3 imp_normalize_or(imp_vec3 a, imp_vec3 fallback) {
    double l = imp_len(a);
    if (!imp_len_directed(l)) return fallback;
    return imp_scale(a, 1.0 / l);
}

/* Position on a parabolic path p(t) = p + v t + a t^2 / 2, evaluated in the
 * nested form so that t = 0 gives p exactly. */
static inline imp_vec3 imp_path_at(imp_vec3 p, imp_vec3 v, imp_vec3 a, double t) {
    return imp_add(p, imp_scale(imp_madd(v, a, 0.5 * t), t));
}
/* Velocity on that path: v + a t. */
static inline imp_vec3 imp_path_vel(imp_vec3 v, imp_vec3 a, double t) { return imp_madd(v, a, t); }

/* The range [*lo, *hi] of one coordinate of the path p + v t + a t^2 / 2
 * over t in [0, T]: a parabola's extremes are at the ends and at the apex
 * t = -v / a when that lies inside. */
static inline void imp_path_range(double p, double v, double a, double T, double *lo, double *hi) {
    double e = p + (v + 0.5 * a * T) * T;
    *lo = imp_fmin(p, e);
    *hi = imp_fmax(p, e);
    if (a != 0.0) {
        double ts = -v / a;
        if (ts > 0.0 && ts < T) {
            double x = p + (v + 0.5 * a * ts) * ts;
            *lo = imp_fmin(*lo, x);
            *hi = imp_fmax(*hi, x);
        }
    }
}

/*
 * Unit vector along a, for any finite a however tiny or huge: a is first
 * divided by its largest component magnitude m (divided, not multiplied by
 * 1 / m, which overflows for a subnormal m), which leaves a length l in
 * [1, sqrt 3], far from underflow and overflow, and then by l (one
 * rounding, not two). Returns 0 with *unit set and, when ml is not NULL,
 * ml[0] = m and ml[1] = l (|a| = m l, kept as two factors because the
 * product may overflow); -1 when a is zero or not finite, *unit untouched.
 */
static inline int imp_unit_scaled(imp_vec3 a, imp_vec3 *unit, double ml[2]) {
    if (!(isfinite(a.x) && isfinite(a.y) && isfinite(a.z))) return -1; /* fmax drops NaNs */
    double m = imp_max_abs(a);
    if (!(m > 0.0)) return -1;
    imp_vec3 s = imp_v3(a.x / m, a.y / m, a.z / m);
    double l = imp_len(s);
    *unit = imp_v3(s.x / l, s.y / l, s.z / l);
    if (ml) ml[0] = m, ml[1] = l;
    return 0;
}

#endif
