/*
 * fuzz_toi.c - pairwise time of impact of arbitrary 2D shapes and motions,
 * checked for self-consistency with an independent test.
 *
 * The bytes become two shapes (sphere, box, polygon, capsule, segment, or
 * a halfspace for b), their positions, velocities and accelerations and a
 * horizon, all finite and of moderate size. Findings: a crash or sanitizer
 * report, a failed state for a supported pair, a hit at which the static
 * overlap test (core/overlap.c, no sweep) does not find the shapes
 * touching to within 1e-9 of the scene's scale, and an interpenetration
 * deeper than that at a sampled time before the reported hit (or at any
 * sampled time of a `none`).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/overlap.h"
#include "core/toi_shapes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

/* a number in [lo, hi] from the next two bytes (0 when the input ran out) */
static double num(reader *r, double lo, double hi) {
    unsigned v = 0;
    for (int i = 0; i < 2; ++i) {
        v = v << 8 | (r->left ? *r->p : 0);
        if (r->left) {
            ++r->p;
            --r->left;
        }
    }
    return lo + (hi - lo) * v / 65535.0;
}

static imp_shape shape(reader *r, imp_vec3 *verts, int allow_halfspace) {
    int kind = (int)num(r, 0, allow_halfspace ? 5.999 : 4.999);
    imp_shape s = {.type = IMP_SHAPE_SPHERE};
    switch (kind) {
    case 0: s.radius = num(r, 0, 3); break;
    case 1:
        s.type = IMP_SHAPE_BOX;
        s.half = imp_v3(num(r, 0.01, 3), num(r, 0.01, 3), 0);
        s.rot = imp_quat_from_angle(num(r, -4, 4));
        break;
    case 2: {
        size_t n = 3 + (size_t)num(r, 0, 5.999);
        double a = num(r, 0, 6.2831853), size = num(r, 0.05, 3);
        for (size_t i = 0; i < n; ++i) {
            a += num(r, 0.05, 6.2831853 / (double)n * 1.9);
            verts[i] = imp_v3(size * cos(a), size * sin(a), 0);
        }
        s.type = IMP_SHAPE_POLYGON;
        s.verts = verts;
        s.n_verts = n;
        size_t bad;
        if (imp_polygon_normalize(verts, n, &bad) != IMP_POLYGON_OK)
            s = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = size};
        break;
    }
    case 3:
    case 4:
        s.type = kind == 3 ? IMP_SHAPE_CAPSULE : IMP_SHAPE_SEGMENT;
        s.a = imp_v3(num(r, -3, 3), num(r, -3, 3), 0);
        s.b = imp_v3(num(r, -3, 3), num(r, -3, 3), 0);
        s.radius = kind == 3 ? num(r, 0, 2) : 0;
        break;
    default: {
        double a = num(r, 0, 6.2831853);
        s.type = IMP_SHAPE_HALFSPACE;
        s.normal = imp_v3(cos(a), sin(a), 0);
        s.offset = num(r, -10, 10);
    }
    }
    return s;
}

static imp_motion motion(reader *r, int still) {
    imp_motion m = {imp_v3(num(r, -10, 10), num(r, -10, 10), 0),
                    imp_v3(num(r, -5, 5), num(r, -5, 5), 0),
                    imp_v3(num(r, -3, 3), num(r, -3, 3), 0)};
    if (still) m.v = m.a = imp_v3(0, 0, 0);
    return m;
}

static double penetration(const imp_shape *a, const imp_motion *ma, const imp_shape *b,
                          const imp_motion *mb, double t) {
    imp_overlap_result o = imp_overlap(a, imp_path_at(ma->p, ma->v, ma->a, t), b,
                                       imp_path_at(mb->p, mb->v, mb->a, t), 2);
    return o.state == IMP_OVERLAP_OVERLAPPING ? o.depth : -o.distance;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader rd = {data, size};
    imp_vec3 va[8], vb[8];
    imp_shape a = shape(&rd, va, 0), b = shape(&rd, vb, 1);
    imp_motion ma = motion(&rd, 0), mb = motion(&rd, b.type == IMP_SHAPE_HALFSPACE);
    if (num(&rd, 0, 1) < 0.5) ma.a = mb.a = imp_v3(0, 0, 0);
    double horizon = num(&rd, 0.01, 10);
    imp_toi_result r = imp_toi_shapes(&a, &ma, &b, &mb, 2, horizon);
    if (r.state == IMP_TOI_FAILED) abort();
    /* the scene's scale: everything reached in the window is within about this */
    const double scale = 10 + 5 * horizon + 1.5 * horizon * horizon + 10;
    const double tol = 1e-9 * scale;
    double end = horizon;
    if (r.state == IMP_TOI_OVERLAPPING) return 0;
    if (r.state == IMP_TOI_HIT) {
        if (!(r.time >= 0 && r.time <= horizon)) abort();
        if (fabs(penetration(&a, &ma, &b, &mb, r.time)) > tol) abort();
        end = r.time;
    }
    for (int i = 0; i < 64; ++i)
        if (penetration(&a, &ma, &b, &mb, end * (i + 0.5) / 64) > tol) abort();
    return 0;
}
