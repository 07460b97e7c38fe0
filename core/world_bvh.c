/*
 * world_bvh.c - the bounding volume hierarchy of a world's primitives.
 *
 * DESIGN
 * What: one binary hierarchy over every bounded primitive (triangles,
 * segments, convex shapes) of a world, built once; and the depth-first walk
 * the box-test queries (shape casts, overlaps) share. Rays have their own
 * ordered walk in world_ray.c.
 * How: top-down binned SAH (Wald, "On fast construction of SAH-based
 * bounding volume hierarchies", IEEE RT 2007): each node's primitives are
 * binned by centroid into IMP_WORLD_BINS bins on each axis whose centroid
 * extent is positive, every bin boundary is costed as area(left) n(left) +
 * area(right) n(right) (half the surface area in 3D, half the perimeter in
 * 2D), and the cheapest boundary partitions the node's range in place.
 * Leaves hold at most IMP_WORLD_LEAF_SIZE primitives. Where all centroids
 * of a node coincide (10 million triangles stacked at one point), or past
 * IMP_WORLD_SAH_MAX_DEPTH levels (inputs where SAH peels off a few
 * primitives per level), the node is split by count in the middle of its
 * range: depth stays below IMP_WORLD_MAX_DEPTH and every level costs O(n),
 * so the build is O(n log n) on any input. The build works on 28-byte
 * references (float bounds rounded outwards, and the primitive's index),
 * iteratively with an explicit stack (left child next to its parent, the
 * right child's slot patched in when it is built), and finally permutes
 * the primitives into leaf order in place (following the permutation's
 * cycles), so the peak memory is the primitives, the references and the
 * nodes. Node bounds are floats rounded outwards from the primitives'
 * double bounds: a node's box contains, exactly, every primitive box below
 * it, which the queries' consistency with the brute-force loop rests on.
 * Why: SAH gives fast rays on uneven level geometry (terrain next to dense
 * buildings); binning keeps the build linear per level; 32-byte nodes and
 * in-place permutation keep a million triangles near 110 MB.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "world_impl.h"

/* SAH bins per axis (count): Wald 2007 finds 16 within a few percent of a
 * full sweep; 16 bins on three axes cost about 50 candidate boundaries per
 * node. */
#define IMP_WORLD_BINS 16

/* Depth after which nodes are split by count (levels); with a count split
 * halving every level after it, depth stays below 64 + 31 <
 * IMP_WORLD_MAX_DEPTH for up to 2^31 primitives. */
#define IMP_WORLD_SAH_MAX_DEPTH 64

typedef struct bref {
    float lo[3], hi[3];
    uint32_t prim;
} bref;

static float down(double x) {
    if (x > FLT_MAX) return FLT_MAX;
    if (x < -FLT_MAX) return -INFINITY;
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -INFINITY) : f;
}

static float up(double x) {
    if (x > FLT_MAX) return INFINITY;
    if (x < -FLT_MAX) return -FLT_MAX;
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

static float centroid(const bref *r, int k) { return 0.5f * r->lo[k] + 0.5f * r->hi[k]; }

/* Half the surface area (3D) or half the perimeter (2D) of a box. */
static double box_cost(const float lo[3], const float hi[3], int dim) {
    double x = (double)hi[0] - lo[0], y = (double)hi[1] - lo[1], z = (double)hi[2] - lo[2];
    return dim == 3 ? x * y + y * z + z * x : x + y;
}

typedef struct bin {
    float lo[3], hi[3];
    size_t n;
} bin;

static void bin_clear(bin *b) {
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = INFINITY;
        b->hi[k] = -INFINITY;
    }
    b->n = 0;
}

static void bin_grow(bin *b, const float lo[3], const float hi[3], size_t n) {
    for (int k = 0; k < 3; ++k) {
        b->lo[k] = fminf(b->lo[k], lo[k]);
        b->hi[k] = fmaxf(b->hi[k], hi[k]);
    }
    b->n += n;
}

typedef struct builder {
    imp_world *w;
    bref *refs;
    world_poll poll;
    int stopped;
} builder;

/* Bin of centroid c on an axis binned from c0 with `scale` bins per unit. */
static int bin_of(float c, float c0, float scale) {
    int b = (int)((c - c0) * scale);
    return b < 0 ? 0 : b >= IMP_WORLD_BINS ? IMP_WORLD_BINS - 1 : b;
}

/* The SAH split of refs[s, e): 1 with *mid set (s < *mid < e) and the range
 * partitioned, or 0 when no axis has a usable centroid extent. */
static int split_sah(builder *b, size_t s, size_t e, const float clo[3], const float chi[3],
                     size_t *mid) {
    bin bins[3][IMP_WORLD_BINS];
    float scale[3];
    int usable[3], any = 0;
    for (int k = 0; k < 3; ++k) {
        double ext = (double)chi[k] - clo[k];
        usable[k] = ext > 0.0 && isfinite(ext);
        scale[k] = usable[k] ? (float)(IMP_WORLD_BINS / ext) : 0.0f;
        usable[k] = usable[k] && isfinite(scale[k]) && scale[k] > 0.0f;
        any |= usable[k];
        for (int j = 0; j < IMP_WORLD_BINS; ++j)
            bin_clear(&bins[k][j]);
    }
    if (!any) return 0;
    for (size_t i = s; i < e; ++i) {
        const bref *r = &b->refs[i];
        for (int k = 0; k < 3; ++k)
            if (usable[k])
                bin_grow(&bins[k][bin_of(centroid(r, k), clo[k], scale[k])], r->lo, r->hi, 1);
    }
    double best = INFINITY;
    int best_k = -1, best_j = 0;
    for (int k = 0; k < 3; ++k) {
        if (!usable[k]) continue;
        double right_cost[IMP_WORLD_BINS];
        bin acc;
        bin_clear(&acc);
        for (int j = IMP_WORLD_BINS - 1; j > 0; --j) {
            bin_grow(&acc, bins[k][j].lo, bins[k][j].hi, bins[k][j].n);
            right_cost[j] = acc.n ? box_cost(acc.lo, acc.hi, b->w->dim) * (double)acc.n : -1.0;
        }
        bin_clear(&acc);
        for (int j = 1; j < IMP_WORLD_BINS; ++j) { /* boundary before bin j */
            bin_grow(&acc, bins[k][j - 1].lo, bins[k][j - 1].hi, bins[k][j - 1].n);
            if (acc.n == 0 || right_cost[j] < 0.0) continue;
            double cost = box_cost(acc.lo, acc.hi, b->w->dim) * (double)acc.n + right_cost[j];
            if (cost < best) {
                best = cost;
                best_k = k;
                best_j = j;
            }
        }
    }
    if (best_k < 0) return 0;
    size_t i = s, j = e;
    while (i < j) {
        if (bin_of(centroid(&b->refs[i], best_k), clo[best_k], scale[best_k]) < best_j) {
            ++i;
        } else {
            bref t = b->refs[i];
            b->refs[i] = b->refs[--j];
            b->refs[j] = t;
        }
    }
    b->poll.work += 2 * (e - s);
    if (i == s || i == e) return 0;
    *mid = i;
    return 1;
}

typedef struct task {
    size_t s, e;
    int depth;
    size_t parent; /* SIZE_MAX for the root and left children */
} task;

static void build_nodes(builder *b) {
    imp_world *w = b->w;
    task stack[IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    task t = {0, w->n_bvh, 0, SIZE_MAX};
    for (;;) {
        size_t slot = w->n_nodes++;
        world_node *node = &w->nodes[slot];
        if (t.parent != SIZE_MAX) w->nodes[t.parent].index = (uint32_t)slot;
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        float clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = t.s; i < t.e; ++i) {
            const bref *r = &b->refs[i];
            for (int k = 0; k < 3; ++k) {
                lo[k] = fminf(lo[k], r->lo[k]);
                hi[k] = fmaxf(hi[k], r->hi[k]);
                float c = centroid(r, k);
                clo[k] = fminf(clo[k], c);
                chi[k] = fmaxf(chi[k], c);
            }
        }
        for (int k = 0; k < 3; ++k) {
            node->lo[k] = lo[k];
            node->hi[k] = hi[k];
        }
        if (world_poll_add(&b->poll, t.e - t.s) != 0) {
            b->stopped = 1;
            return;
        }
        size_t n = t.e - t.s, mid;
        if (n <= IMP_WORLD_LEAF_SIZE) {
            node->index = (uint32_t)t.s;
            node->count = (uint32_t)n;
            if (sp == 0) return;
            t = stack[--sp];
            continue;
        }
        if (t.depth >= IMP_WORLD_SAH_MAX_DEPTH || !split_sah(b, t.s, t.e, clo, chi, &mid))
            mid = t.s + n / 2; /* by count: coincident centroids, or too deep for SAH */
        node->count = 0;
        assert(sp < IMP_WORLD_MAX_DEPTH);
        stack[sp++] = (task){mid, t.e, t.depth + 1, slot};
        t = (task){t.s, mid, t.depth + 1, SIZE_MAX};
    }
}

/* prims[i] = old prims[perm[i]] for every i, in place; perm is used up. */
static void permute(world_prim *prims, uint32_t *perm, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (perm[i] == UINT32_MAX) continue;
        world_prim tmp = prims[i];
        size_t j = i;
        for (;;) {
            size_t k = perm[j];
            perm[j] = UINT32_MAX;
            if (k == i) {
                prims[j] = tmp;
                break;
            }
            prims[j] = prims[k];
            j = k;
        }
    }
}

imp_world_status world_bvh_build(imp_world *w, const imp_stop *stop) {
    w->n_nodes = 0;
    w->nodes = NULL;
    if (w->n_bvh == 0) return IMP_WORLD_OK;
    size_t n = w->n_bvh;
    bref *refs = malloc(n * sizeof *refs);
    w->nodes = malloc((2 * n - 1) * sizeof *w->nodes);
    if (!refs || !w->nodes) {
        free(refs);
        free(w->nodes);
        w->nodes = NULL;
        return IMP_WORLD_NOMEM;
    }
    for (size_t i = 0; i < n; ++i) {
        imp_vec3 lo, hi;
        world_prim_bounds(w, &w->prims[i], &lo, &hi);
        bref *r = &refs[i];
        r->lo[0] = down(lo.x), r->lo[1] = down(lo.y), r->lo[2] = down(lo.z);
        r->hi[0] = up(hi.x), r->hi[1] = up(hi.y), r->hi[2] = up(hi.z);
        r->prim = (uint32_t)i;
    }
    builder b = {w, refs, {stop, 0}, 0};
    build_nodes(&b);
    if (b.stopped) {
        free(refs);
        free(w->nodes);
        w->nodes = NULL;
        w->n_nodes = 0;
        return IMP_WORLD_BUILD_STOPPED;
    }
    /* the permutation, in the references' own memory */
    uint32_t *perm = (uint32_t *)refs;
    for (size_t i = 0; i < n; ++i)
        perm[i] = refs[i].prim;
    permute(w->prims, perm, n);
    free(refs);
    world_node *shrunk = realloc(w->nodes, w->n_nodes * sizeof *shrunk);
    if (shrunk) w->nodes = shrunk;
    return IMP_WORLD_OK;
}

int world_bvh_walk(const imp_world *w, const world_walk *walk) {
    if (w->n_nodes == 0) return 0;
    uint32_t stack[IMP_WORLD_MAX_DEPTH];
    int sp = 0;
    uint32_t at = 0;
    if (!walk->enter(walk->ctx, &w->nodes[0])) return 0;
    for (;;) {
        const world_node *n = &w->nodes[at];
        if (n->count > 0) {
            int rc = walk->leaf(walk->ctx, n->index, n->count);
            if (rc != 0) return rc;
        } else {
            uint32_t l = at + 1, r = n->index;
            int el = walk->enter(walk->ctx, &w->nodes[l]),
                er = walk->enter(walk->ctx, &w->nodes[r]);
            if (el && er) {
                int right_first =
                    walk->first_right && walk->first_right(walk->ctx, &w->nodes[l], &w->nodes[r]);
                stack[sp++] = right_first ? l : r;
                at = right_first ? r : l;
                continue;
            }
            if (el || er) {
                at = el ? l : r;
                continue;
            }
        }
        do { /* a bound that shrank since the push may now exclude the node */
            if (sp == 0) return 0;
            at = stack[--sp];
        } while (!walk->enter(walk->ctx, &w->nodes[at]));
    }
}
