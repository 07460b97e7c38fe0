/*
 * random_shapes.h - random shapes, rotations and motions for property
 * tests (header-only), drawn from a caller-seeded tests/rng.h stream.
 */
#ifndef IMP_TEST_RANDOM_SHAPES_H
#define IMP_TEST_RANDOM_SHAPES_H

#include <math.h>
#include <stdint.h>

#include "tests/rng.h"
#include "tests/shapes.h"

#define IMP_TEST_TWO_PI 6.283185307179586

/* a unit vector, uniform on the sphere */
static inline imp_vec3 random_unit(uint64_t *rng) {
    for (;;) {
        imp_vec3 v = imp_v3(imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                            imp_rng_uniform(rng, -1, 1));
        double l = imp_len(v);
        if (l > 0.1 && l <= 1) return imp_scale(v, 1 / l);
    }
}

/* each component uniform in [-r, r) */
static inline imp_vec3 random_vec(uint64_t *rng, double r) {
    return imp_v3(imp_rng_uniform(rng, -r, r), imp_rng_uniform(rng, -r, r),
                  imp_rng_uniform(rng, -r, r));
}

static inline imp_quat random_rotation(uint64_t *rng) {
    imp_quat q = {imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                  imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1)},
             u;
    if (imp_quat_normalize(q, &u) != 0) u = (imp_quat){1, 0, 0, 0};
    return u;
}

/* a unit vector, in the plane z = 0 when dim is 2 */
static inline imp_vec3 random_dir(uint64_t *rng, int dim) {
    if (dim == 3) return random_unit(rng);
    double a = imp_rng_uniform(rng, 0, IMP_TEST_TWO_PI);
    return imp_v3(cos(a), sin(a), 0);
}

/* a vector of random_vec in the plane z = 0 when dim is 2 */
static inline imp_vec3 random_vec_dim(uint64_t *rng, double r, int dim) {
    imp_vec3 v = random_vec(rng, r);
    if (dim == 2) v.z = 0;
    return v;
}

enum {
    IMP_TEST_KIND_SPHERE,
    IMP_TEST_KIND_CAPSULE,
    IMP_TEST_KIND_SEGMENT,
    IMP_TEST_KIND_BOX,
    IMP_TEST_KIND_POLYTOPE, /* polygon in 2D, polyhedron in 3D */
    IMP_TEST_KIND_HALFSPACE,
    IMP_TEST_KINDS
};

/*
 * A shape of `kind` in `dim` dimensions, about 0.2 to 2 across, centred
 * near its position; buf holds >= 16 vertices. A halfspace faces a random
 * way with its boundary `offset` from the origin.
 */
static inline imp_shape random_shape_of(uint64_t *rng, int dim, int kind, imp_vec3 *buf) {
    switch (kind) {
    case IMP_TEST_KIND_SPHERE: /* one in ten a point */
        return sphere(imp_rng_unit(rng) < 0.1 ? 0.0 : imp_rng_uniform(rng, 0.1, 1));
    case IMP_TEST_KIND_CAPSULE:
    case IMP_TEST_KIND_SEGMENT: {
        imp_vec3 d = imp_scale(random_dir(rng, dim), imp_rng_uniform(rng, 0.2, 1));
        return capsule(d, imp_neg(d),
                       kind == IMP_TEST_KIND_SEGMENT ? 0.0 : imp_rng_uniform(rng, 0.05, 0.6));
    }
    case IMP_TEST_KIND_BOX:
        if (dim == 2)
            return box2(imp_rng_uniform(rng, 0.2, 1), imp_rng_uniform(rng, 0.2, 1),
                        imp_rng_uniform(rng, -3.14159, 3.14159));
        return box3(imp_rng_uniform(rng, 0.2, 1), imp_rng_uniform(rng, 0.2, 1),
                    imp_rng_uniform(rng, 0.2, 1), random_rotation(rng));
    case IMP_TEST_KIND_POLYTOPE: {
        double size = imp_rng_uniform(rng, 0.3, 1.2);
        imp_shape s = {.verts = buf};
        if (dim == 2) { /* on a circle, a jittered regular spacing: convex, counter-clockwise */
            size_t n = 3 + (size_t)(imp_rng_unit(rng) * 6);
            double a0 = imp_rng_uniform(rng, 0, IMP_TEST_TWO_PI);
            for (size_t i = 0; i < n; ++i) {
                double a = a0 + IMP_TEST_TWO_PI * ((double)i + imp_rng_uniform(rng, -0.3, 0.3)) /
                                    (double)n;
                buf[i] = imp_v3(size * cos(a), size * sin(a), 0);
            }
            s.type = IMP_SHAPE_POLYGON, s.n_verts = n;
        } else { /* points on a sphere */
            size_t n = 4 + (size_t)(imp_rng_unit(rng) * 12);
            for (size_t i = 0; i < n; ++i)
                buf[i] = imp_scale(random_unit(rng), size);
            s.type = IMP_SHAPE_POLYHEDRON, s.n_verts = n;
        }
        return s;
    }
    default: {
        return halfspace(random_dir(rng, dim), imp_rng_uniform(rng, -3, 3));
    }
    }
}

/*
 * Motions for a pair: a near a random point, b from 2 to 6 away aimed at a
 * with some scatter, so that about half the pairs meet; with `accel` both
 * accelerate. In 2D everything stays in z = 0.
 */
static inline void random_pair_motions(uint64_t *rng, int dim, int accel, imp_motion *ma,
                                       imp_motion *mb) {
    imp_vec3 pa = random_vec_dim(rng, 2, dim), dir = random_dir(rng, dim);
    imp_vec3 pb = imp_madd(pa, dir, imp_rng_uniform(rng, 2, 6));
    double speed = imp_rng_uniform(rng, 0.5, 4);
    imp_vec3 vb = imp_add(imp_scale(dir, -speed), random_vec_dim(rng, 1.5, dim));
    *ma = motion3(pa, random_vec_dim(rng, 0.5, dim),
                  accel ? random_vec_dim(rng, 1, dim) : imp_v3(0, 0, 0));
    *mb = motion3(pb, vb, accel ? random_vec_dim(rng, 2, dim) : imp_v3(0, 0, 0));
}

/*
 * n slivers whose centroids lie on the x axis (a degenerate input for a world's
 * build): thin triangles from x in [0, 1000] of length 0.001 to 500, corners
 * sv[3 i .. 3 i + 2] and triangle i = (3 i, 3 i + 1, 3 i + 2) in t.
 */
static inline void random_slivers(uint64_t *rng, size_t n, imp_vec3 *sv, uint32_t *t) {
    for (size_t i = 0; i < n; ++i) {
        double x = imp_rng_uniform(rng, 0, 1000), len = imp_rng_uniform(rng, 0.001, 500);
        sv[3 * i] = imp_v3(x, 0, 0);
        sv[3 * i + 1] = imp_v3(x + len, 1e-9, 0);
        sv[3 * i + 2] = imp_v3(x + 0.5 * len, 0, 1e-9);
        for (uint32_t j = 0; j < 3; ++j)
            t[3 * i + j] = (uint32_t)(3 * i) + j;
    }
}

#endif
