/*
 * problem.h - every problem the service answers, in one table: the error
 * code a decoder or the server records, and the HTTP status, problem type
 * and title it becomes (RFC 9457 application/problem+json).
 *
 * Thread-safety: the table is constant; every function is reentrant.
 */
#ifndef IMP_API_PROBLEM_H
#define IMP_API_PROBLEM_H

#include <jansson.h>

typedef enum imp_errcode {
    IMP_E_OK = 0,
    /* request content (api/decode.h records these) */
    IMP_E_MALFORMED,     /* 400 not JSON */
    IMP_E_TYPE,          /* 400 wrong JSON type */
    IMP_E_MISSING,       /* 400 required field absent */
    IMP_E_DIMENSION,     /* 400 vectors of mixed dimension */
    IMP_E_UNKNOWN_FIELD, /* 400 a member the contract does not define for that object */
    IMP_E_VALUE,         /* 422 a value out of its range */
    IMP_E_GEOMETRY,      /* 422 geometrically invalid */
    IMP_E_LIMIT,         /* 422 more than a configured limit */
    IMP_E_DUPLICATE_ID,  /* 422 two bodies of one request with the same id */
    IMP_E_UNSUPPORTED,   /* 422 a member the contract defines that this version does not serve */
    IMP_E_NOMEM,         /* 500 allocation failed */
    IMP_E_TIME_BUDGET,   /* 503 the request's time budget ran out */
    IMP_E_CANCELLED,     /* 499 the client closed its connection (nobody reads the reply) */
    /* HTTP (the server records these) */
    IMP_E_BAD_REQUEST,     /* 400 framing: control byte in the path, Content-Length with chunked */
    IMP_E_BAD_ENCODING,    /* 400 a gzip body that does not decode (corrupt, truncated, trailing) */
    IMP_E_NOT_FOUND,       /* 404 no endpoint at this path */
    IMP_E_METHOD,          /* 405 the path exists, the method does not */
    IMP_E_TOO_LARGE,       /* 413 the body exceeds --max-body-bytes */
    IMP_E_MEDIA_TYPE,      /* 415 a Content-Type that is not JSON, a Content-Encoding not gzip */
    IMP_E_INTERNAL,        /* 500 a bug */
    IMP_E_NOT_IMPLEMENTED, /* 501 a transfer coding other than chunked */
    IMP_E_OVERLOADED,      /* 503 work queue or request-buffer budget full */
    IMP_E_DRAINING,        /* 503 the instance is shutting down */
    IMP_E_UNKNOWN_WORLD,   /* 404 no world is stored under this id (or it is not an id) */
    IMP_E_STORE_UNAVAILABLE, /* 503 the world store cannot be reached, the world not cached */
    IMP_E_UNAUTHORIZED,      /* 401 a write to the world store without the bearer token */
    IMP_E_COUNT
} imp_errcode;

/* HTTP status of a code (500 for a value outside the enum). */
int imp_problem_status(imp_errcode code);
/* Problem type ("invalid-field") and title of a code (static strings). */
const char *imp_problem_type(imp_errcode code);
const char *imp_problem_title(imp_errcode code);

/* The problem+json object of a code; detail and pointer may be NULL. NULL on
 * allocation failure; the caller owns the result. */
json_t *imp_problem_doc(imp_errcode code, const char *detail, const char *pointer);

#endif
