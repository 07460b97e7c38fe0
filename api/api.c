/*
 * api.c - request bytes to response bytes: find the endpoint, parse, run,
 * encode.
 *
 * DESIGN
 * What: the single entry point (imp_api_handle) that the daemon, the CLI
 * and the fuzz targets share, and the problem documents built outside the
 * endpoints.
 * How: the endpoint comes from the table (api/endpoints.c). Its request is
 * parsed by imp_dec_parse (duplicate keys rejected, every number a double),
 * except for IMP_EP_TEXT endpoints, which get the text and parse what they
 * do not decode from it themselves (the scene endpoints' sphere bodies,
 * api/scenetext.c). An endpoint answers a tree or, where a tree would cost
 * more than the solve, text; both leave here as bytes, written by
 * api/jsonout.c (reals in their shortest round-trip digits). Errors
 * recorded in the decoding state become problem+json through the one table
 * of api/problem.c.
 * Why: one path for all callers keeps what is tested what is served.
 */
#include "api/api.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/endpoints.h"
#include "api/jsonout.h"
#include "api/problem.h"

static const char PROBLEM_CT[] = "application/problem+json";
static const char JSON_CT[] = "application/json";
static char OOM_BODY[] = "{\"type\":\"internal-error\",\"title\":\"Out of memory\",\"status\":500}";

void imp_api_ctx_init(imp_api_ctx *ctx) {
    ctx->max_bodies = IMP_API_DEFAULT_MAX_BODIES;
    ctx->max_batch_items = IMP_API_DEFAULT_MAX_BATCH_ITEMS;
    ctx->max_events = IMP_API_DEFAULT_MAX_EVENTS;
    ctx->max_world_triangles = IMP_API_DEFAULT_MAX_WORLD_TRIANGLES;
    ctx->worlds = NULL;
    ctx->parallel = (imp_parallel){NULL, NULL, {NULL, NULL}};
    ctx->time_budget_ms = IMP_API_DEFAULT_TIME_BUDGET_MS;
    ctx->max_time_budget_ms = IMP_API_DEFAULT_MAX_TIME_BUDGET_MS;
}

static void set_oom(imp_api_response *out) {
    out->status = 500;
    out->content_type = PROBLEM_CT;
    out->body = OOM_BODY;
    out->len = sizeof OOM_BODY - 1;
}

/* The response of a run: the text an endpoint wrote, or its tree (a reply or a problem)
 * serialised. Takes what `o` holds. */
static void respond(int status, imp_api_out *o, imp_api_response *out) {
    char *s = o->text;
    size_t len = o->len;
    int stopped = o->stopped;
    char location[IMP_API_LOCATION_MAX];
    memcpy(location, o->location, sizeof location);
    if (!s && o->doc) s = imp_json_dump(o->doc, &len);
    json_decref(o->doc);
    memset(o, 0, sizeof *o);
    if (!s) {
        set_oom(out);
        return;
    }
    out->status = status;
    out->content_type = status >= 200 && status < 300 ? JSON_CT : PROBLEM_CT;
    out->body = s;
    out->len = len;
    out->stopped = stopped;
    memcpy(out->location, location, sizeof location);
}

void imp_api_problem(int code, const char *detail, const char *pointer, imp_api_response *out) {
    memset(out, 0, sizeof *out);
    imp_api_out o = {imp_problem_doc((imp_errcode)code, detail, pointer), NULL, 0, 0, 0, ""};
    respond(imp_problem_status((imp_errcode)code), &o, out);
}

int imp_api_handle(const char *op, const char *body, size_t len, const imp_api_ctx *ctx,
                   imp_api_response *out) {
    return imp_api_handle_route(imp_endpoint_by_op(op), NULL, body, len, ctx, out);
}

int imp_api_handle_route(const imp_endpoint *ep, const char *id, const char *body, size_t len,
                         const imp_api_ctx *ctx, imp_api_response *out) {
    memset(out, 0, sizeof *out);
    if (!ep || !ep->fn) {
        /* op is not echoed: it may not even be valid UTF-8 */
        imp_api_problem(IMP_E_NOT_FOUND, "there is no endpoint at this path", NULL, out);
        return out->status;
    }
    imp_dec d;
    imp_dec_init(&d, ctx);
    imp_api_in in = {NULL, body ? body : "", len, id};
    imp_api_out o = {NULL, NULL, 0, 0, 0, ""};
    json_t *req = NULL;
    int status;
    if (!(ep->flags & IMP_EP_TEXT) && !(in.json = req = imp_dec_parse(&d, in.text, len))) {
        o.doc = imp_dec_problem(&d);
        status = imp_problem_status(d.code);
    } else {
        status = imp_api_run(ep, &in, &d, &o);
    }
    json_decref(req);
    respond(status, &o, out);
    return out->status;
}

void imp_api_response_free(imp_api_response *out) {
    if (!out) return;
    if (out->body && out->body != OOM_BODY) free(out->body);
    memset(out, 0, sizeof *out);
}
