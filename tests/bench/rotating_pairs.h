/*
 * rotating_pairs.h - random pairs of turning bodies for the rotating
 * benchmarks (header-only): tests/bench/bench_rotating.c and
 * tests/bench/rotating/bench_rotating_peers.c draw the same pairs from the
 * same seed.
 *
 * 2D: regular 8-gons of circumradius 0.2 to 1 at a random phase; 3D: boxes
 * of half extents 0.2 to 1 at a random rotation (tests/random_shapes.h).
 * Motions: random_pair_motions (b 2 to 6 from a, aimed at it with some
 * scatter, linear); both bodies spin at a speed drawn from [lo, hi] rad/s,
 * about z in 2D (either sense), about a random axis in 3D. Horizon 1 s.
 */
#ifndef IMP_BENCH_ROTATING_PAIRS_H
#define IMP_BENCH_ROTATING_PAIRS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/shape.h"
#include "core/toi.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

#define ROT_PAIRS_SEED 0x18b0a7ull

typedef struct rot_pair {
    imp_shape a, b;
    imp_vec3 va[16], vb[16];
    imp_motion ma, mb;
    imp_vec3 wa, wb;
} rot_pair;

static inline imp_vec3 rot_pairs_spin(uint64_t *rng, int dim, double lo, double hi) {
    double s = imp_rng_uniform(rng, lo, hi);
    if (dim == 2) return imp_v3(0, 0, imp_rng_unit(rng) < 0.5 ? -s : s);
    return imp_scale(random_unit(rng), s);
}

/* n pairs into p (which must not be copied afterwards: the shapes point
 * into it), from the caller's stream. */
static inline void rot_pairs_make(rot_pair *p, size_t n, int dim, double lo, double hi,
                                  uint64_t *rng) {
    for (size_t i = 0; i < n; ++i) {
        if (dim == 2) { /* regular-ish 8-gons */
            for (int k = 0; k < 2; ++k) {
                imp_vec3 *v = k ? p[i].vb : p[i].va;
                double r = imp_rng_uniform(rng, 0.2, 1), a0 = imp_rng_uniform(rng, 0, 6.283);
                for (int j = 0; j < 8; ++j)
                    v[j] = imp_v3(r * cos(a0 + 0.785398 * j), r * sin(a0 + 0.785398 * j), 0);
                imp_shape s = {.type = IMP_SHAPE_POLYGON, .verts = v, .n_verts = 8};
                *(k ? &p[i].b : &p[i].a) = s;
            }
        } else {
            p[i].a = random_shape_of(rng, dim, IMP_TEST_KIND_BOX, p[i].va);
            p[i].b = random_shape_of(rng, dim, IMP_TEST_KIND_BOX, p[i].vb);
        }
        random_pair_motions(rng, dim, 0, &p[i].ma, &p[i].mb);
        p[i].wa = rot_pairs_spin(rng, dim, lo, hi);
        p[i].wb = rot_pairs_spin(rng, dim, lo, hi);
    }
}

#endif
