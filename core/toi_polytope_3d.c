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
 * take a path of their own: their 15 axes straight from the two frames and
 * each box's extent along an axis from its half sizes (3 products, not 8
 * projected corners), no hull, no axis list, no allocation (617 to 390 ns
 * a pair in bench_shapes); an axis that is the previous one reversed (a
 * polyhedron's faces, every edge cross) is swept once. Under linear motion
 * any other pair is first cast without a hull: a GJK ray cast over the
 * points (van den Bergen 2004, imp_ov_gjk_raycast) proposes the time and
 * the triangle of the Minkowski difference it enters through, and the
 * swept test on that triangle's normal alone certifies it (imp_toi_cast in
 * toi_polytope.c: the triangle on the difference's support plane, the pair
 * apart along it until then, the ray strictly inside the triangle and
 * crossing at an angle); a miss is certified by the cast's last two
 * planes. What is not certified (about 1% of hits and misses in
 * test_toi_polytope; every overlap at t = 0) takes the hull path
 * (imp_toi_polytopes_3d_hull). Polyhedra of 12 to 20 points: 34 us to
 * about 1 us a pair in bench_shapes, the hull (built per call) and the
 * axes having been where the time went.
 * Why: exact (see toi_polytope.c); the axes are built once per query, and
 * the swept test is the same code as in 2D; the cast's answer is the swept
 * test's on the axis that binds, so it is as exact.
 */
#include <assert.h>
#include <math.h>

#include "overlap.h"
#include "toi_polytope.h"
#include "tolerance.h"

static int is_polytope(const imp_shape *s) {
    return s->type == IMP_SHAPE_BOX || s->type == IMP_SHAPE_POLYHEDRON;
}

/* the distance of the shape's farthest point from its position (a
 * polyhedron's points include its hull's vertices) */
static double reach(const imp_shape *s) {
    return s->type == IMP_SHAPE_BOX ? imp_len(s->half) : imp_points_reach(s->verts, s->n_verts);
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

/* A box's edge directions (its face normals up to sign), as imp_ov_poly_make turns them. */
static void box_frame(const imp_shape *s, imp_vec3 f[3]) {
    f[0] = imp_quat_rotate(s->rot, imp_v3(1, 0, 0));
    f[1] = imp_quat_rotate(s->rot, imp_v3(0, 1, 0));
    f[2] = imp_quat_rotate(s->rot, imp_v3(0, 0, 1));
}

/* half the box's width along unit n: its support, h . |F^T n| */
static double box_extent(imp_vec3 h, const imp_vec3 f[3], imp_vec3 n) {
    return h.x * fabs(imp_dot(f[0], n)) + h.y * fabs(imp_dot(f[1], n)) +
           h.z * fabs(imp_dot(f[2], n));
}

/* corner i on the + side of axis k when bit k is set, as imp_shape_points numbers them */
static void box_corners(imp_vec3 h, const imp_vec3 f[3], imp_vec3 out[8]) {
    imp_vec3 x = imp_scale(f[0], h.x), y = imp_scale(f[1], h.y), z = imp_scale(f[2], h.z);
    for (int i = 0; i < 8; ++i) {
        imp_vec3 c = imp_add(i & 1 ? x : imp_neg(x), i & 2 ? y : imp_neg(y));
        out[i] = imp_add(c, i & 4 ? z : imp_neg(z));
    }
}

/* Two boxes: the swept test over the 15 axes the general path would build for them (a's
 * face normals, b's, and the 9 edge crosses that are not parallel, in the same order and
 * with the same signs the reversed-axis skip of imp_toi_swept keeps), straight from the
 * two frames, with each box's extent along an axis from its half sizes instead of the
 * largest of 8 projected corners (the same number up to rounding). No hull, no axis
 * list; the corners are formed only when every axis leaves a candidate time. */
static imp_toi_result boxes(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                            const imp_motion *mb, double horizon) {
    imp_vec3 fa[3], fb[3];
    box_frame(a, fa);
    box_frame(b, fb);
    imp_vec3 dp = imp_sub(mb->p, ma->p), dv = imp_sub(mb->v, ma->v), da = imp_sub(mb->a, ma->a);
    /* the axes first, in a loop of their own: the crosses' square roots and divisions do
     * not wait for the bands' narrowing */
    imp_toi_band bands[15];
    size_t nb = 0;
    for (int k = 0; k < 15; ++k) {
        if (k < 3) {
            bands[nb++].n = imp_neg(fa[k]);
        } else if (k < 6) {
            bands[nb++].n = fb[k - 3];
        } else {
            imp_vec3 c = imp_cross(fa[(k - 6) / 3], fb[(k - 6) % 3]);
            double l = imp_len(c);
            if (l > IMP_EDGE_PARALLEL_SIN) bands[nb++].n = imp_scale(c, 1.0 / l);
        }
    }
    imp_toi_sweep acc;
    imp_toi_sweep_init(&acc, horizon);
    for (size_t k = 0; k < nb; ++k) {
        imp_toi_band *band = &bands[k];
        imp_vec3 n = band->n;
        double ea = box_extent(a->half, fa, n), eb = box_extent(b->half, fb, n);
        double c = imp_dot(dp, n);
        band->lo = -ea - (c + eb);
        band->hi = ea - (c - eb);
        band->c1 = imp_dot(n, dv);
        band->c2 = 0.5 * imp_dot(n, da);
        if (!imp_toi_sweep_narrow(&acc, band, horizon)) return imp_toi_none();
    }
    imp_vec3 va[8], vb[8];
    box_corners(a->half, fa, va);
    box_corners(b->half, fb, vb);
    imp_toi_swept_input s = {*ma, *mb, va, vb, 8, 8, NULL, nb, horizon};
    double ftol;
    imp_toi_result r = imp_toi_sweep_resolve(&s, bands, &acc, &ftol);
    if (r.state == IMP_TOI_HIT || r.state == IMP_TOI_OVERLAPPING)
        r.point = contact_point(&s, r.pa, r.pb, r.normal, ftol);
    return r;
}

/* a box's 8 corners into buf, or a polyhedron's points */
static size_t points_of(const imp_shape *s, imp_vec3 buf[8], const imp_vec3 **out) {
    if (s->type == IMP_SHAPE_BOX) {
        imp_vec3 f[3];
        box_frame(s, f);
        box_corners(s->half, f, buf);
        *out = buf;
        return 8;
    }
    *out = s->verts;
    return s->n_verts;
}

int imp_toi_polytopes_3d_cast(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, double horizon, imp_toi_result *out) {
    /* a polyhedron the hull would call flat goes there, to fail as it does */
    if ((a->type == IMP_SHAPE_POLYHEDRON && imp_polyhedron_check(a->verts, a->n_verts) != 0) ||
        (b->type == IMP_SHAPE_POLYHEDRON && imp_polyhedron_check(b->verts, b->n_verts) != 0))
        return 0;
    imp_vec3 ba[8], bb[8];
    imp_toi_swept_input s = {*ma, *mb, NULL, NULL, 0, 0, NULL, 1, horizon};
    s.na = points_of(a, ba, &s.va);
    s.nb = points_of(b, bb, &s.vb);
    double ftol;
    if (!imp_toi_cast(&s, out, &ftol)) return 0;
    if (out->state == IMP_TOI_HIT)
        out->point = contact_point(&s, out->pa, out->pb, out->normal, ftol);
    return 1;
}

imp_toi_result imp_toi_polytopes_3d_hull(const imp_shape *a, const imp_motion *ma,
                                         const imp_shape *b, const imp_motion *mb, double horizon) {
    assert(horizon > 0.0);
    if (!is_polytope(a) || !is_polytope(b)) return imp_toi_failed(IMP_FAILURE_UNSUPPORTED);
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

imp_toi_result imp_toi_polytopes_3d(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                                    const imp_motion *mb, double horizon) {
    assert(horizon > 0.0);
    if (!is_polytope(a) || !is_polytope(b)) return imp_toi_failed(IMP_FAILURE_UNSUPPORTED);
    if (imp_toi_bounds_miss(ma, reach(a), mb, reach(b), horizon)) return imp_toi_none();
    if (a->type == IMP_SHAPE_BOX && b->type == IMP_SHAPE_BOX) return boxes(a, ma, b, mb, horizon);
    imp_toi_result cast;
    if (imp_toi_polytopes_3d_cast(a, ma, b, mb, horizon, &cast)) return cast;
    return imp_toi_polytopes_3d_hull(a, ma, b, mb, horizon);
}
