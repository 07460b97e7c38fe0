/*
 * bench_rotating.c - certified times of impact of turning bodies per second
 * (core/toi_rotating.c), beside the translational solver on the same pairs
 * without their spin.
 *
 *   make bench-build && build/tests/bench/bench_rotating [pairs_per_kind]
 *
 * Kinds: 2D 8-gon vs 8-gon and 3D box vs box (random rotations), each with
 * slow spins (0.5 to 3 rad/s) and fast ones (30 to 300 rad/s, about
 * random axes in 3D), both bodies spinning; shapes 0.4 to 2 across, b 2 to
 * 6 from a and aimed at it with some scatter, linear motion, horizon 1 s;
 * pairs_per_kind (default 2048) from a fixed seed. Rows: rotating TOI/s
 * with the share that hits and the mean tolerance of the hits; the same
 * pairs without spin through imp_toi_shapes (closed form); and the ratio.
 * Each rate loops over all pairs until at least MIN_SECONDS have passed.
 * One thread; the machine may be shared, so compare rows of one run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/shape.h"
#include "core/toi_rotating.h"
#include "core/toi_shapes.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

#define DEFAULT_PAIRS 2048
#define MIN_SECONDS 0.5
#define SEED 0x18b0a7ull

typedef struct pair {
    imp_shape a, b;
    imp_vec3 va[16], vb[16];
    imp_motion ma, mb;
    imp_vec3 wa, wb;
} pair;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static imp_vec3 spin(uint64_t *rng, int dim, double lo, double hi) {
    double s = imp_rng_uniform(rng, lo, hi);
    if (dim == 2) return imp_v3(0, 0, imp_rng_unit(rng) < 0.5 ? -s : s);
    return imp_scale(random_unit(rng), s);
}

static void make_pairs(pair *p, size_t n, int dim, double lo, double hi, uint64_t *rng) {
    for (size_t i = 0; i < n; ++i) {
        int kind = dim == 2 ? IMP_TEST_KIND_POLYTOPE : IMP_TEST_KIND_BOX;
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
            p[i].a = random_shape_of(rng, dim, kind, p[i].va);
            p[i].b = random_shape_of(rng, dim, kind, p[i].vb);
        }
        random_pair_motions(rng, dim, 0, &p[i].ma, &p[i].mb);
        p[i].wa = spin(rng, dim, lo, hi);
        p[i].wb = spin(rng, dim, lo, hi);
    }
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : DEFAULT_PAIRS;
    if (n == 0) n = DEFAULT_PAIRS;
    pair *p = malloc(n * sizeof *p);
    if (!p) return 1;
    static const struct {
        const char *name;
        int dim;
        double lo, hi;
    } kinds[] = {
        {"8-gon vs 8-gon (2D), 0.5-3 rad/s", 2, 0.5, 3},
        {"8-gon vs 8-gon (2D), 30-300 rad/s", 2, 30, 300},
        {"OBB vs OBB (3D), 0.5-3 rad/s", 3, 0.5, 3},
        {"OBB vs OBB (3D), 30-300 rad/s", 3, 30, 300},
    };
    printf("%zu pairs per kind, seed 0x%llx, horizon 1 s\n", n, (unsigned long long)SEED);
    printf("%-36s %12s %6s %10s %14s %8s\n", "kind", "rotating/s", "hits", "mean tol",
           "translating/s", "ratio");
    uint64_t rng = SEED;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        int dim = kinds[k].dim;
        make_pairs(p, n, dim, kinds[k].lo, kinds[k].hi, &rng);
        size_t hits = 0, done = 0, failed = 0;
        double tol = 0.0, t0 = now_s(), el;
        do {
            for (size_t i = 0; i < n; ++i, ++done) {
                imp_toi_rotating_input in = {&p[i].a, &p[i].b, p[i].ma, p[i].mb, p[i].wa,
                                             p[i].wb, dim,     1.0,     NULL};
                int stopped;
                imp_toi_result r = imp_toi_rotating(&in, &stopped);
                if (done < n) {
                    hits += r.state == IMP_TOI_HIT;
                    failed += r.state == IMP_TOI_FAILED;
                    if (r.state == IMP_TOI_HIT) tol += r.tolerance;
                }
            }
        } while ((el = now_s() - t0) < MIN_SECONDS);
        double rot = (double)done / el;
        size_t done2 = 0;
        t0 = now_s();
        do {
            for (size_t i = 0; i < n; ++i, ++done2)
                (void)imp_toi_shapes(&p[i].a, &p[i].ma, &p[i].b, &p[i].mb, dim, 1.0);
        } while ((el = now_s() - t0) < MIN_SECONDS);
        double tr = (double)done2 / el;
        printf("%-36s %12.0f %5.1f%% %10.2e %14.0f %8.1f%s\n", kinds[k].name, rot,
               100.0 * (double)hits / (double)n, hits ? tol / (double)hits : 0.0, tr, tr / rot,
               failed ? "  (some undecided)" : "");
    }
    free(p);
    return 0;
}
