/*
 * replies.h - integration-test helpers for JSON replies: post a request
 * and parse the answer, look up a member by a dotted path, and assert
 * numbers, vectors and problem+json answers (cmocka failures with the
 * request in the message).
 */
#ifndef IMP_TEST_REPLIES_H
#define IMP_TEST_REPLIES_H

#include <jansson.h>
#include <stddef.h>

#include "daemon.h"

/* POSTs `body` with Content-Type `ct` to d's `path`; returns the reply parsed
 * (the test fails when it is not JSON; caller decrefs), its status, and its
 * content type into ctype (cap bytes) when ctype is not NULL. */
json_t *imp_test_post_json(const imp_test_daemon *d, const char *path, const char *ct,
                           const char *body, long *status, char *ctype, size_t cap);

/* POSTs JSON text `body` to d's `path` and expects 200 application/json;
 * returns the parsed reply (caller decrefs). */
json_t *imp_test_post_ok(const imp_test_daemon *d, const char *path, const char *body);

/* o's member at a dotted path: "stats.bodies", "collisions.0.point.1"
 * (numbers index arrays). NULL when absent. */
json_t *imp_test_member(const json_t *o, const char *path);

/* The member at `path` is a number within tol of want. */
void imp_test_expect_real(const json_t *r, const char *path, double want, double tol);

/* The member at `path` is an array of n numbers, each within tol of want[i]. */
void imp_test_expect_vec(const json_t *r, const char *path, const double *want, size_t n,
                         double tol);

/* POSTing `body` (JSON) to `path` answers application/problem+json with
 * status want_status (also in the body), type want_type (NULL: any), pointer
 * want_pointer (NULL: no pointer) and a detail containing want_detail
 * (NULL: any). */
void imp_test_expect_problem(const imp_test_daemon *d, const char *path, const char *body,
                             long want_status, const char *want_type, const char *want_pointer,
                             const char *want_detail);

#endif
