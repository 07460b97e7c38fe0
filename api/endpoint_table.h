/*
 * endpoint_table.h - every route the daemon serves, in one table.
 *
 * The router, api dispatch, batch ops, the CLI's verbs and the metrics'
 * route labels all come from these rows (through api/endpoints.c), and a
 * test checks that docs/API.md and api/openapi.yaml list the same routes.
 * Adding an endpoint is one row of IMP_API_ENDPOINTS plus its handler file
 * api/ep_<name>.c (then its section in docs/API.md and openapi.yaml, its
 * cases in the hostile corpus and the api fuzz target).
 */
#ifndef IMP_API_ENDPOINT_TABLE_H
#define IMP_API_ENDPOINT_TABLE_H

/*
 * POST /v1/<op>: X(op, handler, flags, summary). `op` is also the batch op
 * and the CLI verb; `handler` an imp_endpoint_fn; flags from imp_endpoint_flag:
 * the cost class, IMP_EP_HEAVY (always scheduled as heavy work: its cost is not
 * bounded by its size) or IMP_EP_SCENE (light only up to IMP_EP_LIGHT_SCENE_BYTES)
 * and otherwise light up to IMP_EP_LIGHT_BYTES (imp_endpoint_is_heavy);
 * IMP_EP_PAIR (a pair query: answered on the connection thread when small,
 * imp_endpoint_is_inline); IMP_EP_TEXT (decodes the request text itself); IMP_EP_NO_BATCH (not
 * a batch op).
 */
#define IMP_API_ENDPOINTS(X)                                                                       \
    X("toi", imp_ep_toi, IMP_EP_PAIR, "time of impact of two moving bodies")                       \
    X("paths/intersect", imp_ep_paths_intersect, IMP_EP_PAIR,                                      \
      "where two straight paths come closest")                                                     \
    X("overlap", imp_ep_overlap, IMP_EP_PAIR, "static overlap test with separation vector")        \
    X("respond", imp_ep_respond, IMP_EP_PAIR, "collision response (velocities after contact)")     \
    X("scenes/predict", imp_ep_scenes_predict, IMP_EP_SCENE | IMP_EP_TEXT,                         \
      "every pair's first contact in a scene")                                                     \
    X("scenes/simulate", imp_ep_scenes_simulate, IMP_EP_HEAVY | IMP_EP_TEXT,                       \
      "event-driven simulation with response")                                                     \
    X("validate", imp_ep_validate, 0, "check a client's reported move against the world")          \
    X("ccd", imp_ep_ccd, IMP_EP_PAIR, "moving triangles: exact vertex-face and edge-edge contact") \
    X("batch", imp_ep_batch, IMP_EP_SCENE | IMP_EP_NO_BATCH, "many requests in one")               \
    X("worlds", imp_ep_worlds_put, IMP_EP_HEAVY | IMP_EP_TEXT | IMP_EP_NO_BATCH,                   \
      "store a static world (level geometry); its id is the SHA-256 of the body")

/*
 * Routes on a stored world, with a path template: X(method, allow, path, op, handler, flags,
 * summary). `{id}` matches one path segment, which the handler receives as imp_api_in.id;
 * metrics label these routes by their template, never by the id. A GET row also serves HEAD;
 * `allow` lists every method of the path (the Allow header of a 405). `op` names the row for
 * the CLI, the fuzz target and imp_api_handle_route; none of them is a batch op.
 */
#define IMP_WORLD_ROUTE_ALLOW "GET, HEAD, DELETE"
#define IMP_API_TEMPLATE_ENDPOINTS(X)                                                              \
    X("GET", IMP_WORLD_ROUTE_ALLOW, "/v1/worlds/{id}", "worlds/get", imp_ep_worlds_get,            \
      IMP_EP_TEXT | IMP_EP_NO_BATCH, "a stored world's metadata")                                  \
    X("DELETE", IMP_WORLD_ROUTE_ALLOW, "/v1/worlds/{id}", "worlds/delete", imp_ep_worlds_delete,   \
      IMP_EP_TEXT | IMP_EP_NO_BATCH, "forget a stored world")                                      \
    X("POST", "POST", "/v1/worlds/{id}/raycast", "worlds/raycast", imp_ep_worlds_raycast,          \
      IMP_EP_NO_BATCH, "rays against a stored world")                                              \
    X("POST", "POST", "/v1/worlds/{id}/shapecast", "worlds/shapecast", imp_ep_worlds_shapecast,    \
      IMP_EP_NO_BATCH, "moving bodies against a stored world")                                     \
    X("POST", "POST", "/v1/worlds/{id}/overlap", "worlds/overlap", imp_ep_worlds_overlap,          \
      IMP_EP_NO_BATCH, "what a body overlaps in a stored world")                                   \
    X("POST", "POST", "/v1/worlds/{id}/validate", "worlds/validate", imp_ep_worlds_validate,       \
      IMP_EP_NO_BATCH, "check a client's reported move against a stored world")

/* Operations routes, answered by the server from the headers alone (GET and
 * HEAD): X(path, route, summary). */
#define IMP_OPS_ROUTES(X)                                                                          \
    X("/healthz", IMP_ROUTE_HEALTHZ, "liveness: 200 while the process serves")                     \
    X("/readyz", IMP_ROUTE_READYZ, "readiness: 503 from the moment SIGTERM arrives")               \
    X("/metrics", IMP_ROUTE_METRICS, "Prometheus metrics")                                         \
    X("/openapi.yaml", IMP_ROUTE_OPENAPI, "this API as OpenAPI 3")                                 \
    X("/viewer", IMP_ROUTE_VIEWER, "a page that replays requests and draws the answers")

#endif
