/*
 * run.c - one endpoint run on one request, for the entry point (api/api.c)
 * and for batch items (api/ep_batch.c).
 *
 * DESIGN
 * What: calls an endpoint's handler through its table row and turns a
 * failure recorded in the decoding state into the problem object.
 * How: the handler answers a tree or text (imp_api_out); whatever it began
 * before failing is freed here, so a handler never leaks on an error path
 * it forgot. A batch item wants a tree: text is parsed back.
 * Every run has a time budget (api/budget.h) around the caller's stop
 * check: the endpoint's work polls it through ctx->parallel.stop.
 * Why a file of its own: the entry point and batch both run endpoints, and
 * batch is itself an endpoint; with the running here, neither api.c nor
 * ep_batch.c calls the other.
 */
#include <stdlib.h>
#include <string.h>

#include "api/budget.h"
#include "api/endpoints.h"

int imp_api_run(const imp_endpoint *ep, const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    memset(out, 0, sizeof *out);
    /* the request's budget wraps the caller's stop check for everything the endpoint runs */
    const imp_api_ctx *ctx = d->ctx;
    imp_budget budget;
    imp_budget_start(&budget, ctx->time_budget_ms, ctx->max_time_budget_ms, ctx->parallel.stop);
    imp_api_ctx rctx = *ctx;
    rctx.parallel.stop = (imp_stop){imp_budget_check, &budget};
    d->ctx = &rctx;
    d->budget = &budget;
    int failed = ep->fn(in, d, out) != 0;
    d->ctx = ctx;
    d->budget = NULL;
    if (!failed) return out->status ? out->status : 200;
    /* an endpoint that failed answers nothing; never leak what it began */
    json_decref(out->doc);
    free(out->text);
    memset(out, 0, sizeof *out);
    out->stopped = d->stopped;
    if (d->code == IMP_E_NOMEM) return 500;
    out->doc = imp_dec_problem(d);
    return out->doc ? imp_problem_status(d->code) : 500;
}

int imp_api_run_tree(const imp_endpoint *ep, const json_t *req, const imp_api_ctx *ctx,
                     json_t **doc) {
    imp_dec d;
    imp_dec_init(&d, ctx);
    imp_api_in in = {req, NULL, 0, NULL};
    imp_api_out o;
    int status = imp_api_run(ep, &in, &d, &o);
    *doc = o.doc;
    if (o.text) {
        /* a reply written as text, wanted as a tree */
        *doc = json_loadb(o.text, o.len, JSON_DECODE_ANY, NULL);
        free(o.text);
        if (!*doc) return 500;
    }
    return status;
}
