/*
 * broadphase.h - candidate pairs of a scene from axis-aligned boxes.
 *
 * Every broadphase answers the same question: which pairs (a, b), a < b,
 * have closed boxes that overlap on every axis (lo <= hi on both sides, so
 * boxes that only touch count), excluding pairs of two static bodies. The
 * answer is exact and identical for every kind: sorted by (a, b) (or, when
 * the caller asks, in the order the kind found them), no duplicates. Only
 * the cost differs. Callers that need conservative boxes pad them before
 * the call; nothing here rounds.
 *
 * Kinds: brute (every pair, the reference), grid (uniform grid / spatial
 * hash), sap (sweep-and-prune on the axis of largest spread), bvh
 * (bounding volume hierarchy), auto (chooses by imp_broadphase_choose).
 *
 * Memory: *out is malloc'd by the call (NULL when there is no pair) and
 * freed by the caller with free(). Failure (allocation, or more pairs than
 * max_pairs) returns its status with *out NULL and *count 0.
 * Thread-safety: reentrant; `par` (may be NULL) spreads work over threads.
 */
#ifndef IMP_CORE_BROADPHASE_H
#define IMP_CORE_BROADPHASE_H

#include <stddef.h>
#include <stdint.h>

#include "failure.h"
#include "parallel.h"
#include "vec.h"

typedef struct imp_aabb {
    imp_vec3 lo, hi; /* z is 0 for both in 2D */
} imp_aabb;

typedef struct imp_pair {
    uint32_t a, b; /* a < b */
} imp_pair;

typedef enum imp_broadphase_kind {
    IMP_BROAD_AUTO = 0,
    IMP_BROAD_BRUTE,
    IMP_BROAD_GRID,
    IMP_BROAD_SAP,
    IMP_BROAD_BVH
} imp_broadphase_kind;

typedef struct imp_broadphase_input {
    const imp_aabb *boxes;          /* n boxes, lo <= hi componentwise, all finite */
    const unsigned char *is_static; /* n flags, or NULL (none static) */
    size_t n;                       /* at most UINT32_MAX */
    int dim;                        /* 2 or 3 */
    size_t max_pairs;               /* fail (TOO_MANY) rather than report more pairs than this */
    const imp_parallel *par;        /* may be NULL */
    int unordered; /* 1: the pairs in the order found, not sorted (for callers that order
                      their own answers); that order depends on the input and kind only */
} imp_broadphase_input;

/* The kind `auto` resolves to for this input (never IMP_BROAD_AUTO). */
imp_broadphase_kind imp_broadphase_choose(const imp_broadphase_input *in);

typedef enum imp_broadphase_status {
    IMP_BROADPHASE_OK = 0,
    IMP_BROADPHASE_NOMEM,   /* an allocation failed */
    IMP_BROADPHASE_TOO_MANY /* more pairs than max_pairs */
} imp_broadphase_status;

/* Fills *out with the overlapping pairs (see above). On failure *err (when
 * not NULL) gets the status and a message. */
imp_broadphase_status imp_broadphase_pairs(imp_broadphase_kind kind, const imp_broadphase_input *in,
                                           imp_pair **out, size_t *count, imp_error *err);

/* The pairs of imp_broadphase_blocks: block by block, as the search's chunks found them. */
typedef struct imp_pair_block {
    imp_pair *pairs;
    size_t n;
} imp_pair_block;

typedef struct imp_pair_blocks {
    imp_pair_block *block;
    size_t n_blocks, n_pairs; /* blocks (none empty), pairs in all */
} imp_pair_blocks;

/* The pairs of imp_broadphase_pairs with in->unordered set, in the same order, but left in
 * the blocks the search wrote them to instead of joined into one array: no copy of every
 * pair, and half the broadphase's memory at its peak (1M clustered 3D bodies: 14.5M pairs,
 * 116 MB rather than 232 MB).
 * For a caller that walks the pairs once. *out is all zeros on failure; free it with
 * imp_pair_blocks_free. */
imp_broadphase_status imp_broadphase_blocks(imp_broadphase_kind kind,
                                            const imp_broadphase_input *in, imp_pair_blocks *out,
                                            imp_error *err);
void imp_pair_blocks_free(imp_pair_blocks *b);

/* "auto", "brute", "grid", "sap", "bvh". */
const char *imp_broadphase_name(imp_broadphase_kind kind);

#endif
