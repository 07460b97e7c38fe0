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

#endif
