/*
 * overlap_impl.h - what the overlap family shares, private to core/overlap*.c:
 * the shapes placed as its algorithms see them, and each algorithm family's
 * entry points.
 *
 *   overlap.c           the dispatch by pair type (imp_overlap,
 *                       imp_overlap_closest), the halfspace, and the placed
 *                       shapes below
 *   overlap_distance.c  closest features: two segments, two rounded 2D
 *                       cores, and GJK on 3D polytopes
 *   overlap_sat.c       separating axes: the depth of intersecting cores in
 *                       2D and 3D, and the axes of the swept test
 *
 * Every shape but the halfspace is a convex core rounded by a radius. A
 * rounded core (imp_ov_core) is 1 vertex (a point), 2 (a segment) or a
 * counter-clockwise convex polygon, at a position; a 3D polytope
 * (imp_ov_poly) adds, for the separating axis test, its outward face
 * normals, its edges with the two faces meeting there (for the Gauss map
 * test) and its unique edge directions: none for a point, one direction for
 * a segment, 6 normals, 12 edges and 3 directions for a box, a
 * polyhedron's hull's (core/hull.c).
 */
#ifndef IMP_CORE_OVERLAP_IMPL_H
#define IMP_CORE_OVERLAP_IMPL_H

#include <stddef.h>

#include "hull.h"
#include "overlap.h"
#include "shape.h"
#include "vec.h"

/* ---- placed shapes (overlap.c) ---------------------------------------------------------- */

typedef struct imp_ov_core {
    imp_vec3 pos;          /* added to every local vertex */
    const imp_vec3 *local; /* n local vertices: 1 point, 2 segment, >= 3 CCW polygon */
    size_t n;
    double r;
    imp_vec3 buf[8]; /* the vertices of spheres, segments, capsules and boxes */
} imp_ov_core;

/* Vertex i of a placed core. */
static inline imp_vec3 imp_ov_vert(const imp_ov_core *c, size_t i) {
    return imp_add(c->pos, c->local[i]);
}

/* Number of edges: none for a point, one for a segment, n for a polygon. */
static inline size_t imp_ov_n_edges(const imp_ov_core *c) {
    return c->n == 1 ? 0 : c->n == 2 ? 1 : c->n;
}

/* Edge i of a core as its two end points. */
static inline void imp_ov_edge(const imp_ov_core *c, size_t i, imp_vec3 *e0, imp_vec3 *e1) {
    *e0 = imp_ov_vert(c, i);
    *e1 = imp_ov_vert(c, i + 1 < c->n ? i + 1 : 0); /* (not % c->n: a division per edge) */
}

/* Fills c from a placed shape (not a halfspace). 0, or -1 when the shape
 * has no core in this dimension that the solver handles; then c still
 * holds the shape's vertices (a 3D box's corners, a polyhedron's points)
 * for the halfspace test. */
int imp_ov_core_make(const imp_shape *s, imp_vec3 pos, int dim, imp_ov_core *c);

typedef struct imp_ov_poly {
    imp_vec3 pos;
    const imp_vec3 *local;
    size_t n;
    double r;
    const imp_vec3 *fn;
    size_t nf;
    const imp_hull_edge *edges;
    size_t ne;
    const imp_vec3 *dirs;
    size_t nd;
    imp_vec3 vbuf[8], fbuf[6], dbuf[3];
    imp_hull_edge ebuf[12];
    imp_hull *hull; /* owned: a polyhedron's hull built for this query (NULL when the shape
                     * brought one), freed by imp_ov_poly_free */
} imp_ov_poly;

/* A placed 3D shape (not a halfspace) as a polytope. IMP_HULL_OK, or a
 * polyhedron's imp_hull_build status (IMP_HULL_NOMEM; IMP_HULL_DEGENERATE
 * for points too flat for IMP_HULL_PLANE_REL, which the api never
 * accepts). Free with imp_ov_poly_free either way. */
imp_hull_status imp_ov_poly_make(const imp_shape *s, imp_vec3 pos, imp_ov_poly *p);
void imp_ov_poly_free(imp_ov_poly *p);

/* A flat triangle with corners v (placed at the origin: the corners are
 * where it is) as a polytope: two faces (its unit normal (v1 - v0) x (v2 -
 * v0) and the opposite), its three edges each with one face (the Gauss map
 * test then tries both signs of their cross products, which covers the
 * half great circle an edge of a flat polygon maps to) and their unit
 * directions. Nothing to free. The corners must not be collinear. */
void imp_ov_poly_triangle(const imp_vec3 v[3], imp_ov_poly *p);

/* The overlap of two placed polytopes, as imp_overlap answers a 3D pair
 * with a box or polyhedron: GJK distance of the cores, SAT depth when they
 * touch or intersect, the radii added; normal from a towards b. FAILED
 * (NOMEM) when SAT runs out of memory. */
imp_overlap_result imp_ov_poly_overlap(const imp_ov_poly *A, const imp_ov_poly *B);

/* The index of the point of v[0..n) farthest along d (the first of equals; 0 when none). */
static inline size_t imp_ov_farthest(const imp_vec3 *v, size_t n, imp_vec3 d) {
    size_t best = 0;
    double m = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
        double x = imp_dot(v[i], d);
        if (x > m) {
            m = x;
            best = i;
        }
    }
    return best;
}

/* Largest projection of a placed polytope on n, and the vertex reaching
 * it (at may be NULL). */
double imp_ov_support(const imp_ov_poly *p, imp_vec3 n, imp_vec3 *at);

/* ---- closest features (overlap_distance.c) ---------------------------------------------- */

/* Least distance between two 2D cores, as their closest points, over vertex
 * against edge (or vertex, when the other has no edge) in both directions. */
double imp_ov_core_distance(const imp_ov_core *a, const imp_ov_core *b, imp_vec3 *ca, imp_vec3 *cb);

/* Distance between two placed polytopes' cores by GJK: |v| with v the
 * closest point of B - A to the origin (pointing from a towards b), or 0
 * when the origin is within `tol` of B - A (intersecting or touching). */
double imp_ov_gjk(const imp_ov_poly *A, const imp_ov_poly *B, double tol, imp_vec3 *v);

/* 2D GJK, warm-started (every point at z = 0): the cores are the hulls of a[0..na) and
 * b[0..nb) relative to their positions, d the position of b's less a's; the points of
 * B - A are formed as (d + b_j) - a_i, so far from the origin the relative placement keeps
 * its bits. `cache` (or NULL) starts the run from a simplex of an earlier run on the same
 * shapes and takes the final one. */

/* |v|, v the closest point of B - A to the origin that GJK reaches (from a towards b),
 * within IMP_GJK_REL of |v| or `tol` of the distance, with the witness points *wa on A and *wb
 * on B relative to their positions; 0 (witnesses unset) when the origin is within `tol` of
 * B - A or inside it. */
double imp_ov_gjk2_closest(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb, imp_vec3 d,
                           double tol, imp_gjk2_cache *cache, imp_vec3 *v, imp_vec3 *wa,
                           imp_vec3 *wb);

/* 1 when the run ends on a triangle of B - A that holds the origin strictly inside by more
 * than `slack`, an absolute bound of each of its points' error: then the cores overlap, a
 * proof; 0 when it does not (apart, touching, or inside by no more than rounding). */
int imp_ov_gjk2_encloses(const imp_vec3 *a, size_t na, const imp_vec3 *b, size_t nb, imp_vec3 d,
                         double tol, double slack, imp_gjk2_cache *cache);

/* The same GJK run, with the closest points *wa on A and *wb on B (its witnesses) too when
 * the answer is not 0. */
double imp_ov_gjk_closest(const imp_ov_poly *A, const imp_ov_poly *B, double tol, imp_vec3 *v,
                          imp_vec3 *wa, imp_vec3 *wb);

/* GJK ray cast: the first lam in [0, h] at which s + lam r lies in C = A - B,
 * the hull of the differences of va[0..na) and vb[0..nb), as van den Bergen's ray cast
 * finds it: 1 with *lam and the simplex y[0..*ny) of C's points (at most 3)
 * whose hull is within `tol` of s + lam r there; 0 when it found a plane of
 * C's, normal sep[0] (pointing away from C), that the ray leaves behind or
 * does not cross before h, sep[1] then the normal of the last plane the ray
 * was advanced to (zero when none), which kept it off C before; -1 when it
 * cannot say (no progress above rounding, s inside C, the iteration cap). A
 * candidate only: callers certify it. */
int imp_ov_gjk_raycast(const imp_vec3 *va, size_t na, const imp_vec3 *vb, size_t nb, imp_vec3 s,
                       imp_vec3 r, double h, double tol, double *lam, imp_vec3 y[3], size_t *ny,
                       imp_vec3 sep[2]);

/* ---- separating axes (overlap_sat.c) ---------------------------------------------------- */

/* 2D: do the cores share a point (an edge of one crosses an edge of the
 * other, or one contains a vertex of the other)? */
int imp_ov_cores_intersect_2d(const imp_ov_core *a, const imp_ov_core *b);

/* 2D penetration of intersecting cores: the least overlap over the edge
 * normals of both, and the direction (from a towards b) that removes it. */
double imp_ov_sat_depth_2d(const imp_ov_core *a, const imp_ov_core *b, imp_vec3 *normal);

/* 3D penetration of intersecting polytope cores: the least push over every
 * candidate separating axis, and the direction from a towards b that
 * removes it. 0, or -1 when out of memory. */
int imp_ov_sat_depth_3d(const imp_ov_poly *A, const imp_ov_poly *B, double *depth,
                        imp_vec3 *normal);

#endif
