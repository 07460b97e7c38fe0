/*
 * broadphase_grid.c - hierarchical spatial hash.
 *
 * DESIGN
 * What: the overlapping box pairs of a scene from uniform grids, one per
 * size class of box.
 *
 * How: the base cell size h0 is the 90th percentile of the boxes' largest
 * extents rounded up to a power of two (read off a histogram of binary
 * exponents, so no sort), and no smaller than the scene's extent / 2^32 so
 * cell coordinates fit comfortably in 64 bits. Level k has cells of
 * h0 * 4^k, and a box lives on the lowest level whose cell is at least its
 * extent, so it covers at most 2 cells per axis there (3 if rounding puts
 * an end just across a boundary): never more than 27 entries however the
 * sizes are spread. The "large" boxes of a plain grid are thus the upper
 * levels, each again a grid with boxes about its cell size (Mirtich,
 * "Efficient algorithms for two-phase collision detection", 1997;
 * Eitz & Lixu, "Hierarchical spatial hashing for real-time collision
 * detection", 2007).
 * Every (level, cell) a box covers becomes an entry (hash key, box); the
 * key is a 64-bit mix of level and integer cell coordinates cut to about
 * log2(entries) + 9 bits, and the entries are radix-sorted by it (stable,
 * so each run of equal keys lists its boxes in index order). Pairs of the
 * same level come from the runs: two boxes of a run are reported only if
 * the run's key is that of the cell holding the lower corner of their
 * intersection (max of their lower cells, per axis), which is covered by
 * both, so each pair is reported from exactly one cell. A box meets larger
 * boxes by looking up the cells it covers on each higher, non-empty level
 * whose bounds it touches (an open-addressing table from key to run) and
 * reporting a pair only from the cell that holds the intersection's lower
 * corner at that level.
 * Keys may collide (deliberately, with cut keys): a run may then mix cells
 * and even hold a box twice. Both rules above compare the actual corner
 * cell with the run (by key) or with the looked-up cell (by coordinates),
 * and repeated boxes in a run are adjacent and skipped, so collisions cost
 * tests but never change the answer.
 * Runs list boxes in hash order, so their boxes are copied out (gathered)
 * before the run's tests: the loads are independent and overlap, where
 * testing in place took a cache miss per test (1M boxes: -10 to -25%).
 * Runs of the upper levels are gathered once, up front, for all the
 * smaller boxes that look them up (1M boxes of log-uniform sizes: -45%).
 *
 * Why this way: a single grid sized by the largest box degenerates to all
 * boxes in a few cells when sizes span 1e4; sized by the typical box it
 * gives huge boxes millions of cells. Levels bound both, and a box only
 * pays for levels that exist and that it touches (a scene of two sizes has
 * two levels, however far apart the sizes). Hashing instead of a dense
 * array keeps memory proportional to the boxes for clustered scenes whose
 * bounds hold billions of empty cells. Counting, filling, sorting, run
 * scans and lookups all split over the runner.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "broadphase_impl.h"

/* Fraction of boxes (by largest extent) that fit the base cell: a robust
 * "typical size" that a tail of huge boxes cannot move. The boxes above it
 * go to upper levels, which every smaller box visits. Measured at 1M boxes
 * (ms, 3D log-uniform sizes over [1, 100] / 2D over [1, 1e4] / 3D with 1%
 * of boxes 1e4x bigger, half the small ones in 8 tight patches):
 * 0.5: 1888 / 1357 / 722; 0.9: 1162 / 466 / 720; 0.99: 727 / 375 / 732;
 * 0.995: 722 / 417 / 69519. The last is the failure this guards against:
 * once the percentile reaches the big boxes' size, the patches of small
 * ones share a few huge cells and their tests go quadratic. 0.9 keeps a
 * wide margin (up to 10% of boxes may be huge) for a third more time on
 * widely spread sizes, robustness before speed. */
#define GRID_PERCENTILE 0.9

/* Cell size ratio between levels (a power of two, so sizes stay exact):
 * 4 keeps levels few (7 for sizes spanning 1e4) while a box still fills
 * at least a quarter of its cell on each axis. */
#define GRID_LEVEL_RATIO 4.0

/* Smallest base cell as a fraction of the scene's largest extent: cell
 * coordinates stay below 2^32, far inside int64, and point-like boxes
 * (zero extent) still get distinct cells unless within 2^-32 of the scene
 * of each other. */
#define GRID_MIN_CELL_FRACTION 0x1p-32

/* Levels (count): extents are at most the scene's extent, at most 2^32 base
 * cells, so at most log4(2^32) = 16 levels above the base ever fill. */
#define GRID_MAX_LEVELS 18

/* Key bits beyond log2(entries) (bits): about one cell in 2^9 shares its
 * key with another, costing a few extra tests; keys of up to 2^24 entries
 * still fit 33 bits, three radix passes. */
#define GRID_KEY_SPARE_BITS 9
#define GRID_KEY_MIN_BITS 33

/* Work per chunk, at least: boxes for counting, filling and lookups; runs
 * for the pair scan. */
#define GRID_MIN_CHUNK 1024

/* Binary exponents of doubles span [-1073, 1024]; the histogram offset. */
#define GRID_EXP_OFFSET 1100
#define GRID_EXP_BUCKETS 2200

typedef struct grid {
    const imp_bp_scene *sc;
    int dim;
    double origin[3];
    double h[GRID_MAX_LEVELS], inv_h[GRID_MAX_LEVELS];
    int top;                         /* highest non-empty level */
    bool used[GRID_MAX_LEVELS];      /* level holds boxes */
    imp_aabb bound[GRID_MAX_LEVELS]; /* union of the level's boxes */
    unsigned bits;                   /* key width */
    uint8_t *level;                  /* per box */
    size_t *off;                     /* n + 1: entries of box i are [off[i], off[i+1]) */
    uint64_t *key;                   /* entries */
    uint32_t *id;
    size_t nent;
    size_t *run; /* nrun + 1 run starts */
    size_t nrun;
    /* Runs holding upper-level boxes, the only ones looked up: run index,
     * and their distinct boxes gathered at ubox[ustart[u], ustart[u+1]). */
    size_t nurun;
    size_t *urun, *ustart;
    struct gbox *ubox;
    uint64_t *tkey; /* lookup table: run key -> u + 1 (0 empty) */
    size_t *tval;
    size_t tmask;
} grid;

typedef struct cells {
    int64_t lo[3], hi[3];
} cells;

/* Cell index along one axis; x >= o, and monotone in x, which is all the
 * corner rule needs. */
static inline int64_t cell1(double x, double o, double inv) { return (int64_t)((x - o) * inv); }

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

static inline cells cells_of(const grid *g, const imp_aabb *b, int lvl) {
    double inv = g->inv_h[lvl];
    cells c;
    c.lo[0] = cell1(b->lo.x, g->origin[0], inv);
    c.hi[0] = cell1(b->hi.x, g->origin[0], inv);
    c.lo[1] = cell1(b->lo.y, g->origin[1], inv);
    c.hi[1] = cell1(b->hi.y, g->origin[1], inv);
    if (g->dim == 3) {
        c.lo[2] = cell1(b->lo.z, g->origin[2], inv);
        c.hi[2] = cell1(b->hi.z, g->origin[2], inv);
    } else {
        c.lo[2] = c.hi[2] = 0;
    }
    return c;
}

static inline uint64_t cell_key(const grid *g, int lvl, int64_t x, int64_t y, int64_t z) {
    uint64_t h = (uint64_t)lvl * 0x9E3779B97F4A7C15u;
    h = (h ^ (uint64_t)x) * 0xBF58476D1CE4E5B9u;
    h ^= h >> 31;
    h = (h ^ (uint64_t)y) * 0x94D049BB133111EBu;
    h ^= h >> 29;
    h = (h ^ (uint64_t)z) * 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    return h >> (64 - g->bits);
}

static double extent_of(const imp_aabb *b, int dim) {
    double e = imp_bp_max(b->hi.x - b->lo.x, b->hi.y - b->lo.y);
    return dim == 3 ? imp_bp_max(e, b->hi.z - b->lo.z) : e;
}

static int level_of(const grid *g, double e) {
    int k = 0;
    while (e > g->h[k] && k < GRID_MAX_LEVELS - 1)
        ++k;
    return k;
}

/* ---- setup ------------------------------------------------------------------------------- */

/* Origin, cell sizes. Returns false when the scene's extent is not finite
 * (coordinates near the double range), which the grid cannot index, or
 * the histogram cannot be allocated; the caller then uses the BVH. */
static bool choose_cells(grid *g) {
    const imp_bp_scene *sc = g->sc;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    size_t zeros = 0;
    uint32_t *hist = calloc(GRID_EXP_BUCKETS, sizeof *hist);
    if (!hist) return false;
    for (size_t i = 0; i < sc->n; ++i) {
        const imp_aabb *b = &sc->box[i];
        lo[0] = imp_bp_min(lo[0], b->lo.x);
        lo[1] = imp_bp_min(lo[1], b->lo.y);
        lo[2] = imp_bp_min(lo[2], b->lo.z);
        hi[0] = imp_bp_max(hi[0], b->hi.x);
        hi[1] = imp_bp_max(hi[1], b->hi.y);
        hi[2] = imp_bp_max(hi[2], b->hi.z);
        double e = extent_of(b, g->dim);
        if (e > 0.0) {
            int ex;
            frexp(e, &ex); /* e < 2^ex */
            hist[ex + GRID_EXP_OFFSET]++;
        } else {
            zeros++;
        }
    }
    if (g->dim == 2) lo[2] = hi[2] = 0.0;
    double span = 0.0;
    for (int k = 0; k < g->dim; ++k) {
        g->origin[k] = lo[k];
        span = imp_bp_max(span, hi[k] - lo[k]);
    }
    g->origin[2] = g->dim == 3 ? lo[2] : 0.0;
    if (!isfinite(span)) {
        free(hist);
        return false;
    }
    size_t rank = (size_t)ceil(GRID_PERCENTILE * (double)sc->n), seen = zeros;
    double h0 = 0.0;
    for (int b = 0; b < GRID_EXP_BUCKETS && seen < rank; ++b) {
        seen += hist[b];
        if (seen >= rank) h0 = ldexp(1.0, b - GRID_EXP_OFFSET);
    }
    free(hist);
    h0 = imp_bp_max(h0, span * GRID_MIN_CELL_FRACTION);
    if (!(h0 > 0.0)) h0 = 1.0; /* every box is the same point */
    for (int k = 0; k < GRID_MAX_LEVELS; ++k) {
        g->h[k] = k == 0 ? h0 : g->h[k - 1] * GRID_LEVEL_RATIO;
        g->inv_h[k] = 1.0 / g->h[k];
    }
    return true;
}

static void count_range(void *ctx, size_t begin, size_t end) {
    grid *g = ctx;
    for (size_t i = begin; i < end; ++i) {
        const imp_aabb *b = &g->sc->box[i];
        int lvl = level_of(g, extent_of(b, g->dim));
        g->level[i] = (uint8_t)lvl;
        cells c = cells_of(g, b, lvl);
        g->off[i + 1] =
            (size_t)((c.hi[0] - c.lo[0] + 1) * (c.hi[1] - c.lo[1] + 1) * (c.hi[2] - c.lo[2] + 1));
    }
}

static void fill_range(void *ctx, size_t begin, size_t end) {
    grid *g = ctx;
    for (size_t i = begin; i < end; ++i) {
        int lvl = g->level[i];
        cells c = cells_of(g, &g->sc->box[i], lvl);
        size_t at = g->off[i];
        for (int64_t z = c.lo[2]; z <= c.hi[2]; ++z)
            for (int64_t y = c.lo[1]; y <= c.hi[1]; ++y)
                for (int64_t x = c.lo[0]; x <= c.hi[0]; ++x) {
                    g->key[at] = cell_key(g, lvl, x, y, z);
                    g->id[at++] = (uint32_t)i;
                }
        assert(at == g->off[i + 1]);
    }
}

/* A run's box, gathered: the runs visit boxes in hash order, so reading
 * them in place costs a cache miss per test; gathered first (independent
 * loads that overlap), the run's k^2 / 2 tests read contiguous memory.
 * Runs of upper levels are gathered once for all their visitors. */
typedef struct gbox {
    double lo[3], hi[3]; /* z = 0 in 2D */
    uint32_t id;
    uint8_t level, is_static;
} gbox;

/* Runs up to this long are gathered on the stack (boxes; 7 KiB). */
#define GRID_RUN_STACK 128

static inline bool gbox_meet(const gbox *a, const gbox *b) {
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] &&
           b->lo[1] <= a->hi[1] && a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

static void gather(const grid *g, uint32_t i, gbox *q) {
    imp_bp_box_arrays(g->sc, i, q->lo, q->hi);
    q->id = i;
    q->level = g->level[i];
    q->is_static = imp_bp_is_static(g->sc, i);
}

/* Gathers the distinct boxes of entries [s, e) (sorted by id within the
 * run, so repeats are adjacent) into q; returns how many. */
static size_t gather_run(const grid *g, size_t s, size_t e, gbox *q) {
    size_t m = 0;
    for (size_t a = s; a < e; ++a)
        if (a == s || g->id[a - 1] != g->id[a]) gather(g, g->id[a], &q[m++]);
    return m;
}

static size_t distinct_ids(const grid *g, size_t s, size_t e) {
    size_t m = 0;
    for (size_t a = s; a < e; ++a)
        m += a == s || g->id[a - 1] != g->id[a];
    return m;
}

static void gather_upper(void *ctx, size_t begin, size_t end) {
    grid *g = ctx;
    for (size_t u = begin; u < end; ++u) {
        size_t r = g->urun[u];
        gather_run(g, g->run[r], g->run[r + 1], g->ubox + g->ustart[u]);
    }
}

/* Run starts over the sorted entries, and the table of runs that hold an
 * upper-level box (only those are ever looked up). */
static bool index_runs(grid *g) {
    size_t nrun = g->nent ? 1 : 0;
    for (size_t i = 1; i < g->nent; ++i)
        nrun += g->key[i] != g->key[i - 1];
    g->run = malloc((nrun + 1) * sizeof *g->run);
    if (!g->run) return false;
    size_t r = 0;
    for (size_t i = 0; i < g->nent; ++i)
        if (i == 0 || g->key[i] != g->key[i - 1]) g->run[r++] = i;
    g->run[r] = g->nent;
    g->nrun = nrun;
    if (g->top == 0) return true;

    size_t upper = 0;
    for (size_t ri = 0; ri < nrun; ++ri)
        for (size_t i = g->run[ri]; i < g->run[ri + 1]; ++i)
            if (g->level[g->id[i]] > 0) {
                upper++;
                break;
            }
    size_t cap = 16;
    while (cap < 2 * upper)
        cap *= 2;
    g->urun = malloc((upper ? upper : 1) * sizeof *g->urun);
    g->ustart = malloc((upper + 1) * sizeof *g->ustart);
    g->tkey = malloc(cap * sizeof *g->tkey);
    g->tval = calloc(cap, sizeof *g->tval);
    if (!g->urun || !g->ustart || !g->tkey || !g->tval) return false;
    g->tmask = cap - 1;
    size_t u = 0, boxes = 0;
    for (size_t ri = 0; ri < nrun; ++ri)
        for (size_t i = g->run[ri]; i < g->run[ri + 1]; ++i)
            if (g->level[g->id[i]] > 0) {
                g->urun[u] = ri;
                g->ustart[u] = boxes;
                boxes += distinct_ids(g, g->run[ri], g->run[ri + 1]);
                uint64_t k = g->key[i];
                size_t t = (size_t)k & g->tmask;
                while (g->tval[t])
                    t = (t + 1) & g->tmask;
                g->tkey[t] = k;
                g->tval[t] = ++u;
                break;
            }
    g->ustart[u] = boxes;
    g->nurun = u;
    g->ubox = malloc((boxes ? boxes : 1) * sizeof *g->ubox);
    if (!g->ubox) return false;
    imp_parallel_for(g->sc->par, u, GRID_MIN_CHUNK, gather_upper, g);
    return true;
}

/* The upper run with key k, or SIZE_MAX. */
static inline size_t lookup(const grid *g, uint64_t k) {
    for (size_t t = (size_t)k & g->tmask; g->tval[t]; t = (t + 1) & g->tmask)
        if (g->tkey[t] == k) return g->tval[t] - 1;
    return SIZE_MAX;
}

/* ---- pairs ------------------------------------------------------------------------------- */

/* Same-level pairs from runs [begin, end). */
static void run_chunk(void *ctx, imp_bp_vec *out, size_t begin, size_t end) {
    const grid *g = ctx;
    gbox local[GRID_RUN_STACK], *heap = NULL;
    size_t heap_cap = 0;
    for (size_t r = begin; r < end; ++r) {
        size_t s = g->run[r], e = g->run[r + 1];
        if (e - s < 2) continue;
        gbox *buf = local;
        if (e - s > GRID_RUN_STACK) {
            if (e - s > heap_cap) {
                free(heap);
                heap_cap = e - s;
                heap = malloc(heap_cap * sizeof *heap);
                if (!heap) {
                    imp_bp_fail(out);
                    return;
                }
            }
            buf = heap;
        }
        size_t m = gather_run(g, s, e, buf);
        uint64_t k = g->key[s];
        for (size_t a = 0; a < m; ++a) {
            const gbox *A = &buf[a];
            int lvl = A->level;
            double inv = g->inv_h[lvl];
            for (size_t b = a + 1; b < m; ++b) {
                const gbox *B = &buf[b];
                if (!gbox_meet(A, B) || B->level != lvl || (A->is_static && B->is_static)) continue;
                /* report from the cell of the intersection's lower corner only */
                int64_t c[3];
                for (int ax = 0; ax < 3; ++ax)
                    c[ax] = cell1(imp_bp_max(A->lo[ax], B->lo[ax]), g->origin[ax], inv);
                if (cell_key(g, lvl, c[0], c[1], c[2]) != k) continue;
                if (!imp_bp_emit(out, A->id, B->id)) {
                    free(heap);
                    return;
                }
            }
        }
    }
    free(heap);
}

/* Pairs of boxes [begin, end) with boxes of higher levels. */
static void up_chunk(void *ctx, imp_bp_vec *out, size_t begin, size_t end) {
    const grid *g = ctx;
    const imp_bp_scene *sc = g->sc;
    for (size_t i = begin; i < end; ++i) {
        int li = g->level[i];
        const imp_aabb *A = &sc->box[i];
        bool sa = imp_bp_is_static(sc, i);
        for (int lj = li + 1; lj <= g->top; ++lj) {
            if (!g->used[lj] || !imp_bp_overlap(A, &g->bound[lj], sc->dim)) continue;
            cells c = cells_of(g, A, lj);
            for (int64_t z = c.lo[2]; z <= c.hi[2]; ++z)
                for (int64_t y = c.lo[1]; y <= c.hi[1]; ++y)
                    for (int64_t x = c.lo[0]; x <= c.hi[0]; ++x) {
                        size_t u = lookup(g, cell_key(g, lj, x, y, z));
                        if (u == SIZE_MAX) continue;
                        for (size_t t = g->ustart[u]; t < g->ustart[u + 1]; ++t) {
                            const gbox *B = &g->ubox[t];
                            if (B->level != lj || B->lo[0] > A->hi.x || A->lo.x > B->hi[0] ||
                                B->lo[1] > A->hi.y || A->lo.y > B->hi[1] ||
                                (sc->dim == 3 && (B->lo[2] > A->hi.z || A->lo.z > B->hi[2])) ||
                                (sa && B->is_static))
                                continue;
                            /* report from the cell of the intersection's lower corner only */
                            double inv = g->inv_h[lj];
                            if (imax(cell1(B->lo[0], g->origin[0], inv), c.lo[0]) != x ||
                                imax(cell1(B->lo[1], g->origin[1], inv), c.lo[1]) != y ||
                                imax(cell1(B->lo[2], g->origin[2], inv), c.lo[2]) != z)
                                continue;
                            uint32_t j = B->id;
                            uint32_t a = (uint32_t)i;
                            if (!imp_bp_emit(out, a < j ? a : j, a < j ? j : a)) return;
                        }
                    }
        }
    }
}

static unsigned bit_width(uint64_t v) {
    unsigned b = 0;
    for (; v; v >>= 1)
        ++b;
    return b;
}

int imp_bp_grid(const imp_bp_scene *sc, imp_bp_sink *sink) {
    size_t n = sc->n;
    grid g = {.sc = sc, .dim = sc->dim};
    if (!choose_cells(&g)) return imp_bp_bvh(sc, sink);
    int rc = -1;
    g.level = malloc(n * sizeof *g.level);
    g.off = malloc((n + 1) * sizeof *g.off);
    if (!g.level || !g.off) goto done;
    g.off[0] = 0;
    imp_parallel_for(sc->par, n, GRID_MIN_CHUNK, count_range, &g);
    for (size_t i = 0; i < n; ++i) {
        g.off[i + 1] += g.off[i];
        int lvl = g.level[i];
        if (!g.used[lvl]) {
            g.used[lvl] = true;
            g.bound[lvl] = sc->box[i];
        } else {
            imp_aabb *u = &g.bound[lvl];
            const imp_aabb *b = &sc->box[i];
            u->lo = imp_v3(imp_bp_min(u->lo.x, b->lo.x), imp_bp_min(u->lo.y, b->lo.y),
                           imp_bp_min(u->lo.z, b->lo.z));
            u->hi = imp_v3(imp_bp_max(u->hi.x, b->hi.x), imp_bp_max(u->hi.y, b->hi.y),
                           imp_bp_max(u->hi.z, b->hi.z));
        }
        if (lvl > g.top) g.top = lvl;
    }
    g.nent = g.off[n];
    unsigned bits = bit_width(g.nent) + GRID_KEY_SPARE_BITS;
    g.bits = bits < GRID_KEY_MIN_BITS ? GRID_KEY_MIN_BITS : bits > 64 ? 64 : bits;
    g.key = malloc(g.nent * sizeof *g.key);
    g.id = malloc(g.nent * sizeof *g.id);
    if (!g.key || !g.id) goto done;
    imp_parallel_for(sc->par, n, GRID_MIN_CHUNK, fill_range, &g);
    if (imp_bp_radix_sort(g.key, g.id, g.nent, g.bits, sc->par) != 0 || !index_runs(&g)) goto done;
    if (imp_bp_run(sink, sc->par, g.nrun, GRID_MIN_CHUNK, run_chunk, &g) != 0) goto done;
    if (g.top > 0 && imp_bp_run(sink, sc->par, n, GRID_MIN_CHUNK, up_chunk, &g) != 0) goto done;
    rc = 0;
done:
    free(g.level);
    free(g.off);
    free(g.key);
    free(g.id);
    free(g.run);
    free(g.urun);
    free(g.ustart);
    free(g.ubox);
    free(g.tkey);
    free(g.tval);
    return rc;
}
