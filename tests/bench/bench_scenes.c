/*
 * bench_scenes.c - scene prediction: broadphase and narrowphase cost by
 * scene size, kind and dimension; and the JSON cost around the solve.
 *
 *   make bench-build && build/tests/bench/bench_scenes [max_n | --json]
 *
 * Part 1: moving spheres (radius 0.5, speed up to 1, horizon 1), uniform
 * density (10% of the area or volume covered) and clustered (16 clusters
 * at 4x that density), 2D and 3D, n = 1k .. 1M (max_n, default 1M). For each
 * broadphase: ms for swept bounds + broadphase, candidate pairs, ms for
 * the whole imp_scene_predict (bounds, broadphase, narrowphase on a pool
 * of 2 threads, sorting), and the collisions found, which must be equal
 * across kinds (the program exits 1 otherwise). Brute force (every pair
 * through the narrowphase, no bounds) runs up to 10k bodies, once; other
 * figures are the best of 3 runs.
 * Part 2: the same request through imp_api_handle (what the daemon runs on
 * a worker) for 10k and 100k bodies: its whole time, the solve as the
 * endpoint reports it (stats.elapsed_ms), and the rest, which is JSON
 * handling, split into parse + decode (the same request with max_results 0,
 * whose reply is empty, less its solve) and encode (the remainder); and for
 * comparison what jansson alone takes to parse the request and to print the
 * reply.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "core/scene.h"
#include "server/alloc.h"
#include "server/pool.h"
#include "tests/rng.h"

#define RUNS 3
#define IMP_BENCH_PI 3.14159265358979323846
#define BRUTE_MAX_N 10000

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static imp_scene_body *make_scene(size_t n, int dim, int clustered, uint64_t seed) {
    imp_scene_body *b = malloc(n * sizeof *b);
    uint64_t rng = seed;
    const double r = 0.5, cover = 0.1;
    double per =
        dim == 2 ? IMP_BENCH_PI * r * r / cover : 4.0 / 3.0 * IMP_BENCH_PI * r * r * r / cover;
    double side = dim == 2 ? sqrt((double)n * per) : cbrt((double)n * per);
    for (size_t i = 0; i < n; ++i) {
        double c[3];
        for (int k = 0; k < 3; ++k)
            c[k] = imp_rng_uniform(&rng, 0, side);
        if (clustered) {
            /* 16 clusters at fixed random centres, each a cube 1/8 (2D) or 1/4 (3D)
             * of the world's side: 4x the uniform density, still 1/16 of the bodies
             * near each other, so the answer stays linear in n */
            uint64_t cs = 0x9E3779B97F4A7C15ull * (1 + (i % 16));
            const double f = dim == 2 ? 0.125 : 0.25;
            for (int k = 0; k < 3; ++k)
                c[k] = imp_rng_uniform(&cs, 0, side) * (1 - f) + c[k] * f;
        }
        imp_vec3 v = imp_v3(imp_rng_uniform(&rng, -1, 1), imp_rng_uniform(&rng, -1, 1),
                            dim == 3 ? imp_rng_uniform(&rng, -1, 1) : 0);
        /* every field set (a sphere, the default filter, not turning) */
        b[i] = (imp_scene_body){.m = {imp_v3(c[0], c[1], dim == 3 ? c[2] : 0), v, imp_v3(0, 0, 0)},
                                .radius = r};
    }
    return b;
}

typedef struct measure {
    double broad_ms, total_ms;
    size_t pairs, collisions, overlapping;
} measure;

/* ms for swept bounds plus the broadphase alone; 0 for brute, which uses
 * neither; -1 on failure. */
static double broadphase_ms(const imp_scene_body *b, size_t n, int dim, imp_broadphase_kind kind,
                            const imp_parallel *par) {
    if (kind == IMP_BROAD_BRUTE) return 0;
    double t0 = now_ms();
    imp_aabb *boxes = malloc(n * sizeof *boxes);
    for (size_t i = 0; i < n; ++i)
        boxes[i] = imp_swept_bounds_sphere(&b[i].m, b[i].radius, 1.0, dim, 0.0);
    imp_broadphase_input in = {boxes, NULL, n, dim, (size_t)1 << 30, par, 0};
    imp_pair *pairs = NULL;
    size_t count = 0;
    int rc = imp_broadphase_pairs(kind, &in, &pairs, &count, NULL);
    free(pairs);
    free(boxes);
    return rc == 0 ? now_ms() - t0 : -1;
}

static int run_kind(const imp_scene_body *b, size_t n, int dim, imp_broadphase_kind kind,
                    const imp_parallel *par, measure *m) {
    memset(m, 0, sizeof *m);
    m->broad_ms = m->total_ms = INFINITY;
    for (int run = 0; run < RUNS; ++run) {
        double broad = broadphase_ms(b, n, dim, kind, par);
        if (broad < 0) return -1;
        imp_scene_input si = {b, n, dim, 1.0, kind, SIZE_MAX, par, NULL};
        imp_scene_output out;
        double t2 = now_ms();
        if (imp_scene_predict(&si, &out, NULL) != IMP_SCENE_OK) return -1;
        double t3 = now_ms();
        m->broad_ms = fmin(m->broad_ms, broad);
        m->total_ms = fmin(m->total_ms, t3 - t2);
        m->pairs = out.candidate_pairs;
        m->collisions = out.n_collisions;
        m->overlapping = out.n_overlapping;
        imp_scene_output_free(&out);
        if (n >= 1000000 || kind == IMP_BROAD_BRUTE)
            break; /* one run is enough at this size, and for brute's seconds */
    }
    return 0;
}

static char *scene_json(const imp_scene_body *b, size_t n, int dim, size_t *len) {
    size_t cap = 64 + n * 160, k = 0;
    char *s = malloc(cap);
    k += (size_t)snprintf(s + k, cap - k, "{\"horizon\": 1, \"bodies\": [");
    for (size_t i = 0; i < n; ++i) {
        const imp_motion *m = &b[i].m;
        if (dim == 2)
            k += (size_t)snprintf(s + k, cap - k,
                                  "%s{\"radius\":0.5,\"position\":[%.17g,%.17g],"
                                  "\"velocity\":[%.17g,%.17g]}",
                                  i ? "," : "", m->p.x, m->p.y, m->v.x, m->v.y);
        else
            k += (size_t)snprintf(s + k, cap - k,
                                  "%s{\"radius\":0.5,\"position\":[%.17g,%.17g,%.17g],"
                                  "\"velocity\":[%.17g,%.17g,%.17g]}",
                                  i ? "," : "", m->p.x, m->p.y, m->p.z, m->v.x, m->v.y, m->v.z);
    }
    k += (size_t)snprintf(s + k, cap - k, "]}");
    *len = k;
    return s;
}

/* Best of RUNS: imp_api_handle's whole time, the solve it reports, the reply's length. */
static void handle_best(const char *req, size_t len, const imp_api_ctx *ctx, double *total,
                        double *solve, size_t *out_len) {
    *total = INFINITY;
    for (int run = 0; run < RUNS; ++run) {
        imp_api_response resp;
        double t0 = now_ms();
        imp_api_handle("scenes/predict", req, len, ctx, &resp);
        double t1 = now_ms();
        json_t *r = json_loads(resp.body, 0, NULL);
        if (t1 - t0 < *total) {
            *total = t1 - t0;
            *solve = json_real_value(json_object_get(json_object_get(r, "stats"), "elapsed_ms"));
            *out_len = resp.len;
        }
        json_decref(r);
        imp_api_response_free(&resp);
    }
}

static void json_split(const imp_scene_body *b, size_t n, int dim, const imp_api_ctx *ctx) {
    size_t len;
    char *req = scene_json(b, n, dim, &len);
    /* the same request with "max_results": 0 (an empty reply): its time less its solve is
     * the parse and decode; the full request's extra JSON time is the encoding */
    char *empty = malloc(len + 32);
    int k = snprintf(empty, len + 32, "{\"max_results\": 0, %s", req + 1);
    double total, solve = 0, total0, solve0 = 0;
    size_t out_len = 0, out0;
    handle_best(req, len, ctx, &total, &solve, &out_len);
    handle_best(empty, (size_t)k, ctx, &total0, &solve0, &out0);
    double decode = total0 - solve0, json = total - solve;
    /* for comparison: jansson alone parsing the request and printing the reply */
    double jparse = INFINITY, jdump = INFINITY;
    imp_api_response resp;
    imp_api_handle("scenes/predict", req, len, ctx, &resp);
    for (int run = 0; run < RUNS; ++run) {
        double t0 = now_ms();
        json_t *doc = json_loadb(req, len, JSON_DECODE_INT_AS_REAL, NULL);
        double t1 = now_ms();
        json_decref(doc);
        json_t *r = json_loads(resp.body, 0, NULL);
        double t2 = now_ms();
        char *again = json_dumps(r, JSON_COMPACT | JSON_REAL_PRECISION(17));
        double t3 = now_ms();
        jparse = fmin(jparse, t1 - t0);
        jdump = fmin(jdump, t3 - t2);
        free(again);
        json_decref(r);
    }
    imp_api_response_free(&resp);
    printf("  %dD n=%-7zu request %5.1f MB reply %5.1f MB: imp_api_handle %7.1f ms = parse+decode "
           "%6.1f + solve %7.1f + encode %6.1f; JSON %6.1f ms = %.2f x solve; jansson alone: parse "
           "%6.1f, print %6.1f ms\n",
           dim, n, (double)len / 1e6, (double)out_len / 1e6, total, decode, solve, json - decode,
           json, json / solve, jparse, jdump);
    free(empty);
    free(req);
}

int main(int argc, char **argv) {
    /* --json: part 2 alone */
    int json_only = argc > 1 && strcmp(argv[1], "--json") == 0;
    size_t max_n = argc > 1 && !json_only ? (size_t)atol(argv[1]) : 1000000;
    imp_alloc_keep(); /* as the daemon runs its workers */
    imp_pool *pool = imp_pool_create(2, 64);
    imp_parallel par = imp_pool_parallel(pool);
    static const imp_broadphase_kind kinds[] = {IMP_BROAD_GRID, IMP_BROAD_SAP, IMP_BROAD_BVH,
                                                IMP_BROAD_BRUTE};
    int bad = 0;
    printf("scene prediction, 2 worker threads, best of %d (ms)\n", RUNS);
    printf("%-3s %-9s %8s %-6s %10s %12s %10s %10s %8s\n", "dim", "scene", "n", "kind", "broad ms",
           "candidates", "narrow ms", "total ms", "hits");
    for (int dim = 2; dim <= 3 && !json_only; ++dim) {
        for (int clustered = 0; clustered <= 1; ++clustered) {
            for (size_t n = 1000; n <= max_n; n *= 10) {
                imp_scene_body *b = make_scene(n, dim, clustered, 0xB0D1E5 + n);
                size_t ref = (size_t)-1;
                for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
                    if (kinds[k] == IMP_BROAD_BRUTE && n > BRUTE_MAX_N) continue;
                    measure m;
                    if (run_kind(b, n, dim, kinds[k], &par, &m) != 0) {
                        printf("%dD %s n=%zu %s: failed\n", dim, clustered ? "cluster" : "uniform",
                               n, imp_broadphase_name(kinds[k]));
                        bad = 1;
                        continue;
                    }
                    printf("%-3d %-9s %8zu %-6s %10.2f %12zu %10.2f %10.2f %8zu\n", dim,
                           clustered ? "clustered" : "uniform", n, imp_broadphase_name(kinds[k]),
                           m.broad_ms, m.pairs, m.total_ms - m.broad_ms, m.total_ms, m.collisions);
                    if (ref == (size_t)-1)
                        ref = m.collisions;
                    else if (ref != m.collisions)
                        bad = 1;
                }
                imp_scene_input si = {b, n, dim, 1.0, IMP_BROAD_AUTO, (size_t)1 << 30, &par, NULL};
                imp_broadphase_kind chosen = IMP_BROAD_AUTO;
                {
                    imp_aabb *boxes = malloc(n * sizeof *boxes);
                    for (size_t i = 0; i < n; ++i)
                        boxes[i] = imp_swept_bounds_sphere(&b[i].m, 0.5, 1.0, dim, 0.0);
                    imp_broadphase_input in = {boxes, NULL, n, dim, si.max_pairs, &par, 0};
                    chosen = imp_broadphase_choose(&in);
                    free(boxes);
                }
                printf("    auto chooses %s\n", imp_broadphase_name(chosen));
                free(b);
            }
        }
    }
    printf("\nJSON around the solve (imp_api_handle, uniform scenes):\n");
    imp_api_ctx ctx;
    imp_api_ctx_init(&ctx);
    ctx.parallel = par;
    for (int dim = 2; dim <= 3; ++dim) {
        for (size_t n = 10000; n <= 100000 && n <= max_n; n *= 10) {
            imp_scene_body *b = make_scene(n, dim, 0, 0xB0D1E5 + n);
            json_split(b, n, dim, &ctx);
            free(b);
        }
    }
    imp_pool_destroy(pool);
    if (bad) printf("MISMATCH: broadphases disagree or failed\n");
    return bad;
}
