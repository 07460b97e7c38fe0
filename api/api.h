/*
 * api.h - the endpoints as pure functions: request bytes (JSON) in,
 * status and response bytes out. No HTTP, no threads: the daemon, the
 * `impact` CLI and the fuzz targets all call these, so what they test is
 * what is served.
 *
 * Thread-safety: every function is reentrant; a context may be shared by
 * threads (it is read only).
 */
#ifndef IMP_API_H
#define IMP_API_H

#include <stddef.h>

#include "core/parallel.h"

/* Named limits of one request, and how to spread work over threads; the
 * server fills them from its config. */
typedef struct imp_api_ctx {
    size_t max_bodies;      /* bodies in one scene / world (422 beyond) */
    size_t max_batch_items; /* items in one /v1/batch (422 beyond) */
    size_t max_events;      /* events one simulation may process (a cap on max_events) */
    imp_parallel parallel;  /* runner for batch items and scene work; {NULL, NULL}: serial */
} imp_api_ctx;

/* Default limits (the contract's defaults where it names one). */
#define IMP_API_DEFAULT_MAX_BODIES 1000000u
#define IMP_API_DEFAULT_MAX_BATCH_ITEMS 10000u
#define IMP_API_DEFAULT_MAX_EVENTS 1000000u

void imp_api_ctx_init(imp_api_ctx *ctx);

typedef struct imp_api_response {
    int status;               /* HTTP status: 200, 4xx */
    const char *content_type; /* "application/json" or "application/problem+json" (static) */
    char *body;               /* NUL-terminated JSON, malloc'd; free with imp_api_response_free */
    size_t len;               /* strlen(body) */
} imp_api_response;

/*
 * Runs endpoint `op` ("toi", ...: the path after /v1/) on a request body of
 * `len` bytes. Always fills *out (a problem+json on any error: 400 for
 * malformed JSON, wrong types, missing fields, non-finite numbers, mixed
 * dimensions; 422 for invalid geometry; 404 when `op` is unknown). Returns
 * out->status. Allocation failure yields a 500 whose body is static.
 * "batch" runs its items through ctx->parallel, each exactly as its own
 * endpoint would (a problem item carries the pointer its endpoint gives).
 */
int imp_api_handle(const char *op, const char *body, size_t len, const imp_api_ctx *ctx,
                   imp_api_response *out);

/* 1 when `op` names an endpoint imp_api_handle serves. */
int imp_api_has_op(const char *op);

/*
 * A problem+json response built outside the endpoints (the server's 404,
 * 405, 413, 415, 503). `pointer` may be NULL. Always fills *out.
 */
void imp_api_problem(int status, const char *type, const char *title, const char *detail,
                     const char *pointer, imp_api_response *out);

/* The OpenAPI document (api/openapi.yaml, built into the library):
 * static, NUL-terminated, `*len` bytes. */
const char *imp_api_openapi(size_t *len);

/* Frees out->body (unless static) and resets *out. Accepts NULL. */
void imp_api_response_free(imp_api_response *out);

#endif
