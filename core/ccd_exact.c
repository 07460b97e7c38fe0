/*
 * ccd_exact.c - the exact path of moving-triangle collision: GMP rationals.
 *
 * DESIGN
 * What: vertex-face and edge-edge contact under linear motion over [0, 1],
 * decided exactly for the doubles given, with the earliest contact time.
 *
 * How: every double is a dyadic rational, so each point's path x(t) = x0 +
 * t (x1 - x0) has exact rational coefficients (mpq_t), and so has every
 * polynomial built from them. Contact needs the four points coplanar, i.e.
 * a root of the coplanarity cubic f(t) = det(...) (Provot, "Collision and
 * self-collision handling in cloth model dedicated to design garments",
 * 1997; Bridson, Fedkiw & Anderson, SIGGRAPH 2002). When f is not
 * identically zero its distinct real roots in [0, 1] are isolated exactly:
 * the square-free part f / gcd(f, f') and its Sturm sequence, bisected at
 * dyadic points (a root that lands on one is kept as that exact rational).
 * At each root, earliest first, the static inside test is decided by the
 * signs of polynomials at the root, an algebraic number: q(r) = 0 iff
 * gcd(f, q) changes sign on the isolating interval (the gcd's roots are
 * simple roots of the square-free f, at most one of them in the interval);
 * otherwise the interval is bisected until |q(lo)| exceeds a Lipschitz bound
 * of q times its width, so q keeps the sign of q(lo) on it (the "sign at an
 * isolated algebraic number" of Basu, Pollack & Roy, "Algorithms in Real
 * Algebraic Geometry", ch. 10, with bisection instead of Thom encodings).
 * The static tests: vertex-face, with n = (b - a) x (c - a) nonzero at r,
 * the three edge orientations ((w - v) x (p - v)) . n all >= 0; with n = 0
 * (a zero-area face) the vertex on one of the three closed edges.
 * Edge-edge, with m = da x db nonzero (lines not parallel), each segment's
 * endpoints not strictly on one side of the other's line; otherwise an
 * endpoint of one on the other closed segment. A point on a closed segment
 * [a, b]: (b - a) x (p - a) = 0 and 0 <= (p - a).(b - a) <= |b - a|^2, or p
 * = a when a = b.
 * When f vanishes identically the motion is coplanar throughout: contact at
 * t = 0, or a first contact later, which must then put a point on a closed
 * segment (the vertex on an edge; an endpoint on the other edge): a
 * transversal contact inside a non-degenerate face or between non-parallel
 * edges would have existed a moment earlier. Each point-segment problem is
 * solved the same way one level down: the roots of a nonzero component of
 * (b - a) x (p - a), or, when that vector vanishes identically (collinear
 * motion), contact at t = 0 or the first time p meets a or b (linear).
 *
 * Two shortcuts keep it affordable without giving up exactness: a root is
 * narrowed by Newton's method on doubles and confirmed by the exact signs of
 * f at t - delta and t + delta (two evaluations instead of some 45
 * halvings), and each static test is first tried in the filter's ball
 * arithmetic over the narrowed interval (core/ccd_impl.h), the polynomials
 * on rationals being built only when that cannot decide (touching).
 *
 * Why this way: every decision is a sign of an exact rational or of a
 * polynomial with rational coefficients at an exactly isolated root, so
 * there is nothing to tune and no tolerance: no false positive, no false
 * negative. It is slow (microseconds to a millisecond), which is why
 * core/ccd.c runs it only when its floating-point filter cannot decide.
 */
#include <assert.h>
#include <gmp.h>
#include <math.h>
#include <stddef.h>

#include "ccd.h"
#include "ccd_impl.h"

#define QP_N 5 /* coefficients: degree <= 4 (an orientation times a normal) */

/* sum c[i] t^i, i < n; c[n - 1] != 0, n = 0 the zero polynomial */
typedef struct qpoly {
    int n;
    mpq_t c[QP_N];
} qpoly;

typedef struct qvec {
    qpoly x[3];
} qvec;

/* A real root of the square-free f in [0, 1]: exactly lo when `exact`, else the
 * only root of f in the open (lo, hi), f(lo) of sign slo. */
typedef struct qroot {
    int exact, slo;
    mpq_t lo, hi;
    const qpoly *f;
} qroot;

static void qp_init(qpoly *p) {
    p->n = 0;
    for (int i = 0; i < QP_N; i++)
        mpq_init(p->c[i]);
}

static void qp_clear(qpoly *p) {
    for (int i = 0; i < QP_N; i++)
        mpq_clear(p->c[i]);
}

static void qp_trim(qpoly *p) {
    while (p->n > 0 && mpq_sgn(p->c[p->n - 1]) == 0)
        p->n--;
}

static void qp_set(qpoly *d, const qpoly *s) {
    if (d == s) return;
    for (int i = 0; i < s->n; i++)
        mpq_set(d->c[i], s->c[i]);
    d->n = s->n;
}

/* d = a + sign * b; d may be a or b */
static void qp_axpy(qpoly *d, const qpoly *a, const qpoly *b, int sign) {
    int n = a->n > b->n ? a->n : b->n;
    for (int i = 0; i < n; i++) {
        if (i < a->n && i < b->n) {
            if (sign > 0)
                mpq_add(d->c[i], a->c[i], b->c[i]);
            else
                mpq_sub(d->c[i], a->c[i], b->c[i]);
        } else if (i < a->n) {
            mpq_set(d->c[i], a->c[i]);
        } else if (sign > 0) {
            mpq_set(d->c[i], b->c[i]);
        } else {
            mpq_neg(d->c[i], b->c[i]);
        }
    }
    d->n = n;
    qp_trim(d);
}

/* d = a * b; d must be neither */
static void qp_mul(qpoly *d, const qpoly *a, const qpoly *b, mpq_t tmp) {
    assert(d != a && d != b);
    if (a->n == 0 || b->n == 0) {
        d->n = 0;
        return;
    }
    int n = a->n + b->n - 1;
    assert(n <= QP_N);
    for (int i = 0; i < n; i++)
        mpq_set_ui(d->c[i], 0, 1);
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            mpq_mul(tmp, a->c[i], b->c[j]);
            mpq_add(d->c[i + j], d->c[i + j], tmp);
        }
    d->n = n;
    qp_trim(d);
}

/* out = p(x) by Horner's rule */
static void qp_eval(mpq_t out, const qpoly *p, const mpq_t x) {
    if (p->n == 0) {
        mpq_set_ui(out, 0, 1);
        return;
    }
    mpq_set(out, p->c[p->n - 1]);
    for (int i = p->n - 2; i >= 0; i--) {
        mpq_mul(out, out, x);
        mpq_add(out, out, p->c[i]);
    }
}

static int qp_sign_at(const qpoly *p, const mpq_t x) {
    mpq_t v;
    mpq_init(v);
    qp_eval(v, p, x);
    int s = mpq_sgn(v);
    mpq_clear(v);
    return s;
}

static void qp_deriv(qpoly *d, const qpoly *p) {
    assert(d != p);
    for (int i = 1; i < p->n; i++) {
        mpq_set_ui(d->c[i - 1], (unsigned long)i, 1);
        mpq_mul(d->c[i - 1], d->c[i - 1], p->c[i]);
    }
    d->n = p->n > 0 ? p->n - 1 : 0;
    qp_trim(d);
}

/* a = q b + r with deg r < deg b; b nonzero; q, r distinct from a, b and each other */
static void qp_divrem(qpoly *q, qpoly *r, const qpoly *a, const qpoly *b) {
    assert(b->n > 0);
    mpq_t coef, tmp;
    mpq_init(coef);
    mpq_init(tmp);
    qp_set(r, a);
    q->n = a->n >= b->n ? a->n - b->n + 1 : 0;
    for (int i = 0; i < q->n; i++)
        mpq_set_ui(q->c[i], 0, 1);
    while (r->n >= b->n) {
        int shift = r->n - b->n;
        mpq_div(coef, r->c[r->n - 1], b->c[b->n - 1]);
        mpq_set(q->c[shift], coef);
        for (int i = 0; i < b->n; i++) {
            mpq_mul(tmp, coef, b->c[i]);
            mpq_sub(r->c[i + shift], r->c[i + shift], tmp);
        }
        assert(mpq_sgn(r->c[r->n - 1]) == 0);
        r->n--;
        qp_trim(r);
    }
    qp_trim(q);
    mpq_clear(coef);
    mpq_clear(tmp);
}

/* g = gcd(a, b) (any nonzero multiple: only its roots matter); not both zero */
static void qp_gcd(qpoly *g, const qpoly *a, const qpoly *b) {
    qpoly x, y, q, r;
    qp_init(&x);
    qp_init(&y);
    qp_init(&q);
    qp_init(&r);
    qp_set(&x, a);
    qp_set(&y, b);
    while (y.n > 0) {
        qp_divrem(&q, &r, &x, &y);
        qp_set(&x, &y);
        qp_set(&y, &r);
    }
    qp_set(g, &x);
    qp_clear(&x);
    qp_clear(&y);
    qp_clear(&q);
    qp_clear(&r);
}

/* d = the square-free part of the nonzero p: p / gcd(p, p') */
static void qp_squarefree(qpoly *d, const qpoly *p) {
    qpoly dp, g, r;
    qp_init(&dp);
    qp_init(&g);
    qp_init(&r);
    qp_deriv(&dp, p);
    if (dp.n == 0) {
        qp_set(d, p);
    } else {
        qp_gcd(&g, p, &dp);
        if (g.n <= 1)
            qp_set(d, p);
        else
            qp_divrem(d, &r, p, &g);
    }
    qp_clear(&dp);
    qp_clear(&g);
    qp_clear(&r);
}

/* ---- roots ---------------------------------------------------------------------------------- */

static void root_init(qroot *r, const qpoly *f) {
    mpq_init(r->lo);
    mpq_init(r->hi);
    r->exact = 1;
    r->slo = 0;
    r->f = f;
}

static void root_clear(qroot *r) {
    mpq_clear(r->lo);
    mpq_clear(r->hi);
}

static void root_set_exact(qroot *r, const mpq_t x) {
    r->exact = 1;
    mpq_set(r->lo, x);
    mpq_set(r->hi, x);
}

/* Halves the isolating interval of r (it may become exact). */
static void root_bisect(qroot *r, mpq_t m) {
    assert(!r->exact);
    mpq_add(m, r->lo, r->hi);
    mpq_div_2exp(m, m, 1);
    int s = qp_sign_at(r->f, m);
    if (s == 0)
        root_set_exact(r, m);
    else if (s == r->slo)
        mpq_set(r->lo, m);
    else
        mpq_set(r->hi, m);
}

/*
 * Narrows r to [t - delta, t + delta] around a double t found by Newton's method on the
 * coefficients rounded to double, when the exact signs of f there confirm the bracket (two
 * evaluations instead of the many halvings bisection would take). Returns 1 when it did (r may
 * also have become exact), 0 when r is unchanged.
 */
static int root_narrow(qroot *r, double delta) {
    if (r->exact) return 1;
    const qpoly *f = r->f;
    double c[QP_N], lo = mpq_get_d(r->lo), hi = mpq_get_d(r->hi);
    for (int i = 0; i < f->n; i++)
        c[i] = mpq_get_d(f->c[i]);
    double t = imp_ccd_newton(c, f->n, lo, hi, r->slo);
    int done = 0;
    mpq_t l, h;
    mpq_init(l);
    mpq_init(h);
    mpq_set_d(l, t - delta);
    mpq_set_d(h, t + delta);
    if (mpq_cmp(l, r->lo) > 0 && mpq_cmp(h, r->hi) < 0) {
        int sl = qp_sign_at(f, l);
        if (sl == 0) {
            root_set_exact(r, l);
            done = 1;
        } else if (sl == r->slo) {
            int sh = qp_sign_at(f, h);
            if (sh == 0) {
                root_set_exact(r, h);
                done = 1;
            } else if (sh == -r->slo) {
                mpq_set(r->lo, l);
                mpq_set(r->hi, h);
                done = 1;
            }
        }
    }
    mpq_clear(l);
    mpq_clear(h);
    return done;
}

/* The root as a double within IMP_CCD_TIME_ACCURACY (refines r). */
static double root_time(qroot *r) {
    mpq_t m, w;
    mpq_init(m);
    mpq_init(w);
    root_narrow(r, 0x1p-47);
    for (;;) {
        if (r->exact) break;
        mpq_sub(w, r->hi, r->lo);
        if (mpq_get_d(w) < 0x1p-45) break;
        root_bisect(r, m);
    }
    double t;
    if (r->exact) {
        t = mpq_get_d(r->lo);
    } else {
        mpq_add(m, r->lo, r->hi);
        mpq_div_2exp(m, m, 1);
        t = mpq_get_d(m);
    }
    mpq_clear(m);
    mpq_clear(w);
    return t;
}

/* Sign of q at the root r (refines r). */
static int root_sign(qroot *r, const qpoly *q) {
    if (q->n == 0) return 0;
    if (q->n == 1) return mpq_sgn(q->c[0]);
    /* a narrow interval first (cheap), so that the bound below usually settles it at once */
    root_narrow(r, 0x1p-52);
    if (r->exact) return qp_sign_at(q, r->lo);
    /* |q(lo)| > L (hi - lo), L >= max |q'| on [0, 1], keeps q off zero on the interval */
    int result = 2;
    mpq_t lip, v, w, tmp;
    mpq_init(lip);
    mpq_init(v);
    mpq_init(w);
    mpq_init(tmp);
    for (int i = 1; i < q->n; i++) {
        mpq_abs(tmp, q->c[i]);
        mpq_set_ui(w, (unsigned long)i, 1);
        mpq_mul(tmp, tmp, w);
        mpq_add(lip, lip, tmp);
    }
    for (int pass = 0; result == 2; pass++) {
        if (r->exact) {
            result = qp_sign_at(q, r->lo);
            break;
        }
        if (pass == 1) { /* not settled at once: is q(r) zero? */
            qpoly g;
            qp_init(&g);
            qp_gcd(&g, r->f, q);
            if (g.n >= 2) {
                int sl = qp_sign_at(&g, r->lo), sh = qp_sign_at(&g, r->hi);
                assert(sl != 0 && sh != 0);
                if (sl != sh) result = 0;
            }
            qp_clear(&g);
            if (result == 0) break;
        }
        qp_eval(v, q, r->lo);
        mpq_sub(w, r->hi, r->lo);
        mpq_mul(w, w, lip);
        mpq_abs(tmp, v);
        if (mpq_cmp(tmp, w) > 0) {
            result = mpq_sgn(v);
            break;
        }
        root_bisect(r, tmp);
    }
    mpq_clear(lip);
    mpq_clear(v);
    mpq_clear(w);
    mpq_clear(tmp);
    return result;
}

typedef struct sturm {
    int n;
    qpoly s[QP_N];
} sturm;

static int sturm_var(const sturm *st, const mpq_t x) {
    int v = 0, last = 0;
    for (int i = 0; i < st->n; i++) {
        int s = qp_sign_at(&st->s[i], x);
        if (s == 0) continue;
        if (last != 0 && s != last) v++;
        last = s;
    }
    return v;
}

/* Roots of f in (a, b], with V(a) = va, V(b) = vb, ascending into out. */
static void isolate_rec(const sturm *st, const qpoly *f, const mpq_t a, const mpq_t b, int va,
                        int vb, qroot *out, int *n) {
    int cnt = va - vb;
    if (cnt <= 0) return;
    if (cnt == 1) {
        if (qp_sign_at(f, b) == 0) {
            root_set_exact(&out[*n], b);
            (*n)++;
            return;
        }
        int sa = qp_sign_at(f, a);
        if (sa != 0) {
            qroot *r = &out[*n];
            r->exact = 0;
            r->slo = sa;
            mpq_set(r->lo, a);
            mpq_set(r->hi, b);
            (*n)++;
            return;
        }
    }
    mpq_t m;
    mpq_init(m);
    mpq_add(m, a, b);
    mpq_div_2exp(m, m, 1);
    int vm = sturm_var(st, m);
    isolate_rec(st, f, a, m, va, vm, out, n);
    isolate_rec(st, f, m, b, vm, vb, out, n);
    mpq_clear(m);
}

/* The distinct roots of the square-free, nonzero f in [0, 1], ascending; out[] initialised with
 * root_init(f). Returns their number (<= 3). */
static int isolate(const qpoly *f, qroot *out) {
    assert(f->n > 0 && f->n <= 4);
    int n = 0;
    mpq_t zero, one;
    mpq_init(zero);
    mpq_init(one);
    mpq_set_ui(one, 1, 1);
    if (f->n == 2) {
        mpq_t x;
        mpq_init(x);
        mpq_div(x, f->c[0], f->c[1]);
        mpq_neg(x, x);
        if (mpq_sgn(x) >= 0 && mpq_cmp(x, one) <= 0) root_set_exact(&out[n++], x);
        mpq_clear(x);
    } else if (f->n > 2) {
        sturm st;
        for (int i = 0; i < QP_N; i++)
            qp_init(&st.s[i]);
        qp_set(&st.s[0], f);
        qp_deriv(&st.s[1], f);
        st.n = 2;
        qpoly q;
        qp_init(&q);
        while (st.s[st.n - 1].n > 1) {
            assert(st.n < QP_N);
            qp_divrem(&q, &st.s[st.n], &st.s[st.n - 2], &st.s[st.n - 1]);
            for (int i = 0; i < st.s[st.n].n; i++)
                mpq_neg(st.s[st.n].c[i], st.s[st.n].c[i]);
            if (st.s[st.n].n == 0) break;
            st.n++;
        }
        qp_clear(&q);
        if (qp_sign_at(f, zero) == 0) root_set_exact(&out[n++], zero);
        isolate_rec(&st, f, zero, one, sturm_var(&st, zero), sturm_var(&st, one), out, &n);
        for (int i = 0; i < QP_N; i++)
            qp_clear(&st.s[i]);
    }
    mpq_clear(zero);
    mpq_clear(one);
    return n;
}

/* ---- vectors of polynomials ----------------------------------------------------------------- */

typedef struct work {
    qvec v[8]; /* scratch vectors */
    qpoly p[4];
    mpq_t tmp;
    const imp_ccd_query *q; /* the query, for the ball tests */
    const qvec *pt;         /* its four points' paths */
} work;

/* Doubles [*tl, *th] around the root r (narrowed first, so the ball tests see a tiny interval). */
static void root_doubles(qroot *r, double *tl, double *th) {
    root_narrow(r, 0x1p-52);
    *tl = mpq_get_d(r->lo); /* rounds towards zero: <= lo */
    *th = nextafter(mpq_get_d(r->hi), 2.0);
    if (*tl < 0.0) *tl = 0.0;
    if (*th > 1.0) *th = 1.0;
}

static void qv_init(qvec *v) {
    for (int i = 0; i < 3; i++)
        qp_init(&v->x[i]);
}

static void qv_clear(qvec *v) {
    for (int i = 0; i < 3; i++)
        qp_clear(&v->x[i]);
}

static void qv_sub(qvec *d, const qvec *a, const qvec *b) {
    for (int i = 0; i < 3; i++)
        qp_axpy(&d->x[i], &a->x[i], &b->x[i], -1);
}

/* d = a x b (d distinct from a, b) */
static void qv_cross(qvec *d, const qvec *a, const qvec *b, qpoly *t, mpq_t tmp) {
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        qp_mul(&d->x[i], &a->x[j], &b->x[k], tmp);
        qp_mul(t, &a->x[k], &b->x[j], tmp);
        qp_axpy(&d->x[i], &d->x[i], t, -1);
    }
}

/* d = a . b (d distinct from every component) */
static void qv_dot(qpoly *d, const qvec *a, const qvec *b, qpoly *t, mpq_t tmp) {
    qp_mul(d, &a->x[0], &b->x[0], tmp);
    for (int i = 1; i < 3; i++) {
        qp_mul(t, &a->x[i], &b->x[i], tmp);
        qp_axpy(d, d, t, 1);
    }
}

static int qv_zero_at(qroot *r, const qvec *v) {
    for (int i = 0; i < 3; i++)
        if (root_sign(r, &v->x[i]) != 0) return 0;
    return 1;
}

static int qv_is_zero(const qvec *v) { return v->x[0].n == 0 && v->x[1].n == 0 && v->x[2].n == 0; }

/* p on the closed segment [a, b] at the root r */
static int on_segment(work *w, qroot *r, const qvec *p, const qvec *a, const qvec *b) {
    double tl, th;
    root_doubles(r, &tl, &th);
    if (imp_ccd_balls_on_segment(w->q, (int)(p - w->pt), (int)(a - w->pt), (int)(b - w->pt), tl,
                                 th) == IMP_CCD_MISS)
        return 0;
    qvec *d = &w->v[0], *e = &w->v[1], *c = &w->v[2];
    qpoly *len2 = &w->p[0], *k = &w->p[1], *t = &w->p[2];
    qv_sub(d, b, a);
    qv_sub(e, p, a);
    qv_dot(len2, d, d, t, w->tmp);
    if (root_sign(r, len2) == 0) {
        qv_dot(k, e, e, t, w->tmp);
        return root_sign(r, k) == 0;
    }
    qv_cross(c, d, e, t, w->tmp);
    if (!qv_zero_at(r, c)) return 0;
    qv_dot(k, e, d, t, w->tmp);
    if (root_sign(r, k) < 0) return 0;
    qp_axpy(t, len2, k, -1);
    return root_sign(r, t) >= 0;
}

/* orientation of x against the directed line (v, v + dir) around the normal nrm: ((dir) x (x -
 * v)).nrm */
static int orient_at(work *w, qroot *r, const qvec *dir, const qvec *v, const qvec *x,
                     const qvec *nrm) {
    qvec *e = &w->v[4], *c = &w->v[5];
    qpoly *o = &w->p[3], *t = &w->p[2];
    qv_sub(e, x, v);
    qv_cross(c, dir, e, t, w->tmp);
    qv_dot(o, c, nrm, t, w->tmp);
    return root_sign(r, o);
}

/* vertex p on the closed triangle abc at r, the four points coplanar there */
static int static_vf(work *w, qroot *r, const qvec *pt) {
    double tl, th;
    int sg[4];
    root_doubles(r, &tl, &th);
    int nonzero = imp_ccd_balls_signs(w->q, tl, th, sg);
    if (nonzero && (sg[0] < 0 || sg[1] < 0 || sg[2] < 0)) return 0;
    if (nonzero && sg[0] > 0 && sg[1] > 0 && sg[2] > 0) return 1;
    const qvec *p = &pt[0], *a = &pt[1], *b = &pt[2], *c = &pt[3];
    qvec *n = &w->v[6], *e1 = &w->v[3], *e2 = &w->v[7];
    qv_sub(e1, b, a);
    qv_sub(e2, c, a);
    qv_cross(n, e1, e2, &w->p[2], w->tmp);
    if (nonzero || !qv_zero_at(r, n)) {
        const qvec *tri[3] = {a, b, c};
        for (int i = 0; i < 3; i++) {
            const qvec *v0 = tri[i], *v1 = tri[(i + 1) % 3];
            if (nonzero && sg[i] != 0) continue; /* certain, and not negative */
            qv_sub(e1, v1, v0);
            if (orient_at(w, r, e1, v0, p, n) < 0) return 0;
        }
        return 1;
    }
    return on_segment(w, r, p, a, b) || on_segment(w, r, p, b, c) || on_segment(w, r, p, c, a);
}

/* segments [a0, a1] and [b0, b1] meet at r, the four points coplanar there */
static int static_ee(work *w, qroot *r, const qvec *pt) {
    double tl, th;
    int sg[4];
    root_doubles(r, &tl, &th);
    int nonzero = imp_ccd_balls_signs(w->q, tl, th, sg);
    if (nonzero && (sg[0] * sg[1] > 0 || sg[2] * sg[3] > 0)) return 0;
    if (nonzero && sg[0] * sg[1] < 0 && sg[2] * sg[3] < 0) return 1;
    const qvec *a0 = &pt[0], *a1 = &pt[1], *b0 = &pt[2], *b1 = &pt[3];
    qvec *m = &w->v[6], *da = &w->v[3], *db = &w->v[7];
    qv_sub(da, a1, a0);
    qv_sub(db, b1, b0);
    qv_cross(m, da, db, &w->p[2], w->tmp);
    if (nonzero || !qv_zero_at(r, m)) {
        /* the orientations the balls left uncertain, exactly */
        const qvec *dir[4] = {da, da, db, db}, *from[4] = {a0, a0, b0, b0},
                   *x[4] = {b0, b1, a0, a1};
        int o[4];
        for (int i = 0; i < 4; i++)
            o[i] = nonzero && sg[i] != 0 ? sg[i] : orient_at(w, r, dir[i], from[i], x[i], m);
        return o[0] * o[1] <= 0 && o[2] * o[3] <= 0;
    }
    return on_segment(w, r, a0, b0, b1) || on_segment(w, r, a1, b0, b1) ||
           on_segment(w, r, b0, a0, a1) || on_segment(w, r, b1, a0, a1);
}

/* earliest t in [0, 1] with p(t) = a(t), or -1 */
static double vertex_vertex(work *w, const qvec *p, const qvec *a) {
    qvec *d = &w->v[0];
    qv_sub(d, p, a);
    if (qv_is_zero(d)) return 0.0;
    int k = -1;
    for (int i = 0; i < 3; i++)
        if (d->x[i].n == 2) k = i;
    if (k < 0) return -1.0; /* constant, nonzero */
    qpoly *f = &w->p[0];
    qp_set(f, &d->x[k]);
    qroot r;
    root_init(&r, f);
    double t = -1.0;
    if (isolate(f, &r) == 1 && qv_zero_at(&r, d)) t = mpq_get_d(r.lo);
    root_clear(&r);
    return t;
}

/* earliest t in [0, 1] with p(t) on the closed segment [a(t), b(t)], or -1 */
static double point_segment(work *w, const qvec *p, const qvec *a, const qvec *b) {
    qvec cr, d, e;
    qv_init(&cr);
    qv_init(&d);
    qv_init(&e);
    qv_sub(&d, b, a);
    qv_sub(&e, p, a);
    qv_cross(&cr, &d, &e, &w->p[2], w->tmp);
    double t = -1.0;
    if (qv_is_zero(&cr)) {
        qroot r0;
        root_init(&r0, NULL); /* exact 0 */
        if (on_segment(w, &r0, p, a, b)) {
            t = 0.0;
        } else {
            double ta = vertex_vertex(w, p, a), tb = vertex_vertex(w, p, b);
            t = ta < 0 ? tb : tb < 0 ? ta : fmin(ta, tb);
        }
        root_clear(&r0);
    } else {
        int k = 0;
        while (cr.x[k].n == 0)
            k++;
        qpoly fs;
        qp_init(&fs);
        qp_squarefree(&fs, &cr.x[k]);
        qroot roots[3];
        for (int i = 0; i < 3; i++)
            root_init(&roots[i], &fs);
        int n = fs.n > 1 ? isolate(&fs, roots) : 0;
        for (int i = 0; i < n && t < 0; i++)
            if (qv_zero_at(&roots[i], &cr) && on_segment(w, &roots[i], p, a, b))
                t = root_time(&roots[i]);
        for (int i = 0; i < 3; i++)
            root_clear(&roots[i]);
        qp_clear(&fs);
    }
    qv_clear(&cr);
    qv_clear(&d);
    qv_clear(&e);
    return t;
}

static double min_time(double a, double b) { return a < 0 ? b : b < 0 ? a : fmin(a, b); }

/* The query's paths and scratch (work_clear frees them), and its coplanarity cubic into f
 * (initialised here). */
static void work_setup(work *w, qvec pt[4], const imp_ccd_query *q, qpoly *f) {
    for (int i = 0; i < 8; i++)
        qv_init(&w->v[i]);
    for (int i = 0; i < 4; i++)
        qp_init(&w->p[i]);
    mpq_init(w->tmp);
    w->q = q;
    w->pt = pt;
    for (int k = 0; k < 4; k++) {
        qv_init(&pt[k]);
        for (int i = 0; i < 3; i++) {
            assert(isfinite(q->start[k][i]) && isfinite(q->end[k][i]));
            qpoly *x = &pt[k].x[i];
            mpq_set_d(x->c[0], q->start[k][i]);
            mpq_set_d(x->c[1], q->end[k][i]);
            mpq_sub(x->c[1], x->c[1], x->c[0]);
            x->n = 2;
            qp_trim(x);
        }
    }
    qp_init(f);
    qvec *c = &w->v[2], *e1 = &w->v[0], *e2 = &w->v[1], *e3 = &w->v[3];
    if (q->kind == IMP_CCD_VERTEX_FACE) {
        qv_sub(e1, &pt[2], &pt[1]);
        qv_sub(e2, &pt[3], &pt[1]);
        qv_sub(e3, &pt[0], &pt[1]);
    } else {
        qv_sub(e1, &pt[1], &pt[0]);
        qv_sub(e2, &pt[3], &pt[2]);
        qv_sub(e3, &pt[2], &pt[0]);
    }
    qv_cross(c, e1, e2, &w->p[2], w->tmp);
    qv_dot(f, c, e3, &w->p[2], w->tmp);
}

static void work_clear(work *w, qvec pt[4], qpoly *f) {
    qp_clear(f);
    for (int k = 0; k < 4; k++)
        qv_clear(&pt[k]);
    for (int i = 0; i < 8; i++)
        qv_clear(&w->v[i]);
    for (int i = 0; i < 4; i++)
        qp_clear(&w->p[i]);
    mpq_clear(w->tmp);
}

imp_ccd_result imp_ccd_exact(const imp_ccd_query *q) {
    imp_ccd_result res = {.hit = 0, .time = 0.0, .exact = 1};
    work w;
    qvec pt[4];
    qpoly f;
    work_setup(&w, pt, q, &f);
    int vf = q->kind == IMP_CCD_VERTEX_FACE;
    double t = -1.0;
    if (f.n > 0) {
        qpoly fs;
        qp_init(&fs);
        qp_squarefree(&fs, &f);
        qroot roots[3];
        for (int i = 0; i < 3; i++)
            root_init(&roots[i], &fs);
        int n = fs.n > 1 ? isolate(&fs, roots) : 0;
        for (int i = 0; i < n && t < 0; i++) {
            int touch = vf ? static_vf(&w, &roots[i], pt) : static_ee(&w, &roots[i], pt);
            if (touch) t = root_time(&roots[i]);
        }
        for (int i = 0; i < 3; i++)
            root_clear(&roots[i]);
        qp_clear(&fs);
    } else {
        /* coplanar throughout: contact at 0, or first on a closed segment */
        qroot r0;
        root_init(&r0, NULL);
        if (vf ? static_vf(&w, &r0, pt) : static_ee(&w, &r0, pt)) {
            t = 0.0;
        } else if (vf) {
            for (int i = 0; i < 3; i++)
                t = min_time(t, point_segment(&w, &pt[0], &pt[1 + i], &pt[1 + (i + 1) % 3]));
        } else {
            t = min_time(t, point_segment(&w, &pt[0], &pt[2], &pt[3]));
            t = min_time(t, point_segment(&w, &pt[1], &pt[2], &pt[3]));
            t = min_time(t, point_segment(&w, &pt[2], &pt[0], &pt[1]));
            t = min_time(t, point_segment(&w, &pt[3], &pt[0], &pt[1]));
        }
        root_clear(&r0);
    }
    if (t >= 0) {
        res.hit = 1;
        res.time = t;
    }
    work_clear(&w, pt, &f);
    return res;
}

int imp_ccd_exact_static_at(const imp_ccd_query *q, double tl, double th) {
    work w;
    qvec pt[4];
    qpoly f, fs;
    work_setup(&w, pt, q, &f);
    qp_init(&fs);
    int answer = IMP_CCD_UNKNOWN;
    if (f.n > 1) {
        qp_squarefree(&fs, &f);
        qroot r;
        root_init(&r, &fs);
        mpq_set_d(r.lo, tl);
        mpq_set_d(r.hi, th);
        int sl = qp_sign_at(&fs, r.lo), sh = qp_sign_at(&fs, r.hi);
        if (sl != 0 && sh == -sl) { /* the caller's root, simple and alone in (tl, th) */
            r.exact = 0;
            r.slo = sl;
            int touch =
                q->kind == IMP_CCD_VERTEX_FACE ? static_vf(&w, &r, pt) : static_ee(&w, &r, pt);
            answer = touch ? IMP_CCD_HIT : IMP_CCD_MISS;
        }
        root_clear(&r);
    }
    qp_clear(&fs);
    work_clear(&w, pt, &f);
    return answer;
}
