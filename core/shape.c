/*
 * shape.c - shape validation: convex polygons, polyhedra spanning 3D,
 * rotations.
 *
 * DESIGN
 * What: the geometric checks api/ runs on shapes before anything reaches a
 * solver, and the small rotation helpers the box needs.
 * How: a polygon is convex when every turn (cross product of consecutive
 * edges) has the sign of its area and its edge directions turn through
 * exactly 2 pi together (O'Rourke, "Computational Geometry in C", 2nd ed.,
 * 1.3 and 7.4: the sign test alone accepts a pentagram, whose turns all
 * agree but whose boundary winds twice). Turns within IMP_POLYGON_TURN_REL
 * of zero are collinear vertices and accepted. A clockwise polygon is
 * reversed, so solvers see counter-clockwise vertices only. A polyhedron's
 * points span 3D when the fourth of the classic extreme-point
 * construction (farthest from the first, farthest from that line,
 * farthest from that plane) is off the plane by more than
 * IMP_POLYHEDRON_FLAT_REL of the extent.
 * Why: these are exactly the cases the contract makes 422, decided once
 * here with named tolerances rather than in every solver.
 */
#include "shape.h"

#include <math.h>
#include <stdlib.h>

#include "hull.h"
#include "tolerance.h"

#define TWO_PI 6.283185307179586476925286766559

void imp_shape_unprepare(imp_shape *s) {
    if (!s) return;
    imp_hull_destroy(s->hull);
    free(s->normals);
    s->hull = NULL;
    s->normals = NULL;
    s->normals_of = NULL;
}

void imp_shape_free(imp_shape *s) {
    if (!s) return;
    imp_shape_unprepare(s);
    free(s->verts);
    s->verts = NULL;
    s->n_verts = 0;
}

int imp_shape_prepare(imp_shape *s) {
    if (s->type == IMP_SHAPE_POLYGON) {
        if (s->normals || s->n_verts < 3 || !s->verts) return 0;
        imp_vec3 *nv = malloc(s->n_verts * sizeof *nv);
        if (!nv) return -1;
        for (size_t k = 0; k < s->n_verts; ++k) {
            imp_vec3 e0 = s->verts[k], e1 = s->verts[k + 1 == s->n_verts ? 0 : k + 1];
            nv[k] = imp_normalize_or(imp_v3(e1.y - e0.y, e0.x - e1.x, 0), imp_v3(0, 0, 0));
        }
        s->normals = nv;
        s->normals_of = s->verts;
        s->reach = imp_points_reach(s->verts, s->n_verts);
        return 0;
    }
    if (s->type != IMP_SHAPE_POLYHEDRON || s->hull) return 0;
    imp_hull_status st = imp_hull_build(s->verts, s->n_verts, &s->hull, NULL);
    return st == IMP_HULL_NOMEM ? -1 : 0;
}

double imp_points_reach(const imp_vec3 *v, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double d = imp_dot(v[i], v[i]);
        m = d > m ? d : m;
    }
    return sqrt(m);
}

const char *imp_shape_type_name(imp_shape_type t) {
    switch (t) {
    case IMP_SHAPE_SPHERE: return "sphere";
    case IMP_SHAPE_BOX: return "box";
    case IMP_SHAPE_POLYGON: return "polygon";
    case IMP_SHAPE_POLYHEDRON: return "polyhedron";
    case IMP_SHAPE_CAPSULE: return "capsule";
    case IMP_SHAPE_SEGMENT: return "segment";
    case IMP_SHAPE_HALFSPACE: return "halfspace";
    }
    return "unknown";
}

imp_quat imp_quat_from_angle(double angle) {
    imp_quat q = {cos(0.5 * angle), 0.0, 0.0, sin(0.5 * angle)};
    return q;
}

int imp_quat_normalize(imp_quat q, imp_quat *out) {
    /* scaled by the largest component first, so neither 1e-200 nor 1e200 over- or underflows */
    double m = imp_fmax(imp_fmax(fabs(q.w), fabs(q.x)), imp_fmax(fabs(q.y), fabs(q.z)));
    if (!(m > 0.0) || !isfinite(m)) return -1;
    imp_quat s = {q.w / m, q.x / m, q.y / m, q.z / m};
    double l = sqrt(s.w * s.w + s.x * s.x + s.y * s.y + s.z * s.z);
    out->w = s.w / l;
    out->x = s.x / l;
    out->y = s.y / l;
    out->z = s.z / l;
    return 0;
}

imp_vec3 imp_quat_rotate(imp_quat q, imp_vec3 v) {
    /* v + 2 w (u x v) + 2 u x (u x v), u the vector part */
    imp_vec3 u = imp_v3(q.x, q.y, q.z);
    imp_vec3 t = imp_scale(imp_cross(u, v), 2.0);
    return imp_add(imp_add(v, imp_scale(t, q.w)), imp_cross(u, t));
}

imp_quat imp_quat_mul(imp_quat p, imp_quat q) {
    imp_quat r = {p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z,
                  p.w * q.x + p.x * q.w + p.y * q.z - p.z * q.y,
                  p.w * q.y - p.x * q.z + p.y * q.w + p.z * q.x,
                  p.w * q.z + p.x * q.y - p.y * q.x + p.z * q.w};
    return r;
}

imp_quat imp_quat_from_rotvec(imp_vec3 w) {
    double angle = imp_len(w);
    if (!(angle > 0.0)) return (imp_quat){1.0, 0.0, 0.0, 0.0};
    double s = sin(0.5 * angle) / angle;
    imp_quat q = {cos(0.5 * angle), w.x * s, w.y * s, w.z * s};
    return q;
}

void imp_shape_rotate(imp_shape *s, imp_quat q) {
    switch (s->type) {
    case IMP_SHAPE_SPHERE: break;
    case IMP_SHAPE_BOX: s->rot = imp_quat_mul(q, s->rot); break;
    case IMP_SHAPE_POLYGON:
    case IMP_SHAPE_POLYHEDRON:
        for (size_t i = 0; i < s->n_verts; ++i)
            s->verts[i] = imp_quat_rotate(q, s->verts[i]);
        s->hull = NULL; /* they held the points before the turn */
        s->normals = NULL;
        s->normals_of = NULL;
        break;
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT:
        s->a = imp_quat_rotate(q, s->a);
        s->b = imp_quat_rotate(q, s->b);
        break;
    case IMP_SHAPE_HALFSPACE: s->normal = imp_quat_rotate(q, s->normal); break;
    }
}

void imp_shape_box_corners(const imp_shape *s, imp_vec3 out[4]) {
    static const double sx[4] = {-1, 1, 1, -1}, sy[4] = {-1, -1, 1, 1};
    for (int i = 0; i < 4; ++i) /* counter-clockwise, kept so by the rotation */
        out[i] = imp_quat_rotate(s->rot, imp_v3(sx[i] * s->half.x, sy[i] * s->half.y, 0));
}

size_t imp_shape_core(const imp_shape *s, int dim, imp_vec3 buf[4], const imp_vec3 **out,
                      double *radius) {
    *out = buf;
    *radius = 0.0;
    switch (s->type) {
    case IMP_SHAPE_SPHERE:
        buf[0] = imp_v3(0, 0, 0);
        *radius = s->radius;
        return 1;
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT:
        buf[0] = s->a;
        buf[1] = s->b;
        *radius = s->type == IMP_SHAPE_CAPSULE ? s->radius : 0.0;
        return s->a.x == s->b.x && s->a.y == s->b.y && s->a.z == s->b.z ? 1 : 2;
    case IMP_SHAPE_BOX:
    case IMP_SHAPE_POLYGON: return dim == 2 ? imp_shape_polygon_vertices(s, buf, out) : 0;
    case IMP_SHAPE_POLYHEDRON:
    case IMP_SHAPE_HALFSPACE: break;
    }
    return 0;
}

size_t imp_shape_points(const imp_shape *s, int dim, imp_vec3 buf[8], const imp_vec3 **out,
                        double *radius) {
    size_t n = imp_shape_core(s, dim, buf, out, radius);
    if (n > 0) return n;
    if (s->type == IMP_SHAPE_BOX) {
        for (int i = 0; i < 8; ++i)
            buf[i] = imp_quat_rotate(s->rot, imp_v3(i & 1 ? s->half.x : -s->half.x,
                                                    i & 2 ? s->half.y : -s->half.y,
                                                    i & 4 ? s->half.z : -s->half.z));
        *out = buf;
        return 8;
    }
    if (s->type == IMP_SHAPE_POLYHEDRON) {
        *out = s->verts;
        return s->n_verts;
    }
    return 0;
}

/* The largest distance of the points from the position (0 for none). */
static double core_reach(const imp_vec3 *pts, size_t n) {
    double r = 0.0;
    for (size_t i = 0; i < n; ++i)
        r = imp_fmax(r, imp_len(pts[i]));
    return r;
}

double imp_shape_extent(const imp_shape *s, int dim) {
    imp_vec3 buf[8];
    const imp_vec3 *p;
    double r = 0.0;
    size_t k = imp_shape_points(s, dim, buf, &p, &r);
    if (k == 0) return 0.0;
    return core_reach(p, k) + r;
}

static double cross2(imp_vec3 a, imp_vec3 b) { return a.x * b.y - a.y * b.x; }

static imp_vec3 edge(const imp_vec3 *v, size_t n, size_t i) {
    return imp_sub(v[(i + 1) % n], v[i]);
}

imp_polygon_status imp_polygon_normalize(imp_vec3 *v, size_t n, size_t *bad) {
    *bad = 0;
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 e = edge(v, n, i);
        if (e.x == 0.0 && e.y == 0.0) {
            *bad = (i + 1) % n;
            return IMP_POLYGON_REPEATED;
        }
    }
    /* twice the signed area, about the first vertex (shoelace) */
    double area2 = 0.0;
    for (size_t i = 1; i + 1 < n; ++i)
        area2 += cross2(imp_sub(v[i], v[0]), imp_sub(v[i + 1], v[0]));
    /* orientation from the turns rather than the area alone: the area of a
     * flat polygon is rounding noise */
    double turning = 0.0;
    int sign = 0;
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 e1 = edge(v, n, (i + n - 1) % n), e2 = edge(v, n, i);
        double c = cross2(e1, e2);
        turning += atan2(c, imp_dot(e1, e2));
        if (fabs(turning) > TWO_PI + IMP_POLYGON_TURNING_SLACK) {
            *bad = i; /* the boundary starts its second winding here */
            return IMP_POLYGON_NONCONVEX;
        }
        if (fabs(c) <= IMP_POLYGON_TURN_REL * imp_len(e1) * imp_len(e2))
            continue; /* collinear: no turn */
        int s = c > 0.0 ? 1 : -1;
        if (sign == 0) {
            /* the first real turn sets the orientation unless the area disagrees;
             * the area decides, the turns must follow it */
            sign = area2 > 0.0 ? 1 : area2 < 0.0 ? -1 : s;
        }
        if (s != sign) {
            *bad = i;
            return IMP_POLYGON_NONCONVEX;
        }
    }
    if (sign == 0) return IMP_POLYGON_FLAT;
    /* turns of one sign add up to a whole number of windings, and more than one was
     * caught above */
    if (sign < 0) {
        for (size_t i = 0, j = n - 1; i < j; ++i, --j) {
            imp_vec3 t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    }
    return IMP_POLYGON_OK;
}

int imp_polyhedron_check(const imp_vec3 *p, size_t n) {
    if (n < 4) return -1;
    size_t i1 = 0, i2 = 0;
    double best = 0.0;
    for (size_t i = 1; i < n; ++i) {
        double d = imp_len(imp_sub(p[i], p[0]));
        if (d > best) {
            best = d;
            i1 = i;
        }
    }
    double extent = best;
    if (!(extent > 0.0)) return -1; /* one distinct point */
    imp_vec3 axis = imp_scale(imp_sub(p[i1], p[0]), 1.0 / extent);
    best = 0.0;
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 r = imp_sub(p[i], p[0]);
        double d = imp_len(imp_sub(r, imp_scale(axis, imp_dot(r, axis))));
        if (d > best) {
            best = d;
            i2 = i;
        }
    }
    if (best <= IMP_POLYHEDRON_FLAT_REL * extent) return -1; /* collinear */
    imp_vec3 nrm =
        imp_normalize_or(imp_cross(imp_sub(p[i1], p[0]), imp_sub(p[i2], p[0])), imp_v3(0, 0, 0));
    best = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double d = fabs(imp_dot(imp_sub(p[i], p[0]), nrm));
        best = imp_fmax(best, d);
    }
    return best > IMP_POLYHEDRON_FLAT_REL * extent ? 0 : -1;
}

void imp_shape_bounds(const imp_shape *s, int dim, imp_vec3 *lo, imp_vec3 *hi) {
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r;
    size_t n = imp_shape_points(s, dim, buf, &pts, &r);
    *lo = imp_v3(INFINITY, INFINITY, INFINITY);
    *hi = imp_v3(-INFINITY, -INFINITY, -INFINITY);
    for (size_t i = 0; i < n; ++i) {
        *lo =
            imp_v3(imp_fmin(lo->x, pts[i].x), imp_fmin(lo->y, pts[i].y), imp_fmin(lo->z, pts[i].z));
        *hi =
            imp_v3(imp_fmax(hi->x, pts[i].x), imp_fmax(hi->y, pts[i].y), imp_fmax(hi->z, pts[i].z));
    }
    *lo = imp_sub(*lo, imp_v3(r, r, dim == 3 ? r : 0));
    *hi = imp_add(*hi, imp_v3(r, r, dim == 3 ? r : 0));
}

int imp_shape_turns(const imp_shape *s, imp_vec3 w) {
    return s && s->type != IMP_SHAPE_SPHERE && s->type != IMP_SHAPE_HALFSPACE &&
           !(w.x == 0.0 && w.y == 0.0 && w.z == 0.0);
}

/*
 * A point x of the shape (relative to the position, at t = 0) is at R(w t) x, a turn by the
 * angle |w| t about the fixed axis u = w / |w|. Its offset from the position is bounded per
 * axis k by three boxes, each holding every orientation over [0, horizon]: (a) the bounding
 * sphere, |R x| = |x| <= reach; (b) the cylinder about u: R x = (u.x) u + c, c perpendicular
 * to u with |c| = rho(x) (the distance of x from the axis), so its k-th coordinate lies in
 * u_k (u.x) +- rho sqrt(1 - u_k^2) (a spin about z keeps a 3D shape's z range); (c) the
 * start: |R x - x| = 2 sin(|w| t / 2) rho <= |w| T rho, the chord no longer than the arc, so
 * the start box grown by |w| T rho_max (tight for short turns). Their intersection per axis,
 * grown by the rounding radius (the rounded shape is the turned core plus a ball, which
 * turning does not move).
 */
void imp_shape_turning_bounds(const imp_shape *shape, imp_vec3 w, double horizon, int dim,
                              imp_vec3 *out_lo, imp_vec3 *out_hi) {
    if (!imp_shape_turns(shape, w)) {
        imp_shape_bounds(shape, dim, out_lo, out_hi);
        return;
    }
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double rad;
    size_t n = imp_shape_points(shape, dim, buf, &pts, &rad);
    /* the axis from w scaled to its largest component first: a tiny w (1e-320) would lose
     * its squares to underflow */
    double big = imp_max_abs(w);
    imp_vec3 ws = imp_v3(w.x / big, w.y / big, w.z / big);
    double wsl = imp_len(ws), wl = big * wsl, reach = core_reach(pts, n);
    imp_vec3 u = imp_scale(ws, 1.0 / wsl);
    double ulo = INFINITY, uhi = -INFINITY, rho = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double h = imp_dot(u, pts[i]);
        ulo = imp_fmin(ulo, h);
        uhi = imp_fmax(uhi, h);
        rho = imp_fmax(rho, imp_len(imp_madd(pts[i], u, -h)));
    }
    imp_vec3 slo, shi; /* (c): the start box grown by the longest chord */
    imp_shape_bounds(shape, dim, &slo, &shi);
    double chord = wl * horizon * rho;
    const double uc[3] = {u.x, u.y, u.z}, sl[3] = {slo.x, slo.y, slo.z},
                 sh[3] = {shi.x, shi.y, shi.z};
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int k = 0; k < dim; ++k) {
        /* (b): sqrt(1 - u_k^2) from the other two components, without cancellation */
        double o1 = uc[(k + 1) % 3], o2 = uc[(k + 2) % 3], perp = sqrt(o1 * o1 + o2 * o2);
        double c1 = uc[k] * ulo, c2 = uc[k] * uhi;
        double blo = imp_fmin(c1, c2) - rho * perp, bhi = imp_fmax(c1, c2) + rho * perp;
        lo[k] = imp_fmax(imp_fmax(-reach, blo), sl[k] + rad - chord) - rad;
        hi[k] = imp_fmin(imp_fmin(reach, bhi), sh[k] - rad + chord) + rad;
    }
    *out_lo = imp_v3(lo[0], lo[1], lo[2]);
    *out_hi = imp_v3(hi[0], hi[1], hi[2]);
}
