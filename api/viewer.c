/*
 * viewer.c - viewer/index.html, built into the library.
 *
 * DESIGN
 * What: the browser page served at GET /viewer, which replays a request
 * against the daemon that served it and draws the request and the answer.
 * How: IMP_EMBED_FILE (api/embed.h), as api/openapi.c does for the OpenAPI
 * document: .incbin at build time.
 * Why: the page must work offline against the daemon that served it, with
 * nothing fetched from elsewhere at run time and no data file to find at
 * run time. It is plain JavaScript on Canvas 2D and WebGL, so nothing else is
 * embedded.
 */
#include "api/api.h"
#include "api/embed.h"

IMP_EMBED_FILE(imp_api_viewer, "viewer/index.html")
