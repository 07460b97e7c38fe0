/*
 * replies.c - see replies.h.
 */
#include "replies.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

json_t *imp_test_post_json(const imp_test_daemon *d, const char *path, const char *ct,
                           const char *body, long *status, char *ctype, size_t cap) {
    char url[200];
    snprintf(url, sizeof url, "%s%s", d->url, path);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, ct, body, strlen(body), &r), 0);
    *status = r.status;
    if (ctype) snprintf(ctype, cap, "%s", r.content_type);
    json_error_t err;
    json_t *reply = json_loads(r.body, 0, &err);
    if (!reply) fail_msg("reply to %.200s is not JSON: %.200s", body, r.body);
    imp_http_result_free(&r);
    return reply;
}

json_t *imp_test_post_ok(const imp_test_daemon *d, const char *path, const char *body) {
    long status;
    char ct[128];
    json_t *r = imp_test_post_json(d, path, "application/json", body, &status, ct, sizeof ct);
    if (status != 200) {
        char *s = json_dumps(r, JSON_COMPACT);
        fail_msg("%s: got %ld %s", body, status, s ? s : "");
    }
    assert_string_equal(ct, "application/json");
    return r;
}

json_t *imp_test_member(const json_t *o, const char *path) {
    json_t *cur = (json_t *)o;
    char buf[160];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
        cur =
            json_is_array(cur) ? json_array_get(cur, (size_t)atoi(tok)) : json_object_get(cur, tok);
    return cur;
}

void imp_test_expect_real(const json_t *r, const char *path, double want, double tol) {
    const json_t *x = imp_test_member(r, path);
    if (!json_is_number(x)) fail_msg("%s is not a number", path);
    double got = json_number_value(x);
    if (!(fabs(got - want) <= tol))
        fail_msg("%s = %.17g, want %.17g (+- %g)", path, got, want, tol);
}

void imp_test_expect_vec(const json_t *r, const char *path, const double *want, size_t n,
                         double tol) {
    const json_t *v = imp_test_member(r, path);
    if (!json_is_array(v) || json_array_size(v) != n)
        fail_msg("%s is not an array of %zu numbers", path, n);
    for (size_t i = 0; i < n; ++i) {
        const json_t *x = json_array_get(v, i);
        if (!json_is_number(x)) fail_msg("%s[%zu] is not a number", path, i);
        double got = json_number_value(x);
        if (!(fabs(got - want[i]) <= tol))
            fail_msg("%s[%zu] = %.17g, want %.17g (+- %g)", path, i, got, want[i], tol);
    }
}

void imp_test_expect_problem(const imp_test_daemon *d, const char *path, const char *body,
                             long want_status, const char *want_type, const char *want_pointer,
                             const char *want_detail) {
    long status;
    char ct[128];
    json_t *r = imp_test_post_json(d, path, "application/json", body, &status, ct, sizeof ct);
    const char *pointer = json_string_value(json_object_get(r, "pointer"));
    const char *type = json_string_value(json_object_get(r, "type"));
    const char *detail = json_string_value(json_object_get(r, "detail"));
    if (status != want_status || strcmp(ct, "application/problem+json") != 0 || !type ||
        (want_type && strcmp(type, want_type) != 0) ||
        (want_pointer ? !pointer || strcmp(pointer, want_pointer) != 0 : pointer != NULL) ||
        json_integer_value(json_object_get(r, "status")) != want_status ||
        (want_detail && (!detail || !strstr(detail, want_detail))))
        fail_msg("%s: got %ld %s %s pointer %s detail %s", body, status, ct, type ? type : "-",
                 pointer ? pointer : "(none)", detail ? detail : "(none)");
    json_decref(r);
}
