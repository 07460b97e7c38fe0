/*
 * bench_world_peers.c - impactd's static world against Embree 3 and Bullet
 * on the same triangles and the same rays and sweeps, in one run.
 *
 * Usage (make bench-world-peers installs libembree-dev, libbullet-dev and
 * g++, benchmark-only dependencies, and runs it):
 *   build/tests/bench/world/bench_world_peers [TRIANGLES [RAYS [SWEEPS]]]
 * (defaults 1,000,000 triangles, 500,000 rays, 100,000 sphere sweeps and
 * as many capsule sweeps: enough that each timed loop runs for a good
 * part of a second, so that a busy machine's noise evens out).
 *
 * The level is a rolling terrain (nine tenths of the triangles, split
 * along each cell's diagonal as a heightfield is) with box buildings on
 * it, as one triangle mesh. Rays start above the terrain and point
 * anywhere (incoherent); sweeps are spheres of radius 0.4, and upright
 * capsules of radius 0.3 and segment 1 m (a character), moving a random
 * 1-15 m from above the terrain, straight and without turning (Bullet's
 * sweeps are linear).
 * A second world is closed: a bumpy sphere of as many triangles, with rays
 * from random points inside it (every one must hit).
 * All on one thread. Embree stores vertices and rays as floats and Bullet
 * as floats (Debian's build), so their answers are compared with ours
 * beyond float rounding: a hit reported by one side only, or a distance
 * that differs by more than 1e-4 relative (1e-4 m at least).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/world.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/world/peers.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"

static double terrain(double x, double z) {
    return 8.0 * sin(0.011 * x) * cos(0.013 * z) + 3.0 * sin(0.05 * x + 0.3 * cos(0.04 * z)) +
           0.7 * sin(0.31 * x) * sin(0.27 * z);
}

typedef struct mesh {
    double *v; /* xyz */
    uint32_t *t;
    size_t nv, nt;
    size_t side;
} mesh;

static void mesh_make(mesh *m, size_t triangles, uint64_t *rng) {
    size_t cells = (size_t)(0.9 * (double)triangles / 2.0);
    size_t s = (size_t)sqrt((double)cells) + 1, boxes = (triangles - 2 * (s - 1) * (s - 1)) / 12;
    m->side = s;
    m->nv = s * s + 8 * boxes;
    m->nt = 2 * (s - 1) * (s - 1) + 12 * boxes;
    m->v = malloc(3 * m->nv * sizeof *m->v);
    m->t = malloc(3 * m->nt * sizeof *m->t);
    for (size_t r = 0; r < s; ++r)
        for (size_t c = 0; c < s; ++c) {
            double *p = &m->v[3 * (r * s + c)];
            p[0] = (double)c, p[1] = terrain((double)c, (double)r), p[2] = (double)r;
        }
    size_t k = 0;
    for (size_t r = 0; r + 1 < s; ++r)
        for (size_t c = 0; c + 1 < s; ++c) {
            uint32_t a = (uint32_t)(r * s + c), b = a + 1, d = a + (uint32_t)s, e = d + 1;
            /* the diagonal from (r, c) to (r+1, c+1), counter-clockwise seen from +y */
            uint32_t tri[6] = {a, d, e, a, e, b};
            memcpy(&m->t[k], tri, sizeof tri);
            k += 6;
        }
    static const uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                         {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    double extent = (double)(s - 1);
    for (size_t bx = 0; bx < boxes; ++bx) {
        double x = imp_rng_uniform(rng, 5, extent - 5), z = imp_rng_uniform(rng, 5, extent - 5);
        double hx = imp_rng_uniform(rng, 1, 4), hz = imp_rng_uniform(rng, 1, 4);
        double y0 = terrain(x, z) - 1.0, hy = imp_rng_uniform(rng, 3, 20);
        uint32_t o = (uint32_t)(s * s + 8 * bx);
        for (int q = 0; q < 8; ++q) {
            double *p = &m->v[3 * (o + (uint32_t)q)];
            p[0] = q & 1 ? x + hx : x - hx, p[1] = q & 2 ? y0 + hy : y0,
            p[2] = q & 4 ? z + hz : z - hz;
        }
        for (int f = 0; f < 6; ++f) {
            uint32_t tri[6] = {o + quads[f][0], o + quads[f][1], o + quads[f][2],
                               o + quads[f][0], o + quads[f][2], o + quads[f][3]};
            memcpy(&m->t[k], tri, sizeof tri);
            k += 6;
        }
    }
}

static imp_vec3 above(const mesh *m, uint64_t *rng) {
    double e = (double)(m->side - 1);
    double x = imp_rng_uniform(rng, 0, e), z = imp_rng_uniform(rng, 0, e);
    return imp_v3(x, terrain(x, z) + imp_rng_uniform(rng, 0.5, 30), z);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether two answers differ beyond float rounding. */
static int differs(int hit_a, double ta, int hit_b, double tb) {
    if (hit_a != hit_b) return 1;
    return hit_a && fabs(ta - tb) > 1e-4 * fmax(1.0, fmax(ta, tb));
}

/* One mesh in the three engines. */
typedef struct engines {
    imp_vec3 *verts;
    imp_world *w;
    void *emb, *bul;
} engines;

/* Builds m in the three engines; each one's build time in ms[] (milliseconds;
 * NULL: not asked). Exits when impactd refuses the mesh. */
static void engines_build(engines *e, const mesh *m, double ms[3]) {
    e->verts = malloc(m->nv * sizeof *e->verts);
    for (size_t i = 0; i < m->nv; ++i)
        e->verts[i] = imp_v3(m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
    imp_world_collider col = {.kind = IMP_WORLD_MESH};
    col.mesh = (imp_world_mesh){e->verts, m->nv, m->t, m->nt};
    imp_world_input in = {.dim = 3, .colliders = &col, .n_colliders = 1};
    double t0 = bench_now_s();
    if (imp_world_build(&in, &e->w, NULL) != IMP_WORLD_OK) exit(1);
    double t1 = bench_now_s();
    e->emb = embree_build(m->v, m->nv, m->t, m->nt);
    double t2 = bench_now_s();
    e->bul = bullet_build(m->v, m->nv, m->t, m->nt);
    double t3 = bench_now_s();
    if (ms) ms[0] = (t1 - t0) * 1e3, ms[1] = (t2 - t1) * 1e3, ms[2] = (t3 - t2) * 1e3;
}

/* Frees the engines and the mesh. */
static void engines_free(engines *e, mesh *m) {
    bullet_free(e->bul);
    embree_free(e->emb);
    imp_world_destroy(e->w);
    free(e->verts);
    free(m->v);
    free(m->t);
}

/* Rays [lo, hi) through a peer's ray function: its answers against ours,
 * counted in *diff (beyond float rounding) and *none (no hit). */
static void peer_block(peer_hit (*ray)(void *, const double[3], const double[3], double),
                       void *scene, const imp_vec3 *o, const imp_vec3 *d, size_t lo, size_t hi,
                       double max_t, const int *ours_hit, const double *ours, size_t *diff,
                       size_t *none) {
    for (size_t i = lo; i < hi; ++i) {
        double oo[3] = {o[i].x, o[i].y, o[i].z}, dd[3] = {d[i].x, d[i].y, d[i].z};
        peer_hit h = ray(scene, oo, dd, max_t);
        *diff += differs(ours_hit[i], ours[i], h.hit, h.t);
        *none += !h.hit;
    }
}

/* Closest hits of the n rays o[i] + t d[i], t <= max_t (Bullet's rays are
 * segments: the same bound for all three), by impactd, Embree and Bullet:
 * prints the rates, their ratios, and how many answers differ beyond float
 * rounding and how many rays each answers with no hit. */
static void ray_series(const char *what, const engines *e, const imp_vec3 *o, const imp_vec3 *d,
                       size_t n_rays, double max_t) {
    const imp_world *w = e->w;
    double *ours = malloc(n_rays * sizeof *ours);
    int *ours_hit = malloc(n_rays * sizeof *ours_hit);
    /* the three take turns on blocks of RAY_BLOCK rays, so a change in the shared
     * machine's load falls on all three alike; the ratio is of the summed times, and the
     * per-block impactd / Embree ratios' spread is printed with it */
    enum { RAY_BLOCK = 50000 };
    size_t n_blocks = (n_rays + RAY_BLOCK - 1) / RAY_BLOCK, diff_emb = 0, diff_bul = 0;
    size_t none_ours = 0, none_emb = 0, none_bul = 0;
    double s_ours = 0.0, s_emb = 0.0, s_bul = 0.0;
    double *block_ratio = malloc((n_blocks ? n_blocks : 1) * sizeof *block_ratio);
    for (size_t bl = 0; bl < n_blocks; ++bl) {
        size_t lo = bl * RAY_BLOCK, hi = lo + RAY_BLOCK < n_rays ? lo + RAY_BLOCK : n_rays;
        double ta = bench_now_s();
        for (size_t i = lo; i < hi; ++i) {
            imp_world_ray r = {o[i], d[i], max_t, NULL};
            imp_world_ray_result res = imp_world_raycast(w, &r, IMP_WORLD_RAY_CLOSEST, NULL);
            ours_hit[i] = res.state == IMP_WORLD_HIT;
            ours[i] = res.hit.t;
        }
        double tb = bench_now_s();
        peer_block(embree_ray, e->emb, o, d, lo, hi, max_t, ours_hit, ours, &diff_emb, &none_emb);
        double tc = bench_now_s();
        peer_block(bullet_ray, e->bul, o, d, lo, hi, max_t, ours_hit, ours, &diff_bul, &none_bul);
        double td = bench_now_s();
        s_ours += tb - ta, s_emb += tc - tb, s_bul += td - tc;
        block_ratio[bl] = (tc - tb) / (tb - ta);
    }
    for (size_t i = 0; i < n_rays; ++i)
        none_ours += !ours_hit[i];
    double r_ours = (double)n_rays / s_ours, r_emb = (double)n_rays / s_emb,
           r_bul = (double)n_rays / s_bul;
    qsort(block_ratio, n_blocks, sizeof *block_ratio, cmp_double);
    printf("%s, per second: impactd %.0f, Embree %.0f, Bullet %.0f\n", what, r_ours, r_emb, r_bul);
    printf("  impactd / Embree %.2fx, impactd / Bullet %.2fx\n", r_ours / r_emb, r_ours / r_bul);
    if (n_blocks > 0)
        printf("  impactd / Embree per block of %d rays: min %.2fx, median %.2fx, max %.2fx\n",
               RAY_BLOCK, block_ratio[0], block_ratio[n_blocks / 2], block_ratio[n_blocks - 1]);
    free(block_ratio);
    printf("  answers differing beyond float rounding: Embree %zu, Bullet %zu of %zu\n", diff_emb,
           diff_bul, n_rays);
    printf("  rays with no hit: impactd %zu, Embree %zu, Bullet %zu\n", none_ours, none_emb,
           none_bul);
    free(ours);
    free(ours_hit);
}

/* Sweeps of `body` (Bullet's the same body: capsule half height hh, or a
 * sphere when hh is 0) from each from[i] by vel[i], ours then Bullet's:
 * prints the rates and how many answers differ. */
static void sweeps(void *bul, const imp_world *w, const imp_shape *body, double hh,
                   const char *what, const imp_vec3 *from, const imp_vec3 *vel, size_t n) {
    double *st = malloc(n * sizeof *st);
    int *sh = malloc(n * sizeof *sh);
    double t0 = bench_now_s();
    for (size_t i = 0; i < n; ++i) {
        imp_world_cast c = {body, {from[i], vel[i], imp_v3(0, 0, 0)}, 1.0, NULL, {0, 0, 0}, NULL};
        imp_world_cast_result r = imp_world_shapecast(w, &c, NULL);
        sh[i] = r.state == IMP_WORLD_HIT || r.state == IMP_WORLD_OVERLAPPING;
        st[i] = r.time;
    }
    double s_ours = (double)n / (bench_now_s() - t0);
    size_t diff = 0;
    t0 = bench_now_s();
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 to = imp_add(from[i], vel[i]);
        double f[3] = {from[i].x, from[i].y, from[i].z}, tt[3] = {to.x, to.y, to.z};
        peer_hit h = hh > 0.0 ? bullet_capsule_sweep(bul, body->radius, hh, f, tt)
                              : bullet_sphere_sweep(bul, body->radius, f, tt);
        diff += differs(sh[i], st[i], h.hit, h.t);
    }
    double s_bul = (double)n / (bench_now_s() - t0);
    printf("%s sweeps, per second: impactd %.0f, Bullet %.0f (%.2fx)\n", what, s_ours, s_bul,
           s_ours / s_bul);
    printf("  answers differing beyond float rounding: Bullet %zu of %zu\n", diff, n);
    free(st);
    free(sh);
}

/* A closed mesh of about `triangles` triangles: a bumpy sphere (radius 10
 * m within 13%) of R - 1 rings of C = 2 R vertices and a vertex at each
 * pole, every vertex shared by the triangles around it. */
static void closed_make(mesh *m, size_t triangles) {
    size_t R = (size_t)sqrt((double)triangles / 4.0), C = 2 * R;
    if (R < 3) R = 3, C = 6;
    m->side = 0;
    m->nv = (R - 1) * C + 2;
    m->nt = 2 * C * (R - 1);
    m->v = malloc(3 * m->nv * sizeof *m->v);
    m->t = malloc(3 * m->nt * sizeof *m->t);
    const double pi = 3.14159265358979323846;
    for (size_t i = 1; i < R; ++i)
        for (size_t j = 0; j < C; ++j) {
            double th = pi * (double)i / (double)R, ph = 2.0 * pi * (double)j / (double)C;
            double r = 10.0 * (1.0 + 0.1 * sin(5.0 * th) * cos(7.0 * ph) +
                               0.03 * sin(23.0 * ph + 3.0 * th));
            double *p = &m->v[3 * ((i - 1) * C + j)];
            p[0] = r * sin(th) * cos(ph), p[1] = r * cos(th), p[2] = r * sin(th) * sin(ph);
        }
    uint32_t north = (uint32_t)((R - 1) * C), south = north + 1;
    m->v[3 * north] = 0, m->v[3 * north + 1] = 10, m->v[3 * north + 2] = 0;
    m->v[3 * south] = 0, m->v[3 * south + 1] = -10, m->v[3 * south + 2] = 0;
    size_t k = 0;
    for (size_t j = 0; j < C; ++j) {
        uint32_t a = (uint32_t)j, b = (uint32_t)((j + 1) % C);
        uint32_t top[3] = {north, b, a},
                 bottom[3] = {south, (uint32_t)((R - 2) * C) + a, (uint32_t)((R - 2) * C) + b};
        memcpy(&m->t[k], top, sizeof top);
        memcpy(&m->t[k + 3], bottom, sizeof bottom);
        k += 6;
    }
    for (size_t i = 0; i + 2 < R; ++i)
        for (size_t j = 0; j < C; ++j) {
            uint32_t a = (uint32_t)(i * C + j), b = (uint32_t)(i * C + (j + 1) % C),
                     c = a + (uint32_t)C, d = b + (uint32_t)C;
            uint32_t tri[6] = {a, b, d, a, d, c};
            memcpy(&m->t[k], tri, sizeof tri);
            k += 6;
        }
}

/* Rays from random points within 5 m of the closed mesh's centre (inside it:
 * every ray hits it), in random directions, against the three engines. */
static void closed_rays(size_t n_tris, size_t n_rays, uint64_t *rng) {
    mesh m;
    closed_make(&m, n_tris);
    engines e;
    engines_build(&e, &m, NULL);
    imp_vec3 *o = malloc(n_rays * sizeof *o), *d = malloc(n_rays * sizeof *d);
    for (size_t i = 0; i < n_rays; ++i)
        o[i] = imp_scale(random_unit(rng), 5.0 * cbrt(imp_rng_unit(rng))), d[i] = random_unit(rng);
    printf("closed mesh: %zu triangles (a bumpy sphere, radius 10 m), rays from inside\n", m.nt);
    ray_series("rays (closest, from inside)", &e, o, d, n_rays, 1e4);
    free(o);
    free(d);
    engines_free(&e, &m);
}

int main(int argc, char **argv) {
    size_t n_tris = argc > 1 ? (size_t)atof(argv[1]) : 1000000;
    size_t n_rays = argc > 2 ? (size_t)atof(argv[2]) : 500000;
    size_t n_sweeps = argc > 3 ? (size_t)atof(argv[3]) : 100000;
    uint64_t rng = 0x9ee75eedull;
    mesh m;
    mesh_make(&m, n_tris, &rng);
    printf("level: %zu triangles (terrain %zu x %zu and buildings), one thread\n", m.nt, m.side,
           m.side);

    engines e;
    double ms[3];
    engines_build(&e, &m, ms);
    printf("build: impactd %.0f ms, Embree %.0f ms, Bullet %.0f ms\n", ms[0], ms[1], ms[2]);

    /* rays */
    imp_vec3 *o = malloc(n_rays * sizeof *o), *d = malloc(n_rays * sizeof *d);
    for (size_t i = 0; i < n_rays; ++i)
        o[i] = above(&m, &rng), d[i] = random_unit(&rng);
    ray_series("rays (closest, incoherent)", &e, o, d, n_rays, 1e4);

    /* sphere sweeps, straight */
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.4};
    imp_vec3 *from = malloc(n_sweeps * sizeof *from), *vel = malloc(n_sweeps * sizeof *vel);
    for (size_t i = 0; i < n_sweeps; ++i)
        from[i] = above(&m, &rng),
        vel[i] = imp_scale(random_unit(&rng), imp_rng_uniform(&rng, 1, 15));
    sweeps(e.bul, e.w, &ball, 0.0, "sphere (r 0.4, straight, 1-15 m)", from, vel, n_sweeps);
    imp_shape capsule = {.type = IMP_SHAPE_CAPSULE, .radius = 0.3};
    capsule.a = imp_v3(0, -0.5, 0), capsule.b = imp_v3(0, 0.5, 0);
    sweeps(e.bul, e.w, &capsule, 0.5, "capsule (r 0.3, segment 1 m upright, straight, 1-15 m)",
           from, vel, n_sweeps);

    free(from);
    free(vel);
    free(o);
    free(d);
    engines_free(&e, &m);

    closed_rays(n_tris, n_rays, &rng);
    return 0;
}
