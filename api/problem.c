/*
 * problem.c - the one table of problems (see problem.h).
 *
 * DESIGN
 * What: code -> (status, type, title) for every problem the daemon, the CLI
 * and batch items answer, whether a decoder found it or the server did.
 * How: a designated-initialiser array indexed by the code; a test walks it
 * so that no code is left without a row.
 * Why: one place to read every error a client can get; the documentation
 * (docs/API.md) lists the same types.
 */
#include "api/problem.h"

#include "api/encode.h"

static const struct {
    int status;
    const char *type, *title;
} PROBLEMS[IMP_E_COUNT] = {
    [IMP_E_OK] = {200, "ok", "OK"},
    [IMP_E_MALFORMED] = {400, "malformed-json", "Request body is not valid JSON"},
    [IMP_E_TYPE] = {400, "wrong-type", "A field has the wrong type"},
    [IMP_E_MISSING] = {400, "missing-field", "A required field is missing"},
    [IMP_E_DIMENSION] = {400, "mixed-dimensions", "Vectors of different dimensions"},
    [IMP_E_UNKNOWN_FIELD] = {400, "unknown-field", "A member this object does not have"},
    [IMP_E_VALUE] = {422, "invalid-field", "A field's value is out of range"},
    [IMP_E_GEOMETRY] = {422, "invalid-geometry", "Geometrically invalid input"},
    [IMP_E_LIMIT] = {422, "limit-exceeded", "A configured limit was exceeded"},
    [IMP_E_DUPLICATE_ID] = {422, "duplicate-id", "Two bodies have the same id"},
    [IMP_E_UNSUPPORTED] = {422, "unsupported-field", "A field this version does not serve yet"},
    [IMP_E_NOMEM] = {500, "internal-error", "Out of memory"},
    [IMP_E_TIME_BUDGET] = {503, "time-budget-exceeded", "The request ran out of time"},
    [IMP_E_CANCELLED] = {499, "cancelled", "Client Closed Request"},
    [IMP_E_BAD_REQUEST] = {400, "bad-request", "Bad Request"},
    [IMP_E_BAD_ENCODING] = {400, "bad-content-encoding", "Request body does not decode"},
    [IMP_E_NOT_FOUND] = {404, "not-found", "Not Found"},
    [IMP_E_METHOD] = {405, "method-not-allowed", "Method Not Allowed"},
    [IMP_E_TOO_LARGE] = {413, "payload-too-large", "Payload Too Large"},
    [IMP_E_MEDIA_TYPE] = {415, "unsupported-media-type", "Unsupported Media Type"},
    [IMP_E_INTERNAL] = {500, "internal-error", "Internal Server Error"},
    [IMP_E_NOT_IMPLEMENTED] = {501, "not-implemented", "Not Implemented"},
    [IMP_E_OVERLOADED] = {503, "overloaded", "Service Unavailable"},
    [IMP_E_DRAINING] = {503, "draining", "Service Unavailable"},
    [IMP_E_UNKNOWN_WORLD] = {404, "unknown-world", "No world is stored under this id"},
    [IMP_E_STORE_UNAVAILABLE] = {503, "world-store-unavailable",
                                 "The world store cannot be reached"},
    [IMP_E_UNAUTHORIZED] = {401, "unauthorized", "A write to the world store needs the token"},
};

static int valid(imp_errcode code) {
    return code >= 0 && code < IMP_E_COUNT && PROBLEMS[code].type != NULL;
}

int imp_problem_status(imp_errcode code) { return valid(code) ? PROBLEMS[code].status : 500; }

const char *imp_problem_type(imp_errcode code) {
    return valid(code) ? PROBLEMS[code].type : PROBLEMS[IMP_E_INTERNAL].type;
}

const char *imp_problem_title(imp_errcode code) {
    return valid(code) ? PROBLEMS[code].title : PROBLEMS[IMP_E_INTERNAL].title;
}

json_t *imp_problem_doc(imp_errcode code, const char *detail, const char *pointer) {
    json_t *p = json_object();
    int ok = p != NULL;
    if (ok) {
        imp_put(p, "type", json_string(imp_problem_type(code)), &ok);
        imp_put(p, "title", json_string(imp_problem_title(code)), &ok);
        imp_put(p, "status", json_integer(imp_problem_status(code)), &ok);
        if (detail) imp_put(p, "detail", json_string(detail), &ok);
        if (pointer) imp_put(p, "pointer", json_string(pointer), &ok);
    }
    if (!ok) {
        json_decref(p);
        return NULL;
    }
    return p;
}
