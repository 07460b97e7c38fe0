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
 * IMP_EP_TEXT (decodes the request text itself); IMP_EP_NO_BATCH (not a batch op).
 */
#define IMP_API_ENDPOINTS(X)                                                                       \
    X("toi", imp_ep_toi, 0, "time of impact of two moving bodies")                                 \
    X("paths/intersect", imp_ep_paths_intersect, 0, "where two straight paths come closest")       \
    X("overlap", imp_ep_overlap, 0, "static overlap test with separation vector")                  \
    X("respond", imp_ep_respond, 0, "collision response (velocities after contact)")               \
    X("scenes/predict", imp_ep_scenes_predict, IMP_EP_SCENE | IMP_EP_TEXT,                         \
      "every pair's first contact in a scene")                                                     \
    X("scenes/simulate", imp_ep_scenes_simulate, IMP_EP_HEAVY | IMP_EP_TEXT,                       \
      "event-driven simulation with response")                                                     \
    X("validate", imp_ep_validate, 0, "check a client's reported move against the world")          \
    X("batch", imp_ep_batch, IMP_EP_SCENE | IMP_EP_NO_BATCH, "many requests in one")

/* Operations routes, answered by the server from the headers alone (GET and
 * HEAD): X(path, route, summary). */
#define IMP_OPS_ROUTES(X)                                                                          \
    X("/healthz", IMP_ROUTE_HEALTHZ, "liveness: 200 while the process serves")                     \
    X("/readyz", IMP_ROUTE_READYZ, "readiness: 503 from the moment SIGTERM arrives")               \
    X("/metrics", IMP_ROUTE_METRICS, "Prometheus metrics")                                         \
    X("/openapi.yaml", IMP_ROUTE_OPENAPI, "this API as OpenAPI 3")

#endif
