/*
 * test_world.c - static worlds: the build, and every query against a loop
 * over every primitive.
 *
 * Randomized worlds of every kind (meshes, heightfields and convex shapes
 * in 3D; chains and convex shapes in 2D) answer rays (closest, any, all),
 * shape casts and overlaps exactly as the brute-force loop over
 * imp_world_*_prim does: the results are compared with memcmp. Closed
 * meshes (icospheres, boxes with faces split into many coplanar
 * triangles, random convex hulls) never let a ray from inside escape, even
 * aimed exactly at vertices and at points on shared edges. Degenerate
 * builds (a million triangles at one point, slivers along a line) finish
 * in O(n log n) (times printed, not asserted). Known answers: one-sided
 * faces, zero-area triangles, heightfield triangles where the contract
 * puts them.
 *
 * Every random test prints its seed; a failure prints the seed and case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <math.h>

#include "core/hull.h"
#include "core/toi_rounded.h"
#include "core/world.h"
#include "core/world_impl.h"
#include "tests/random_shapes.h"
#include "tests/rng.h"
#include "tests/shapes.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* ---- meshes ------------------------------------------------------------------------------- */

typedef struct mesh {
    imp_vec3 *v;
    size_t nv, cv;
    uint32_t *t;
    size_t nt, ct;
} mesh;

static uint32_t mesh_vert(mesh *m, imp_vec3 p) {
    if (m->nv == m->cv) {
        m->cv = m->cv ? 2 * m->cv : 64;
        m->v = realloc(m->v, m->cv * sizeof *m->v);
        assert_non_null(m->v);
    }
    m->v[m->nv] = p;
    return (uint32_t)m->nv++;
}

static void mesh_tri(mesh *m, uint32_t a, uint32_t b, uint32_t c) {
    if (m->nt == m->ct) {
        m->ct = m->ct ? 2 * m->ct : 64;
        m->t = realloc(m->t, 3 * m->ct * sizeof *m->t);
        assert_non_null(m->t);
    }
    m->t[3 * m->nt] = a;
    m->t[3 * m->nt + 1] = b;
    m->t[3 * m->nt + 2] = c;
    ++m->nt;
}

static void mesh_free(mesh *m) {
    free(m->v);
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* midpoint vertex of edge (a, b), pushed out to the unit sphere, shared via a small table */
typedef struct edge_mid {
    uint32_t a, b, m;
} edge_mid;

static uint32_t midpoint(mesh *m, edge_mid *tab, size_t *ntab, uint32_t a, uint32_t b) {
    uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    for (size_t i = 0; i < *ntab; ++i)
        if (tab[i].a == lo && tab[i].b == hi) return tab[i].m;
    imp_vec3 p = imp_scale(imp_add(m->v[a], m->v[b]), 0.5);
    uint32_t k = mesh_vert(m, imp_scale(p, 1.0 / imp_len(p)));
    tab[(*ntab)++] = (edge_mid){lo, hi, k};
    return k;
}

/* A unit icosphere subdivided `levels` times (20 * 4^levels triangles), outward faces. */
static mesh icosphere(int levels) {
    mesh m = {0};
    double g = (1.0 + sqrt(5.0)) / 2.0;
    const double p[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0},
                             {0, -1, g}, {0, 1, g}, {0, -1, -g}, {0, 1, -g},
                             {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    const uint32_t f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                               {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                               {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                               {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    for (int i = 0; i < 12; ++i) {
        imp_vec3 v = imp_v3(p[i][0], p[i][1], p[i][2]);
        mesh_vert(&m, imp_scale(v, 1.0 / imp_len(v)));
    }
    for (int i = 0; i < 20; ++i)
        mesh_tri(&m, f[i][0], f[i][1], f[i][2]);
    for (int l = 0; l < levels; ++l) {
        mesh next = {0};
        for (size_t i = 0; i < m.nv; ++i)
            mesh_vert(&next, m.v[i]);
        edge_mid *tab = malloc(3 * m.nt * sizeof *tab);
        size_t ntab = 0;
        for (size_t i = 0; i < m.nt; ++i) {
            uint32_t a = m.t[3 * i], b = m.t[3 * i + 1], c = m.t[3 * i + 2];
            uint32_t ab = midpoint(&next, tab, &ntab, a, b), bc = midpoint(&next, tab, &ntab, b, c),
                     ca = midpoint(&next, tab, &ntab, c, a);
            mesh_tri(&next, a, ab, ca);
            mesh_tri(&next, b, bc, ab);
            mesh_tri(&next, c, ca, bc);
            mesh_tri(&next, ab, bc, ca);
        }
        free(tab);
        mesh_free(&m);
        m = next;
    }
    return m;
}

/* The box [-h, h] with each face split into k x k squares of two
 * triangles, corners shared along the box's edges; outward faces. */
static mesh split_box(imp_vec3 h, int k) {
    mesh m = {0};
    /* vertex (i, j, l) on the lattice, only on the surface, indexed through a table */
    int n = k + 1;
    uint32_t *id = malloc((size_t)(n * n * n) * sizeof *id);
    for (int i = 0; i < n * n * n; ++i)
        id[i] = UINT32_MAX;
    double hh[3] = {h.x, h.y, h.z};
#define AT(i, j, l) id[((i)*n + (j)) * n + (l)]
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int l = 0; l < n; ++l) {
                if (!(i == 0 || j == 0 || l == 0 || i == k || j == k || l == k)) continue;
                AT(i, j, l) =
                    mesh_vert(&m, imp_v3(-hh[0] + 2 * hh[0] * i / k, -hh[1] + 2 * hh[1] * j / k,
                                         -hh[2] + 2 * hh[2] * l / k));
            }
    /* for each axis a and side s, the face's squares; (u, w) the other two axes */
    for (int a = 0; a < 3; ++a)
        for (int s = 0; s < 2; ++s)
            for (int u = 0; u < k; ++u)
                for (int w = 0; w < k; ++w) {
                    uint32_t q[4];
                    int uv[4][2] = {{u, w}, {u + 1, w}, {u + 1, w + 1}, {u, w + 1}};
                    for (int c = 0; c < 4; ++c) {
                        int ijk[3];
                        ijk[a] = s ? k : 0;
                        ijk[(a + 1) % 3] = uv[c][0];
                        ijk[(a + 2) % 3] = uv[c][1];
                        q[c] = AT(ijk[0], ijk[1], ijk[2]);
                    }
                    /* (a+1, a+2) is right-handed about +a: counter-clockwise seen from +a */
                    if (s) {
                        mesh_tri(&m, q[0], q[1], q[2]);
                        mesh_tri(&m, q[0], q[2], q[3]);
                    } else {
                        mesh_tri(&m, q[0], q[2], q[1]);
                        mesh_tri(&m, q[0], q[3], q[2]);
                    }
                }
#undef AT
    free(id);
    return m;
}

/* The convex hull of n random points on a sphere, its faces as fans. */
static mesh hull_mesh(uint64_t *rng, size_t n) {
    imp_vec3 *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; ++i)
        p[i] = imp_scale(random_unit(rng), imp_rng_uniform(rng, 0.7, 1.0));
    imp_hull *h = NULL;
    assert_int_equal(imp_hull_build(p, n, &h, NULL), IMP_HULL_OK);
    mesh m = {0};
    for (size_t i = 0; i < h->n_verts; ++i)
        mesh_vert(&m, h->verts[i]);
    for (size_t f = 0; f < h->n_faces; ++f)
        for (size_t j = h->face_start[f] + 1; j + 1 < h->face_start[f + 1]; ++j)
            mesh_tri(&m, (uint32_t)h->face_verts[h->face_start[f]], (uint32_t)h->face_verts[j],
                     (uint32_t)h->face_verts[j + 1]);
    imp_hull_destroy(h);
    free(p);
    return m;
}

/* every vertex rotated by q and moved by t */
static void mesh_place(mesh *m, imp_quat q, imp_vec3 t) {
    for (size_t i = 0; i < m->nv; ++i)
        m->v[i] = imp_add(imp_quat_rotate(q, m->v[i]), t);
}

static imp_world_collider mesh_collider(const mesh *m, imp_vec3 pos, int one_sided) {
    imp_world_collider c = {.kind = IMP_WORLD_MESH, .position = pos, .one_sided = one_sided};
    c.mesh = (imp_world_mesh){m->v, m->nv, m->t, m->nt};
    return c;
}

static imp_world *build(int dim, const imp_world_collider *c, size_t n) {
    imp_world_input in = {.dim = dim, .colliders = c, .n_colliders = n};
    imp_world *w = (imp_world *)(uintptr_t)1;
    imp_error err = {-1, "poison"};
    imp_world_status st = imp_world_build(&in, &w, &err);
    if (st != IMP_WORLD_OK) fail_msg("build: %d %s", st, err.message);
    assert_non_null(w);
    return w;
}

/* ---- the brute-force reference -------------------------------------------------------------- */

typedef struct reach_ctx {
    const imp_world *w;
    const imp_world_ray_prep *p;
    double t;
} reach_ctx;

static int hit_sort(const void *a, const void *b) { return imp_world_hit_cmp(a, b); }

/* Every primitive one by one, ordered as the contract says. */
static imp_world_ray_result brute_ray(const imp_world *w, const imp_world_ray *ray,
                                      imp_world_ray_mode mode) {
    imp_world_ray_result r;
    memset(&r, 0, sizeof r);
    imp_world_ray_prep p = imp_world_ray_prepare(w, ray);
    size_t n = imp_world_prim_count(w), nh = 0;
    imp_world_hit *all = malloc((n ? n : 1) * sizeof *all), best;
    size_t *failed = malloc((n ? n : 1) * sizeof *failed), nf = 0;
    imp_failure *why = malloc((n ? n : 1) * sizeof *why);
    int have = 0;
    for (size_t i = 0; i < n; ++i) {
        imp_world_hit h;
        imp_failure y = IMP_FAILURE_NONE;
        int rc = imp_world_ray_prim(w, &p, i, &h, &y);
        if (rc < 0) {
            failed[nf] = i;
            why[nf++] = y;
        }
        if (rc <= 0) continue;
        all[nh++] = h;
        if (!have || imp_world_hit_cmp(&h, &best) < 0) best = h;
        have = 1;
    }
    double bound = mode == IMP_WORLD_RAY_CLOSEST && have ? best.t : ray->max_t;
    if (!(mode == IMP_WORLD_RAY_ANY && have)) {
        /* the first blocking failure by collider and index */
        size_t first = SIZE_MAX;
        uint32_t fc = 0, fi = 0;
        for (size_t k = 0; k < nf; ++k) {
            uint32_t c, i;
            imp_world_prim_id(w, failed[k], &c, &i);
            if (imp_world_ray_reaches(w, &p, failed[k], bound) &&
                (first == SIZE_MAX || c < fc || (c == fc && i < fi)))
                first = k, fc = c, fi = i;
        }
        if (first != SIZE_MAX) {
            r.state = IMP_WORLD_FAILED;
            r.failure = why[first];
            free(all), free(failed), free(why);
            return r;
        }
    }
    r.state = have ? IMP_WORLD_HIT : IMP_WORLD_NONE;
    if (mode == IMP_WORLD_RAY_CLOSEST && have) r.hit = best;
    if (mode == IMP_WORLD_RAY_ALL && nh > 0) {
        qsort(all, nh, sizeof *all, hit_sort);
        r.hits = all;
        r.n_hits = nh;
        all = NULL;
    }
    free(all), free(failed), free(why);
    return r;
}

static const char *mode_name(imp_world_ray_mode m) {
    return m == IMP_WORLD_RAY_CLOSEST ? "closest" : m == IMP_WORLD_RAY_ANY ? "any" : "all";
}

/* The query equals the loop, bit for bit. */
static void check_same(const imp_world_ray_result *pa, const imp_world_ray_result *pb,
                       uint64_t seed, int k, imp_world_ray_mode mode, int isa) {
    imp_world_ray_result a = *pa, b = *pb;
    int same = a.state == b.state && a.failure == b.failure && a.n_hits == b.n_hits &&
               memcmp(&a.hit, &b.hit, sizeof a.hit) == 0 &&
               (a.n_hits == 0 || memcmp(a.hits, b.hits, a.n_hits * sizeof *a.hits) == 0);
    if (!same)
        fail_msg("seed %#llx ray %d (%s, %s node test): query state %d hits %zu t %.17g c %u i "
                 "%u, loop state %d hits %zu t %.17g c %u i %u",
                 (unsigned long long)seed, k, mode_name(mode), isa ? "AVX" : "SSE", a.state,
                 a.n_hits, a.hit.t, a.hit.collider, a.hit.index, b.state, b.n_hits, b.hit.t,
                 b.hit.collider, b.hit.index);
}

static void check_ray(const imp_world *w, const imp_world_ray *ray, imp_world_ray_mode mode,
                      uint64_t seed, int k) {
    imp_world_ray_result b = brute_ray(w, ray, mode);
    /* the walk with the node test this CPU runs (AVX where it has it), then with SSE */
    for (int isa = 1; isa >= 0; --isa) {
        imp_world_ray_result a = world_raycast_isa(w, ray, mode, NULL, isa);
        check_same(&a, &b, seed, k, mode, isa);
        free(a.hits);
    }
    free(b.hits);
}

/* ---- random worlds ------------------------------------------------------------------------- */

typedef struct world_parts {
    imp_world_collider c[64];
    size_t n;
    mesh meshes[8];
    size_t n_meshes;
    double *heights[4];
    size_t n_heights;
    imp_vec3 *chains[8];
    size_t n_chains;
    imp_shape shapes[32];
    imp_vec3 shape_verts[32][16];
    size_t n_shapes;
} world_parts;

static void parts_free(world_parts *p) {
    for (size_t i = 0; i < p->n_meshes; ++i)
        mesh_free(&p->meshes[i]);
    for (size_t i = 0; i < p->n_heights; ++i)
        free(p->heights[i]);
    for (size_t i = 0; i < p->n_chains; ++i)
        free(p->chains[i]);
}

static void add_shape(world_parts *p, uint64_t *rng, int dim, int kind) {
    size_t s = p->n_shapes++;
    p->shapes[s] = random_shape_of(rng, dim, kind, p->shape_verts[s]);
    imp_world_collider c = {.kind = IMP_WORLD_SHAPE, .shape = &p->shapes[s]};
    c.position = random_vec_dim(rng, 6, dim);
    p->c[p->n++] = c;
}

/* A 3D world: random triangle soup (some degenerate), a closed mesh, a
 * heightfield, convex shapes of every kind. */
static void random_world_3d(uint64_t *rng, world_parts *p, int with_halfspace) {
    memset(p, 0, sizeof *p);
    /* soup of random triangles, with shared vertices, one-sided or not */
    mesh *m = &p->meshes[p->n_meshes++];
    size_t nv = 20 + (size_t)(imp_rng_unit(rng) * 40);
    for (size_t i = 0; i < nv; ++i)
        mesh_vert(m, random_vec(rng, 6));
    size_t nt = 30 + (size_t)(imp_rng_unit(rng) * 60);
    for (size_t i = 0; i < nt; ++i) {
        uint32_t a = (uint32_t)(imp_rng_unit(rng) * nv), b = (uint32_t)(imp_rng_unit(rng) * nv),
                 c = (uint32_t)(imp_rng_unit(rng) * nv);
        mesh_tri(m, a, b, c);
    }
    p->c[p->n++] = mesh_collider(m, random_vec(rng, 1), imp_rng_unit(rng) < 0.5);
    /* a closed mesh */
    m = &p->meshes[p->n_meshes++];
    *m = imp_rng_unit(rng) < 0.5 ? icosphere(1) : split_box(imp_v3(1, 2, 1.5), 3);
    mesh_place(m, random_rotation(rng), imp_v3(0, 0, 0));
    p->c[p->n++] = mesh_collider(m, random_vec(rng, 5), 0);
    /* a heightfield */
    size_t rows = 3 + (size_t)(imp_rng_unit(rng) * 6), cols = 3 + (size_t)(imp_rng_unit(rng) * 6);
    double *h = malloc(rows * cols * sizeof *h);
    for (size_t i = 0; i < rows * cols; ++i)
        h[i] = imp_rng_uniform(rng, -1, 1);
    p->heights[p->n_heights++] = h;
    imp_world_collider hc = {.kind = IMP_WORLD_HEIGHTFIELD, .position = imp_v3(-6, -4, -6)};
    hc.heightfield = (imp_world_heightfield){rows, cols, 12.0 / (double)(cols - 1),
                                             12.0 / (double)(rows - 1), h};
    hc.one_sided = imp_rng_unit(rng) < 0.3;
    p->c[p->n++] = hc;
    if (with_halfspace == 2) { /* triangles and a halfspace, no other shape */
        add_shape(p, rng, 3, IMP_TEST_KIND_HALFSPACE);
        return;
    }
    int kinds = with_halfspace ? IMP_TEST_KINDS : IMP_TEST_KIND_HALFSPACE;
    for (int k = 0; k < kinds; ++k)
        add_shape(p, rng, 3, k);
}

/* A 2D world: open and closed chains, convex shapes of every kind. */
static void random_world_2d(uint64_t *rng, world_parts *p, int with_halfspace) {
    memset(p, 0, sizeof *p);
    for (int k = 0; k < 3; ++k) {
        size_t n = 3 + (size_t)(imp_rng_unit(rng) * 12);
        imp_vec3 *v = malloc(n * sizeof *v);
        int loop = k == 0;
        double r0 = imp_rng_uniform(rng, 1, 4);
        for (size_t i = 0; i < n; ++i) {
            if (loop) { /* a star-shaped loop, counter-clockwise */
                double a = IMP_TEST_TWO_PI * (double)i / (double)n;
                double r = r0 * imp_rng_uniform(rng, 0.6, 1.0);
                v[i] = imp_v3(r * cos(a), r * sin(a), 0);
            } else {
                v[i] = random_vec_dim(rng, 6, 2);
            }
        }
        if (n > 4) v[3] = v[2]; /* a zero-length segment */
        p->chains[p->n_chains++] = v;
        imp_world_collider c = {.kind = IMP_WORLD_CHAIN, .position = random_vec_dim(rng, 2, 2)};
        c.chain = (imp_world_chain){v, n, loop};
        c.one_sided = imp_rng_unit(rng) < 0.4;
        p->c[p->n++] = c;
    }
    int kinds = with_halfspace ? IMP_TEST_KINDS : IMP_TEST_KIND_HALFSPACE;
    for (int k = 0; k < kinds; ++k)
        add_shape(p, rng, 2, k);
}

/* World number wi of a randomized test: 3D for even wi, 2D for odd, a
 * halfspace in one of every two of each; one 3D world in four has
 * triangles and a halfspace only (the ray walk's triangles-only path must
 * still see the halfspace). */
static imp_world *random_world(uint64_t *rng, int wi, world_parts *p, int *dim) {
    *dim = wi % 2 ? 2 : 3;
    if (*dim == 3)
        random_world_3d(rng, p, wi % 8 == 4 ? 2 : wi % 8 == 0);
    else
        random_world_2d(rng, p, wi % 4 == 1);
    return build(*dim, p->c, p->n);
}

/* A ray from somewhere in the world, aimed at a random point, a corner
 * of a primitive, or a point on one of its edges. */
static imp_world_ray random_ray(uint64_t *rng, const world_parts *p, int dim) {
    imp_world_ray r;
    r.origin = random_vec_dim(rng, 9, dim);
    imp_vec3 target = random_vec_dim(rng, 6, dim);
    double u = imp_rng_unit(rng);
    if (u < 0.3 && p->n_meshes > 0) {
        const mesh *m = &p->meshes[(size_t)(imp_rng_unit(rng) * (double)p->n_meshes)];
        size_t t = (size_t)(imp_rng_unit(rng) * (double)m->nt);
        imp_vec3 a = m->v[m->t[3 * t]], b = m->v[m->t[3 * t + 1]];
        target = u < 0.15 ? a : imp_madd(a, imp_sub(b, a), imp_rng_unit(rng));
        /* the mesh's position is not applied here: near, not on, for most */
    } else if (u < 0.5 && p->n_chains > 0) {
        const imp_world_collider *c = NULL;
        for (size_t i = 0; i < p->n && !c; ++i)
            if (p->c[i].kind == IMP_WORLD_CHAIN) c = &p->c[i];
        target = imp_add(c->position,
                         c->chain.verts[(size_t)(imp_rng_unit(rng) * (double)c->chain.n_verts)]);
    }
    r.dir = imp_sub(target, r.origin);
    if (imp_max_abs(r.dir) == 0.0) r.dir = imp_v3(1, 0, 0);
    if (dim == 2) r.dir.z = 0;
    if (imp_max_abs(r.dir) == 0.0) r.dir = imp_v3(1, 0, 0);
    r.max_t = imp_rng_unit(rng) < 0.3 ? imp_rng_uniform(rng, 0.2, 1.5) : INFINITY;
    return r;
}

/* The corners of triangle `index` of collider c (a mesh or heightfield), in world coordinates. */
static void triangle_of(const imp_world_collider *c, uint32_t index, imp_vec3 v[3]) {
    if (c->kind == IMP_WORLD_MESH) {
        for (int i = 0; i < 3; ++i)
            v[i] = imp_add(c->position, c->mesh.verts[c->mesh.tris[3 * index + (uint32_t)i]]);
        return;
    }
    const imp_world_heightfield *h = &c->heightfield;
    size_t k = index / 2, r = k / (h->cols - 1), col = k % (h->cols - 1);
    size_t rc[2][3][2] = {{{0, 0}, {1, 1}, {0, 1}}, {{0, 0}, {1, 0}, {1, 1}}};
    for (int i = 0; i < 3; ++i) {
        size_t rr = r + rc[index % 2][i][0], cc = col + rc[index % 2][i][1];
        v[i] = imp_add(c->position, imp_v3((double)cc * h->dx, h->heights[rr * h->cols + cc],
                                           (double)rr * h->dz));
    }
}

/* t of a triangle hit against the plane's t in long double: n . (a - o) / n . d */
static void check_t(const world_parts *p, const imp_world_ray *r, const imp_world_hit *h,
                    double *worst) {
    if (h->kind != IMP_WORLD_PRIM_TRIANGLE) return;
    imp_vec3 v[3];
    triangle_of(&p->c[h->collider], h->index, v);
    long double e1[3] = {(long double)v[1].x - v[0].x, (long double)v[1].y - v[0].y,
                         (long double)v[1].z - v[0].z};
    long double e2[3] = {(long double)v[2].x - v[0].x, (long double)v[2].y - v[0].y,
                         (long double)v[2].z - v[0].z};
    long double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                        e1[0] * e2[1] - e1[1] * e2[0]};
    long double num = n[0] * ((long double)v[0].x - r->origin.x) +
                      n[1] * ((long double)v[0].y - r->origin.y) +
                      n[2] * ((long double)v[0].z - r->origin.z);
    long double den = n[0] * r->dir.x + n[1] * r->dir.y + n[2] * r->dir.z;
    double t = (double)(num / den);
    double rel = fabs(h->t - t) / fmax(fabs(t), 1e-300);
    if (t != 0.0 && rel > *worst) *worst = rel;
}

static void test_rays_match_loop(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed0016a11ull;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    size_t hits = 0, rays = 0;
    double worst = 0.0;
    for (int wi = 0; wi < 40; ++wi) {
        int dim;
        world_parts p;
        imp_world *w = random_world(&rng, wi, &p, &dim);
        for (int k = 0; k < 300; ++k) {
            imp_world_ray r = random_ray(&rng, &p, dim);
            for (int m = 0; m < 3; ++m)
                check_ray(w, &r, (imp_world_ray_mode)m, seed, wi * 1000 + k);
            imp_world_ray_result res = imp_world_raycast(w, &r, IMP_WORLD_RAY_ALL, NULL);
            for (size_t i = 0; i < res.n_hits; ++i)
                check_t(&p, &r, &res.hits[i], &worst);
            hits += res.state == IMP_WORLD_HIT;
            ++rays;
            free(res.hits);
        }
        imp_world_destroy(w);
        parts_free(&p);
    }
    print_message("%zu rays, %zu hit; t of triangle hits within %.2g of the plane's (long "
                  "double)\n",
                  rays, hits, worst);
    assert_true(worst <= 1e-12);
    assert_true(hits > rays / 5 && hits < rays);
}

/* The ray walk tests node boxes in float (core/world_ray.c, children_span_float) and a
 * triangles-only world's leaves without looking at colliders: neither may lose a hit the
 * loop over primitives finds. Rays that stress the float test: origins and directions on
 * the lattice of the triangles' corners (rays along faces, through edges and corners,
 * starting on box faces), direction components exactly zero or on either side of the
 * float test's range (1e-30), worlds scaled from 1e-20 to 1e29 (past which, with
 * max_t beyond 1e30, the walk falls back to doubles), each against the loop in every
 * mode. */
static void test_rays_float_node_test_matches_loop(void **state) {
    (void)state;
    const uint64_t seed = 0x5eed00f10a7ull;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    static const double scales[] = {1e-20, 1e-3, 1.0, 7.0, 1e20, 1e29, 3e30};
    static const double tiny[] = {0.0, 1e-31, 1e-30, 3e-30, 1e-29, 1e-12, 0.5};
    size_t rays = 0, hits = 0;
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; ++si) {
        double sc = scales[si];
        /* a terrain-like grid of 8 x 8 cells (two triangles each) and a split box above it */
        mesh grid = {0};
        for (int i = 0; i <= 8; ++i)
            for (int j = 0; j <= 8; ++j)
                mesh_vert(&grid,
                          imp_v3(i * sc, ((i * 7 + j * 3) % 5 == 0 ? 0.5 : 0.0) * sc, j * sc));
        for (uint32_t i = 0; i < 8; ++i)
            for (uint32_t j = 0; j < 8; ++j) {
                uint32_t a = i * 9 + j, b = a + 9, c = a + 10, d = a + 1;
                mesh_tri(&grid, a, d, c);
                mesh_tri(&grid, a, c, b);
            }
        mesh box = split_box(imp_v3(sc, sc, sc), 3);
        mesh_place(&box, (imp_quat){1.0, 0.0, 0.0, 0.0}, imp_v3(4 * sc, 3 * sc, 4 * sc));
        imp_world_collider c[2] = {mesh_collider(&grid, imp_v3(0, 0, 0), 0),
                                   mesh_collider(&box, imp_v3(0, 0, 0), 0)};
        imp_world *w = build(3, c, 2);
        for (int k = 0; k < 1500; ++k) {
            /* origin: a lattice point (half steps), or a corner of a triangle exactly */
            imp_vec3 o;
            if (k % 3 == 0) {
                o = grid.v[imp_rng_next(&rng) % grid.nv];
                o.y += (double)(imp_rng_next(&rng) % 3) * sc;
            } else {
                o = imp_v3((double)(imp_rng_next(&rng) % 19) * 0.5 * sc,
                           (double)(imp_rng_next(&rng) % 11) * 0.5 * sc - 0.5 * sc,
                           (double)(imp_rng_next(&rng) % 19) * 0.5 * sc);
            }
            double d[3];
            for (int a = 0; a < 3; ++a) {
                uint64_t r = imp_rng_next(&rng);
                double m = r % 3 == 0 ? tiny[(r >> 8) % (sizeof tiny / sizeof tiny[0])]
                                      : imp_rng_uniform(&rng, 0.0, 1.0);
                d[a] = (r >> 16) & 1 ? -m : m;
            }
            if (d[0] == 0 && d[1] == 0 && d[2] == 0) d[1] = -1.0;
            imp_world_ray r = {o, imp_v3(d[0], d[1], d[2]), (k % 7 == 0 ? 1e31 : 40.0) * sc, NULL};
            for (int m = 0; m < 3; ++m)
                check_ray(w, &r, (imp_world_ray_mode)m, seed, (int)si * 10000 + k);
            imp_world_ray_result res = imp_world_raycast(w, &r, IMP_WORLD_RAY_CLOSEST, NULL);
            hits += res.state == IMP_WORLD_HIT;
            ++rays;
        }
        imp_world_destroy(w);
        mesh_free(&grid);
        mesh_free(&box);
    }
    print_message("%zu rays, %zu hit\n", rays, hits);
    assert_true(hits > rays / 4 && hits < rays);
}

/* ---- overlaps ------------------------------------------------------------------------------ */

static int contact_sort(const void *pa, const void *pb) {
    const imp_world_contact *a = pa, *b = pb;
    if (a->collider != b->collider) return a->collider < b->collider ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static imp_world_overlap_result brute_overlap(const imp_world *w, const imp_shape *s,
                                              imp_vec3 pos) {
    imp_world_overlap_result r;
    memset(&r, 0, sizeof r);
    imp_world_overlap_prep p = imp_world_overlap_prepare(w, s, pos, NULL);
    size_t n = imp_world_prim_count(w), nc = 0;
    imp_world_contact *c = malloc((n ? n : 1) * sizeof *c);
    uint32_t fc = UINT32_MAX, fi = 0;
    for (size_t i = 0; i < n; ++i) {
        imp_failure why = IMP_FAILURE_NONE;
        int rc = imp_world_overlap_prim(w, &p, i, &c[nc], &why);
        if (rc < 0) {
            uint32_t ci, ii;
            imp_world_prim_id(w, i, &ci, &ii);
            if (ci < fc || (ci == fc && ii < fi)) fc = ci, fi = ii, r.failure = why;
        }
        nc += rc > 0;
    }
    if (fc != UINT32_MAX) {
        r.state = IMP_WORLD_FAILED;
        free(c);
        return r;
    }
    qsort(c, nc, sizeof *c, contact_sort);
    r.state = nc ? IMP_WORLD_HIT : IMP_WORLD_NONE;
    r.n_contacts = nc;
    r.contacts = nc ? c : NULL;
    if (!nc) free(c);
    return r;
}

static void test_overlaps_match_loop(void **state) {
    (void)state;
    const uint64_t seed = 0x0e71a9u;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    size_t queries = 0, contacts = 0, touching = 0;
    for (int wi = 0; wi < 24; ++wi) {
        int dim;
        world_parts p;
        imp_world *w = random_world(&rng, wi, &p, &dim);
        for (int k = 0; k < 120; ++k) {
            imp_vec3 buf[16];
            imp_shape s = random_shape_of(&rng, dim, k % IMP_TEST_KIND_HALFSPACE, buf);
            imp_vec3 pos = random_vec_dim(&rng, 6, dim);
            imp_world_overlap_result a = imp_world_overlap(w, &s, pos, NULL, NULL);
            imp_world_overlap_result b = brute_overlap(w, &s, pos);
            int same = a.state == b.state && a.failure == b.failure &&
                       a.n_contacts == b.n_contacts &&
                       (a.n_contacts == 0 ||
                        memcmp(a.contacts, b.contacts, a.n_contacts * sizeof *a.contacts) == 0);
            if (!same)
                fail_msg("seed %#llx world %d query %d: state %d/%d, %zu/%zu contacts",
                         (unsigned long long)seed, wi, k, a.state, b.state, a.n_contacts,
                         b.n_contacts);
            for (size_t i = 0; i < a.n_contacts; ++i) {
                assert_true(a.contacts[i].depth >= 0.0);
                assert_true(fabs(imp_len(a.contacts[i].normal) - 1.0) < 1e-12);
                touching += a.contacts[i].depth == 0.0;
            }
            contacts += a.n_contacts;
            ++queries;
            free(a.contacts);
            free(b.contacts);
        }
        imp_world_destroy(w);
        parts_free(&p);
    }
    print_message("%zu overlap queries, %zu contacts (%zu touching)\n", queries, contacts,
                  touching);
    assert_true(contacts > queries);
}

/* A box resting on a floor of triangles and sunk into it by 0.1: every
 * triangle under it, depth 0.1, normal up; one-sided from below: none. */
static void test_overlap_known(void **state) {
    (void)state;
    mesh m = split_box(imp_v3(5, 1, 5), 4); /* its top at y = 1 is 32 triangles */
    imp_world_collider c = mesh_collider(&m, imp_v3(0, -1, 0), 1);
    imp_world *w = build(3, &c, 1);
    imp_shape box = box3(0.5, 0.5, 0.5, (imp_quat){1, 0, 0, 0});
    /* floor top at y = 0; the box from y -0.1 to 0.9, inside one 2.5 x 2.5 square */
    imp_world_overlap_result r = imp_world_overlap(w, &box, imp_v3(1.25, 0.4, 1.25), NULL, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_int_equal(r.n_contacts, 2);
    for (size_t i = 0; i < r.n_contacts; ++i) {
        assert_true(fabs(r.contacts[i].depth - 0.1) < 1e-12);
        assert_true(r.contacts[i].normal.y == 1.0);
        assert_int_equal(r.contacts[i].kind, IMP_WORLD_PRIM_TRIANGLE);
    }
    free(r.contacts);
    /* apart */
    r = imp_world_overlap(w, &box, imp_v3(1.25, 0.6, 1.25), NULL, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE);
    assert_null(r.contacts);
    /* from inside the box mesh, its faces seen from the back: one-sided, so none */
    imp_shape ball = sphere(0.2);
    r = imp_world_overlap(w, &ball, imp_v3(1.25, -0.1, 1.25), NULL, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE);
    imp_world_destroy(w);
    mesh_free(&m);
}

/* ---- shape casts --------------------------------------------------------------------------- */

/* every field bit for bit (the struct has padding, which assignment need not copy) */
static int same_cast(const imp_world_cast_result *a, const imp_world_cast_result *b) {
#define SAME(f) (memcmp(&a->f, &b->f, sizeof a->f) == 0)
    return SAME(state) && SAME(time) && SAME(point) && SAME(normal) && SAME(position) &&
           SAME(depth) && SAME(tolerance) && SAME(collider) && SAME(index) && SAME(kind) &&
           SAME(failure) && SAME(stopped_by);
#undef SAME
}

static imp_world_cast_result brute_cast(const imp_world *w, const imp_world_cast *cast) {
    imp_world_cast_prep p = imp_world_cast_prepare(w, cast);
    size_t n = imp_world_prim_count(w);
    imp_world_cast_result best, none;
    memset(&best, 0, sizeof best);
    memset(&none, 0, sizeof none);
    int have = 0;
    size_t *failed = malloc((n ? n : 1) * sizeof *failed), nf = 0;
    imp_failure *why = malloc((n ? n : 1) * sizeof *why);
    for (size_t i = 0; i < n; ++i) {
        imp_world_cast_result r = imp_world_cast_prim(w, &p, i);
        if (r.state == IMP_WORLD_FAILED) failed[nf] = i, why[nf++] = r.failure;
        if ((r.state == IMP_WORLD_HIT || r.state == IMP_WORLD_OVERLAPPING) &&
            (!have || imp_world_cast_cmp(&r, &best) < 0))
            best = r, have = 1;
    }
    double bound = have ? best.time : cast->horizon;
    uint32_t fc = UINT32_MAX, fi = 0;
    imp_failure fw = IMP_FAILURE_NONE;
    for (size_t k = 0; k < nf; ++k) {
        uint32_t c, i;
        imp_world_prim_id(w, failed[k], &c, &i);
        if (imp_world_cast_reaches(w, &p, failed[k], bound) && (c < fc || (c == fc && i < fi)))
            fc = c, fi = i, fw = why[k];
    }
    free(failed);
    free(why);
    if (fw != IMP_FAILURE_NONE) {
        none.state = IMP_WORLD_FAILED;
        none.failure = fw;
        return none;
    }
    return have ? best : none;
}

/* An independent check of a hit with the overlap query (GJK and SAT, not
 * roots): at the hit, moved a hair further along the contact normal, the
 * body overlaps the primitive it names by about that hair, and at earlier
 * times it overlaps no two-sided primitive by more than a hair. */
static void check_cast_hit(const imp_world *w, const world_parts *p, const imp_world_cast *c,
                           const imp_world_cast_result *r, uint64_t seed, int k) {
    const double tol = 1e-7;
    imp_world_overlap_result o =
        imp_world_overlap(w, c->shape, imp_madd(r->position, r->normal, -tol), NULL, NULL);
    int found = 0;
    for (size_t i = 0; i < o.n_contacts; ++i)
        found |= o.contacts[i].collider == r->collider && o.contacts[i].index == r->index &&
                 o.contacts[i].depth <= 2 * tol;
    free(o.contacts);
    /* a point or a bare segment crossing a flat primitive touches it only in passing */
    int thin = (c->shape->type == IMP_SHAPE_SPHERE || c->shape->type == IMP_SHAPE_SEGMENT) &&
               c->shape->radius == 0.0;
    if (!found && !thin && !p->c[r->collider].one_sided)
        fail_msg("seed %#llx cast %d: not touching collider %u index %u at t %.17g",
                 (unsigned long long)seed, k, r->collider, r->index, r->time);
    for (int j = 1; j < 8; ++j) {
        double t = r->time * j / 8.0;
        o = imp_world_overlap(w, c->shape, imp_motion_at(&c->motion, t), NULL, NULL);
        for (size_t i = 0; i < o.n_contacts; ++i)
            if (!p->c[o.contacts[i].collider].one_sided && o.contacts[i].depth > tol)
                fail_msg("seed %#llx cast %d: overlaps collider %u index %u by %g at t %.17g "
                         "< %.17g",
                         (unsigned long long)seed, k, o.contacts[i].collider, o.contacts[i].index,
                         o.contacts[i].depth, t, r->time);
        free(o.contacts);
    }
}

/* A random cast's path for cast k: from 5 to 12 out, aimed into the world, one in three
 * accelerating. */
static imp_motion random_cast_path(uint64_t *rng, int dim, int k) {
    imp_motion m = {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)};
    m.p = imp_scale(random_dir(rng, dim), imp_rng_uniform(rng, 5, 12));
    imp_vec3 target = random_vec_dim(rng, 5, dim);
    m.v = imp_scale(imp_sub(target, m.p), imp_rng_uniform(rng, 0.2, 1.5));
    if (k % 3 == 0) m.a = random_vec_dim(rng, 2, dim);
    return m;
}

/* The hierarchy's cast, which must equal the loop over every primitive bit for bit. */
static imp_world_cast_result cast_equals_loop(const imp_world *w, const imp_world_cast *c,
                                              uint64_t seed, int wi, int k) {
    imp_world_cast_result a = imp_world_shapecast(w, c, NULL);
    imp_world_cast_result b = brute_cast(w, c);
    if (!same_cast(&a, &b))
        fail_msg("seed %#llx world %d cast %d (shape %d): query state %d t %.17g c %u i %u, loop "
                 "state %d t %.17g c %u i %u",
                 (unsigned long long)seed, wi, k, c->shape->type, a.state, a.time, a.collider,
                 a.index, b.state, b.time, b.collider, b.index);
    return a;
}

static void test_casts_match_loop(void **state) {
    (void)state;
    const uint64_t seed = 0xca57f00du;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    size_t casts = 0, hits = 0, overlapping = 0;
    int per_world = 80;
    for (int wi = 0; wi < 24; ++wi) {
        int dim;
        world_parts p;
        imp_world *w = random_world(&rng, wi, &p, &dim);
        for (int k = 0; k < per_world; ++k) {
            imp_vec3 buf[16];
            imp_shape s = random_shape_of(&rng, dim, k % IMP_TEST_KIND_HALFSPACE, buf);
            imp_world_cast c = {.shape = &s};
            c.motion = random_cast_path(&rng, dim, k);
            c.horizon = k % 4 == 0 ? INFINITY : imp_rng_uniform(&rng, 0.3, 2);
            imp_world_cast_result a = cast_equals_loop(w, &c, seed, wi, k);
            if (a.state == IMP_WORLD_HIT) check_cast_hit(w, &p, &c, &a, seed, wi * 1000 + k);
            hits += a.state == IMP_WORLD_HIT;
            overlapping += a.state == IMP_WORLD_OVERLAPPING;
            ++casts;
        }
        imp_world_destroy(w);
        parts_free(&p);
    }
    print_message("%zu casts: %zu hit, %zu overlapping at the start\n", casts, hits, overlapping);
    assert_true(hits > casts / 4);
}

static void test_cast_known(void **state) {
    (void)state;
    /* a flat heightfield at y = 0 over [0, 4] x [0, 4] */
    double h[25] = {0};
    imp_world_collider c = {.kind = IMP_WORLD_HEIGHTFIELD};
    c.heightfield = (imp_world_heightfield){5, 5, 1.0, 1.0, h};
    imp_world *w = build(3, &c, 1);
    imp_shape ball = sphere(0.5);
    imp_world_cast cast = {&ball,     {imp_v3(1.3, 5, 2.6), imp_v3(0, -1, 0), imp_v3(0, 0, 0)},
                           INFINITY,  NULL,
                           {0, 0, 0}, NULL};
    imp_world_cast_result r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.time == 4.5 && fabs(r.normal.y - 1) < 1e-15 && r.position.y == 0.5);
    assert_true(fabs(r.point.y) < 1e-15 && r.kind == IMP_WORLD_PRIM_TRIANGLE);
    /* falling under gravity from 5.5 with radius 0.5: 5 = g t^2 / 2 */
    cast.motion = (imp_motion){imp_v3(2.5, 5.5, 2.5), imp_v3(0, 0, 0), imp_v3(0, -10, 0)};
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(fabs(r.time - 1.0) < 1e-15);
    /* a point (radius 0) through the floor: the crossing */
    imp_shape point = sphere(0.0);
    cast.shape = &point;
    cast.motion = (imp_motion){imp_v3(0.3, 2, 0.7), imp_v3(0.1, -1, 0.1), imp_v3(0, 0, 0)};
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.time == 2.0 && fabs(r.normal.y - 1) < 1e-15);
    /* a box landing flat on it: many triangles at one time; the first by index wins */
    imp_shape box = box3(1, 0.25, 1, (imp_quat){1, 0, 0, 0});
    cast.shape = &box;
    cast.motion = (imp_motion){imp_v3(2, 3.25, 2), imp_v3(0, -2, 0), imp_v3(0, 0, 0)};
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.time == 1.5 && fabs(r.normal.y - 1) < 1e-15 && r.position.y == 0.25);
    /* overlapping at the start */
    cast.motion.p.y = 0.2;
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_OVERLAPPING);
    assert_true(r.time == 0.0 && fabs(r.depth - 0.05) < 1e-12);
    imp_world_destroy(w);

    /* a one-sided floor seen from below: a ball thrown up through it passes */
    c.one_sided = 1;
    w = build(3, &c, 1);
    cast.shape = &ball;
    cast.motion = (imp_motion){imp_v3(1.5, -3, 1.5), imp_v3(0, 1, 0), imp_v3(0, 0, 0)};
    cast.horizon = 10;
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE);
    cast.motion = (imp_motion){imp_v3(1.5, 3, 1.5), imp_v3(0, -1, 0), imp_v3(0, 0, 0)};
    r = imp_world_shapecast(w, &cast, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(fabs(r.time - 2.5) < 1e-14);
    imp_world_destroy(w);
}

/* ---- turning bodies ------------------------------------------------------------------------- */

/* Shape s turned by w t about its position, into *out (vertices into buf, room for 16). */
static void turned_shape(const imp_shape *s, imp_vec3 w, double t, imp_vec3 *buf, imp_shape *out) {
    *out = *s;
    if (s->verts) {
        memcpy(buf, s->verts, s->n_verts * sizeof *buf);
        out->verts = buf;
    }
    imp_shape_rotate(out, imp_quat_from_rotvec(imp_scale(w, t)));
}

/* The deepest overlap of the turning cast's body at time t with a two-sided primitive
 * (imp_world_overlap: GJK and SAT on the body placed and turned, not the cast's
 * advancement); -1 when it overlaps none. Collider and index of the deepest into *c, *i. */
static double turning_depth_at(const imp_world *w, const world_parts *p, const imp_world_cast *cast,
                               double t, uint32_t *c, uint32_t *i) {
    imp_vec3 buf[16];
    imp_shape s;
    turned_shape(cast->shape, cast->w, t, buf, &s);
    imp_world_overlap_result o =
        imp_world_overlap(w, &s, imp_motion_at(&cast->motion, t), NULL, NULL);
    assert_true(o.state == IMP_WORLD_HIT || o.state == IMP_WORLD_NONE);
    double deepest = -1.0;
    for (size_t k = 0; k < o.n_contacts; ++k)
        if (!p->c[o.contacts[k].collider].one_sided && o.contacts[k].depth > deepest) {
            deepest = o.contacts[k].depth;
            if (c) *c = o.contacts[k].collider, *i = o.contacts[k].index;
        }
    free(o.contacts);
    return deepest;
}

/*
 * Turning bodies of every shape against random worlds of every kind (3D meshes, heightfields,
 * convex colliders, halfspaces; 2D chains and convex colliders), slow and fast spins, linear
 * and accelerated paths: the hierarchy's answer (each primitive searched only up to the best
 * contact so far) equals the loop over every primitive bit for bit, and each answer is checked
 * with the static overlap test, an independent method: a HIT's body, placed and turned at time +
 * tolerance and pushed a hair along -normal, overlaps the primitive it names; before the HIT (or
 * over the whole bounded window of a NONE) no sampled time has the body deeper than a hair in a
 * two-sided primitive.
 */
static void test_turning_casts_match_loop(void **state) {
    (void)state;
    const uint64_t seed = 0x7a11ca57u;
    uint64_t rng = seed;
    print_message("seed %#llx\n", (unsigned long long)seed);
    size_t casts = 0, hits = 0, overlapping = 0, failed = 0;
    for (int wi = 0; wi < 16; ++wi) {
        int dim;
        world_parts p;
        imp_world *w = random_world(&rng, wi, &p, &dim);
        for (int k = 0; k < 40; ++k) {
            imp_vec3 buf[16];
            imp_shape s = random_shape_of(&rng, dim, k % IMP_TEST_KIND_HALFSPACE, buf);
            imp_world_cast c = {.shape = &s};
            c.motion = random_cast_path(&rng, dim, k);
            double spin = k % 2 ? imp_rng_uniform(&rng, 0.2, 3) : imp_rng_uniform(&rng, 10, 40);
            c.w = dim == 3 ? imp_scale(random_dir(&rng, 3), spin)
                           : imp_v3(0, 0, imp_rng_unit(&rng) < 0.5 ? spin : -spin);
            c.horizon = imp_rng_uniform(&rng, 0.3, 2);
            imp_world_cast_result a = cast_equals_loop(w, &c, seed, wi, k);
            ++casts;
            failed += a.state == IMP_WORLD_FAILED;
            overlapping += a.state == IMP_WORLD_OVERLAPPING;
            if (a.state == IMP_WORLD_FAILED || a.state == IMP_WORLD_OVERLAPPING) continue;
            const double hair = 1e-6; /* of a world and paths within about 12 of the origin */
            double end = a.state == IMP_WORLD_HIT ? a.time : c.horizon;
            for (int j = 0; j < 64; ++j) {
                double t = end * j / 64.0;
                uint32_t ci = 0, ii = 0;
                double depth = turning_depth_at(w, &p, &c, t, &ci, &ii);
                if (depth > hair)
                    fail_msg("seed %#llx world %d cast %d: state %d at %.17g, but collider %u "
                             "index %u is %g deep at %.17g",
                             (unsigned long long)seed, wi, k, a.state, end, ci, ii, depth, t);
            }
            if (a.state != IMP_WORLD_HIT) continue;
            ++hits;
            /* certified for a turning shape; a sphere's spin moves nothing: exact */
            int certified = imp_shape_turns(&s, c.w);
            if (certified ? !(a.tolerance > 0.0 && a.tolerance <= 1e-9 * fmax(1.0, a.time))
                          : a.tolerance != 0.0)
                fail_msg("seed %#llx world %d cast %d: hit at %.17g (horizon %.17g) with "
                         "tolerance %.3g",
                         (unsigned long long)seed, wi, k, a.time, c.horizon, a.tolerance);
            double t1 = a.time + a.tolerance;
            imp_vec3 tb[16];
            imp_shape st;
            turned_shape(&s, c.w, t1, tb, &st);
            imp_vec3 at = imp_madd(imp_motion_at(&c.motion, t1), a.normal, -hair);
            imp_world_overlap_result o = imp_world_overlap(w, &st, at, NULL, NULL);
            int found = 0;
            for (size_t i = 0; i < o.n_contacts; ++i)
                found |= o.contacts[i].collider == a.collider && o.contacts[i].index == a.index;
            free(o.contacts);
            /* a point or a bare segment crossing a flat primitive touches it only in passing */
            int thin =
                (s.type == IMP_SHAPE_SPHERE || s.type == IMP_SHAPE_SEGMENT) && s.radius == 0.0;
            if (!found && !thin)
                fail_msg("seed %#llx world %d cast %d: not touching collider %u index %u at "
                         "%.17g + %.3g",
                         (unsigned long long)seed, wi, k, a.collider, a.index, a.time, a.tolerance);
        }
        imp_world_destroy(w);
        parts_free(&p);
    }
    print_message("%zu turning casts: %zu hit, %zu overlapping at the start, %zu undecided\n",
                  casts, hits, overlapping, failed);
    assert_true(hits > casts / 5 && failed < casts / 8);
}

/* A blade (half extents 2, 0.05, 0.05) spinning at 1 rad/s about z, 2 above a floor: its
 * lowest point 2 sin a + 0.05 cos a reaches the floor at a* = pi/2 - 2 atan2(0.05, 2). The
 * floor as 32 coplanar triangles of a mesh, as a heightfield, and as a halfspace: each cast
 * brackets a* (time <= a* <= time + tolerance) and answers the face normal; a one-sided floor
 * seen from below lets the same blade turn up through it. */
static void test_turning_cast_known(void **state) {
    (void)state;
    const double star = IMP_TEST_TWO_PI / 4 - 2 * atan2(0.05, 2);
    mesh m = split_box(imp_v3(4, 1, 4), 4); /* its top face: 16 squares at y = 1 */
    imp_shape blade = box3(2, 0.05, 0.05, (imp_quat){1, 0, 0, 0});
    double h[25] = {0};
    imp_world_collider cs[3] = {mesh_collider(&m, imp_v3(0, -1, 0), 0),
                                {.kind = IMP_WORLD_HEIGHTFIELD, .position = imp_v3(-4, 0, -4)},
                                {.kind = IMP_WORLD_SHAPE}};
    cs[1].heightfield = (imp_world_heightfield){5, 5, 2.0, 2.0, h};
    imp_shape floor = halfspace(imp_v3(0, 1, 0), 0);
    cs[2].shape = &floor;
    for (int k = 0; k < 3; ++k) {
        imp_world *w = build(3, &cs[k], 1);
        for (int sense = -1; sense <= 1; sense += 2) {
            imp_world_cast c = {&blade,
                                {imp_v3(0.3, 2, -0.2), imp_v3(0, 0, 0), imp_v3(0, 0, 0)},
                                3,
                                NULL,
                                imp_v3(0, 0, sense),
                                NULL};
            imp_world_cast_result r = imp_world_shapecast(w, &c, NULL);
            print_message("floor %d, sense %d: t %.17g + %.3g (a* %.17g)\n", k, sense, r.time,
                          r.tolerance, star);
            assert_int_equal(r.state, IMP_WORLD_HIT);
            assert_true(r.time <= star && star <= r.time + r.tolerance);
            assert_true(r.tolerance > 0 && r.tolerance <= 1e-9);
            assert_true(fabs(r.normal.y - 1) < 1e-6 && fabs(r.point.y) < 1e-8);
            /* the tip's side: x of the lowest corner, 2 cos a* - 0.05 sin a*, sign by sense */
            double x = 0.3 - sense * (2 * cos(star) - 0.05 * sin(star));
            if (!(fabs(r.point.x - x) < 1e-6))
                fail_msg("point %.17g %.17g %.17g, want x %.17g", r.point.x, r.point.y, r.point.z,
                         x);
            /* not spinning, the same blade never reaches the floor */
            c.w = imp_v3(0, 0, 0);
            assert_int_equal(imp_world_shapecast(w, &c, NULL).state, IMP_WORLD_NONE);
            /* a spin about its own long axis moves nothing down */
            c.w = imp_v3(5, 0, 0);
            assert_int_equal(imp_world_shapecast(w, &c, NULL).state, IMP_WORLD_NONE);
        }
        imp_world_destroy(w);
    }
    /* a short blade below a one-sided floor (one triangle, its front up), turning up through
     * it: none, the floor met from its back; the same floor two-sided: a hit from below */
    mesh one = {0};
    mesh_tri(&one, mesh_vert(&one, imp_v3(-4, 0, -4)), mesh_vert(&one, imp_v3(0, 0, 4)),
             mesh_vert(&one, imp_v3(4, 0, -4)));
    imp_shape small = box3(0.6, 0.05, 0.05, (imp_quat){1, 0, 0, 0});
    imp_world_cast c = {&small,
                        {imp_v3(0.3, -0.5, -0.2), imp_v3(0, 0, 0), imp_v3(0, 0, 0)},
                        3,
                        NULL,
                        imp_v3(0, 0, 1),
                        NULL};
    for (int one_sided = 0; one_sided < 2; ++one_sided) {
        imp_world_collider oc = mesh_collider(&one, imp_v3(0, 0, 0), one_sided);
        imp_world *w = build(3, &oc, 1);
        imp_world_cast_result r = imp_world_shapecast(w, &c, NULL);
        assert_int_equal(r.state, one_sided ? IMP_WORLD_NONE : IMP_WORLD_HIT);
        if (!one_sided) assert_true(fabs(r.normal.y + 1) < 1e-6 && fabs(r.point.y) < 1e-8);
        imp_world_destroy(w);
    }
    mesh_free(&one);
    mesh_free(&m);
}

/* ---- watertightness ------------------------------------------------------------------------ */

/* A point inside a closed mesh: a random convex combination of a few
 * vertices of a convex mesh, or near the centre of a non-convex one. */
static imp_vec3 inside_point(uint64_t *rng, const mesh *m, imp_vec3 centre, int convex) {
    if (!convex) return imp_add(centre, random_vec(rng, 0.3));
    imp_vec3 p = imp_v3(0, 0, 0);
    double wsum = 0.0;
    for (int k = 0; k < 4; ++k) {
        double wt = imp_rng_uniform(rng, 0.05, 1.0);
        p = imp_madd(p, m->v[(size_t)(imp_rng_unit(rng) * (double)m->nv)], wt);
        wsum += wt;
    }
    /* pulled towards the centre so it is strictly inside */
    return imp_add(imp_scale(imp_scale(p, 1.0 / wsum), 0.9), imp_scale(centre, 0.1));
}

static void test_watertight_closed_meshes(void **state) {
    (void)state;
    const uint64_t seed = 0x3a7e47167ull;
    uint64_t rng = seed;
    const size_t total = 1000000;
    print_message("seed %#llx, %zu rays\n", (unsigned long long)seed, total);
    size_t escapes = 0, rays = 0, at_vertex = 0, at_edge = 0;
    double t0 = now_ms();
    for (int mi = 0; rays < total; ++mi) {
        mesh m;
        int kind = mi % 4;
        if (kind == 0)
            m = icosphere(1 + mi % 3);
        else if (kind == 1)
            m = split_box(imp_v3(imp_rng_uniform(&rng, 0.5, 2), imp_rng_uniform(&rng, 0.5, 2),
                                 imp_rng_uniform(&rng, 0.5, 2)),
                          2 + mi % 7);
        else
            m = hull_mesh(&rng, 20 + (size_t)(imp_rng_unit(&rng) * 200));
        /* axis-aligned boxes as they are (exact coplanar faces); everything else turned and
         * moved off the origin */
        imp_vec3 centre = imp_v3(0, 0, 0);
        if (!(kind == 1 && mi % 8 == 1)) {
            centre = random_vec(&rng, 100);
            mesh_place(&m, random_rotation(&rng), centre);
        }
        /* one in three turned inside out and one-sided: rays from inside see front faces */
        int inward = mi % 3 == 0;
        if (inward)
            for (size_t i = 0; i < m.nt; ++i) {
                uint32_t x = m.t[3 * i + 1];
                m.t[3 * i + 1] = m.t[3 * i + 2];
                m.t[3 * i + 2] = x;
            }
        imp_world_collider c = mesh_collider(&m, imp_v3(0, 0, 0), inward);
        imp_world *w = build(3, &c, 1);
        for (int k = 0; k < 2000 && rays < total; ++k, ++rays) {
            imp_world_ray r = {.origin = inside_point(&rng, &m, centre, 1), .max_t = INFINITY};
            size_t t = (size_t)(imp_rng_unit(&rng) * (double)m.nt);
            const uint32_t *tri = &m.t[3 * t];
            imp_vec3 target;
            double u = imp_rng_unit(&rng);
            if (u < 0.4) { /* exactly at a vertex */
                target = m.v[tri[k % 3]];
                ++at_vertex;
            } else if (u < 0.8) { /* at a point of a shared edge */
                imp_vec3 a = m.v[tri[k % 3]], b = m.v[tri[(k + 1) % 3]];
                target = imp_madd(a, imp_sub(b, a), u < 0.6 ? 0.5 : imp_rng_unit(&rng));
                ++at_edge;
            } else {
                target = random_vec(&rng, 1);
                target = imp_add(centre, imp_scale(target, 3));
            }
            r.dir = imp_sub(target, r.origin);
            if (imp_max_abs(r.dir) == 0.0) continue;
            imp_world_ray_result res = imp_world_raycast(w, &r, IMP_WORLD_RAY_CLOSEST, NULL);
            if (res.state != IMP_WORLD_HIT || !(res.hit.t > 0.0)) {
                if (escapes < 5)
                    print_message("escape: mesh %d ray %d origin (%.17g, %.17g, %.17g) dir "
                                  "(%.17g, %.17g, %.17g)\n",
                                  mi, k, r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y,
                                  r.dir.z);
                ++escapes;
            }
        }
        imp_world_destroy(w);
        mesh_free(&m);
    }
    print_message("%zu rays from inside (%zu at vertices, %zu at edge points): %zu escapes, "
                  "%.0f ms\n",
                  rays, at_vertex, at_edge, escapes, now_ms() - t0);
    assert_int_equal(escapes, 0);
}

/* ---- known answers ------------------------------------------------------------------------ */

static void test_one_sided_back_faces(void **state) {
    (void)state;
    /* one triangle in the plane z = 0, front +z */
    imp_vec3 v[3] = {imp_v3(0, 0, 0), imp_v3(1, 0, 0), imp_v3(0, 1, 0)};
    uint32_t t[3] = {0, 1, 2};
    imp_world_collider c[2] = {{.kind = IMP_WORLD_MESH, .one_sided = 1},
                               {.kind = IMP_WORLD_MESH, .one_sided = 0}};
    c[0].mesh = c[1].mesh = (imp_world_mesh){v, 3, t, 1};
    c[1].position = imp_v3(5, 0, 0);
    imp_world *w = build(3, c, 2);
    imp_world_ray down = {imp_v3(0.25, 0.25, 2), imp_v3(0, 0, -1), INFINITY, NULL};
    imp_world_ray up = {imp_v3(0.25, 0.25, -2), imp_v3(0, 0, 2), INFINITY, NULL};
    imp_world_ray_result r = imp_world_raycast(w, &down, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.hit.t == 2 && r.hit.normal.z == 1 && r.hit.back_face == 0);
    assert_true(r.hit.collider == 0 && r.hit.index == 0);
    r = imp_world_raycast(w, &up, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE); /* the back of a one-sided face */
    up.origin.x += 5;                          /* the two-sided copy */
    r = imp_world_raycast(w, &up, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.hit.t == 1 && r.hit.normal.z == -1 && r.hit.back_face == 1);
    assert_true(r.hit.collider == 1 && r.hit.point.z == 0);
    imp_world_destroy(w);

    /* a one-sided chain blocks from the right of its direction only */
    imp_vec3 cv[2] = {imp_v3(0, 0, 0), imp_v3(2, 0, 0)}; /* right of +x is -y */
    imp_world_collider ch = {.kind = IMP_WORLD_CHAIN, .one_sided = 1};
    ch.chain = (imp_world_chain){cv, 2, 0};
    w = build(2, &ch, 1);
    imp_world_ray from_below = {imp_v3(1, -1, 0), imp_v3(0, 1, 0), INFINITY, NULL};
    imp_world_ray from_above = {imp_v3(1, 1, 0), imp_v3(0, -1, 0), INFINITY, NULL};
    r = imp_world_raycast(w, &from_below, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_true(r.hit.t == 1 && r.hit.normal.y == -1 && r.hit.kind == IMP_WORLD_PRIM_SEGMENT);
    r = imp_world_raycast(w, &from_above, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE);
    imp_world_destroy(w);
}

static void test_zero_area_triangles_skipped(void **state) {
    (void)state;
    /* repeated corners, collinear corners (exactly, with awkward decimals), and a sliver */
    imp_vec3 v[6] = {imp_v3(0, 0, 0),       imp_v3(1, 0, 0),       imp_v3(0, 1, 0),
                     imp_v3(0.1, 0.2, 0.3), imp_v3(0.2, 0.4, 0.6), imp_v3(0.3, 0.6, 0.9)};
    v[5] = imp_add(v[3], imp_scale(imp_sub(v[4], v[3]), 2.0)); /* 0.1 + 2 (0.2 - 0.1) ... */
    uint32_t t[] = {0, 1, 2, 0, 0, 1, 1, 1, 1, 0, 1, 3};
    imp_world_collider c = {.kind = IMP_WORLD_MESH};
    c.mesh = (imp_world_mesh){v, 6, t, 4};
    imp_world *w = build(3, &c, 1);
    imp_world_info info = imp_world_describe(w);
    assert_int_equal(info.triangles, 2);
    assert_int_equal(info.degenerate_triangles, 2);
    assert_int_equal(info.prims, 2);
    imp_world_destroy(w);
    /* points exactly on a line in double arithmetic: (0,0,0), (1,1,1), (3,3,3) */
    imp_vec3 l[3] = {imp_v3(0, 0, 0), imp_v3(1, 1, 1), imp_v3(3, 3, 3)};
    /* and a triangle whose cross product underflows nowhere but is tiny: kept */
    imp_vec3 s[3] = {imp_v3(0, 0, 0), imp_v3(1, 1e-300, 0), imp_v3(2, 0, 1e-300)};
    uint32_t t1[3] = {0, 1, 2};
    imp_world_collider cs[2] = {{.kind = IMP_WORLD_MESH}, {.kind = IMP_WORLD_MESH}};
    cs[0].mesh = (imp_world_mesh){l, 3, t1, 1};
    cs[1].mesh = (imp_world_mesh){s, 3, t1, 1};
    w = build(3, cs, 2);
    info = imp_world_describe(w);
    assert_int_equal(info.degenerate_triangles, 1);
    assert_int_equal(info.triangles, 1);
    imp_world_destroy(w);
}

static void test_heightfield_triangles(void **state) {
    (void)state;
    /* 3 x 4 grid, dx 2, dz 3, at (10, 0, 20): cell (r, c) at x 10 + 2c.., z 20 + 3r.. */
    double h[12];
    for (int i = 0; i < 12; ++i)
        h[i] = 0.0;
    h[1 * 4 + 2] = 1.0; /* vertex (1, 2) raised */
    imp_world_collider c = {.kind = IMP_WORLD_HEIGHTFIELD, .position = imp_v3(10, 0, 20)};
    c.heightfield = (imp_world_heightfield){3, 4, 2.0, 3.0, h};
    imp_world *w = build(3, &c, 1);
    imp_world_info info = imp_world_describe(w);
    assert_int_equal(info.triangles, 2 * 2 * 3);
    /* cell (1, 1): x in [12, 14], z in [23, 26]; diagonal from (x 12, z 23) to (14, 26).
     * Below the diagonal side with larger x (x 13.8, z 23.2): triangle 2k, k = 1*3 + 1 */
    imp_world_ray down = {imp_v3(13.8, 5, 23.2), imp_v3(0, -1, 0), INFINITY, NULL};
    imp_world_ray_result r = imp_world_raycast(w, &down, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_int_equal(r.hit.index, 8);
    assert_true(r.hit.normal.y > 0 && r.hit.back_face == 0);
    /* the other side of the diagonal (x 12.2, z 25.8): triangle 2k + 1, whose corners are
     * (1,1), (2,1), (2,2): all at height 0 */
    down.origin = imp_v3(12.2, 5, 25.8);
    r = imp_world_raycast(w, &down, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_int_equal(r.hit.index, 9);
    assert_true(r.hit.t == 5 && r.hit.normal.y == 1);
    /* triangle 8 has corners (1,1), (2,2), (1,2): (1, 2) is raised to 1 at x 14, z 23;
     * the plane through (12, 0, 23), (14, 0, 26), (14, 1, 23) at x 13.8, z 23.2 */
    down.origin = imp_v3(13.8, 5, 23.2);
    r = imp_world_raycast(w, &down, IMP_WORLD_RAY_CLOSEST, NULL);
    double expect = 1.8 / 2.0 - 0.2 / 3.0; /* height = (x - 12)/2 - (z - 23)/3 */
    assert_true(fabs(r.hit.point.y - expect) < 1e-15);
    /* from below: the back */
    imp_world_ray up = {imp_v3(11, -5, 21), imp_v3(0, 1, 0), INFINITY, NULL};
    r = imp_world_raycast(w, &up, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_true(r.state == IMP_WORLD_HIT && r.hit.back_face == 1 && r.hit.normal.y == -1);
    imp_world_destroy(w);
}

/* ---- stopping ---------------------------------------------------------------------------- */

typedef struct countdown {
    int left;
} countdown;

static int count_down(void *cls) {
    countdown *c = cls;
    return --c->left <= 0 ? 7 : 0;
}

static void test_stop_check(void **state) {
    (void)state;
    size_t n = 300000;
    imp_vec3 v[3] = {imp_v3(0, 0, 0), imp_v3(1, 0, 0), imp_v3(0, 1, 0)};
    uint32_t *t = malloc(3 * n * sizeof *t);
    for (size_t i = 0; i < n; ++i)
        t[3 * i] = 0, t[3 * i + 1] = 1, t[3 * i + 2] = 2;
    imp_world_collider c = {.kind = IMP_WORLD_MESH};
    c.mesh = (imp_world_mesh){v, 3, t, n};
    countdown cd = {3};
    imp_world_input in = {.dim = 3, .colliders = &c, .n_colliders = 1, .stop = {count_down, &cd}};
    imp_world *w = (imp_world *)(uintptr_t)1;
    imp_error err = {-1, NULL};
    assert_int_equal(imp_world_build(&in, &w, &err), IMP_WORLD_BUILD_STOPPED);
    assert_null(w);
    assert_int_equal(err.code, IMP_WORLD_BUILD_STOPPED);
    in.stop = (imp_stop){NULL, NULL};
    assert_int_equal(imp_world_build(&in, &w, NULL), IMP_WORLD_OK);
    /* every triangle lies on the ray: queries must poll while they test them */
    imp_world_ray ray = {imp_v3(0.2, 0.2, 1), imp_v3(0, 0, -1), INFINITY, NULL};
    cd.left = 3;
    imp_stop stop = {count_down, &cd};
    imp_world_ray_result r = imp_world_raycast(w, &ray, IMP_WORLD_RAY_ALL, &stop);
    assert_int_equal(r.state, IMP_WORLD_STOPPED);
    assert_int_equal(r.stopped_by, 7);
    assert_null(r.hits);
    imp_shape ball = sphere(0.1);
    cd.left = 3;
    imp_world_overlap_result o = imp_world_overlap(w, &ball, imp_v3(0.2, 0.2, 0), NULL, &stop);
    assert_int_equal(o.state, IMP_WORLD_STOPPED);
    assert_null(o.contacts);
    cd.left = 3;
    imp_world_cast cast = {
        &ball, {imp_v3(0.2, 0.2, 1), imp_v3(0, 0, -1), imp_v3(0, 0, 0)}, 5, NULL, {0, 0, 0}, NULL};
    imp_world_cast_result cr = imp_world_shapecast(w, &cast, &stop);
    assert_int_equal(cr.state, IMP_WORLD_STOPPED);
    assert_int_equal(cr.stopped_by, 7);
    imp_world_destroy(w);
    free(t);
}

/* ---- degenerate builds ------------------------------------------------------------------- */

static void test_degenerate_builds_fast(void **state) {
    (void)state;
    /* a million copies of one small triangle, all at one point */
    size_t n = 1000000;
    imp_vec3 v[3] = {imp_v3(1, 1, 1), imp_v3(1.001, 1, 1), imp_v3(1, 1.001, 1)};
    uint32_t *t = malloc(3 * n * sizeof *t);
    for (size_t i = 0; i < n; ++i)
        t[3 * i] = 0, t[3 * i + 1] = 1, t[3 * i + 2] = 2;
    imp_world_collider c = {.kind = IMP_WORLD_MESH};
    c.mesh = (imp_world_mesh){v, 3, t, n};
    double t0 = now_ms();
    imp_world *w = build(3, &c, 1);
    double t1 = now_ms();
    imp_world_ray ray = {imp_v3(1.0002, 1.0002, 5), imp_v3(0, 0, -1), INFINITY, NULL};
    imp_world_ray_result r = imp_world_raycast(w, &ray, IMP_WORLD_RAY_CLOSEST, NULL);
    double t2 = now_ms();
    assert_int_equal(r.state, IMP_WORLD_HIT);
    assert_int_equal(r.hit.index, 0); /* every copy at t = 4: the first wins */
    ray.origin = imp_v3(3, 3, 5);     /* a miss: pruned at the root */
    r = imp_world_raycast(w, &ray, IMP_WORLD_RAY_CLOSEST, NULL);
    assert_int_equal(r.state, IMP_WORLD_NONE);
    imp_world_info info = imp_world_describe(w);
    print_message("%zu coincident triangles: build %.0f ms, a ray through all of them %.0f ms, "
                  "%zu nodes\n",
                  n, t1 - t0, t2 - t1, info.nodes);
    imp_world_destroy(w);
    free(t);

    /* slivers along one line: thin triangles, their centroids spread over the x axis */
    size_t ns = 100000;
    imp_vec3 *sv = malloc(3 * ns * sizeof *sv);
    t = malloc(3 * ns * sizeof *t);
    uint64_t rng = 7;
    random_slivers(&rng, ns, sv, t);
    c.mesh = (imp_world_mesh){sv, 3 * ns, t, ns};
    t0 = now_ms();
    w = build(3, &c, 1);
    t1 = now_ms();
    imp_world_ray along = {imp_v3(-1, 1e-10, 1e-10), imp_v3(1, 0, 0), INFINITY, NULL};
    r = imp_world_raycast(w, &along, IMP_WORLD_RAY_ALL, NULL);
    t2 = now_ms();
    print_message("%zu slivers on a line: build %.0f ms, a ray along them %.0f ms (%zu hits)\n", ns,
                  t1 - t0, t2 - t1, r.n_hits);
    free(r.hits);
    imp_world_destroy(w);
    free(sv);
    free(t);
}

/* A capsule cast against a triangle goes through the prism built directly
 * (core/toi_rounded_3d.c, build_prism); the same triangle with its centroid
 * added as a fourth point makes the same configuration-space polytope through
 * the general hull. Both must give the same answer: state, and time, point and
 * normal within rounding. */
static void test_capsule_prism_matches_hull(void **state) {
    (void)state;
    const uint64_t seed = 0x9915;
    printf("seed %#llx\n", (unsigned long long)seed);
    uint64_t rng = seed;
    size_t hits = 0;
    for (int k = 0; k < 20000; ++k) {
        imp_vec3 tri[4];
        for (int j = 0; j < 3; ++j)
            tri[j] = random_vec(&rng, 2);
        tri[3] = imp_scale(imp_add(imp_add(tri[0], tri[1]), tri[2]), 1.0 / 3.0);
        imp_vec3 seg[2] = {random_vec(&rng, 0.7), random_vec(&rng, 0.7)};
        if (k % 7 == 0) seg[1] = imp_add(seg[0], imp_scale(imp_sub(tri[1], tri[0]), 0.3));
        imp_motion m = {imp_add(random_vec(&rng, 3), imp_v3(0, 0, 4)), random_vec(&rng, 5),
                        k % 2 ? random_vec(&rng, 3) : imp_v3(0, 0, 0)};
        imp_motion still = {imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0)};
        imp_toi_rounded_input in = {
            .a = m, .b = still, .va = seg, .na = 2, .ra = 0.3, .vb = tri, .nb = 3, .horizon = 2};
        imp_toi_result a = imp_toi_rounded_3d_points(&in, 1);
        in.nb = 4;
        imp_toi_result b = imp_toi_rounded_3d_points(&in, 1);
        if (a.state != b.state) fail_msg("case %d: state %d vs %d", k, a.state, b.state);
        if (a.state == IMP_TOI_NONE) continue;
        double tol = 1e-9;
        if (!(fabs(a.time - b.time) <= tol) ||
            !(imp_max_abs(imp_sub(a.normal, b.normal)) <= 1e-6) ||
            !(imp_max_abs(imp_sub(a.point, b.point)) <= 1e-6))
            fail_msg("case %d: time %.17g vs %.17g", k, a.time, b.time);
        hits += a.state == IMP_TOI_HIT;
    }
    printf("%zu hits compared\n", hits);
    assert_true(hits > 300);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sided_back_faces),
        cmocka_unit_test(test_zero_area_triangles_skipped),
        cmocka_unit_test(test_heightfield_triangles),
        cmocka_unit_test(test_rays_match_loop),
        cmocka_unit_test(test_rays_float_node_test_matches_loop),
        cmocka_unit_test(test_overlap_known),
        cmocka_unit_test(test_overlaps_match_loop),
        cmocka_unit_test(test_cast_known),
        cmocka_unit_test(test_capsule_prism_matches_hull),
        cmocka_unit_test(test_casts_match_loop),
        cmocka_unit_test(test_turning_cast_known),
        cmocka_unit_test(test_turning_casts_match_loop),
        cmocka_unit_test(test_stop_check),
        cmocka_unit_test(test_watertight_closed_meshes),
        cmocka_unit_test(test_degenerate_builds_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
