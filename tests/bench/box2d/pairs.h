/*
 * pairs.h - random shape pairs for the shape benchmarks (header-only):
 * tests/bench/bench_shapes.c uses every generator, tests/bench/box2d/
 * bench_box2d.c the 8-gon pairs, so that both measure the same pairs from
 * the same seed.
 *
 * Everything is generated at unit scale (shapes 1 to 3 across, positions
 * within a few units of the origin, horizon 1) and from the caller's
 * xorshift state (tests/rng.h): a fixed seed gives the same pairs on every
 * machine. Motions are linear (no acceleration).
 */
#ifndef IMP_BENCH_PAIRS_H
#define IMP_BENCH_PAIRS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/shape.h"
#include "core/toi.h"
#include "core/vec.h"
#include "tests/rng.h"

#define BENCH_PI 3.14159265358979323846
#define BENCH_OCTAGON_N 8
/* The seed of bench_shapes.c's first kind (8-gon pairs), which
 * bench_box2d.c draws too. */
#define BENCH_PAIRS_SEED 0x5eed5eed1234abcdULL

/* A random unit vector in 2D (z = 0) or 3D. */
static inline imp_vec3 bench_unit_dir(uint64_t *rng, int dim) {
    for (;;) {
        imp_vec3 d = imp_v3(imp_rng_uniform(rng, -1, 1), imp_rng_uniform(rng, -1, 1),
                            dim == 3 ? imp_rng_uniform(rng, -1, 1) : 0.0);
        double l = imp_len(d);
        if (l > 0.1 && l <= 1.0) return imp_scale(d, 1.0 / l);
    }
}

/* A unit vector perpendicular to the unit vector u, random in 3D. */
static inline imp_vec3 bench_perpendicular(uint64_t *rng, imp_vec3 u, int dim) {
    if (dim == 2) return imp_v3(-u.y, u.x, 0.0);
    for (;;) {
        imp_vec3 d = bench_unit_dir(rng, 3);
        imp_vec3 p = imp_madd(d, u, -imp_dot(d, u));
        double l = imp_len(p);
        if (l > 0.1) return imp_scale(p, 1.0 / l);
    }
}

/*
 * A random convex 8-gon about the origin, counter-clockwise, into out[8]:
 * vertex k at angle 2 pi k / 8 plus a jitter of up to 30% of the step, at a
 * distance in [0.7, 1] * r. Redrawn until imp_polygon_normalize accepts it
 * and every turn is clearly convex (no near-collinear vertices, which
 * would make the 8-gon a 7-gon in all but name). Returns the largest
 * vertex distance (its circumradius about the origin).
 */
static inline double bench_octagon(uint64_t *rng, double r, imp_vec3 out[BENCH_OCTAGON_N]) {
    const double step = 2.0 * BENCH_PI / BENCH_OCTAGON_N;
    for (;;) {
        double phase = imp_rng_uniform(rng, 0, 2.0 * BENCH_PI), rmax = 0;
        for (int k = 0; k < BENCH_OCTAGON_N; ++k) {
            double ang = phase + step * (k + imp_rng_uniform(rng, -0.3, 0.3));
            double d = r * imp_rng_uniform(rng, 0.7, 1.0);
            out[k] = imp_v3(d * cos(ang), d * sin(ang), 0.0);
            rmax = fmax(rmax, d);
        }
        int convex = 1;
        for (int k = 0; k < BENCH_OCTAGON_N && convex; ++k) {
            imp_vec3 p = out[k], q = out[(k + 1) % BENCH_OCTAGON_N],
                     s = out[(k + 2) % BENCH_OCTAGON_N];
            imp_vec3 e1 = imp_sub(q, p), e2 = imp_sub(s, q);
            /* sine of the turn at q above 0.05 */
            convex = imp_cross(e1, e2).z > 0.05 * imp_len(e1) * imp_len(e2);
        }
        size_t bad;
        if (convex && imp_polygon_normalize(out, BENCH_OCTAGON_N, &bad) == IMP_POLYGON_OK)
            return rmax;
    }
}

/*
 * Motions for two shapes whose bounding circles (spheres) have radii ra
 * and rb, over the horizon [0, 1]: a anywhere within 4 units of the
 * origin with a random velocity; b starting 1.3 to 3.5 times (ra + rb)
 * away in a random direction, so the bounding spheres are disjoint at
 * t = 0, moving relative to a towards a point beside a's centre (offset up
 * to 1.1 (ra + rb) sideways in 2D, 0.8 (ra + rb) in 3D, where bounding
 * spheres fit boxes and polyhedra more loosely) at a speed that would
 * cover the centre distance in 0.3 to 2.4 time units. Some pass beside, some arrive after
 * the horizon: about half hit within it.
 */
static inline void bench_moving_pair(uint64_t *rng, int dim, double ra, double rb, imp_motion *ma,
                                     imp_motion *mb) {
    double R = ra + rb;
    imp_vec3 pa = imp_scale(bench_unit_dir(rng, dim), imp_rng_uniform(rng, 0, 4));
    imp_vec3 u = bench_unit_dir(rng, dim);
    double dist = R * imp_rng_uniform(rng, 1.3, 3.5);
    imp_vec3 pb = imp_madd(pa, u, dist);
    double side = dim == 3 ? 0.8 : 1.1;
    imp_vec3 aim =
        imp_madd(pa, bench_perpendicular(rng, u, dim), R * imp_rng_uniform(rng, -side, side));
    imp_vec3 dir = imp_normalize_or(imp_sub(aim, pb), imp_neg(u));
    double speed = dist / imp_rng_uniform(rng, 0.3, 2.4);
    imp_vec3 va = imp_scale(bench_unit_dir(rng, dim), speed * imp_rng_uniform(rng, 0, 1));
    ma->p = pa;
    ma->v = va;
    ma->a = imp_v3(0, 0, 0);
    mb->p = pb;
    mb->v = imp_madd(va, dir, speed);
    mb->a = imp_v3(0, 0, 0);
}

/* Positions for a static overlap test: b's centre 0.3 to 1.2 (2D) or 1.0
 * (3D) times (ra + rb) from a's in a random direction (about half
 * overlap). */
static inline void bench_overlap_placement(uint64_t *rng, int dim, double ra, double rb,
                                           imp_vec3 *pa, imp_vec3 *pb) {
    *pa = imp_scale(bench_unit_dir(rng, dim), imp_rng_uniform(rng, 0, 4));
    double far = dim == 3 ? 1.0 : 1.2;
    *pb = imp_madd(*pa, bench_unit_dir(rng, dim), (ra + rb) * imp_rng_uniform(rng, 0.3, far));
}

/* The 8-gon pair of both benchmarks, in this order: a's and b's vertices
 * (sizes 0.5 to 1.5) with their circumradii ra and rb, the motions, the
 * overlap placement. */
static inline void bench_octagon_pair(uint64_t *rng, imp_vec3 va[BENCH_OCTAGON_N],
                                      imp_vec3 vb[BENCH_OCTAGON_N], double *ra, double *rb,
                                      imp_motion *ma, imp_motion *mb, imp_vec3 *oa, imp_vec3 *ob) {
    *ra = bench_octagon(rng, imp_rng_uniform(rng, 0.5, 1.5), va);
    *rb = bench_octagon(rng, imp_rng_uniform(rng, 0.5, 1.5), vb);
    bench_moving_pair(rng, 2, *ra, *rb, ma, mb);
    bench_overlap_placement(rng, 2, *ra, *rb, oa, ob);
}

#endif
