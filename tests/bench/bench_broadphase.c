/*
 * bench_broadphase.c - milliseconds per broadphase kind on uniform,
 * clustered and size-spanning scenes, 2D and 3D, 1k to 1M boxes; serial,
 * and on a two-thread runner. Every kind's pair count is checked against
 * the first kind's, so a wrong but fast kind shows up here too.
 *
 * Run: make bench-build && build/tests/bench/bench_broadphase [max_n]
 * Figures are the best of a few runs (one at 1M); the machine is shared
 * and noisy, so compare within a run. Brute force runs up to 10k boxes
 * ("nan" beyond).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/broadphase.h"
#include "tests/rng.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* Two threads, grain-sized chunks taken from a shared counter. */
typedef struct job {
    size_t n, grain;
    imp_range_fn fn;
    void *ctx;
    size_t next;
    pthread_mutex_t mu;
} job;

static void *worker(void *p) {
    job *j = p;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t b = j->next;
        j->next = b < j->n ? (j->n - b > j->grain ? b + j->grain : j->n) : b;
        size_t e = j->next;
        pthread_mutex_unlock(&j->mu);
        if (b >= e) return NULL;
        j->fn(j->ctx, b, e);
    }
}

static void run2(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx) {
    (void)runner;
    if (n <= grain) { /* one chunk: run it here, as a pool would */
        fn(ctx, 0, n);
        return;
    }
    job j = {n, grain ? grain : 1, fn, ctx, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;
    int spawned = pthread_create(&t, NULL, worker, &j) == 0;
    worker(&j);
    if (spawned) pthread_join(t, NULL);
}

static const imp_parallel two = {run2, NULL, {NULL, NULL}};

enum { UNIFORM, CLUSTERED, SPAN, LOGSIZE, NSCENES };
static const char *const scene_name[NSCENES] = {"uniform", "clustered", "span1e4", "logsize"};

static void box_at(imp_aabb *b, const double c[3], const double s[3], int dim) {
    b->lo = imp_v3(c[0] - 0.5 * s[0], c[1] - 0.5 * s[1], dim == 3 ? c[2] - 0.5 * s[2] : 0.0);
    b->hi = imp_v3(c[0] + 0.5 * s[0], c[1] + 0.5 * s[1], dim == 3 ? c[2] + 0.5 * s[2] : 0.0);
}

/* uniform: sizes 0.5-1.5, about 2 overlaps per box. clustered: 8 clusters
 * 1e6 apart holding 95% of the boxes (about 4 overlaps each), 5% strays.
 * span1e4: 1% of boxes 1e4 times bigger (each over about 20 * 0.75^dim
 * others), the small ones half spread, half in 8 patches. logsize: sizes
 * log-uniform over [1, 1e4] (every grid level filled), about 2 overlaps
 * per box, nearly all of them with the bigger boxes. */
static imp_aabb *make(int scene, int dim, size_t n, uint64_t seed) {
    imp_aabb *box = malloc(n * sizeof *box);
    if (!box) abort();
    uint64_t r = seed;
    double d = dim, c[3] = {0, 0, 0}, s[3];
    double centre[8][3];
    for (int p = 0; p < 8; ++p)
        for (int k = 0; k < 3; ++k)
            centre[p][k] = imp_rng_uniform(&r, 0.0, 1e6);
    /* E[(s + s')^dim] of log-uniform sizes on [1, 1e4]: 1.3e7 (2D), 9.6e10 (3D) */
    double L = scene == UNIFORM   ? 2.0 * pow((double)n / 2.0, 1.0 / d)
               : scene == LOGSIZE ? pow((double)n * (dim == 2 ? 1.3e7 : 9.6e10) / 4.0, 1.0 / d)
                                  : 1e4 * pow((double)n / 20.0, 1.0 / d);
    double side = 1.5 * pow(0.95 * (double)n / 8.0 / 4.0, 1.0 / d);
    double half = 0.5 * pow((double)n / 16.0, 1.0 / d);
    if (scene == SPAN)
        for (int p = 0; p < 8; ++p)
            for (int k = 0; k < 3; ++k)
                centre[p][k] = imp_rng_uniform(&r, 0.0, L);
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k)
            s[k] = imp_rng_uniform(&r, 0.5, 1.5);
        if (scene == UNIFORM || scene == LOGSIZE) {
            for (int k = 0; k < 3; ++k)
                c[k] = imp_rng_uniform(&r, 0.0, L);
            if (scene == LOGSIZE) {
                double size = pow(1e4, imp_rng_unit(&r));
                for (int k = 0; k < 3; ++k)
                    s[k] = size * imp_rng_uniform(&r, 0.5, 1.0);
            }
        } else if (scene == CLUSTERED) {
            if (imp_rng_unit(&r) < 0.05) {
                for (int k = 0; k < 3; ++k)
                    c[k] = imp_rng_uniform(&r, 0.0, 1e6);
            } else {
                const double *p = centre[imp_rng_next(&r) % 8];
                for (int k = 0; k < 3; ++k)
                    c[k] = p[k] + imp_rng_uniform(&r, 0.0, side);
            }
        } else {
            if (i % 100 == 0) {
                for (int k = 0; k < 3; ++k) {
                    c[k] = imp_rng_uniform(&r, 0.0, L);
                    s[k] = imp_rng_uniform(&r, 0.5e4, 1e4);
                }
            } else if (imp_rng_unit(&r) < 0.5) {
                for (int k = 0; k < 3; ++k)
                    c[k] = imp_rng_uniform(&r, 0.0, L);
            } else {
                const double *p = centre[imp_rng_next(&r) % 8];
                for (int k = 0; k < 3; ++k)
                    c[k] = p[k] + imp_rng_uniform(&r, -half, half);
            }
        }
        box_at(&box[i], c, s, dim);
    }
    return box;
}

/* Best time of `reps` runs; *pairs gets the count (SIZE_MAX on failure). */
static double time_kind(imp_broadphase_kind kind, const imp_broadphase_input *in, int reps,
                        size_t *pairs) {
    double best = INFINITY;
    for (int r = 0; r < reps; ++r) {
        imp_pair *out = NULL;
        size_t count = 0;
        double t0 = now_ms();
        int rc = imp_broadphase_pairs(kind, in, &out, &count, NULL);
        double t = now_ms() - t0;
        free(out);
        *pairs = rc == 0 ? count : SIZE_MAX;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv) {
    size_t max_n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    static const size_t sizes[] = {1000, 10000, 100000, 1000000};
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_BRUTE, IMP_BROAD_GRID, IMP_BROAD_SAP,
                                                IMP_BROAD_BVH};
    printf("%-9s %3s %8s %9s %6s | %9s %9s %9s %9s | 2 threads: %7s %7s %7s\n", "scene", "dim", "n",
           "pairs", "auto", "brute", "grid", "sap", "bvh", "grid", "sap", "bvh");
    int bad = 0;
    for (int scene = 0; scene < NSCENES; ++scene)
        for (int dim = 2; dim <= 3; ++dim)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                size_t n = sizes[si];
                if (n > max_n) continue;
                imp_aabb *box = make(scene, dim, n, 0xb0c5 + n + (uint64_t)dim);
                imp_broadphase_input in = {box, NULL, n, dim, SIZE_MAX, NULL, 0};
                int reps = n >= 1000000 ? 1 : n >= 100000 ? 2 : 5;
                double ms[4], ms2[4];
                size_t pairs[4], pairs2[4], want = SIZE_MAX;
                for (int k = 0; k < 4; ++k) {
                    ms[k] = ms2[k] = NAN;
                    pairs[k] = pairs2[k] = want;
                    if (kinds[k] == IMP_BROAD_BRUTE && n > 10000) continue;
                    in.par = NULL;
                    ms[k] = time_kind(kinds[k], &in, reps, &pairs[k]);
                    if (kinds[k] != IMP_BROAD_BRUTE) {
                        in.par = &two;
                        ms2[k] = time_kind(kinds[k], &in, reps, &pairs2[k]);
                    }
                    if (want == SIZE_MAX) want = pairs[k];
                    if (pairs[k] != want || (kinds[k] != IMP_BROAD_BRUTE && pairs2[k] != want))
                        bad = 1;
                }
                in.par = NULL;
                printf("%-9s %3d %8zu %9zu %6s | %9.2f %9.2f %9.2f %9.2f |            %7.2f %7.2f "
                       "%7.2f%s\n",
                       scene_name[scene], dim, n, want,
                       imp_broadphase_name(imp_broadphase_choose(&in)), ms[0], ms[1], ms[2], ms[3],
                       ms2[1], ms2[2], ms2[3], bad ? "  PAIR COUNTS DIFFER" : "");
                fflush(stdout);
                free(box);
            }
    return bad;
}
