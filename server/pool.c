/*
 * pool.c - worker threads, two bounded lanes, and parallel ranges.
 *
 * DESIGN
 * What: the threads that decode, solve and encode; the HTTP threads only
 * move bytes and hand complete requests here (see http.c).
 * How: one mutex guards two ring buffers (light and heavy lanes) and a
 * list of parallel ranges that want helpers; one condition variable wakes
 * workers. A worker takes, in order: a light job; a helper slot of a
 * parallel range; a heavy job, if fewer than heavy_max heavy jobs run.
 * parallel_for splits [0, n) into chunks handed out by an atomic counter.
 * The calling thread claims chunks itself, so the range always finishes
 * even if no worker ever helps; before returning it withdraws helper slots
 * nobody took and waits only for helpers that are inside a chunk, which
 * is why the range descriptor may live on the caller's stack. A helper
 * leaves the range after any chunk when light work is waiting, so a light
 * request waits at most one chunk for a worker however big the range.
 * Why: light-first ordering with a cap on heavy workers is what keeps a
 * 10 ms /v1/toi from queueing behind seconds of scene work when the pool
 * has two or more threads; helper slots rank above heavy jobs because
 * they finish work already admitted (and free its memory) sooner. One
 * lock is plenty: a job costs microseconds at the least, and the lock is
 * held for a few dozen instructions per job.
 *
 * The scheduling as a whole (this pool is its mechanism):
 * - Cost classes. Which lane a request takes is the endpoint table's cost
 *   estimate from the endpoint and the body size (imp_endpoint_is_heavy):
 *   a simulation is always heavy (its cost is its events, not its size);
 *   a scene or batch is light up to 16 KiB (about 100 bodies or items),
 *   anything else up to 64 KiB. A 2-body predict is light; it used to be
 *   heavy by endpoint and waited 116 s behind three simulations.
 * - Reserved capacity. Heavy jobs never hold more than threads - 1
 *   workers, so one worker is always free for light work, and a light job
 *   is taken before anything else; a parallel range lets go of its helpers
 *   after any chunk when light work waits.
 * - Bounded work. Every request runs within a time budget, and its work
 *   stops when its client leaves or the drain timeout expires: core polls
 *   the request's stop check (core/parallel.h, every 256 narrowphase pairs
 *   or simulation queue entries, tens of milliseconds at worst), so a heavy
 *   worker is never held by work nobody waits for.
 * - Batches: items run cheapest class first (api/ep_batch.c), so a light
 *   item never waits for a heavy item's worker.
 * - Small pair queries (/v1/toi and its kind up to 2 KiB) do not come here
 *   at all: their connection thread answers them within a slice and hands
 *   them here only when it runs out (server/http.c).
 * tests/bench/bench_schedule.c measures light latency with and without
 * heavy work in flight.
 */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct job {
    imp_pool_fn fn;
    void *arg;
} job;

typedef struct ring {
    job *items;
    size_t head, count; /* capacity is the pool's queue_depth */
} ring;

/* A parallel range in progress; lives on the stack of the thread that
 * called parallel_for. */
typedef struct range {
    imp_range_fn fn;
    void *ctx;
    size_t n, grain, chunks;
    atomic_size_t next_chunk;
    size_t helpers_wanted; /* slots still open (guarded by the pool lock) */
    size_t helpers_inside; /* workers running chunks of it (guarded) */
    struct range *next;    /* in the pool's list of ranges wanting help */
} range;

struct imp_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;       /* a job, a helper slot, or stop */
    pthread_cond_t range_done; /* some range lost its last helper */
    ring lanes[2];
    size_t capacity;             /* queue_depth: bound on both lanes together */
    size_t queued;               /* jobs in both lanes */
    size_t running;              /* jobs (not helper slots) being run */
    size_t helping;              /* workers inside a helper slot */
    atomic_size_t light_waiting; /* mirror of the light lane's count, read without the lock */
    size_t heavy_running, heavy_max;
    range *ranges; /* ranges with open helper slots */
    int stopping;
    unsigned nthreads;
    pthread_t *threads;
};

static void ring_push(ring *r, size_t cap, job j) {
    r->items[(r->head + r->count) % cap] = j;
    r->count++;
}

static job ring_pop(ring *r, size_t cap) {
    job j = r->items[r->head];
    r->head = (r->head + 1) % cap;
    r->count--;
    return j;
}

/* Claims and runs chunks until none is left. A helper (helper_of set) also
 * stops after any chunk when light work is waiting: it goes back to serve
 * it, and the range's owner finishes the remaining chunks on its own. */
static void run_chunks(range *r, imp_pool *helper_of) {
    for (;;) {
        size_t c = atomic_fetch_add_explicit(&r->next_chunk, 1, memory_order_relaxed);
        if (c >= r->chunks) return;
        size_t begin = c * r->grain;
        size_t end = begin + r->grain < r->n ? begin + r->grain : r->n;
        r->fn(r->ctx, begin, end);
        if (helper_of && atomic_load_explicit(&helper_of->light_waiting, memory_order_relaxed) > 0)
            return;
    }
}

static void unlink_range(imp_pool *p, range *r) {
    for (range **pp = &p->ranges; *pp; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            return;
        }
    }
}

static void *worker_main(void *arg) {
    imp_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        ring *light = &p->lanes[IMP_POOL_LIGHT], *heavy = &p->lanes[IMP_POOL_HEAVY];
        int take_light = light->count > 0;
        int take_heavy =
            !take_light && p->ranges == NULL && heavy->count > 0 && p->heavy_running < p->heavy_max;
        if (take_light || take_heavy) {
            int is_heavy = take_heavy;
            job j = ring_pop(is_heavy ? heavy : light, p->capacity);
            p->queued--;
            atomic_store_explicit(&p->light_waiting, light->count, memory_order_relaxed);
            p->running++;
            p->heavy_running += (size_t)is_heavy;
            pthread_mutex_unlock(&p->lock);
            j.fn(j.arg);
            pthread_mutex_lock(&p->lock);
            p->running--;
            p->heavy_running -= (size_t)is_heavy;
            if (is_heavy && heavy->count > 0)
                pthread_cond_signal(&p->work); /* a heavy slot opened */
            continue;
        }
        if (p->ranges) {
            range *r = p->ranges;
            if (--r->helpers_wanted == 0) unlink_range(p, r);
            r->helpers_inside++;
            p->helping++;
            pthread_mutex_unlock(&p->lock);
            run_chunks(r, p);
            pthread_mutex_lock(&p->lock);
            p->helping--;
            if (--r->helpers_inside == 0) pthread_cond_broadcast(&p->range_done);
            continue;
        }
        if (p->stopping && p->queued == 0) break;
        pthread_cond_wait(&p->work, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void pool_run_range(void *runner, size_t n, size_t grain, imp_range_fn fn, void *ctx) {
    imp_pool *p = runner;
    if (grain == 0) grain = 1;
    size_t chunks = n / grain + (n % grain != 0);
    if (chunks <= 1 || p->nthreads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    range r = {.fn = fn, .ctx = ctx, .n = n, .grain = grain, .chunks = chunks};
    atomic_init(&r.next_chunk, 0);
    r.helpers_wanted = chunks - 1 < p->nthreads ? chunks - 1 : p->nthreads;
    pthread_mutex_lock(&p->lock);
    r.next = p->ranges;
    p->ranges = &r;
    if (r.helpers_wanted == 1)
        pthread_cond_signal(&p->work);
    else
        pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);

    run_chunks(&r, NULL);

    pthread_mutex_lock(&p->lock);
    if (r.helpers_wanted > 0) {
        unlink_range(p, &r);
        r.helpers_wanted = 0;
    }
    while (r.helpers_inside > 0)
        pthread_cond_wait(&p->range_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

imp_parallel imp_pool_parallel(imp_pool *p) {
    imp_parallel par = {pool_run_range, p, {NULL, NULL}};
    return par;
}

int imp_pool_submit(imp_pool *p, imp_pool_lane lane, imp_pool_fn fn, void *arg) {
    pthread_mutex_lock(&p->lock);
    if (p->stopping || p->queued >= p->capacity) {
        pthread_mutex_unlock(&p->lock);
        return -1;
    }
    ring_push(&p->lanes[lane], p->capacity, (job){fn, arg});
    p->queued++;
    atomic_store_explicit(&p->light_waiting, p->lanes[IMP_POOL_LIGHT].count, memory_order_relaxed);
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

size_t imp_pool_queued(imp_pool *p) {
    pthread_mutex_lock(&p->lock);
    size_t n = p->queued;
    pthread_mutex_unlock(&p->lock);
    return n;
}

size_t imp_pool_running(imp_pool *p) {
    pthread_mutex_lock(&p->lock);
    size_t n = p->running + p->helping;
    pthread_mutex_unlock(&p->lock);
    return n;
}

unsigned imp_pool_threads(const imp_pool *p) { return p->nthreads; }

size_t imp_pool_cancel_queued(imp_pool *p, imp_pool_fn cancel) {
    size_t n = 0;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    for (;;) {
        ring *r =
            p->lanes[IMP_POOL_LIGHT].count ? &p->lanes[IMP_POOL_LIGHT] : &p->lanes[IMP_POOL_HEAVY];
        if (r->count == 0) break;
        job j = ring_pop(r, p->capacity);
        p->queued--;
        atomic_store_explicit(&p->light_waiting, p->lanes[IMP_POOL_LIGHT].count,
                              memory_order_relaxed);
        pthread_mutex_unlock(&p->lock);
        cancel(j.arg);
        ++n;
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

static void free_pool(imp_pool *p) {
    pthread_cond_destroy(&p->range_done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p->lanes[0].items);
    free(p->lanes[1].items);
    free(p->threads);
    free(p);
}

imp_pool *imp_pool_create(unsigned threads, size_t queue_depth) {
    if (threads == 0 || queue_depth == 0) return NULL;
    imp_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->capacity = queue_depth;
    p->nthreads = threads;
    p->heavy_max = threads > 1 ? threads - 1 : 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->range_done, NULL);
    atomic_init(&p->light_waiting, 0);
    /* Each lane may hold the whole bound on its own. */
    p->lanes[0].items = calloc(queue_depth, sizeof(job));
    p->lanes[1].items = calloc(queue_depth, sizeof(job));
    p->threads = calloc(threads, sizeof(pthread_t));
    if (!p->lanes[0].items || !p->lanes[1].items || !p->threads) {
        free_pool(p);
        return NULL;
    }
    for (unsigned i = 0; i < threads; ++i) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
            p->nthreads = i;
            imp_pool_destroy(p);
            return NULL;
        }
    }
    return p;
}

void imp_pool_destroy(imp_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->nthreads; ++i)
        pthread_join(p->threads[i], NULL);
    free_pool(p);
}
