/*
 * http.h - the HTTP front end: a libmicrohttpd daemon that reads requests,
 * hands each complete one to the router and sends the reply.
 *
 * Thread-safety: imp_http_start and imp_http_stop are called from one
 * thread (main); requests are served on libmicrohttpd's threads.
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
 * Binds cfg->bind:cfg->port and starts serving on cfg->threads threads.
 * The logger is copied. Returns the server, or NULL with err filled (err may
 * be NULL). Signals the caller wants delivered elsewhere must be blocked
 * before this call: the serving threads inherit the caller's signal mask.
 */
imp_http_server *imp_http_start(const imp_config *cfg, const imp_logger *log, imp_http_error *err);

/* The port actually bound (the kernel's choice when cfg->port was 0). */
unsigned imp_http_port(const imp_http_server *s);

/* Stops accepting, closes every connection, joins the threads and frees
 * the server. A handler already running completes; replies not yet sent
 * are dropped (graceful draining comes with the worker pool). Accepts NULL. */
void imp_http_stop(imp_http_server *s);

#endif
