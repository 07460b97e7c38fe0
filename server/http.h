/*
 * http.h - the HTTP front end: a libmicrohttpd daemon that reads requests,
 * hands each complete one to a worker that runs the router, and sends the
 * reply.
 *
 * Thread-safety: every function here is called from one thread (main);
 * connections are served on libmicrohttpd's threads and requests run on
 * the worker pool.
 */
#ifndef IMP_SERVER_HTTP_H
#define IMP_SERVER_HTTP_H

#include "config.h"
#include "log.h"

typedef struct imp_http_server imp_http_server;

typedef struct imp_http_error {
    char message[256]; /* e.g. "cannot listen on 0.0.0.0:80: Permission denied" */
} imp_http_error;

/*
 * Binds cfg->bind:cfg->port, starts cfg->threads workers and
 * cfg->io_threads connection threads, and serves. start_time (seconds
 * since the epoch) is reported by /metrics. The logger is copied. Returns
 * the server, or NULL with err filled (err may be NULL). Signals the
 * caller wants delivered elsewhere must be blocked before this call: the
 * serving threads inherit the caller's signal mask.
 */
imp_http_server *imp_http_start(const imp_config *cfg, const imp_logger *log, double start_time,
                                imp_http_error *err);

/* The port actually bound (the kernel's choice when cfg->port was 0). */
unsigned imp_http_port(const imp_http_server *s);

/* Closes connections past their deadline (a client trickling a request,
 * or not reading its reply). Call about once a second. Returns how many. */
size_t imp_http_tick(imp_http_server *s);

/* Draining, step 1: /readyz answers 503 from now on; everything else is
 * served as before, so a load balancer has time to notice. */
void imp_http_drain_begin(imp_http_server *s);

/* Draining, step 2: stop accepting connections; a new request on an open
 * connection is answered 503 draining with Connection: close. Requests
 * already received are still answered. */
void imp_http_close(imp_http_server *s);

/* Requests received whose reply has not been fully sent. */
size_t imp_http_in_flight(imp_http_server *s);

/* Closes (if not yet), answers work still waiting in the queue with 503,
 * waits for running work, closes every connection, joins the threads and
 * frees the server. Accepts NULL. */
void imp_http_stop(imp_http_server *s);

#endif
