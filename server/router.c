/*
 * router.c - routes, method and media-type checks, dispatch to api/.
 *
 * DESIGN
 * What: maps (method, path, Content-Type, body) to a reply. The routes are
 * the rows of the endpoint table (api/endpoint_table.h):
 *   GET|HEAD /healthz       -> 200 {"status":"ok"} while the process serves
 *   GET|HEAD /readyz        -> 200 {"status":"ready"}, or 503 while draining
 *   GET|HEAD /metrics       -> Prometheus text from the daemon's hook
 *   GET|HEAD /openapi.yaml  -> api/openapi.yaml, built into the binary
 *   GET|HEAD /viewer        -> viewer/index.html, built into the binary
 *   POST /v1/<op>           -> imp_api_handle_route(row, NULL, body)
 *   GET|HEAD|DELETE /v1/worlds/{id}, POST /v1/worlds/{id}/<query>
 *                           -> imp_api_handle_route(row, id, body)
 * Everything else is a problem+json from imp_api_problem: 404 for an
 * unknown path, 405 with Allow for a known path and the wrong method, 415
 * for a Content-Type that is present and not JSON, 413 over the size limit
 * (and, for the connection layer, 415 for a content coding other than gzip
 * and 400 for gzip that does not decode).
 * How: the checks that need no body live in imp_router_early, which the
 * connection layer calls as soon as the headers are in, so a doomed
 * request is answered before its body is read; imp_router_handle repeats
 * them and then dispatches, so it is complete on its own.
 * Why: keeping HTTP-library types out of here makes the whole request
 * decision one pure function, callable from a worker pool or a test, and
 * the checks run in the order a client can act on: path, method, media
 * type, size. The operations routes are answered from the headers alone,
 * on the connection thread, never queued behind work: a liveness or
 * readiness probe that timed out because the queue was full would get a
 * busy-but-healthy instance killed or pulled, which makes overload worse.
 */
#include "router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "api/problem.h"

/* Room for a path's {id} segment: a world id is 64 hex digits; a longer segment is passed
 * on as "" (no id), never cut to a prefix that could name another world. */
#define IMP_ROUTER_ID_MAX 72

static void problem(imp_errcode code, const char *detail, imp_reply *out) {
    memset(out, 0, sizeof *out);
    imp_api_problem(code, detail, NULL, &out->resp);
}

static void method_not_allowed(const char *allow, imp_reply *out) {
    char detail[64];
    snprintf(detail, sizeof detail, "this path accepts %s", allow);
    problem(IMP_E_METHOD, detail, out);
    out->allow = allow;
}

/* A 200 (or `status`) reply that owns a copy of `len` bytes of `body`. */
static void reply_copy(int status, const char *content_type, const char *body, size_t len,
                       imp_reply *out) {
    char *copy = malloc(len + 1);
    if (!copy) {
        problem(IMP_E_NOMEM, "out of memory", out);
        return;
    }
    memcpy(copy, body, len);
    copy[len] = '\0';
    memset(out, 0, sizeof *out);
    out->resp.status = status;
    out->resp.content_type = content_type;
    out->resp.body = copy;
    out->resp.len = len;
}

static void reply_json(int status, const char *body, imp_reply *out) {
    reply_copy(status, "application/json", body, strlen(body), out);
}

static void metrics(const imp_router *r, imp_reply *out) {
    static const char ct[] = "text/plain; version=0.0.4; charset=utf-8";
    if (!r->hooks.metrics) {
        reply_copy(200, ct, "", 0, out);
        return;
    }
    size_t len = 0;
    char *text = r->hooks.metrics(r->hooks.cls, &len);
    if (!text) {
        problem(IMP_E_NOMEM, "out of memory", out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->resp.status = 200;
    out->resp.content_type = ct;
    out->resp.body = text;
    out->resp.len = len;
}

static void get_route(const imp_router *r, imp_route which, imp_reply *out) {
    switch (which) {
    case IMP_ROUTE_HEALTHZ: reply_json(200, "{\"status\":\"ok\"}", out); return;
    case IMP_ROUTE_READYZ:
        if (!r->hooks.ready || r->hooks.ready(r->hooks.cls)) {
            reply_json(200, "{\"status\":\"ready\"}", out);
        } else {
            imp_router_unavailable(IMP_UNAVAILABLE_DRAINING, out);
            out->close = 0; /* the probe's connection may stay; only readiness changed */
        }
        return;
    case IMP_ROUTE_METRICS: metrics(r, out); return;
    case IMP_ROUTE_OPENAPI: {
        size_t len;
        const char *doc = imp_api_openapi(&len);
        reply_copy(200, "application/yaml", doc, len, out);
        return;
    }
    case IMP_ROUTE_VIEWER: {
        size_t len;
        const char *page = imp_api_viewer(&len);
        reply_copy(200, "text/html; charset=utf-8", page, len, out);
        return;
    }
    case IMP_ROUTE_API: problem(IMP_E_INTERNAL, "unrouted path", out); return;
    }
}

void imp_router_init(imp_router *r, size_t max_body_bytes, size_t max_bodies) {
    memset(r, 0, sizeof *r);
    imp_api_ctx_init(&r->api);
    r->api.max_bodies = max_bodies;
    r->max_body_bytes = max_body_bytes;
}

int imp_router_is_json(const char *ct) {
    static const char app[] = "application/";
    while (*ct == ' ' || *ct == '\t')
        ++ct;
    if (strncasecmp(ct, app, sizeof app - 1) != 0) return 0;
    const char *sub = ct + sizeof app - 1;
    size_t n = strcspn(sub, "; \t");
    /* after the subtype only parameters (";...") or whitespace may follow */
    const char *rest = sub + n;
    while (*rest == ' ' || *rest == '\t')
        ++rest;
    if (*rest != '\0' && *rest != ';') return 0;
    if (n == 4 && strncasecmp(sub, "json", 4) == 0) return 1;
    return n > 5 && strncasecmp(sub + n - 5, "+json", 5) == 0;
}

void imp_router_too_large(const imp_router *r, imp_reply *out) {
    char detail[96];
    snprintf(detail, sizeof detail, "the request body exceeds the limit of %zu bytes",
             r->max_body_bytes);
    problem(IMP_E_TOO_LARGE, detail, out);
}

void imp_router_unsupported_coding(imp_reply *out) {
    problem(IMP_E_MEDIA_TYPE,
            "the only content coding this server decodes is gzip; send the body as it is or "
            "with Content-Encoding: gzip",
            out);
    out->accept_encoding = "gzip";
}

void imp_router_bad_coding(const char *why, imp_reply *out) {
    problem(IMP_E_BAD_ENCODING, why, out);
}

void imp_router_bad_framing(imp_framing why, imp_reply *out) {
    switch (why) {
    case IMP_FRAMING_CONTROL_BYTE:
        problem(IMP_E_BAD_REQUEST,
                "the request target holds a percent-encoded control byte (%00 to %1F or %7F)", out);
        break;
    case IMP_FRAMING_TE_AND_LENGTH:
        problem(IMP_E_BAD_REQUEST,
                "Transfer-Encoding and Content-Length together: the body cannot be delimited "
                "safely (RFC 9112 section 6.3)",
                out);
        break;
    case IMP_FRAMING_TE_UNSUPPORTED:
        problem(IMP_E_NOT_IMPLEMENTED,
                "the only transfer coding this server accepts is chunked (RFC 9112 section 6.1)",
                out);
        break;
    }
    out->close = 1;
}

void imp_router_unavailable(imp_unavailable why, imp_reply *out) {
    if (why == IMP_UNAVAILABLE_DRAINING) {
        problem(IMP_E_DRAINING, "this instance is shutting down; retry on another one", out);
        out->close = 1;
    } else if (why == IMP_UNAVAILABLE_BUFFERS) {
        problem(IMP_E_OVERLOADED,
                "too many request bytes are being received at once; retry after the delay in "
                "Retry-After",
                out);
    } else {
        problem(IMP_E_OVERLOADED, "the work queue is full; retry after the delay in Retry-After",
                out);
    }
    out->retry_after = "1";
}

int imp_router_is_heavy(const char *path, size_t body_len) {
    return imp_endpoint_is_heavy(imp_endpoint_by_path(path), body_len);
}

int imp_router_is_inline(const char *path, size_t body_len) {
    return imp_endpoint_is_inline(imp_endpoint_by_path(path), body_len);
}

int imp_router_early(const imp_router *r, const char *method, const char *path,
                     const char *content_type, long long content_length, imp_reply *out) {
    const imp_endpoint *any = imp_endpoint_by_path(path);
    if (!any) {
        problem(IMP_E_NOT_FOUND, "there is no endpoint at this path", out);
        return 1;
    }
    const imp_endpoint *ep = imp_endpoint_find(method, path);
    if (!ep) {
        method_not_allowed(any->allow, out);
        return 1;
    }
    if (ep->route != IMP_ROUTE_API) {
        get_route(r, ep->route, out);
        return 1;
    }
    if (content_type && !imp_router_is_json(content_type)) {
        problem(IMP_E_MEDIA_TYPE, "send the request body as Content-Type: application/json", out);
        return 1;
    }
    if (content_length >= 0 && (unsigned long long)content_length > r->max_body_bytes) {
        imp_router_too_large(r, out);
        return 1;
    }
    return 0;
}

int imp_router_authorize(const imp_router *r, const char *method, const char *path,
                         const char *authorization, imp_reply *out) {
    if (!r->write_token) return 0;
    const imp_endpoint *ep = imp_endpoint_find(method, path);
    if (!ep || !ep->op || (strcmp(ep->op, "worlds") != 0 && strcmp(ep->op, "worlds/delete") != 0))
        return 0;
    /* "Bearer" is case-insensitive (RFC 9110 section 11.1); the token is compared whole, in
     * time that does not depend on where it differs */
    const char *tok = NULL;
    if (authorization && strncasecmp(authorization, "Bearer ", 7) == 0) {
        tok = authorization + 7;
        while (*tok == ' ')
            ++tok;
    }
    int ok = tok && strlen(tok) == r->write_token_len &&
             CRYPTO_memcmp(tok, r->write_token, r->write_token_len) == 0;
    if (ok) return 0;
    problem(IMP_E_UNAUTHORIZED,
            tok ? "the bearer token does not match" : "send Authorization: Bearer <token>", out);
    out->www_authenticate = tok ? "Bearer error=\"invalid_token\"" : "Bearer";
    return 1;
}

void imp_router_handle(const imp_router *r, const imp_request *req, imp_reply *out) {
    if (imp_router_early(r, req->method, req->path, req->content_type, (long long)req->len, out)) {
        return;
    }
    /* Only API routes get here; the body is never NULL for imp_api_handle. */
    memset(out, 0, sizeof *out);
    imp_api_ctx ctx = r->api; /* with this request's own stop check */
    ctx.parallel.stop = req->stop;
    const imp_endpoint *ep = imp_endpoint_find(req->method, req->path);
    char id[IMP_ROUTER_ID_MAX];
    imp_endpoint_match(ep, req->path, id, sizeof id);
    imp_api_handle_route(ep, id, req->body ? req->body : "", req->len, &ctx, &out->resp);
    /* the world store cannot be reached: the client may retry (the outage may be short, and
     * another replica may have the world cached) */
    if (out->resp.status == 503 && out->resp.body &&
        strstr(out->resp.body, "\"world-store-unavailable\""))
        out->retry_after = "1";
}

void imp_reply_free(imp_reply *out) {
    if (!out) return;
    imp_api_response_free(&out->resp);
    memset(out, 0, sizeof *out);
}
