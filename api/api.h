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

struct imp_world_store;

/* Named limits of one request, and how to spread work over threads; the
 * server fills them from its config. */
typedef struct imp_api_ctx {
    size_t max_bodies;              /* bodies in one scene / world (422 beyond) */
    size_t max_batch_items;         /* items in one /v1/batch (422 beyond) */
    size_t max_events;              /* events one simulation may process (a cap on max_events) */
    size_t max_world_triangles;     /* triangles in one world (422 beyond) */
    struct imp_world_store *worlds; /* stored worlds (api/world_store.h); NULL: no store, and
                                       the world routes answer 501 */
    /* runner for batch items and scene work ({NULL, NULL}: serial); its stop check is the
     * caller's own (client gone, shutdown), returning an imp_stop_reason */
    imp_parallel parallel;
    double time_budget_ms;     /* a request's budget unless it asks for its own (0: none) */
    double max_time_budget_ms; /* the most a request's "time_budget_ms" may ask for; <= 0:
                                  requests' budgets are checked but not used (runs that must
                                  not depend on the clock) */
} imp_api_ctx;

/* Why work stopped before it finished: what a stop check (core/parallel.h) returns. */
typedef enum imp_stop_reason {
    IMP_STOP_NONE = 0,
    IMP_STOP_TIME_BUDGET, /* the request's time budget ran out */
    IMP_STOP_CANCELLED,   /* its client closed the connection */
    IMP_STOP_DRAINING,    /* the server's drain timeout expired */
    IMP_STOP_HANDOFF      /* a connection thread's slice for a small request ran out: the
                             server drops the reply and hands the request to a worker
                             (server/http.c); never an answer */
} imp_stop_reason;

/* Default limits (the contract's defaults where it names one). */
#define IMP_API_DEFAULT_MAX_BODIES 1000000u
#define IMP_API_DEFAULT_MAX_BATCH_ITEMS 10000u
#define IMP_API_DEFAULT_MAX_EVENTS 1000000u
#define IMP_API_DEFAULT_MAX_WORLD_TRIANGLES 10000000u
#define IMP_API_DEFAULT_TIME_BUDGET_MS 10000.0
#define IMP_API_DEFAULT_MAX_TIME_BUDGET_MS 60000.0

void imp_api_ctx_init(imp_api_ctx *ctx);

/* Room for a Location header's value: "/v1/worlds/" and 64 hex digits. */
#define IMP_API_LOCATION_MAX 96

typedef struct imp_api_response {
    int status;               /* HTTP status: 200, 4xx */
    const char *content_type; /* "application/json" or "application/problem+json" (static) */
    char *body;               /* NUL-terminated JSON, malloc'd; free with imp_api_response_free */
    size_t len;               /* strlen(body) */
    int stopped;              /* the work was stopped before it finished: the imp_stop_reason */
    char location[IMP_API_LOCATION_MAX]; /* the Location header ("": none) */
} imp_api_response;

/* Which part of the service answers a route. */
typedef enum imp_route {
    IMP_ROUTE_API,     /* POST /v1/<op> and the world routes: imp_api_handle_route */
    IMP_ROUTE_HEALTHZ, /* the operations routes, answered by the server */
    IMP_ROUTE_READYZ,
    IMP_ROUTE_METRICS,
    IMP_ROUTE_OPENAPI,
    IMP_ROUTE_VIEWER /* the browser viewer page (viewer/index.html) */
} imp_route;

typedef enum imp_endpoint_flag {
    IMP_EP_HEAVY = 1u,     /* heavy whatever its size (a simulation's cost is its events) */
    IMP_EP_TEXT = 2u,      /* decodes the request text itself (parses what it does not take) */
    IMP_EP_NO_BATCH = 4u,  /* not an op of /v1/batch */
    IMP_EP_SCENE = 8u,     /* work grows with the square of the size: light only when small */
    IMP_EP_PAIR = 16u,     /* a query on a pair of bodies (or a few triangles): when small, cheap
                              enough for a connection thread (imp_endpoint_is_inline) */
    IMP_EP_TEMPLATE = 32u, /* the path holds an {id} segment (set by the table's template rows) */
} imp_endpoint_flag;

/* Request sizes (bytes) up to which work is light: any endpoint but the heavy ones, and
 * scene-like ones (IMP_EP_SCENE: about 100 bodies or batch items). Light work is never
 * queued behind heavy work (server/pool.c). */
#define IMP_EP_LIGHT_BYTES (64u * 1024u)
#define IMP_EP_LIGHT_SCENE_BYTES (16u * 1024u)
/* Request size (bytes) up to which a pair query (IMP_EP_PAIR) may be answered on the connection
 * thread that read it: a few shapes of a few dozen points, microseconds of work. */
#define IMP_EP_INLINE_BYTES 2048u

struct imp_api_in;
struct imp_api_out;
struct imp_dec;

/* One row of the endpoint table (api/endpoint_table.h). */
typedef struct imp_endpoint {
    const char *method;  /* "POST", "DELETE", or "GET" (which also serves HEAD) */
    const char *allow;   /* the Allow header of a 405 on this path */
    const char *path;    /* "/v1/toi", or a template: "/v1/worlds/{id}/raycast" */
    const char *op;      /* "toi": the path after /v1/, batch op and CLI verb; NULL: ops route */
    imp_route route;     /* IMP_ROUTE_API for every row with an op */
    unsigned flags;      /* imp_endpoint_flag bits */
    const char *summary; /* one line, for --help */
    int (*fn)(const struct imp_api_in *in, struct imp_dec *d, struct imp_api_out *out);
} imp_endpoint;

/* The cost estimate of a request of `body_len` bytes to `ep`: 1 when it is heavy work. */
int imp_endpoint_is_heavy(const imp_endpoint *ep, size_t body_len);
/* 1 when a request of `body_len` bytes to `ep` is a small pair query (IMP_EP_PAIR, at most
 * IMP_EP_INLINE_BYTES), which a connection thread may answer itself. */
int imp_endpoint_is_inline(const imp_endpoint *ep, size_t body_len);

/* The whole table in its order (static); *n rows. */
const imp_endpoint *imp_endpoints(size_t *n);
/* The first row of a path ("/v1/toi", "/v1/worlds/0a1b...": `{id}` in a row's template
 * matches one non-empty segment; the template itself matches too) or of an op ("toi"); NULL
 * when there is none. */
const imp_endpoint *imp_endpoint_by_path(const char *path);
const imp_endpoint *imp_endpoint_by_op(const char *op);
/* The row serving `method` on `path` (a GET row serves HEAD too); NULL when none does. */
const imp_endpoint *imp_endpoint_find(const char *method, const char *path);
/* Whether `path` matches row `ep`'s template; with `id` (cap bytes), the {id} segment is
 * copied there ("" when the row has none, or when the segment does not fit). */
int imp_endpoint_match(const imp_endpoint *ep, const char *path, char *id, size_t cap);

/*
 * Runs endpoint `op` ("toi", ...: the path after /v1/) on a request body of
 * `len` bytes. Always fills *out (a problem+json on any error: 400 for
 * malformed JSON, unknown members, wrong types, missing fields, non-finite
 * numbers, mixed dimensions; 422 for invalid geometry and values; 404 when
 * `op` is unknown). Returns out->status. Allocation failure yields a 500
 * whose body is static. "batch" runs its items through ctx->parallel, each
 * exactly as its own endpoint would (a problem item carries the pointer its
 * endpoint gives).
 */
int imp_api_handle(const char *op, const char *body, size_t len, const imp_api_ctx *ctx,
                   imp_api_response *out);

/* The same for row `ep` of the table, with the {id} of its path (NULL for none). A reply
 * may be 201 or 204 and carry out->location. */
int imp_api_handle_route(const imp_endpoint *ep, const char *id, const char *body, size_t len,
                         const imp_api_ctx *ctx, imp_api_response *out);

/*
 * A problem+json response built outside the endpoints (the server's 404,
 * 405, 413, 415, 501, 503): `code` is an imp_errcode of api/problem.h,
 * whose one table gives the status, type and title. `detail` and `pointer`
 * may be NULL. Always fills *out.
 */
void imp_api_problem(int code, const char *detail, const char *pointer, imp_api_response *out);

/* The OpenAPI document (api/openapi.yaml, built into the library):
 * static, NUL-terminated, `*len` bytes. */
const char *imp_api_openapi(size_t *len);
/* The viewer page (viewer/index.html, built into the library the same way):
 * *len bytes, NUL-terminated, static. */
const char *imp_api_viewer(size_t *len);

/* Frees out->body (unless static) and resets *out. Accepts NULL. */
void imp_api_response_free(imp_api_response *out);

#endif
