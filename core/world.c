/*
 * world.c - a static world of colliders: the build from meshes,
 * heightfields, chains and convex shapes, and what every query shares.
 *
 * DESIGN
 * What: imp_world_build turns the colliders of a world into primitives
 * (one per kept triangle, chain segment and convex shape) in world
 * coordinates, and has world_bvh.c put every bounded one into one
 * hierarchy; halfspaces stay outside it. Also the world's description, the
 * primitives' bounds, chain neighbours and the list of failed primitives
 * the queries keep.
 * How: two passes over the input: the first counts primitives (an upper
 * bound: every triangle and segment), the second writes them, skipping
 * zero-area triangles and zero-length segments, and the array is then
 * trimmed. A triangle has zero area when two corners are equal or the
 * cross product of its edges is exactly the zero vector; each component
 * is an orientation determinant of the triangle's projection, decided
 * exactly (a floating-point filter, then Shewchuk's expansions from
 * core/eft.h): "zero area" is then a fact about the input numbers, not
 * about rounding, and a triangle with any area, however thin, is kept
 * (the watertight ray test handles slivers). A heightfield's triangles are
 * never degenerate (dx, dz > 0 give each a nonzero projection on x-z).
 * Corners are the collider's local coordinates plus its position, rounded
 * once; the queries see only these world coordinates.
 * Why: one flat array in leaf order is what the traversals read, with no
 * indirection through index buffers; 80 bytes per primitive (three double
 * corners and two 32-bit indices) plus about 32 per primitive of nodes is
 * the memory of a world (docs/DESIGN.md states the measured figure).
 */
#define _DEFAULT_SOURCE /* madvise, for world_move_large */
#include "world.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "eft.h"
#include "hull.h"
#include "world_impl.h"

/* ---- exact zero area ------------------------------------------------------------------- */

/* Exact sign of (b0 - a0)(c1 - a1) - (b1 - a1)(c0 - a0): the orientation of
 * the projected points a, b, c. A filter decides the clear cases; the rest
 * are summed exactly from the differences' and products' error terms. */
static int orient_sign(double a0, double a1, double b0, double b1, double c0, double c1) {
    double x1 = b0 - a0, y1 = c1 - a1, x2 = b1 - a1, y2 = c0 - a0;
    double p = x1 * y1, q = x2 * y2, r = p - q;
    if (fabs(r) > 0x1.0p-48 * (fabs(p) + fabs(q))) return r > 0.0 ? 1 : -1;
    double d[4][2]; /* each difference as an exact sum of two doubles */
    d[0][0] = imp_two_sum(b0, -a0, &d[0][1]);
    d[1][0] = imp_two_sum(c1, -a1, &d[1][1]);
    d[2][0] = imp_two_sum(b1, -a1, &d[2][1]);
    d[3][0] = imp_two_sum(c0, -a0, &d[3][1]);
    double t[16];
    int n = 0;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            t[n] = imp_two_prod(d[0][i], d[1][j], &t[n + 1]);
            n += 2;
            t[n] = -imp_two_prod(d[2][i], d[3][j], &t[n + 1]);
            t[n + 1] = -t[n + 1];
            n += 2;
        }
    return imp_sum_sign(t, n);
}

static int zero_area(imp_vec3 a, imp_vec3 b, imp_vec3 c) {
    return orient_sign(a.y, a.z, b.y, b.z, c.y, c.z) == 0 &&
           orient_sign(a.z, a.x, b.z, b.x, c.z, c.x) == 0 &&
           orient_sign(a.x, a.y, b.x, b.y, c.x, c.y) == 0;
}

/* ---- the build ------------------------------------------------------------------------- */

static size_t upper_prims(const imp_world_collider *c) {
    switch (c->kind) {
    case IMP_WORLD_MESH: return c->mesh.n_tris;
    case IMP_WORLD_HEIGHTFIELD: return 2 * (c->heightfield.rows - 1) * (c->heightfield.cols - 1);
    case IMP_WORLD_CHAIN: return c->chain.loop ? c->chain.n_verts : c->chain.n_verts - 1;
    case IMP_WORLD_SHAPE: break;
    }
    return 1;
}

/* The world's copy of a shape: its vertices and a polyhedron's hull or a polygon's normals
 * in memory of its own (made once, for every query on the world). */
static int copy_shape(const imp_shape *s, imp_shape *out) {
    *out = *s;
    out->verts = NULL;
    out->hull = NULL; /* the caller's, as its normals */
    out->normals = NULL;
    out->normals_of = NULL;
    if (s->n_verts == 0 || !s->verts) return 0;
    out->verts = malloc(s->n_verts * sizeof *out->verts);
    if (!out->verts) return -1;
    memcpy(out->verts, s->verts, s->n_verts * sizeof *out->verts);
    return imp_shape_prepare(out);
}

double world_shape_bounds(const imp_shape *s, int dim, imp_vec3 pos, imp_vec3 *lo, imp_vec3 *hi) {
    imp_vec3 buf[8];
    const imp_vec3 *pts;
    double r;
    size_t n = imp_shape_points(s, dim, buf, &pts, &r);
    assert(n > 0);
    imp_vec3 a = imp_v3(INFINITY, INFINITY, INFINITY), b = imp_neg(a);
    double extent = r;
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 p = imp_add(pos, pts[i]);
        a = imp_v3(imp_fmin(a.x, p.x), imp_fmin(a.y, p.y), imp_fmin(a.z, p.z));
        b = imp_v3(imp_fmax(b.x, p.x), imp_fmax(b.y, p.y), imp_fmax(b.z, p.z));
        extent = imp_fmax(extent, imp_max_abs(pts[i]) + r);
    }
    *lo = imp_v3(a.x - r, a.y - r, a.z - r);
    *hi = imp_v3(b.x + r, b.y + r, b.z + r);
    return extent;
}

imp_vec3 world_prim_front(const imp_world *w, const world_prim *p) {
    if (w->colliders[p->collider].kind == IMP_WORLD_CHAIN) {
        imp_vec3 e = imp_sub(p->v[1], p->v[0]);
        return imp_v3(e.y, -e.x, 0.0);
    }
    return imp_cross(imp_sub(p->v[1], p->v[0]), imp_sub(p->v[2], p->v[0]));
}

int world_grow(void **items, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *m = realloc(*items, c * size);
    if (!m) return -1;
    *items = m;
    *cap = c;
    return 0;
}

typedef struct filler {
    imp_world *w;
    size_t n;        /* bounded primitives written */
    size_t n_half;   /* halfspaces seen */
    uint32_t *halfs; /* their collider indices */
} filler;

static void put(filler *f, uint32_t collider, uint32_t index, imp_vec3 a, imp_vec3 b, imp_vec3 c) {
    world_prim *p = &f->w->prims[f->n++];
    p->v[0] = a;
    p->v[1] = b;
    p->v[2] = c;
    p->collider = collider;
    p->index = index;
}

static void fill_mesh(filler *f, uint32_t ci, const imp_world_collider *c) {
    const imp_world_mesh *m = &c->mesh;
    for (size_t t = 0; t < m->n_tris; ++t) {
        const uint32_t *k = &m->tris[3 * t];
        assert(k[0] < m->n_verts && k[1] < m->n_verts && k[2] < m->n_verts);
        imp_vec3 a = imp_add(c->position, m->verts[k[0]]);
        imp_vec3 b = imp_add(c->position, m->verts[k[1]]);
        imp_vec3 d = imp_add(c->position, m->verts[k[2]]);
        if (zero_area(a, b, d)) {
            ++f->w->info.degenerate_triangles;
            continue;
        }
        put(f, ci, (uint32_t)t, a, b, d);
        ++f->w->info.triangles;
    }
}

static imp_vec3 hf_vertex(const imp_world_collider *c, size_t r, size_t col) {
    const imp_world_heightfield *h = &c->heightfield;
    return imp_add(c->position,
                   imp_v3((double)col * h->dx, h->heights[r * h->cols + col], (double)r * h->dz));
}

static void fill_heightfield(filler *f, uint32_t ci, const imp_world_collider *c) {
    const imp_world_heightfield *h = &c->heightfield;
    assert(h->rows >= 2 && h->cols >= 2 && h->dx > 0.0 && h->dz > 0.0);
    for (size_t r = 0; r + 1 < h->rows; ++r)
        for (size_t col = 0; col + 1 < h->cols; ++col) {
            imp_vec3 p00 = hf_vertex(c, r, col), p01 = hf_vertex(c, r, col + 1);
            imp_vec3 p10 = hf_vertex(c, r + 1, col), p11 = hf_vertex(c, r + 1, col + 1);
            uint32_t k = (uint32_t)(2 * (r * (h->cols - 1) + col));
            put(f, ci, k, p00, p11, p01);
            put(f, ci, k + 1, p00, p10, p11);
            f->w->info.triangles += 2;
        }
}

static void fill_chain(filler *f, uint32_t ci, const world_collider *wc) {
    size_t n = wc->n_chain, segs = wc->loop ? n : n - 1;
    for (size_t s = 0; s < segs; ++s) {
        imp_vec3 a = wc->chain[s], b = wc->chain[(s + 1) % n];
        if (a.x == b.x && a.y == b.y) {
            ++f->w->info.degenerate_segments;
            continue;
        }
        put(f, ci, (uint32_t)s, a, b, imp_v3(0, 0, 0));
        ++f->w->info.segments;
    }
}

/* Copies collider ci into the world and writes its primitives. 0, or -1 out of memory. */
static int fill_collider(filler *f, uint32_t ci, const imp_world_collider *c) {
    imp_world *w = f->w;
    world_collider *wc = &w->colliders[ci];
    wc->kind = c->kind;
    wc->one_sided = c->one_sided != 0;
    wc->filter = c->filter ? *c->filter : IMP_FILTER_DEFAULT;
    wc->position = c->position;
    switch (c->kind) {
    case IMP_WORLD_MESH:
        assert(w->dim == 3);
        fill_mesh(f, ci, c);
        return 0;
    case IMP_WORLD_HEIGHTFIELD:
        assert(w->dim == 3);
        fill_heightfield(f, ci, c);
        return 0;
    case IMP_WORLD_CHAIN:
        assert(w->dim == 2 && c->chain.n_verts >= 2);
        wc->n_chain = c->chain.n_verts;
        wc->loop = c->chain.loop != 0;
        wc->chain = malloc(wc->n_chain * sizeof *wc->chain);
        if (!wc->chain) return -1;
        for (size_t i = 0; i < wc->n_chain; ++i) {
            imp_vec3 v = imp_add(c->position, c->chain.verts[i]);
            wc->chain[i] = imp_v3(v.x, v.y, 0.0);
        }
        fill_chain(f, ci, wc);
        return 0;
    case IMP_WORLD_SHAPE: break;
    }
    assert(c->shape);
    if (copy_shape(c->shape, &wc->shape) != 0) return -1;
    ++w->info.shapes;
    if (wc->shape.type == IMP_SHAPE_HALFSPACE) {
        f->halfs[f->n_half++] = ci;
        return 0;
    }
    (void)world_shape_bounds(&wc->shape, w->dim, wc->position, &wc->lo, &wc->hi);
    put(f, ci, 0, c->position, imp_v3(0, 0, 0), imp_v3(0, 0, 0));
    return 0;
}

void world_prim_bounds(const imp_world *w, const world_prim *p, imp_vec3 *lo, imp_vec3 *hi) {
    const world_collider *c = &w->colliders[p->collider];
    if (c->kind == IMP_WORLD_SHAPE) {
        *lo = c->lo;
        *hi = c->hi;
        return;
    }
    imp_vec3 a = p->v[0], b = p->v[1];
    *lo = imp_v3(imp_fmin(a.x, b.x), imp_fmin(a.y, b.y), imp_fmin(a.z, b.z));
    *hi = imp_v3(imp_fmax(a.x, b.x), imp_fmax(a.y, b.y), imp_fmax(a.z, b.z));
    if (c->kind != IMP_WORLD_CHAIN) {
        imp_vec3 d = p->v[2];
        *lo = imp_v3(imp_fmin(lo->x, d.x), imp_fmin(lo->y, d.y), imp_fmin(lo->z, d.z));
        *hi = imp_v3(imp_fmax(hi->x, d.x), imp_fmax(hi->y, d.y), imp_fmax(hi->z, d.z));
    }
}

/* Bytes from which an array is worth huge pages (one 2 MiB page). */
#define HUGE_PAGE ((size_t)2 << 20)

/* Moves the array `items` of `bytes` bytes into 2 MiB-aligned memory the kernel
 * is asked to back with huge pages (MADV_HUGEPAGE, where the system has it):
 * returns the new array (the old one freed), or `items` itself when it is
 * smaller than a huge page or the memory is not there. A query over a large
 * world visits a few lines in each of many pages; with 4 KiB pages nearly
 * every visit also misses the TLB (bench_world_peers: rays on a 1M-triangle
 * level took about 0.7x the time with this, at the cost of one copy per build).
 * At least 64-byte aligned either way. */
static void *world_move_large(void *items, size_t bytes) {
    if (bytes < HUGE_PAGE) return items;
    size_t cap = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *m = aligned_alloc(HUGE_PAGE, cap);
    if (!m) return items;
#ifdef MADV_HUGEPAGE
    (void)madvise(m, cap, MADV_HUGEPAGE); /* advice: no answer depends on it */
#endif
    memcpy(m, items, bytes);
    free(items);
    return m;
}

/* The bounds of everything bounded, and the coordinate scale. */
static void world_bounds(imp_world *w) {
    imp_vec3 lo = imp_v3(INFINITY, INFINITY, INFINITY), hi = imp_neg(lo);
    for (size_t i = 0; i < w->n_bvh; ++i) {
        imp_vec3 a, b;
        world_prim_bounds(w, &w->prims[i], &a, &b);
        lo = imp_v3(imp_fmin(lo.x, a.x), imp_fmin(lo.y, a.y), imp_fmin(lo.z, a.z));
        hi = imp_v3(imp_fmax(hi.x, b.x), imp_fmax(hi.y, b.y), imp_fmax(hi.z, b.z));
    }
    w->info.has_bounds = w->n_bvh > 0;
    if (w->n_bvh > 0) {
        w->info.lo = lo;
        w->info.hi = hi;
        w->scale = imp_fmax(imp_max_abs(lo), imp_max_abs(hi));
    }
}

void imp_world_destroy(imp_world *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_colliders; ++i) {
        imp_shape_free(&w->colliders[i].shape);
        free(w->colliders[i].chain);
    }
    free(w->colliders);
    free(w->prims);
    free(w->nodes);
    free(w);
}

static imp_world_status fail(imp_world *w, uint32_t *halfs, imp_world_status st, imp_error *err) {
    free(halfs);
    imp_world_destroy(w);
    return (imp_world_status)imp_error_set(err, st,
                                           st == IMP_WORLD_NOMEM       ? "out of memory"
                                           : st == IMP_WORLD_TOO_LARGE ? "too many primitives"
                                                                       : "stopped by the caller");
}

imp_world_status imp_world_build(const imp_world_input *in, imp_world **out, imp_error *err) {
    assert(in && out && (in->dim == 2 || in->dim == 3));
    *out = NULL;
    size_t upper = 0, n_half = 0;
    for (size_t i = 0; i < in->n_colliders; ++i) {
        const imp_world_collider *c = &in->colliders[i];
        upper += upper_prims(c);
        n_half += c->kind == IMP_WORLD_SHAPE && c->shape->type == IMP_SHAPE_HALFSPACE;
        if (upper > IMP_WORLD_MAX_PRIMS || in->n_colliders > IMP_WORLD_MAX_PRIMS)
            return (imp_world_status)imp_error_set(err, IMP_WORLD_TOO_LARGE, "too many primitives");
    }
    imp_world *w = calloc(1, sizeof *w);
    uint32_t *halfs = malloc((n_half ? n_half : 1) * sizeof *halfs);
    if (!w || !halfs) {
        free(w);
        return fail(NULL, halfs, IMP_WORLD_NOMEM, err);
    }
    w->dim = in->dim;
    w->info.dim = in->dim;
    w->colliders = calloc(in->n_colliders ? in->n_colliders : 1, sizeof *w->colliders);
    w->prims = malloc((upper ? upper : 1) * sizeof *w->prims);
    if (!w->colliders || !w->prims) return fail(w, halfs, IMP_WORLD_NOMEM, err);
    w->n_colliders = in->n_colliders;
    filler f = {w, 0, 0, halfs};
    for (size_t i = 0; i < in->n_colliders; ++i)
        if (fill_collider(&f, (uint32_t)i, &in->colliders[i]) != 0)
            return fail(w, halfs, IMP_WORLD_NOMEM, err);
    /* the halfspaces after the bounded primitives */
    w->n_bvh = f.n;
    for (size_t i = 0; i < f.n_half; ++i)
        put(&f, halfs[i], 0, imp_v3(0, 0, 0), imp_v3(0, 0, 0), imp_v3(0, 0, 0));
    free(halfs);
    halfs = NULL;
    w->n_prims = f.n;
    if (f.n < upper) {
        world_prim *p = realloc(w->prims, (f.n ? f.n : 1) * sizeof *p);
        if (p) w->prims = p;
    }
    world_bounds(w);
    w->avx = world_cpu_avx();
    w->triangles_only = w->n_bvh == w->n_prims; /* no halfspace either */
    for (size_t i = 0; i < w->n_bvh; ++i)
        w->triangles_only =
            w->triangles_only && world_prim_kind(w, &w->prims[i]) == IMP_WORLD_PRIM_TRIANGLE;
    w->one_filter = 1;
    for (size_t i = 1; i < w->n_colliders; ++i) {
        const imp_filter *a = &w->colliders[0].filter, *b = &w->colliders[i].filter;
        w->one_filter = w->one_filter && a->category == b->category && a->mask == b->mask &&
                        a->group == b->group;
    }
    imp_world_status st = world_bvh_build(w, &in->stop);
    if (st != IMP_WORLD_OK) return fail(w, NULL, st, err);
    /* the arrays every query walks, where the kernel may back them with 2 MiB pages */
    w->prims = world_move_large(w->prims, w->n_prims * sizeof *w->prims);
    w->nodes = world_move_large(w->nodes, w->n_nodes * sizeof *w->nodes);
    w->info.colliders = w->n_colliders;
    w->info.prims = w->n_prims;
    w->info.nodes = w->n_nodes;
    size_t bytes = sizeof *w + w->n_colliders * sizeof *w->colliders +
                   w->n_prims * sizeof *w->prims + w->n_nodes * sizeof *w->nodes;
    for (size_t i = 0; i < w->n_colliders; ++i)
        bytes += w->colliders[i].shape.n_verts * sizeof(imp_vec3) *
                     (w->colliders[i].shape.normals ? 2 : 1) + /* a polygon's normals */
                 imp_hull_bytes(w->colliders[i].shape.hull) +
                 w->colliders[i].n_chain * sizeof(imp_vec3);
    w->info.bytes = bytes;
    *out = w;
    return IMP_WORLD_OK;
}

imp_world_info imp_world_describe(const imp_world *w) { return w->info; }

size_t imp_world_prim_count(const imp_world *w) { return w->n_prims; }

imp_world_prim_kind imp_world_prim_kind_of(const imp_world *w, size_t i) {
    assert(i < w->n_prims);
    return world_prim_kind(w, &w->prims[i]);
}

int imp_world_prim_corners(const imp_world *w, size_t i, imp_vec3 v[3]) {
    assert(i < w->n_prims);
    const world_prim *p = &w->prims[i];
    imp_world_prim_kind k = world_prim_kind(w, p);
    if (k == IMP_WORLD_PRIM_SHAPE) return 0;
    int n = k == IMP_WORLD_PRIM_TRIANGLE ? 3 : 2;
    for (int j = 0; j < n; ++j)
        v[j] = p->v[j];
    return n;
}

void imp_world_prim_id(const imp_world *w, size_t i, uint32_t *collider, uint32_t *index) {
    assert(i < w->n_prims);
    *collider = w->prims[i].collider;
    *index = w->prims[i].index;
}

int imp_world_segment_neighbours(const imp_world *w, size_t i, imp_vec3 *prev, int *has_prev,
                                 imp_vec3 *next, int *has_next) {
    assert(i < w->n_prims);
    const world_prim *p = &w->prims[i];
    const world_collider *c = &w->colliders[p->collider];
    if (c->kind != IMP_WORLD_CHAIN) return -1;
    size_t n = c->n_chain, s = p->index;
    *has_prev = c->loop || s > 0;
    *has_next = c->loop || s + 2 < n;
    if (*has_prev) *prev = c->chain[(s + n - 1) % n];
    if (*has_next) *next = c->chain[(s + 2) % n];
    return 0;
}

/* ---- failed primitives ------------------------------------------------------------------ */

int world_fails_push(world_fails *f, size_t i, imp_failure why) {
    void *items = f->f;
    int rc = world_grow(&items, &f->cap, f->n, sizeof *f->f);
    f->f = items;
    if (rc != 0) return -1;
    f->f[f->n++] = (world_fail){i, why};
    return 0;
}

imp_failure world_fails_first(const imp_world *w, world_fails *f, int (*blocks)(void *, size_t),
                              void *ctx, size_t *prim) {
    imp_failure why = IMP_FAILURE_NONE;
    const world_prim *best = NULL;
    for (size_t k = 0; k < f->n; ++k) {
        const world_prim *p = &w->prims[f->f[k].i];
        if (!blocks(ctx, f->f[k].i)) continue;
        if (!best || p->collider < best->collider ||
            (p->collider == best->collider && p->index < best->index)) {
            best = p;
            why = f->f[k].why;
            *prim = f->f[k].i;
        }
    }
    free(f->f);
    *f = (world_fails){0};
    return why;
}
