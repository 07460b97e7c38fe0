/*
 * world_ray.c - rays against a world: watertight triangle and segment
 * tests, convex shapes, and the ordered walk of the hierarchy.
 *
 * DESIGN
 * What: imp_world_raycast (closest, any, all) and the per-primitive test
 * it calls, which the unit tests' brute-force loop calls too.
 * How: triangles by Woop, Benthin and Wald, "Watertight Ray/Triangle
 * Intersection", JCGT 2(1) 2013: the ray is made the +z axis of a sheared
 * frame (kz the axis of the largest direction component, kx and ky the
 * next ones, swapped when dir[kz] < 0 to keep the winding), each corner
 * is moved there (A = v - origin; A' = (A[kx] - sx A[kz], A[ky] - sy
 * A[kz])), and the ray's line passes through the triangle iff the three 2D
 * edge functions U = C'x B'y - C'y B'x, V, W do not have opposite signs
 * (and are not all zero). The paper's fallback to higher precision when an
 * edge function is zero becomes here an exact sign for every edge
 * function (core/eft.h: a filter on a b - c d, then the exact sum of the
 * products and their errors). A corner's sheared coordinates depend only
 * on the corner and the ray, so two triangles sharing an edge compute
 * that edge's function from the same two numbers, with opposite signs:
 * with exact signs a ray through the interior of a shared edge is inside
 * one of them, or both (sign zero), and a ray through a vertex meets every
 * triangle of its fan that is not edge-on, so no ray slips through a
 * closed mesh (watertight by construction, not by tolerance). Only then
 * is t computed, from the triangle's plane: t = n . (a - o) / n . d, n =
 * (b - a) x (c - a), first in doubles with a forward error bound, taken
 * when the bound proves t within 2^-44 (5.7e-14) relative of the plane's
 * exact value and the sign of n . d certain (triangle_t_double: nearly
 * every hit), else in double-double (exact differences, products with
 * their errors), within a few units of 1e-32 relative to the terms,
 * whatever the shear did; the ray hits the back when n . d > 0 (the front
 * is counter-clockwise). Chain
 * segments in 2D the same way: the line passes through the segment iff the
 * exact signs of d x (a - o) and d x (b - o) differ, and t is the
 * double-double ratio of the 2D cross products.
 * Convex shapes: the ray is a point of radius 0 moving at dir, cast with
 * imp_toi_shapes over [0, max_t] (the contract's exactness rules); a ray
 * starting inside a shape hits it at t = 0.
 * Consistency with the loop over primitives: each primitive's t is kept
 * inside the span over which the ray crosses the primitive's padded box
 * (IMP_WORLD_PAD_REL; clamped there when the watertight decision accepted
 * a grazing ray whose plane crossing lies outside), and the walk prunes a
 * node only when the ray's span through the node's box (which contains
 * every primitive box below it, and the same slab arithmetic is monotone
 * in the bounds) starts after the best t so far; so the walk skips only
 * primitives whose answer could not come first, and the answer is the
 * loop's, bit for bit, in the order t, collider, index. The walk visits
 * the nearest child of a node first and keeps the others' entry t on its
 * stack, asking for their lines at once (a prefetch: the misses of
 * several children overlap instead of following each other); a node
 * with a single such child (most, deep in the tree) goes straight to it.
 * A node's children are tested in float, four per SSE register
 * (children_span_float, proven never to drop a child the double test
 * keeps), the double test only for rays whose numbers leave float's range.
 * In a leaf a triangle is first asked whether the ray enters its padded
 * box before the best t so far (nine corner coordinates and three slabs),
 * and only then the exact line test, once; in a world of triangles only
 * (the common level) the other way round: the line tests of a leaf's
 * triangles first, four at once in AVX (leaf_lines_avx: the same numbers
 * and filter per lane, a triangle whose filter leaves a sign open goes to
 * the exact test), which most of them fail, then the box span of the
 * others only.
 * Why: exact decisions where a closed mesh must not leak, and floating
 * point everywhere else, with proofs where floats decide what is skipped.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "eft.h"
#include "toi_shapes.h"
#include "tolerance.h"
#include "world_impl.h"

/* The float bounds of axis a of node n's children that the ray meets first
 * (near) and last (far): lo or hi by the sign of the ray's direction, found at
 * offsets set once per ray (no choice per node). */
static inline const float *node_near(const imp_world_ray_prep *p, const world_node *n, int a) {
    return (const float *)(const void *)((const char *)n + p->near_off[a]);
}

static inline const float *node_far(const imp_world_ray_prep *p, const world_node *n, int a) {
    return (const float *)(const void *)((const char *)n + p->far_off[a]);
}

/* ---- double-double ------------------------------------------------------------------------ */

typedef struct dd {
    double hi, lo;
} dd;

static dd dd_renorm(double s, double e) {
    double h = s + e;
    return (dd){h, e - (h - s)};
}

/* a - b exactly */
static dd dd_diff(double a, double b) {
    double e, s = imp_two_sum(a, -b, &e);
    return (dd){s, e};
}

static dd dd_add(dd a, dd b) {
    double e, s = imp_two_sum(a.hi, b.hi, &e);
    return dd_renorm(s, e + (a.lo + b.lo));
}

static dd dd_sub(dd a, dd b) { return dd_add(a, (dd){-b.hi, -b.lo}); }

static dd dd_mul(dd a, dd b) {
    double e, p = imp_two_prod(a.hi, b.hi, &e);
    return dd_renorm(p, e + (a.hi * b.lo + a.lo * b.hi));
}

static dd dd_mul_d(dd a, double b) {
    double e, p = imp_two_prod(a.hi, b, &e);
    return dd_renorm(p, e + a.lo * b);
}

/* a / b rounded to double (b.hi != 0) */
static double dd_div(dd a, dd b) {
    double q = a.hi / b.hi;
    dd r = dd_sub(a, dd_mul_d(b, q));
    return q + r.hi / b.hi;
}

static double dd_val(dd a) { return a.hi + a.lo; }

/* ---- the padded box span ------------------------------------------------------------------- */

/* The span [*t0, *t1] of t in [0, tmax] over which the ray is inside the
 * padded box lo, hi; 1 when it is not empty. On each axis the bound the ray
 * meets first is chosen by the sign of its direction, so a zero component
 * gives infinite slab times (a NaN, from the origin exactly on a padded
 * face, leaves the span unconstrained on that side). Monotone in the
 * bounds: a box containing another gives a span containing the other's. */
static inline int span(const imp_world_ray_prep *p, const double lo[3], const double hi[3],
                       double tmax, double *t0out, double *t1out) {
    double t0 = 0.0, t1 = tmax;
    for (int k = 0; k < 3; ++k) {
        double bn = p->neg[k] ? hi[k] : lo[k], bf = p->neg[k] ? lo[k] : hi[k];
        double tn = (bn - p->onear[k]) * p->inv[k], tf = (bf - p->ofar[k]) * p->inv[k];
        t0 = tn > t0 ? tn : t0;
        t1 = tf < t1 ? tf : t1;
    }
    *t0out = t0;
    *t1out = t1;
    return t0 <= t1;
}

/* The same for the children of node n at once, their float boxes
 * read in place, with the same arithmetic per child as span (the bound a
 * ray meets first on an axis is the same for every child, so the choice is
 * made once per axis and the loops over the children have no branch, which
 * the compiler turns into vector code): bit k of the result says whether
 * child k's span is not empty, t0[k] where it starts. An empty slot's box
 * (lower bounds +inf, upper ones -inf) starts at +inf and ends at -inf on
 * every axis, never a NaN, so its bit is 0. */
static inline unsigned children_span(const imp_world_ray_prep *p, const world_node *n, double tmax,
                                     double t0[IMP_WORLD_WIDTH]) {
    double t1[IMP_WORLD_WIDTH];
    for (int k = 0; k < IMP_WORLD_WIDTH; ++k)
        t0[k] = 0.0, t1[k] = tmax;
    for (int a = 0; a < 3; ++a) {
        const float *bn = node_near(p, n, a), *bf = node_far(p, n, a);
        double on = p->onear[a], of = p->ofar[a], inv = p->inv[a];
        for (int k = 0; k < IMP_WORLD_WIDTH; ++k) {
            double tn = ((double)bn[k] - on) * inv, tf = ((double)bf[k] - of) * inv;
            t0[k] = tn > t0[k] ? tn : t0[k];
            t1[k] = tf < t1[k] ? tf : t1[k];
        }
    }
    unsigned in = 0;
    for (int k = 0; k < IMP_WORLD_WIDTH; ++k)
        in |= (unsigned)(t0[k] <= t1[k]) << k;
    return in;
}

/* The node test in float, the children four at a time (one SSE register per bound
 * and axis where the compiler has SSE): a cheaper stand-in for children_span
 * that never drops a child children_span keeps, so the walk visits a superset
 * of the nodes and its answer is the same. Why it keeps every such child:
 *  - fnear and ffar are onear and ofar rounded to float in the direction that
 *    moves each bound's t the safe way (a near bound's t down, a far one's up),
 *    so the exact differences bound - origin are on the safe side of the
 *    double ones; a near t that is >= 0 in doubles is then at most the
 *    double value times (1 + 2^-21) plus 2^-149 in float (three float
 *    roundings, 2^-24 each, against two double ones; 2^-149 for a product
 *    that underflows), one that is < 0 at most 2^-149; likewise a far t is at
 *    least the double value less those, and >= 0 when the double one is;
 *  - infinite and NaN terms: a bound at +-inf or 1 / dir infinite (dir
 *    component zero) give infinities of the sign the double terms have, or a
 *    NaN (a zero difference) where the double test has a NaN or an infinity
 *    on the unsafe side; a NaN term is skipped (the comparisons below leave
 *    the running t as it is), so it only widens the span;
 *  - overflow: the ray's numbers are in range (prepare sets fast only when
 *    every |dir| component is 0 or within [1e-30, 1e30] and the moved origin
 *    and max_t within 1e30 in magnitude), so a term overflows to +inf only
 *    when its double value exceeds 1e38 > max_t (the double span is empty)
 *    and to -inf only where that is harmless;
 *  - so when the double span is not empty (t0 <= t1, both >= 0), the float
 *    t0 (1 - 2^-18) <= t1 (1 + 2^-18) + 2^-126 holds, which is the test.
 * t0[k] receives the float span's start; float_start turns it into a lower
 * bound, in doubles, of the double span's start. tmax is the bound rounded up
 * (round_float). */
#define FLOAT_REL 3.814697265625e-6      /* 2^-18 */
#define FLOAT_ABS 1.1754943508222875e-38 /* 2^-126 */

static inline unsigned children_span_float(const imp_world_ray_prep *p, const world_node *n,
                                           float tm, float t0[IMP_WORLD_WIDTH]) {
#if defined(__SSE__)
    unsigned in = 0;
    for (int h = 0; h < IMP_WORLD_WIDTH; h += 4) {
        __m128 v0 = _mm_setzero_ps(), v1 = _mm_set1_ps(tm);
        for (int a = 0; a < 3; ++a) {
            const float *bn = node_near(p, n, a), *bf = node_far(p, n, a);
            __m128 inv = _mm_set1_ps(p->finv[a]);
            __m128 tn = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(bn + h), _mm_set1_ps(p->fnear[a])), inv);
            __m128 tf = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(bf + h), _mm_set1_ps(p->ffar[a])), inv);
            v0 = _mm_max_ps(tn, v0); /* a NaN tn keeps v0 */
            v1 = _mm_min_ps(tf, v1);
        }
        __m128 l = _mm_mul_ps(v0, _mm_set1_ps((float)(1.0 - FLOAT_REL)));
        __m128 r = _mm_add_ps(_mm_mul_ps(v1, _mm_set1_ps((float)(1.0 + FLOAT_REL))),
                              _mm_set1_ps((float)FLOAT_ABS));
        in |= (unsigned)_mm_movemask_ps(_mm_cmple_ps(l, r)) << h;
        _mm_storeu_ps(t0 + h, v0);
    }
#else
    float t1[IMP_WORLD_WIDTH];
    for (int k = 0; k < IMP_WORLD_WIDTH; ++k)
        t0[k] = 0.0f, t1[k] = tm;
    for (int a = 0; a < 3; ++a) {
        const float *bn = node_near(p, n, a), *bf = node_far(p, n, a);
        for (int k = 0; k < IMP_WORLD_WIDTH; ++k) {
            float tn = (bn[k] - p->fnear[a]) * p->finv[a], tf = (bf[k] - p->ffar[a]) * p->finv[a];
            t0[k] = tn > t0[k] ? tn : t0[k];
            t1[k] = tf < t1[k] ? tf : t1[k];
        }
    }
    unsigned in = 0;
    for (int k = 0; k < IMP_WORLD_WIDTH; ++k)
        in |= (unsigned)(t0[k] * (float)(1.0 - FLOAT_REL) <=
                         t1[k] * (float)(1.0 + FLOAT_REL) + (float)FLOAT_ABS)
              << k;
#endif
    return in;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define WORLD_HAVE_AVX 1
#include <immintrin.h>

/* children_span_float for the eight children at once (one AVX register per bound and
 * axis), on CPUs with AVX (world_cpu_avx): the same IEEE single-precision operations
 * in the same order per child (no FMA: nothing is contracted), so the same children
 * and starts bit for bit, and the same guarantee. */
__attribute__((target("avx"))) static inline unsigned children_span_avx(const imp_world_ray_prep *p,
                                                                        const world_node *n,
                                                                        float tm,
                                                                        float t0[IMP_WORLD_WIDTH]) {
    _Static_assert(IMP_WORLD_WIDTH == 8, "one AVX register per bound");
    __m256 v0 = _mm256_setzero_ps(), v1 = _mm256_set1_ps(tm);
    for (int a = 0; a < 3; ++a) {
        const float *bn = node_near(p, n, a), *bf = node_far(p, n, a);
        __m256 inv = _mm256_set1_ps(p->finv[a]);
        __m256 tn =
            _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(bn), _mm256_set1_ps(p->fnear[a])), inv);
        __m256 tf =
            _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(bf), _mm256_set1_ps(p->ffar[a])), inv);
        v0 = _mm256_max_ps(tn, v0); /* a NaN tn keeps v0 */
        v1 = _mm256_min_ps(tf, v1);
    }
    __m256 l = _mm256_mul_ps(v0, _mm256_set1_ps((float)(1.0 - FLOAT_REL)));
    __m256 r = _mm256_add_ps(_mm256_mul_ps(v1, _mm256_set1_ps((float)(1.0 + FLOAT_REL))),
                             _mm256_set1_ps((float)FLOAT_ABS));
    _mm256_storeu_ps(t0, v0);
    return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(l, r, _CMP_LE_OQ));
}

int world_cpu_avx(void) { return __builtin_cpu_supports("avx") != 0; }
#else
#define WORLD_HAVE_AVX 0
int world_cpu_avx(void) { return 0; }
#endif

static inline double float_start(float t0) { return (double)t0 * (1.0 - FLOAT_REL) - FLOAT_ABS; }

/* One axis of span for the box of the corners a, b, c on axis k (a
 * segment passes its second corner twice), the box taken as
 * world_corner_box takes it (so, for the same corners, the same numbers). */
static inline void corner_slab(const imp_world_ray_prep *p, int k, double a, double b, double c,
                               double *t0, double *t1) {
    double lo = b < a ? b : a, hi = b > a ? b : a;
    lo = c < lo ? c : lo;
    hi = c > hi ? c : hi;
    double bn = p->neg[k] ? hi : lo, bf = p->neg[k] ? lo : hi;
    double tn = (bn - p->onear[k]) * p->inv[k], tf = (bf - p->ofar[k]) * p->inv[k];
    *t0 = tn > *t0 ? tn : *t0;
    *t1 = tf < *t1 ? tf : *t1;
}

/* span for the padded box of a triangle (nv 3) or segment (nv 2): the same
 * arithmetic, written out for the three axes. */
static inline int corner_span(const imp_world_ray_prep *p, const world_prim *pr, int nv,
                              double tmax, double *t0, double *t1) {
    const imp_vec3 *v = pr->v, *c = &v[nv - 1];
    *t0 = 0.0;
    *t1 = tmax;
    corner_slab(p, 0, v[0].x, v[1].x, c->x, t0, t1);
    corner_slab(p, 1, v[0].y, v[1].y, c->y, t0, t1);
    corner_slab(p, 2, v[0].z, v[1].z, c->z, t0, t1);
    return *t0 <= *t1;
}

/* The span of primitive pr's padded box (a triangle's or segment's from its
 * corners). */
static int prim_span(const imp_world *w, const imp_world_ray_prep *p, const world_prim *pr,
                     double tmax, double *t0, double *t1) {
    imp_world_collider_kind kind = w->colliders[pr->collider].kind;
    if (kind != IMP_WORLD_SHAPE)
        return corner_span(p, pr, kind == IMP_WORLD_CHAIN ? 2 : 3, tmax, t0, t1);
    imp_vec3 lo, hi;
    world_prim_bounds(w, pr, &lo, &hi);
    double l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
    return span(p, l, h, tmax, t0, t1);
}

/* x (|x| <= 1e30, else the result is unused) as a float above it (up 1) or below
 * it (-1): rounded to nearest, then moved at least one float outwards by
 * |f| 2^-23 (at least the spacing of the floats around f) plus the least
 * subnormal (for f zero or subnormal); no branch and no libm call (a ray's
 * setup runs once per ray). */
static inline float round_float(double x, float up) {
    float f = (float)x;
    return f + up * (fabsf(f) * 0x1p-23f + 0x1p-149f);
}

/* Whether a direction component's magnitude a keeps the float node test exact
 * enough: 0, or within [1e-30, 1e30]. */
static inline int in_float_range(double a) { return (a == 0.0) | ((a >= 1e-30) & (a <= 1e30)); }

/* imp_world_ray_prepare into *out, every field written (a ray's setup is a
 * good part of a short ray's cost: no clearing, no copy, few branches). */
static void prepare(const imp_world *w, const imp_world_ray *ray, imp_world_ray_prep *p) {
    p->ray = *ray;
    p->dim = w->dim;
    double d[3] = {ray->dir.x, ray->dir.y, ray->dir.z},
           o[3] = {ray->origin.x, ray->origin.y, ray->origin.z};
    double a0 = fabs(d[0]), a1 = fabs(d[1]), a2 = fabs(d[2]);
    /* kz: the axis of the largest |dir| component (the first of equal ones), and its
     * component, chosen without indexing the array (a store and reload per ray) */
    int kz = a1 > a0 ? 1 : 0;
    double az = a1 > a0 ? a1 : a0;
    kz = a2 > az ? 2 : kz;
    assert(d[kz] != 0.0);
    int kx = kz == 2 ? 0 : kz + 1, ky = kx == 2 ? 0 : kx + 1;
    int swap = d[kz] < 0.0; /* keep the winding: kx and ky swapped, without a branch */
    p->kx = swap ? ky : kx, p->ky = swap ? kx : ky, p->kz = kz;
    kx = p->kx, ky = p->ky;

    double om = fabs(o[0]);
    om = fabs(o[1]) > om ? fabs(o[1]) : om;
    om = fabs(o[2]) > om ? fabs(o[2]) : om;
    double pad = IMP_WORLD_PAD_REL * (w->scale + om); /* the comparisons skip NaNs, as fmax */
    pad = pad > DBL_MIN ? pad : DBL_MIN;              /* fmax, without the call */
    for (int k = 0; k < 3; ++k)                       /* the three divisions first: they overlap */
        p->inv[k] = 1.0 / d[k];
    for (int k = 0; k < 3; ++k) {
        /* no branch on the direction's signs (random rays would mispredict them) */
        int neg = signbit(d[k]) != 0;
        double spad = copysign(pad, d[k]); /* +pad, or -pad when dir's sign bit is set */
        float up = (float)copysign(1.0, d[k]);
        p->neg[k] = neg;
        /* lower bounds are moved down by the padding (the origin up), upper ones up */
        p->onear[k] = o[k] + spad;
        p->ofar[k] = o[k] - spad;
        /* the float origins: the near one on the side that makes a near bound's t
         * smaller (above onear when dir > 0), the far one the other way */
        p->finv[k] = (float)p->inv[k];
        p->fnear[k] = round_float(p->onear[k], up);
        p->ffar[k] = round_float(p->ofar[k], -up);
        unsigned lo = (unsigned)(offsetof(world_node, lo) +
                                 (size_t)k * sizeof(float[IMP_WORLD_WIDTH])),
                 hi = (unsigned)(offsetof(world_node, hi) +
                                 (size_t)k * sizeof(float[IMP_WORLD_WIDTH]));
        p->near_off[k] = neg ? hi : lo;
        p->far_off[k] = neg ? lo : hi;
    }
    /* the float node test (children_span_float) runs when every number is in its
     * range: |onear|, |ofar| <= om + pad <= 1e30, each |dir| component 0 or within
     * [1e-30, 1e30], max_t <= 1e30 */
    int fast = (ray->max_t <= 1e30) & (om + pad <= 1e30) & in_float_range(a0) & in_float_range(a1) &
               in_float_range(a2);
    p->fast = fast;
    /* the shear by the reciprocal 1 / dir[kz] (the same two numbers for every
     * triangle is what the watertight test needs; three independent divisions
     * instead of five) */
    p->sx = d[kx] * p->inv[kz];
    p->sy = d[ky] * p->inv[kz];
}

imp_world_ray_prep imp_world_ray_prepare(const imp_world *w, const imp_world_ray *ray) {
    imp_world_ray_prep p;
    prepare(w, ray, &p);
    return p;
}

/* ---- triangles ----------------------------------------------------------------------------- */

/* Whether the ray's line passes through triangle v (Woop et al. 2013 with
 * exact edge-function signs). */
static int line_through_triangle(const imp_world_ray_prep *p, const imp_vec3 v[3]) {
    double x[3], y[3];
    for (int i = 0; i < 3; ++i) {
        imp_vec3 d = imp_sub(v[i], p->ray.origin);
        double a[3] = {d.x, d.y, d.z}; /* indexed without branches */
        double az = a[p->kz];
        x[i] = a[p->kx] - p->sx * az;
        y[i] = a[p->ky] - p->sy * az;
    }
    int u = imp_prod_diff_sign(x[2], y[1], y[2], x[1]);
    int vv = imp_prod_diff_sign(x[0], y[2], y[0], x[2]);
    if (u * vv < 0) return 0; /* opposite signs already */
    int ww = imp_prod_diff_sign(x[1], y[0], y[1], x[0]);
    if ((u < 0 || vv < 0 || ww < 0) && (u > 0 || vv > 0 || ww > 0)) return 0;
    return u != 0 || vv != 0 || ww != 0;
}

/* The lines through up to four triangles of a leaf, pr[0, count), as a mask:
 * bit j set when line_through_triangle(p, pr[j].v) is 1. One triangle at a
 * time here; four at once in leaf_lines_avx where the CPU has AVX. */
static unsigned leaf_lines(const imp_world_ray_prep *p, const world_prim *pr, size_t count) {
    unsigned in = 0;
    for (size_t j = 0; j < count; ++j)
        in |= (unsigned)line_through_triangle(p, pr[j].v) << j;
    return in;
}

#if WORLD_HAVE_AVX
_Static_assert(sizeof(imp_vec3) == 3 * sizeof(double), "a corner is three doubles");

/* leaf_lines for up to four triangles at once, one per lane of an AVX
 * register of doubles: the same operations per triangle as
 * line_through_triangle (the corner less the origin, then the shear, then the
 * products of each edge function and their difference, IEEE double, no FMA:
 * nothing is contracted), so the same numbers, and the same filter
 * (imp_prod_diff_sign's: |p - q| > 2^-50 (|p| + |q|)) decides each sign; a
 * triangle with a sign the filter leaves open goes to line_through_triangle
 * whole (its exact fallback). So the mask is leaf_lines', bit for bit.
 * Lanes past count repeat the last triangle and are masked off. */
__attribute__((target("avx"))) static unsigned leaf_lines_avx(const imp_world_ray_prep *p,
                                                              const world_prim *pr, size_t count) {
    if (count == 0) return 0;
    const double *o = (const double *)(const void *)&p->ray.origin;
    int kx = p->kx, ky = p->ky, kz = p->kz;
    const double *c[4];
    for (size_t j = 0; j < 4; ++j)
        c[j] = (const double *)(const void *)pr[j < count ? j : count - 1].v;
    __m256d sx = _mm256_set1_pd(p->sx), sy = _mm256_set1_pd(p->sy);
    __m256d ox = _mm256_set1_pd(o[kx]), oy = _mm256_set1_pd(o[ky]), oz = _mm256_set1_pd(o[kz]);
    __m256d x[3], y[3];
    for (int i = 0; i < 3; ++i) { /* corner i of the four triangles: c[j] + 3 i */
        int b = 3 * i;
        __m256d ax = _mm256_sub_pd(
            _mm256_set_pd(c[3][b + kx], c[2][b + kx], c[1][b + kx], c[0][b + kx]), ox);
        __m256d ay = _mm256_sub_pd(
            _mm256_set_pd(c[3][b + ky], c[2][b + ky], c[1][b + ky], c[0][b + ky]), oy);
        __m256d az = _mm256_sub_pd(
            _mm256_set_pd(c[3][b + kz], c[2][b + kz], c[1][b + kz], c[0][b + kz]), oz);
        x[i] = _mm256_sub_pd(ax, _mm256_mul_pd(sx, az));
        y[i] = _mm256_sub_pd(ay, _mm256_mul_pd(sy, az));
    }
    const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256d rel = _mm256_set1_pd(0x1.0p-50), zero = _mm256_setzero_pd();
    /* edge functions U, V, W as line_through_triangle takes them: a b - c d */
    static const int e[3][4] = {{2, 1, 2, 1}, {0, 2, 0, 2}, {1, 0, 1, 0}};
    unsigned decided = 15u, pos = 0, neg = 0;
    for (int f = 0; f < 3; ++f) {
        __m256d pp = _mm256_mul_pd(x[e[f][0]], y[e[f][1]]);
        __m256d qq = _mm256_mul_pd(y[e[f][2]], x[e[f][3]]);
        __m256d r = _mm256_sub_pd(pp, qq);
        __m256d err = _mm256_mul_pd(
            rel, _mm256_add_pd(_mm256_and_pd(pp, abs_mask), _mm256_and_pd(qq, abs_mask)));
        unsigned d = (unsigned)_mm256_movemask_pd(
            _mm256_cmp_pd(_mm256_and_pd(r, abs_mask), err, _CMP_GT_OQ));
        unsigned gt = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(r, zero, _CMP_GT_OQ));
        decided &= d;
        pos |= d & gt;
        neg |= d & ~gt;
    }
    unsigned lanes = count >= 4 ? 15u : (1u << count) - 1u;
    /* decided: every sign nonzero, so through iff they agree */
    unsigned in = decided & ~(pos & neg);
    for (unsigned open = lanes & ~decided; open != 0; open &= open - 1) {
        int j = __builtin_ctz(open);
        in |= (unsigned)line_through_triangle(p, pr[j].v) << j;
    }
    return in & lanes;
}
#endif

/* The ray's t at triangle v's plane as num / den in double-double, and the
 * plane's normal (b - a) x (c - a) rounded. 0 when the ray is parallel to it. */
static int triangle_t(const imp_world_ray_prep *p, const imp_vec3 v[3], dd *num, dd *den,
                      imp_vec3 *n) {
    imp_vec3 o = p->ray.origin, d = p->ray.dir;
    dd e1[3] = {dd_diff(v[1].x, v[0].x), dd_diff(v[1].y, v[0].y), dd_diff(v[1].z, v[0].z)};
    dd e2[3] = {dd_diff(v[2].x, v[0].x), dd_diff(v[2].y, v[0].y), dd_diff(v[2].z, v[0].z)};
    dd a[3] = {dd_diff(v[0].x, o.x), dd_diff(v[0].y, o.y), dd_diff(v[0].z, o.z)};
    dd c[3];
    for (int k = 0; k < 3; ++k) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        c[k] = dd_sub(dd_mul(e1[i], e2[j]), dd_mul(e1[j], e2[i]));
    }
    *num = dd_add(dd_add(dd_mul(a[0], c[0]), dd_mul(a[1], c[1])), dd_mul(a[2], c[2]));
    *den = dd_add(dd_add(dd_mul_d(c[0], d.x), dd_mul_d(c[1], d.y)), dd_mul_d(c[2], d.z));
    *n = imp_v3(dd_val(c[0]), dd_val(c[1]), dd_val(c[2]));
    return den->hi != 0.0;
}

/* Relative accuracy at which triangle_t_double's t is taken (2^-44, 5.7e-14:
 * the contract asks for 1e-12). */
#define T_DOUBLE_REL 0x1p-44

/* triangle_t in plain doubles, taken only when a forward error bound proves t
 * within T_DOUBLE_REL of the plane's exact value and the sign of n . d (the
 * back face) certain: 1 with *t, the normal *n and *back set; 0 when the
 * bound cannot say (the caller then computes triangle_t in double-double).
 * The bound, u = 2^-53: the edges e1, e2 and a = v0 - o are each within u of
 * the exact differences; a cross product component c_k = e1_i e2_j - e1_j e2_i
 * is then within 4u (1 + O(u)) of the exact one relative to C_k = |e1_i e2_j|
 * + |e1_j e2_i|; n . a adds its own three roundings and a's error, so |num -
 * NUM| <= 10u sum_k C_k |a_k|, and |den - DEN| <= 8u sum_k C_k |d_k| (d is
 * exact), each inflated by 1 + 2^-40 for the rounding of the bound itself and
 * widened by 64 times the least subnormal per unit of the factors for
 * underflow; t = num / den is then within err_num / |num| + err_den / |den| +
 * u of NUM / DEN. Infinities and NaNs fail the test. */
static int triangle_t_double(const imp_world_ray_prep *p, const imp_vec3 v[3], double *t,
                             imp_vec3 *n, int *back) {
    imp_vec3 o = p->ray.origin, d = p->ray.dir;
    /* written out per axis, in the order of the sums of the bound (no arrays: the
     * compiler keeps every term in a register) */
    imp_vec3 e1 = imp_sub(v[1], v[0]), e2 = imp_sub(v[2], v[0]), a = imp_sub(v[0], o);
    double x0 = e1.y * e2.z, y0 = e1.z * e2.y, x1 = e1.z * e2.x, y1 = e1.x * e2.z;
    double x2 = e1.x * e2.y, y2 = e1.y * e2.x;
    double c0 = x0 - y0, c1 = x1 - y1, c2 = x2 - y2;
    double k0 = fabs(x0) + fabs(y0), k1 = fabs(x1) + fabs(y1), k2 = fabs(x2) + fabs(y2);
    double sn = k0 * fabs(a.x), sd = k0 * fabs(d.x);
    sn += k1 * fabs(a.y), sd += k1 * fabs(d.y);
    sn += k2 * fabs(a.z), sd += k2 * fabs(d.z);
    double am = fabs(a.x) + fabs(a.y) + fabs(a.z), dm = fabs(d.x) + fabs(d.y) + fabs(d.z);
    double num = c0 * a.x + c1 * a.y + c2 * a.z;
    double den = c0 * d.x + c1 * d.y + c2 * d.z;
    const double u = 0x1p-53, inflate = 1.0 + 0x1p-40, tiny = 64.0 * 0x1p-1074;
    double en = (10.0 * u * sn + tiny * (1.0 + am)) * inflate;
    double ed = (8.0 * u * sd + tiny * (1.0 + dm)) * inflate;
    double an = fabs(num), ad = fabs(den);
    /* en / an + ed / ad + u <= REL, without dividing: both sides times an ad */
    if (!(ad > ed && an > 0.0 && (en * ad + ed * an) * inflate <= (T_DOUBLE_REL - u) * an * ad))
        return 0;
    if (!(isfinite(num) && isfinite(den))) return 0;
    *t = num / den;
    *n = imp_v3(c0, c1, c2);
    *back = den > 0.0;
    return 1;
}

/* The 2D segment a -> b: whether the line passes through it (exact signs
 * of d x (a - o) and d x (b - o)), and t = ((a - o) x e) / (d x e), e = b - a,
 * in double-double, with the right-hand normal (e.y, -e.x). */
static int segment_t(const imp_world_ray_prep *p, const imp_vec3 v[2], dd *num, dd *den,
                     imp_vec3 *n) {
    imp_vec3 o = p->ray.origin, d = p->ray.dir;
    imp_vec3 a = imp_sub(v[0], o), b = imp_sub(v[1], o);
    int sa = imp_prod_diff_sign(d.x, a.y, d.y, a.x), sb = imp_prod_diff_sign(d.x, b.y, d.y, b.x);
    if (sa == sb) return 0; /* both on one side, or along the line */
    dd ex = dd_diff(v[1].x, v[0].x), ey = dd_diff(v[1].y, v[0].y);
    dd ax = dd_diff(v[0].x, o.x), ay = dd_diff(v[0].y, o.y);
    *num = dd_sub(dd_mul(ax, ey), dd_mul(ay, ex));
    *den = dd_sub(dd_mul_d(ey, d.x), dd_mul_d(ex, d.y));
    *n = imp_v3(dd_val(ey), -dd_val(ex), 0.0);
    return den->hi != 0.0;
}

/* n / |n|, 0; -1 when n is zero or not finite. Directly where |n|^2 can neither
 * overflow nor lose precision to underflow, else through imp_unit_scaled. */
static int unit_normal(imp_vec3 n, imp_vec3 *unit) {
    double m = fabs(n.x);
    m = fabs(n.y) > m ? fabs(n.y) : m;
    m = fabs(n.z) > m ? fabs(n.z) : m;
    if (!(m >= 1e-150 && m <= 1e150)) return imp_unit_scaled(n, unit, NULL);
    double l = sqrt(n.x * n.x + n.y * n.y + n.z * n.z);
    *unit = imp_v3(n.x / l, n.y / l, n.z / l);
    return 0;
}

/* The line test and t of a triangle or segment primitive whose padded box
 * the ray crosses over [t0, t1]: 1 with *hit filled, else 0; `line` 1 when
 * the triangle's line test has passed already (leaf_lines). Kept out of
 * line (WORLD_COLD): most primitives a ray is asked about are missed by
 * the box test in flat_hit or the line test of their leaf. */
WORLD_COLD static int flat_line_hit(const imp_world *w, const imp_world_ray_prep *p,
                                    const world_prim *pr, int seg, int line, double t0, double t1,
                                    imp_world_hit *hit) {
    const world_collider *c = &w->colliders[pr->collider];
    dd num, den;
    imp_vec3 n;
    double t;
    int back;
    if (seg) {
        if (!segment_t(p, pr->v, &num, &den, &n)) return 0;
    } else if (!line && !line_through_triangle(p, pr->v)) {
        return 0;
    }
    if (!seg && triangle_t_double(p, pr->v, &t, &n, &back)) {
        if (back && c->one_sided) return 0;
    } else {
        if (!seg && !triangle_t(p, pr->v, &num, &den, &n)) return 0;
        back = den.hi > 0.0;
        if (back && c->one_sided) return 0;
        t = dd_div(num, den);
    }
    t += 0.0;
    if (!(t >= 0.0 && t <= p->ray.max_t)) return 0;
    t = (t < t0 ? t0 : t > t1 ? t1 : t) + 0.0;
    imp_vec3 unit;
    if (unit_normal(n, &unit) != 0) return 0;
    hit->t = t;
    hit->point = imp_madd(p->ray.origin, p->ray.dir, t);
    hit->normal = back ? imp_neg(unit) : unit;
    hit->normal = imp_v3(hit->normal.x + 0.0, hit->normal.y + 0.0, hit->normal.z + 0.0);
    hit->collider = pr->collider;
    hit->index = pr->index;
    hit->back_face = (uint32_t)back;
    hit->kind = seg ? IMP_WORLD_PRIM_SEGMENT : IMP_WORLD_PRIM_TRIANGLE;
    return 1;
}

/* A triangle or segment primitive: 1 with *hit filled, else 0. Missed at
 * once when the ray's span through its padded box is empty or starts
 * after tbound (at most max_t: a caller that needs only hits up to tbound,
 * as every t answered lies in that span). */
static inline int flat_hit_seg(const imp_world *w, const imp_world_ray_prep *p,
                               const world_prim *pr, int seg, double tbound, imp_world_hit *hit) {
    double t0, t1;
    if (!corner_span(p, pr, seg ? 2 : 3, p->ray.max_t, &t0, &t1) || t0 > tbound) return 0;
    return flat_line_hit(w, p, pr, seg, 0, t0, t1, hit);
}

static inline int flat_hit(const imp_world *w, const imp_world_ray_prep *p, const world_prim *pr,
                           double tbound, imp_world_hit *hit) {
    return flat_hit_seg(w, p, pr, w->colliders[pr->collider].kind == IMP_WORLD_CHAIN, tbound, hit);
}

/* ---- shapes -------------------------------------------------------------------------------- */

static int shape_hit(const imp_world *w, const imp_world_ray_prep *p, const world_prim *pr,
                     imp_world_hit *hit, imp_failure *why) {
    const world_collider *c = &w->colliders[pr->collider];
    int bounded = c->shape.type != IMP_SHAPE_HALFSPACE;
    double t0 = 0.0, t1 = p->ray.max_t;
    if (bounded && !prim_span(w, p, pr, p->ray.max_t, &t0, &t1)) return 0;
    imp_shape point = {.type = IMP_SHAPE_SPHERE, .radius = 0.0};
    imp_motion mp = {p->ray.origin, p->ray.dir, imp_v3(0, 0, 0)};
    imp_motion mc = {c->position, imp_v3(0, 0, 0), imp_v3(0, 0, 0)};
    imp_toi_result r = imp_toi_shapes(&point, &mp, &c->shape, &mc, w->dim, p->ray.max_t);
    if (r.state == IMP_TOI_FAILED) {
        *why = r.failure;
        return -1;
    }
    if (r.state == IMP_TOI_NONE) return 0;
    double t = 0.0;
    imp_vec3 normal;
    if (r.state == IMP_TOI_HIT) {
        t = r.time < t0 ? t0 : r.time > t1 ? t1 : r.time;
        normal = imp_neg(r.normal);
    } else {
        t = t0; /* inside: the span starts at 0 */
        (void)imp_unit_scaled(imp_neg(p->ray.dir), &normal, NULL);
    }
    hit->t = t;
    hit->point = imp_madd(p->ray.origin, p->ray.dir, t);
    hit->normal = imp_v3(normal.x + 0.0, normal.y + 0.0, normal.z + 0.0);
    hit->collider = pr->collider;
    hit->index = 0;
    hit->back_face = r.state == IMP_TOI_OVERLAPPING;
    hit->kind = IMP_WORLD_PRIM_SHAPE;
    return 1;
}

int imp_world_ray_prim(const imp_world *w, const imp_world_ray_prep *p, size_t i,
                       imp_world_hit *hit, imp_failure *why) {
    assert(i < w->n_prims);
    const world_prim *pr = &w->prims[i];
    memset(hit, 0, sizeof *hit);
    if (!world_prim_touches(w, pr, p->ray.filter)) return 0;
    if (w->colliders[pr->collider].kind == IMP_WORLD_SHAPE) return shape_hit(w, p, pr, hit, why);
    return flat_hit(w, p, pr, p->ray.max_t, hit);
}

int imp_world_ray_reaches(const imp_world *w, const imp_world_ray_prep *p, size_t i, double t) {
    assert(i < w->n_prims);
    const world_prim *pr = &w->prims[i];
    const world_collider *c = &w->colliders[pr->collider];
    if (c->kind == IMP_WORLD_SHAPE && c->shape.type == IMP_SHAPE_HALFSPACE) return 1;
    double t0, t1;
    return prim_span(w, p, pr, imp_fmin(t, p->ray.max_t), &t0, &t1);
}

int imp_world_hit_cmp(const imp_world_hit *a, const imp_world_hit *b) {
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int hit_qsort_cmp(const void *a, const void *b) { return imp_world_hit_cmp(a, b); }

/* ---- the query ----------------------------------------------------------------------------- */

/* Primitive tests between two polls: a shape's cast counts as this many triangles. */
#define SHAPE_WORK 64

typedef struct ray_query {
    const imp_world *w;
    imp_world_ray_prep p;
    imp_world_ray_mode mode;
    world_poll poll;
    int plain; /* only triangles, and the filter allows them all (test_prims) */
    int stopped_by;
    int have;
    double tb; /* the farthest t still worth a look (bound), and it rounded up to float */
    float ftb; /* (set when the float node test runs: p.fast) */
    imp_world_hit best;
    imp_world_hit *all;
    size_t n_all, cap_all;
    int nomem;
    world_fails fails;
} ray_query;

/* The farthest t still worth a look: the best t so far when the closest hit is
 * asked for, else max_t (kept in q->tb by keep). */
static inline double bound(const ray_query *q) { return q->tb; }

/* Sets the bound to t (<= max_t), and its float for the node test. */
static inline void set_bound(ray_query *q, double t) {
    q->tb = t;
    if (q->p.fast) q->ftb = round_float(t, 1.0f); /* |t| <= 1e30 there */
}

static int keep(ray_query *q, const imp_world_hit *h) {
    if (q->mode == IMP_WORLD_RAY_ALL) {
        void *items = q->all;
        if (world_grow(&items, &q->cap_all, q->n_all, sizeof *h) != 0) {
            q->nomem = 1;
            return 1;
        }
        q->all = items;
        q->all[q->n_all++] = *h;
        q->have = 1;
        return 0;
    }
    if (!q->have || imp_world_hit_cmp(h, &q->best) < 0) {
        q->best = *h;
        if (q->mode == IMP_WORLD_RAY_CLOSEST) set_bound(q, h->t);
    }
    q->have = 1;
    return q->mode == IMP_WORLD_RAY_ANY;
}

/* The lowest set bit of a nonzero child mask. */
static inline int first_bit(unsigned m) {
#if defined(__GNUC__)
    return __builtin_ctz(m);
#else
    int k = 0;
    while (!(m & 1u))
        m >>= 1, ++k;
    return k;
#endif
}

/* Tests primitives [first, first + count); 1 ends the walk (any: hit; out
 * of memory; stopped). A triangle or segment is asked only for hits up to
 * the bound (flat_hit misses it at once when the ray enters its padded box
 * after that, where imp_world_ray_prim's hit could only come later: it
 * keeps every t inside that span, and answers no failure for it). */
static int test_prims(ray_query *q, size_t first, size_t count, int avx) {
    if (q->plain) { /* triangles only, every one of them allowed by the filter */
        /* the line tests of a leaf's triangles first, four at a time (most of a leaf's
         * triangles are missed by the line; a leaf has at most IMP_WORLD_LEAF_SIZE), then,
         * in order, the box span of each one the line passes through, and its t: the
         * primitives' own order, so the answer is flat_hit's for each */
        for (size_t at = first; at < first + count; at += 4) {
            const world_prim *pr = &q->w->prims[at];
            size_t n = first + count - at < 4 ? first + count - at : 4;
            unsigned lines;
#if WORLD_HAVE_AVX
            if (avx)
                lines = leaf_lines_avx(&q->p, pr, n);
            else
#endif
                lines = leaf_lines(&q->p, pr, n);
            for (; lines != 0; lines &= lines - 1) {
                const world_prim *t = &pr[first_bit(lines)];
                imp_world_hit h;
                double t0, t1;
                if (corner_span(&q->p, t, 3, q->p.ray.max_t, &t0, &t1) && t0 <= bound(q) &&
                    flat_line_hit(q->w, &q->p, t, 0, 1, t0, t1, &h) && keep(q, &h))
                    return 1;
                if (q->nomem) return 1;
            }
        }
        return (q->stopped_by = world_poll_add(&q->poll, count)) != 0;
    }
    (void)avx;
    for (size_t i = first; i < first + count; ++i) {
        imp_world_hit h;
        imp_failure why = IMP_FAILURE_NONE;
        const world_prim *pr = &q->w->prims[i];
        int rc, shape = !world_prim_is_flat(q->w, pr);
        if (shape)
            rc = imp_world_ray_prim(q->w, &q->p, i, &h, &why);
        else
            rc = world_prim_touches(q->w, pr, q->p.ray.filter) &&
                 flat_hit(q->w, &q->p, pr, bound(q), &h);
        if (rc < 0 && world_fails_push(&q->fails, i, why) != 0) q->nomem = 1;
        if (rc > 0 && keep(q, &h)) return 1;
        if (q->nomem) return 1;
        if ((q->stopped_by = world_poll_add(&q->poll, shape ? SHAPE_WORK : 1)) != 0) return 1;
    }
    return 0;
}

_Static_assert(IMP_WORLD_WIDTH <= 8, "a child's slot is kept in 3 bits");

static inline __attribute__((always_inline)) void walk_with(ray_query *q, const int fast,
                                                            const int avx) {
    const imp_world *w = q->w;
    if (w->n_nodes == 0) return;
    struct item {
        uint32_t child, count; /* count 0: a node */
        double t;              /* where the child's span may start, at the least */
    } stack[IMP_WORLD_WIDTH * IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    uint32_t at = 0;
    for (;;) {
        const world_node *n = &w->nodes[at];
        double tk[IMP_WORLD_WIDTH];
        float tf[IMP_WORLD_WIDTH];
        unsigned hit;
#if WORLD_HAVE_AVX
        if (avx)
            hit = children_span_avx(&q->p, n, q->ftb, tf);
        else
#endif
            hit = fast ? children_span_float(&q->p, n, q->ftb, tf)
                       : children_span(&q->p, n, bound(q), tk);
        if ((q->stopped_by = world_poll_add(&q->poll, 1)) != 0) return;
        struct item next = {0, 0, 0.0};
        int have = hit != 0;
        if (have && (hit & (hit - 1)) == 0) { /* one child: taken at once, nothing to order */
            int k = first_bit(hit);
            next = (struct item){n->child[k], n->count[k], 0.0}; /* t unused: not stacked */
            world_prefetch_child(w, next.child, next.count);
        } else if (have) {
            /* the children by entry t: a float start's bits order as the number (it is
             * >= 0), the child's slot in the low 3 bits (IMP_WORLD_WIDTH <= 8) (ties, and near-ties
             * within 8 ulps, in stored order); doubles by their value */
            uint32_t key[IMP_WORLD_WIDTH];
            double dkey[IMP_WORLD_WIDTH];
            int m = 0;
            for (; hit != 0; hit &= hit - 1) {
                int k = first_bit(hit), j = m++;
                if (fast) {
                    uint32_t b;
                    memcpy(&b, &tf[k], sizeof b);
                    b = (b & ~7u) | (uint32_t)k;
                    while (j > 0 && key[j - 1] > b) {
                        key[j] = key[j - 1];
                        --j;
                    }
                    key[j] = b;
                } else {
                    while (j > 0 && dkey[j - 1] > tk[k]) {
                        dkey[j] = dkey[j - 1];
                        key[j] = key[j - 1];
                        --j;
                    }
                    dkey[j] = tk[k];
                    key[j] = (uint32_t)k;
                }
            }
            for (int j = 0; j < m; ++j) {
                int k = (int)(key[j] & 7u);
                world_prefetch_child(w, n->child[k], n->count[k]);
            }
            for (int j = m - 1; j >= 0; --j) {
                int k = (int)(key[j] & 7u);
                stack[sp++] =
                    (struct item){n->child[k], n->count[k], fast ? float_start(tf[k]) : dkey[j]};
            }
            next = stack[--sp];
        }
        for (;;) {
            if (!have) {
                do {
                    if (sp == 0) return;
                    next = stack[--sp];
                } while (!(next.t <= bound(q)));
            }
            if (next.count == 0) {
                at = next.child;
                break;
            }
            if (test_prims(q, next.child, next.count, avx)) return;
            have = 0;
        }
    }
}

/* The ordered walk: of a node's children whose span starts within the
 * bound, the nearest is taken at once and the others pushed farthest
 * first, each with its entry t, compared again with the bound when
 * popped (a node with one such child, the common case deep in the tree,
 * goes to it without the ordering); the node test in float where the
 * ray's numbers allow (a copy of the walk for each test). */
#if WORLD_HAVE_AVX
/* The walk compiled for AVX (the node test eight children wide), run where the CPU has
 * it; the answers are the SSE walk's. */
__attribute__((target("avx"))) static void walk_avx(ray_query *q) { walk_with(q, 1, 1); }
#endif

static void walk(ray_query *q, int avx) {
#if WORLD_HAVE_AVX
    if (q->p.fast && avx) {
        walk_avx(q);
        return;
    }
#else
    (void)avx;
#endif
    if (q->p.fast)
        walk_with(q, 1, 0);
    else
        walk_with(q, 0, 0);
}

static int ray_blocks(void *ctx, size_t i) {
    const ray_query *q = ctx;
    return imp_world_ray_reaches(q->w, &q->p, i, bound(q));
}

imp_world_ray_result imp_world_raycast(const imp_world *w, const imp_world_ray *ray,
                                       imp_world_ray_mode mode, const imp_stop *stop) {
    return world_raycast_isa(w, ray, mode, stop, 1);
}

imp_world_ray_result world_raycast_isa(const imp_world *w, const imp_world_ray *ray,
                                       imp_world_ray_mode mode, const imp_stop *stop, int avx) {
    assert(w && ray && ray->max_t > 0.0);
    ray_query q; /* every field set (a memset of it costs a short ray more than a leaf) */
    q.w = w;
    prepare(w, ray, &q.p);
    q.mode = mode;
    q.poll = (world_poll){stop, 0};
    q.plain = w->triangles_only && w->one_filter && w->n_colliders > 0 &&
              imp_filter_touch(ray->filter, &w->colliders[0].filter);
    q.stopped_by = 0;
    q.have = 0;
    set_bound(&q, ray->max_t);
    memset(&q.best, 0, sizeof q.best);
    q.all = NULL;
    q.n_all = q.cap_all = 0;
    q.nomem = 0;
    q.fails = (world_fails){NULL, 0, 0};
    /* halfspaces first: an early best t prunes the walk */
    if (!test_prims(&q, w->n_bvh, w->n_prims - w->n_bvh, avx && w->avx)) walk(&q, avx && w->avx);
    /* the answer is written whole, in one initializer, where the caller takes it (built
     * field by field on the stack and copied out, its copy stalled on the field stores) */
    if (q.stopped_by || q.nomem) {
        free(q.all);
        free(q.fails.f);
        return (imp_world_ray_result){.state = q.stopped_by ? IMP_WORLD_STOPPED : IMP_WORLD_FAILED,
                                      .failure =
                                          q.stopped_by ? IMP_FAILURE_NONE : IMP_FAILURE_NOMEM,
                                      .stopped_by = q.stopped_by};
    }
    size_t failed_prim;
    imp_failure why = IMP_FAILURE_NONE;
    if (q.fails.n > 0 && !(mode == IMP_WORLD_RAY_ANY && q.have))
        why = world_fails_first(w, &q.fails, ray_blocks, &q, &failed_prim);
    if (q.fails.f) free(q.fails.f); /* the common ray has no list: no call */
    if (why != IMP_FAILURE_NONE) {
        free(q.all);
        return (imp_world_ray_result){.state = IMP_WORLD_FAILED, .failure = why};
    }
    if (mode == IMP_WORLD_RAY_ALL && q.n_all > 0) {
        qsort(q.all, q.n_all, sizeof *q.all, hit_qsort_cmp);
        return (imp_world_ray_result){.state = IMP_WORLD_HIT, .hits = q.all, .n_hits = q.n_all};
    }
    if (q.all) free(q.all);
    if (mode == IMP_WORLD_RAY_CLOSEST && q.have)
        return (imp_world_ray_result){.state = IMP_WORLD_HIT, .hit = q.best};
    return (imp_world_ray_result){.state = q.have ? IMP_WORLD_HIT : IMP_WORLD_NONE};
}
