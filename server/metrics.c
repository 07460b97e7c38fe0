/*
 * metrics.c - counters, histograms and the Prometheus text format.
 *
 * DESIGN
 * What: impactd_http_requests_total{route,code}, the latency histogram
 * impactd_http_request_duration_seconds{route} (from the request's headers
 * arriving to its reply being queued, so queueing for a worker is
 * included), the bytes of gzip request bodies and replies before and after
 * coding, and gauges for queue depth, in-flight requests, busy workers,
 * connections, draining, resident memory and process start time; the world
 * store's cache hits, misses, evictions and bytes, its errors by kind and
 * the world build time histogram (read from the store's counters, taken
 * under its lock at each scrape).
 * How: the route labels are the endpoint table's paths (api/endpoint_table.h)
 * plus "other", with a fixed bucket ladder; every cell
 * is a relaxed atomic counter, so observing costs a few uncontended atomic
 * adds and no lock. Status codes are counted per code in 100..599, and
 * only non-zero series are rendered. Durations are summed in nanoseconds
 * as integers (an atomic double add would need a CAS loop).
 * Why: operators scrape every few seconds; the request path must not pay
 * for that with a lock.
 */
#include "metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "log.h"

/* Upper bounds of the latency buckets (seconds): 100 us to 10 s, roughly
 * 1-2.5-5 per decade, the range between a cached /v1/toi and a big scene. */
static const double BUCKETS[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                 0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0,  10.0};
#define N_BUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])

#define STATUS_MIN 100
#define STATUS_MAX 599
#define N_STATUS (STATUS_MAX - STATUS_MIN + 1)

typedef struct histogram {
    atomic_uint_fast64_t buckets[N_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t sum_ns;
    atomic_uint_fast64_t count;
} histogram;

typedef struct route_stats {
    atomic_uint_fast64_t by_status[N_STATUS];
    histogram latency;
} route_stats;

static const char *const CLASS_LABELS[2] = {"light", "heavy"};

/* Bytes of gzip-coded request bodies and replies, on the wire and decoded. */
typedef struct gzip_stats {
    atomic_uint_fast64_t request_wire, request_decoded;
    atomic_uint_fast64_t reply_plain, reply_wire;
} gzip_stats;

struct imp_metrics {
    double start_time;
    histogram queue_wait[2];       /* by cost class: light, heavy */
    atomic_uint_fast64_t stops[4]; /* by imp_stop_reason (0 unused; a handoff is not a stop) */
    atomic_uint_fast64_t inline_answered, inline_handed_off;
    gzip_stats gzip;
    size_t n_routes; /* the endpoint table's rows, then "other" */
    route_stats routes[];
};

imp_metrics *imp_metrics_create(double start_time) {
    size_t n;
    imp_endpoints(&n);
    /* all-zero bits are zero atomics on our targets */
    imp_metrics *m = calloc(1, sizeof *m + (n + 1) * sizeof m->routes[0]);
    if (m) {
        m->start_time = start_time;
        m->n_routes = n + 1;
    }
    return m;
}

void imp_metrics_destroy(imp_metrics *m) { free(m); }

size_t imp_metrics_route(const char *path) {
    size_t n;
    const imp_endpoint *eps = imp_endpoints(&n);
    const imp_endpoint *ep = imp_endpoint_by_path(path);
    return ep ? (size_t)(ep - eps) : n;
}

/* The label of route i: its path, or "other" past the table. */
static const char *route_label(size_t i) {
    size_t n;
    const imp_endpoint *eps = imp_endpoints(&n);
    return i < n ? eps[i].path : "other";
}

static void hist_observe(histogram *h, double seconds) {
    size_t b = 0;
    while (b < N_BUCKETS && seconds > BUCKETS[b])
        ++b;
    atomic_fetch_add_explicit(&h->buckets[b], 1, memory_order_relaxed);
    if (seconds < 0) seconds = 0;
    atomic_fetch_add_explicit(&h->sum_ns, (uint_fast64_t)(seconds * 1e9), memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void imp_metrics_observe(imp_metrics *m, size_t route, int status, double seconds) {
    if (route >= m->n_routes) route = m->n_routes - 1;
    route_stats *r = &m->routes[route];
    if (status < STATUS_MIN || status > STATUS_MAX) status = 500;
    atomic_fetch_add_explicit(&r->by_status[status - STATUS_MIN], 1, memory_order_relaxed);
    hist_observe(&r->latency, seconds);
}

void imp_metrics_queue_wait(imp_metrics *m, int heavy, double seconds) {
    hist_observe(&m->queue_wait[heavy ? 1 : 0], seconds);
}

void imp_metrics_stopped(imp_metrics *m, int reason) {
    if (reason > 0 && reason < 4)
        atomic_fetch_add_explicit(&m->stops[reason], 1, memory_order_relaxed);
}

void imp_metrics_inline(imp_metrics *m, int handed_off) {
    atomic_fetch_add_explicit(handed_off ? &m->inline_handed_off : &m->inline_answered, 1,
                              memory_order_relaxed);
}

void imp_metrics_gzip_request(imp_metrics *m, size_t wire, size_t decoded) {
    atomic_fetch_add_explicit(&m->gzip.request_wire, wire, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->gzip.request_decoded, decoded, memory_order_relaxed);
}

void imp_metrics_gzip_reply(imp_metrics *m, size_t plain, size_t wire) {
    atomic_fetch_add_explicit(&m->gzip.reply_plain, plain, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->gzip.reply_wire, wire, memory_order_relaxed);
}

/* A growable text buffer; `failed` sticks after the first allocation failure. */
typedef struct text {
    char *buf;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) IMP_PRINTF_LIKE(2, 3);
static void put(text *t, const char *fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap * 2 + (size_t)n;
        char *p = realloc(t->buf, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->buf = p;
        t->cap = cap;
    }
}

static uint64_t load(const atomic_uint_fast64_t *a) {
    return (uint64_t)atomic_load_explicit(a, memory_order_relaxed);
}

/* Resident set size in bytes from /proc/self/statm, or 0 when unavailable. */
static unsigned long long resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long long size = 0, resident = 0;
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? resident * (unsigned long long)page : 0;
}

static void counter(text *t, const char *name, const char *help, uint64_t value) {
    put(t, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
        (unsigned long long)value);
}

/* One histogram's series with label `key`="`value`"; nothing while it is empty. */
static void hist_render(text *t, const char *name, const char *key, const char *value,
                        const histogram *h) {
    if (load(&h->count) == 0) return;
    uint64_t cum = 0;
    for (size_t b = 0; b <= N_BUCKETS; ++b) {
        cum += load(&h->buckets[b]);
        if (b < N_BUCKETS)
            put(t, "%s_bucket{%s=\"%s\",le=\"%g\"} %llu\n", name, key, value, BUCKETS[b],
                (unsigned long long)cum);
        else
            put(t, "%s_bucket{%s=\"%s\",le=\"+Inf\"} %llu\n", name, key, value,
                (unsigned long long)cum);
    }
    put(t, "%s_sum{%s=\"%s\"} %.9f\n", name, key, value, (double)load(&h->sum_ns) / 1e9);
    put(t, "%s_count{%s=\"%s\"} %llu\n", name, key, value, (unsigned long long)cum);
}

static void gauge(text *t, const char *name, const char *help, double value) {
    put(t, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, value);
}

/* The world store's cache, errors and build times. */
static void worlds_render(text *t, const imp_world_store_counters *w) {
    counter(t, "impactd_world_cache_hits_total", "World lookups answered from the cache.", w->hits);
    counter(t, "impactd_world_cache_misses_total",
            "World lookups not in the cache (fetched from the store when there is one).",
            w->misses);
    counter(t, "impactd_world_cache_evictions_total",
            "Built worlds dropped from the cache to make room (least recently used first).",
            w->evictions);
    gauge(t, "impactd_world_cache_bytes", "Bytes the cached built worlds hold.", (double)w->bytes);
    gauge(t, "impactd_world_cache_limit_bytes", "The cache's cap (--world-cache-bytes).",
          (double)w->cap);
    gauge(t, "impactd_world_cache_worlds", "Built worlds in the cache.", (double)w->count);
    put(t, "# HELP impactd_world_store_errors_total Failed world store calls, by kind.\n"
           "# TYPE impactd_world_store_errors_total counter\n");
    for (int k = 0; k < IMP_WORLD_ERR_COUNT; ++k)
        put(t, "impactd_world_store_errors_total{kind=\"%s\"} %llu\n",
            imp_world_err_name((imp_world_err)k), w->errors[k]);
    put(t, "# HELP impactd_world_build_seconds Time to build a world (uploads and fetches).\n"
           "# TYPE impactd_world_build_seconds histogram\n");
    unsigned long long cum = 0;
    for (int b = 0; b <= IMP_WORLD_BUILD_BUCKETS; ++b) {
        cum += w->builds[b];
        if (b < IMP_WORLD_BUILD_BUCKETS)
            put(t, "impactd_world_build_seconds_bucket{le=\"%g\"} %llu\n",
                imp_world_build_bounds[b], cum);
        else
            put(t, "impactd_world_build_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
    }
    put(t, "impactd_world_build_seconds_sum %.9f\nimpactd_world_build_seconds_count %llu\n",
        w->build_seconds, w->build_count);
}

char *imp_metrics_render(const imp_metrics *m, const imp_metrics_gauges *g, size_t *len) {
    text t = {malloc(16384), 0, 16384, 0};
    if (!t.buf) return NULL;
    put(&t, "# HELP impactd_http_requests_total Requests answered, by route and status code.\n"
            "# TYPE impactd_http_requests_total counter\n");
    for (size_t r = 0; r < m->n_routes; ++r) {
        for (int s = 0; s < N_STATUS; ++s) {
            uint64_t n = load(&m->routes[r].by_status[s]);
            if (n)
                put(&t, "impactd_http_requests_total{route=\"%s\",code=\"%d\"} %llu\n",
                    route_label(r), s + STATUS_MIN, (unsigned long long)n);
        }
    }
    put(&t, "# HELP impactd_http_request_duration_seconds Time from request headers to reply, "
            "by route.\n"
            "# TYPE impactd_http_request_duration_seconds histogram\n");
    for (size_t r = 0; r < m->n_routes; ++r)
        hist_render(&t, "impactd_http_request_duration_seconds", "route", route_label(r),
                    &m->routes[r].latency);
    put(&t, "# HELP impactd_queue_wait_seconds Time a request waited for a worker, by cost "
            "class.\n"
            "# TYPE impactd_queue_wait_seconds histogram\n");
    for (int c = 0; c < 2; ++c)
        hist_render(&t, "impactd_queue_wait_seconds", "class", CLASS_LABELS[c], &m->queue_wait[c]);
    counter(&t, "impactd_inline_requests_total",
            "Small pair queries answered by their connection thread, without a worker.",
            load(&m->inline_answered));
    counter(&t, "impactd_inline_handoffs_total",
            "Small pair queries whose slice on the connection thread ran out; a worker answered.",
            load(&m->inline_handed_off));
    counter(&t, "impactd_cancelled_requests_total",
            "Requests whose client closed the connection before the reply; their work stopped.",
            load(&m->stops[IMP_STOP_CANCELLED]));
    counter(&t, "impactd_time_budget_stops_total",
            "Requests whose time budget ran out (503, or a simulation stopped at time_budget).",
            load(&m->stops[IMP_STOP_TIME_BUDGET]));
    counter(&t, "impactd_drain_stops_total",
            "Requests stopped because the drain timeout expired (503 draining).",
            load(&m->stops[IMP_STOP_DRAINING]));
    counter(&t, "impactd_compressed_request_bytes_total",
            "Request body bytes received with Content-Encoding: gzip, as sent.",
            load(&m->gzip.request_wire));
    counter(&t, "impactd_decompressed_request_bytes_total",
            "Bytes inflated from gzip request bodies (at most the body limit each).",
            load(&m->gzip.request_decoded));
    counter(&t, "impactd_compressed_reply_bytes_total",
            "Reply body bytes sent with Content-Encoding: gzip, as sent.",
            load(&m->gzip.reply_wire));
    counter(&t, "impactd_uncompressed_reply_bytes_total",
            "Bytes of the gzip-compressed replies before compression.", load(&m->gzip.reply_plain));
    gauge(&t, "impactd_queue_depth", "Requests waiting for a worker.", (double)g->queue_depth);
    gauge(&t, "impactd_in_flight_requests", "Requests received and not yet answered.",
          (double)g->in_flight);
    gauge(&t, "impactd_workers_busy", "Workers running a request.", (double)g->workers_busy);
    gauge(&t, "impactd_worker_threads", "Threads in the worker pool.", (double)g->worker_threads);
    gauge(&t, "impactd_open_connections", "Open client connections.", (double)g->connections);
    gauge(&t, "impactd_buffered_request_bytes",
          "Request body bytes buffered across connections (bounded by --max-buffered-bytes).",
          (double)g->buffered_bytes);
    gauge(&t, "impactd_draining", "1 after SIGTERM while the daemon drains, else 0.",
          (double)g->draining);
    if (g->worlds) worlds_render(&t, g->worlds);
    gauge(&t, "process_resident_memory_bytes", "Resident memory size in bytes.",
          (double)resident_bytes());
    gauge(&t, "process_start_time_seconds", "Start time of the process since the Unix epoch.",
          m->start_time);
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    *len = t.len;
    return t.buf;
}
