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
#include "tests/bench/bench_util.h"
#include "tests/bench/rotating_pairs.h"
#include "tests/rng.h"

#define DEFAULT_PAIRS 2048
#define MIN_SECONDS 0.5

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : DEFAULT_PAIRS;
    if (n == 0) n = DEFAULT_PAIRS;
    rot_pair *p = malloc(n * sizeof *p);
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
    printf("%zu pairs per kind, seed 0x%llx, horizon 1 s\n", n, (unsigned long long)ROT_PAIRS_SEED);
    printf("%-36s %12s %6s %10s %14s %8s\n", "kind", "rotating/s", "hits", "mean tol",
           "translating/s", "ratio");
    uint64_t rng = ROT_PAIRS_SEED;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        int dim = kinds[k].dim;
        rot_pairs_make(p, n, dim, kinds[k].lo, kinds[k].hi, &rng);
        size_t hits = 0, done = 0, failed = 0;
        double tol = 0.0, t0 = bench_now_s(), el;
        do {
            for (size_t i = 0; i < n; ++i, ++done) {
                imp_toi_rotating_input in = {&p[i].a, &p[i].b, p[i].ma, p[i].mb, p[i].wa,
                                             p[i].wb, dim,     1.0,     NULL,    0};
                int stopped;
                imp_toi_result r = imp_toi_rotating(&in, &stopped);
                if (done < n) {
                    hits += r.state == IMP_TOI_HIT;
                    failed += r.state == IMP_TOI_FAILED;
                    if (r.state == IMP_TOI_HIT) tol += r.tolerance;
                }
            }
        } while ((el = bench_now_s() - t0) < MIN_SECONDS);
        double rot = (double)done / el;
        size_t done2 = 0;
        t0 = bench_now_s();
        do {
            for (size_t i = 0; i < n; ++i, ++done2)
                (void)imp_toi_shapes(&p[i].a, &p[i].ma, &p[i].b, &p[i].mb, dim, 1.0);
        } while ((el = bench_now_s() - t0) < MIN_SECONDS);
        double tr = (double)done2 / el;
        printf("%-36s %12.0f %5.1f%% %10.2e %14.0f %8.1f%s\n", kinds[k].name, rot,
               100.0 * (double)hits / (double)n, hits ? tol / (double)hits : 0.0, tr, tr / rot,
               failed ? "  (some undecided)" : "");
    }
    free(p);
    return 0;
}
