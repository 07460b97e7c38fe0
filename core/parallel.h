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
 *
 * Stopping: the same struct carries the caller's stop check (imp_stop). Core
 * has no clock: a caller with a time budget, or whose client went away,
 * says so through `stop.check`, and core's long loops poll it at bounded
 * intervals (IMP_STOP_POLL_*, below), then return what they have with a
 * "stopped" state. The check must be cheap (it is called every few
 * hundred pairs or events), thread-safe (every thread of a range polls
 * it) and, once it has said stop, keep saying so.
 */
#ifndef IMP_CORE_PARALLEL_H
#define IMP_CORE_PARALLEL_H

#include <stddef.h>

typedef void (*imp_range_fn)(void *ctx, size_t begin, size_t end);

/* A caller's request to stop: check(cls) returns 0 to go on, or a nonzero reason of the
 * caller's own (core passes it back, never reads it). {NULL, NULL}: never stop. */
typedef struct imp_stop {
    int (*check)(void *cls);
    void *cls;
} imp_stop;

/* How often core's long loops poll the stop check. Between two polls a loop does at most
 * this much work, so the worst-case delay of a stop is that much work: 256 narrowphase
 * pairs (a few microseconds each for spheres, up to a few hundred for polytopes: at most
 * tens of milliseconds), or 256 simulation queue entries (tens of microseconds each). */
#define IMP_STOP_POLL_PAIRS 256
#define IMP_STOP_POLL_EVENTS 256

/* A world's build and queries (core/world.h) poll every this many primitives or nodes
 * handled: a few microseconds of binning or of triangle tests, up to tens of
 * milliseconds of convex casts against polyhedra. */
#define IMP_STOP_POLL_PRIMS 4096

typedef struct imp_parallel {
    void (*run)(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx);
    void *runner;
    imp_stop stop; /* polled by the work this runner runs; {NULL, NULL}: never */
} imp_parallel;

/* The stop check's answer: 0 to go on, else the caller's reason. */
static inline int imp_stop_now(const imp_stop *s) { return s && s->check ? s->check(s->cls) : 0; }

static inline void imp_parallel_for(const imp_parallel *par, size_t n, size_t grain,
                                    imp_range_fn fn, void *ctx) {
    if (n == 0) return;
    if (par && par->run)
        par->run(par->runner, n, grain, fn, ctx);
    else
        fn(ctx, 0, n);
}

#endif
