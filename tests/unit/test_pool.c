/*
 * test_pool.c - the worker pool: queue bound, lane order, heavy cap,
 * cancellation, and parallel_for coverage (also nested and from inside a
 * job).
 *
 * DESIGN
 * Jobs that must stay running while the test looks at the pool wait on a
 * gate (mutex + condition) the test opens; "started" counters tell the test
 * when a job is inside. No sleeps decide an outcome: every wait is for a
 * condition, bounded by a generous timeout that fails the test instead of
 * hanging it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "server/pool.h"

/* Upper bound on any wait for the pool to reach a state (seconds). */
#define WAIT_LIMIT_S 20.0

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
    int started; /* jobs that reached the gate */
    int order[16];
    int n_order; /* ids in the order the jobs ran */
} gate;

typedef struct gated_job {
    gate *g;
    int id;
    int wait; /* block at the gate until it opens */
} gated_job;

static void gate_init(gate *g) {
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
}

static void gate_destroy(gate *g) {
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
}

static void gate_open(gate *g) {
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void gated_fn(void *arg) {
    gated_job *j = arg;
    gate *g = j->g;
    pthread_mutex_lock(&g->lock);
    g->started++;
    if (g->n_order < 16) g->order[g->n_order++] = j->id;
    pthread_cond_broadcast(&g->cond);
    while (j->wait && !g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

/* Waits until g->started >= n; fails the test after WAIT_LIMIT_S. */
static void wait_started(gate *g, int n) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)WAIT_LIMIT_S;
    pthread_mutex_lock(&g->lock);
    int timed_out = 0;
    while (g->started < n && !timed_out)
        timed_out = pthread_cond_timedwait(&g->cond, &g->lock, &until) != 0;
    int started = g->started;
    pthread_mutex_unlock(&g->lock);
    if (started < n) fail_msg("only %d of %d jobs started", started, n);
}

static void test_queue_bound_and_order(void **state) {
    (void)state;
    imp_pool *p = imp_pool_create(1, 3);
    assert_non_null(p);
    gate g;
    gate_init(&g);
    gated_job blocker = {&g, 0, 1};
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &blocker), 0);
    wait_started(&g, 1); /* the only worker is now held */
    gated_job h1 = {&g, 1, 0}, h2 = {&g, 2, 0}, l1 = {&g, 3, 0}, extra = {&g, 4, 0};
    assert_int_equal(imp_pool_submit(p, IMP_POOL_HEAVY, gated_fn, &h1), 0);
    assert_int_equal(imp_pool_submit(p, IMP_POOL_HEAVY, gated_fn, &h2), 0);
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &l1), 0);
    assert_int_equal(imp_pool_queued(p), 3);
    /* the bound counts both lanes: a fourth waiting job is refused */
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &extra), -1);
    assert_int_equal(imp_pool_submit(p, IMP_POOL_HEAVY, gated_fn, &extra), -1);
    assert_int_equal(imp_pool_running(p), 1);
    gate_open(&g);
    wait_started(&g, 4);
    /* light first, then the heavy ones in submission order */
    assert_int_equal(g.order[0], 0);
    assert_int_equal(g.order[1], 3);
    assert_int_equal(g.order[2], 1);
    assert_int_equal(g.order[3], 2);
    imp_pool_destroy(p);
    gate_destroy(&g);
}

/* With two workers only one heavy job runs at a time; the other worker
 * stays free for light work. */
static void test_heavy_cap_leaves_a_worker(void **state) {
    (void)state;
    imp_pool *p = imp_pool_create(2, 16);
    assert_non_null(p);
    gate heavy, light;
    gate_init(&heavy);
    gate_init(&light);
    gated_job h1 = {&heavy, 1, 1}, h2 = {&heavy, 2, 1}, l1 = {&light, 3, 0};
    assert_int_equal(imp_pool_submit(p, IMP_POOL_HEAVY, gated_fn, &h1), 0);
    assert_int_equal(imp_pool_submit(p, IMP_POOL_HEAVY, gated_fn, &h2), 0);
    wait_started(&heavy, 1);
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &l1), 0);
    wait_started(&light, 1); /* runs although a heavy job is still waiting */
    pthread_mutex_lock(&heavy.lock);
    int heavy_started = heavy.started;
    pthread_mutex_unlock(&heavy.lock);
    assert_int_equal(heavy_started, 1);
    assert_int_equal(imp_pool_queued(p), 1);
    gate_open(&heavy);
    wait_started(&heavy, 2);
    imp_pool_destroy(p);
    gate_destroy(&heavy);
    gate_destroy(&light);
}

static atomic_int cancelled_count;
static void count_cancel(void *arg) {
    (void)arg;
    atomic_fetch_add(&cancelled_count, 1);
}

static void test_cancel_queued(void **state) {
    (void)state;
    imp_pool *p = imp_pool_create(1, 8);
    assert_non_null(p);
    gate g;
    gate_init(&g);
    gated_job blocker = {&g, 0, 1}, q[3] = {{&g, 1, 0}, {&g, 2, 0}, {&g, 3, 0}};
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &blocker), 0);
    wait_started(&g, 1);
    for (int i = 0; i < 3; ++i)
        assert_int_equal(
            imp_pool_submit(p, i == 1 ? IMP_POOL_HEAVY : IMP_POOL_LIGHT, gated_fn, &q[i]), 0);
    atomic_store(&cancelled_count, 0);
    assert_int_equal(imp_pool_cancel_queued(p, count_cancel), 3);
    assert_int_equal(atomic_load(&cancelled_count), 3);
    assert_int_equal(imp_pool_queued(p), 0);
    /* a stopping pool refuses work */
    assert_int_equal(imp_pool_submit(p, IMP_POOL_LIGHT, gated_fn, &q[0]), -1);
    gate_open(&g);
    imp_pool_destroy(p);
    assert_int_equal(g.started, 1); /* only the blocker ever ran */
    gate_destroy(&g);
}

/* ---- parallel_for ---------------------------------------------------------------------- */

typedef struct cover {
    atomic_int *hits;
    size_t n;
    atomic_size_t largest;   /* longest subrange seen */
    const imp_parallel *par; /* for nesting */
    size_t inner;            /* > 0: each index runs a nested range of this size */
    atomic_int *inner_hits;
} cover;

static void cover_range(void *ctx, size_t begin, size_t end) {
    cover *c = ctx;
    size_t len = end - begin, seen = atomic_load(&c->largest);
    while (len > seen && !atomic_compare_exchange_weak(&c->largest, &seen, len)) {
    }
    for (size_t i = begin; i < end; ++i) {
        atomic_fetch_add(&c->hits[i], 1);
        if (c->inner) {
            cover in = {c->inner_hits + i * c->inner, c->inner, 0, NULL, 0, NULL};
            atomic_init(&in.largest, 0);
            imp_parallel_for(c->par, c->inner, 3, cover_range, &in);
        }
    }
}

/* Runs a cover of n indices (nested ranges of `inner` each when > 0) and
 * checks every index ran exactly once and the split respected grain (par
 * must run on two or more threads, or be NULL). */
static void check_cover(const imp_parallel *par, size_t n, size_t grain, size_t inner) {
    cover c = {calloc(n, sizeof(atomic_int)),
               n,
               0,
               par,
               inner,
               inner ? calloc(n * inner, sizeof(atomic_int)) : NULL};
    atomic_init(&c.largest, 0);
    assert_non_null(c.hits);
    imp_parallel_for(par, n, grain, cover_range, &c);
    for (size_t i = 0; i < n; ++i)
        if (atomic_load(&c.hits[i]) != 1)
            fail_msg("index %zu of %zu ran %d times (grain %zu)", i, n, atomic_load(&c.hits[i]),
                     grain);
    for (size_t i = 0; i < n * inner; ++i)
        if (atomic_load(&c.inner_hits[i]) != 1)
            fail_msg("nested index %zu ran %d times", i, atomic_load(&c.inner_hits[i]));
    /* split into chunks of at most grain, or (serial, or one chunk) a single call */
    size_t g = grain ? grain : 1;
    if (par && n > g)
        assert_true(atomic_load(&c.largest) <= g);
    else
        assert_int_equal(atomic_load(&c.largest), n);
    free(c.hits);
    free(c.inner_hits);
}

static void test_parallel_for_covers_once(void **state) {
    (void)state;
    imp_pool *p = imp_pool_create(2, 4);
    assert_non_null(p);
    imp_parallel par = imp_pool_parallel(p);
    static const size_t sizes[] = {1, 2, 3, 7, 64, 1000, 100003};
    static const size_t grains[] = {0, 1, 3, 64, 1000000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        for (size_t k = 0; k < sizeof grains / sizeof grains[0]; ++k)
            check_cover(&par, sizes[i], grains[k], 0);
    check_cover(&par, 200, 1, 50); /* nested */
    check_cover(NULL, 1000, 7, 0); /* serial runner */
    imp_pool_destroy(p);
}

typedef struct inside_job {
    imp_parallel par;
    gate *g;
} inside_job;

/* parallel_for called from inside a job while every other worker is busy
 * in the same way: no deadlock, full coverage. */
static void cover_inside(void *arg) {
    inside_job *j = arg;
    check_cover(&j->par, 5000, 5, 3);
    pthread_mutex_lock(&j->g->lock);
    j->g->started++;
    pthread_cond_broadcast(&j->g->cond);
    pthread_mutex_unlock(&j->g->lock);
}

static void test_parallel_for_inside_jobs(void **state) {
    (void)state;
    imp_pool *p = imp_pool_create(2, 8);
    assert_non_null(p);
    gate g;
    gate_init(&g);
    inside_job jobs[4];
    for (int i = 0; i < 4; ++i) {
        jobs[i] = (inside_job){imp_pool_parallel(p), &g};
        assert_int_equal(
            imp_pool_submit(p, i % 2 ? IMP_POOL_HEAVY : IMP_POOL_LIGHT, cover_inside, &jobs[i]), 0);
    }
    wait_started(&g, 4);
    imp_pool_destroy(p);
    gate_destroy(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_bound_and_order),
        cmocka_unit_test(test_heavy_cap_leaves_a_worker),
        cmocka_unit_test(test_cancel_queued),
        cmocka_unit_test(test_parallel_for_covers_once),
        cmocka_unit_test(test_parallel_for_inside_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
