/*
 * router.h - what the daemon answers to one HTTP request, without any HTTP
 * library: method, path, Content-Type and body in; status, headers and body
 * out. The connection layer (http.c) only moves bytes; the worker pool that
 * replaces libmicrohttpd's thread pool later calls imp_router_handle too.
 *
 * Thread-safety: a router is read-only after imp_router_init; every
 * function is reentrant.
 */
#ifndef IMP_SERVER_ROUTER_H
#define IMP_SERVER_ROUTER_H

#include <stddef.h>

#include "api/api.h"

typedef struct imp_router {
    imp_api_ctx api;       /* limits handed to every endpoint */
    size_t max_body_bytes; /* bodies larger than this get 413 */
} imp_router;

typedef struct imp_request {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* decoded path, without the query string */
    const char *content_type; /* NULL when the header is absent */
    const char *body;         /* `len` bytes, need not be NUL-terminated; NULL when len is 0 */
    size_t len;
} imp_request;

typedef struct imp_reply {
    imp_api_response resp; /* status, content type, body; free with imp_reply_free */
    const char *allow;     /* value of the Allow header (static), or NULL */
} imp_reply;

void imp_router_init(imp_router *r, size_t max_body_bytes, size_t max_bodies);

/*
 * Decides whatever the request line and headers alone decide: unknown path
 * (404), wrong method (405, with `allow`), non-JSON Content-Type (415), a
 * declared Content-Length over the limit (413; pass -1 when unknown), and
 * routes that take no body (GET /healthz). Returns 1 with *out filled when
 * the reply is known; returns 0 (and leaves *out untouched) when the body
 * must be read and the request passed to imp_router_handle.
 */
int imp_router_early(const imp_router *r, const char *method, const char *path,
                     const char *content_type, long long content_length, imp_reply *out);

/* Handles one complete request (checks of imp_router_early included).
 * Always fills *out; the caller frees it with imp_reply_free. */
void imp_router_handle(const imp_router *r, const imp_request *req, imp_reply *out);

/* The 413 reply, for a body found too large while it is being read. */
void imp_router_too_large(const imp_router *r, imp_reply *out);

/* 1 when a Content-Type value names JSON: application/json or
 * application/<anything>+json, any case, with optional parameters. */
int imp_router_is_json(const char *content_type);

/* Frees the reply body and resets *out. Accepts NULL. */
void imp_reply_free(imp_reply *out);

#endif
