/*
 * inertia.c - inertia tensors of uniform solids, for rigid-body response.
 *
 * DESIGN
 * What: the inertia tensor I = integral of rho (|x|^2 Id - x x^T) over the
 * shape, about the body's position (the origin of the shape's coordinates,
 * which the contract takes as the centre of mass for response), for the
 * shape as turned by the body's orientation, so I is the world-frame tensor
 * R I_body R^T directly, full (not diagonal) whenever the shape is turned or
 * not centred on its position.
 * How: everything goes through the second moment C = integral rho x x^T,
 * with I = tr(C) Id - C (3D) and Izz = Cxx + Cyy (2D):
 *  - sphere: C = m r^2 / 5 Id (3D), a disk m r^2 / 4 per axis (2D);
 *  - 3D box: C = R diag(m h_i^2 / 3) R^T;
 *  - 2D box and polygon: a fan of triangles (0, p_i, p_i+1) from the
 *    origin with signed areas, each C_T = A/12 (sum x x^T + s s^T) over its
 *    three vertices (s their sum);
 *  - polyhedron: its convex hull (core/hull.h), each face fanned into
 *    triangles and each triangle joined to an interior point g (the mean of
 *    the hull vertices) in a tetrahedron, C_T = V/20 (sum x x^T + s s^T)
 *    over its four vertices (Tonon, "Explicit exact formulas for the 3-D
 *    tetrahedron inertia tensor in terms of its vertex coordinates",
 *    J. Math. Stat. 2005);
 *  - capsule: a cylinder (3D) or rectangle (2D) and two hemispheres (half
 *    disks) about the capsule's centre, in closed form, turned to its axis
 *    and moved to the origin by the parallel-axis theorem; a segment is a
 *    capsule of radius 0 (a thin rod).
 * The density is mass / volume (area in 2D), so the result is exact in
 * real arithmetic for the uniform solid.
 * Why: a tensor (not three moments) because the shape's frame is not the
 * world frame and the position need not be the centroid; the response
 * needs R I^-1 R^T, which is the inverse of this tensor.
 */
#include "inertia.h"

#include <math.h>
#include <stdlib.h>

#include "hull.h"

static const double PI = 3.14159265358979323846;

/* c += w (sum x x^T + s s^T) over the n points p (s their sum) */
static void simplex_moment(const imp_vec3 *p, size_t n, double w, double c[9]) {
    imp_vec3 s = imp_v3(0.0, 0.0, 0.0);
    for (size_t i = 0; i < n; ++i)
        s = imp_add(s, p[i]);
    for (size_t i = 0; i <= n; ++i) {
        imp_vec3 x = i < n ? p[i] : s;
        double v[3] = {x.x, x.y, x.z};
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k)
                c[3 * r + k] += w * v[r] * v[k];
    }
}

/* C of a polygon of n counter-clockwise vertices, per unit density; *area its area */
static void polygon_moment(const imp_vec3 *v, size_t n, double c[9], double *area) {
    *area = 0.0;
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 t[3] = {imp_v3(0.0, 0.0, 0.0), v[i], v[(i + 1) % n]};
        double a = 0.5 * (t[1].x * t[2].y - t[1].y * t[2].x);
        *area += a;
        simplex_moment(t, 3, a / 12.0, c);
    }
}

/* C of a polyhedron (the hull of its points), per unit density; *vol its volume */
static imp_inertia_status polyhedron_moment(const imp_shape *s, double c[9], double *vol) {
    imp_hull *h = NULL;
    imp_hull_status hs = imp_hull_build(s->verts, s->n_verts, &h, NULL);
    if (hs != IMP_HULL_OK) return hs == IMP_HULL_NOMEM ? IMP_INERTIA_NOMEM : IMP_INERTIA_NO_VOLUME;
    imp_vec3 g = imp_v3(0.0, 0.0, 0.0);
    for (size_t i = 0; i < h->n_verts; ++i)
        g = imp_add(g, h->verts[i]);
    g = imp_scale(g, 1.0 / (double)h->n_verts);
    *vol = 0.0;
    for (size_t f = 0; f < h->n_faces; ++f) {
        size_t lo = h->face_start[f], hi = h->face_start[f + 1];
        imp_vec3 p0 = h->verts[h->face_verts[lo]];
        for (size_t i = lo + 1; i + 1 < hi; ++i) {
            imp_vec3 t[4] = {g, p0, h->verts[h->face_verts[i]], h->verts[h->face_verts[i + 1]]};
            imp_vec3 e1 = imp_sub(t[1], g), e2 = imp_sub(t[2], g), e3 = imp_sub(t[3], g);
            double v = imp_dot(e1, imp_cross(e2, e3)) / 6.0; /* > 0: faces wind outwards */
            *vol += v;
            simplex_moment(t, 4, v / 20.0, c);
        }
    }
    imp_hull_destroy(h);
    return IMP_INERTIA_OK;
}

/* C of a capsule (segment a-b rounded by r), per unit density; *size its volume (area) */
static void capsule_moment(imp_vec3 a, imp_vec3 b, double r, int dim, double c[9], double *size) {
    imp_vec3 d = imp_sub(b, a), mid = imp_scale(imp_add(a, b), 0.5);
    double len = imp_len(d);
    imp_vec3 u = len > 0.0 ? imp_scale(d, 1.0 / len) : imp_v3(1.0, 0.0, 0.0);
    double axial, across, across2 = 0.0; /* C about mid: along u, and across it */
    if (dim == 2) {
        double rect = 2.0 * r * len, disk = PI * r * r, hc = 4.0 * r / (3.0 * PI);
        *size = rect + disk;
        /* along u: rectangle len^2/12, half disks about their flat edges r^2/4 moved by len/2 */
        axial = rect * len * len / 12.0 + disk * (r * r / 4.0 + len * len / 4.0 + len * hc);
        across = rect * r * r / 3.0 + disk * r * r / 4.0;
    } else {
        double cyl = PI * r * r * len, ball = 4.0 / 3.0 * PI * r * r * r;
        *size = cyl + ball;
        /* hemispheres about their flat faces: r^2/5 per axis, centroid 3r/8 from it */
        axial =
            cyl * len * len / 12.0 + ball * (r * r / 5.0 + len * len / 4.0 + 3.0 * len * r / 8.0);
        across = cyl * r * r / 4.0 + ball * r * r / 5.0;
        across2 = across;
    }
    /* C = axial u u^T + across (Id - u u^T) (in 2D across the plane's other axis only) */
    double uv[3] = {u.x, u.y, u.z}, mv[3] = {mid.x, mid.y, mid.z};
    imp_vec3 w = dim == 2 ? imp_v3(-u.y, u.x, 0.0) : imp_v3(0.0, 0.0, 0.0);
    double wv[3] = {w.x, w.y, w.z};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
            double e = (dim == 2) ? axial * uv[i] * uv[k] + across * wv[i] * wv[k]
                                  : axial * uv[i] * uv[k] + across2 * ((i == k) - uv[i] * uv[k]);
            c[3 * i + k] += e + *size * mv[i] * mv[k]; /* parallel axes to the origin */
        }
}

imp_inertia_status imp_inertia_shape(const imp_shape *s, int dim, double mass, imp_mat3 *out) {
    double c[9] = {0.0};
    double size = 1.0;
    imp_vec3 buf[4];
    const imp_vec3 *v = buf;
    switch (s->type) {
    case IMP_SHAPE_SPHERE: {
        double q = s->radius * s->radius * (dim == 2 ? 0.25 : 0.2);
        c[0] = c[4] = q;
        c[8] = dim == 2 ? 0.0 : q;
        break;
    }
    case IMP_SHAPE_BOX:
        if (dim == 3) {
            double h[3] = {s->half.x, s->half.y, s->half.z};
            imp_vec3 ax[3] = {imp_quat_rotate(s->rot, imp_v3(1.0, 0.0, 0.0)),
                              imp_quat_rotate(s->rot, imp_v3(0.0, 1.0, 0.0)),
                              imp_quat_rotate(s->rot, imp_v3(0.0, 0.0, 1.0))};
            for (int j = 0; j < 3; ++j) {
                double a[3] = {ax[j].x, ax[j].y, ax[j].z}, q = h[j] * h[j] / 3.0;
                for (int i = 0; i < 3; ++i)
                    for (int k = 0; k < 3; ++k)
                        c[3 * i + k] += q * a[i] * a[k];
            }
            break;
        }
        polygon_moment(buf, imp_shape_polygon_vertices(s, buf, &v), c, &size); /* 2D */
        break;
    case IMP_SHAPE_POLYGON: polygon_moment(s->verts, s->n_verts, c, &size); break;
    case IMP_SHAPE_POLYHEDRON: {
        imp_inertia_status st = polyhedron_moment(s, c, &size);
        if (st != IMP_INERTIA_OK) return st;
        break;
    }
    case IMP_SHAPE_CAPSULE:
    case IMP_SHAPE_SEGMENT:
        capsule_moment(s->a, s->b, s->type == IMP_SHAPE_CAPSULE ? s->radius : 0.0, dim, c, &size);
        if (size == 0.0) { /* a thin rod: C = m (len^2/12 u u^T + mid mid^T), per unit mass */
            imp_vec3 ends[2] = {s->a, s->b};
            /* (a a^T + b b^T + (a+b)(a+b)^T) / 6 = (a a^T + b b^T) / 3 + (a b^T + b a^T) / 6 */
            for (int i = 0; i < 9; ++i)
                c[i] = 0.0;
            simplex_moment(ends, 2, 1.0 / 6.0, c);
            size = 1.0;
        }
        break;
    default: return IMP_INERTIA_UNSUPPORTED;
    }
    double rho = mass / size;
    for (int i = 0; i < 9; ++i)
        c[i] *= rho;
    imp_mat3 r = {{0.0}};
    if (dim == 2) {
        r.m[8] = c[0] + c[4];
    } else {
        double tr = c[0] + c[4] + c[8];
        for (int i = 0; i < 9; ++i)
            r.m[i] = -c[i];
        r.m[0] += tr;
        r.m[4] += tr;
        r.m[8] += tr;
    }
    *out = r;
    imp_mat3 inv;
    return imp_mat3_inverse_spd(out, dim, &inv) ? IMP_INERTIA_NO_VOLUME : IMP_INERTIA_OK;
}

imp_mat3 imp_mat3_principal(imp_quat q, imp_vec3 moments) {
    imp_vec3 ax[3] = {imp_quat_rotate(q, imp_v3(1.0, 0.0, 0.0)),
                      imp_quat_rotate(q, imp_v3(0.0, 1.0, 0.0)),
                      imp_quat_rotate(q, imp_v3(0.0, 0.0, 1.0))};
    double mo[3] = {moments.x, moments.y, moments.z};
    imp_mat3 r = {{0.0}};
    for (int j = 0; j < 3; ++j) {
        double a[3] = {ax[j].x, ax[j].y, ax[j].z};
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k)
                r.m[3 * i + k] += mo[j] * a[i] * a[k];
    }
    return r;
}

int imp_mat3_inverse_spd(const imp_mat3 *a, int dim, imp_mat3 *out) {
    const double *m = a->m;
    imp_mat3 r = {{0.0}};
    if (dim == 2) {
        if (!(m[8] > 0.0) || !isfinite(m[8]) || !isfinite(1.0 / m[8])) return -1;
        r.m[8] = 1.0 / m[8];
        *out = r;
        return 0;
    }
    double c00 = m[4] * m[8] - m[5] * m[7], c01 = m[5] * m[6] - m[3] * m[8],
           c02 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c00 + m[1] * c01 + m[2] * c02;
    double scale = imp_fmax(fabs(m[0]), imp_fmax(fabs(m[4]), fabs(m[8])));
    /* not positive definite, or so thin that the smallest moment is lost in rounding */
    if (!(m[0] > 0.0 && m[4] > 0.0 && m[8] > 0.0) || !(det > 1e-12 * scale * scale * scale) ||
        !isfinite(det))
        return -1;
    r.m[0] = c00 / det;
    r.m[1] = c01 / det;
    r.m[2] = c02 / det;
    r.m[4] = (m[0] * m[8] - m[2] * m[6]) / det;
    r.m[5] = (m[2] * m[3] - m[0] * m[5]) / det;
    r.m[8] = (m[0] * m[4] - m[1] * m[3]) / det;
    r.m[3] = r.m[1]; /* symmetric */
    r.m[6] = r.m[2];
    r.m[7] = r.m[5];
    for (int i = 0; i < 9; ++i)
        if (!isfinite(r.m[i])) return -1;
    *out = r;
    return 0;
}

imp_vec3 imp_mat3_apply(const imp_mat3 *m, imp_vec3 v) {
    const double *a = m->m;
    return imp_v3(a[0] * v.x + a[1] * v.y + a[2] * v.z, a[3] * v.x + a[4] * v.y + a[5] * v.z,
                  a[6] * v.x + a[7] * v.y + a[8] * v.z);
}
