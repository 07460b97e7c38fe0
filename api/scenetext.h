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

#include "api/endpoints.h"

/*
 * Runs scene endpoint `fn` (imp_ep_scenes_predict or imp_ep_scenes_simulate)
 * on the request text when every body is one this path takes (a sphere
 * with plain members; see scenetext.c) and the text is valid JSON: the
 * bodies are decoded from the text, the rest of the request by jansson,
 * and *doc, *status and d->text are what imp_api_run_dec gives for the
 * same request (d fresh from imp_dec_init; its ctx's limits apply).
 * Returns 1 then; returns 0, with nothing done, for any other text (the
 * caller runs the jansson path, which also gives every error its
 * pointer).
 */
int imp_scenetext_run(imp_endpoint_fn fn, const char *text, size_t len, imp_dec *d, json_t **doc,
                      int *status);

#endif
