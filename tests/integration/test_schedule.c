/*
 * test_schedule.c - no request waits behind another: light requests beside
 * heavy simulations, work that stops when its client leaves, time budgets
 * over HTTP, a drain that ends on time whatever the workers do, and small pair
 * queries answered by their connection thread.
 *
 * DESIGN
 * How: a daemon with --threads 2 (one worker for heavy work, one always
 * free for light work). Heavy simulations (a gas of balls under gravity
 * that would run for many seconds) are sent on raw sockets that the test
 * closes itself; light requests (2-body predict and toi) go one after
 * another over one keep-alive libcurl handle, each timed. The gauges and
 * counters come from GET /metrics. Bounds are generous enough for ASan and
 * valgrind (the benchmark tests/bench/bench_schedule.sh measures the real
 * figures on a plain build); each test prints what it measured.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "daemon.h"

/* p99 of light latency beside heavy work (s): far above the few milliseconds measured on
 * a plain build, and what still holds under the sanitizers and valgrind. */
#define LIGHT_P99_BOUND_S 0.25
#define LIGHT_REQUESTS 200
#define HEAVY_REQUESTS 3
/* How soon work whose client left must be gone from the gauges (s); the contract says
 * 100 ms, this leaves room for a slow build and for the scrape itself. */
#define CANCEL_BOUND_S 1.0

static const char PREDICT[] =
    "{\"horizon\": 2, \"bodies\": [{\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
    " {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}]}";
static const char TOI[] = "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
                          " \"b\": {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}}";

/* A simulation that runs for many minutes: n balls falling in a box, bouncing forever, with
 * room for HEAVY_EVENTS contacts (a few microseconds each); daemons that take it are started
 * with --max-events HEAVY_EVENTS. */
#define HEAVY_EVENTS "100000000"
static imp_test_text heavy_simulation(int n, const char *budget) {
    imp_test_text t = {0};
    imp_test_printf(&t,
                    "{\"horizon\": 1e6, \"gravity\": [0, -9.8], \"record\": \"none\", "
                    "\"max_events\": " HEAVY_EVENTS ", %s \"bodies\": [",
                    budget);
    /* the box [0, 300]^2: each wall's solid side {x : normal . x <= offset} outside it */
    static const char *const walls[4] = {"[-1, 0], \"offset\": -300", "[1, 0], \"offset\": 0",
                                         "[0, -1], \"offset\": -300", "[0, 1], \"offset\": 0"};
    for (int w = 0; w < 4; ++w)
        imp_test_printf(
            &t,
            "{\"shape\": {\"type\": \"halfspace\", \"normal\": %s}, \"position\": [0, 0], "
            "\"static\": true},",
            walls[w]);
    for (int i = 0; i < n; ++i)
        imp_test_printf(&t, "%s{\"radius\": 0.5, \"position\": [%d, %d], \"velocity\": [%d, %d]}",
                        i ? "," : "", 2 + 3 * (i % 90), 2 + 3 * (i / 90), (i * 7) % 11 - 5,
                        (i * 5) % 13 - 6);
    imp_test_printf(&t, "]}");
    return t;
}

static int connect_to(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) fail_msg("cannot connect");
    return fd;
}

/* Sends a whole POST on a fresh connection and leaves it open; returns the socket. */
static int post_raw(unsigned port, const char *path, const char *body, size_t len) {
    int fd = connect_to(port);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     path, len);
    assert_int_equal(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
    for (size_t off = 0; off < len;) {
        ssize_t k = send(fd, body + off, len - off, MSG_NOSIGNAL);
        assert_true(k > 0);
        off += (size_t)k;
    }
    return fd;
}

/* Reads a reply to its end (the server closes or the body is complete) within `wait_s`. */
static char *read_reply(int fd, double wait_s) {
    imp_test_text t = {0};
    double end = imp_test_now_s() + wait_s;
    char buf[65536];
    for (;;) {
        double left = end - imp_test_now_s();
        if (left <= 0) break;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0) break;
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k <= 0) break;
        assert_int_equal(imp_test_buf_append(&t.p, &t.len, &t.cap, buf, (size_t)k), 0);
        const char *cl = strstr(t.p, "Content-Length: "), *body = strstr(t.p, "\r\n\r\n");
        if (cl && body && t.len >= (size_t)(body + 4 - t.p) + strtoul(cl + 16, NULL, 10)) break;
    }
    if (!t.p) assert_int_equal(imp_test_buf_append(&t.p, &t.len, &t.cap, "", 0), 0);
    return t.p;
}

/* A metric's value from GET /metrics (the first sample named exactly `name`). */
static double metric(CURL *curl, const imp_test_daemon *d, const char *name) {
    char url[128];
    snprintf(url, sizeof url, "%s/metrics", d->url);
    imp_http_result r;
    assert_int_equal(imp_http(curl, "GET", url, NULL, NULL, 0, &r), 0);
    assert_int_equal(r.status, 200);
    double v = -1;
    size_t n = strlen(name);
    for (const char *line = r.body; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n') ++line;
        if (strncmp(line, name, n) == 0 && line[n] == ' ') {
            v = strtod(line + n + 1, NULL);
            break;
        }
    }
    imp_http_result_free(&r);
    return v;
}

static double post_timed(CURL *curl, const imp_test_daemon *d, const char *path, const char *body) {
    char url[128];
    snprintf(url, sizeof url, "%s%s", d->url, path);
    imp_http_result r;
    double t0 = imp_test_now_s();
    assert_int_equal(imp_http(curl, "POST", url, "application/json", body, strlen(body), &r), 0);
    double dt = imp_test_now_s() - t0;
    if (r.status != 200) fail_msg("%s: status %ld %s", path, r.status, r.body);
    imp_http_result_free(&r);
    return dt;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Waits until `name` reads `want` (or less, with at_most); returns the seconds it took or
 * -1 after `limit_s`. */
static double wait_metric(CURL *curl, const imp_test_daemon *d, const char *name, double want,
                          double limit_s) {
    double t0 = imp_test_now_s();
    while (imp_test_now_s() - t0 < limit_s) {
        if (metric(curl, d, name) <= want) return imp_test_now_s() - t0;
        imp_test_sleep_ms(5);
    }
    return -1;
}

static void test_light_beside_heavy_and_cancellation(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        skip(); /* timing: memcheck slows the daemon tenfold and more */
    }
    const char *const args[] = {"--threads",  "2", "--io-threads", "2", "--max-events",
                                HEAVY_EVENTS, NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
    CURL *curl = curl_easy_init();
    imp_test_text heavy = heavy_simulation(3000, "\"time_budget_ms\": 120000,");
    int fds[HEAVY_REQUESTS];
    for (int i = 0; i < HEAVY_REQUESTS; ++i)
        fds[i] = post_raw(d.port, "/v1/scenes/simulate", heavy.p, heavy.len);
    /* heavy work under way: a worker is busy and all three are in flight */
    double t0 = imp_test_now_s();
    while (metric(curl, &d, "impactd_workers_busy") < 1 ||
           metric(curl, &d, "impactd_in_flight_requests") < HEAVY_REQUESTS) {
        assert_true(imp_test_now_s() - t0 < 30);
        imp_test_sleep_ms(5);
    }

    double lat[LIGHT_REQUESTS];
    for (int i = 0; i < LIGHT_REQUESTS; ++i)
        lat[i] =
            post_timed(curl, &d, i % 2 ? "/v1/toi" : "/v1/scenes/predict", i % 2 ? TOI : PREDICT);
    /* the heavy work is still running: nothing waited for it to end */
    assert_true(metric(curl, &d, "impactd_workers_busy") >= 1);
    qsort(lat, LIGHT_REQUESTS, sizeof lat[0], cmp_double);
    double p50 = lat[LIGHT_REQUESTS / 2], p99 = lat[LIGHT_REQUESTS * 99 / 100 - 1];
    printf("%d light requests beside %d heavy simulations (--threads 2): p50 %.2f ms, p99 %.2f "
           "ms, max %.2f ms\n",
           LIGHT_REQUESTS, HEAVY_REQUESTS, p50 * 1e3, p99 * 1e3, lat[LIGHT_REQUESTS - 1] * 1e3);
    assert_true(p99 < LIGHT_P99_BOUND_S);

    /* the heavy clients leave: their work stops and the workers are free again */
    double cancelled0 = metric(curl, &d, "impactd_cancelled_requests_total");
    double gone = imp_test_now_s();
    for (int i = 0; i < HEAVY_REQUESTS; ++i)
        close(fds[i]);
    double busy_s = wait_metric(curl, &d, "impactd_workers_busy", 0, 10);
    /* (the scrape itself is in flight while it is answered) */
    double flight_s = wait_metric(curl, &d, "impactd_in_flight_requests", 1, 10);
    double total = imp_test_now_s() - gone;
    printf("clients closed: workers free after %.0f ms, nothing else in flight after %.0f ms\n",
           busy_s * 1e3, flight_s >= 0 ? total * 1e3 : -1.0);
    assert_true(busy_s >= 0 && busy_s < CANCEL_BOUND_S);
    assert_true(flight_s >= 0 && total < CANCEL_BOUND_S);
    assert_true(metric(curl, &d, "impactd_cancelled_requests_total") >= cancelled0 + 1);
    /* and a light request right after is as quick as before */
    double after = post_timed(curl, &d, "/v1/toi", TOI);
    printf("a light request right after: %.2f ms\n", after * 1e3);
    assert_true(after < LIGHT_P99_BOUND_S);

    free(heavy.p);
    curl_easy_cleanup(curl);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
}

/* Over HTTP: a simulation answers 200 with stopped time_budget, scene work 503
 * time-budget-exceeded; both are counted. */
static void test_time_budget_over_http(void **state) {
    (void)state;
    const char *const args[] = {"--threads",  "2", "--time-budget-ms", "200", "--max-events",
                                HEAVY_EVENTS, NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
    CURL *curl = curl_easy_init();
    /* the server's default budget (200 ms here) stops the simulation */
    imp_test_text heavy = heavy_simulation(3000, "");
    char url[128];
    snprintf(url, sizeof url, "%s/v1/scenes/simulate", d.url);
    imp_http_result r;
    double t0 = imp_test_now_s();
    assert_int_equal(imp_http(curl, "POST", url, "application/json", heavy.p, heavy.len, &r), 0);
    double took = imp_test_now_s() - t0;
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"stopped\":\"time_budget\""));
    printf("a simulation with a 200 ms budget answered after %.0f ms\n", took * 1e3);
    imp_http_result_free(&r);
    /* a request may ask for less (and not for more than the server allows) */
    free(heavy.p);
    heavy = heavy_simulation(3000, "\"time_budget_ms\": 50,");
    assert_int_equal(imp_http(curl, "POST", url, "application/json", heavy.p, heavy.len, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"stopped\":\"time_budget\""));
    imp_http_result_free(&r);
    assert_true(metric(curl, &d, "impactd_time_budget_stops_total") >= 2);
    free(heavy.p);
    curl_easy_cleanup(curl);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
}

/* SIGTERM while a worker is inside a simulation that would run for minutes: at the drain
 * timeout the work stops, its client gets 503 draining, and the process exits within the
 * timeout plus a second. */
static void test_drain_ends_on_time(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        skip(); /* timing: memcheck slows the daemon tenfold and more */
    }
    const char *const args[] = {
        "--threads",  "2", "--drain-grace-s", "0", "--drain-timeout-s", "1", "--max-events",
        HEAVY_EVENTS, NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
    CURL *curl = curl_easy_init();
    imp_test_text heavy = heavy_simulation(3000, "\"time_budget_ms\": 600000,");
    int fd = post_raw(d.port, "/v1/scenes/simulate", heavy.p, heavy.len);
    double t0 = imp_test_now_s();
    while (metric(curl, &d, "impactd_workers_busy") < 1) {
        assert_true(imp_test_now_s() - t0 < 30);
        imp_test_sleep_ms(5);
    }
    curl_easy_cleanup(curl);
    double sent = imp_test_now_s();
    assert_int_equal(kill(d.pid, SIGTERM), 0);
    char *reply = read_reply(fd, 30);
    double answered = imp_test_now_s() - sent;
    int status;
    pid_t w;
    while ((w = waitpid(d.pid, &status, WNOHANG)) == 0 && imp_test_now_s() - sent < 30)
        imp_test_sleep_ms(5);
    double exited = imp_test_now_s() - sent;
    printf("SIGTERM during a long simulation (--drain-timeout-s 1): 503 after %.2f s, exit after "
           "%.2f s\n",
           answered, exited);
    assert_int_equal(w, d.pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    d.pid = 0;
    assert_non_null(strstr(reply, "HTTP/1.1 503"));
    assert_non_null(strstr(reply, "\"type\":\"draining\""));
    assert_true(exited < 1.0 + 1.0);
    free(reply);
    close(fd);
    free(heavy.p);
    if (d.out_fd >= 0) close(d.out_fd); /* reaped above */
}

/* A /v1/ccd request of CCD_QUERIES queries (the documented example's first two, again and
 * again), under IMP_EP_INLINE_BYTES (2 KiB): a small pair query. */
#define CCD_QUERIES 8
static imp_test_text ccd_request(void) {
    imp_test_text t = {0};
    imp_test_printf(&t, "{\"queries\": [");
    for (int i = 0; i < CCD_QUERIES; ++i)
        imp_test_printf(&t,
                        "%s{\"kind\": \"vertex-face\", \"start\": [[0.25, 0.25, 1], [0, 0, 0], "
                        "[1, 0, 0], [0, 1, 0]], \"end\": [[0.25, 0.25, -3], [0, 0, 0], [1, 0, 0], "
                        "[0, 1, 0]]}",
                        i ? ", " : "");
    imp_test_printf(&t, "]}");
    return t;
}

/* POST path with body; the reply must be 200, and its body is returned (malloc'd). */
static char *post_body(CURL *curl, const imp_test_daemon *d, const char *path, const char *body,
                       size_t len) {
    char url[128];
    snprintf(url, sizeof url, "%s%s", d->url, path);
    imp_http_result r;
    assert_int_equal(imp_http(curl, "POST", url, "application/json", body, len, &r), 0);
    if (r.status != 200) fail_msg("%s: status %ld %s", path, r.status, r.body);
    return r.body; /* the rest of r holds no memory */
}

/* A counter's value; 0 when the series is absent (metrics.c renders only non-zero ones). */
static double counted(CURL *curl, const imp_test_daemon *d, const char *name) {
    double v = metric(curl, d, name);
    return v < 0 ? 0 : v;
}

#define LIGHT_QUEUED "impactd_queue_wait_seconds_count{class=\"light\"}"
#define INLINE_ANSWERED "impactd_inline_requests_total"
#define INLINE_HANDED_OFF "impactd_inline_handoffs_total"

/* Small pair queries are answered by the connection thread (no queue wait is counted for them);
 * past 2 KiB a request goes to a worker; a query whose slice runs out goes to a worker too and
 * gets the same answer; with --inline-slice-us 0 every request goes to a worker. The counts are
 * exact: nothing else runs on these daemons. */
static void test_small_queries_on_connection_thread(void **state) {
    (void)state;
    imp_test_text ccd = ccd_request();
    assert_true(ccd.len <= 2048);
    /* /v1/toi's body padded past 2 KiB with white space: the same query, not small */
    imp_test_text big = {0};
    imp_test_printf(&big, "%s", TOI);
    while (big.len <= 2048)
        imp_test_printf(&big, "%100s", "");
    CURL *curl = curl_easy_init();

    /* a slice of a second (the most allowed): inline whatever the build (valgrind too) */
    const char *const plain[] = {"--threads", "2", "--inline-slice-us", "1000000", NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, plain, NULL, 0), 0);
    for (int i = 0; i < 10; ++i)
        post_timed(curl, &d, "/v1/toi", TOI);
    assert_true(counted(curl, &d, INLINE_ANSWERED) == 10);
    assert_true(counted(curl, &d, LIGHT_QUEUED) == 0);
    char *inline_answer = post_body(curl, &d, "/v1/ccd", ccd.p, ccd.len);
    assert_true(counted(curl, &d, INLINE_ANSWERED) == 11);
    free(post_body(curl, &d, "/v1/toi", big.p, big.len));
    assert_true(counted(curl, &d, INLINE_ANSWERED) == 11);
    assert_true(counted(curl, &d, LIGHT_QUEUED) == 1);
    assert_true(counted(curl, &d, INLINE_HANDED_OFF) == 0);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);

    /* a 1 us slice: over before the ccd endpoint's first poll, which comes after its body is
     * parsed and decoded (microseconds at the least) */
    const char *const tiny[] = {"--threads", "2", "--inline-slice-us", "1", NULL};
    assert_int_equal(imp_test_daemon_start(&d, tiny, NULL, 0), 0);
    char *handed_answer = post_body(curl, &d, "/v1/ccd", ccd.p, ccd.len);
    assert_string_equal(handed_answer, inline_answer);
    assert_true(counted(curl, &d, INLINE_HANDED_OFF) == 1);
    assert_true(counted(curl, &d, INLINE_ANSWERED) == 0);
    assert_true(counted(curl, &d, LIGHT_QUEUED) == 1);
    printf("/v1/ccd (%d queries, %zu bytes) answered inline and, past a 1 us slice, by a worker: "
           "the same %zu bytes\n",
           CCD_QUERIES, ccd.len, strlen(inline_answer));
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);

    const char *const off[] = {"--threads", "2", "--inline-slice-us", "0", NULL};
    assert_int_equal(imp_test_daemon_start(&d, off, NULL, 0), 0);
    post_timed(curl, &d, "/v1/toi", TOI);
    assert_true(counted(curl, &d, INLINE_ANSWERED) == 0);
    assert_true(counted(curl, &d, LIGHT_QUEUED) == 1);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);

    free(inline_answer);
    free(handed_answer);
    free(ccd.p);
    free(big.p);
    curl_easy_cleanup(curl);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_light_beside_heavy_and_cancellation),
        cmocka_unit_test(test_time_budget_over_http),
        cmocka_unit_test(test_drain_ends_on_time),
        cmocka_unit_test(test_small_queries_on_connection_thread),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
