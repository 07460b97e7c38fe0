/*
 * bench_world.c - static worlds: build time and memory per triangle,
 * incoherent rays per second and shape casts per second on one thread.
 *
 * The world is a generated terrain (a heightfield of rolling hills) with
 * buildings on it (boxes as 12-triangle meshes), 100k and 1M triangles.
 * Rays start anywhere above the terrain and point anywhere (uniform on the
 * sphere: no coherence for the hierarchy to exploit); casts are spheres
 * and capsules thrown from above the terrain with gravity.
 *
 * Run: make bench-build && build/tests/bench/bench_world [max_triangles]
 * (build/tests/bench/bench_world degenerate: builds of 1M and 10M coincident
 * triangles and of 100k and 1M slivers on a line, each with one ray)
 * Figures are from one run on a shared machine: compare within a run.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/move_check.h"
#include "core/world.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

typedef struct level {
    size_t side;    /* heightfield vertices per side */
    double spacing; /* metres between them */
    double *heights;
    size_t n_boxes;
    imp_vec3 *box_verts;
    uint32_t *box_tris;
    imp_world_collider c[2];
} level;

static double terrain_height(double x, double z) {
    return 8.0 * sin(0.011 * x) * cos(0.013 * z) + 3.0 * sin(0.05 * x + 0.3 * cos(0.04 * z)) +
           0.7 * sin(0.31 * x) * sin(0.27 * z);
}

/* A terrain of about `triangles` triangles, nine tenths of them in the
 * heightfield, the rest in buildings. */
static void level_make(level *L, size_t triangles, uint64_t *rng) {
    memset(L, 0, sizeof *L);
    size_t cells = (size_t)(0.9 * (double)triangles / 2.0);
    L->side = (size_t)sqrt((double)cells) + 1;
    L->spacing = 1.0;
    size_t s = L->side;
    L->heights = malloc(s * s * sizeof *L->heights);
    for (size_t r = 0; r < s; ++r)
        for (size_t c = 0; c < s; ++c)
            L->heights[r * s + c] = terrain_height((double)c * L->spacing, (double)r * L->spacing);
    L->n_boxes = (triangles - 2 * (s - 1) * (s - 1)) / 12;
    L->box_verts = malloc(8 * L->n_boxes * sizeof *L->box_verts);
    L->box_tris = malloc(36 * L->n_boxes * sizeof *L->box_tris);
    static const uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                         {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    double extent = (double)(s - 1) * L->spacing;
    for (size_t b = 0; b < L->n_boxes; ++b) {
        double x = imp_rng_uniform(rng, 5, extent - 5), z = imp_rng_uniform(rng, 5, extent - 5);
        double hx = imp_rng_uniform(rng, 1, 4), hz = imp_rng_uniform(rng, 1, 4);
        double y0 = terrain_height(x, z) - 1.0, hy = imp_rng_uniform(rng, 3, 20);
        for (int k = 0; k < 8; ++k)
            L->box_verts[8 * b + (size_t)k] =
                imp_v3(k & 1 ? x + hx : x - hx, k & 2 ? y0 + hy : y0, k & 4 ? z + hz : z - hz);
        for (int f = 0; f < 6; ++f) {
            uint32_t *t = &L->box_tris[36 * b + 6 * (size_t)f];
            uint32_t o = (uint32_t)(8 * b);
            t[0] = o + quads[f][0], t[1] = o + quads[f][1], t[2] = o + quads[f][2];
            t[3] = o + quads[f][0], t[4] = o + quads[f][2], t[5] = o + quads[f][3];
        }
    }
    L->c[0] = (imp_world_collider){.kind = IMP_WORLD_HEIGHTFIELD};
    L->c[0].heightfield = (imp_world_heightfield){s, s, L->spacing, L->spacing, L->heights};
    L->c[1] = (imp_world_collider){.kind = IMP_WORLD_MESH};
    L->c[1].mesh = (imp_world_mesh){L->box_verts, 8 * L->n_boxes, L->box_tris, 12 * L->n_boxes};
}

static void level_free(level *L) {
    free(L->heights);
    free(L->box_verts);
    free(L->box_tris);
}

/* A point above the terrain, up to 30 m. */
static imp_vec3 above(const level *L, uint64_t *rng) {
    double extent = (double)(L->side - 1) * L->spacing;
    double x = imp_rng_uniform(rng, 0, extent), z = imp_rng_uniform(rng, 0, extent);
    return imp_v3(x, terrain_height(x, z) + imp_rng_uniform(rng, 0.5, 30), z);
}

static void bench_rays(const imp_world *w, const level *L, uint64_t *rng) {
    size_t n = 0, hits = 0;
    double t0 = now_ms(), t1;
    do {
        for (int k = 0; k < 1000; ++k, ++n) {
            imp_world_ray r = {above(L, rng), random_unit(rng), INFINITY, NULL};
            imp_world_ray_result res = imp_world_raycast(w, &r, IMP_WORLD_RAY_CLOSEST, NULL);
            hits += res.state == IMP_WORLD_HIT;
        }
        t1 = now_ms();
    } while (t1 - t0 < 1000.0);
    printf("  rays (closest, incoherent):  %10.0f /s   (%.0f%% hit)\n",
           (double)n / ((t1 - t0) * 1e-3), 100.0 * (double)hits / (double)n);
}

/* Bodies thrown from above the terrain with gravity, over one second. */
static void bench_casts(const imp_world *w, const level *L, uint64_t *rng, const imp_shape *s,
                        const char *name) {
    size_t n = 0, hits = 0;
    double t0 = now_ms(), t1;
    do {
        for (int k = 0; k < 100; ++k, ++n) {
            imp_vec3 v = imp_scale(random_unit(rng), imp_rng_uniform(rng, 1, 15));
            imp_world_cast c = {s,   {above(L, rng), v, imp_v3(0, -9.81, 0)}, 1.0, NULL, {0, 0, 0},
                                NULL};
            imp_world_cast_result r = imp_world_shapecast(w, &c, NULL);
            hits += r.state == IMP_WORLD_HIT;
        }
        t1 = now_ms();
    } while (t1 - t0 < 1000.0);
    printf("  %-29s %10.0f /s   (%.0f%% hit)\n", name, (double)n / ((t1 - t0) * 1e-3),
           100.0 * (double)hits / (double)n);
}

/* A server tick of 64 players: each a sphere or a capsule on the terrain, reporting a walk of
 * up to 0.25 m in any direction and a small drop, validated against the world with collide
 * and slide, on one thread and split over two (as /v1/batch spreads its items over the
 * workers). The batches' median and worst time. */
enum { PLAYERS = 64, TICKS = 200 };

typedef struct tick {
    const imp_world *w;
    const imp_shape *shape;
    const imp_vec3 *from, *to;
    imp_vec3 *out; /* the corrected positions */
    int first, count;
    size_t valid, failed;
} tick;

static void *tick_run(void *arg) {
    tick *k = arg;
    for (int i = k->first; i < k->first + k->count; ++i) {
        imp_move_input in = {.shape = k->shape,
                             .from = k->from[i],
                             .to = k->to[i],
                             .dt = 1.0 / 60.0,
                             .dim = 3,
                             .max_speed = INFINITY,
                             .max_iterations = IMP_MOVE_DEFAULT_ITERATIONS,
                             .world = k->w};
        imp_move_result r = imp_move_check(&in);
        k->out[i] = r.state == IMP_MOVE_OK ? r.position : k->from[i];
        k->failed += r.state != IMP_MOVE_OK;
        k->valid += r.state == IMP_MOVE_OK && r.valid;
        imp_move_result_free(&r);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Scattered: every tick, 64 new players anywhere on the level (cold caches, the worst
 * case). Walking: 64 players that keep walking from where the server put them last tick
 * (a game server's steady state: the world near them stays in the caches). */
static void bench_validations(const imp_world *w, const level *L, uint64_t *rng,
                              const imp_shape *shape, double stand, const char *name) {
    double extent = (double)(L->side - 1) * L->spacing;
    for (int walking = 0; walking <= 1; ++walking)
        for (int threads = 1; threads <= 2; ++threads) {
            double times[TICKS];
            size_t valid = 0, failed = 0;
            imp_vec3 from[PLAYERS], to[PLAYERS], out[PLAYERS];
            for (int k = 0; k < PLAYERS; ++k) {
                double x = imp_rng_uniform(rng, 20, extent - 20),
                       z = imp_rng_uniform(rng, 20, extent - 20);
                out[k] = imp_v3(x, terrain_height(x, z) + stand + 0.05, z);
            }
            for (int t = 0; t < TICKS; ++t) {
                for (int k = 0; k < PLAYERS; ++k) {
                    double x = imp_rng_uniform(rng, 20, extent - 20),
                           z = imp_rng_uniform(rng, 20, extent - 20);
                    from[k] = walking ? out[k] : imp_v3(x, terrain_height(x, z) + stand + 1e-6, z);
                    double a = imp_rng_uniform(rng, 0, 6.283185307179586),
                           d = imp_rng_uniform(rng, 0, 0.25);
                    to[k] =
                        imp_v3(from[k].x + d * cos(a), from[k].y - imp_rng_uniform(rng, 0, 0.05),
                               from[k].z + d * sin(a));
                }
                tick part[2] = {{w, shape, from, to, out, 0, PLAYERS / threads, 0, 0},
                                {w, shape, from, to, out, PLAYERS / threads, PLAYERS / 2, 0, 0}};
                pthread_t other;
                double t0 = now_ms();
                if (threads == 2 && pthread_create(&other, NULL, tick_run, &part[1]) != 0) exit(1);
                tick_run(&part[0]);
                if (threads == 2) pthread_join(other, NULL);
                times[t] = now_ms() - t0;
                valid += part[0].valid + (threads == 2 ? part[1].valid : 0);
                failed += part[0].failed + (threads == 2 ? part[1].failed : 0);
            }
            qsort(times, TICKS, sizeof *times, cmp_double);
            printf("  64 validations (%s %s, %d thread%s): median %.3f ms, worst %.3f ms per "
                   "batch (%.0f%% valid, %zu failed)\n",
                   name, walking ? "walking on" : "scattered", threads, threads > 1 ? "s" : "",
                   times[TICKS / 2], times[TICKS - 1],
                   100.0 * (double)valid / (double)(TICKS * PLAYERS), failed);
        }
}

/* The sphere (r 0.4) and the capsule (r 0.3, 1 m segment, upright) of the casts. */
static void bench_all_validations(const imp_world *w, const level *L, uint64_t *rng) {
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.4, .rot = {1, 0, 0, 0}};
    imp_shape capsule = {.type = IMP_SHAPE_CAPSULE,
                         .a = imp_v3(0, -0.5, 0),
                         .b = imp_v3(0, 0.5, 0),
                         .radius = 0.3,
                         .rot = {1, 0, 0, 0}};
    bench_validations(w, L, rng, &ball, 0.4, "spheres");
    bench_validations(w, L, rng, &capsule, 0.8, "capsules");
}

/* Builds a world of one mesh (n triangles over the given vertices) and casts one ray
 * (closest, or every hit); prints the build's and the ray's times and returns the build's. */
static double degenerate_one(const char *what, const imp_vec3 *v, size_t nv, const uint32_t *t,
                             size_t n, imp_world_ray ray, imp_world_ray_mode mode) {
    imp_world_collider c = {.kind = IMP_WORLD_MESH};
    c.mesh = (imp_world_mesh){v, nv, t, n};
    imp_world_input in = {.dim = 3, .colliders = &c, .n_colliders = 1};
    imp_world *w = NULL;
    double t0 = now_ms();
    if (imp_world_build(&in, &w, NULL) != IMP_WORLD_OK) {
        fprintf(stderr, "build failed\n");
        exit(1);
    }
    double t1 = now_ms();
    imp_world_ray_result r = imp_world_raycast(w, &ray, mode, NULL);
    double t2 = now_ms();
    printf("  %9zu %-22s build %8.0f ms, one ray %6.1f ms (%zu hits)\n", n, what, t1 - t0, t2 - t1,
           r.state != IMP_WORLD_HIT    ? 0
           : mode == IMP_WORLD_RAY_ALL ? r.n_hits
                                       : 1);
    free(r.hits);
    imp_world_destroy(w);
    return t1 - t0;
}

/* Inputs that make a careless build quadratic (issue 16 point 2): n copies of one small
 * triangle at one point (1M and 10M), and slivers whose centroids lie on one line (100k and
 * 1M); ten times the triangles should cost about ten times the build (n log n), not a
 * hundred. */
static void bench_degenerate(void) {
    printf("degenerate inputs:\n");
    imp_vec3 v[3] = {imp_v3(1, 1, 1), imp_v3(1.001, 1, 1), imp_v3(1, 1.001, 1)};
    double ms[2];
    for (int k = 0; k < 2; ++k) {
        size_t n = k == 0 ? 1000000 : 10000000;
        uint32_t *t = calloc(3 * n, sizeof *t);
        for (size_t i = 0; i < n; ++i)
            t[3 * i + 1] = 1, t[3 * i + 2] = 2;
        imp_world_ray down = {imp_v3(1.0002, 1.0002, 5), imp_v3(0, 0, -1), INFINITY, NULL};
        ms[k] = degenerate_one("coincident triangles", v, 3, t, n, down, IMP_WORLD_RAY_CLOSEST);
        free(t);
    }
    printf("  coincident: 10x the triangles, %.1fx the build\n", ms[1] / ms[0]);
    for (int k = 0; k < 2; ++k) {
        size_t n = k == 0 ? 100000 : 1000000;
        imp_vec3 *sv = malloc(3 * n * sizeof *sv);
        uint32_t *t = malloc(3 * n * sizeof *t);
        uint64_t rng = 7;
        random_slivers(&rng, n, sv, t);
        imp_world_ray along = {imp_v3(-1, 1e-10, 1e-10), imp_v3(1, 0, 0), INFINITY, NULL};
        ms[k] = degenerate_one("slivers on a line", sv, 3 * n, t, n, along, IMP_WORLD_RAY_ALL);
        free(sv);
        free(t);
    }
    printf("  slivers: 10x the triangles, %.1fx the build\n", ms[1] / ms[0]);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "degenerate") == 0) {
        bench_degenerate();
        return 0;
    }
    size_t max_tris = argc > 1 ? (size_t)atof(argv[1]) : 1000000;
    /* a second argument "validations" or "rays" runs only those (for profiling) */
    int only_validations = argc > 2 && strcmp(argv[2], "validations") == 0;
    int only_rays = argc > 2 && strcmp(argv[2], "rays") == 0;
    const size_t sizes[] = {100000, 1000000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        if (sizes[si] > max_tris) break;
        uint64_t rng = 0x5eedbe4c0016ull + si;
        level L;
        level_make(&L, sizes[si], &rng);
        imp_world_input in = {.dim = 3, .colliders = L.c, .n_colliders = 2};
        imp_world *w = NULL;
        double t0 = now_ms();
        if (imp_world_build(&in, &w, NULL) != IMP_WORLD_OK) {
            fprintf(stderr, "build failed\n");
            return 1;
        }
        double t1 = now_ms();
        imp_world_info info = imp_world_describe(w);
        printf("world of %zu triangles (terrain %zu x %zu, %zu buildings):\n", info.triangles,
               L.side, L.side, L.n_boxes);
        printf("  build:                        %10.1f ms\n", t1 - t0);
        printf("  memory:                       %10.1f MB, %.1f bytes per triangle, %zu nodes\n",
               (double)info.bytes / 1e6, (double)info.bytes / (double)info.triangles, info.nodes);
        if (only_validations) {
            bench_all_validations(w, &L, &rng);
            imp_world_destroy(w);
            level_free(&L);
            continue;
        }
        bench_rays(w, &L, &rng);
        if (only_rays) {
            imp_world_destroy(w);
            level_free(&L);
            continue;
        }
        imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.4};
        imp_shape capsule = {.type = IMP_SHAPE_CAPSULE,
                             .a = imp_v3(0, -0.5, 0),
                             .b = imp_v3(0, 0.5, 0),
                             .radius = 0.3};
        bench_casts(w, &L, &rng, &ball, "sphere casts (gravity, 1 s):");
        bench_casts(w, &L, &rng, &capsule, "capsule casts (gravity, 1 s):");
        bench_all_validations(w, &L, &rng);
        imp_world_destroy(w);
        level_free(&L);
    }
    return 0;
}
