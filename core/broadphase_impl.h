/*
 * broadphase_impl.h - what the broadphase files share, private to core/broadphase*.c:
 * the checked input, the per-chunk pair vectors and their budget, the chunked
 * parallel driver, and a stable radix sort.
 *
 * Pairs travel as 64-bit keys (a << shift) | b with shift the bit width of
 * n - 1, so that sorting the keys sorts the pairs by (a, b) and the radix
 * sort needs only as many digits as 2 * shift bits.
 *
 * Every algorithm writes pairs into one imp_bp_vec per chunk of its work;
 * a chunk is a fixed index range decided from n alone, and the chunks are
 * handed to the caller's runner, so a vector is only ever touched by one
 * thread (parallel.h's per-index output rule). The sink counts what the
 * chunks have stored (atomically, the only shared write) so that a scene
 * with far more than max_pairs pairs stops early instead of filling memory.
 */
#ifndef IMP_CORE_BROADPHASE_IMPL_H
#define IMP_CORE_BROADPHASE_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broadphase.h"

/* The input, checked (broadphase.c asserts the preconditions of broadphase.h). */
typedef struct imp_bp_scene {
    const imp_aabb *box;
    const unsigned char *is_static; /* NULL: none static */
    size_t n;                       /* >= 2 when an algorithm runs */
    int dim;                        /* 2: z is ignored; 3 */
    const imp_parallel *par;
} imp_bp_scene;

typedef struct imp_bp_sink imp_bp_sink;

/* Pairs of one chunk. */
typedef struct imp_bp_vec {
    uint64_t *key;
    size_t n, cap;
    size_t announced; /* how many of n the sink has been told about */
    unsigned shift;
    imp_bp_sink *sink;
} imp_bp_vec;

struct imp_bp_sink {
    size_t max_pairs;
    unsigned shift;          /* bits of n - 1 */
    atomic_size_t announced; /* pairs stored by all chunks, as last announced */
    atomic_bool stop;        /* failure is certain: over max_pairs, or out of memory */
    atomic_bool nomem;       /* the failure is out of memory (stop is set too) */
    /* The vectors of every chunk run so far; touched only between runs. */
    imp_bp_vec *vecs;
    size_t nvecs, capvecs;
};

/* Grows v (announcing its pairs to the sink first); false when the call
 * must stop: over budget, out of memory, or another chunk already failed. */
bool imp_bp_vec_grow(imp_bp_vec *v);

/* The key of the pair (a, b), a < b. */
static inline uint64_t imp_bp_key(uint32_t a, uint32_t b, unsigned shift) {
    return ((uint64_t)a << shift) | b;
}

/* Stores the pair (a, b), a < b. False means stop this chunk now. */
static inline bool imp_bp_emit(imp_bp_vec *v, uint32_t a, uint32_t b) {
    if (v->n == v->cap && !imp_bp_vec_grow(v)) return false;
    v->key[v->n++] = imp_bp_key(a, b, v->shift);
    return true;
}

/* min and max without fmin's NaN handling (inputs are finite), which
 * compilers then emit as single branch-free instructions. */
static inline double imp_bp_min(double a, double b) { return b < a ? b : a; }
static inline double imp_bp_max(double a, double b) { return b > a ? b : a; }

/* Closed boxes overlap on every axis of dim (lo <= hi both ways, so touching counts). */
static inline bool imp_bp_overlap(const imp_aabb *a, const imp_aabb *b, int dim) {
    return a->lo.x <= b->hi.x && b->lo.x <= a->hi.x && a->lo.y <= b->hi.y && b->lo.y <= a->hi.y &&
           (dim == 2 || (a->lo.z <= b->hi.z && b->lo.z <= a->hi.z));
}

static inline bool imp_bp_is_static(const imp_bp_scene *sc, size_t i) {
    return sc->is_static && sc->is_static[i];
}

/* Box i as two arrays of three (z 0 in 2D), the form the grid and BVH index. */
static inline void imp_bp_box_arrays(const imp_bp_scene *sc, size_t i, double lo[3], double hi[3]) {
    const imp_aabb *b = &sc->box[i];
    lo[0] = b->lo.x;
    lo[1] = b->lo.y;
    lo[2] = sc->dim == 3 ? b->lo.z : 0.0;
    hi[0] = b->hi.x;
    hi[1] = b->hi.y;
    hi[2] = sc->dim == 3 ? b->hi.z : 0.0;
}

/* Asks the kernel for the whole pages of [p, p + bytes), a block about to be written whole,
 * in one call (broadphase.c). Advice: no answer depends on it. */
void imp_bp_prefault(void *p, size_t bytes);

/* Runs fn over [0, n) split into chunks of at least min_chunk indices (one
 * chunk without a runner), each chunk with its own new vector in the sink.
 * Returns -1 only when the vector list cannot be allocated. */
typedef void (*imp_bp_chunk_fn)(void *ctx, imp_bp_vec *out, size_t begin, size_t end);
int imp_bp_run(imp_bp_sink *sink, const imp_parallel *par, size_t n, size_t min_chunk,
               imp_bp_chunk_fn fn, void *ctx);

/* Marks the run failed (out of memory inside a chunk). */
static inline void imp_bp_fail(imp_bp_vec *v) {
    atomic_store_explicit(&v->sink->nomem, true, memory_order_relaxed);
    atomic_store_explicit(&v->sink->stop, true, memory_order_relaxed);
}

static inline bool imp_bp_stopped(imp_bp_sink *sink) {
    return atomic_load_explicit(&sink->stop, memory_order_relaxed);
}

/* Sorts key[0..m) ascending by their low `bits` bits (higher bits must be
 * zero), moving val alongside when val is not NULL; stable, so the result
 * does not depend on par (may be NULL). Returns -1 when the scratch memory
 * cannot be had (the arrays are then unchanged). */
int imp_bp_radix_sort(uint64_t *key, uint32_t *val, size_t m, unsigned bits,
                      const imp_parallel *par);

/* An unsigned key with the order of the double x (-0.0 taken as +0.0). */
static inline uint64_t imp_bp_double_key(double x) {
    union {
        double d;
        uint64_t u;
    } c = {x + 0.0};
    return (c.u >> 63) ? ~c.u : (c.u | 0x8000000000000000u);
}

/* The algorithms: each adds every pair of the scene to the sink exactly
 * once, in any order, and returns 0, or -1 when memory ran out (the sink
 * may then hold some pairs; the caller discards them). A stopped sink may
 * return 0 early. */
int imp_bp_brute(const imp_bp_scene *sc, imp_bp_sink *sink);
int imp_bp_grid(const imp_bp_scene *sc, imp_bp_sink *sink);
int imp_bp_sap(const imp_bp_scene *sc, imp_bp_sink *sink);
int imp_bp_bvh(const imp_bp_scene *sc, imp_bp_sink *sink);

#endif
