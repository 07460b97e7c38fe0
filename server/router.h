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

/* What the operations routes need to know of the daemon around the
 * router. Every member may be NULL: then /readyz says ready and /metrics
 * is empty. Both functions are called concurrently from any thread. */
typedef struct imp_router_hooks {
    int (*ready)(void *cls);                  /* 1 while accepting work, 0 while draining */
    char *(*metrics)(void *cls, size_t *len); /* Prometheus text, malloc'd; NULL on OOM */
    void *cls;
} imp_router_hooks;

typedef struct imp_router {
    imp_api_ctx api;       /* limits (and the parallel runner) handed to every endpoint */
    size_t max_body_bytes; /* bodies larger than this get 413 */
    imp_router_hooks hooks;
    const char *write_token; /* the bearer token world uploads and deletes need; NULL: none */
    size_t write_token_len;
} imp_router;

typedef struct imp_request {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* decoded path, without the query string */
    const char *content_type; /* NULL when the header is absent */
    const char *body;         /* `len` bytes, need not be NUL-terminated; NULL when len is 0 */
    size_t len;
    imp_stop stop; /* the request's own stop check (client gone, shutdown), returning an
                      imp_stop_reason; {NULL, NULL}: none */
} imp_request;

typedef struct imp_reply {
    imp_api_response resp;        /* status, content type, body; free with imp_reply_free */
    const char *allow;            /* value of the Allow header (static), or NULL */
    const char *retry_after;      /* value of the Retry-After header (static), or NULL */
    int close;                    /* 1: send Connection: close and end the connection */
    const char *accept_encoding;  /* value of the Accept-Encoding header (static), or NULL */
    int gzip;                     /* 1: the body is gzip-compressed (Content-Encoding: gzip) */
    int vary;                     /* 1: the body depends on Accept-Encoding (Vary) */
    const char *www_authenticate; /* value of the WWW-Authenticate header (static), or NULL */
} imp_reply;

/* What is wrong with a request's framing (RFC 9112), answered before its body. */
typedef enum imp_framing {
    IMP_FRAMING_CONTROL_BYTE,   /* 400: a percent-encoded control byte in the target */
    IMP_FRAMING_TE_AND_LENGTH,  /* 400: Transfer-Encoding with Content-Length (§6.3) */
    IMP_FRAMING_TE_UNSUPPORTED, /* 501: a transfer coding other than chunked (§6.1) */
} imp_framing;

/* The problem reply for bad framing; the connection closes after it (the
 * body, if any, cannot be delimited or is not read). */
void imp_router_bad_framing(imp_framing why, imp_reply *out);

/* Why a request is turned away with 503. */
typedef enum imp_unavailable {
    IMP_UNAVAILABLE_OVERLOADED,
    IMP_UNAVAILABLE_BUFFERS, /* the budget of buffered request bytes is spent */
    IMP_UNAVAILABLE_DRAINING
} imp_unavailable;

/* Sets the defaults of every field, then the limits that come from
 * configuration (api limits as imp_api_ctx_init; the caller may change
 * r->api and r->hooks afterwards). */
void imp_router_init(imp_router *r, size_t max_body_bytes, size_t max_bodies);

/*
 * Decides whatever the request line and headers alone decide: unknown path
 * (404), wrong method (405, with `allow`), non-JSON Content-Type (415), a
 * declared Content-Length over the limit (413; pass -1 when unknown), and
 * routes that take no body (GET /healthz, /readyz, /metrics, /openapi.yaml). Returns 1 with *out
 * filled when the reply is known; returns 0 (and leaves *out untouched) when the body must be read
 * and the request passed to imp_router_handle.
 */
int imp_router_early(const imp_router *r, const char *method, const char *path,
                     const char *content_type, long long content_length, imp_reply *out);

/* When a write token is configured and the request writes to the world store (POST
 * /v1/worlds, DELETE /v1/worlds/{id}), checks its Authorization header (NULL: absent) for
 * "Bearer <token>" in constant time; returns 1 with a 401 (WWW-Authenticate: Bearer) in
 * *out when it does not match, else 0. The token is never logged or echoed. */
int imp_router_authorize(const imp_router *r, const char *method, const char *path,
                         const char *authorization, imp_reply *out);

/* Handles one complete request (checks of imp_router_early included).
 * Always fills *out; the caller frees it with imp_reply_free. */
void imp_router_handle(const imp_router *r, const imp_request *req, imp_reply *out);

/* The 415 reply to a Content-Encoding other than gzip (RFC 9110 section 15.5.16), which
 * names the coding the server takes in its Accept-Encoding header (section 12.5.3). */
void imp_router_unsupported_coding(imp_reply *out);

/* The 400 reply to a gzip body that does not decode; `why` is its detail. */
void imp_router_bad_coding(const char *why, imp_reply *out);

/* The 413 reply, for a body found too large while it is being read. */
void imp_router_too_large(const imp_router *r, imp_reply *out);

/* The 503 reply (problem+json with Retry-After): the work queue is full,
 * or the daemon is draining (then the connection is closed too). */
void imp_router_unavailable(imp_unavailable why, imp_reply *out);

/* 1 for requests whose work may take long, by the endpoint table's cost estimate
 * (imp_endpoint_is_heavy: simulations, scenes and batches past IMP_EP_LIGHT_SCENE_BYTES,
 * anything past IMP_EP_LIGHT_BYTES). The worker pool runs these in its heavy lane. */
int imp_router_is_heavy(const char *path, size_t body_len);

/* 1 for a small pair query (imp_endpoint_is_inline: /v1/toi and its kind up to
 * IMP_EP_INLINE_BYTES), which the connection thread answers itself (server/http.c). */
int imp_router_is_inline(const char *path, size_t body_len);

/* 1 when a Content-Type value names JSON: application/json or
 * application/<anything>+json, any case, with optional parameters. */
int imp_router_is_json(const char *content_type);

/* Frees the reply body and resets *out. Accepts NULL. */
void imp_reply_free(imp_reply *out);

#endif
