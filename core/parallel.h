/*
 * parallel.h - how core spreads one big job over threads it does not own.
 *
 * Core holds no threads (DESIGN.md): a caller that has a pool hands core an
 * imp_parallel, and core calls imp_parallel_for with a range callback. The
 * runner must call fn(ctx, begin, end) on disjoint subranges that together
 * cover [0, n) exactly once each, and return only when all calls have
 * returned. When it runs a range on several threads its subranges are
 * the chunks [k grain, (k + 1) grain) clipped to n (grain 0 means 1), so a
 * caller controls how finely work is split and may keep one output per
 * chunk, indexed by begin / grain; a runner that does not split (no pool,
 * one thread, or a single chunk) makes one call for the whole range. Without a runner
 * (NULL, or run NULL) the whole range runs on the calling thread. Results
 * must never depend on how the range was split, so serial and parallel
 * runs agree bit for bit.
 *
 * Thread-safety: fn runs concurrently on different subranges; it may write
 * only to per-index or per-chunk outputs. A runner may be used from several threads
 * at once, and fn may itself call imp_parallel_for (nested ranges).
 */
#ifndef IMP_CORE_PARALLEL_H
#define IMP_CORE_PARALLEL_H

#include <stddef.h>

typedef void (*imp_range_fn)(void *ctx, size_t begin, size_t end);

typedef struct imp_parallel {
    void (*run)(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx);
    void *runner;
} imp_parallel;

static inline void imp_parallel_for(const imp_parallel *par, size_t n, size_t grain,
                                    imp_range_fn fn, void *ctx) {
    if (n == 0) return;
    if (par && par->run)
        par->run(par->runner, n, grain, fn, ctx);
    else
        fn(ctx, 0, n);
}

#endif
