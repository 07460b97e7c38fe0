/*
 * endpoints.c - the endpoint table as data (see api/endpoint_table.h).
 *
 * DESIGN
 * What: the rows of IMP_OPS_ROUTES and IMP_API_ENDPOINTS as one constant
 * array of imp_endpoint, and lookups by path and by op.
 * How: the X-macro rows expand into initialisers; lookups scan the array
 * (a dozen rows: a scan costs less than hashing the path). A row's path may
 * hold one `{id}` segment, which matches any one non-empty segment.
 * Why: the router, api dispatch, batch, the CLI and metrics read the same
 * rows, so an endpoint cannot be served by one and unknown to another.
 */
#include <string.h>

#include "api/api.h"
#include "api/endpoints.h"

#define OPS_ROW(path, route, summary) {"GET", "GET, HEAD", path, NULL, route, 0, summary, NULL},
#define API_ROW(op, handler, flags, summary)                                                       \
    {"POST", "POST", "/v1/" op, op, IMP_ROUTE_API, flags, summary, handler},

#define TEMPLATE_ROW(method, allow, path, op, handler, flags, summary)                             \
    {method, allow, path, op, IMP_ROUTE_API, (flags) | IMP_EP_TEMPLATE, summary, handler},

static const imp_endpoint ENDPOINTS[] = {IMP_OPS_ROUTES(OPS_ROW) IMP_API_ENDPOINTS(API_ROW)
                                             IMP_API_TEMPLATE_ENDPOINTS(TEMPLATE_ROW)};

#define N_ENDPOINTS (sizeof ENDPOINTS / sizeof ENDPOINTS[0])

const imp_endpoint *imp_endpoints(size_t *n) {
    *n = N_ENDPOINTS;
    return ENDPOINTS;
}

int imp_endpoint_is_heavy(const imp_endpoint *ep, size_t body_len) {
    if (!ep || !ep->op) return 0; /* the operations routes are answered from the headers */
    if (ep->flags & IMP_EP_HEAVY) return 1;
    return body_len > ((ep->flags & IMP_EP_SCENE) ? IMP_EP_LIGHT_SCENE_BYTES : IMP_EP_LIGHT_BYTES);
}

int imp_endpoint_is_inline(const imp_endpoint *ep, size_t body_len) {
    return ep && (ep->flags & IMP_EP_PAIR) && body_len <= IMP_EP_INLINE_BYTES;
}

int imp_endpoint_match(const imp_endpoint *ep, const char *path, char *id, size_t cap) {
    static const char ID[] = "{id}";
    if (id && cap) id[0] = '\0';
    if (!(ep->flags & IMP_EP_TEMPLATE)) return strcmp(ep->path, path) == 0;
    const char *t = ep->path, *hole = strstr(t, ID);
    if (!hole) return strcmp(t, path) == 0;
    size_t pre = (size_t)(hole - t);
    if (strncmp(t, path, pre) != 0) return 0;
    const char *seg = path + pre, *end = seg + strcspn(seg, "/");
    if (end == seg || strcmp(hole + sizeof ID - 1, end) != 0) return 0;
    size_t n = (size_t)(end - seg);
    if (id && n < cap) {
        memcpy(id, seg, n);
        id[n] = '\0';
    }
    return 1;
}

const imp_endpoint *imp_endpoint_by_path(const char *path) {
    for (size_t i = 0; path && i < N_ENDPOINTS; ++i)
        if (imp_endpoint_match(&ENDPOINTS[i], path, NULL, 0)) return &ENDPOINTS[i];
    return NULL;
}

const imp_endpoint *imp_endpoint_find(const char *method, const char *path) {
    for (size_t i = 0; path && method && i < N_ENDPOINTS; ++i) {
        const imp_endpoint *ep = &ENDPOINTS[i];
        int same = strcmp(ep->method, method) == 0 ||
                   (strcmp(ep->method, "GET") == 0 && strcmp(method, "HEAD") == 0);
        if (same && imp_endpoint_match(ep, path, NULL, 0)) return ep;
    }
    return NULL;
}

const imp_endpoint *imp_endpoint_by_op(const char *op) {
    for (size_t i = 0; op && i < N_ENDPOINTS; ++i)
        if (ENDPOINTS[i].op && strcmp(ENDPOINTS[i].op, op) == 0) return &ENDPOINTS[i];
    return NULL;
}
