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

/* Sweeps of `body` (Bullet's the same body: capsule half height hh, or a
 * sphere when hh is 0) from each from[i] by vel[i], ours then Bullet's:
 * prints the rates and how many answers differ. */
static void sweeps(void *bul, const imp_world *w, const imp_shape *body, double hh,
                   const char *what, const imp_vec3 *from, const imp_vec3 *vel, size_t n) {
    double *st = malloc(n * sizeof *st);
    int *sh = malloc(n * sizeof *sh);
    double t0 = bench_now_s();
    for (size_t i = 0; i < n; ++i) {
        imp_world_cast c = {body, {from[i], vel[i], imp_v3(0, 0, 0)}, 1.0, NULL};
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

int main(int argc, char **argv) {
    size_t n_tris = argc > 1 ? (size_t)atof(argv[1]) : 1000000;
    size_t n_rays = argc > 2 ? (size_t)atof(argv[2]) : 500000;
    size_t n_sweeps = argc > 3 ? (size_t)atof(argv[3]) : 100000;
    uint64_t rng = 0x9ee75eedull;
    mesh m;
    mesh_make(&m, n_tris, &rng);
    printf("level: %zu triangles (terrain %zu x %zu and buildings), one thread\n", m.nt, m.side,
           m.side);

    imp_vec3 *verts = malloc(m.nv * sizeof *verts);
    for (size_t i = 0; i < m.nv; ++i)
        verts[i] = imp_v3(m.v[3 * i], m.v[3 * i + 1], m.v[3 * i + 2]);
    imp_world_collider col = {.kind = IMP_WORLD_MESH};
    col.mesh = (imp_world_mesh){verts, m.nv, m.t, m.nt};
    imp_world_input in = {.dim = 3, .colliders = &col, .n_colliders = 1};
    imp_world *w = NULL;
    double t0 = bench_now_s();
    if (imp_world_build(&in, &w, NULL) != IMP_WORLD_OK) return 1;
    double b_ours = bench_now_s() - t0;
    t0 = bench_now_s();
    void *emb = embree_build(m.v, m.nv, m.t, m.nt);
    double b_emb = bench_now_s() - t0;
    t0 = bench_now_s();
    void *bul = bullet_build(m.v, m.nv, m.t, m.nt);
    double b_bul = bench_now_s() - t0;
    printf("build: impactd %.0f ms, Embree %.0f ms, Bullet %.0f ms\n", b_ours * 1e3, b_emb * 1e3,
           b_bul * 1e3);

    /* rays */
    imp_vec3 *o = malloc(n_rays * sizeof *o), *d = malloc(n_rays * sizeof *d);
    for (size_t i = 0; i < n_rays; ++i)
        o[i] = above(&m, &rng), d[i] = random_unit(&rng);
    double *ours = malloc(n_rays * sizeof *ours);
    int *ours_hit = malloc(n_rays * sizeof *ours_hit);
    const double max_t = 1e4; /* Bullet's rays are segments: the same bound for all three */
    /* the three take turns on blocks of RAY_BLOCK rays, so a change in the shared
     * machine's load falls on all three alike; the ratio is of the summed times, and the
     * per-block impactd / Embree ratios' spread is printed with it */
    enum { RAY_BLOCK = 50000 };
    size_t n_blocks = (n_rays + RAY_BLOCK - 1) / RAY_BLOCK, diff_emb = 0, diff_bul = 0;
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
        for (size_t i = lo; i < hi; ++i) {
            double oo[3] = {o[i].x, o[i].y, o[i].z}, dd[3] = {d[i].x, d[i].y, d[i].z};
            peer_hit h = embree_ray(emb, oo, dd, max_t);
            diff_emb += differs(ours_hit[i], ours[i], h.hit, h.t);
        }
        double tc = bench_now_s();
        for (size_t i = lo; i < hi; ++i) {
            double oo[3] = {o[i].x, o[i].y, o[i].z}, dd[3] = {d[i].x, d[i].y, d[i].z};
            peer_hit h = bullet_ray(bul, oo, dd, max_t);
            diff_bul += differs(ours_hit[i], ours[i], h.hit, h.t);
        }
        double td = bench_now_s();
        s_ours += tb - ta, s_emb += tc - tb, s_bul += td - tc;
        block_ratio[bl] = (tc - tb) / (tb - ta);
    }
    double r_ours = (double)n_rays / s_ours, r_emb = (double)n_rays / s_emb,
           r_bul = (double)n_rays / s_bul;
    qsort(block_ratio, n_blocks, sizeof *block_ratio, cmp_double);
    printf("rays (closest, incoherent), per second: impactd %.0f, Embree %.0f, Bullet %.0f\n",
           r_ours, r_emb, r_bul);
    printf("  impactd / Embree %.2fx, impactd / Bullet %.2fx\n", r_ours / r_emb, r_ours / r_bul);
    if (n_blocks > 0)
        printf("  impactd / Embree per block of %d rays: min %.2fx, median %.2fx, max %.2fx\n",
               RAY_BLOCK, block_ratio[0], block_ratio[n_blocks / 2], block_ratio[n_blocks - 1]);
    free(block_ratio);
    printf("  answers differing beyond float rounding: Embree %zu, Bullet %zu of %zu\n", diff_emb,
           diff_bul, n_rays);

    /* sphere sweeps, straight */
    imp_shape ball = {.type = IMP_SHAPE_SPHERE, .radius = 0.4};
    imp_vec3 *from = malloc(n_sweeps * sizeof *from), *vel = malloc(n_sweeps * sizeof *vel);
    for (size_t i = 0; i < n_sweeps; ++i)
        from[i] = above(&m, &rng),
        vel[i] = imp_scale(random_unit(&rng), imp_rng_uniform(&rng, 1, 15));
    sweeps(bul, w, &ball, 0.0, "sphere (r 0.4, straight, 1-15 m)", from, vel, n_sweeps);
    imp_shape capsule = {.type = IMP_SHAPE_CAPSULE, .radius = 0.3};
    capsule.a = imp_v3(0, -0.5, 0), capsule.b = imp_v3(0, 0.5, 0);
    sweeps(bul, w, &capsule, 0.5, "capsule (r 0.3, segment 1 m upright, straight, 1-15 m)", from,
           vel, n_sweeps);

    free(from);
    free(vel);
    free(ours);
    free(ours_hit);
    free(o);
    free(d);
    bullet_free(bul);
    embree_free(emb);
    imp_world_destroy(w);
    free(verts);
    free(m.v);
    free(m.t);
    return 0;
}
