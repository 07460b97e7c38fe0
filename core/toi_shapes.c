/*
 * toi_shapes.c - the time of impact of two shapes, by pair type.
 *
 * DESIGN
 * What: one entry point for every endpoint that needs a pairwise time of
 * impact (/v1/toi, scenes, the move checker), so the choice of solver
 * lives in one place.
 * How: two spheres go to the centre-distance polynomial (toi_sphere.c,
 * which also gives the closest approach); two 2D polygons or boxes, and two
 * 3D boxes or polyhedra, to the swept separating axes (toi_polytope_2d.c,
 * toi_polytope_3d.c); a halfspace and anything to the lowest-point
 * quadratic (toi_halfspace.c); every other pair to the rounded
 * Minkowski-difference cast (toi_rounded_2d.c, toi_rounded_3d.c). Only 3D
 * pairs with neither volume nor radius (two segments, a point and a
 * segment, where touching is a measure-zero event with no faces to cross)
 * go to conservative advancement (toi_advance.c) to IMP_TOI_ADVANCE_REL of
 * the pair's scale, which the result reports as its tolerance.
 */
#include "toi_shapes.h"

#include <math.h>

#include "toi_advance.h"
#include "toi_halfspace.h"
#include "toi_polytope.h"
#include "toi_rounded.h"
#include "tolerance.h"

static int is_polygon_2d(const imp_shape *s, int dim) {
    return dim == 2 && (s->type == IMP_SHAPE_BOX || s->type == IMP_SHAPE_POLYGON);
}

static int is_polytope_3d(const imp_shape *s, int dim) {
    return dim == 3 && (s->type == IMP_SHAPE_BOX || s->type == IMP_SHAPE_POLYHEDRON);
}

static int is_thin_3d(const imp_shape *s) {
    return s->type == IMP_SHAPE_SPHERE || s->type == IMP_SHAPE_CAPSULE ||
           s->type == IMP_SHAPE_SEGMENT;
}

int imp_toi_shapes_closed_form(const imp_shape *a, const imp_shape *b, int dim) {
    int ha = a->type == IMP_SHAPE_HALFSPACE, hb = b->type == IMP_SHAPE_HALFSPACE;
    if (ha || hb) return !(ha && hb);
    if (dim == 2 || (a->type == IMP_SHAPE_SPHERE && b->type == IMP_SHAPE_SPHERE)) return 1;
    /* 3D: a box or polyhedron on either side has volume; else a radius must */
    return !(is_thin_3d(a) && is_thin_3d(b)) || a->radius + b->radius > 0.0;
}

int imp_toi_shapes_supported(const imp_shape *a, const imp_shape *b, int dim) {
    (void)dim;
    return !(a->type == IMP_SHAPE_HALFSPACE && b->type == IMP_SHAPE_HALFSPACE);
}

/* The pair's length scale: positions and the shapes' own extents. */
static double pair_scale(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                         const imp_motion *mb, int dim) {
    double s = imp_fmax(imp_max_abs(ma->p), imp_max_abs(mb->p));
    const imp_shape *sh[2] = {a, b};
    for (int k = 0; k < 2; ++k) {
        imp_vec3 buf[8];
        const imp_vec3 *pts;
        double r;
        size_t n = imp_shape_points(sh[k], dim, buf, &pts, &r);
        for (size_t i = 0; i < n; ++i)
            s = imp_fmax(s, imp_max_abs(pts[i]) + r);
    }
    return s > 0.0 ? s : 1.0;
}

/* conservative advancement to IMP_TOI_ADVANCE_REL of the pair's scale */
static imp_toi_result advance(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, int dim, double horizon) {
    double tol = IMP_TOI_ADVANCE_REL * pair_scale(a, ma, b, mb, dim);
    imp_toi_result r = imp_toi_advance(a, ma, b, mb, dim, horizon, tol);
    r.tolerance = tol;
    return r;
}

imp_toi_result imp_toi_shapes(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                              const imp_motion *mb, int dim, double horizon) {
    if (!imp_toi_shapes_supported(a, b, dim)) return imp_toi_failed(IMP_FAILURE_UNSUPPORTED);
    if (dim == 3 && (is_thin_3d(a) || is_thin_3d(b)) && a->type != IMP_SHAPE_HALFSPACE &&
        b->type != IMP_SHAPE_HALFSPACE &&
        !(a->type == IMP_SHAPE_SPHERE && b->type == IMP_SHAPE_SPHERE)) {
        /* unsupported: no volume and no radius (or a box flat to rounding): advancement */
        imp_toi_result r = imp_toi_rounded_3d(a, ma, b, mb, horizon);
        if (r.state == IMP_TOI_FAILED && r.failure == IMP_FAILURE_UNSUPPORTED)
            return advance(a, ma, b, mb, dim, horizon);
        return r;
    }
    if (!imp_toi_shapes_closed_form(a, b, dim)) return advance(a, ma, b, mb, dim, horizon);
    if (a->type == IMP_SHAPE_SPHERE && b->type == IMP_SHAPE_SPHERE) {
        imp_toi_spheres_input in = {*ma, *mb, a->radius, b->radius, horizon};
        return imp_toi_spheres(&in);
    }
    if (is_polytope_3d(a, dim) && is_polytope_3d(b, dim))
        return imp_toi_polytopes_3d(a, ma, b, mb, horizon);
    if (is_polygon_2d(a, dim) && is_polygon_2d(b, dim)) {
        imp_vec3 box_a[4], box_b[4];
        imp_toi_polygons_input in = {.a = *ma, .b = *mb, .horizon = horizon};
        in.na = imp_shape_polygon_vertices(a, box_a, &in.va);
        in.nb = imp_shape_polygon_vertices(b, box_b, &in.vb);
        in.normals_a = imp_shape_polygon_normals(a);
        in.normals_b = imp_shape_polygon_normals(b);
        in.reach_a = a->reach;
        in.reach_b = b->reach;
        return imp_toi_polygons(&in);
    }
    if (a->type == IMP_SHAPE_HALFSPACE || b->type == IMP_SHAPE_HALFSPACE) {
        int h_is_a = a->type == IMP_SHAPE_HALFSPACE;
        const imp_shape *h = h_is_a ? a : b, *o = h_is_a ? b : a;
        imp_vec3 buf[8];
        imp_toi_halfspace_input in = {.body = h_is_a ? *mb : *ma,
                                      .normal = h->normal,
                                      .offset = h->offset,
                                      .plane = h_is_a ? *ma : *mb,
                                      .horizon = horizon,
                                      .halfspace_is_a = h_is_a};
        in.n = imp_shape_points(o, dim, buf, &in.verts, &in.radius);
        return imp_toi_halfspace(&in);
    }
    imp_vec3 core_a[4], core_b[4];
    imp_toi_rounded_input in = {.a = *ma, .b = *mb, .horizon = horizon};
    in.na = imp_shape_core(a, 2, core_a, &in.va, &in.ra);
    in.nb = imp_shape_core(b, 2, core_b, &in.vb, &in.rb);
    in.normals_a = imp_shape_polygon_normals(a);
    in.normals_b = imp_shape_polygon_normals(b);
    in.reach_a = a->reach;
    in.reach_b = b->reach;
    return imp_toi_rounded_2d(&in);
}
