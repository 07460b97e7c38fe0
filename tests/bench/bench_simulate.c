/*
 * bench_simulate.c - events per second of the event-driven simulation
 * (core/simulate.h) on a hard-sphere gas.
 *
 *   make bench-build && build/tests/bench/bench_simulate [events] [--all-pairs-10k]
 *                                                [--case DIM PHI N]
 *
 * Equal spheres with e = 1 in a box of walls (halfspaces), 2D and 3D, at
 * area/volume fractions 0.1 and 0.4, n = 1k, 10k and 100k; they start on a
 * square/cubic lattice (random sequential placement cannot reach 0.4 in 3D)
 * with velocities uniform in [-1, 1]^dim. Each run creates the simulation
 * (every body's first prediction: "setup") and then processes `events`
 * contacts (default 200,000) on one thread. Columns: contacts per second,
 * microseconds per contact, and per contact the cell crossings and
 * pairwise time-of-impact calls, which stay flat as n grows with the grid.
 * "all-pairs" predicts every body against every other (no grid): its cost
 * per contact grows with n; it runs for 1k bodies (10,000 contacts), and for
 * 10k only with --all-pairs-10k (minutes). The kinetic energy drift over the
 * run is printed as a sanity check (the program exits 1 above 1e-9).
 * --case runs one grid configuration alone (for a profiler).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/simulate.h"
#include "tests/rng.h"

#define BENCH_PI 3.14159265358979323846

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

typedef struct gas {
    imp_shape *shapes;
    imp_sim_body *b;
    size_t n; /* spheres; walls follow */
    size_t total;
} gas;

static void make_gas(gas *g, size_t n, int dim, double phi, uint64_t seed) {
    size_t per = (size_t)ceil(dim == 3 ? cbrt((double)n) : sqrt((double)n));
    while ((dim == 3 ? per * per * per : per * per) < n)
        ++per;
    const double sp = 1.0;
    double r = dim == 3 ? sp * cbrt(phi * 3.0 / (4.0 * BENCH_PI)) : sp * sqrt(phi / BENCH_PI);
    double w = (double)per * sp;
    g->n = n;
    g->total = n + 2 * (size_t)dim;
    g->shapes = calloc(g->total, sizeof *g->shapes);
    g->b = calloc(g->total, sizeof *g->b);
    uint64_t rng = seed;
    for (size_t i = 0; i < n; ++i) {
        size_t ix = i % per, iy = (i / per) % per, iz = i / (per * per);
        imp_vec3 p = imp_v3((ix + 0.5) * sp, (iy + 0.5) * sp, dim == 3 ? (iz + 0.5) * sp : 0);
        imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0);
        g->shapes[i] = (imp_shape){.type = IMP_SHAPE_SPHERE, .radius = r};
        g->b[i] = (imp_sim_body){{p, v, imp_v3(0, 0, 0)}, &g->shapes[i], 1.0, 0, 1.0, 1.0, NULL};
    }
    size_t k = n;
    for (int a = 0; a < dim; ++a) {
        imp_vec3 e = imp_v3(a == 0, a == 1, a == 2);
        g->shapes[k] = (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = e, .offset = 0};
        g->shapes[k + 1] =
            (imp_shape){.type = IMP_SHAPE_HALFSPACE, .normal = imp_neg(e), .offset = -w};
        for (int q = 0; q < 2; ++q) {
            g->b[k] = (imp_sim_body){{imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)},
                                     &g->shapes[k],
                                     1.0,
                                     1,
                                     1.0,
                                     1.0,
                                     NULL};
            ++k;
        }
    }
}

static double kinetic(const imp_sim *s, const gas *g, double t) {
    double k = 0;
    for (size_t i = 0; i < g->n; ++i) {
        imp_vec3 p, v;
        imp_sim_body_state(s, i, t, &p, &v);
        k += 0.5 * imp_dot(v, v);
    }
    return k;
}

static int run(int dim, double phi, size_t n, int no_grid, size_t events) {
    gas g;
    make_gas(&g, n, dim, phi, 0x5151 + n + (size_t)dim);
    imp_sim_input in = {g.b,     g.total,      dim,  1e12, imp_v3(0, 0, 0), events, 0,
                        no_grid, {NULL, NULL}, NULL, NULL};
    double t0 = now_ms();
    imp_sim *s;
    if (imp_sim_create(&in, &s, NULL) != IMP_SIM_OK) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    double t1 = now_ms();
    double k0 = kinetic(s, &g, 0);
    imp_sim_stats before = *imp_sim_get_stats(s);
    imp_sim_stop rc = imp_sim_advance(s, 1e12);
    double t2 = now_ms();
    const imp_sim_stats *st = imp_sim_get_stats(s);
    double drift = fabs(kinetic(s, &g, imp_sim_time(s)) / k0 - 1);
    double secs = (t2 - t1) / 1e3;
    double ev = (double)st->events;
    printf("%3dD  %4.1f  %7zu  %-9s  %9.1f  %8zu  %8.3f  %10.0f  %8.2f  %9.2f  %10.1f  %8.1e\n",
           dim, phi, n, no_grid ? "all-pairs" : "grid", t1 - t0, st->events, secs, ev / secs,
           1e6 * secs / ev, (double)(st->crossings - before.crossings) / ev,
           (double)(st->predictions - before.predictions) / ev, drift);
    fflush(stdout);
    imp_sim_destroy(s);
    free(g.shapes);
    free(g.b);
    return rc == IMP_SIM_STOP_FAILED || drift > 1e-9;
}

int main(int argc, char **argv) {
    size_t events = 200000;
    int all10k = 0, one_dim = 0;
    double one_phi = 0;
    size_t one_n = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--all-pairs-10k") == 0)
            all10k = 1;
        else if (strcmp(argv[i], "--case") == 0 && i + 3 < argc) {
            one_dim = atoi(argv[i + 1]);
            one_phi = atof(argv[i + 2]);
            one_n = (size_t)strtoull(argv[i + 3], NULL, 10);
            i += 3;
        } else
            events = (size_t)strtoull(argv[i], NULL, 10);
    }
    printf("hard-sphere gas, e = 1, box of walls; %zu contacts per grid run, one thread\n", events);
    printf("dim   phi        n  mode        setup ms    events      secs    events/s  us/event  "
           "cross/ev  toi calls/ev  KE drift\n");
    if (one_dim == 2 || one_dim == 3) return run(one_dim, one_phi, one_n, 0, events);
    int bad = 0;
    static const size_t ns[] = {1000, 10000, 100000};
    for (int dim = 2; dim <= 3; ++dim)
        for (int f = 0; f < 2; ++f) {
            double phi = f ? 0.4 : 0.1;
            for (size_t k = 0; k < 3; ++k)
                bad |= run(dim, phi, ns[k], 0, events);
            bad |= run(dim, phi, 1000, 1, 10000);
            if (all10k) bad |= run(dim, phi, 10000, 1, 2000);
        }
    return bad;
}
