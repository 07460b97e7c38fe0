/*
 * endpoints.h - the endpoint functions behind imp_api_handle, and how the
 * table's rows run them.
 *
 * An endpoint reads the request (`in`), decodes and validates it with `d`,
 * calls core and fills `out`. Returns 0 with *out set (owned by the
 * caller), or -1 with the error recorded in `d` and nothing in *out.
 *
 * Thread-safety: reentrant; a request's state belongs to one thread.
 */
#ifndef IMP_API_ENDPOINTS_H
#define IMP_API_ENDPOINTS_H

#include <jansson.h>

#include "api/decode.h"
#include "api/endpoint_table.h"
#include "api/world_store.h"

/* What an endpoint reads: the parsed request; for an IMP_EP_TEXT endpoint
 * run on a whole request, its text instead (json NULL; the endpoint parses
 * what it does not decode itself). A batch item has a tree and no text. */
typedef struct imp_api_in {
    const json_t *json;
    const char *text;
    size_t len;
    const char *id; /* the {id} segment of a templated path; NULL elsewhere */
} imp_api_in;

/* What an endpoint answers on success: a tree, or (when a tree would cost
 * more than the solve) the reply's text, malloc'd and NUL-terminated. */
typedef struct imp_api_out {
    json_t *doc;
    char *text;
    size_t len;
    int stopped; /* the work was stopped (a reply that says so): the imp_stop_reason */
    int status;  /* the success status when not 200 (201 created, 204 no content); 0: 200 */
    char location[IMP_API_LOCATION_MAX]; /* a Location header's value; "": none */
} imp_api_out;

typedef int (*imp_endpoint_fn)(const imp_api_in *in, imp_dec *d, imp_api_out *out);

#define IMP_DECLARE_ENDPOINT(op, handler, flags, summary)                                          \
    int handler(const imp_api_in *in, imp_dec *d, imp_api_out *out);
IMP_API_ENDPOINTS(IMP_DECLARE_ENDPOINT)
#undef IMP_DECLARE_ENDPOINT
#define IMP_DECLARE_TEMPLATE_ENDPOINT(method, allow, path, op, handler, flags, summary)            \
    int handler(const imp_api_in *in, imp_dec *d, imp_api_out *out);
IMP_API_TEMPLATE_ENDPOINTS(IMP_DECLARE_TEMPLATE_ENDPOINT)
#undef IMP_DECLARE_TEMPLATE_ENDPOINT

/* ---- shared by the endpoints on stored worlds (api/ep_worlds.c) ---- */

/* The world named by in->id, held (release it with imp_world_store_release);
 * NULL with the reply set (404 unknown-world, 501 without a store) or the
 * error recorded. Sets d->dim to the world's dimension. */
const imp_world_entry *imp_ep_world_take(const imp_api_in *in, imp_dec *d, imp_api_out *out);

/* Puts member `key` (the collider's id as uploaded, else its index) and
 * "triangle" or "segment" (the primitive's index) for those kinds into o. */
void imp_ep_world_put_prim(json_t *o, const imp_world_entry *e, const char *key, uint32_t collider,
                           uint32_t index, uint32_t kind, int *ok);

/*
 * Runs endpoint `ep` on `in`. Returns the HTTP status; on 2xx *out holds the
 * reply, on 4xx out->doc holds the problem object; on allocation failure
 * 500 with *out empty. The caller owns what *out holds.
 */
int imp_api_run(const imp_endpoint *ep, const imp_api_in *in, imp_dec *d, imp_api_out *out);

/* The same on a parsed request (a batch item), always as a tree in *doc
 * (NULL only with status 500). */
int imp_api_run_tree(const imp_endpoint *ep, const json_t *req, const imp_api_ctx *ctx,
                     json_t **doc);

#endif
