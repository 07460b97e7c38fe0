/*
 * test_router.c - the router's write-token check (imp_router_authorize):
 * which routes need the token, the Bearer scheme, wrong and partial tokens,
 * and the 401 problem with WWW-Authenticate; a router without a token lets
 * everything through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "server/router.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static imp_router router_;

static int setup(void **state) {
    (void)state;
    imp_router_init(&router_, 1 << 20, 1000);
    router_.write_token = "tok-123";
    router_.write_token_len = strlen("tok-123");
    return 0;
}

/* 1 when the request is turned away (then the reply is checked: 401 unauthorized). */
static int refused(const char *method, const char *path, const char *authorization) {
    imp_reply r;
    memset(&r, 0x5a, sizeof r); /* poisoned: a refusal must fill every field */
    if (!imp_router_authorize(&router_, method, path, authorization, &r)) return 0;
    assert_int_equal(r.resp.status, 401);
    assert_string_equal(r.resp.content_type, "application/problem+json");
    json_t *doc = json_loads(r.resp.body, 0, NULL);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "type")), "unauthorized");
    json_decref(doc);
    assert_null(strstr(r.resp.body, "tok-123"));
    assert_non_null(r.www_authenticate);
    assert_int_equal(strncmp(r.www_authenticate, "Bearer", 6), 0);
    assert_null(r.retry_after);
    imp_reply_free(&r);
    return 1;
}

static void test_writes_need_the_token(void **state) {
    (void)state;
    assert_true(refused("POST", "/v1/worlds", NULL));
    assert_true(refused("DELETE", "/v1/worlds/" ID, NULL));
    assert_true(refused("POST", "/v1/worlds", "Bearer tok-12"));
    assert_true(refused("POST", "/v1/worlds", "Bearer tok-1234"));
    assert_true(refused("POST", "/v1/worlds", "Bearer TOK-123"));
    assert_true(refused("POST", "/v1/worlds", "Basic tok-123"));
    assert_true(refused("POST", "/v1/worlds", "tok-123"));
    assert_true(refused("POST", "/v1/worlds", "Bearer "));
    assert_false(refused("POST", "/v1/worlds", "Bearer tok-123"));
    assert_false(refused("POST", "/v1/worlds", "bearer tok-123")); /* the scheme: any case */
    assert_false(refused("DELETE", "/v1/worlds/" ID, "Bearer  tok-123"));
}

static void test_queries_need_none(void **state) {
    (void)state;
    assert_false(refused("GET", "/v1/worlds/" ID, NULL));
    assert_false(refused("HEAD", "/v1/worlds/" ID, NULL));
    assert_false(refused("POST", "/v1/worlds/" ID "/raycast", NULL));
    assert_false(refused("POST", "/v1/worlds/" ID "/validate", NULL));
    assert_false(refused("POST", "/v1/toi", NULL));
    assert_false(refused("GET", "/healthz", NULL));
    assert_false(refused("PUT", "/v1/worlds", NULL)); /* 405 is the router's, later */
    assert_false(refused("POST", "/nowhere", NULL));
}

static void test_no_token_configured(void **state) {
    (void)state;
    imp_router r;
    imp_router_init(&r, 1 << 20, 1000);
    imp_reply out;
    memset(&out, 0, sizeof out);
    assert_int_equal(imp_router_authorize(&r, "POST", "/v1/worlds", NULL, &out), 0);
    assert_int_equal(imp_router_authorize(&r, "DELETE", "/v1/worlds/" ID, "Bearer x", &out), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_need_the_token),
        cmocka_unit_test(test_queries_need_none),
        cmocka_unit_test(test_no_token_configured),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
