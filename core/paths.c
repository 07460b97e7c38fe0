/*
 * paths.c - closest points of two straight paths (segments, rays, lines).
 *
 * DESIGN
 * What: for p(t) = p0 + t d1 and q(s) = q0 + s d2, with t and s restricted
 * to the range of the kind ([0, 1], [0, inf) or all of R), a pair (t, s)
 * of least distance |p(t) - q(s)|, that distance, and the contract's
 * booleans (POST /v1/paths/intersect, see paths.h for the choices).
 *
 * How:
 * 1. Scale. The four points are divided by S, the power of two at or below
 *    their largest coordinate magnitude, so positions lie in (-2, 2); each
 *    direction is then scaled by a power of two of its own (u = d / 2^E,
 *    largest component in [1, 2)). Powers of two scale exactly, so 1e-30
 *    and 1e30 scenes run the very same arithmetic, nothing overflows or
 *    underflows however short a path is (down to IMP_PATHS_POINT_REL, below
 *    which the path is a point), and a parameter converts back exactly
 *    (t = t_u / 2^E; the end of a segment is exactly 1).
 * 2. The lines. With w = p0 - q0, minimising |w + t u1 - s u2|^2 gives the
 *    2x2 normal equations
 *        a t - b s = -c,   b t - e s = -f,
 *    a = u1.u1, b = u1.u2, e = u2.u2, c = u1.w, f = u2.w, whose solution
 *    by Cramer's rule is t = (b f - c e) / (a e - b^2), s = (a f - b c) /
 *    (a e - b^2) (Ericson, Real-Time Collision Detection, 5.1.8). The
 *    determinant cancels catastrophically for nearly parallel directions,
 *    so it and the numerators are evaluated through the Lagrange identity
 *    as a e - b^2 = |n|^2, c e - b f = n.(w x u2), a f - b c = -n.(w x u1)
 *    with n = u1 x u2, every cross-product component a 2x2 determinant
 *    computed with an error-free product (eft.h, Dot2 of length 2: within
 *    about one ulp, as Kahan's fma determinant) and every dot product with
 *    Dot2 (Ogita, Rump & Oishi 2005). In 2D n has only a z component and
 *    this is plain Cramer's rule on t d1 - s d2 = q0 - p0:
 *    t = (r x u2) / (u1 x u2), s = (r x u1) / (u1 x u2), r = -w.
 * 3. The ranges: Ericson's clamped closest points of two segments
 *    (5.1.9), generalised to any intervals (infinite ends included): clamp
 *    t to its range; if it moved, s is recomputed as the best partner of
 *    the clamped t, s = (b t + f) / e; if s leaves its range, clamp it and
 *    recompute t = (b s - c) / a, clamped in turn. The distance is convex
 *    in (t, s), so this reaches the constrained minimum: when the line
 *    solution's t is outside its range the optimum has t at that bound,
 *    and when the partner s is outside its range so is the optimal s.
 * 4. Parallel directions (|n|^2 <= IMP_PATHS_PARALLEL_SIN^2 a e): the
 *    closest pairs are the t of p's range whose partner s = (b t + f) / e
 *    lies in q's range (an interval I; if empty, step 3 from the end of
 *    p's range nearest q gives the unique endpoint pair). On I the
 *    difference t - s is affine in t, so the pair of least |t - s| is its
 *    zero clamped to I (so same_time tells whether the particles meet);
 *    when it is constant (equal velocities), the t of I nearest 0.
 * 5. Points: a zero-length path is a point at its start, parallel to
 *    nothing. Its partner on the other path is the clamped projection; its
 *    own parameter is the one of least |t - s|: the other parameter
 *    clamped to its range (both points: t = s = 0).
 * 6. The distance is never taken as |p(t) - q(s)| of the rounded closest
 *    points, which cancels catastrophically (far points of nearly parallel
 *    lines, a crossing). It comes from the configuration found: lines
 *    crossing, 0 in 2D and |w.n| / |n| in 3D; one parameter fixed and the
 *    other its partner, the distance of the fixed point to the other line,
 *    |(w x u2) + t n| / |u2| (or |(w x u1) + s n| / |u1|); both fixed, the
 *    distance of two points at path ends. All compensated as in 2.
 *
 * Why: clamping the line solution once (or clamping t and s
 * independently) is wrong whenever one clamp changes the other's
 * optimum; Ericson's order is exact for convex distance. Doing the sums in
 * compensated arithmetic on a normalised scene makes the answer depend on
 * the geometry only, not on its units.
 */
#include <assert.h>
#include <math.h>

#include "eft.h"
#include "paths.h"

typedef struct range {
    double lo, hi;
} range;

/* How the closest pair was fixed; decides the distance formula (DESIGN 6). */
typedef enum config {
    CFG_LINES,   /* both parameters the unconstrained line solution */
    CFG_T_FIXED, /* t fixed (at a bound or chosen), s its partner on q's line */
    CFG_S_FIXED, /* s fixed at a bound, t its partner on p's line */
    CFG_BOTH     /* both at bounds */
} config;

/* The normalised scene (DESIGN 1): positions in units of S, directions
 * d = 2^E u in those units. */
typedef struct frame {
    int dim;
    imp_vec3 w;      /* p0 - q0 */
    imp_vec3 u1, u2; /* zero for a point */
    int e1, e2;
    double a, b, c, e, f;
    imp_vec3 n;    /* u1 x u2 */
    imp_vec3 wxu1; /* w x u1 */
    imp_vec3 wxu2; /* w x u2 */
    double nn;     /* |n|^2 */
} frame;

static range kind_range(imp_paths_kind kind) {
    range r = {-INFINITY, INFINITY};
    if (kind == IMP_PATHS_SEGMENT) {
        r.lo = 0.0;
        r.hi = 1.0;
    } else if (kind == IMP_PATHS_RAY) {
        r.lo = 0.0;
    }
    return r;
}

static range range_scaled(range r, int e) {
    range o = {scalbn(r.lo, e), scalbn(r.hi, e)};
    return o;
}

static double clamp(double x, range r) { return x < r.lo ? r.lo : x > r.hi ? r.hi : x; }

static imp_vec3 scaled(imp_vec3 v, int e) {
    return imp_v3(scalbn(v.x, e), scalbn(v.y, e), scalbn(v.z, e));
}

static double dot2v(imp_vec3 x, imp_vec3 y) {
    double xs[3] = {x.x, x.y, x.z}, ys[3] = {y.x, y.y, y.z};
    return imp_dot2(xs, ys, 3);
}

/* a d - b c within about an ulp (an error-free product under each term). */
static double det2(double a, double b, double c, double d) {
    double xs[2] = {a, -b}, ys[2] = {d, c};
    return imp_dot2(xs, ys, 2);
}

static imp_vec3 cross_c(imp_vec3 x, imp_vec3 y) {
    return imp_v3(det2(x.y, x.z, y.y, y.z), det2(x.z, x.x, y.z, y.x), det2(x.x, x.y, y.x, y.y));
}

/* x + y s, one rounding per component */
static imp_vec3 fma3(imp_vec3 x, imp_vec3 y, double s) {
    return imp_v3(fma(y.x, s, x.x), fma(y.y, s, x.y), fma(y.z, s, x.z));
}

static double norm(imp_vec3 v) { return sqrt(dot2v(v, v)); }

/* The best s on q's line for a fixed t, and the best t for a fixed s. */
static double partner_s(const frame *f, double tu) { return fma(f->b, tu, f->f) / f->e; }
static double partner_t(const frame *f, double su) { return fma(f->b, su, -f->c) / f->a; }

/* t_u whose partner is s_u, for parallel directions (b != 0). */
static double preimage(const frame *f, double su) {
    if (isinf(su)) return f->b > 0 ? su : -su;
    return fma(su, f->e, -f->f) / f->b;
}

/* DESIGN 4: the t_u (in p's range) to start step 3 from. */
static double parallel_t(const frame *f, range tpu, range tsu) {
    double jlo = preimage(f, tsu.lo), jhi = preimage(f, tsu.hi);
    if (jlo > jhi) {
        double x = jlo;
        jlo = jhi;
        jhi = x;
    }
    range in = {imp_fmax(tpu.lo, jlo), imp_fmin(tpu.hi, jhi)};
    if (!(in.lo <= in.hi)) return jlo > tpu.hi ? tpu.hi : tpu.lo;
    /* t - s over I, times 2^e1: t_u (1 - k b / e) - k f / e with k = 2^(e1 - e2) */
    double k = scalbn(1.0, f->e1 - f->e2);
    double alpha = 1.0 - k * (f->b / f->e);
    double t = 0.0;
    if (alpha != 0.0) {
        double zero = k * (f->f / f->e) / alpha;
        if (isfinite(zero)) t = zero;
    }
    return clamp(t, in);
}

static double distance_normalised(const frame *f, config cfg, double tu, double su) {
    switch (cfg) {
    case CFG_LINES: return f->dim == 2 ? 0.0 : fabs(dot2v(f->w, f->n)) / sqrt(f->nn);
    case CFG_T_FIXED: return norm(fma3(f->wxu2, f->n, tu)) / sqrt(f->e);
    case CFG_S_FIXED: return norm(fma3(f->wxu1, f->n, su)) / sqrt(f->a);
    default: return norm(fma3(fma3(f->w, f->u2, -su), f->u1, tu));
    }
}

/* start + t (end - start), exactly the end points at t = 0 and t = 1. */
static imp_vec3 eval_path(imp_vec3 start, imp_vec3 end, double t) {
    if (t == 0.0) return start;
    if (t == 1.0) return end;
    return fma3(start, imp_sub(end, start), t);
}

static void check_point(imp_vec3 v, int dim) {
    (void)v;
    (void)dim;
    assert(isfinite(v.x) && isfinite(v.y) && isfinite(v.z));
    assert(imp_max_abs(v) <= IMP_PATHS_MAX_COORD);
    assert(dim == 3 || v.z == 0.0);
}

imp_paths_result imp_paths_closest(const imp_paths_input *in) {
    assert(in->dim == 2 || in->dim == 3);
    assert(in->kind_p == IMP_PATHS_SEGMENT || in->kind_p == IMP_PATHS_RAY ||
           in->kind_p == IMP_PATHS_LINE);
    assert(in->kind_q == IMP_PATHS_SEGMENT || in->kind_q == IMP_PATHS_RAY ||
           in->kind_q == IMP_PATHS_LINE);
    assert(in->tolerance >= 0.0 || in->tolerance == IMP_PATHS_TOL_DEFAULT);
    check_point(in->p0, in->dim);
    check_point(in->p1, in->dim);
    check_point(in->q0, in->dim);
    check_point(in->q1, in->dim);

    imp_paths_result r = {0};
    double scale = imp_fmax(imp_fmax(imp_max_abs(in->p0), imp_max_abs(in->p1)),
                            imp_fmax(imp_max_abs(in->q0), imp_max_abs(in->q1)));
    int ex = scale > 0.0 ? ilogb(scale) : 0;
    if (in->tolerance < 0.0) {
        r.dist_tol = IMP_PATHS_DEFAULT_TOL_REL * scale;
        r.param_tol = IMP_PATHS_DEFAULT_TOL_REL;
    } else {
        r.dist_tol = r.param_tol = in->tolerance;
    }

    /* DESIGN 1 */
    imp_vec3 p0 = scaled(in->p0, -ex), q0 = scaled(in->q0, -ex);
    imp_vec3 d1 = imp_sub(scaled(in->p1, -ex), p0), d2 = imp_sub(scaled(in->q1, -ex), q0);
    frame f = {0};
    f.dim = in->dim;
    f.w = imp_sub(p0, q0);
    r.p_point = !(imp_max_abs(d1) >= IMP_PATHS_POINT_REL);
    r.q_point = !(imp_max_abs(d2) >= IMP_PATHS_POINT_REL);
    if (!r.p_point) {
        f.e1 = ilogb(imp_max_abs(d1));
        f.u1 = scaled(d1, -f.e1);
    }
    if (!r.q_point) {
        f.e2 = ilogb(imp_max_abs(d2));
        f.u2 = scaled(d2, -f.e2);
    }
    f.a = dot2v(f.u1, f.u1);
    f.b = dot2v(f.u1, f.u2);
    f.e = dot2v(f.u2, f.u2);
    f.c = dot2v(f.u1, f.w);
    f.f = dot2v(f.u2, f.w);
    f.n = cross_c(f.u1, f.u2);
    f.wxu1 = cross_c(f.w, f.u1);
    f.wxu2 = cross_c(f.w, f.u2);
    f.nn = dot2v(f.n, f.n);

    range tp = kind_range(in->kind_p), ts = kind_range(in->kind_q);
    range tpu = range_scaled(tp, f.e1), tsu = range_scaled(ts, f.e2);
    double tu = 0.0, su = 0.0;
    config cfg;
    if (r.p_point && r.q_point) {
        cfg = CFG_BOTH;
        r.t = r.s = 0.0;
    } else if (r.p_point) { /* DESIGN 5: q's clamped projection of p0 */
        double proj = f.f / f.e;
        su = clamp(proj, tsu);
        cfg = su == proj ? CFG_T_FIXED : CFG_BOTH;
        r.s = scalbn(su, -f.e2);
        r.t = clamp(r.s, tp);
    } else if (r.q_point) {
        double proj = -f.c / f.a;
        tu = clamp(proj, tpu);
        cfg = tu == proj ? CFG_S_FIXED : CFG_BOTH;
        r.t = scalbn(tu, -f.e1);
        r.s = clamp(r.t, ts);
    } else {
        r.parallel = f.nn <= IMP_PATHS_PARALLEL_SIN * IMP_PATHS_PARALLEL_SIN * f.a * f.e;
        double t_line = NAN, s_line = NAN;
        if (r.parallel) {
            tu = parallel_t(&f, tpu, tsu);
        } else if (f.dim == 2) { /* DESIGN 2, Cramer on the 2x2 system */
            imp_vec3 rr = imp_neg(f.w);
            double den = f.n.z;
            t_line = det2(rr.x, rr.y, f.u2.x, f.u2.y) / den;
            s_line = det2(rr.x, rr.y, f.u1.x, f.u1.y) / den;
            tu = clamp(t_line, tpu);
        } else { /* DESIGN 2, the normal equations via the Lagrange identity */
            t_line = -dot2v(f.n, f.wxu2) / f.nn;
            s_line = -dot2v(f.n, f.wxu1) / f.nn;
            tu = clamp(t_line, tpu);
        }
        /* DESIGN 3 */
        int t_free = !r.parallel && tu == t_line;
        su = t_free ? s_line : partner_s(&f, tu);
        if (su >= tsu.lo && su <= tsu.hi) {
            cfg = t_free ? CFG_LINES : CFG_T_FIXED;
        } else {
            su = clamp(su, tsu);
            double tt = partner_t(&f, su);
            tu = clamp(tt, tpu);
            cfg = tu == tt ? CFG_S_FIXED : CFG_BOTH;
        }
        r.t = scalbn(tu, -f.e1);
        r.s = scalbn(su, -f.e2);
    }

    r.distance = scalbn(distance_normalised(&f, cfg, tu, su), ex);
    r.cp = eval_path(in->p0, in->p1, r.t);
    r.cq = eval_path(in->q0, in->q1, r.s);
    r.point = imp_add(imp_scale(r.cp, 0.5), imp_scale(r.cq, 0.5));
    r.intersects = r.distance <= r.dist_tol;
    r.same_time = fabs(r.t - r.s) <= r.param_tol;
    assert(isfinite(r.t) && isfinite(r.s) && isfinite(r.distance));
    return r;
}
