/*
 * ccd.c - moving-triangle collision: the floating-point filter in front of
 * the exact path (core/ccd_exact.c).
 *
 * DESIGN
 * What: imp_ccd decides a vertex-face or edge-edge query with doubles when
 * it can prove the answer, and hands the query to imp_ccd_exact otherwise.
 *
 * How: ball arithmetic (midpoint-radius intervals, Rump, "Fast and
 * parallel interval arithmetic", BIT 39, 1999): every value carries a
 * radius that bounds its distance from the exact value, grown at each
 * operation by the rounding error (u |result|) and by an underflow term,
 * so a ball that excludes zero has a certain sign. Inf or NaN never gives a
 * certain sign, so overflow only sends a query to the exact path.
 * 1. The coplanarity cubic f(t) is built in Bernstein form on [0, 1] from
 *    the points at t = 0 and t = 1 (each coefficient a sum of 3x3
 *    determinants of the differences), each coefficient a ball.
 * 2. Its roots are isolated by de Casteljau subdivision with Descartes'
 *    rule for the Bernstein basis (no sign change: no root; exactly one:
 *    one simple root; Lane & Riesenfeld, "Bounds on a polynomial", BIT 21,
 *    1981; the Bernstein form of Vincent-Collins-Akritas). An uncertain
 *    sign at an end of a piece (a root at or near t = 0, 1 or a split
 *    point), or a piece still unresolved after IMP_CCD_FILTER_DEPTH
 *    halvings (multiple or clustered roots, f identically zero), gives up.
 * 3. Each root, earliest first, is narrowed by Newton steps on the
 *    midpoints and certified by two ball evaluations of f that differ in
 *    sign IMP_CCD_FILTER_HALF_WIDTH either side, then the static test of
 *    core/ccd_exact.c (the same orientations) runs on balls over that time
 *    interval: all certain and inside is a hit at that time, certainly
 *    outside moves on to the next root; anything uncertain gives up. A
 *    root the plain balls cannot narrow (nearly coplanar motion: the
 *    determinants cancel to 1e-12 of their terms) is tried once more on
 *    coefficients summed from error-free products by Sum2 (as if in twice
 *    the working precision) before giving up.
 * Two shapes of input skip the cubic: a point of one primitive equal to a
 * point of the other at t = 0 (a mesh's vertex against its own face) is
 * contact at t = 0; four points sharing a coordinate at t = 0 and another
 * at t = 1 move in a plane normal to that axis (the cubic vanishes), and
 * are solved in 2D: contact at t = 0 by orientations, else the earliest
 * point-on-segment contact (the quadratic (b - a) x (p - a), isolated and
 * narrowed as above, with p between a and b at its root).
 * A static test the balls cannot settle at a certified root (touching) is
 * decided exactly at that root alone (imp_ccd_exact_static_at), the
 * filter's isolation standing. Giving up anywhere else sends the whole
 * query to imp_ccd_exact.
 *
 * Why this way: most queries from simulations have a well-separated simple
 * root, or none, and positions far from the edges of the face, so a few
 * hundred flops settle them; the exact path keeps the guarantee for the
 * rest (touching, coplanar, parallel, degenerate) at GMP's price.
 */
#include "ccd.h"

#include <assert.h>
#include <float.h>
#include <math.h>

#include "ccd_impl.h"
#include "eft.h"

/* Unit roundoff of double (2^-53) and the outward factor applied to every radius so that the
 * rounding of the radius computation itself never shrinks it. */
#define U 0x1p-53
#define GROW (1.0 + 0x1p-48)
/* Four times the smallest subnormal: the absolute error of a product (and of each term of its
 * radius) that underflows. */
#define TINY 0x1p-1072
/* Halvings of [0, 1] before root isolation gives up (a piece of width 2^-12). */
#define IMP_CCD_FILTER_DEPTH 12
/* Half-width of the certified time interval around a root; well inside the promised accuracy. */
#define IMP_CCD_FILTER_HALF_WIDTH 2e-13

typedef struct ball {
    double m, r;
} ball;

typedef struct bvec {
    ball x[3];
} bvec;

static inline ball b_add(ball a, ball b) {
    double m = a.m + b.m;
    return (ball){m, (a.r + b.r + U * fabs(m)) * GROW};
}

static inline ball b_sub(ball a, ball b) {
    double m = a.m - b.m;
    return (ball){m, (a.r + b.r + U * fabs(m)) * GROW};
}

static inline ball b_mul(ball a, ball b) {
    double m = a.m * b.m;
    return (ball){m, (fabs(a.m) * b.r + a.r * (fabs(b.m) + b.r) + U * fabs(m) + TINY) * GROW};
}

/* +1 or -1 when certain, 0 when the ball holds zero (or is not finite) */
static inline int b_sign(ball a) {
    if (a.m > a.r) return 1;
    if (-a.m > a.r) return -1;
    return 0;
}

/* a - b for doubles: the rounded difference with its exact rounding error as the radius (zero
 * when the difference is exact, as it is for nearby points) */
static inline ball b_diff(double a, double b) {
    double e, m = imp_two_sum(a, -b, &e);
    return (ball){m, fabs(e)};
}

static inline bvec bv_sub(bvec a, bvec b) {
    return (bvec){{b_sub(a.x[0], b.x[0]), b_sub(a.x[1], b.x[1]), b_sub(a.x[2], b.x[2])}};
}

static inline bvec bv_cross(bvec a, bvec b) {
    return (bvec){{b_sub(b_mul(a.x[1], b.x[2]), b_mul(a.x[2], b.x[1])),
                   b_sub(b_mul(a.x[2], b.x[0]), b_mul(a.x[0], b.x[2])),
                   b_sub(b_mul(a.x[0], b.x[1]), b_mul(a.x[1], b.x[0]))}};
}

static inline ball bv_dot(bvec a, bvec b) {
    return b_add(b_add(b_mul(a.x[0], b.x[0]), b_mul(a.x[1], b.x[1])), b_mul(a.x[2], b.x[2]));
}

static inline ball bv_det(bvec a, bvec b, bvec c) { return bv_dot(bv_cross(a, b), c); }

static inline int bv_nonzero(bvec a) {
    return b_sign(a.x[0]) != 0 || b_sign(a.x[1]) != 0 || b_sign(a.x[2]) != 0;
}

/* ---- the cubic --------------------------------------------------------------------------------
 */

/* The three difference vectors whose determinant is the coplanarity cubic, at t = 0 (s) and t = 1
 * (e); the same vectors as imp_ccd_exact. */
static void differences(const imp_ccd_query *q, bvec s[3], bvec e[3]) {
    static const int VF[3][2] = {{2, 1}, {3, 1}, {0, 1}}, EE[3][2] = {{1, 0}, {3, 2}, {2, 0}};
    const int(*pairs)[2] = q->kind == IMP_CCD_VERTEX_FACE ? VF : EE;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) {
            int a = pairs[k][0], b = pairs[k][1];
            s[k].x[i] = b_diff(q->start[a][i], q->start[b][i]);
            e[k].x[i] = b_diff(q->end[a][i], q->end[b][i]);
        }
}

/* Bernstein coefficients of f(t) = det(D0(t), D1(t), D2(t)), Dk(t) = (1 - t) s[k] + t e[k], all
 * times 3: f = sum c[i] C(3, i) (1 - t)^(3 - i) t^i / 3 (a positive factor keeps every sign). */
static void bernstein(const bvec s[3], const bvec e[3], ball c[4]) {
    ball three = {3.0, 0.0};
    c[0] = b_mul(three, bv_det(s[0], s[1], s[2]));
    c[1] =
        b_add(b_add(bv_det(e[0], s[1], s[2]), bv_det(s[0], e[1], s[2])), bv_det(s[0], s[1], e[2]));
    c[2] =
        b_add(b_add(bv_det(s[0], e[1], e[2]), bv_det(e[0], s[1], e[2])), bv_det(e[0], e[1], s[2]));
    c[3] = b_mul(three, bv_det(e[0], e[1], e[2]));
}

/*
 * The Bernstein coefficients again, accurately: when the differences are exact doubles, each
 * determinant is a sum of 24 exact terms (two error-free products a triple) and each coefficient
 * one sum of 72 (the three determinants, or one thrice: no rounding in the factor 3), summed by
 * Sum2 of Ogita, Rump & Oishi ("Accurate sum and dot product", 2005) with its error bound
 * |res - s| <= u |s| + gamma(n - 1)^2 sum |p_i|: the coefficients come out as if computed in
 * twice the working precision, which certifies roots the plain balls leave a few 1e-12 wide
 * after heavy cancellation (nearly coplanar motion). 0, or -1 when a difference is inexact.
 */
#define ACC_TERMS 72

static int det_terms(const bvec *a, const bvec *b, const bvec *c, double *t) {
    static const int P[6][4] = {{0, 1, 2, 1},  {1, 2, 0, 1},  {2, 0, 1, 1},
                                {0, 2, 1, -1}, {1, 0, 2, -1}, {2, 1, 0, -1}};
    int n = 0;
    for (int k = 0; k < 6; k++) {
        double e1, e2, e3, sg = P[k][3];
        double p = imp_two_prod(a->x[P[k][0]].m, b->x[P[k][1]].m, &e1);
        double q1 = imp_two_prod(p, c->x[P[k][2]].m, &e2);
        double q2 = imp_two_prod(e1, c->x[P[k][2]].m, &e3);
        t[n++] = sg * q1, t[n++] = sg * e2, t[n++] = sg * q2, t[n++] = sg * e3;
    }
    return n;
}

static ball sum2(const double *t, int n) {
    double s = 0.0, comp = 0.0, abs_sum = 0.0;
    for (int i = 0; i < n; i++) {
        double e;
        s = imp_two_sum(s, t[i], &e);
        comp += e;
        abs_sum += fabs(t[i]);
    }
    double res = s + comp, g = n * U / (1.0 - n * U);
    return (ball){res, (2.0 * U * fabs(res) + 2.0 * g * g * abs_sum + 4.0 * n * TINY) * GROW};
}

static int bernstein_accurate(const bvec s[3], const bvec e[3], ball c[4]) {
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++)
            if (s[k].x[i].r != 0.0 || e[k].x[i].r != 0.0) return -1;
    double t[ACC_TERMS];
    int n = det_terms(&s[0], &s[1], &s[2], t);
    for (int i = 0; i < n; i++)
        t[n + i] = t[2 * n + i] = t[i];
    c[0] = sum2(t, 3 * n);
    n = det_terms(&e[0], &s[1], &s[2], t);
    n += det_terms(&s[0], &e[1], &s[2], t + n);
    n += det_terms(&s[0], &s[1], &e[2], t + n);
    c[1] = sum2(t, n);
    n = det_terms(&s[0], &e[1], &e[2], t);
    n += det_terms(&e[0], &s[1], &e[2], t + n);
    n += det_terms(&e[0], &e[1], &s[2], t + n);
    c[2] = sum2(t, n);
    n = det_terms(&e[0], &e[1], &e[2], t);
    for (int i = 0; i < n; i++)
        t[n + i] = t[2 * n + i] = t[i];
    c[3] = sum2(t, 3 * n);
    return 0;
}

static inline ball b_half(ball a, ball b) {
    ball s = b_add(a, b);
    return (ball){s.m * 0.5, s.r * 0.5 + TINY};
}

/* The Bernstein polynomial c of degree deg (2 or 3) at the exact double t in [0, 1] (de
 * Casteljau on balls) */
static ball bern_eval(const ball *c, int deg, double t) {
    ball w1 = {t, 0.0}, w0 = b_sub((ball){1.0, 0.0}, w1), b[4];
    for (int i = 0; i <= deg; i++)
        b[i] = c[i];
    for (int r = deg; r > 0; r--)
        for (int i = 0; i < r; i++)
            b[i] = b_add(b_mul(w0, b[i]), b_mul(w1, b[i + 1]));
    return b[0];
}

typedef struct piece {
    double lo, hi; /* one simple root inside; the polynomial of sign slo at lo, -slo at hi */
    int slo;
} piece;

/* Isolates the roots of the Bernstein polynomial c of degree deg (2 or 3) on [lo, hi]; 0 on
 * success (pieces appended in ascending order), -1 when it cannot decide. */
static int isolate(const ball *c, int deg, double lo, double hi, int depth, piece *out, int *n) {
    int s[4], certain = 1, changes = 0, last = 0;
    for (int i = 0; i <= deg; i++) {
        s[i] = b_sign(c[i]);
        if (s[i] == 0)
            certain = 0;
        else if (last != 0 && s[i] != last)
            changes++;
        if (s[i] != 0) last = s[i];
    }
    if (s[0] == 0 || s[deg] == 0) return -1;
    if (certain && changes == 0) return 0;
    if (certain && changes == 1) {
        if (*n >= 3) return -1;
        out[(*n)++] = (piece){lo, hi, s[0]};
        return 0;
    }
    if (depth >= IMP_CCD_FILTER_DEPTH) return -1;
    /* de Casteljau at 1/2: left[i] and right[deg - i] from the triangle's edges */
    ball left[4], right[4], b[4];
    for (int i = 0; i <= deg; i++)
        b[i] = c[i];
    for (int r = 0; r <= deg; r++) {
        left[r] = b[0];
        right[deg - r] = b[deg - r];
        for (int i = 0; i < deg - r; i++)
            b[i] = b_half(b[i], b[i + 1]);
    }
    double m = 0.5 * (lo + hi);
    if (isolate(left, deg, lo, m, depth + 1, out, n)) return -1;
    return isolate(right, deg, m, hi, depth + 1, out, n);
}

double imp_ccd_newton(const double *a, int n, double lo, double hi, int slo) {
    /* p and p' by Horner */
#define IMP_CCD_EVAL(x, v, d)                                                                      \
    do {                                                                                           \
        v = 0.0, d = 0.0;                                                                          \
        for (int i = n - 1; i >= 0; i--) {                                                         \
            d = d * (x) + v;                                                                       \
            v = v * (x) + a[i];                                                                    \
        }                                                                                          \
    } while (0)
    double flo, fhi, d;
    IMP_CCD_EVAL(lo, flo, d);
    IMP_CCD_EVAL(hi, fhi, d);
    /* start at the false-position point of the bracket */
    double t = flo != fhi ? (lo * fhi - hi * flo) / (fhi - flo) : 0.5 * (lo + hi);
    if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    for (int it = 0; it < 60; it++) {
        double v;
        IMP_CCD_EVAL(t, v, d);
        if (v == 0.0) break;
        /* keep the bracket on the signs as computed */
        if ((v > 0) == (slo > 0))
            lo = t, flo = v;
        else
            hi = t, fhi = v;
        double nt = d != 0.0 ? t - v / d : lo - 1.0;
        if (!(nt > lo && nt < hi)) /* Newton left the bracket: false position, else halve */
            nt = flo != fhi ? (lo * fhi - hi * flo) / (fhi - flo) : 0.5 * (lo + hi);
        if (!(nt > lo && nt < hi)) nt = 0.5 * (lo + hi);
        /* converged, or the bracket holds no double strictly inside; a step of a few ulps is
         * taken and the last (there the computed values are rounding noise, and chasing
         * them would only spend iterations) */
        if (nt == t || !(nt > lo && nt < hi)) break;
        int last = fabs(nt - t) <= 8.0 * DBL_EPSILON * fabs(t);
        t = nt;
        if (last) break;
    }
#undef IMP_CCD_EVAL
    return t;
}

/* A certified enclosure [*tl, *th] of the root in the piece, of width <= 2 half-width; 0 or -1. */
static int narrow(const ball *c, int deg, piece pc, double *tl, double *th) {
    /* monomial coefficients of the midpoints for Newton */
    double a[4];
    if (deg == 3) {
        double b0 = c[0].m, b1 = c[1].m, b2 = c[2].m, b3 = c[3].m;
        a[0] = b0, a[1] = 3.0 * (b1 - b0), a[2] = 3.0 * (b0 - 2.0 * b1 + b2);
        a[3] = b3 - 3.0 * b2 + 3.0 * b1 - b0;
    } else {
        a[0] = c[0].m, a[1] = 2.0 * (c[1].m - c[0].m), a[2] = c[0].m - 2.0 * c[1].m + c[2].m;
    }
    double t = imp_ccd_newton(a, deg + 1, pc.lo, pc.hi, pc.slo);
    double l = t - IMP_CCD_FILTER_HALF_WIDTH, h = t + IMP_CCD_FILTER_HALF_WIDTH;
    if (l <= pc.lo) l = pc.lo;
    if (h >= pc.hi) h = pc.hi;
    int sl = l == pc.lo ? pc.slo : b_sign(bern_eval(c, deg, l));
    int sh = h == pc.hi ? -pc.slo : b_sign(bern_eval(c, deg, h));
    if (sl != pc.slo || sh != -pc.slo) return -1;
    *tl = l;
    *th = h;
    return 0;
}

/* ---- the static test on a time ball ---------------------------------------------------------- */

enum { MISS = IMP_CCD_MISS, HIT = IMP_CCD_HIT, UNKNOWN = IMP_CCD_UNKNOWN };

static int orient(bvec dir, bvec v, bvec x, bvec n) {
    return b_sign(bv_dot(bv_cross(dir, bv_sub(x, v)), n));
}

/* The signs of the static test's quantities for the points pt: 1 when the normal (vertex-face:
 * n = (b - a) x (c - a); edge-edge: m = da x db) is certainly nonzero, with the orientations'
 * signs in sg[] (0: uncertain; vertex-face: the edges ab, bc, ca; edge-edge: b0 and b1 against
 * edge a, a0 and a1 against edge b); 0 otherwise. */
static int static_signs(imp_ccd_kind kind, const bvec *pt, int sg[4]) {
    if (kind == IMP_CCD_VERTEX_FACE) {
        bvec n = bv_cross(bv_sub(pt[2], pt[1]), bv_sub(pt[3], pt[1]));
        if (!bv_nonzero(n)) return 0;
        for (int i = 0; i < 3; i++)
            sg[i] = orient(bv_sub(pt[1 + (i + 1) % 3], pt[1 + i]), pt[1 + i], pt[0], n);
        return 1;
    }
    bvec da = bv_sub(pt[1], pt[0]), db = bv_sub(pt[3], pt[2]);
    bvec m = bv_cross(da, db);
    if (!bv_nonzero(m)) return 0;
    sg[0] = orient(da, pt[0], pt[2], m), sg[1] = orient(da, pt[0], pt[3], m);
    sg[2] = orient(db, pt[2], pt[0], m), sg[3] = orient(db, pt[2], pt[1], m);
    return 1;
}

/* the verdict of signs from static_signs (normal nonzero) */
static int verdict(imp_ccd_kind kind, const int sg[4]) {
    if (kind == IMP_CCD_VERTEX_FACE) {
        if (sg[0] < 0 || sg[1] < 0 || sg[2] < 0) return MISS;
        return sg[0] > 0 && sg[1] > 0 && sg[2] > 0 ? HIT : UNKNOWN;
    }
    if (sg[0] * sg[1] > 0 || sg[2] * sg[3] > 0) return MISS;
    return sg[0] * sg[1] < 0 && sg[2] * sg[3] < 0 ? HIT : UNKNOWN;
}

/* the four points for every t in [tl, th] */
static void positions(const imp_ccd_query *q, double tl, double th, bvec pt[4]) {
    ball t = {0.5 * (tl + th), 0.0};
    t.r = (t.m - tl > th - t.m ? t.m - tl : th - t.m) * GROW;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) {
            ball s = {q->start[k][i], 0.0};
            pt[k].x[i] = b_add(s, b_mul(t, b_diff(q->end[k][i], q->start[k][i])));
        }
}

int imp_ccd_balls_signs(const imp_ccd_query *q, double tl, double th, int sg[4]) {
    bvec pt[4];
    positions(q, tl, th, pt);
    return static_signs(q->kind, pt, sg);
}

/* the static test of q for every t in [tl, th] (see imp_ccd_balls_signs): HIT, MISS or UNKNOWN */
static int balls_static(const imp_ccd_query *q, double tl, double th) {
    int sg[4];
    return imp_ccd_balls_signs(q, tl, th, sg) ? verdict(q->kind, sg) : UNKNOWN;
}

int imp_ccd_balls_on_segment(const imp_ccd_query *q, int p, int a, int b, double tl, double th) {
    bvec pt[4];
    positions(q, tl, th, pt);
    bvec d = bv_sub(pt[b], pt[a]), e = bv_sub(pt[p], pt[a]);
    if (bv_nonzero(bv_cross(d, e))) return MISS;
    ball k = bv_dot(e, d);
    if (b_sign(k) < 0 || b_sign(b_sub(bv_dot(d, d), k)) < 0) return MISS;
    return UNKNOWN;
}

/* ---- motion in a plane normal to an axis ---------------------------------------------------- */

/* An axis along which the four points share one coordinate at t = 0 and one at t = 1: they then
 * stay in a plane normal to it (the cubic vanishes identically) and the query is 2D in the other
 * two coordinates; -1 when there is none. */
static int flat_axis(const imp_ccd_query *q) {
    for (int d = 0; d < 3; d++) {
        int same = 1;
        for (int k = 1; k < 4 && same; k++)
            same = q->start[k][d] == q->start[0][d] && q->end[k][d] == q->end[0][d];
        if (same) return d;
    }
    return -1;
}

static inline ball cross2(const bvec *a, const bvec *b, int i, int j) {
    return b_sub(b_mul(a->x[i], b->x[j]), b_mul(a->x[j], b->x[i]));
}

static inline ball dot2(const bvec *a, const bvec *b, int i, int j) {
    return b_add(b_mul(a->x[i], b->x[i]), b_mul(a->x[j], b->x[j]));
}

/* differences point a - point b of q at t = 0 (s) and t = 1 (e) */
static void diff_ends(const imp_ccd_query *q, int a, int b, bvec *s, bvec *e) {
    for (int i = 0; i < 3; i++) {
        s->x[i] = b_diff(q->start[a][i], q->start[b][i]);
        e->x[i] = b_diff(q->end[a][i], q->end[b][i]);
    }
}

/* the 2D static test at t = 0 in the plane of axes i, j: HIT, MISS or UNKNOWN */
static int flat_static0(const imp_ccd_query *q, int i, int j) {
    bvec s, e, u, v;
    if (q->kind == IMP_CCD_VERTEX_FACE) {
        int pos = 0, neg = 0;
        for (int k = 0; k < 3; k++) {
            int a = 1 + k, b = 1 + (k + 1) % 3;
            diff_ends(q, b, a, &u, &e);
            diff_ends(q, 0, a, &v, &e);
            int o = b_sign(cross2(&u, &v, i, j));
            if (o == 0) return UNKNOWN;
            pos += o > 0;
            neg += o < 0;
        }
        return pos == 3 || neg == 3 ? HIT : MISS;
    }
    /* edge-edge: each segment's ends strictly on one side of the other's line: apart */
    static const int E[2][2] = {{0, 1}, {2, 3}};
    int cross = 0;
    for (int k = 0; k < 2; k++) {
        const int *A = E[k], *B = E[1 - k];
        diff_ends(q, A[1], A[0], &u, &e);
        diff_ends(q, B[0], A[0], &v, &e);
        diff_ends(q, B[1], A[0], &s, &e);
        int o1 = b_sign(cross2(&u, &v, i, j)), o2 = b_sign(cross2(&u, &s, i, j));
        if (o1 * o2 > 0) return MISS;
        cross += o1 * o2 < 0;
    }
    return cross == 2 ? HIT : UNKNOWN;
}

/* Earliest t at which point p of q lies on the closed segment [a, b] (2D, axes i, j): 1 with
 * *t, 0 when never, -1 when undecided. The collinearity g(t) = (b - a) x (p - a) is a quadratic,
 * in Bernstein form from the ends; at each of its roots p must lie between a and b. */
static int flat_point_segment(const imp_ccd_query *q, int i, int j, int p, int a, int b,
                              double *t) {
    bvec d0, d1, e0, e1;
    diff_ends(q, b, a, &d0, &d1);
    diff_ends(q, p, a, &e0, &e1);
    ball g0 = cross2(&d0, &e0, i, j), g2 = cross2(&d1, &e1, i, j);
    ball c[3] = {{2.0 * g0.m, 2.0 * g0.r},
                 b_add(cross2(&d0, &e1, i, j), cross2(&d1, &e0, i, j)),
                 {2.0 * g2.m, 2.0 * g2.r}};
    piece pieces[3];
    int n = 0;
    if (isolate(c, 2, 0.0, 1.0, 0, pieces, &n)) return -1;
    for (int k = 0; k < n; k++) {
        double tl, th;
        if (narrow(c, 2, pieces[k], &tl, &th)) return -1;
        bvec pt[4];
        positions(q, tl, th, pt);
        bvec d = bv_sub(pt[b], pt[a]), e = bv_sub(pt[p], pt[a]);
        ball along = dot2(&e, &d, i, j);
        int s1 = b_sign(along), s2 = b_sign(b_sub(dot2(&d, &d, i, j), along));
        if (s1 < 0 || s2 < 0) continue; /* on the line, off the segment */
        if (s1 == 0 || s2 == 0) return -1;
        *t = 0.5 * (tl + th);
        return 1;
    }
    return 0;
}

/* The query when its motion is flat along `axis`: 0 with *res set, -1 when undecided. Contact
 * at t = 0, or a first contact later, which puts a point on a closed segment (see
 * core/ccd_exact.c: a transversal contact would have existed a moment earlier). */
static int flat(const imp_ccd_query *q, int axis, imp_ccd_result *res) {
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    int at0 = flat_static0(q, i, j);
    if (at0 == UNKNOWN) return -1;
    *res = (imp_ccd_result){.hit = at0 == HIT, .time = 0.0, .exact = 0};
    if (at0 == HIT) return 0;
    static const int VF[3][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 1}};
    static const int EE[4][3] = {{0, 2, 3}, {1, 2, 3}, {2, 0, 1}, {3, 0, 1}};
    int m = q->kind == IMP_CCD_VERTEX_FACE ? 3 : 4;
    for (int k = 0; k < m; k++) {
        const int *sub = q->kind == IMP_CCD_VERTEX_FACE ? VF[k] : EE[k];
        double t;
        int r = flat_point_segment(q, i, j, sub[0], sub[1], sub[2], &t);
        if (r < 0) return -1;
        if (r == 1 && (!res->hit || t < res->time)) *res = (imp_ccd_result){1, t, 0};
    }
    return 0;
}

/* A point of one primitive equal to a point of the other at t = 0: contact at t = 0 (a vertex
 * on its own face's corner, edges sharing an end: common in meshes). */
static int shared_point(const imp_ccd_query *q) {
    int first = q->kind == IMP_CCD_VERTEX_FACE ? 1 : 2;
    for (int a = 0; a < first; a++)
        for (int b = first; b < 4; b++)
            if (q->start[a][0] == q->start[b][0] && q->start[a][1] == q->start[b][1] &&
                q->start[a][2] == q->start[b][2])
                return 1;
    return 0;
}

imp_ccd_result imp_ccd(const imp_ccd_query *q) {
    if (shared_point(q)) return (imp_ccd_result){.hit = 1, .time = 0.0, .exact = 0};
    int axis = flat_axis(q);
    if (axis >= 0) {
        imp_ccd_result r;
        return flat(q, axis, &r) == 0 ? r : imp_ccd_exact(q);
    }
    bvec s[3], e[3];
    ball c[4];
    differences(q, s, e);
    bernstein(s, e, c);
    piece pieces[3];
    int n = 0, gmp = 0; /* gmp: a root's static test needed the exact path */
    if (isolate(c, 3, 0.0, 1.0, 0, pieces, &n) == 0) {
        for (int i = 0; i < n; i++) {
            double tl, th;
            if (narrow(c, 3, pieces[i], &tl, &th)) {
                /* an ill-conditioned root: narrow it on accurate coefficients */
                ball acc[4];
                if (bernstein_accurate(s, e, acc) || narrow(acc, 3, pieces[i], &tl, &th)) break;
            }
            int in = balls_static(q, tl, th);
            if (in == UNKNOWN) {
                /* touching at this root (an end of one edge exactly on the other's line, say):
                 * the exact test at this root alone, not the whole query again */
                in = imp_ccd_exact_static_at(q, tl, th);
                gmp = 1;
            }
            if (in == UNKNOWN) break;
            if (in == HIT) return (imp_ccd_result){.hit = 1, .time = 0.5 * (tl + th), .exact = gmp};
            if (i == n - 1) return (imp_ccd_result){.hit = 0, .time = 0.0, .exact = gmp};
        }
        if (n == 0) return (imp_ccd_result){.hit = 0, .time = 0.0, .exact = 0};
    }
    return imp_ccd_exact(q);
}
