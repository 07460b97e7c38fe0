/*
 * ep_batch.c - POST /v1/batch: many requests in one.
 *
 * DESIGN
 * What: runs each item {"op", "body"} as its endpoint would run alone and
 * returns {"results": [{"status", "body"}, ...]} in request order; an
 * item's error is that item's result and never fails the others.
 * How: the envelope (the "requests" array and its size against
 * ctx->max_batch_items) is checked first; then items are spread over
 * ctx->parallel one index per chunk, each writing only its own slot of a
 * results array, and the response is assembled in order afterwards on the
 * calling thread. Item bodies are handed to the endpoint as the parsed
 * JSON they already are, not re-serialised. Problems about an item's
 * envelope (not an object, "op" missing or not served, "body" missing)
 * carry a pointer into the batch document ("/requests/3/op"); problems
 * inside a body are exactly what POST /v1/<op> answers for that body, so
 * their pointer is relative to the item's body ("/a/shape/radius").
 * Why: one index per chunk balances items of very different cost (a toi
 * next to a 10,000-body scene); the per-slot results make the output
 * independent of which thread ran what, so serial and parallel runs are
 * byte-identical. A batch inside a batch is refused: it would only be a
 * way around the item limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/encode.h"
#include "api/endpoints.h"

typedef struct item_result {
    int status;
    json_t *doc;    /* response or problem; NULL after allocation failure */
    int stopped_by; /* the batch's stop check stopped this item (or it never ran) */
} item_result;

typedef struct batch_run {
    const json_t *requests;
    const imp_api_ctx *ctx;      /* the batch's: its stop check is the batch's budget */
    const imp_api_ctx *item_ctx; /* the same, less a default budget of the items' own */
    item_result *results;
    size_t *order; /* the items in the order they are run: light ones first */
} batch_run;

/* The batch ops of the endpoint table, as "toi, overlap, ...", into buf. */
static void list_ops(char *buf, size_t cap) {
    size_t n, len = 0;
    const imp_endpoint *eps = imp_endpoints(&n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < cap; ++i) {
        if (!eps[i].op || (eps[i].flags & IMP_EP_NO_BATCH)) continue;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", eps[i].op);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* Checks item i's envelope; on success sets *ep and *body, else records
 * the error (pointer /requests/i/...) in d. */
static int decode_item(imp_dec *d, const json_t *item, const imp_endpoint **ep,
                       const json_t **body) {
    static const char *const MEMBERS[] = {"op", "body", NULL};
    if (imp_dec_strict_object(d, item, MEMBERS, NULL)) return -1;
    const json_t *op = json_object_get(item, "op");
    size_t saved = imp_dec_push_key(d, "op");
    if (!op) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_string(op)) return imp_dec_fail(d, IMP_E_TYPE, "must be a string");
    *ep = imp_endpoint_by_op(json_string_value(op));
    if (*ep && ((*ep)->flags & IMP_EP_NO_BATCH))
        return imp_dec_fail(d, IMP_E_VALUE, "must not be \"batch\": batches do not nest");
    if (!*ep) {
        list_ops(d->detail, sizeof d->detail);
        return imp_dec_fail(d, IMP_E_VALUE, "must name an endpoint this server offers");
    }
    imp_dec_pop(d, saved);
    *body = json_object_get(item, "body");
    if (!*body) return imp_dec_fail_at(d, "body", IMP_E_MISSING, "is required");
    return 0;
}

static void run_item(const batch_run *b, size_t i) {
    item_result *r = &b->results[i];
    /* once the batch must stop, the items not yet begun are not begun */
    if ((r->stopped_by = imp_stop_now(&b->ctx->parallel.stop)) != 0) return;
    imp_dec d;
    imp_dec_init(&d, b->ctx);
    imp_dec_push_key(&d, "requests");
    imp_dec_push_index(&d, i);
    const imp_endpoint *ep = NULL;
    const json_t *body = NULL;
    if (decode_item(&d, json_array_get(b->requests, i), &ep, &body) != 0) {
        r->doc = imp_dec_problem(&d);
        r->status = r->doc ? imp_problem_status(d.code) : 500;
        return;
    }
    r->status = imp_api_run_tree(ep, body, b->item_ctx, &r->doc);
    /* an item cut short by the batch's own stop (not by a budget of its own) */
    if (r->status == 503 || r->status == 499) r->stopped_by = imp_stop_now(&b->ctx->parallel.stop);
}

/* An item's cost class: 0 pairwise queries (and envelope errors), 1 scenes, 2 heavy. */
static int item_class(const json_t *item) {
    const json_t *op = json_object_get(item, "op");
    const imp_endpoint *ep = json_is_string(op) ? imp_endpoint_by_op(json_string_value(op)) : NULL;
    if (!ep) return 0;
    return (ep->flags & IMP_EP_HEAVY) ? 2 : (ep->flags & IMP_EP_SCENE) ? 1 : 0;
}

/* Items run cheapest class first, so that no light item waits for a heavy item's worker;
 * within each class, request order. */
static void order_items(const json_t *requests, size_t n, size_t *order) {
    size_t k = 0;
    for (int cls = 0; cls < 3; ++cls)
        for (size_t i = 0; i < n; ++i)
            if (item_class(json_array_get(requests, i)) == cls) order[k++] = i;
}

static void run_range(void *ctx, size_t begin, size_t end) {
    const batch_run *b = ctx;
    for (size_t i = begin; i < end; ++i)
        run_item(b, b->order[i]);
}

static const char OOM_ITEM[] = "out of memory";

int imp_ep_batch(const imp_api_in *in, imp_dec *d, imp_api_out *out) {
    const json_t *req = in->json;
    static const char *const MEMBERS[] = {"requests", NULL};
    if (imp_dec_request(d, req, MEMBERS, NULL)) return -1;
    const json_t *requests = json_object_get(req, "requests");
    imp_dec_push_key(d, "requests");
    if (!requests) return imp_dec_fail(d, IMP_E_MISSING, "is required");
    if (!json_is_array(requests)) return imp_dec_fail(d, IMP_E_TYPE, "must be an array");
    size_t n = json_array_size(requests);
    if (n > d->ctx->max_batch_items) {
        snprintf(d->detail, sizeof d->detail, "%zu items, the limit is %zu", n,
                 d->ctx->max_batch_items);
        return imp_dec_fail(d, IMP_E_LIMIT, "has more items than this server accepts");
    }

    imp_api_ctx item_ctx = *d->ctx;
    item_ctx.time_budget_ms = 0; /* an item's default is the batch's budget, which stops it */
    batch_run b = {requests, d->ctx, &item_ctx, calloc(n ? n : 1, sizeof(item_result)),
                   malloc((n ? n : 1) * sizeof(size_t))};
    if (!b.results || !b.order) {
        free(b.results);
        free(b.order);
        return imp_dec_fail(d, IMP_E_NOMEM, OOM_ITEM);
    }
    order_items(requests, n, b.order);
    imp_parallel_for(&d->ctx->parallel, n, 1, run_range, &b);
    free(b.order);
    size_t done = 0;
    int stopped_by = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!stopped_by) stopped_by = b.results[i].stopped_by;
        done += b.results[i].stopped_by == 0;
    }
    if (stopped_by) {
        /* the batch as a whole did not finish within its budget */
        for (size_t i = 0; i < n; ++i)
            json_decref(b.results[i].doc);
        free(b.results);
        char progress[64];
        snprintf(progress, sizeof progress, "%zu of %zu items done", done, n);
        imp_dec_pop(d, 0);
        return imp_dec_stopped(d, stopped_by, progress);
    }

    int ok = 1;
    json_t *results = json_array();
    if (!results) ok = 0;
    for (size_t i = 0; i < n; ++i) {
        json_t *doc = b.results[i].doc;
        if (!doc) {
            /* one item ran out of memory: its slot says so, the others stand */
            doc = imp_problem_doc(IMP_E_NOMEM, NULL, NULL);
            b.results[i].status = 500;
        }
        json_t *entry = ok ? json_object() : NULL;
        if (entry) {
            imp_put(entry, "status", json_integer(b.results[i].status), &ok);
            imp_put(entry, "body", doc, &ok);
            doc = NULL;
            if (json_array_append_new(results, entry) != 0) ok = 0;
        } else {
            ok = 0;
        }
        json_decref(doc);
    }
    free(b.results);
    json_t *o = ok ? json_object() : NULL;
    if (!o) {
        json_decref(results);
        return imp_dec_fail(d, IMP_E_NOMEM, OOM_ITEM);
    }
    imp_put(o, "results", results, &ok);
    if (!ok) {
        json_decref(o);
        return imp_dec_fail(d, IMP_E_NOMEM, OOM_ITEM);
    }
    out->doc = o;
    return 0;
}
