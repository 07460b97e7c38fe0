/*
 * toi_polytope_2d.c - time of impact of two translating convex polygons
 * (boxes included) in 2D, with or without acceleration.
 *
 * DESIGN
 * What: imp_toi_polygons: the first touch of two polygons on parabolic
 * paths, its point and normal, or their overlap at t = 0, or none.
 * How: the swept separating axis test of toi_polytope.c over the edge
 * normals of both polygons (for two convex polygons the only candidate
 * axes). The contact point is the middle of the overlap of the two
 * touching features (a vertex or an edge each) along the contact line.
 * Why: exact (see toi_polytope.c); O((n + m)^2) per query for polygons of
 * n and m vertices.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "toi_polytope.h"

/* Middle of the touching features along the contact line (2D): the vertices
 * of a at its top along n and of b at its bottom (within tol), in world
 * coordinates at the moment of contact. */
static imp_vec3 contact_point(const imp_toi_swept_input *in, imp_vec3 pa, imp_vec3 pb, imp_vec3 n,
                              double tol) {
    double ha, hb, lo_unused, hi_unused;
    imp_toi_project(in->va, in->na, pa, n, &lo_unused, &ha);
    imp_toi_project(in->vb, in->nb, pb, n, &hb, &hi_unused);
    imp_vec3 u = imp_v3(-n.y, n.x, 0);
    double ua0 = INFINITY, ua1 = -INFINITY, ub0 = INFINITY, ub1 = -INFINITY;
    for (size_t i = 0; i < in->na; ++i) {
        imp_vec3 w = imp_add(pa, in->va[i]);
        if (imp_dot(w, n) >= ha - tol) {
            ua0 = fmin(ua0, imp_dot(w, u));
            ua1 = fmax(ua1, imp_dot(w, u));
        }
    }
    for (size_t i = 0; i < in->nb; ++i) {
        imp_vec3 w = imp_add(pb, in->vb[i]);
        if (imp_dot(w, n) <= hb + tol) {
            ub0 = fmin(ub0, imp_dot(w, u));
            ub1 = fmax(ub1, imp_dot(w, u));
        }
    }
    double lo = fmax(ua0, ub0), hi = fmin(ua1, ub1);
    double mid = lo <= hi ? 0.5 * (lo + hi) : 0.5 * (fmin(ua1, ub1) + fmax(ua0, ub0));
    return imp_add(imp_scale(n, 0.5 * (ha + hb)), imp_scale(u, mid));
}

imp_toi_result imp_toi_polygons(const imp_toi_polygons_input *in) {
    assert(in->na >= 3 && in->nb >= 3 && in->horizon > 0.0);
    size_t n = in->na + in->nb;
    imp_vec3 *axes = malloc(n * sizeof *axes);
    if (!axes) return imp_toi_failed(IMP_FAILURE_NOMEM);
    for (size_t i = 0; i < n; ++i) { /* the edge normals of both */
        const imp_vec3 *v = i < in->na ? in->va : in->vb;
        size_t m = i < in->na ? in->na : in->nb, k = i < in->na ? i : i - in->na;
        imp_vec3 e = imp_sub(v[(k + 1) % m], v[k]);
        axes[i] = imp_normalize_or(imp_v3(e.y, -e.x, 0), imp_v3(1, 0, 0));
    }
    imp_toi_swept_input s = {in->a, in->b, in->va, in->vb, in->na, in->nb, axes, n, in->horizon};
    double ftol;
    imp_toi_result r = imp_toi_swept(&s, &ftol);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING)
        r.point = contact_point(&s, r.pa, r.pb, r.normal, ftol);
    free(axes);
    return r;
}
