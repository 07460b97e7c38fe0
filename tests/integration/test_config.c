/*
 * test_config.c - the daemon's command line, environment and log, as an
 * operator meets them: --help, rejection of bad settings with exit code 2
 * and a message naming the setting, precedence of flags over variables,
 * failure to listen (exit 1), and the three log formats.
 *
 * DESIGN
 * Each case runs the real binary (imp_test_run or a started daemon) and
 * checks exit codes and output, because these behaviours are what an
 * operator and a process supervisor see; the settings table itself has no
 * unit test file of its own yet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* Runs the daemon with args/env; asserts the exit code and that stderr
 * (or stdout for exit 0) mentions `needle`. */
static void expect_exit(const char *const *args, const char *const *env, int code,
                        const char *needle) {
    char *out = NULL, *err = NULL;
    int status = imp_test_run(args, env, &out, &err);
    if (status != code) {
        print_error("exit status %d, expected %d\nstdout: %s\nstderr: %s\n", status, code, out,
                    err);
        fail();
    }
    const char *where = code == 0 ? out : err;
    if (needle && !strstr(where, needle)) {
        print_error("output does not mention \"%s\":\n%s\n", needle, where);
        fail();
    }
    free(out);
    free(err);
}

static void test_help(void **state) {
    (void)state;
    static const char *const args[] = {"--help", NULL};
    char *out = NULL;
    assert_int_equal(imp_test_run(args, NULL, &out, NULL), 0);
    /* every setting appears with its flag and its variable */
    static const char *const names[] = {"--port",
                                        "IMPACTD_PORT",
                                        "--bind",
                                        "IMPACTD_BIND",
                                        "--threads",
                                        "IMPACTD_THREADS",
                                        "--max-body-bytes",
                                        "IMPACTD_MAX_BODY_BYTES",
                                        "--max-bodies",
                                        "IMPACTD_MAX_BODIES",
                                        "--queue-depth",
                                        "IMPACTD_QUEUE_DEPTH",
                                        "--idle-timeout-s",
                                        "IMPACTD_IDLE_TIMEOUT_S",
                                        "--inline-slice-us",
                                        "IMPACTD_INLINE_SLICE_US",
                                        "--log",
                                        "IMPACTD_LOG"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        if (!strstr(out, names[i])) {
            print_error("--help does not mention %s:\n%s\n", names[i], out);
            fail();
        }
    }
    free(out);
}

static void test_bad_flags_exit_2(void **state) {
    (void)state;
    static const char *const not_number[] = {"--port", "abc", NULL};
    static const char *const out_of_range[] = {"--port=70000", NULL};
    static const char *const negative[] = {"--max-body-bytes", "-1", NULL};
    static const char *const trailing[] = {"--threads", "4x", NULL};
    static const char *const unknown[] = {"--bogus", "1", NULL};
    static const char *const no_value[] = {"--port", NULL};
    static const char *const positional[] = {"serve", NULL};
    static const char *const bad_log[] = {"--log", "verbose", NULL};
    static const char *const bad_bind[] = {"--bind", "localhost", NULL};
    expect_exit(not_number, NULL, 2, "--port");
    expect_exit(out_of_range, NULL, 2, "--port");
    expect_exit(negative, NULL, 2, "--max-body-bytes");
    expect_exit(trailing, NULL, 2, "--threads");
    expect_exit(unknown, NULL, 2, "--bogus");
    expect_exit(no_value, NULL, 2, "--port");
    expect_exit(positional, NULL, 2, "serve");
    expect_exit(bad_log, NULL, 2, "--log");
    expect_exit(bad_bind, NULL, 2, "--bind");
}

static void test_bad_environment_exit_2(void **state) {
    (void)state;
    static const char *const port[] = {"IMPACTD_PORT=x", NULL};
    static const char *const log[] = {"IMPACTD_LOG=verbose", NULL};
    static const char *const timeout[] = {"IMPACTD_IDLE_TIMEOUT_S=-5", NULL};
    expect_exit(NULL, port, 2, "IMPACTD_PORT");
    expect_exit(NULL, log, 2, "IMPACTD_LOG");
    expect_exit(NULL, timeout, 2, "IMPACTD_IDLE_TIMEOUT_S");
}

/* A flag wins over its variable; the overridden variable is not even parsed. */
static void test_flag_overrides_environment(void **state) {
    (void)state;
    static const char *const env[] = {"IMPACTD_PORT=not-a-port", "IMPACTD_MAX_BODY_BYTES=64", NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, NULL, env, 0), 0);
    /* IMPACTD_MAX_BODY_BYTES from the environment is in force: 100 bytes is too many */
    char url[128], body[101];
    snprintf(url, sizeof url, "%s/v1/toi", d.url);
    memset(body, ' ', 100);
    body[100] = '\0';
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, 100, &r), 0);
    assert_int_equal(r.status, 413);
    imp_http_result_free(&r);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
}

static void test_port_in_use_exit_1(void **state) {
    (void)state;
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, NULL, NULL, 0), 0);
    char port[16];
    snprintf(port, sizeof port, "%u", d.port);
    const char *const args[] = {"--port", port, "--bind", "127.0.0.1", "--log", "off", NULL};
    expect_exit(args, NULL, 1, "cannot listen");
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
}

/* Starts a daemon with --log `format`, makes one GET /healthz, stops it and
 * returns its stderr (caller frees). */
static char *log_of_one_request(const char *format) {
    const char *const args[] = {"--log", format, NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 1), 0);
    char url[128];
    snprintf(url, sizeof url, "%s/healthz", d.url);
    imp_http_result r;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &r), 0);
    assert_int_equal(r.status, 200);
    imp_http_result_free(&r);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
    char *log = imp_test_daemon_read_stderr(&d);
    assert_non_null(log);
    return log;
}

static void test_log_json(void **state) {
    (void)state;
    char *log = log_of_one_request("json");
    int found = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t e;
        json_t *j = json_loads(line, 0, &e);
        if (!j) {
            print_error("log line is not JSON (%s): %s\n", e.text, line);
            fail();
        }
        assert_true(json_is_string(json_object_get(j, "ts")));
        assert_true(json_is_string(json_object_get(j, "level")));
        const json_t *path = json_object_get(j, "path");
        if (path && strcmp(json_string_value(path), "/healthz") == 0) {
            found = 1;
            assert_string_equal(json_string_value(json_object_get(j, "method")), "GET");
            assert_int_equal(json_integer_value(json_object_get(j, "status")), 200);
            assert_int_equal(json_integer_value(json_object_get(j, "bytes")),
                             15); /* {"status":"ok"}, compact like every reply */
            assert_true(json_is_number(json_object_get(j, "duration_ms")));
        }
        json_decref(j);
    }
    assert_true(found);
    free(log);
}

static void test_log_text(void **state) {
    (void)state;
    char *log = log_of_one_request("text");
    if (!strstr(log, "GET /healthz 200")) {
        print_error("no access line in:\n%s\n", log);
        fail();
    }
    free(log);
}

static void test_log_off(void **state) {
    (void)state;
    char *log = log_of_one_request("off");
    assert_string_equal(log, "");
    free(log);
}

int main(void) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_bad_flags_exit_2),
        cmocka_unit_test(test_bad_environment_exit_2),
        cmocka_unit_test(test_flag_overrides_environment),
        cmocka_unit_test(test_port_in_use_exit_1),
        cmocka_unit_test(test_log_json),
        cmocka_unit_test(test_log_text),
        cmocka_unit_test(test_log_off),
    };
    int failed = cmocka_run_group_tests_name("config", tests, NULL, NULL);
    curl_global_cleanup();
    return failed == 0 ? 0 : 1;
}
