/*
 * scenetext.h - the scene endpoints' bodies decoded straight from the
 * request text, without building a jansson tree for them.
 *
 * Thread-safety: reentrant.
 */
#ifndef IMP_API_SCENETEXT_H
#define IMP_API_SCENETEXT_H

#include <jansson.h>
#include <stddef.h>

#include "api/decode.h"

/*
 * Decodes a scene request's text when every body is one this path takes (a
 * sphere with plain members; see scenetext.c) and the text is valid JSON.
 * Returns 1 with *bodies (malloc'd, *n of them, each as imp_dec_body_value
 * fills it; free with imp_bodies_free), *dim (the dimension they fix) and
 * *rest (the request parsed, its "bodies" holding the ids; the caller owns
 * it). Returns 0, with nothing written or allocated, for any other text:
 * the caller parses it whole, which also gives every error its pointer.
 * ctx->max_bodies applies; ctx->parallel decodes long arrays in chunks.
 */
int imp_scenetext_decode(const char *text, size_t len, const imp_api_ctx *ctx, imp_body **bodies,
                         size_t *n, int *dim, json_t **rest);

#endif
