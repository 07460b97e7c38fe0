/*
 * pool.h - the worker pool: a fixed set of threads that run request work,
 * a bounded queue in front of them, and a parallel_for for core.
 *
 * Work comes in two lanes. Light work (small single requests) always goes
 * first; heavy jobs (batches, scenes, large bodies) start on at most
 * threads - 1 workers at a time, so with two or more threads a burst of
 * heavy requests can never occupy every worker and stall the light ones.
 * Idle workers help a heavy job's parallel ranges, but leave after their
 * current chunk as soon as light work is waiting.
 * The queue bound counts both lanes: a submit beyond it fails at once and
 * the caller answers 503, so there is never an unbounded backlog.
 *
 * Thread-safety: every function except create/destroy may be called from
 * any thread, including from inside a job (parallel_for nests).
 */
#ifndef IMP_SERVER_POOL_H
#define IMP_SERVER_POOL_H

#include <stddef.h>

#include "core/parallel.h"

typedef struct imp_pool imp_pool;

typedef enum imp_pool_lane { IMP_POOL_LIGHT = 0, IMP_POOL_HEAVY = 1 } imp_pool_lane;

typedef void (*imp_pool_fn)(void *arg);

/*
 * Starts `threads` workers (>= 1) with room for `queue_depth` (>= 1)
 * pending jobs; heavy jobs run on at most max(1, threads - 1) workers.
 * Returns NULL when memory or threads cannot be had.
 */
imp_pool *imp_pool_create(unsigned threads, size_t queue_depth);

/* Queues fn(arg). Returns 0, or -1 when the queue is full or the pool is
 * stopping (fn is then not called and arg stays the caller's). */
int imp_pool_submit(imp_pool *p, imp_pool_lane lane, imp_pool_fn fn, void *arg);

/* Jobs waiting in the queue, and workers busy now: running a job or
 * helping a parallel range (gauges). */
size_t imp_pool_queued(imp_pool *p);
size_t imp_pool_running(imp_pool *p);
unsigned imp_pool_threads(const imp_pool *p);

/* An imp_parallel whose ranges run on this pool: the calling thread works
 * on the range itself and idle workers join in, so a call from inside a
 * job cannot deadlock even when every worker is busy. */
imp_parallel imp_pool_parallel(imp_pool *p);

/* Refuses further submits, takes every job still waiting out of the
 * queue and calls cancel(arg) for each on the calling thread instead of
 * its fn. Jobs already running are not affected. Returns how many. */
size_t imp_pool_cancel_queued(imp_pool *p, imp_pool_fn cancel);

/* Runs every job already queued, joins the workers and frees the pool.
 * Accepts NULL. */
void imp_pool_destroy(imp_pool *p);

#endif
