/*
 * toi_rounded_3d.c - time of impact of two translating rounded convex shapes
 * in 3D where one of them has no faces of its own: spheres, capsules and
 * segments against each other and against boxes and polyhedra.
 *
 * DESIGN
 * What: the first t in [0, horizon] at which the two shapes, each a convex
 * core (a point, a segment, a box or a polyhedron) rounded by a radius,
 * touch and then interpenetrate; or their overlap at t = 0; or none. Exact:
 * roots of quadratics and quartics in the input, no iteration to a
 * tolerance.
 * How: configuration-space casting, as toi_rounded_2d.c does in 2D. They touch
 * when q(t) = pb(t) - pa(t) reaches the boundary of D + ball(R), where D is
 * the Minkowski difference core_a - core_b (the convex hull of every
 * a_i - b_j, built by core/hull.c; a flat D, as for two segments, is a
 * polygon with a face on each side, and a D along a line is one edge) and
 * R = ra + rb. That rounded D is the union of D, a ball of radius R at each
 * vertex, a cylinder of radius R around each edge (between its ends) and a
 * prism of height R on each face; from outside, q enters the union first
 * where it first enters one of the pieces, and it can only enter a piece
 * through a part of its surface that no other piece covers: a face's
 * offset plane inside the face, a cylinder's side inside the edge's span,
 * or a vertex ball (a cylinder's end caps lie inside the balls, a prism's
 * sides inside the cylinders). So the contact is the earliest root, over
 * every face (a quadratic: n . q(t) = d + R), edge (a quartic:
 * |(q(t) - u) x e|^2 = R^2 |e|^2) and vertex (a quartic: |q(t) - v|^2 =
 * R^2), that lies on its piece's part and at which q is entering (moving
 * inwards along that piece's outward normal, or at rest there and
 * accelerating inwards). With R = 0 only faces remain, which needs a D
 * with volume: the pairs with neither volume nor radius (two segments, a
 * point and a segment) are left to the caller (conservative advancement).
 * A caller that wants the crossing of a flat D (a point or a segment
 * passing through a world's triangle, imp_toi_rounded_3d_points with
 * flat_ok) gets it from D's two faces: the first time q crosses the
 * polygon, entering through either side.
 * The contact point follows from the feature's vertices: each vertex of D
 * is some a_i - b_j, and the same weights that place the nearest point of
 * D on its feature place a point of core a.
 * Why: exact, and one code path for every pair that has no faces on one
 * side. Cost: the hull of na * nb points (at most 2 * 4096 here) per call.
 */
#include "toi_rounded.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hull.h"
#include "roots.h"
#include "tolerance.h"

/* D with its features: vertices (with the index a_i - b_j they came from,
 * i * nb + j), edges and faces (outward normal, offset, vertex loop
 * counter-clockwise seen from outside). */
typedef struct dpoly {
    int dim; /* affine dimension of D: 1, 2 or 3 */
    size_t nv, ne, nf;
    const imp_vec3 *v;
    const size_t *src;
    const imp_hull_edge *e;
    const size_t *fstart, *floop;
    const imp_vec3 *fn;
    const double *fd;
    imp_hull *hull; /* dim 3 */
    void *own;      /* dim 1 and 2: one block holding every array, unless in scratch */
    void *scratch;  /* the caller's IMP_HULL_SCRATCH_BYTES, used before malloc */
} dpoly;

static void dpoly_free(dpoly *d) {
    imp_hull_destroy(d->hull);
    free(d->own);
}

typedef struct pt2 {
    double x, y;
    size_t k;
} pt2;

static int pt2_cmp(const void *pa, const void *pb) {
    const pt2 *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return (a->y > b->y) - (a->y < b->y);
}

static double turn(pt2 o, pt2 a, pt2 b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* one block for a D of nv vertices built here (dim 1 or 2) */
static int dpoly_alloc(dpoly *d, size_t nv, size_t ne, size_t nf, size_t nloop) {
    size_t bytes = nv * (sizeof(imp_vec3) + sizeof(size_t)) + ne * sizeof(imp_hull_edge) +
                   (nf + 1 + nloop) * sizeof(size_t) + nf * (sizeof(imp_vec3) + sizeof(double));
    char *m = bytes <= IMP_HULL_SCRATCH_BYTES ? d->scratch : malloc(bytes);
    if (!m) return -1;
    if (m != d->scratch) d->own = m;
    d->nv = nv, d->ne = ne, d->nf = nf;
    d->v = (imp_vec3 *)m, m += nv * sizeof(imp_vec3);
    d->fn = (imp_vec3 *)m, m += nf * sizeof(imp_vec3);
    d->fd = (double *)m, m += nf * sizeof(double);
    d->e = (imp_hull_edge *)m, m += ne * sizeof(imp_hull_edge);
    d->src = (size_t *)m, m += nv * sizeof(size_t);
    d->fstart = (size_t *)m, m += (nf + 1) * sizeof(size_t);
    d->floop = (size_t *)m;
    return 0;
}

/* D along a line: the two extreme points and the edge between them */
static int build_line(const imp_vec3 *p, size_t n, imp_vec3 p0, imp_vec3 dir, dpoly *d) {
    size_t lo = 0, hi = 0;
    for (size_t k = 1; k < n; ++k) {
        double s = imp_dot(imp_sub(p[k], p0), dir);
        if (s < imp_dot(imp_sub(p[lo], p0), dir)) lo = k;
        if (s > imp_dot(imp_sub(p[hi], p0), dir)) hi = k;
    }
    if (dpoly_alloc(d, 2, 1, 0, 0) != 0) return -1;
    d->dim = 1;
    imp_vec3 *v = (imp_vec3 *)d->v;
    size_t *src = (size_t *)d->src, *fstart = (size_t *)d->fstart;
    v[0] = p[lo], v[1] = p[hi], src[0] = lo, src[1] = hi, fstart[0] = 0;
    *(imp_hull_edge *)d->e = (imp_hull_edge){{0, 1}, {IMP_HULL_NONE, IMP_HULL_NONE}};
    return 0;
}

/* a flat D: its convex polygon in the plane (e1, e2) through p0 (monotone
 * chain), with a face on each side */
/* Points a few at a time: sorted in place by insertion, stably, as the C
 * library's merge sort orders them (so the chain, and every answer, is the
 * same whichever sorts). */
#define FLAT_SMALL 16

static int build_flat(const imp_vec3 *p, size_t n, imp_vec3 p0, imp_vec3 e1, imp_vec3 e2,
                      dpoly *d) {
    pt2 small[2 * FLAT_SMALL + 1];
    /* the points, then the chain (n + 1) */
    pt2 *s = n <= FLAT_SMALL ? small : malloc((2 * n + 1) * sizeof *s);
    if (!s) return -1;
    for (size_t k = 0; k < n; ++k) {
        imp_vec3 w = imp_sub(p[k], p0);
        s[k] = (pt2){imp_dot(w, e1), imp_dot(w, e2), k};
    }
    if (n <= FLAT_SMALL) {
        for (size_t k = 1; k < n; ++k)
            for (size_t j = k; j > 0 && pt2_cmp(&s[j - 1], &s[j]) > 0; --j) {
                pt2 t = s[j];
                s[j] = s[j - 1], s[j - 1] = t;
            }
    } else {
        qsort(s, n, sizeof *s, pt2_cmp);
    }
    pt2 *h = s + n;
    size_t m = 0;
    for (size_t k = 0; k < n; ++k) { /* lower chain */
        while (m >= 2 && turn(h[m - 2], h[m - 1], s[k]) <= 0.0)
            --m;
        h[m++] = s[k];
    }
    for (size_t k = n - 1, lower = m + 1; k-- > 0;) { /* upper chain */
        while (m >= lower && turn(h[m - 2], h[m - 1], s[k]) <= 0.0)
            --m;
        h[m++] = s[k];
    }
    --m; /* the last point repeats the first */
    if (m < 3) {
        int rc = build_line(p, n, p0, e1, d);
        if (s != small) free(s);
        return rc;
    }
    if (dpoly_alloc(d, m, m, 2, 2 * m) != 0) {
        if (s != small) free(s);
        return -1;
    }
    d->dim = 2;
    imp_vec3 *v = (imp_vec3 *)d->v, *fn = (imp_vec3 *)d->fn, nrm = imp_cross(e1, e2);
    double *fd = (double *)d->fd;
    size_t *src = (size_t *)d->src, *fstart = (size_t *)d->fstart, *floop = (size_t *)d->floop;
    imp_hull_edge *e = (imp_hull_edge *)d->e;
    fd[0] = fd[1] = -INFINITY;
    for (size_t k = 0; k < m; ++k) {
        v[k] = p[h[k].k];
        src[k] = h[k].k;
        e[k] = (imp_hull_edge){{k, (k + 1) % m}, {0, 1}};
        floop[k] = k;             /* counter-clockwise about +nrm */
        floop[m + k] = m - 1 - k; /* and about -nrm */
        fd[0] = imp_fmax(fd[0], imp_dot(nrm, v[k]));
        fd[1] = imp_fmax(fd[1], -imp_dot(nrm, v[k]));
    }
    fn[0] = nrm, fn[1] = imp_neg(nrm);
    fstart[0] = 0, fstart[1] = m, fstart[2] = 2 * m;
    if (s != small) free(s);
    return 0;
}

/* Least sine, between a segment and a triangle's plane or edges, for which
 * build_prism builds their prism directly (dimensionless); nearer to
 * parallel, the general hull decides which points are vertices. */
#define PRISM_MIN_SIN 1e-6

/* The D of a segment (va[0..2)) and a triangle (vb[0..3)), cloud p[i * 3 + j]
 * = va[i] - vb[j]: a prism whose caps are the triangle at either end of the
 * segment and whose sides are the edges swept along it, built directly when
 * the segment is clearly neither parallel to the triangle's plane nor to an
 * edge (then all six points are vertices); 0, -1 out of memory, 1 when
 * nearly degenerate (the caller builds the general hull). The same faces,
 * normals and offsets the hull would have, without its search. */
static int build_prism(const imp_vec3 *p, dpoly *d) {
    imp_vec3 s = imp_sub(p[3], p[0]); /* a1 - a0 */
    imp_vec3 e[3], nrm = imp_cross(imp_sub(p[1], p[0]), imp_sub(p[2], p[0]));
    double ls = imp_len(s), ln = imp_len(nrm);
    if (!(ls > 0.0 && ln > 0.0) || !(fabs(imp_dot(nrm, s)) > PRISM_MIN_SIN * ln * ls)) return 1;
    imp_vec3 side[3];
    for (int j = 0; j < 3; ++j) {
        e[j] = imp_sub(p[(j + 1) % 3], p[j]);
        side[j] = imp_cross(e[j], s);
        if (!(imp_len(side[j]) > PRISM_MIN_SIN * imp_len(e[j]) * ls)) return 1;
    }
    if (dpoly_alloc(d, 6, 9, 5, 3 + 3 + 4 * 3) != 0) return -1;
    d->dim = 3;
    imp_vec3 *v = (imp_vec3 *)d->v, *fn = (imp_vec3 *)d->fn;
    double *fd = (double *)d->fd;
    size_t *src = (size_t *)d->src, *fstart = (size_t *)d->fstart, *floop = (size_t *)d->floop;
    imp_hull_edge *ed = (imp_hull_edge *)d->e;
    for (size_t k = 0; k < 6; ++k)
        v[k] = p[k], src[k] = k;
    /* faces: 0 the cap at a0, 1 the cap at a1, 2 + j the side of edge j */
    imp_vec3 n0 = imp_scale(nrm, 1.0 / ln);
    if (imp_dot(n0, s) > 0.0) n0 = imp_neg(n0);
    fn[0] = n0, fn[1] = imp_neg(n0);
    size_t loops[5][4] = {{0, 1, 2, 0}, {3, 4, 5, 0}, {0}, {0}, {0}};
    size_t len[5] = {3, 3, 4, 4, 4};
    for (size_t j = 0; j < 3; ++j) {
        imp_vec3 n = imp_normalize_or(side[j], imp_v3(0, 0, 0));
        if (imp_dot(n, imp_sub(p[(j + 2) % 3], p[j])) > 0.0) n = imp_neg(n);
        fn[2 + j] = n;
        size_t q[4] = {j, (j + 1) % 3, 3 + (j + 1) % 3, 3 + j};
        memcpy(loops[2 + j], q, sizeof q);
    }
    size_t at = 0;
    for (size_t f = 0; f < 5; ++f) {
        size_t *L = loops[f];
        /* counter-clockwise seen from outside */
        if (imp_dot(imp_cross(imp_sub(v[L[1]], v[L[0]]), imp_sub(v[L[2]], v[L[0]])), fn[f]) < 0.0)
            for (size_t a = 0, b = len[f] - 1; a < b; ++a, --b) {
                size_t t = L[a];
                L[a] = L[b], L[b] = t;
            }
        fstart[f] = at;
        fd[f] = -INFINITY;
        for (size_t k = 0; k < len[f]; ++k) {
            floop[at++] = L[k];
            fd[f] = imp_fmax(fd[f], imp_dot(fn[f], v[L[k]]));
        }
    }
    fstart[5] = at;
    /* edges: the caps' (with their side), then the segment's copies (between two sides) */
    size_t k = 0;
    for (size_t j = 0; j < 3; ++j) {
        ed[k++] = (imp_hull_edge){{j, (j + 1) % 3}, {0, 2 + j}};
        ed[k++] = (imp_hull_edge){{3 + j, 3 + (j + 1) % 3}, {1, 2 + j}};
        ed[k++] = (imp_hull_edge){{j, 3 + j}, {2 + j, 2 + (j + 2) % 3}};
    }
    for (k = 0; k < 9; ++k) { /* v[0] -> v[1] counter-clockwise in face[0] */
        size_t f = ed[k].face[0], lo = fstart[f], hi = fstart[f + 1], a = ed[k].v[0];
        for (size_t q = lo; q < hi; ++q)
            if (floop[q] == a && floop[q + 1 < hi ? q + 1 : lo] != ed[k].v[1]) {
                ed[k].v[0] = ed[k].v[1], ed[k].v[1] = a;
                break;
            }
    }
    return 0;
}

/* D of the cloud p[0..n): 0, -1 out of memory, 1 when D is a point. scratch: room of
 * IMP_HULL_SCRATCH_BYTES for D's arrays (its hull, imp_hull_build_in, or dpoly_alloc's
 * block) before malloc, alive as long as d. */
static int build_dpoly(const imp_vec3 *p, size_t n, int nb_is_3, void *scratch, dpoly *d) {
    *d = (dpoly){.scratch = scratch};
    double s = 0.0;
    for (size_t k = 0; k < n; ++k)
        s = imp_fmax(s, imp_max_abs(p[k]));
    const double thr = IMP_HULL_PLANE_REL * s;
    imp_vec3 p0 = p[0];
    size_t i1 = 0;
    double l1 = 0.0;
    for (size_t k = 1; k < n; ++k) {
        double l = imp_len(imp_sub(p[k], p0));
        if (l > l1) l1 = l, i1 = k;
    }
    if (!(l1 > thr)) return 1;
    imp_vec3 e1 = imp_scale(imp_sub(p[i1], p0), 1.0 / l1);
    size_t i2 = 0;
    double h2 = 0.0;
    for (size_t k = 1; k < n; ++k) {
        double h = imp_len(imp_cross(imp_sub(p[k], p0), e1));
        if (h > h2) h2 = h, i2 = k;
    }
    if (!(h2 > thr)) return build_line(p, n, p0, e1, d);
    imp_vec3 nrm = imp_normalize_or(imp_cross(e1, imp_sub(p[i2], p0)), imp_v3(0, 0, 1));
    double h3 = 0.0;
    for (size_t k = 1; k < n; ++k)
        h3 = imp_fmax(h3, fabs(imp_dot(imp_sub(p[k], p0), nrm)));
    if (h3 > thr) {
        int rc = n == 6 && nb_is_3 ? build_prism(p, d) : 1;
        if (rc <= 0) return rc;
        imp_hull_status st =
            imp_hull_build_in(p, n, scratch, IMP_HULL_SCRATCH_BYTES, &d->hull, NULL);
        if (st == IMP_HULL_NOMEM) return -1;
        if (st == IMP_HULL_OK) {
            const imp_hull *h = d->hull;
            d->dim = 3;
            d->nv = h->n_verts, d->ne = h->n_edges, d->nf = h->n_faces;
            d->v = h->verts, d->src = h->input, d->e = h->edges;
            d->fstart = h->face_start, d->floop = h->face_verts;
            d->fn = h->normals, d->fd = h->offsets;
            return 0;
        }
    }
    return build_flat(p, n, p0, e1, imp_cross(nrm, e1), d);
}

/* x within face f's polygon (seen along its normal), each edge's line
 * moved out by `slack` of that edge's length */
static int in_face(const dpoly *d, size_t f, imp_vec3 x, double slack) {
    size_t lo = d->fstart[f], hi = d->fstart[f + 1];
    for (size_t k = lo; k < hi; ++k) {
        imp_vec3 u = d->v[d->floop[k]], w = d->v[d->floop[k + 1 < hi ? k + 1 : lo]];
        imp_vec3 ew = imp_sub(w, u);
        if (imp_dot(imp_cross(ew, imp_sub(x, u)), d->fn[f]) < -slack * imp_dot(ew, ew)) return 0;
    }
    return 1;
}

/* the nearest point of D's boundary to x */
typedef struct nearest {
    int kind; /* 0 face, 1 edge */
    size_t k;
    double s;   /* edge: position along it, in [0, 1] */
    double sd;  /* signed distance: negative inside D */
    imp_vec3 n; /* outward unit normal there */
    imp_vec3 y; /* the point of D */
} nearest;

static nearest nearest_of(const dpoly *d, imp_vec3 x) {
    nearest r = {.sd = INFINITY};
    if (d->dim == 3) {
        double m = -INFINITY;
        for (size_t f = 0; f < d->nf; ++f) {
            double h = imp_dot(d->fn[f], x) - d->fd[f];
            if (h > m) m = h, r.k = f;
        }
        if (m <= 0.0) { /* inside: the nearest face plane's foot lies on that face */
            r.kind = 0, r.sd = m, r.n = d->fn[r.k], r.y = imp_madd(x, r.n, -m);
            return r;
        }
    }
    for (size_t f = 0; f < d->nf; ++f) {
        double h = imp_dot(d->fn[f], x) - d->fd[f];
        if (h >= 0.0 && h < r.sd && in_face(d, f, x, 0.0))
            r = (nearest){0, f, 0.0, h, d->fn[f], imp_madd(x, d->fn[f], -h)};
    }
    for (size_t k = 0; k < d->ne; ++k) {
        imp_vec3 u = d->v[d->e[k].v[0]], e = imp_sub(d->v[d->e[k].v[1]], u);
        double ee = imp_dot(e, e);
        double s = ee > 0.0 ? imp_fmin(imp_fmax(imp_dot(imp_sub(x, u), e) / ee, 0.0), 1.0) : 0.0;
        imp_vec3 c = imp_madd(u, e, s), w = imp_sub(x, c);
        double dist = imp_len(w);
        if (dist < r.sd) {
            /* on the edge itself (a flat D): any normal of the plane */
            imp_vec3 n = d->nf ? d->fn[d->e[k].face[0]]
                               : imp_normalize_or(imp_cross(e, imp_v3(0, 0, 1)), imp_v3(0, 0, 1));
            r = (nearest){1, k, s, dist, dist > 0.0 ? imp_scale(w, 1.0 / dist) : n, c};
        }
    }
    return r;
}

/* The point of core a behind D's point r.y: the vertices of r's feature
 * carry the same weights on a as on D. */
static imp_vec3 core_a_point(const dpoly *d, const nearest *r, const imp_vec3 *va, size_t nb) {
    if (r->kind == 1) {
        imp_vec3 a0 = va[d->src[d->e[r->k].v[0]] / nb], a1 = va[d->src[d->e[r->k].v[1]] / nb];
        return imp_madd(a0, imp_sub(a1, a0), r->s);
    }
    /* a face: the fan triangle from its first vertex that holds y best */
    size_t lo = d->fstart[r->k], hi = d->fstart[r->k + 1];
    imp_vec3 n = d->fn[r->k], v0 = d->v[d->floop[lo]];
    double best = -INFINITY, w[3] = {1, 0, 0};
    size_t bj = lo + 1;
    for (size_t j = lo + 1; j + 1 < hi; ++j) {
        imp_vec3 v1 = d->v[d->floop[j]], v2 = d->v[d->floop[j + 1]];
        double area = imp_dot(imp_cross(imp_sub(v1, v0), imp_sub(v2, v0)), n);
        if (!(area > 0.0)) continue;
        double l1 = imp_dot(imp_cross(imp_sub(v2, v0), imp_sub(r->y, v0)), n) / -area;
        double l2 = imp_dot(imp_cross(imp_sub(v1, v0), imp_sub(r->y, v0)), n) / area;
        double l0 = 1.0 - l1 - l2, worst = imp_fmin(l0, imp_fmin(l1, l2));
        if (worst > best) best = worst, bj = j, w[0] = l0, w[1] = l1, w[2] = l2;
    }
    imp_vec3 c = imp_v3(0, 0, 0);
    size_t corner[3] = {lo, bj, bj + 1 < hi ? bj + 1 : lo};
    for (int i = 0; i < 3; ++i)
        c = imp_madd(c, va[d->src[d->floop[corner[i]]] / nb], w[i]);
    return c;
}

/* the earliest entry in (0, best) over every piece of the rounded D; *n
 * gets the piece's outward normal there */
static double first_entry(const dpoly *d, const imp_motion *q, double R, double horizon,
                          imp_vec3 *n) {
    double best = INFINITY, roots[4];
    for (size_t f = 0; f < d->nf; ++f) {
        imp_vec3 fn = d->fn[f];
        int nr = imp_quadratic_roots(0.5 * imp_dot(q->a, fn), imp_dot(q->v, fn),
                                     imp_dot(q->p, fn) - d->fd[f] - R, 0.0, imp_fmin(horizon, best),
                                     roots);
        for (int i = 0; i < nr; ++i) {
            double t = roots[i];
            /* the face a hair wider: with R = 0 a path through an edge of D must not slip
             * between its two faces by rounding */
            if (t > 0.0 && t < best && in_face(d, f, imp_motion_at(q, t), IMP_EDGE_SPAN_REL) &&
                imp_toi_entering(q, t, fn)) {
                best = t, *n = fn;
                break;
            }
        }
    }
    if (!(R > 0.0)) return best;
    for (size_t k = 0; k < d->ne; ++k) { /* |(q(t) - u) x e|^2 = R^2 |e|^2 */
        imp_vec3 u = d->v[d->e[k].v[0]], e = imp_sub(d->v[d->e[k].v[1]], u);
        double ee = imp_dot(e, e);
        if (!(ee > 0.0)) continue;
        imp_vec3 c0 = imp_cross(imp_sub(q->p, u), e), c1 = imp_cross(q->v, e);
        imp_vec3 c2 = imp_scale(imp_cross(q->a, e), 0.5);
        double c[5] = {imp_dot(c0, c0) - R * R * ee, 2.0 * imp_dot(c0, c1),
                       imp_dot(c1, c1) + 2.0 * imp_dot(c0, c2), 2.0 * imp_dot(c1, c2),
                       imp_dot(c2, c2)};
        int nr = imp_poly_roots(c, 4, 0.0, imp_fmin(horizon, best), roots);
        for (int i = 0; i < nr; ++i) {
            double t = roots[i];
            if (!(t > 0.0 && t < best)) continue;
            imp_vec3 w = imp_sub(imp_motion_at(q, t), u);
            double s = imp_dot(w, e) / ee;
            imp_vec3 rn = imp_normalize_or(imp_madd(w, e, -s), imp_v3(0, 0, 0));
            if (s >= 0.0 && s <= 1.0 && imp_len(rn) > 0.0 && imp_toi_entering(q, t, rn)) {
                best = t, *n = rn;
                break;
            }
        }
    }
    for (size_t k = 0; k < d->nv; ++k) { /* |q(t) - v|^2 = R^2 */
        double c[5];
        imp_toi_distance_quartic(q, d->v[k], R * R, c);
        int nr = imp_poly_roots(c, 4, 0.0, imp_fmin(horizon, best), roots);
        for (int i = 0; i < nr; ++i) {
            double t = roots[i];
            imp_vec3 rn = imp_normalize_or(imp_sub(imp_motion_at(q, t), d->v[k]), imp_v3(0, 0, 0));
            if (t > 0.0 && t < best && imp_len(rn) > 0.0 && imp_toi_entering(q, t, rn)) {
                best = t, *n = rn;
                break;
            }
        }
    }
    return best;
}

imp_toi_result imp_toi_rounded_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                  const imp_motion *mb, double horizon) {
    imp_vec3 bufa[8], bufb[8];
    imp_toi_rounded_input in = {.a = *ma, .b = *mb, .horizon = horizon};
    in.na = imp_shape_points(a, 3, bufa, &in.va, &in.ra);
    in.nb = imp_shape_points(b, 3, bufb, &in.vb, &in.rb);
    return imp_toi_rounded_3d_points(&in, 0);
}

imp_toi_result imp_toi_rounded_3d_points(const imp_toi_rounded_input *in, int flat_ok) {
    assert(in->horizon > 0.0);
    const imp_vec3 *va = in->va, *vb = in->vb;
    size_t na = in->na, nb = in->nb;
    double ra = in->ra, rb = in->rb, horizon = in->horizon;
    const imp_motion *ma = &in->a, *mb = &in->b;
    assert(na >= 1 && nb >= 1);
    const double R = ra + rb;

    /* a sphere or capsule against a triangle, a box or a polyhedron of up to 32 points, or a
     * box against a triangle or a box: no allocation (D's hull in the scratch too) */
    imp_vec3 few[64];
    _Alignas(max_align_t) char scratch[IMP_HULL_SCRATCH_BYTES];
    imp_vec3 *cloud = na * nb <= 64 ? few : malloc(na * nb * sizeof *cloud);
    if (!cloud) return imp_toi_failed(IMP_FAILURE_NOMEM);
    for (size_t i = 0; i < na; ++i)
        for (size_t j = 0; j < nb; ++j)
            cloud[i * nb + j] = imp_sub(va[i], vb[j]);
    dpoly d;
    int rc = build_dpoly(cloud, na * nb, na == 2 && nb == 3, scratch, &d);
    if (rc == 1) { /* D is a point: two spheres */
        imp_toi_spheres_input sp = {*ma, *mb, ra, rb, horizon};
        sp.a.p = imp_add(sp.a.p, va[0]);
        sp.b.p = imp_add(sp.b.p, vb[0]);
        imp_toi_result r = imp_toi_spheres(&sp);
        r.pa = imp_sub(r.pa, va[0]);
        r.pb = imp_sub(r.pb, vb[0]);
        if (cloud != few) free(cloud);
        return r;
    }
    if (cloud != few) free(cloud);
    if (rc != 0) return imp_toi_failed(IMP_FAILURE_NOMEM);
    if (d.dim < (flat_ok ? 2 : 3) && !(R > 0.0)) { /* no volume anywhere */
        dpoly_free(&d);
        return imp_toi_failed(IMP_FAILURE_UNSUPPORTED);
    }

    imp_motion q = imp_toi_relative(ma, mb);
    double scale = imp_fmax(R, imp_max_abs(q.p));
    for (size_t k = 0; k < d.nv; ++k)
        scale = imp_fmax(scale, imp_max_abs(d.v[k]));
    const double tol = IMP_CONTACT_REL * scale;

    imp_toi_result r = imp_toi_none();
    nearest n0 = nearest_of(&d, q.p);
    double gap0 = n0.sd - R, t_hit = -1.0;
    imp_vec3 normal = n0.n;
    if (gap0 < -tol) {
        r.state = IMP_TOI_OVERLAPPING;
        r.depth = -gap0;
        t_hit = 0.0;
    } else if (gap0 <= tol && imp_toi_entering(&q, 0.0, n0.n)) {
        r.state = IMP_TOI_HIT;
        t_hit = 0.0;
    } else {
        double t = first_entry(&d, &q, R, horizon, &normal);
        if (t < INFINITY) {
            r.state = IMP_TOI_HIT;
            t_hit = t;
        }
    }
    if (t_hit >= 0.0) {
        nearest nh = nearest_of(&d, imp_motion_at(&q, t_hit));
        imp_toi_rounded_contact(&r, ma, mb, t_hit, normal, core_a_point(&d, &nh, va, nb), ra);
    }
    dpoly_free(&d);
    return r;
}
