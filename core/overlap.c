/*
 * overlap.c - static overlap and separation of two placed shapes: the
 * dispatch by pair type, and the shapes placed as the algorithms see them.
 *
 * DESIGN
 * What: imp_overlap, the core of POST /v1/overlap: whether two shapes
 * overlap, by how much and along which unit normal (from a towards b), or
 * how far apart they are; imp_overlap_closest adds the closest points.
 * How: every shape but the halfspace is a convex core rounded by a radius:
 * a point (sphere), a segment (capsule, segment) or a convex polygon (box,
 * polygon) with radius 0, and in 3D a box or a polyhedron's hull. The
 * Minkowski difference of two rounded shapes is the difference of their
 * cores grown by ra + rb, so
 *   - cores apart at distance d: the shapes are apart by d - ra - rb, or
 *     overlap by ra + rb - d, along the line of the cores' closest points
 *     (closest features, overlap_distance.c);
 *   - cores intersecting: the shapes overlap by the cores' penetration
 *     depth plus ra + rb along the cores' minimum translation direction
 *     (separating axes, overlap_sat.c).
 * By pair: a halfspace {n.x <= offset} against any shape: the shape's
 * lowest point along n (a core vertex minus its radius) decides. In 2D
 * every pair: the cores' distance when they do not intersect, else their
 * SAT depth. In 3D points and segments: the closest points of two segments;
 * crossing segments touch with zero core depth along the cross product of
 * their directions. 3D pairs with a box or polyhedron (imp_ov_poly): GJK
 * distance of the cores; apart by more than IMP_CONTACT_REL of the scale,
 * the shapes are apart (or overlap) by that distance less the radii along
 * it, otherwise the SAT depth plus the radii.
 * Why: one answer per pair type from exact algorithms, each family in its
 * own file (overlap_impl.h lists them); the dispatch is the only place
 * that knows which pair goes where.
 */
#include "overlap.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "hull.h"
#include "overlap_impl.h"
#include "tolerance.h"

/* ---- placed shapes ---------------------------------------------------------------------- */

int imp_ov_core_make(const imp_shape *s, imp_vec3 pos, int dim, imp_ov_core *c) {
    c->pos = pos;
    c->n = imp_shape_core(s, dim, c->buf, &c->local, &c->r);
    if (c->n > 0) return 0;
    c->n = imp_shape_points(s, dim, c->buf, &c->local, &c->r);
    return -1;
}

void imp_ov_poly_free(imp_ov_poly *p) { imp_hull_destroy(p->hull); }

/* Points p's faces, edges and directions at its own buffers, holding nf, ne and nd. */
static void use_own_arrays(imp_ov_poly *p, size_t nf, size_t ne, size_t nd) {
    p->fn = p->fbuf;
    p->nf = nf;
    p->edges = p->ebuf;
    p->ne = ne;
    p->dirs = p->dbuf;
    p->nd = nd;
}

imp_hull_status imp_ov_poly_make(const imp_shape *s, imp_vec3 pos, imp_ov_poly *p) {
    memset(p, 0, sizeof *p);
    p->pos = pos;
    if (s->type == IMP_SHAPE_POLYHEDRON) {
        const imp_hull *h = s->hull; /* prepared (borrowed), or built here (owned) */
        if (!h) {
            imp_hull_status st = imp_hull_build(s->verts, s->n_verts, &p->hull, NULL);
            if (st != IMP_HULL_OK) return st;
            h = p->hull;
        }
        p->local = h->verts;
        p->n = h->n_verts;
        p->fn = h->normals;
        p->nf = h->n_faces;
        p->edges = h->edges;
        p->ne = h->n_edges;
        p->dirs = h->dirs;
        p->nd = h->n_dirs;
        return IMP_HULL_OK;
    }
    p->n = imp_shape_points(s, 3, p->vbuf, &p->local, &p->r);
    if (s->type == IMP_SHAPE_BOX) {
        /* corner i has bit k set when it is on the + side of axis k (imp_shape_points);
         * face 2k + 1 is the + face of axis k, 2k the - face */
        imp_vec3 ax[3] = {imp_quat_rotate(s->rot, imp_v3(1, 0, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, 1, 0)),
                          imp_quat_rotate(s->rot, imp_v3(0, 0, 1))};
        size_t e = 0;
        for (size_t k = 0; k < 3; ++k) {
            p->fbuf[2 * k] = imp_neg(ax[k]);
            p->fbuf[2 * k + 1] = ax[k];
            p->dbuf[k] = ax[k];
            size_t k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            for (size_t s1 = 0; s1 < 2; ++s1)
                for (size_t s2 = 0; s2 < 2; ++s2) {
                    size_t c = (s1 << k1) | (s2 << k2);
                    p->ebuf[e].v[0] = c;
                    p->ebuf[e].v[1] = c | ((size_t)1 << k);
                    p->ebuf[e].face[0] = 2 * k1 + s1;
                    p->ebuf[e].face[1] = 2 * k2 + s2;
                    ++e;
                }
        }
        use_own_arrays(p, 6, 12, 3);
    } else if (p->n == 2) {
        p->dbuf[0] = imp_normalize_or(imp_sub(p->local[1], p->local[0]), imp_v3(0, 0, 0));
        p->dirs = p->dbuf;
        p->nd = 1;
    }
    return IMP_HULL_OK;
}

void imp_ov_poly_triangle(const imp_vec3 v[3], imp_ov_poly *p) {
    memset(p, 0, sizeof *p);
    imp_vec3 n =
        imp_normalize_or(imp_cross(imp_sub(v[1], v[0]), imp_sub(v[2], v[0])), imp_v3(0, 0, 1));
    for (size_t i = 0; i < 3; ++i) {
        p->vbuf[i] = v[i];
        p->ebuf[i] = (imp_hull_edge){{i, (i + 1) % 3}, {0, IMP_HULL_NONE}};
        p->dbuf[i] = imp_normalize_or(imp_sub(v[(i + 1) % 3], v[i]), imp_v3(0, 0, 0));
    }
    p->fbuf[0] = n;
    p->fbuf[1] = imp_neg(n);
    p->local = p->vbuf;
    p->n = 3;
    use_own_arrays(p, 2, 3, 3);
}

double imp_ov_support(const imp_ov_poly *p, imp_vec3 n, imp_vec3 *at) {
    size_t best = imp_ov_farthest(p->local, p->n, n);
    if (at) *at = imp_add(p->pos, p->local[best]);
    return (p->n ? imp_dot(p->local[best], n) : -INFINITY) + imp_dot(p->pos, n);
}

/* ---- by pair type ----------------------------------------------------------------------- */

/* A FAILED result for the reason given. */
static imp_overlap_result failed(imp_failure why) {
    imp_overlap_result r = {IMP_OVERLAP_FAILED, 0, 0, imp_v3(0, 0, 0), why};
    return r;
}

/* Why building a polytope failed. */
static imp_failure hull_failure(imp_hull_status st) {
    return st == IMP_HULL_NOMEM ? IMP_FAILURE_NOMEM : IMP_FAILURE_DEGENERATE;
}

static imp_overlap_result from_gap(double gap, imp_vec3 normal) {
    /* + 0.0 turns the -0.0 of a negated zero component into 0.0 */
    normal = imp_v3(normal.x + 0.0, normal.y + 0.0, normal.z + 0.0);
    imp_overlap_result r = {IMP_OVERLAP_OVERLAPPING, 0.0, 0.0, normal, IMP_FAILURE_NONE};
    if (gap > 0.0) {
        r.state = IMP_OVERLAP_APART;
        r.distance = gap;
    } else {
        r.depth = -gap + 0.0; /* + 0.0: touching is depth 0, not -0 */
    }
    return r;
}

/* The lowest projection of a placed core's vertices on n, and the first
 * vertex reaching it. */
static double lowest(const imp_ov_core *c, imp_vec3 n, size_t *at) {
    size_t lo = 0;
    double low = INFINITY;
    for (size_t i = 0; i < c->n; ++i) {
        double x = imp_dot(imp_ov_vert(c, i), n);
        if (x < low) {
            low = x;
            lo = i;
        }
    }
    *at = lo;
    return low;
}

/* a shape against the halfspace h; `h_is_b` says which side the halfspace is */
static imp_overlap_result against_halfspace(const imp_shape *s, imp_vec3 pos, const imp_shape *h,
                                            int dim, int h_is_b) {
    imp_ov_core c;
    if (s->type == IMP_SHAPE_HALFSPACE) return failed(IMP_FAILURE_UNSUPPORTED);
    (void)imp_ov_core_make(s, pos, dim, &c); /* every shape has vertices for this test */
    size_t at;
    double low = lowest(&c, h->normal, &at);
    /* gap between the shape's lowest point along n and the boundary plane */
    double gap = low - c.r - h->offset;
    /* from the shape towards the halfspace is -n */
    return from_gap(gap, h_is_b ? imp_neg(h->normal) : h->normal);
}

/* The contact tolerance of two placed polytopes: IMP_CONTACT_REL of their
 * scale, the radii and the largest coordinate magnitude of their vertices. */
static double contact_tol(const imp_ov_poly *A, const imp_ov_poly *B) {
    double scale = A->r + B->r;
    const imp_ov_poly *ps[2] = {A, B};
    for (int k = 0; k < 2; ++k)
        for (size_t i = 0; i < ps[k]->n; ++i)
            scale = imp_fmax(scale, imp_max_abs(imp_add(ps[k]->pos, ps[k]->local[i])));
    return IMP_CONTACT_REL * scale;
}

/* GJK distance of the cores; apart by more than the contact tolerance:
 * distance minus the radii along the closest direction; otherwise SAT depth
 * plus the radii (imp_ov_poly_overlap). With ca and cb given, also the closest points of an
 * APART answer from the same GJK run (its witnesses, carried out through the radii along
 * the normal). */
static imp_overlap_result poly_overlap(const imp_ov_poly *A, const imp_ov_poly *B, imp_vec3 *ca,
                                       imp_vec3 *cb) {
    double rr = A->r + B->r, tol = contact_tol(A, B);
    imp_vec3 v, wa, wb;
    int points = ca && cb;
    double d = points ? imp_ov_gjk_closest(A, B, tol, &v, &wa, &wb) : imp_ov_gjk(A, B, tol, &v);
    if (d > tol) {
        imp_overlap_result r = from_gap(d - rr, imp_scale(v, 1.0 / d));
        if (points && r.state == IMP_OVERLAP_APART) {
            *ca = imp_madd(wa, r.normal, A->r);
            *cb = imp_madd(wb, r.normal, -B->r);
        }
        return r;
    }
    imp_vec3 n;
    double depth;
    return imp_ov_sat_depth_3d(A, B, &depth, &n) == 0 ? from_gap(-(depth + rr), n)
                                                      : failed(IMP_FAILURE_NOMEM);
}

imp_overlap_result imp_ov_poly_overlap(const imp_ov_poly *A, const imp_ov_poly *B) {
    return poly_overlap(A, B, NULL, NULL);
}

/* A 3D pair with a box or polyhedron (neither a halfspace); with ca and cb given, the
 * closest points of an APART answer too (poly_overlap). */
static imp_overlap_result overlap_polytope(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                           imp_vec3 pb, imp_vec3 *ca, imp_vec3 *cb) {
    imp_ov_poly A, B;
    imp_hull_status st = imp_ov_poly_make(a, pa, &A);
    if (st != IMP_HULL_OK) {
        imp_ov_poly_free(&A);
        return failed(hull_failure(st));
    }
    st = imp_ov_poly_make(b, pb, &B);
    if (st != IMP_HULL_OK) {
        imp_ov_poly_free(&A);
        imp_ov_poly_free(&B);
        return failed(hull_failure(st));
    }
    imp_overlap_result r = poly_overlap(&A, &B, ca, cb);
    imp_ov_poly_free(&A);
    imp_ov_poly_free(&B);
    return r;
}

/* A 3D pair with a box or polyhedron (the polytope family). */
static int polytope_pair(const imp_shape *a, const imp_shape *b, int dim) {
    return dim == 3 && (a->type == IMP_SHAPE_BOX || a->type == IMP_SHAPE_POLYHEDRON ||
                        b->type == IMP_SHAPE_BOX || b->type == IMP_SHAPE_POLYHEDRON);
}

/* Every other pair but a halfspace's (the cores: 2D shapes, 3D points and segments): the
 * answer, and when APART the cores' closest points *qa, *qb and radii *ra, *rb. */
static imp_overlap_result overlap_cores(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                        imp_vec3 pb, int dim, imp_vec3 *qa_out, imp_vec3 *qb_out,
                                        double *ra, double *rb) {
    imp_overlap_result none = failed(IMP_FAILURE_UNSUPPORTED);
    imp_ov_core ca, cb;
    if (imp_ov_core_make(a, pa, dim, &ca) != 0 || imp_ov_core_make(b, pb, dim, &cb) != 0)
        return none;
    if (dim == 3 && (ca.n > 2 || cb.n > 2)) return none;
    double rr = ca.r + cb.r;
    imp_vec3 qa, qb;
    double d;
    if (dim == 3) {
        imp_closest_segments(imp_ov_vert(&ca, 0), imp_ov_vert(&ca, ca.n - 1), imp_ov_vert(&cb, 0),
                             imp_ov_vert(&cb, cb.n - 1), &qa, &qb);
        d = imp_len(imp_sub(qb, qa));
        if (d == 0.0) {
            /* crossing cores: zero core depth, across both directions */
            imp_vec3 da = imp_sub(imp_ov_vert(&ca, ca.n - 1), imp_ov_vert(&ca, 0));
            imp_vec3 db = imp_sub(imp_ov_vert(&cb, cb.n - 1), imp_ov_vert(&cb, 0));
            imp_vec3 n = imp_normalize_or(imp_cross(da, db), imp_v3(0, 0, 0));
            if (n.x == 0 && n.y == 0 && n.z == 0) /* parallel or a point: any normal of them */
                n = imp_normalize_or(
                    imp_cross(imp_len(da) > 0 ? da : db, imp_v3(1, 0, 0)),
                    imp_normalize_or(imp_cross(imp_len(da) > 0 ? da : db, imp_v3(0, 1, 0)),
                                     imp_v3(1, 0, 0)));
            return from_gap(-rr, n);
        }
    } else {
        if (imp_ov_cores_intersect_2d(&ca, &cb)) {
            imp_vec3 n;
            double depth = imp_ov_sat_depth_2d(&ca, &cb, &n);
            return from_gap(-(depth + rr), n);
        }
        d = imp_ov_core_distance(&ca, &cb, &qa, &qb);
    }
    /* cores apart by d along qa -> qb (d > 0 unless they touch exactly) */
    imp_vec3 n = imp_normalize_or(imp_sub(qb, qa), imp_v3(1, 0, 0));
    if (d == 0.0) {
        imp_vec3 m;
        (void)imp_ov_sat_depth_2d(&ca, &cb, &m);
        n = m;
    }
    *qa_out = qa;
    *qb_out = qb;
    *ra = ca.r;
    *rb = cb.r;
    return from_gap(d - rr, n);
}

imp_overlap_result imp_overlap(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                               int dim) {
    if (b->type == IMP_SHAPE_HALFSPACE) return against_halfspace(a, pa, b, dim, 1);
    if (a->type == IMP_SHAPE_HALFSPACE) return against_halfspace(b, pb, a, dim, 0);
    if (polytope_pair(a, b, dim)) return overlap_polytope(a, pa, b, pb, NULL, NULL);
    imp_vec3 qa, qb;
    double ra, rb;
    return overlap_cores(a, pa, b, pb, dim, &qa, &qb, &ra, &rb);
}

imp_overlap_result imp_overlap_triangle(const imp_shape *a, imp_vec3 pa, const imp_vec3 tri[3],
                                        imp_vec3 *ca, imp_vec3 *cb) {
    imp_ov_poly A, B;
    imp_hull_status st = imp_ov_poly_make(a, pa, &A);
    imp_overlap_result r;
    if (st != IMP_HULL_OK) {
        r = failed(hull_failure(st));
    } else {
        imp_ov_poly_triangle(tri, &B);
        r = poly_overlap(&A, &B, ca, cb);
    }
    imp_ov_poly_free(&A);
    return r;
}

/* IMP_CONTACT_REL of the pair's scale: the caller's bound, else the radii's sum and the
 * largest placed coordinate's magnitude (contact_tol's). */
static double core2_tol(const imp_core2 *a, const imp_core2 *b, double scale) {
    if (!(scale > 0.0)) {
        scale = a->r + b->r;
        const imp_core2 *cs[2] = {a, b};
        for (int k = 0; k < 2; ++k)
            for (size_t i = 0; i < cs[k]->n; ++i) {
                imp_vec3 x = imp_add(cs[k]->pos, cs[k]->pts[i]);
                scale = imp_fmax_run(imp_fmax_run(imp_fmax_run(scale, fabs(x.x)), fabs(x.y)),
                                     fabs(x.z));
            }
    }
    return IMP_CONTACT_REL * scale;
}

imp_overlap_result imp_overlap_gjk_core2(const imp_core2 *a, const imp_core2 *b, double scale,
                                         imp_gjk2_cache *cache, imp_vec3 *ca, imp_vec3 *cb,
                                         int *near) {
    double tol = core2_tol(a, b, scale);
    imp_vec3 v, wa, wb, n;
    double d = imp_ov_gjk2_closest(a->pts, a->n, b->pts, b->n, imp_sub(b->pos, a->pos), tol, cache,
                                   &v, &wa, &wb);
    if (d > tol && d > a->r + b->r && imp_unit_scaled(v, &n, NULL) == 0) {
        *near = 0;
        imp_overlap_result r = from_gap(d - (a->r + b->r), n);
        *ca = imp_madd(imp_add(a->pos, wa), n, a->r);
        *cb = imp_madd(imp_add(b->pos, wb), n, -b->r);
        return r;
    }
    *near = 1;
    return failed(IMP_FAILURE_UNDECIDED);
}

int imp_overlap_proven_core2(const imp_core2 *a, const imp_core2 *b, double scale,
                             imp_gjk2_cache *cache) {
    double tol = core2_tol(a, b, scale);
    /* a point of B - A is (d + b) - a, each step rounded once, d = pb - pa itself once: an
     * error of a few units of the last place of |pa| + |pb| and the cores' coordinates, which
     * the scale (tol's, the largest placed coordinate) bounds */
    double slack =
        16.0 * DBL_EPSILON * (tol / IMP_CONTACT_REL + imp_max_abs(a->pos) + imp_max_abs(b->pos));
    return imp_ov_gjk2_encloses(a->pts, a->n, b->pts, b->n, imp_sub(b->pos, a->pos), tol, slack,
                                cache);
}

/* Two 2D shapes' cores (imp_core2); 0 when a shape has none (a halfspace). */
static int cores_2d(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                    imp_ov_core *A, imp_ov_core *B, imp_core2 *ca, imp_core2 *cb) {
    if (a->type == IMP_SHAPE_HALFSPACE || b->type == IMP_SHAPE_HALFSPACE ||
        imp_ov_core_make(a, pa, 2, A) != 0 || imp_ov_core_make(b, pb, 2, B) != 0)
        return 0;
    *ca = (imp_core2){A->local, A->n, A->r, pa};
    *cb = (imp_core2){B->local, B->n, B->r, pb};
    return 1;
}

imp_overlap_result imp_overlap_gjk_2d(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                      imp_vec3 pb, imp_gjk2_cache *cache, imp_vec3 *ca,
                                      imp_vec3 *cb, int *near) {
    imp_ov_core A, B;
    imp_core2 c, d;
    *near = 0;
    if (!cores_2d(a, pa, b, pb, &A, &B, &c, &d)) return failed(IMP_FAILURE_UNSUPPORTED);
    return imp_overlap_gjk_core2(&c, &d, 0.0, cache, ca, cb, near);
}

int imp_overlap_proven_2d(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                          imp_gjk2_cache *cache) {
    imp_ov_core A, B;
    imp_core2 c, d;
    return cores_2d(a, pa, b, pb, &A, &B, &c, &d) && imp_overlap_proven_core2(&c, &d, 0.0, cache);
}

/* The gap between placed polytopes A and B along the unit n (from a towards b), radii
 * included: a lower bound of their distance for any n. */
static double gap_along(const imp_ov_poly *A, const imp_ov_poly *B, imp_vec3 n) {
    return -imp_ov_support(B, imp_neg(n), NULL) - B->r - imp_ov_support(A, n, NULL) - A->r;
}

int imp_overlap_contact_normal_3d(const imp_shape *a, imp_vec3 pa, const imp_shape *b, imp_vec3 pb,
                                  imp_vec3 *n) {
    if (!polytope_pair(a, b, 3) || a->type == IMP_SHAPE_HALFSPACE || b->type == IMP_SHAPE_HALFSPACE)
        return -1;
    imp_ov_poly A, B;
    int ok = imp_ov_poly_make(a, pa, &A) == IMP_HULL_OK;
    ok = imp_ov_poly_make(b, pb, &B) == IMP_HULL_OK && ok;
    /* the separating axis test's axis of least push is the candidate of largest gap */
    double depth;
    imp_vec3 sn;
    ok = ok && imp_ov_sat_depth_3d(&A, &B, &depth, &sn) == 0;
    if (ok && gap_along(&A, &B, sn) > gap_along(&A, &B, *n)) *n = sn;
    imp_ov_poly_free(&A);
    imp_ov_poly_free(&B);
    return ok ? 0 : -1;
}

imp_overlap_result imp_overlap_closest(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                       imp_vec3 pb, int dim, imp_vec3 *ca, imp_vec3 *cb) {
    int planes = a->type == IMP_SHAPE_HALFSPACE || b->type == IMP_SHAPE_HALFSPACE;
    /* polytopes: the witnesses of the GJK run that gives the answer */
    if (!planes && polytope_pair(a, b, dim)) return overlap_polytope(a, pa, b, pb, ca, cb);
    if (!planes) {
        /* the cores' closest points come with the answer */
        imp_vec3 qa, qb;
        double ra, rb;
        imp_overlap_result r = overlap_cores(a, pa, b, pb, dim, &qa, &qb, &ra, &rb);
        if (r.state == IMP_OVERLAP_APART) {
            *ca = imp_madd(qa, r.normal, ra);
            *cb = imp_madd(qb, r.normal, -rb);
        }
        return r;
    }
    imp_overlap_result r = imp_overlap(a, pa, b, pb, dim);
    if (r.state == IMP_OVERLAP_APART) {
        /* the shape's lowest point along the halfspace normal, and its foot on the plane */
        int h_is_b = b->type == IMP_SHAPE_HALFSPACE;
        const imp_shape *h = h_is_b ? b : a;
        imp_ov_core c;
        (void)imp_ov_core_make(h_is_b ? a : b, h_is_b ? pa : pb, dim, &c);
        size_t lo;
        (void)lowest(&c, h->normal, &lo);
        imp_vec3 on_shape = imp_madd(imp_ov_vert(&c, lo), h->normal, -c.r);
        imp_vec3 on_plane =
            imp_madd(on_shape, h->normal, -(imp_dot(on_shape, h->normal) - h->offset));
        *ca = h_is_b ? on_shape : on_plane;
        *cb = h_is_b ? on_plane : on_shape;
    }
    return r;
}
