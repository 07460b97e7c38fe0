/*
 * contact_region.c - the centre of the region where two placed shapes
 * touch (core/contact_region.h).
 *
 * DESIGN
 * What: the contact point of a face (2D: side) contact is the centre of
 * the touching region, not one of its corners, so that an impulse there
 * turns a body exactly as much as the contact does: a box resting flat on
 * a floor gets the point under its centre and does not spin.
 * How: contact manifold clipping (Sutherland and Hodgman, "Reentrant
 * polygon clipping", CACM 1974; as in Box2D's b2CollidePolygons, which
 * clips the incident edge against the reference edge's side planes, and
 * Ericson, "Real-Time Collision Detection", 2005, 8.3.4; Gregorius,
 * "Robust Contact Creation for Physics Simulations", GDC 2015, for faces
 * of polyhedra). The reference and incident faces are found from the
 * normal the overlap test gave (SAT or closest features): each shape's
 * support points along the normal (for a) or against it (for b), within
 * IMP_REGION_FLAT_REL of its extent, projected on the plane across the
 * normal. In 2D they span an interval and the region is the intersection
 * of the two intervals (clipping a side against the other's two side
 * planes). In 3D each projected feature's convex hull (Andrew's monotone
 * chain) is a point, a segment or a polygon; the incident one is clipped
 * by every side plane of the reference polygon (Sutherland-Hodgman), or
 * two segments share the stretch where they are collinear. A halfspace's
 * feature is its whole plane: the region is the other shape's face. The
 * centre is the middle of a segment or the area centroid of a polygon
 * (triangle fan; the mean of the clipped points would weight a clipped
 * octagon's corners, not its area), put on the mid-plane halfway between
 * the two support planes, which is where the closest-point midpoint of
 * touching or overlapping shapes lies along the normal too.
 * Why: the centre is exact for a flat contact of uniform pressure, the
 * physically meaningful single point of a face contact (the centre of
 * pressure), and it is the point a rigid contact's net normal impulse acts
 * at when the bodies meet flat. Vertex and crossing-edge contacts have no
 * region with extent: the caller keeps its closest points.
 */
#include "contact_region.h"

#include <math.h>
#include <stdlib.h>

/* plane coordinates (x, y; z unused) */
typedef struct feature {
    imp_vec3 *p; /* the projected support points, then their hull */
    size_t n;
    double h;   /* support height along the outward direction, relative to the origin */
    double ext; /* the shape's extent (0 for a halfspace) */
    int plane;  /* a halfspace: the whole plane */
} feature;

static double cross2(imp_vec3 o, imp_vec3 a, imp_vec3 b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* The number of points a shape's feature can hold (0: a halfspace). */
static size_t feature_cap(const imp_shape *s, int dim) {
    imp_vec3 buf[8];
    const imp_vec3 *p;
    double r;
    return s->type == IMP_SHAPE_HALFSPACE ? 0 : imp_shape_points(s, dim, buf, &p, &r);
}

/* Shape s at pos: its support feature along the unit `dir`, in the plane coordinates of
 * basis u (and v in 3D) about the origin o, into f->p (room for feature_cap points).
 * 0, or -1 when a halfspace's normal is not dir. */
static int feature_make(const imp_shape *s, imp_vec3 pos, int dim, imp_vec3 dir, imp_vec3 o,
                        imp_vec3 u, imp_vec3 v, feature *f) {
    f->n = 0;
    f->plane = s->type == IMP_SHAPE_HALFSPACE;
    if (f->plane) {
        /* the solid is {x : normal . x <= offset}: its support plane along its normal */
        if (imp_dot(dir, s->normal) < 1.0 - 1e-12) return -1;
        f->h = s->offset - imp_dot(s->normal, o);
        f->ext = 0.0;
        return 0;
    }
    imp_vec3 buf[8];
    const imp_vec3 *p;
    double r = 0.0;
    size_t k = imp_shape_points(s, dim, buf, &p, &r);
    double top = -INFINITY;
    for (size_t i = 0; i < k; ++i)
        top = imp_fmax(top, imp_dot(dir, p[i]));
    f->ext = imp_shape_extent(s, dim);
    double tol = IMP_REGION_FLAT_REL * f->ext;
    imp_vec3 rel = imp_sub(pos, o);
    for (size_t i = 0; i < k; ++i) {
        if (imp_dot(dir, p[i]) < top - tol) continue;
        imp_vec3 w = imp_add(rel, p[i]);
        f->p[f->n++] = imp_v3(imp_dot(u, w), dim == 3 ? imp_dot(v, w) : 0.0, 0.0);
    }
    f->h = imp_dot(dir, rel) + top + r;
    return 0;
}

static int by_xy(const void *pa, const void *pb) {
    const imp_vec3 *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    return a->y < b->y ? -1 : a->y > b->y;
}

/* Replaces f's points by their convex hull, counter-clockwise without collinear points
 * (Andrew's monotone chain; all collinear: the two ends; all equal: one point), using
 * tmp (room for 2 f->n points). */
static void hull2(feature *f, imp_vec3 *tmp) {
    size_t n = f->n, k = 0;
    if (n < 2) return;
    qsort(f->p, n, sizeof *f->p, by_xy);
    for (size_t i = 0; i < n; ++i) { /* lower hull */
        while (k >= 2 && cross2(tmp[k - 2], tmp[k - 1], f->p[i]) <= 0.0)
            k--;
        tmp[k++] = f->p[i];
    }
    for (size_t i = n - 1, lo = k + 1; i-- > 0;) { /* upper hull */
        while (k >= lo && cross2(tmp[k - 2], tmp[k - 1], f->p[i]) <= 0.0)
            k--;
        tmp[k++] = f->p[i];
    }
    k = k > 1 ? k - 1 : k; /* the last point repeats the first */
    if (k == 2 && tmp[0].x == tmp[1].x && tmp[0].y == tmp[1].y) k = 1;
    for (size_t i = 0; i < k; ++i)
        f->p[i] = tmp[i];
    f->n = k;
}

/* Sutherland-Hodgman: the points of convex `sub` (m points: a point, a segment or a
 * polygon) inside every side of the counter-clockwise polygon `ref` (>= 3 points), into
 * out (room for m + nref points; tmp the same). Returns the count. */
static size_t clip(const imp_vec3 *ref, size_t nref, const imp_vec3 *sub, size_t m, imp_vec3 *out,
                   imp_vec3 *tmp) {
    imp_vec3 *src = tmp, *dst = out;
    for (size_t i = 0; i < m; ++i)
        src[i] = sub[i];
    for (size_t e = 0; e < nref && m > 0; ++e) {
        imp_vec3 e0 = ref[e], e1 = ref[(e + 1) % nref];
        size_t k = 0;
        for (size_t i = 0; i < m; ++i) {
            imp_vec3 prev = src[(i + m - 1) % m], cur = src[i];
            double dp = cross2(e0, e1, prev), dc = cross2(e0, e1, cur);
            if ((dp >= 0.0) != (dc >= 0.0)) {
                double t = dp / (dp - dc);
                dst[k++] = imp_add(prev, imp_scale(imp_sub(cur, prev), t));
            }
            if (dc >= 0.0) dst[k++] = cur;
        }
        imp_vec3 *t = src;
        src = dst;
        dst = t;
        m = k;
    }
    if (src != out)
        for (size_t i = 0; i < m; ++i)
            out[i] = src[i];
    return m;
}

/* The centre of points q[0..m) in the plane: the area centroid when they enclose area
 * above `lin` times their span, else the middle of their two farthest points when those
 * are more than `lin` apart. 1 (*c written), or 0. */
static int region_centre(const imp_vec3 *q, size_t m, double lin, imp_vec3 *c) {
    if (m == 0) return 0;
    size_t i1 = 0, i2 = 0;
    for (size_t i = 1; i < m; ++i) /* an end of the span, then the other */
        if (imp_len(imp_sub(q[i], q[0])) > imp_len(imp_sub(q[i1], q[0]))) i1 = i;
    for (size_t i = 0; i < m; ++i)
        if (imp_len(imp_sub(q[i], q[i1])) > imp_len(imp_sub(q[i2], q[i1]))) i2 = i;
    double span = imp_len(imp_sub(q[i2], q[i1]));
    if (!(span > lin)) return 0;
    double area2 = 0.0, cx = 0.0, cy = 0.0;
    for (size_t i = 1; i + 1 < m; ++i) { /* fan from q[0], relative to it */
        imp_vec3 d1 = imp_sub(q[i], q[0]), d2 = imp_sub(q[i + 1], q[0]);
        double a2 = d1.x * d2.y - d1.y * d2.x;
        area2 += a2;
        cx += a2 * (d1.x + d2.x) / 3.0;
        cy += a2 * (d1.y + d2.y) / 3.0;
    }
    if (fabs(area2) > lin * span) {
        *c = imp_v3(q[0].x + cx / area2, q[0].y + cy / area2, 0.0);
    } else {
        *c = imp_scale(imp_add(q[i1], q[i2]), 0.5);
    }
    return 1;
}

/* Two segments (or points) of the plane: the middle of the stretch they share when they
 * are collinear (within lin) and share more than lin. 1 (*c written), or 0. */
static int segments_centre(const feature *fa, const feature *fb, double lin, imp_vec3 *c) {
    if (fa->n < 2 || fb->n < 2) return 0;
    imp_vec3 a0 = fa->p[0], d = imp_sub(fa->p[1], a0);
    double len = imp_len(d);
    if (!(len > 0.0)) return 0;
    double t[2];
    for (int i = 0; i < 2; ++i) {
        imp_vec3 w = imp_sub(fb->p[i], a0);
        if (fabs(d.x * w.y - d.y * w.x) > lin * len) return 0; /* not on a's line */
        t[i] = imp_dot(w, d) / len;
    }
    double lo = imp_fmax(0.0, imp_fmin(t[0], t[1])), hi = imp_fmin(len, imp_fmax(t[0], t[1]));
    if (!(hi - lo > lin)) return 0;
    *c = imp_add(a0, imp_scale(d, 0.5 * (lo + hi) / len));
    return 1;
}

imp_region_status imp_contact_region(const imp_shape *a, imp_vec3 pa, const imp_shape *b,
                                     imp_vec3 pb, int dim, imp_vec3 n, imp_vec3 *centre) {
    imp_vec3 o = a->type == IMP_SHAPE_HALFSPACE ? pb : pa;
    imp_vec3 u, v = imp_v3(0.0, 0.0, 0.0);
    if (dim == 2) {
        u = imp_v3(-n.y, n.x, 0.0);
    } else {
        imp_vec3 axis = fabs(n.x) < 0.5 ? imp_v3(1.0, 0.0, 0.0) : imp_v3(0.0, 1.0, 0.0);
        u = imp_cross(n, axis);
        u = imp_scale(u, 1.0 / imp_len(u));
        v = imp_cross(n, u);
    }
    size_t ca = feature_cap(a, dim), cb = feature_cap(b, dim);
    /* features (ca + cb), hull scratch (2 max), clip output and scratch (ca + cb each) */
    size_t need = 3 * (ca + cb) + 2 * (ca > cb ? ca : cb) + 2;
    imp_vec3 local[64], *mem = local;
    if (need > sizeof local / sizeof local[0]) {
        mem = malloc(need * sizeof *mem);
        if (!mem) return IMP_REGION_NOMEM;
    }
    feature fa = {mem, 0, 0.0, 0.0, 0}, fb = {mem + ca, 0, 0.0, 0.0, 0};
    imp_vec3 *scratch = mem + ca + cb, *out = scratch + 2 * (ca > cb ? ca : cb) + 2,
             *tmp = out + ca + cb;
    imp_region_status st = IMP_REGION_POINT;
    imp_vec3 c = imp_v3(0.0, 0.0, 0.0);
    if (feature_make(a, pa, dim, n, o, u, v, &fa) == 0 &&
        feature_make(b, pb, dim, imp_neg(n), o, u, v, &fb) == 0 && !(fa.plane && fb.plane)) {
        double lin = IMP_REGION_FLAT_REL * (fa.ext + fb.ext);
        int found = 0;
        if (dim == 2) {
            /* the intervals of the two sides on the line across n */
            double lo = -INFINITY, hi = INFINITY;
            const feature *fs[2] = {&fa, &fb};
            for (int i = 0; i < 2; ++i) {
                if (fs[i]->plane) continue;
                double flo = INFINITY, fhi = -INFINITY;
                for (size_t j = 0; j < fs[i]->n; ++j) {
                    flo = imp_fmin(flo, fs[i]->p[j].x);
                    fhi = imp_fmax(fhi, fs[i]->p[j].x);
                }
                lo = imp_fmax(lo, flo);
                hi = imp_fmin(hi, fhi);
            }
            found = hi - lo > lin;
            c = imp_v3(0.5 * (lo + hi), 0.0, 0.0);
        } else {
            hull2(&fa, scratch);
            hull2(&fb, scratch);
            if (fa.plane || fb.plane) {
                const feature *f = fa.plane ? &fb : &fa;
                found = region_centre(f->p, f->n, lin, &c);
            } else if (fa.n >= 3 || fb.n >= 3) {
                const feature *ref = fa.n >= 3 ? &fa : &fb, *inc = fa.n >= 3 ? &fb : &fa;
                size_t m = clip(ref->p, ref->n, inc->p, inc->n, out, tmp);
                found = region_centre(out, m, lin, &c);
            } else {
                found = segments_centre(&fa, &fb, lin, &c);
            }
        }
        if (found) {
            /* a's support plane is at fa.h along n, b's at -fb.h: the mid-plane between */
            double h = 0.5 * (fa.h - fb.h);
            *centre =
                imp_add(o, imp_add(imp_add(imp_scale(u, c.x), imp_scale(v, c.y)), imp_scale(n, h)));
            st = IMP_REGION_FOUND;
        }
    }
    if (mem != local) free(mem);
    return st;
}
