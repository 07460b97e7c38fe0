/*
 * metrics.h - request counters and latency histograms, rendered in the
 * Prometheus text exposition format (version 0.0.4).
 *
 * Routes are a fixed set (the contract's paths plus "other"), so label
 * cardinality is bounded whatever paths clients invent.
 *
 * Thread-safety: imp_metrics_observe may be called from any thread at any
 * time (relaxed atomics; a scrape may see a request counted in the total
 * but not yet in its bucket, which Prometheus tolerates); render reads
 * without locking.
 */
#ifndef IMP_SERVER_METRICS_H
#define IMP_SERVER_METRICS_H

#include <stddef.h>

#include "api/world_store.h"

typedef struct imp_metrics imp_metrics;

/* Point-in-time values the daemon supplies when it renders. */
typedef struct imp_metrics_gauges {
    size_t queue_depth;      /* jobs waiting for a worker */
    size_t in_flight;        /* requests between headers received and reply queued */
    size_t workers_busy;     /* jobs being run by workers */
    size_t connections;      /* open client connections */
    size_t buffered_bytes;   /* request body bytes buffered (the --max-buffered-bytes budget) */
    unsigned worker_threads; /* size of the pool */
    int draining;            /* 1 after SIGTERM */
    const imp_world_store_counters *worlds; /* the world store's counters; NULL: none */
} imp_metrics_gauges;

/* start_time: the process start, seconds since the Unix epoch. NULL on OOM. */
imp_metrics *imp_metrics_create(double start_time);
void imp_metrics_destroy(imp_metrics *m);

/* Index of the route label for a request path ("other" when unknown). */
size_t imp_metrics_route(const char *path);

/* Counts one finished request on `route` with `status` that took `seconds`. */
void imp_metrics_observe(imp_metrics *m, size_t route, int status, double seconds);

/* Counts the time one request waited in its lane (heavy: 1) before a worker took it. */
void imp_metrics_queue_wait(imp_metrics *m, int heavy, double seconds);

/* Counts a request whose work was stopped, by imp_stop_reason (api/api.h). */
void imp_metrics_stopped(imp_metrics *m, int reason);

/* One small pair query begun on its connection thread: answered there (0), or handed off to
 * a worker when its slice ran out (1). */
void imp_metrics_inline(imp_metrics *m, int handed_off);

/* Counts one gzip request body: `wire` bytes received, `decoded` bytes inflated from them. */
void imp_metrics_gzip_request(imp_metrics *m, size_t wire, size_t decoded);

/* Counts one gzip-compressed reply: `plain` bytes before compression, `wire` after. */
void imp_metrics_gzip_reply(imp_metrics *m, size_t plain, size_t wire);

/* The exposition text, malloc'd and NUL-terminated (caller frees), or NULL
 * on OOM. */
char *imp_metrics_render(const imp_metrics *m, const imp_metrics_gauges *g, size_t *len);

#endif
