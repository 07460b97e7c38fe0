/*
 * api.c - request bytes to response bytes: parse, dispatch, encode.
 *
 * DESIGN
 * What: the single entry point (imp_api_handle) that the daemon, the CLI
 * and the fuzz targets share, and the RFC 9457 problem documents.
 * How: jansson parses with duplicate keys rejected (an object with two
 * "radius" members has no single meaning) and every number read as a
 * double (so an integer literal too large for 64 bits is a number, not a
 * parse error). A table maps the operation name to its endpoint function;
 * errors recorded by the decoders become problem+json through the one
 * code-to-status table in decode.c.
 * Replies are written by api/jsonout.c (reals in their shortest round-trip
 * digits). The two scene endpoints first try api/scenetext.c, which decodes
 * sphere bodies straight from the text and leaves everything else, errors
 * included, to the jansson path; scene prediction writes its reply as text
 * (imp_dec.text), which a batch item parses back into a tree.
 * Why: one path for all callers keeps what is tested what is served.
 */
#include "api/api.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/endpoints.h"
#include "api/jsonout.h"
#include "api/scenetext.h"

static const struct {
    const char *name;
    imp_endpoint_fn fn;
} OPS[] = {
    {"toi", imp_ep_toi},
    {"batch", imp_ep_batch},
    {"scenes/predict", imp_ep_scenes_predict},
    {"scenes/simulate", imp_ep_scenes_simulate},
    {"paths/intersect", imp_ep_paths_intersect},
    {"overlap", imp_ep_overlap},
    {"respond", imp_ep_respond},
    {"validate", imp_ep_validate},
};

static const char PROBLEM_CT[] = "application/problem+json";
static const char JSON_CT[] = "application/json";
static char OOM_BODY[] = "{\"type\":\"internal-error\",\"title\":\"Out of memory\",\"status\":500}";

void imp_api_ctx_init(imp_api_ctx *ctx) {
    ctx->max_bodies = IMP_API_DEFAULT_MAX_BODIES;
    ctx->max_batch_items = IMP_API_DEFAULT_MAX_BATCH_ITEMS;
    ctx->max_events = IMP_API_DEFAULT_MAX_EVENTS;
    ctx->parallel.run = NULL;
    ctx->parallel.runner = NULL;
}

imp_endpoint_fn imp_api_find_op(const char *op) {
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; ++i)
        if (strcmp(OPS[i].name, op) == 0) return OPS[i].fn;
    return NULL;
}

int imp_api_has_op(const char *op) { return op && imp_api_find_op(op) != NULL; }

static void set_oom(imp_api_response *out) {
    out->status = 500;
    out->content_type = PROBLEM_CT;
    out->body = OOM_BODY;
    out->len = sizeof OOM_BODY - 1;
}

/* Serialises doc (stolen; NULL means allocation already failed). */
static void dump_into(json_t *doc, int status, imp_api_response *out) {
    size_t len = 0;
    char *s = doc ? imp_json_dump(doc, &len) : NULL;
    json_decref(doc);
    if (!s) {
        set_oom(out);
        return;
    }
    out->status = status;
    out->content_type = status >= 200 && status < 300 ? JSON_CT : PROBLEM_CT;
    out->body = s;
    out->len = len;
}

/* The reply of a run: the text an endpoint wrote (taken from d), or doc serialised. */
static void reply_into(imp_dec *d, json_t *doc, int status, imp_api_response *out) {
    if (!d->text) {
        dump_into(doc, status, out);
        return;
    }
    json_decref(doc);
    out->status = status;
    out->content_type = JSON_CT;
    out->body = d->text;
    out->len = d->text_len;
    d->text = NULL;
}

json_t *imp_api_problem_doc(int status, const char *type, const char *title, const char *detail,
                            const char *pointer) {
    json_t *p = json_object();
    int ok = p != NULL;
    if (ok) {
        imp_put(p, "type", json_string(type), &ok);
        imp_put(p, "title", json_string(title), &ok);
        imp_put(p, "status", json_integer(status), &ok);
        if (detail) imp_put(p, "detail", json_string(detail), &ok);
        if (pointer) imp_put(p, "pointer", json_string(pointer), &ok);
    }
    if (!ok) {
        json_decref(p);
        return NULL;
    }
    return p;
}

void imp_api_problem(int status, const char *type, const char *title, const char *detail,
                     const char *pointer, imp_api_response *out) {
    memset(out, 0, sizeof *out);
    dump_into(imp_api_problem_doc(status, type, title, detail, pointer), status, out);
}

/* "/a/shape/radius" -> "a.shape.radius", "/bodies/3/radius" -> "bodies[3].radius" */
static void dotted_path(const char *ptr, char *out, size_t cap) {
    size_t n = 0;
    for (const char *s = ptr; *s && n + 2 < cap;) {
        ++s; /* skip '/' */
        const char *end = strchr(s, '/');
        size_t seg = end ? (size_t)(end - s) : strlen(s);
        int numeric = seg > 0 && strspn(s, "0123456789") >= seg;
        if (numeric) {
            if (n + seg + 3 >= cap) break;
            out[n++] = '[';
            memcpy(out + n, s, seg);
            n += seg;
            out[n++] = ']';
        } else {
            if (n > 0) out[n++] = '.';
            for (size_t i = 0; i < seg && n + 2 < cap; ++i) {
                /* unescape ~0 and ~1 */
                if (s[i] == '~' && i + 1 < seg && (s[i + 1] == '0' || s[i + 1] == '1')) {
                    out[n++] = s[i + 1] == '0' ? '~' : '/';
                    ++i;
                } else {
                    out[n++] = s[i];
                }
            }
        }
        s += seg;
    }
    out[n] = '\0';
}

static const struct {
    const char *type, *title;
} ERR_TEXT[] = {
    [IMP_E_OK] = {"ok", "OK"},
    [IMP_E_MALFORMED] = {"malformed-json", "Request body is not valid JSON"},
    [IMP_E_TYPE] = {"wrong-type", "A field has the wrong type"},
    [IMP_E_MISSING] = {"missing-field", "A required field is missing"},
    [IMP_E_DIMENSION] = {"mixed-dimensions", "Vectors of different dimensions"},
    [IMP_E_VALUE] = {"invalid-field", "A field's value is out of range"},
    [IMP_E_GEOMETRY] = {"invalid-geometry", "Geometrically invalid input"},
    [IMP_E_LIMIT] = {"limit-exceeded", "A configured limit was exceeded"},
    [IMP_E_NOMEM] = {"internal-error", "Out of memory"},
};

json_t *imp_api_problem_from_dec(const imp_dec *d) {
    char path[IMP_PTR_MAX + 16], detail[IMP_PTR_MAX + 512];
    dotted_path(d->err_ptr, path, sizeof path);
    snprintf(detail, sizeof detail, "%s %s%s%s", path[0] ? path : "request body",
             d->msg ? d->msg : "is invalid", d->detail[0] ? ": " : "", d->detail);
    return imp_api_problem_doc(imp_errcode_status(d->code), ERR_TEXT[d->code].type,
                               ERR_TEXT[d->code].title, detail,
                               d->code == IMP_E_MALFORMED ? NULL : d->err_ptr);
}

int imp_api_run_dec(imp_endpoint_fn fn, const json_t *req, imp_dec *d, json_t **doc) {
    json_t *resp = NULL;
    if (fn(req, d, &resp) == 0) {
        *doc = resp;
        return 200;
    }
    free(d->text); /* an endpoint that failed wrote no reply; never leak one */
    d->text = NULL;
    *doc = d->code == IMP_E_NOMEM ? NULL : imp_api_problem_from_dec(d);
    return *doc ? imp_errcode_status(d->code) : 500;
}

int imp_api_run(imp_endpoint_fn fn, const json_t *req, const imp_api_ctx *ctx, json_t **doc) {
    imp_dec d;
    imp_dec_init(&d, ctx);
    int status = imp_api_run_dec(fn, req, &d, doc);
    if (d.text) {
        /* a reply written as text, wanted as a tree (a batch item) */
        *doc = json_loadb(d.text, d.text_len, JSON_DECODE_ANY, NULL);
        free(d.text);
        if (!*doc) return 500;
    }
    return status;
}

int imp_api_handle(const char *op, const char *body, size_t len, const imp_api_ctx *ctx,
                   imp_api_response *out) {
    memset(out, 0, sizeof *out);
    imp_endpoint_fn fn = op ? imp_api_find_op(op) : NULL;
    if (!fn) {
        /* op is not echoed: it may not even be valid UTF-8 */
        imp_api_problem(404, "not-found", "No such endpoint", NULL, NULL, out);
        return out->status;
    }
    imp_dec d;
    imp_dec_init(&d, ctx);
    json_t *doc = NULL;
    if (fn == imp_ep_scenes_predict || fn == imp_ep_scenes_simulate) {
        /* many spheres: decoded from the text, without a jansson tree (api/scenetext.h) */
        int status = 0;
        if (imp_scenetext_run(fn, body, len, &d, &doc, &status)) {
            reply_into(&d, doc, status, out);
            return out->status;
        }
    }
    json_error_t jerr;
    /* JSON_DECODE_ANY: a scalar is valid JSON, just the wrong type (400 wrong-type
     * at ""), the same answer a batch item with that body gets. */
    json_t *req =
        json_loadb(body ? body : "", len,
                   JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &jerr);
    if (!req) {
        d.code = IMP_E_MALFORMED;
        d.msg = "is not valid JSON";
        snprintf(d.detail, sizeof d.detail, "%s (line %d, column %d)", jerr.text, jerr.line,
                 jerr.column);
        /* jansson quotes the bytes near the error, which may be half a UTF-8 sequence: a
         * detail that is not valid UTF-8 cannot become a JSON string (the problem would be
         * lost to a 500), so anything but printable ASCII is shown as '?' */
        for (char *q = d.detail; *q; ++q)
            if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
        dump_into(imp_api_problem_from_dec(&d), 400, out);
        return out->status;
    }
    int status = imp_api_run_dec(fn, req, &d, &doc);
    json_decref(req);
    reply_into(&d, doc, status, out);
    return out->status;
}

void imp_api_response_free(imp_api_response *out) {
    if (!out) return;
    if (out->body && out->body != OOM_BODY) free(out->body);
    memset(out, 0, sizeof *out);
}
