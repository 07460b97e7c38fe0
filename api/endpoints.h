/*
 * endpoints.h - the endpoint functions behind imp_api_handle.
 *
 * Each takes the parsed request, decodes and validates it with `d`, calls
 * core and builds the response object. Returns 0 with *resp set (owned by
 * the caller), or -1 with the error recorded in `d`.
 */
#ifndef IMP_API_ENDPOINTS_H
#define IMP_API_ENDPOINTS_H

#include <jansson.h>

#include "api/decode.h"

typedef int (*imp_endpoint_fn)(const json_t *req, imp_dec *d, json_t **resp);

int imp_ep_toi(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_batch(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_scenes_predict(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_scenes_simulate(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_paths_intersect(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_overlap(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_respond(const json_t *req, imp_dec *d, json_t **resp);
int imp_ep_validate(const json_t *req, imp_dec *d, json_t **resp);

/* The endpoint function for an operation name, or NULL. */
imp_endpoint_fn imp_api_find_op(const char *op);

/*
 * Runs endpoint `fn` on a parsed request. Returns the HTTP status and sets
 * *doc to the response object (200) or a problem object (4xx) that the
 * caller owns; on allocation failure returns 500 with *doc NULL.
 */
int imp_api_run(imp_endpoint_fn fn, const json_t *req, const imp_api_ctx *ctx, json_t **doc);
/* The same with a decoding state the caller prepared (imp_dec_init, then e.g. pre_bodies). */
int imp_api_run_dec(imp_endpoint_fn fn, const json_t *req, imp_dec *d, json_t **doc);

/* The problem+json object for the error recorded in `d` (NULL on
 * allocation failure). */
json_t *imp_api_problem_from_dec(const imp_dec *d);

/* A problem+json object (NULL on allocation failure); pointer may be NULL. */
json_t *imp_api_problem_doc(int status, const char *type, const char *title, const char *detail,
                            const char *pointer);

#endif
