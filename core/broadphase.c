/*
 * broadphase.c - the broadphase entry points, the brute-force reference,
 * and what every algorithm shares: chunked output, the pair budget, the
 * final sort.
 *
 * DESIGN
 * What: imp_broadphase_pairs checks the input, resolves `auto`, runs one
 * algorithm (brute here; grid, sap and bvh in their own files) and turns
 * what it found into the sorted pair array of broadphase.h.
 *
 * How: an algorithm splits its work into chunks fixed by n alone (one chunk
 * when there is no runner) and each chunk appends pair keys
 * (a << shift | b) to its own vector; parallel runs therefore share nothing
 * but an atomic count of stored pairs, which lets every chunk stop as soon
 * as the scene certainly has more than max_pairs pairs (an all-overlapping
 * scene of a million boxes would otherwise try to store 5e11 pairs). The
 * vectors are then concatenated and sorted by an LSD radix sort over just
 * the 2 * shift bits the keys use (Knuth, TAOCP vol. 3, 5.2.5), skipped
 * when the keys already come in order, as brute's do without a runner.
 * Because the final sort fixes the order, what a chunk finds and in which
 * order chunks run cannot change the answer: serial and parallel runs, and
 * every kind, return the same array.
 *
 * Why this way: sorting at the end, rather than asking each algorithm for
 * ordered output, lets each enumerate pairs in its natural order (cells,
 * sweep order, tree order) and keeps the identical-across-kinds promise in
 * one place. Failure is deterministic: the stop flag is only raised when
 * the announced count already exceeds max_pairs (or memory ran out), and
 * otherwise the full count decides.
 */
#define _DEFAULT_SOURCE /* madvise, for imp_bp_prefault */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "broadphase_impl.h"

/* Chunks per algorithm run when a runner is given (count). Enough that two
 * to a few dozen threads each get many chunks, so uneven chunks (brute's
 * rows shrink, grid cells vary) still balance; few enough that the per-chunk
 * vectors and their merge cost nothing next to the work. */
#define IMP_BP_MAX_CHUNKS 128

/* First capacity of a chunk's pair vector (pairs). Small: most chunks of a
 * sparse scene find few pairs, and the vector doubles from here. */
#define IMP_BP_VEC_MIN_CAP 256

/* `auto` takes brute force below this many boxes and sweep and prune
 * below the second (counts): see imp_broadphase_choose for the
 * measurements. */
#define IMP_BP_AUTO_BRUTE_MAX 16
#define IMP_BP_AUTO_SAP_MAX 1024

/* Brute-force rows per chunk, at least (count): a row of n tests. */
#define IMP_BP_BRUTE_MIN_ROWS 16

/* Arrays shorter than this are insertion-sorted (count): on random keys
 * insertion sort and the 8-bit radix sort measured even near 128. */
#define IMP_BP_RADIX_MIN 128

/* Radix digit width (bits): 2^11 counters (16 KiB) stay in L1, and 64-bit
 * keys need at most 6 passes. Arrays shorter than IMP_BP_RADIX_SMALL use
 * 8-bit digits: clearing and summing 2048 counters per pass would cost
 * more than moving the keys. */
#define IMP_BP_RADIX_BITS 11
#define IMP_BP_RADIX_SMALL_BITS 8
#define IMP_BP_RADIX_SMALL 4096

/* Parallel radix sort: at most this many chunks (count), each of at least
 * IMP_BP_RADIX_PAR_MIN keys; below that a pass over the keys takes less
 * than handing it to threads, and every chunk's 16 KiB histogram has to be
 * mostly filled to pay for its offsets. */
#define IMP_BP_RADIX_CHUNKS 16
#define IMP_BP_RADIX_PAR_MIN 65536

/* ---- fresh memory -----------------------------------------------------------------------
 *
 * A page first touched by a store costs a page fault, each on its own; the arrays of a large
 * scene are hundreds of megabytes of fresh pages (a million clustered 3D spheres: about
 * 270,000 faults a solve, a sixth of its processor time in the kernel). One
 * MADV_POPULATE_WRITE call maps a range's pages at about half the time per page (the 2-core
 * build machine, 400 MB: 125 ms against 230 ms by stores), so the parallel passes that
 * write a large array whole ask for their part of it first. Below PREFAULT_MIN the call
 * costs more than it saves; a kernel without the advice (before Linux 5.14) answers EINVAL
 * and the stores fault as before. */

/* Fewest bytes worth a populate call. */
#define PREFAULT_MIN ((size_t)1 << 16)
/* The page size the range is rounded in to (a larger one makes the call fail: advice lost). */
#define PREFAULT_PAGE ((uintptr_t)4096)

void imp_bp_prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    if (bytes < PREFAULT_MIN) return;
    uintptr_t a = ((uintptr_t)p + PREFAULT_PAGE - 1) & ~(PREFAULT_PAGE - 1);
    uintptr_t e = ((uintptr_t)p + bytes) & ~(PREFAULT_PAGE - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* ---- pair vectors ------------------------------------------------------------------------ */

static void announce(imp_bp_vec *v) {
    imp_bp_sink *s = v->sink;
    size_t fresh = v->n - v->announced;
    v->announced = v->n;
    size_t total = atomic_fetch_add_explicit(&s->announced, fresh, memory_order_relaxed) + fresh;
    if (total > s->max_pairs) atomic_store_explicit(&s->stop, true, memory_order_relaxed);
}

bool imp_bp_vec_grow(imp_bp_vec *v) {
    announce(v);
    if (imp_bp_stopped(v->sink)) return false;
    size_t cap = v->cap ? 2 * v->cap : IMP_BP_VEC_MIN_CAP;
    uint64_t *k = cap <= SIZE_MAX / sizeof *k ? realloc(v->key, cap * sizeof *k) : NULL;
    if (!k) {
        imp_bp_fail(v);
        return false;
    }
    v->key = k;
    v->cap = cap;
    return true;
}

typedef struct run_ctx {
    imp_bp_vec *vecs;
    size_t n, chunk;
    imp_bp_chunk_fn fn;
    void *ctx;
    imp_bp_sink *sink;
} run_ctx;

static void run_chunks(void *p, size_t cb, size_t ce) {
    run_ctx *r = p;
    for (size_t c = cb; c < ce; ++c) {
        if (imp_bp_stopped(r->sink)) return;
        size_t b = c * r->chunk;
        size_t e = r->n - b > r->chunk ? b + r->chunk : r->n;
        r->fn(r->ctx, &r->vecs[c], b, e);
        announce(&r->vecs[c]);
    }
}

int imp_bp_run(imp_bp_sink *sink, const imp_parallel *par, size_t n, size_t min_chunk,
               imp_bp_chunk_fn fn, void *ctx) {
    if (n == 0 || imp_bp_stopped(sink)) return 0;
    size_t chunk = n;
    if (par && par->run) {
        chunk = (n + IMP_BP_MAX_CHUNKS - 1) / IMP_BP_MAX_CHUNKS;
        if (chunk < min_chunk) chunk = min_chunk;
    }
    size_t nchunks = (n + chunk - 1) / chunk;
    if (sink->nvecs + nchunks > sink->capvecs) {
        size_t cap = 2 * (sink->nvecs + nchunks);
        imp_bp_vec *v = realloc(sink->vecs, cap * sizeof *v);
        if (!v) return -1;
        sink->vecs = v;
        sink->capvecs = cap;
    }
    imp_bp_vec *vecs = sink->vecs + sink->nvecs;
    for (size_t c = 0; c < nchunks; ++c)
        vecs[c] = (imp_bp_vec){NULL, 0, 0, 0, sink->shift, sink};
    sink->nvecs += nchunks;
    run_ctx r = {vecs, n, chunk, fn, ctx, sink};
    imp_parallel_for(par, nchunks, 1, run_chunks, &r);
    return 0;
}

static void sink_free(imp_bp_sink *s) {
    for (size_t i = 0; i < s->nvecs; ++i)
        free(s->vecs[i].key);
    free(s->vecs);
    s->vecs = NULL;
    s->nvecs = s->capvecs = 0;
}

/* ---- radix sort -------------------------------------------------------------------------- */

static void insertion_sort(uint64_t *key, uint32_t *val, size_t m) {
    for (size_t i = 1; i < m; ++i) {
        uint64_t k = key[i];
        uint32_t v = val ? val[i] : 0;
        size_t j = i;
        for (; j > 0 && key[j - 1] > k; --j) {
            key[j] = key[j - 1];
            if (val) val[j] = val[j - 1];
        }
        key[j] = k;
        if (val) val[j] = v;
    }
}

/* One pass of the parallel sort: chunk c of the source counts its digits
 * into hist[c], then scatters to the offsets the counts give it. Chunks
 * are contiguous and take their offsets in order, so the pass is stable
 * exactly like the serial one. */
typedef struct radix_pass {
    uint64_t *sk;
    uint32_t *sv;
    uint64_t *dk;
    uint32_t *dv;
    size_t m, chunk;
    unsigned shift;
    unsigned digit; /* bits per pass */
    size_t *hist;   /* chunks x 2^digit */
} radix_pass;

static void radix_count(void *ctx, size_t cb, size_t ce) {
    radix_pass *r = ctx;
    const size_t size = (size_t)1 << r->digit;
    const uint64_t mask = size - 1;
    for (size_t c = cb; c < ce; ++c) {
        size_t *h = r->hist + c * size;
        memset(h, 0, size * sizeof *h);
        size_t b = c * r->chunk, e = r->m - b > r->chunk ? b + r->chunk : r->m;
        if (r->shift == 0) { /* the scratch's part of this chunk, before any scatter */
            imp_bp_prefault(r->dk + b, (e - b) * sizeof *r->dk);
            if (r->dv) imp_bp_prefault(r->dv + b, (e - b) * sizeof *r->dv);
        }
        for (size_t i = b; i < e; ++i)
            h[(r->sk[i] >> r->shift) & mask]++;
    }
}

static void radix_scatter(void *ctx, size_t cb, size_t ce) {
    radix_pass *r = ctx;
    const size_t size = (size_t)1 << r->digit;
    const uint64_t mask = size - 1;
    for (size_t c = cb; c < ce; ++c) {
        size_t *h = r->hist + c * size;
        size_t b = c * r->chunk, e = r->m - b > r->chunk ? b + r->chunk : r->m;
        for (size_t i = b; i < e; ++i) {
            size_t at = h[(r->sk[i] >> r->shift) & mask]++;
            r->dk[at] = r->sk[i];
            if (r->sv) r->dv[at] = r->sv[i];
        }
    }
}

int imp_bp_radix_sort(uint64_t *key, uint32_t *val, size_t m, unsigned bits,
                      const imp_parallel *par) {
    assert(bits <= 64);
    if (m < IMP_BP_RADIX_MIN) {
        insertion_sort(key, val, m);
        return 0;
    }
    unsigned digit = m < IMP_BP_RADIX_SMALL ? IMP_BP_RADIX_SMALL_BITS : IMP_BP_RADIX_BITS;
    unsigned passes = (bits + digit - 1) / digit;
    const size_t size = (size_t)1 << digit;
    size_t chunks = 1;
    if (par && par->run) {
        chunks = m / IMP_BP_RADIX_PAR_MIN;
        chunks = chunks < 1 ? 1 : chunks > IMP_BP_RADIX_CHUNKS ? IMP_BP_RADIX_CHUNKS : chunks;
    }
    size_t *hist = malloc(chunks * size * sizeof *hist);
    uint64_t *tk = malloc(m * sizeof *tk);
    uint32_t *tv = val ? malloc(m * sizeof *tv) : NULL;
    if (!hist || !tk || (val && !tv)) {
        free(hist);
        free(tk);
        free(tv);
        return -1;
    }
    radix_pass r = {key, val, tk, tv, m, (m + chunks - 1) / chunks, 0, digit, hist};
    for (unsigned p = 0; p < passes; ++p) {
        r.shift = p * digit;
        imp_parallel_for(par, chunks, 1, radix_count, &r);
        /* Offsets, digit-major then chunk; a digit that every key has would
         * not move anything, and the pass is skipped. */
        size_t d0 = (r.sk[0] >> r.shift) & (size - 1), in_d0 = 0;
        for (size_t c = 0; c < chunks; ++c)
            in_d0 += hist[c * size + d0];
        if (in_d0 == m) continue;
        size_t sum = 0;
        for (size_t d = 0; d < size; ++d)
            for (size_t c = 0; c < chunks; ++c) {
                size_t *h = &hist[c * size + d];
                size_t cnt = *h;
                *h = sum;
                sum += cnt;
            }
        imp_parallel_for(par, chunks, 1, radix_scatter, &r);
        uint64_t *k = r.sk;
        uint32_t *v = r.sv;
        r.sk = r.dk;
        r.sv = r.dv;
        r.dk = k;
        r.dv = v;
    }
    if (r.sk != key) {
        memcpy(key, r.sk, m * sizeof *key);
        if (val) memcpy(val, r.sv, m * sizeof *val);
    }
    free(hist);
    free(tk);
    free(tv);
    return 0;
}

/* ---- brute force ------------------------------------------------------------------------- */

static void brute_chunk(void *ctx, imp_bp_vec *out, size_t begin, size_t end) {
    const imp_bp_scene *sc = ctx;
    for (size_t a = begin; a < end; ++a) {
        const imp_aabb *A = &sc->box[a];
        bool sa = imp_bp_is_static(sc, a);
        for (size_t b = a + 1; b < sc->n; ++b) {
            if (!imp_bp_overlap(A, &sc->box[b], sc->dim) || (sa && sc->is_static[b])) continue;
            if (!imp_bp_emit(out, (uint32_t)a, (uint32_t)b)) return;
        }
    }
}

int imp_bp_brute(const imp_bp_scene *sc, imp_bp_sink *sink) {
    return imp_bp_run(sink, sc->par, sc->n, IMP_BP_BRUTE_MIN_ROWS, brute_chunk, (void *)sc);
}

/* ---- entry points ------------------------------------------------------------------------ */

const char *imp_broadphase_name(imp_broadphase_kind kind) {
    switch (kind) {
    case IMP_BROAD_AUTO: return "auto";
    case IMP_BROAD_BRUTE: return "brute";
    case IMP_BROAD_GRID: return "grid";
    case IMP_BROAD_SAP: return "sap";
    case IMP_BROAD_BVH: return "bvh";
    }
    return "unknown";
}

/*
 * The rule: brute force below IMP_BP_AUTO_BRUTE_MAX boxes, sweep and prune
 * below IMP_BP_AUTO_SAP_MAX, the hierarchical grid above. It looks at n
 * alone. Box statistics were tried: in 3D with widely spread sizes the BVH
 * beat the grid by 10-20% at about two overlaps per box but lost by
 * 15-30% at one (table, log100 and logsize rows), so no size rule picked
 * the faster kind reliably, and everywhere else the grid won outright.
 *
 * Measured with tests/bench/bench_broadphase.c and variants (8 to 8192
 * boxes; log-uniform sizes over [1, 100]), serial, gcc -O2, on a 2-core
 * Xeon VM; milliseconds, best of several runs. Scenes: uniform (sizes
 * 0.5-1.5, ~2 overlaps per box), clustered (8 tight clusters 1e6 apart, 5%
 * strays), span1e4 (1% of boxes 1e4 times bigger), logsize (sizes
 * log-uniform over [1, 1e4], ~1 overlap per box), log100 (over [1, 100],
 * ~2 overlaps per box).
 *
 *   n      scene         brute    grid     sap     bvh
 *   8      uniform 2D    0.0003   0.0013   0.0004  0.0009
 *   16     uniform 2D    0.0012   0.0022   0.0009  0.0028
 *   512    uniform 3D    0.74     0.127    0.145   0.224
 *   1024   uniform 2D    1.80     0.146    0.129   0.393
 *   1024   uniform 3D    2.43     0.218    0.324   0.398
 *   1024   clustered 3D  1.90     0.383    0.223   0.480
 *   1024   span1e4 3D    1.53     0.266    0.105   0.396
 *   2048   uniform 2D    7.69     0.292    0.353   0.838
 *   10k    uniform 3D    239      2.2      10.9    5.1
 *   100k   uniform 3D    -        30       479     67
 *   100k   log100 3D     -        91       -       79
 *   100k   logsize 3D    -        51       243     68
 *   1M     uniform 2D    -        376      2142    776
 *   1M     uniform 3D    -        536      23082   877
 *   1M     clustered 3D  -        982      9828    1237
 *   1M     span1e4 3D    -        710      3885    954
 *   1M     logsize 2D    -        445      1682    799
 *   1M     logsize 3D    -        745      10857   864
 *   1M     log100 3D     -        1177     -       964
 *
 * Sweep and prune wins from about 16 boxes to 1-8k (more for clustered and
 * spread scenes, less for uniform 3D), but its cost on the sweep axis grows
 * like n^1.5-n^1.7 and is quadratic in bad cases; below 1024 boxes even
 * that worst case stays under half a million tests (about a millisecond),
 * so the threshold keeps it where it is both fast and harmless.
 */
imp_broadphase_kind imp_broadphase_choose(const imp_broadphase_input *in) {
    assert(in);
    if (in->n < IMP_BP_AUTO_BRUTE_MAX) return IMP_BROAD_BRUTE;
    if (in->n < IMP_BP_AUTO_SAP_MAX) return IMP_BROAD_SAP;
    return IMP_BROAD_GRID;
}

/* Bits needed to write v (0 for 0). */
static unsigned bit_width(uint64_t v) {
    unsigned b = 0;
    while (v) {
        ++b;
        v >>= 1;
    }
    return b;
}

/* The pair of key k (see broadphase_impl.h). */
static imp_pair key_pair(uint64_t k, unsigned shift) {
    return (imp_pair){(uint32_t)(k >> shift), (uint32_t)(k & (((uint64_t)1 << shift) - 1))};
}

/* How the search ended: OK with *total pairs stored, NOMEM or TOO_MANY. */
static imp_broadphase_status sink_status(imp_bp_sink *s, size_t *total) {
    *total = 0;
    for (size_t i = 0; i < s->nvecs; ++i)
        *total += s->vecs[i].n;
    if (atomic_load_explicit(&s->nomem, memory_order_relaxed)) return IMP_BROADPHASE_NOMEM;
    if (imp_bp_stopped(s) || *total > s->max_pairs) return IMP_BROADPHASE_TOO_MANY;
    return IMP_BROADPHASE_OK;
}

/* Concatenates the chunks' keys, sorts them unless unordered, and writes the pairs. */
static imp_broadphase_status sink_finish(imp_bp_sink *s, const imp_parallel *par, int unordered,
                                         imp_pair **out, size_t *count) {
    size_t total;
    imp_broadphase_status st = sink_status(s, &total);
    if (st != IMP_BROADPHASE_OK || total == 0) return st;
    _Static_assert(sizeof(imp_pair) == sizeof(uint64_t), "pairs are sorted in place as keys");
    uint64_t *key = malloc(total * sizeof *key);
    if (!key) return IMP_BROADPHASE_NOMEM;
    size_t at = 0;
    for (size_t i = 0; i < s->nvecs; ++i) {
        if (s->vecs[i].n) memcpy(key + at, s->vecs[i].key, s->vecs[i].n * sizeof *key);
        at += s->vecs[i].n;
        free(s->vecs[i].key);
        s->vecs[i].key = NULL;
        s->vecs[i].n = 0;
    }
    bool sorted = true;
    for (size_t i = 1; i < total && sorted && !unordered; ++i)
        sorted = key[i - 1] < key[i];
    if (!sorted && imp_bp_radix_sort(key, NULL, total, 2 * s->shift, par) != 0) {
        free(key);
        return IMP_BROADPHASE_NOMEM;
    }
    /* In place: pair i is written over key i after key i has been read. */
    imp_pair *pairs = (imp_pair *)(void *)key;
    for (size_t i = 0; i < total; ++i) {
        uint64_t k;
        memcpy(&k, &key[i], sizeof k);
        imp_pair p = key_pair(k, s->shift);
        assert(p.a < p.b && (unordered || i == 0 || pairs[i - 1].a < p.a ||
                             (pairs[i - 1].a == p.a && pairs[i - 1].b < p.b)));
        memcpy(&pairs[i], &p, sizeof p);
    }
    *out = pairs;
    *count = total;
    return IMP_BROADPHASE_OK;
}

/* imp_broadphase_blocks' turn of a vector's keys into its pairs, in place, over the runner. */
typedef struct blocks_job {
    imp_bp_vec *vecs;
    unsigned shift;
} blocks_job;

static void vec_pairs(void *ctx, size_t begin, size_t end) {
    const blocks_job *j = ctx;
    for (size_t v = begin; v < end; ++v) {
        uint64_t *key = j->vecs[v].key;
        imp_pair *pairs = (imp_pair *)(void *)key;
        for (size_t i = 0; i < j->vecs[v].n; ++i) {
            uint64_t k;
            memcpy(&k, &key[i], sizeof k);
            imp_pair p = key_pair(k, j->shift);
            memcpy(&pairs[i], &p, sizeof p);
        }
    }
}

/* The chunks' vectors become the blocks (the empty ones are freed). */
static imp_broadphase_status sink_blocks(imp_bp_sink *s, const imp_parallel *par,
                                         imp_pair_blocks *out) {
    size_t total;
    imp_broadphase_status st = sink_status(s, &total);
    if (st != IMP_BROADPHASE_OK || total == 0) return st;
    size_t nb = 0;
    for (size_t i = 0; i < s->nvecs; ++i)
        nb += s->vecs[i].n > 0;
    out->block = malloc(nb * sizeof *out->block);
    if (!out->block) return IMP_BROADPHASE_NOMEM;
    blocks_job j = {s->vecs, s->shift};
    imp_parallel_for(par, s->nvecs, 1, vec_pairs, &j);
    for (size_t i = 0; i < s->nvecs; ++i) {
        if (s->vecs[i].n == 0) continue;
        out->block[out->n_blocks++] =
            (imp_pair_block){(imp_pair *)(void *)s->vecs[i].key, s->vecs[i].n};
        s->vecs[i].key = NULL; /* the block's now */
        s->vecs[i].n = 0;
    }
    out->n_pairs = total;
    return IMP_BROADPHASE_OK;
}

/* Runs the search of `kind` over `in` into *sink (set up here); 0, or -1 when an algorithm
 * failed (memory; bvh also for a tree beyond its 32-bit slots). */
static int search(imp_broadphase_kind kind, const imp_broadphase_input *in, imp_bp_sink *sink) {
    assert(in->dim == 2 || in->dim == 3);
    assert(in->n <= UINT32_MAX);
    assert(in->n == 0 || in->boxes);
#ifndef NDEBUG
    for (size_t i = 0; i < in->n; ++i) {
        const imp_aabb *b = &in->boxes[i];
        assert(isfinite(b->lo.x) && isfinite(b->hi.x) && b->lo.x <= b->hi.x);
        assert(isfinite(b->lo.y) && isfinite(b->hi.y) && b->lo.y <= b->hi.y);
        assert(in->dim == 2 || (isfinite(b->lo.z) && isfinite(b->hi.z) && b->lo.z <= b->hi.z));
    }
#endif
    if (kind == IMP_BROAD_AUTO) kind = imp_broadphase_choose(in);
    *sink = (imp_bp_sink){.max_pairs = in->max_pairs, .shift = bit_width(in->n - 1)};
    atomic_init(&sink->announced, 0);
    atomic_init(&sink->stop, false);
    atomic_init(&sink->nomem, false);
    imp_bp_scene sc = {in->boxes, in->is_static, in->n, in->dim, in->par};
    switch (kind) {
    case IMP_BROAD_BRUTE: return imp_bp_brute(&sc, sink);
    case IMP_BROAD_GRID: return imp_bp_grid(&sc, sink);
    case IMP_BROAD_SAP: return imp_bp_sap(&sc, sink);
    case IMP_BROAD_BVH: return imp_bp_bvh(&sc, sink);
    default: assert(!"unknown broadphase kind"); return -1;
    }
}

static imp_broadphase_status failed(imp_broadphase_status st, imp_error *err) {
    return (imp_broadphase_status)imp_error_set(
        err, st, st == IMP_BROADPHASE_NOMEM ? "out of memory" : "more pairs than max_pairs");
}

imp_broadphase_status imp_broadphase_pairs(imp_broadphase_kind kind, const imp_broadphase_input *in,
                                           imp_pair **out, size_t *count, imp_error *err) {
    assert(in && out && count);
    *out = NULL;
    *count = 0;
    if (in->n < 2) return IMP_BROADPHASE_OK;
    imp_bp_sink sink;
    imp_broadphase_status st = search(kind, in, &sink) == 0
                                   ? sink_finish(&sink, in->par, in->unordered, out, count)
                                   : IMP_BROADPHASE_NOMEM;
    sink_free(&sink);
    if (st == IMP_BROADPHASE_OK) return st;
    free(*out);
    *out = NULL;
    *count = 0;
    return failed(st, err);
}

imp_broadphase_status imp_broadphase_blocks(imp_broadphase_kind kind,
                                            const imp_broadphase_input *in, imp_pair_blocks *out,
                                            imp_error *err) {
    assert(in && out);
    *out = (imp_pair_blocks){0};
    if (in->n < 2) return IMP_BROADPHASE_OK;
    imp_bp_sink sink;
    imp_broadphase_status st =
        search(kind, in, &sink) == 0 ? sink_blocks(&sink, in->par, out) : IMP_BROADPHASE_NOMEM;
    sink_free(&sink);
    if (st == IMP_BROADPHASE_OK) return st;
    imp_pair_blocks_free(out);
    return failed(st, err);
}

void imp_pair_blocks_free(imp_pair_blocks *b) {
    for (size_t i = 0; i < b->n_blocks; ++i)
        free(b->block[i].pairs);
    free(b->block);
    *b = (imp_pair_blocks){0};
}
