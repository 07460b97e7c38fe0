/*
 * toi_polytope_3d.c - time of impact of two translating 3D boxes or
 * polyhedra, with or without acceleration.
 *
 * DESIGN
 * What: imp_toi_polytopes_3d: the first touch of two convex polytopes (a
 * polyhedron is its points' convex hull) on parabolic paths, its point and
 * normal, or their overlap at t = 0, or none.
 * How: the swept separating axis test of toi_polytope.c over the candidate
 * axes of the pair that imp_polytope_pair_build gives (core/overlap_sat.c:
 * the face normals of both and the edge-direction cross products that are
 * faces of the Minkowski difference, which translation does not change).
 * The contact point comes from the touching features (a's vertices at its
 * top along the normal, b's at its bottom): a vertex touches where it is;
 * two edges where they cross (the midpoint of their closest points,
 * imp_closest_segments); otherwise (a face involved) the centroid of the
 * smaller feature, moved to the middle plane.
 * Speed: a pair whose bounding spheres never meet over the window is a
 * miss before any hull or axis is built (imp_toi_bounds_miss); two boxes
 * need no allocation (the pair's own storage); an axis that is the
 * previous one reversed (a box's faces, every edge cross) is swept once.
 * Why: exact (see toi_polytope.c); the axes are built once per query, and
 * the swept test is the same code as in 2D.
 */
#include <assert.h>
#include <math.h>

#include "overlap.h"
#include "toi_polytope.h"

static int is_polytope(const imp_shape *s) {
    return s->type == IMP_SHAPE_BOX || s->type == IMP_SHAPE_POLYHEDRON;
}

/* the distance of the shape's farthest point from its position (a
 * polyhedron's points include its hull's vertices) */
static double reach(const imp_shape *s) {
    return s->type == IMP_SHAPE_BOX ? imp_len(s->half) : imp_toi_reach(s->verts, s->n_verts);
}

/* The contact point in 3D: the touching features are a's vertices at its
 * top along n and b's at its bottom (within tol). A vertex touches where it
 * is; two edges where they cross; otherwise (a face involved) the centroid
 * of the smaller feature, moved to the middle plane. */
static imp_vec3 contact_point(const imp_toi_swept_input *in, imp_vec3 pa, imp_vec3 pb, imp_vec3 n,
                              double tol) {
    double ha, hb, unused;
    imp_toi_project(in->va, in->na, pa, n, &unused, &ha);
    imp_toi_project(in->vb, in->nb, pb, n, &hb, &unused);
    imp_vec3 sa = imp_v3(0, 0, 0), sb = imp_v3(0, 0, 0), ea[2] = {sa, sa}, eb[2] = {sa, sa};
    size_t ka = 0, kb = 0;
    for (size_t i = 0; i < in->na; ++i) {
        imp_vec3 w = imp_add(pa, in->va[i]);
        if (imp_dot(w, n) >= ha - tol) {
            if (ka < 2) ea[ka] = w;
            sa = imp_add(sa, w);
            ++ka;
        }
    }
    for (size_t i = 0; i < in->nb; ++i) {
        imp_vec3 w = imp_add(pb, in->vb[i]);
        if (imp_dot(w, n) <= hb + tol) {
            if (kb < 2) eb[kb] = w;
            sb = imp_add(sb, w);
            ++kb;
        }
    }
    imp_vec3 c;
    if (ka == 2 && kb == 2) {
        imp_vec3 ca, cb;
        imp_closest_segments(ea[0], ea[1], eb[0], eb[1], &ca, &cb);
        c = imp_scale(imp_add(ca, cb), 0.5);
    } else {
        c = ka <= kb ? imp_scale(sa, 1.0 / (double)ka) : imp_scale(sb, 1.0 / (double)kb);
    }
    return imp_madd(c, n, 0.5 * (ha + hb) - imp_dot(c, n));
}

imp_toi_result imp_toi_polytopes_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                    const imp_motion *mb, double horizon) {
    assert(horizon > 0.0);
    if (!is_polytope(a) || !is_polytope(b)) return imp_toi_failed(IMP_FAILURE_UNSUPPORTED);
    if (imp_toi_bounds_miss(ma, reach(a), mb, reach(b), horizon))
        return (imp_toi_result){.state = IMP_TOI_NONE};
    imp_polytope_pair pair;
    imp_hull_status st = imp_polytope_pair_build(a, b, &pair, NULL);
    if (st != IMP_HULL_OK)
        return imp_toi_failed(st == IMP_HULL_NOMEM ? IMP_FAILURE_NOMEM : IMP_FAILURE_DEGENERATE);
    imp_toi_swept_input s = {*ma,     *mb,       pair.va,     pair.vb, pair.na,
                             pair.nb, pair.axes, pair.n_axes, horizon};
    double ftol;
    imp_toi_result r = imp_toi_swept(&s, &ftol);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING)
        r.point = contact_point(&s, r.pa, r.pb, r.normal, ftol);
    imp_polytope_pair_free(&pair);
    return r;
}
