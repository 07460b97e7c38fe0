/*
 * test_service.c - the daemon as a service under load and abuse: overload
 * answered 503 and recovered from, light work ahead of heavy, slow, idle
 * and vanishing clients cut or cleaned up, /metrics that move exactly with
 * traffic, the operations routes, /v1/batch against its items sent one by
 * one, the access log, and the service settings on the command line.
 *
 * DESIGN
 * One cmocka group per daemon configuration; each group starts its daemon
 * on a kernel-chosen 127.0.0.1 port in the group setup and stops it with
 * SIGTERM in the teardown, where any exit but 0 (a crash, a sanitizer
 * report) is counted as a failure of the run. Tests that need a daemon of
 * their own start and stop it themselves.
 * Concurrency comes from libcurl's multi interface (many transfers on one
 * thread, each on its own connection); slow clients are raw sockets, run
 * on helper threads when several must trickle at once. Helper threads
 * never call cmocka asserts: they fill a result struct that the test
 * thread checks after joining.
 * Nothing asserts how fast the daemon is. Ordering is asserted through
 * the order in which transfers complete, and time only through generous
 * upper bounds (a deadline of 1 s must cut a connection within 5 s).
 * Where a scenario depends on the machine's speed (work queued longer
 * than a deadline, requests served while tricklers are still connected),
 * the test measures first or retries, rather than assuming a speed.
 * /metrics is read with a small parser of the Prometheus text format that
 * matches a series by name and by its exact label set, so a counter is
 * compared by value before and after a known set of requests, and the
 * gauges show that cut and abandoned connections leave nothing behind.
 * The batch test generates its requests from a fixed seed (printed on
 * failure) and compares each batch item with the same body sent alone;
 * the generator also knows the status each body must get, so the
 * comparison is anchored to an independent expectation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* ---- shared constants ---------------------------------------------------------------------- */

/* Two circles of radius 0.5, 3 apart, closing at speed 2: they touch at t = 1 exactly. */
#define HEAD_ON                                                                                    \
    "{\"a\":{\"radius\":0.5,\"position\":[0,0],\"velocity\":[1,0]},"                               \
    "\"b\":{\"radius\":0.5,\"position\":[3,0],\"velocity\":[-1,0]}}"

/* Items in one heavy batch: the server's default --max-batch-items, and
 * enough work (tens of ms) that concurrent batches pile up on one worker. */
#define HEAVY_ITEMS 10000
/* Concurrent heavy batches in the overload test. */
#define OVERLOAD_REQUESTS 24
/* Heavy batches ahead of the light request in the lanes test. */
#define LANES_HEAVY 6
/* The deadline test queues heavy batches behind one worker until the last
 * waits at least this long (s): past the 1 s deadline plus a whole tick
 * period, so a deadline wrongly left running would surely be enforced. */
#define QUEUE_WAIT_S 4.0
#define QUEUED_HEAVY_MAX 40
/* Upper bound (s) for a connection past a 1 s deadline to be closed: the
 * deadline is checked about once a second, so 2 s would do; 5 is generous. */
#define CUT_WITHIN_S 5.0
/* Interval (ms) between the bytes of a trickling client. */
#define TRICKLE_MS 200
/* Whole-transfer limit (s) of the multi transfers: far above any of them. */
#define MULTI_TIMEOUT_S 60L
/* Random requests in the batch-equals-singles test, and the seed. */
#define RANDOM_REQUESTS 200
#define RANDOM_SEED 0x5eed1234abcdULL

/* ---- group daemons ------------------------------------------------------------------------- */

static imp_test_daemon overload_daemon; /* --threads 1 --queue-depth 1 --inline-slice-us 0 */
static imp_test_daemon lanes_daemon;    /* --threads 2 */
static imp_test_daemon slow_daemon;     /* --threads 1, 1 s idle and request deadlines,
                                           --max-batch-items 50000 */
static imp_test_daemon limit_daemon;    /* --max-connections 3, 1 s deadlines */
static imp_test_daemon main_daemon;     /* --threads 2: metrics, operations routes, batch */
static int teardown_failures;

#define MAIN_THREADS 2

static int start_with(imp_test_daemon *d, const char *const *args) {
    if (imp_test_daemon_start(d, args, NULL, 0) != 0) {
        fprintf(stderr, "cannot start the daemon\n");
        return -1;
    }
    return 0;
}

static int stop_group_daemon(imp_test_daemon *d, const char *name) {
    int status = imp_test_daemon_stop(d, SIGTERM);
    if (status != 0) {
        fprintf(stderr, "%s daemon exited with %d after SIGTERM\n", name, status);
        ++teardown_failures;
    }
    return status == 0 ? 0 : -1;
}

static int start_overload(void **state) {
    (void)state;
    /* every request through the queue, small pair queries too (which would otherwise be
     * answered by their connection thread, queue full or not) */
    static const char *const args[] = {"--threads", "1", "--queue-depth", "1", "--inline-slice-us",
                                       "0",         NULL};
    return start_with(&overload_daemon, args);
}
static int stop_overload(void **state) {
    (void)state;
    return stop_group_daemon(&overload_daemon, "overload");
}
static int start_lanes(void **state) {
    (void)state;
    static const char *const args[] = {"--threads", "2", NULL};
    return start_with(&lanes_daemon, args);
}
static int stop_lanes(void **state) {
    (void)state;
    return stop_group_daemon(&lanes_daemon, "lanes");
}
static int start_slow(void **state) {
    (void)state;
    static const char *const args[] = {
        "--threads", "1", "--idle-timeout-s", "1", "--request-timeout-s", "1", "--max-batch-items",
        "50000",     NULL};
    return start_with(&slow_daemon, args);
}
static int stop_slow(void **state) {
    (void)state;
    return stop_group_daemon(&slow_daemon, "slow");
}
static int start_limit(void **state) {
    (void)state;
    static const char *const args[] = {
        "--max-connections", "3", "--idle-timeout-s", "1", "--request-timeout-s", "1", NULL};
    return start_with(&limit_daemon, args);
}
static int stop_limit(void **state) {
    (void)state;
    return stop_group_daemon(&limit_daemon, "connection-limit");
}
static int start_main(void **state) {
    (void)state;
    static const char *const args[] = {"--threads", "2", NULL};
    return start_with(&main_daemon, args);
}
static int stop_main(void **state) {
    (void)state;
    return stop_group_daemon(&main_daemon, "main");
}

/* ---- small helpers ------------------------------------------------------------------------- */

static void url_of(const imp_test_daemon *d, const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s%s", d->url, path);
}

static void post_json(void *curl, const imp_test_daemon *d, const char *path, const char *body,
                      size_t len, imp_http_result *r) {
    char url[256];
    url_of(d, path, url, sizeof url);
    if (imp_http(curl, "POST", url, "application/json", body, len, r) != 0) {
        print_error("POST %s: no HTTP response\n", path);
        fail();
    }
}

static void get(const imp_test_daemon *d, const char *path, imp_http_result *r) {
    char url[256];
    url_of(d, path, url, sizeof url);
    if (imp_http(NULL, "GET", url, NULL, NULL, 0, r) != 0) {
        print_error("GET %s: no HTTP response\n", path);
        fail();
    }
}

static json_t *parse_json(const char *text, size_t len) {
    json_error_t e;
    json_t *j = json_loadb(text, len, 0, &e);
    if (!j) {
        print_error("not JSON (%s): %.400s\n", e.text, text);
        fail();
    }
    return j;
}

/* "application/json; charset=utf-8" matches "application/json". */
static int media_type_is(const char *content_type, const char *expected) {
    size_t n = strcspn(content_type, ";");
    while (n > 0 && content_type[n - 1] == ' ')
        --n;
    return n == strlen(expected) && strncasecmp(content_type, expected, n) == 0;
}

static void assert_media_type(const char *content_type, const char *expected) {
    if (!media_type_is(content_type, expected)) {
        print_error("Content-Type is \"%s\", expected %s\n", content_type, expected);
        fail();
    }
}

static void assert_status(const imp_http_result *r, long status) {
    if (r->status != status) {
        print_error("HTTP status %ld, expected %ld; body: %.400s\n", r->status, status, r->body);
        fail();
    }
}

static const char *str_member(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "(missing)";
}

/* A problem document (already parsed): status member, and pointer when given. */
static void assert_problem_doc(const json_t *p, long status, const char *pointer) {
    if (!json_is_object(p) || !json_is_string(json_object_get(p, "type")) ||
        !json_is_string(json_object_get(p, "title")) ||
        json_integer_value(json_object_get(p, "status")) != status) {
        char *s = json_dumps(p, JSON_COMPACT);
        print_error("not a problem document with status %ld: %s\n", status, s ? s : "?");
        free(s);
        fail();
    }
    if (pointer && strcmp(str_member(p, "pointer"), pointer) != 0) {
        print_error("problem pointer \"%s\", expected \"%s\"\n", str_member(p, "pointer"), pointer);
        fail();
    }
}

static void assert_problem(const imp_http_result *r, long status, const char *pointer) {
    assert_status(r, status);
    assert_media_type(r->content_type, "application/problem+json");
    json_t *j = parse_json(r->body, r->len);
    assert_problem_doc(j, status, pointer);
    json_decref(j);
}

/* POST /v1/toi HEAD_ON must answer 200 with time exactly 1. */
static void assert_head_on_ok(void *curl, const imp_test_daemon *d) {
    imp_http_result r;
    post_json(curl, d, "/v1/toi", HEAD_ON, strlen(HEAD_ON), &r);
    assert_status(&r, 200);
    json_t *j = parse_json(r.body, r.len);
    assert_string_equal(str_member(j, "status"), "hit");
    assert_true(json_real_value(json_object_get(j, "time")) == 1.0);
    json_decref(j);
    imp_http_result_free(&r);
}

static void assert_healthy(const imp_test_daemon *d) {
    imp_http_result r;
    get(d, "/healthz", &r);
    assert_status(&r, 200);
    json_t *j = parse_json(r.body, r.len);
    assert_string_equal(str_member(j, "status"), "ok");
    json_decref(j);
    imp_http_result_free(&r);
}

/* {"requests":[HEAD_ON item x n]} (caller frees). */
static char *heavy_batch(size_t n, size_t *len) {
    static const char head[] = "{\"requests\":[";
    static const char item[] = "{\"op\":\"toi\",\"body\":" HEAD_ON "}";
    size_t cap = sizeof head + n * sizeof item + 8;
    char *p = malloc(cap);
    assert_non_null(p);
    size_t k = 0;
    memcpy(p + k, head, sizeof head - 1);
    k += sizeof head - 1;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) p[k++] = ',';
        memcpy(p + k, item, sizeof item - 1);
        k += sizeof item - 1;
    }
    memcpy(p + k, "]}", 3);
    k += 2;
    *len = k;
    return p;
}

/* A heavy batch's answer: exactly n results, every one status 200 and time 1. */
static void assert_heavy_answer(const char *body, size_t len, size_t n) {
    json_t *j = parse_json(body, len);
    const json_t *results = json_object_get(j, "results");
    if (!json_is_array(results) || json_array_size(results) != n) {
        print_error("batch answer has %zu results, expected %zu\n", json_array_size(results), n);
        fail();
    }
    for (size_t i = 0; i < n; ++i) {
        const json_t *it = json_array_get(results, i);
        const json_t *b = json_object_get(it, "body");
        if (json_integer_value(json_object_get(it, "status")) != 200 ||
            json_real_value(json_object_get(b, "time")) != 1.0) {
            char *s = json_dumps(it, JSON_COMPACT);
            print_error("batch result %zu is not a hit at t = 1: %s\n", i, s ? s : "?");
            free(s);
            fail();
        }
    }
    json_decref(j);
}

/* ---- curl multi transfers ------------------------------------------------------------------ */

typedef struct xfer {
    CURL *easy;
    struct curl_slist *headers;
    char *body; /* response body, NUL-terminated */
    size_t len, cap;
    int oom;
    size_t upload_len;
    char content_type[128];
    char retry_after[32];
    long status;
    CURLcode result;
    int done;
    int order; /* completion rank, 0 first */
} xfer;

static size_t xfer_on_body(char *p, size_t size, size_t nmemb, void *ud) {
    xfer *x = ud;
    size_t n = size * nmemb;
    if (imp_test_buf_append(&x->body, &x->len, &x->cap, p, n) != 0) {
        x->oom = 1;
        return 0;
    }
    return n;
}

static size_t xfer_on_header(char *p, size_t size, size_t nmemb, void *ud) {
    xfer *x = ud;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) x->content_type[0] = x->retry_after[0] = '\0';
    imp_test_header_value(p, n, "Content-Type", x->content_type, sizeof x->content_type);
    imp_test_header_value(p, n, "Retry-After", x->retry_after, sizeof x->retry_after);
    return n;
}

/* A POST of `len` bytes of `body` (not copied: it must outlive the transfer). */
static void xfer_post(xfer *x, const char *url, const char *body, size_t len) {
    memset(x, 0, sizeof *x);
    x->order = -1;
    x->upload_len = len;
    x->easy = curl_easy_init();
    assert_non_null(x->easy);
    x->headers = curl_slist_append(NULL, "Expect:");
    x->headers = curl_slist_append(x->headers, "Content-Type: application/json");
    assert_non_null(x->headers);
    CURL *c = x->easy;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, xfer_on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, xfer_on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(c, CURLOPT_PRIVATE, x);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_TIMEOUT, MULTI_TIMEOUT_S);
}

static void xfer_free(xfer *x) {
    if (x->easy) curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    free(x->body);
    memset(x, 0, sizeof *x);
}

/* One round of the multi loop: move bytes, wait up to 20 ms for more, and
 * record finished transfers in completion order. Returns transfers running. */
static int multi_step(CURLM *m, int *next_order) {
    int running = 0;
    assert_int_equal(curl_multi_perform(m, &running), CURLM_OK);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE) continue;
        char *priv = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        xfer *x = (xfer *)priv;
        assert_non_null(x);
        x->result = msg->data.result;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
        x->done = 1;
        x->order = (*next_order)++;
    }
    if (running > 0) assert_int_equal(curl_multi_poll(m, NULL, 0, 20, NULL), CURLM_OK);
    return running;
}

static int upload_complete(const xfer *x) {
    curl_off_t sent = 0;
    curl_easy_getinfo(x->easy, CURLINFO_SIZE_UPLOAD_T, &sent);
    return x->done || (size_t)sent == x->upload_len;
}

static void assert_transfer_ok(const xfer *x, size_t i) {
    if (x->result != CURLE_OK || x->oom || !x->done) {
        print_error("transfer %zu failed: %s%s\n", i, curl_easy_strerror(x->result),
                    x->oom ? " (out of memory)" : "");
        fail();
    }
}

/* ---- Prometheus text parser ---------------------------------------------------------------- */

#define MAX_LABELS 4

typedef struct sample {
    char name[128];
    size_t n_labels;
    char key[MAX_LABELS][32];
    char value_of[MAX_LABELS][128];
    double value;
} sample;

typedef struct metrics {
    sample *s;
    size_t n;
    char content_type[128];
} metrics;

/* Parses one sample line; 0 on success. */
static int parse_sample(const char *line, size_t n, sample *out) {
    memset(out, 0, sizeof *out);
    size_t i = 0, k = 0;
    while (i < n &&
           (line[i] == '_' || line[i] == ':' || (line[i] >= 'a' && line[i] <= 'z') ||
            (line[i] >= 'A' && line[i] <= 'Z') || (k > 0 && line[i] >= '0' && line[i] <= '9'))) {
        if (k + 1 >= sizeof out->name) return -1;
        out->name[k++] = line[i++];
    }
    if (k == 0) return -1;
    if (i < n && line[i] == '{') {
        ++i;
        while (i < n && line[i] != '}') {
            if (out->n_labels == MAX_LABELS) return -1;
            size_t l = out->n_labels++;
            k = 0;
            while (i < n && line[i] != '=') {
                if (k + 1 >= sizeof out->key[l]) return -1;
                out->key[l][k++] = line[i++];
            }
            if (i + 1 >= n || line[i + 1] != '"') return -1;
            i += 2;
            k = 0;
            while (i < n && line[i] != '"') {
                char c = line[i++];
                if (c == '\\') {
                    if (i >= n) return -1;
                    c = line[i++];
                    if (c == 'n') c = '\n';
                }
                if (k + 1 >= sizeof out->value_of[l]) return -1;
                out->value_of[l][k++] = c;
            }
            if (i >= n) return -1;
            ++i; /* closing quote */
            if (i < n && line[i] == ',') ++i;
        }
        if (i >= n) return -1;
        ++i; /* '}' */
    }
    if (i >= n || line[i] != ' ') return -1;
    while (i < n && line[i] == ' ')
        ++i;
    char num[64];
    size_t m = 0;
    while (i < n && line[i] != ' ' && m + 1 < sizeof num)
        num[m++] = line[i++];
    num[m] = '\0';
    char *end;
    out->value = strtod(num, &end);
    if (m == 0 || *end != '\0') return -1;
    return 0; /* an optional timestamp may follow; this daemon writes none */
}

static const char *label(const sample *s, const char *key) {
    for (size_t i = 0; i < s->n_labels; ++i)
        if (strcmp(s->key[i], key) == 0) return s->value_of[i];
    return NULL;
}

/* Every line is a comment, blank, or a well-formed sample; fails otherwise. */
static metrics scrape(const imp_test_daemon *d) {
    imp_http_result r;
    get(d, "/metrics", &r);
    assert_status(&r, 200);
    metrics m = {NULL, 0, ""};
    snprintf(m.content_type, sizeof m.content_type, "%s", r.content_type);
    size_t cap = 0;
    for (const char *p = r.body; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n > 0 && p[0] != '#') {
            if (m.n == cap) {
                cap = cap ? cap * 2 : 256;
                m.s = realloc(m.s, cap * sizeof *m.s);
                assert_non_null(m.s);
            }
            if (parse_sample(p, n, &m.s[m.n]) != 0) {
                print_error("unparsable metrics line: %.*s\n", (int)n, p);
                fail();
            }
            ++m.n;
        }
        p += n + (nl != NULL);
    }
    imp_http_result_free(&r);
    return m;
}

/* The sample with exactly this name and label set (k1=v1, k2=v2; NULL keys
 * end the list), or NULL. A series that appears twice fails the test. */
static const sample *find2(const metrics *m, const char *name, const char *k1, const char *v1,
                           const char *k2, const char *v2) {
    size_t want = (k1 != NULL) + (k1 && k2);
    const sample *found = NULL;
    for (size_t i = 0; i < m->n; ++i) {
        const sample *s = &m->s[i];
        if (strcmp(s->name, name) != 0 || s->n_labels != want) continue;
        if (k1 && (!label(s, k1) || strcmp(label(s, k1), v1) != 0)) continue;
        if (k1 && k2 && (!label(s, k2) || strcmp(label(s, k2), v2) != 0)) continue;
        if (found) {
            print_error("series %s{%s=%s,%s=%s} appears twice\n", name, k1 ? k1 : "", v1 ? v1 : "",
                        k2 ? k2 : "", v2 ? v2 : "");
            fail();
        }
        found = s;
    }
    return found;
}

/* A counter's value; a series not rendered yet counts 0 (only non-zero counters appear). */
static double counter(const metrics *m, const char *name, const char *k1, const char *v1,
                      const char *k2, const char *v2) {
    const sample *s = find2(m, name, k1, v1, k2, v2);
    return s ? s->value : 0.0;
}

static double requests_total(const metrics *m, const char *route, const char *code) {
    return counter(m, "impactd_http_requests_total", "route", route, "code", code);
}

static double must_have(const metrics *m, const char *name, const char *k1, const char *v1) {
    const sample *s = find2(m, name, k1, v1, NULL, NULL);
    if (!s) {
        print_error("/metrics has no series %s%s%s%s%s\n", name, k1 ? "{" : "", k1 ? k1 : "",
                    k1 ? "=" : "", k1 ? v1 : "");
        fail();
    }
    return s->value;
}

static void metrics_free(metrics *m) {
    free(m->s);
    m->s = NULL;
    m->n = 0;
}

static void assert_delta(double before, double after, double want, const char *what) {
    if (after - before != want) {
        print_error("%s went from %.17g to %.17g, expected a rise of %.17g\n", what, before, after,
                    want);
        fail();
    }
}

/* ---- raw sockets --------------------------------------------------------------------------- */

/* A connected TCP socket to 127.0.0.1:port, or -1. */
static int connect_local(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads (and discards) what the peer sends for up to `wait_ms`. Returns 1
 * once the peer has closed (EOF or reset), else 0. */
static int peer_closed_within(int fd, long wait_ms) {
    double deadline = imp_test_now_s() + (double)wait_ms / 1000.0;
    for (;;) {
        long left = (long)((deadline - imp_test_now_s()) * 1000.0);
        if (left < 0) left = 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return 0;
        char buf[4096];
        ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && (errno == ECONNRESET || errno == EPIPE))) return 1;
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            return 1; /* any other error also means the connection is gone */
        if (left == 0) return 0;
    }
}

/* A client that sends `prefix` and then `pad` over and over, one byte per
 * TRICKLE_MS, until the server closes the connection or `limit_s` passes.
 * Filled by trickle(); read by the test thread after joining. */
typedef struct trickler {
    unsigned port;
    const char *prefix, *pad;
    double limit_s;
    atomic_int bytes_sent;
    int connected;
    atomic_int closed; /* the server ended the connection */
    double seconds;    /* from connect to the end being seen */
} trickler;

static void trickle(trickler *t) {
    int fd = connect_local(t->port);
    t->connected = fd >= 0;
    if (fd < 0) return;
    double t0 = imp_test_now_s();
    size_t plen = strlen(t->prefix), padlen = strlen(t->pad);
    for (size_t i = 0; imp_test_now_s() - t0 < t->limit_s; ++i) {
        char c = i < plen ? t->prefix[i] : t->pad[(i - plen) % padlen];
        ssize_t k = send(fd, &c, 1, MSG_NOSIGNAL);
        if (k < 0 && errno != EINTR) { /* EPIPE / ECONNRESET: the server closed it */
            atomic_store(&t->closed, 1);
            break;
        }
        atomic_fetch_add(&t->bytes_sent, 1);
        if (peer_closed_within(fd, TRICKLE_MS)) {
            atomic_store(&t->closed, 1);
            break;
        }
    }
    t->seconds = imp_test_now_s() - t0;
    close(fd);
}

static void *trickle_thread(void *arg) {
    trickle(arg);
    return NULL;
}

static void trickler_init(trickler *t, unsigned port, const char *prefix, const char *pad) {
    memset(t, 0, sizeof *t);
    t->port = port;
    t->prefix = prefix;
    t->pad = pad;
    t->limit_s = CUT_WITHIN_S;
    atomic_init(&t->bytes_sent, 0);
    atomic_init(&t->closed, 0);
}

static void assert_cut(const trickler *t, const char *what) {
    if (!t->connected) {
        print_error("%s: cannot connect\n", what);
        fail();
    }
    if (!atomic_load(&t->closed)) {
        print_error("%s: still open after %.1f s (%d bytes sent)\n", what, t->seconds,
                    atomic_load(&t->bytes_sent));
        fail();
    }
}

/* Request line and Host of a request whose headers never end. */
static const char TRICKLE_HEADERS[] = "POST /v1/toi HTTP/1.1\r\nHost: x\r\n";
static const char TRICKLE_HEADER_PAD[] = "X-Pad: y\r\n";

/* ==== 1. overload =========================================================================== */

static void test_overload_503_and_recovery(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        print_message("skipped under valgrind: its verdict depends on timing\n");
        skip();
    }
    size_t len;
    char *body = heavy_batch(HEAVY_ITEMS, &len);
    char url[256];
    url_of(&overload_daemon, "/v1/batch", url, sizeof url);

    metrics before = scrape(&overload_daemon);
    CURLM *m = curl_multi_init();
    assert_non_null(m);
    static xfer x[OVERLOAD_REQUESTS];
    for (size_t i = 0; i < OVERLOAD_REQUESTS; ++i) {
        xfer_post(&x[i], url, body, len);
        assert_int_equal(curl_multi_add_handle(m, x[i].easy), CURLM_OK);
    }
    int order = 0;
    while (multi_step(m, &order) > 0) {
    }
    multi_step(m, &order); /* collect the last completion messages */

    size_t n200 = 0, n503 = 0;
    for (size_t i = 0; i < OVERLOAD_REQUESTS; ++i) {
        assert_transfer_ok(&x[i], i);
        if (x[i].status == 503) {
            ++n503;
            assert_media_type(x[i].content_type, "application/problem+json");
            json_t *p = parse_json(x[i].body, x[i].len);
            assert_problem_doc(p, 503, NULL);
            assert_string_equal(str_member(p, "type"), "overloaded");
            json_decref(p);
            if (strcmp(x[i].retry_after, "1") != 0) {
                print_error("503 with Retry-After \"%s\", expected \"1\"\n", x[i].retry_after);
                fail();
            }
        } else if (x[i].status == 200) {
            ++n200;
            assert_media_type(x[i].content_type, "application/json");
            assert_heavy_answer(x[i].body, x[i].len, HEAVY_ITEMS);
        } else {
            print_error("transfer %zu: status %ld, expected 200 or 503: %.300s\n", i, x[i].status,
                        x[i].body ? x[i].body : "");
            fail();
        }
    }
    fprintf(stderr, "overload: %zu concurrent batches -> %zu x 200, %zu x 503\n",
            (size_t)OVERLOAD_REQUESTS, n200, n503);
    assert_true(n503 >= 1);
    assert_true(n200 >= 1); /* the first batch finds an empty queue */

    for (size_t i = 0; i < OVERLOAD_REQUESTS; ++i) {
        curl_multi_remove_handle(m, x[i].easy);
        xfer_free(&x[i]);
    }
    curl_multi_cleanup(m);
    free(body);

    /* recovery: the queue has drained, a light request is served */
    assert_head_on_ok(NULL, &overload_daemon);

    metrics after = scrape(&overload_daemon);
    assert_delta(requests_total(&before, "/v1/batch", "503"),
                 requests_total(&after, "/v1/batch", "503"), (double)n503,
                 "requests_total{/v1/batch,503}");
    assert_delta(requests_total(&before, "/v1/batch", "200"),
                 requests_total(&after, "/v1/batch", "200"), (double)n200,
                 "requests_total{/v1/batch,200}");
    metrics_free(&before);
    metrics_free(&after);
}

/* A client turned away with 503 may retry on the same connection. Rounds
 * of concurrent heavy batches fill the one worker and the one queue slot;
 * once one of them has been answered 503 (the queue is full), a light
 * request goes out on a kept-alive handle, until one such request gets 503
 * itself. After the batches are done, the same handle must be served 200
 * without opening a new connection. */
#define KEEPALIVE_ROUNDS 5
#define KEEPALIVE_HEAVY 4

static void test_503_keeps_connection(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        print_message("skipped under valgrind: its verdict depends on timing\n");
        skip();
    }
    size_t len;
    char *body = heavy_batch(HEAVY_ITEMS, &len);
    char url[256];
    url_of(&overload_daemon, "/v1/batch", url, sizeof url);
    CURL *e = curl_easy_init();
    assert_non_null(e);
    int got503 = 0;
    for (int round = 0; round < KEEPALIVE_ROUNDS && !got503; ++round) {
        CURLM *m = curl_multi_init();
        assert_non_null(m);
        static xfer x[KEEPALIVE_HEAVY];
        for (size_t i = 0; i < KEEPALIVE_HEAVY; ++i) {
            xfer_post(&x[i], url, body, len);
            assert_int_equal(curl_multi_add_handle(m, x[i].easy), CURLM_OK);
        }
        int order = 0, running, full = 0;
        do {
            running = multi_step(m, &order);
            for (size_t i = 0; i < KEEPALIVE_HEAVY; ++i)
                full |= x[i].done && x[i].status == 503;
        } while (running > 0 && !full);
        if (full) {
            imp_http_result r;
            post_json(e, &overload_daemon, "/v1/toi", HEAD_ON, strlen(HEAD_ON), &r);
            if (r.status == 503) {
                got503 = 1;
                assert_problem(&r, 503, NULL);
            } else {
                assert_status(&r, 200);
            }
            imp_http_result_free(&r);
        }
        while (multi_step(m, &order) > 0) {
        }
        multi_step(m, &order);
        for (size_t i = 0; i < KEEPALIVE_HEAVY; ++i) {
            assert_transfer_ok(&x[i], i);
            assert_true(x[i].status == 200 || x[i].status == 503);
            curl_multi_remove_handle(m, x[i].easy);
            xfer_free(&x[i]);
        }
        curl_multi_cleanup(m);
    }
    free(body);
    if (!got503) {
        print_error("no light request was answered 503 in %d rounds of full queues\n",
                    KEEPALIVE_ROUNDS);
        fail();
    }
    imp_http_result r;
    post_json(e, &overload_daemon, "/v1/toi", HEAD_ON, strlen(HEAD_ON), &r);
    assert_status(&r, 200);
    if (r.new_connections != 0) {
        print_error("the request after a 503 opened a new connection\n");
        fail();
    }
    imp_http_result_free(&r);
    curl_easy_cleanup(e);
}

/* ==== 2. light work ahead of heavy ========================================================== */

static void test_light_beats_heavy(void **state) {
    (void)state;
    size_t len;
    char *body = heavy_batch(HEAVY_ITEMS, &len);
    char batch_url[256], toi_url[256];
    url_of(&lanes_daemon, "/v1/batch", batch_url, sizeof batch_url);
    url_of(&lanes_daemon, "/v1/toi", toi_url, sizeof toi_url);

    CURLM *m = curl_multi_init();
    assert_non_null(m);
    static xfer heavy[LANES_HEAVY];
    static xfer light;
    for (size_t i = 0; i < LANES_HEAVY; ++i) {
        xfer_post(&heavy[i], batch_url, body, len);
        assert_int_equal(curl_multi_add_handle(m, heavy[i].easy), CURLM_OK);
    }
    xfer_post(&light, toi_url, HEAD_ON, strlen(HEAD_ON));
    int order = 0, light_added = 0, running;
    do {
        running = multi_step(m, &order);
        if (!light_added) {
            /* Add the light request once every heavy body is out and the
             * first heavy answer is in: the rest are then queued or running. */
            int all_sent = 1, any_done = 0;
            for (size_t i = 0; i < LANES_HEAVY; ++i) {
                all_sent &= upload_complete(&heavy[i]);
                any_done |= heavy[i].done;
            }
            if (all_sent && any_done) {
                assert_int_equal(curl_multi_add_handle(m, light.easy), CURLM_OK);
                light_added = 1;
                running = 1;
            }
        }
    } while (running > 0 || !light_added);
    multi_step(m, &order);

    assert_transfer_ok(&light, LANES_HEAVY);
    assert_int_equal(light.status, 200);
    json_t *j = parse_json(light.body, light.len);
    assert_true(json_real_value(json_object_get(j, "time")) == 1.0);
    json_decref(j);
    size_t heavy_after_light = 0;
    char seen[128] = "";
    for (size_t i = 0; i < LANES_HEAVY; ++i) {
        assert_transfer_ok(&heavy[i], i);
        assert_int_equal(heavy[i].status, 200);
        assert_heavy_answer(heavy[i].body, heavy[i].len, HEAVY_ITEMS);
        heavy_after_light += heavy[i].order > light.order;
        char one[16];
        snprintf(one, sizeof one, " %d", heavy[i].order);
        strncat(seen, one, sizeof seen - strlen(seen) - 1);
    }
    fprintf(stderr, "lanes: light finished at rank %d; heavy ranks:%s\n", light.order, seen);
    if (heavy_after_light < 3) {
        print_error("light request finished %d-th; heavy ranks:%s; only %zu heavy after it\n",
                    light.order, seen, heavy_after_light);
        fail();
    }
    for (size_t i = 0; i < LANES_HEAVY; ++i) {
        curl_multi_remove_handle(m, heavy[i].easy);
        xfer_free(&heavy[i]);
    }
    curl_multi_remove_handle(m, light.easy);
    xfer_free(&light);
    curl_multi_cleanup(m);
    free(body);
}

/* ==== 3. slow and idle clients ============================================================== */

/* (a) Headers that never end, one byte per 200 ms, are cut by the idle deadline. */
static void test_trickled_headers_cut(void **state) {
    (void)state;
    trickler t;
    trickler_init(&t, slow_daemon.port, TRICKLE_HEADERS, TRICKLE_HEADER_PAD);
    trickle(&t);
    assert_cut(&t, "connection trickling its headers");
    assert_healthy(&slow_daemon);
}

/* (b) Two tricklers do not keep normal requests from being served. Only
 * requests answered while both tricklers were still connected count; if
 * the tricklers are cut first (a very slow machine), a new pair starts. */
#define BESIDE_TRICKLERS 20
#define TRICKLER_ROUNDS 5

static void test_tricklers_do_not_block_others(void **state) {
    (void)state;
    char url[256];
    url_of(&slow_daemon, "/v1/toi", url, sizeof url);
    int counted = 0, failed = 0;
    for (int round = 0; round < TRICKLER_ROUNDS && counted < BESIDE_TRICKLERS && !failed; ++round) {
        trickler t[2];
        pthread_t th[2];
        for (int i = 0; i < 2; ++i) {
            trickler_init(&t[i], slow_daemon.port, TRICKLE_HEADERS, TRICKLE_HEADER_PAD);
            assert_int_equal(pthread_create(&th[i], NULL, trickle_thread, &t[i]), 0);
        }
        /* both have begun their requests */
        double deadline = imp_test_now_s() + CUT_WITHIN_S;
        while ((atomic_load(&t[0].bytes_sent) < 2 || atomic_load(&t[1].bytes_sent) < 2) &&
               imp_test_now_s() < deadline)
            imp_test_sleep_ms(5);
        while (counted < BESIDE_TRICKLERS && !failed) {
            imp_http_result r;
            int ok = imp_http(NULL, "POST", url, "application/json", HEAD_ON, strlen(HEAD_ON),
                              &r) == 0 &&
                     r.status == 200;
            if (!ok) {
                fprintf(stderr, "request beside the tricklers: status %ld\n", r.status);
                failed = 1;
            }
            imp_http_result_free(&r);
            if (atomic_load(&t[0].closed) || atomic_load(&t[1].closed))
                break; /* this one may have run after a trickler was cut */
            ++counted;
        }
        for (int i = 0; i < 2; ++i)
            pthread_join(th[i], NULL);
        assert_cut(&t[0], "trickler 1");
        assert_cut(&t[1], "trickler 2");
        if (counted < BESIDE_TRICKLERS)
            fprintf(stderr, "round %d: tricklers cut after %d requests beside them\n", round,
                    counted);
    }
    assert_false(failed);
    assert_int_equal(counted, BESIDE_TRICKLERS);
}

/* (c) Complete headers promising 1000 body bytes, then one byte per 200 ms,
 * are cut by the request deadline. */
static void test_trickled_body_cut(void **state) {
    (void)state;
    trickler t;
    trickler_init(&t, slow_daemon.port,
                  "POST /v1/toi HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: 1000\r\n\r\n{",
                  " ");
    trickle(&t);
    assert_cut(&t, "connection trickling its body");
    assert_healthy(&slow_daemon);
}

/* (d) A connection that never sends a byte is cut. */
static void test_silent_connection_cut(void **state) {
    (void)state;
    int fd = connect_local(slow_daemon.port);
    assert_true(fd >= 0);
    double t0 = imp_test_now_s();
    int closed = peer_closed_within(fd, (long)(CUT_WITHIN_S * 1000));
    double took = imp_test_now_s() - t0;
    close(fd);
    if (!closed) {
        print_error("silent connection still open after %.1f s\n", took);
        fail();
    }
}

/* (d') A keep-alive connection that goes quiet after one answered request is cut too. */
static void test_idle_after_reply_cut(void **state) {
    (void)state;
    int fd = connect_local(slow_daemon.port);
    assert_true(fd >= 0);
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(send_all(fd, req, sizeof req - 1), 0);
    /* the answer: headers, then Content-Length bytes */
    char buf[2048];
    size_t got = 0;
    const char *end = NULL;
    long clen = -1;
    double deadline = imp_test_now_s() + CUT_WITHIN_S;
    while (imp_test_now_s() < deadline) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t k = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        assert_true(k > 0); /* the connection must stay open after the reply */
        got += (size_t)k;
        buf[got] = '\0';
        end = strstr(buf, "\r\n\r\n");
        for (const char *h = buf; end && h && h < end; h = strstr(h + 1, "\r\n"))
            if (strncasecmp(h, "\r\nContent-Length:", 17) == 0) clen = strtol(h + 17, NULL, 10);
        if (end && clen >= 0 && got >= (size_t)(end + 4 - buf) + (size_t)clen) break;
    }
    assert_true(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    assert_non_null(end);
    assert_string_equal(end + 4, "{\"status\":\"ok\"}");
    int closed = peer_closed_within(fd, (long)(CUT_WITHIN_S * 1000));
    close(fd);
    assert_true(closed);
}

/* (f) Work waiting for the single worker longer than both deadlines is not
 * cut: the deadlines cover the client's bytes, not the queue. One batch
 * alone estimates the work; then enough are sent at once that the last
 * waits about QUEUE_WAIT_S behind the others. When the whole run took
 * less than QUEUE_WAIT_MIN_S (the estimate was high), it is repeated with
 * twice as many, so that some batch surely waited past a deadline check. */
#define QUEUE_WAIT_MIN_S 3.0
#define QUEUE_ROUNDS 3

static void test_queued_work_not_cut(void **state) {
    (void)state;
    size_t len;
    char *body = heavy_batch(HEAVY_ITEMS, &len);
    char url[256];
    url_of(&slow_daemon, "/v1/batch", url, sizeof url);

    double t0 = imp_test_now_s();
    imp_http_result one;
    post_json(NULL, &slow_daemon, "/v1/batch", body, len, &one);
    double single_s = imp_test_now_s() - t0;
    assert_status(&one, 200);
    imp_http_result_free(&one);
    size_t n = (size_t)ceil(QUEUE_WAIT_S / single_s) + 1;

    double took = 0;
    for (int round = 0; round < QUEUE_ROUNDS && took < QUEUE_WAIT_MIN_S; ++round, n *= 2) {
        if (n > QUEUED_HEAVY_MAX) n = QUEUED_HEAVY_MAX;
        CURLM *m = curl_multi_init();
        assert_non_null(m);
        static xfer x[QUEUED_HEAVY_MAX];
        for (size_t i = 0; i < n; ++i) {
            xfer_post(&x[i], url, body, len);
            assert_int_equal(curl_multi_add_handle(m, x[i].easy), CURLM_OK);
        }
        t0 = imp_test_now_s();
        int order = 0;
        while (multi_step(m, &order) > 0) {
        }
        multi_step(m, &order);
        took = imp_test_now_s() - t0;
        for (size_t i = 0; i < n; ++i) {
            assert_transfer_ok(&x[i], i);
            assert_int_equal(x[i].status, 200);
            assert_heavy_answer(x[i].body, x[i].len, HEAVY_ITEMS);
            curl_multi_remove_handle(m, x[i].easy);
            xfer_free(&x[i]);
        }
        curl_multi_cleanup(m);
        fprintf(stderr, "queued work: one batch %.2f s; %zu at once on one worker took %.2f s\n",
                single_s, n, took);
    }
    free(body);
}

/* (g) A client that reads its reply too slowly is cut. The reply (about
 * 9.6 MB) is more than the kernel buffers on both sides can hold, so only
 * part of it can have left the server when the connection is cut; the
 * client reads 1 KiB every 100 ms (never idle for long) until the reply
 * has begun plus 3 s, then reads as fast as it can: a cut connection ends
 * before Content-Length bytes, an uncut one delivers them all. */
#define SLOW_READER_ITEMS 50000

static void test_slow_reader_cut(void **state) {
    (void)state;
    size_t len;
    char *body = heavy_batch(SLOW_READER_ITEMS, &len);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    int small = 4096;
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)slow_daemon.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             len);
    assert_int_equal(send_all(fd, head, strlen(head)), 0);
    assert_int_equal(send_all(fd, body, len), 0);
    free(body);

    /* slow phase: keep the first bytes to read the status and Content-Length */
    char start[1024];
    size_t start_len = 0, total = 0;
    double t0 = imp_test_now_s(), first = 0;
    int eof = 0;
    while (!eof && (first == 0 ? imp_test_now_s() - t0 < 30 : imp_test_now_s() - first < 3)) {
        imp_test_sleep_ms(100);
        char buf[1024];
        ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
            eof = 1;
        } else if (k > 0) {
            if (first == 0) first = imp_test_now_s();
            size_t keep =
                (size_t)k < sizeof start - 1 - start_len ? (size_t)k : sizeof start - 1 - start_len;
            memcpy(start + start_len, buf, keep);
            start_len += keep;
            total += (size_t)k;
        }
    }
    start[start_len] = '\0';
    assert_true(first != 0); /* the reply began */
    /* fast phase */
    double deadline = imp_test_now_s() + CUT_WITHIN_S;
    while (!eof && imp_test_now_s() < deadline) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0) continue;
        char buf[65536];
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k <= 0)
            eof = 1;
        else
            total += (size_t)k;
    }
    close(fd);
    assert_true(strncmp(start, "HTTP/1.1 200", 12) == 0);
    const char *end = strstr(start, "\r\n\r\n");
    assert_non_null(end);
    long clen = -1;
    for (const char *h = start; h && h < end; h = strstr(h + 1, "\r\n"))
        if (strncasecmp(h, "\r\nContent-Length:", 17) == 0) clen = strtol(h + 17, NULL, 10);
    assert_true(clen > 0);
    size_t full = (size_t)(end + 4 - start) + (size_t)clen;
    fprintf(stderr, "slow reader: %zu of %zu bytes before the connection ended\n", total, full);
    if (eof && total >= full) {
        /* The kernel may buffer the whole reply when its send buffer may grow
         * that large; then no cut can be seen from here. */
        long long wmem_max = 0;
        FILE *f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
        if (f) {
            long long lo, def;
            if (fscanf(f, "%lld %lld %lld", &lo, &def, &wmem_max) != 3) wmem_max = 0;
            fclose(f);
        }
        if (wmem_max >= (long long)full) {
            fprintf(stderr, "slow reader: skipped, tcp_wmem allows %lld buffered bytes\n",
                    wmem_max);
            skip();
        }
    }
    if (!eof || total >= full) {
        print_error("slow reader not cut: %zu of %zu bytes, %s\n", total, full,
                    eof ? "then end of stream" : "still open");
        fail();
    }
}

/* (h) Clients that hang up (half with FIN, half with RST) while their
 * batches wait for the single worker: once the work has run, nothing is
 * left behind: no connection, no request in flight, nothing queued, and
 * the daemon still serves. */
#define HANGUP_BATCHES 4
/* Generous bound (s) for abandoned work to run and be cleaned up. */
#define HANGUP_SETTLE_S 30.0

static void test_hangup_while_queued(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        print_message("skipped under valgrind: its verdict depends on timing\n");
        skip();
    }
    size_t len;
    char *body = heavy_batch(HEAVY_ITEMS, &len);
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n",
             len);
    int fd[HANGUP_BATCHES];
    for (int i = 0; i < HANGUP_BATCHES; ++i) {
        fd[i] = connect_local(slow_daemon.port);
        assert_true(fd[i] >= 0);
        assert_int_equal(send_all(fd[i], head, strlen(head)), 0);
        assert_int_equal(send_all(fd[i], body, len), 0);
    }
    free(body);
    /* hang up once all are admitted (one running, the rest queued), if that
     * can be seen before the first finishes */
    double deadline = imp_test_now_s() + CUT_WITHIN_S;
    int admitted = 0;
    while (!admitted && imp_test_now_s() < deadline) {
        metrics m = scrape(&slow_daemon);
        admitted = must_have(&m, "impactd_queue_depth", NULL, NULL) == HANGUP_BATCHES - 1 &&
                   must_have(&m, "impactd_workers_busy", NULL, NULL) == 1;
        metrics_free(&m);
    }
    if (!admitted)
        fprintf(stderr, "hang-up: never saw all %d batches queued at once\n", HANGUP_BATCHES);
    for (int i = 0; i < HANGUP_BATCHES; ++i) {
        if (i % 2) {
            struct linger lg = {1, 0}; /* close with RST */
            (void)setsockopt(fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(fd[i]);
    }
    double open = -1, in_flight = -1, queued = -1;
    deadline = imp_test_now_s() + HANGUP_SETTLE_S;
    while (imp_test_now_s() < deadline) {
        metrics m = scrape(&slow_daemon);
        open = must_have(&m, "impactd_open_connections", NULL, NULL);
        in_flight = must_have(&m, "impactd_in_flight_requests", NULL, NULL);
        queued = must_have(&m, "impactd_queue_depth", NULL, NULL);
        metrics_free(&m);
        if (open == 1 && in_flight == 1 && queued == 0) break;
        imp_test_sleep_ms(100);
    }
    if (open != 1 || in_flight != 1 || queued != 0) {
        print_error("after the hang-ups: %g connections, %g in flight, %g queued; "
                    "expected 1, 1 (the scrape) and 0\n",
                    open, in_flight, queued);
        fail();
    }
    assert_head_on_ok(NULL, &slow_daemon);
}

/* Runs last in its group: every connection and request of the tests
 * above has been accounted for; only the scrape itself is left. */
static void test_slow_bookkeeping(void **state) {
    (void)state;
    double deadline = imp_test_now_s() + CUT_WITHIN_S, open = -1, in_flight = -1;
    while (imp_test_now_s() < deadline) {
        metrics m = scrape(&slow_daemon);
        open = must_have(&m, "impactd_open_connections", NULL, NULL);
        in_flight = must_have(&m, "impactd_in_flight_requests", NULL, NULL);
        metrics_free(&m);
        if (open == 1 && in_flight == 1) break;
        imp_test_sleep_ms(50);
    }
    if (open != 1 || in_flight != 1) {
        print_error("after the slow clients: %g open connections, %g requests in flight; "
                    "expected 1 and 1 (the scrape)\n",
                    open, in_flight);
        fail();
    }
    assert_healthy(&slow_daemon);
}

/* (e) With --max-connections 3: three idle connections held, a fourth
 * attempted; after the three are gone, requests are served again and the
 * open-connection gauge is back to just the scraper. */
static void test_connection_limit(void **state) {
    (void)state;
    int held[3];
    for (int i = 0; i < 3; ++i) {
        held[i] = connect_local(limit_daemon.port);
        assert_true(held[i] >= 0);
    }
    /* The fourth: whatever the daemon does with it (backlog, refusal, a late
     * answer) is not asserted, only that nothing breaks. */
    int fourth = connect_local(limit_daemon.port);
    if (fourth >= 0) {
        static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        (void)send_all(fourth, req, sizeof req - 1);
    }
    for (int i = 0; i < 3; ++i) {
        int closed = peer_closed_within(held[i], (long)(CUT_WITHIN_S * 1000));
        close(held[i]);
        if (!closed) {
            print_error("held connection %d still open after %.0f s\n", i, CUT_WITHIN_S);
            fail();
        }
    }
    if (fourth >= 0) close(fourth);
    assert_head_on_ok(NULL, &limit_daemon);
    assert_healthy(&limit_daemon);

    /* every closed connection has been accounted for */
    double deadline = imp_test_now_s() + CUT_WITHIN_S, open = -1;
    while (imp_test_now_s() < deadline) {
        metrics m = scrape(&limit_daemon);
        open = must_have(&m, "impactd_open_connections", NULL, NULL);
        metrics_free(&m);
        if (open == 1) break;
        imp_test_sleep_ms(50);
    }
    if (open != 1) {
        print_error("impactd_open_connections is %g with only the scraper connected\n", open);
        fail();
    }
}

/* ==== 4. metrics ============================================================================ */

static void assert_histograms_consistent(const metrics *m) {
    /* per route: bucket le strictly increasing, counts non-decreasing,
     * +Inf last and equal to _count */
    for (size_t i = 0; i < m->n; ++i) {
        const sample *c = &m->s[i];
        if (strcmp(c->name, "impactd_http_request_duration_seconds_count") != 0) continue;
        const char *route = label(c, "route");
        assert_non_null(route);
        double prev_le = -INFINITY, prev_v = 0, inf_v = -1;
        size_t buckets = 0;
        for (size_t k = 0; k < m->n; ++k) {
            const sample *b = &m->s[k];
            if (strcmp(b->name, "impactd_http_request_duration_seconds_bucket") != 0 ||
                !label(b, "route") || strcmp(label(b, "route"), route) != 0)
                continue;
            const char *le_text = label(b, "le");
            assert_non_null(le_text);
            char *end;
            double le = strtod(le_text, &end);
            assert_true(*end == '\0');
            if (!(le > prev_le) || b->value < prev_v) {
                print_error("route %s: bucket le=%s (%g) after le=%g (%g) is not monotone\n", route,
                            le_text, b->value, prev_le, prev_v);
                fail();
            }
            prev_le = le;
            prev_v = b->value;
            if (isinf(le)) inf_v = b->value;
            ++buckets;
        }
        assert_true(buckets >= 2);
        assert_true(isinf(prev_le)); /* +Inf is the last bucket */
        if (inf_v != c->value) {
            print_error("route %s: +Inf bucket %g != _count %g\n", route, inf_v, c->value);
            fail();
        }
        const sample *sum =
            find2(m, "impactd_http_request_duration_seconds_sum", "route", route, NULL, NULL);
        assert_non_null(sum);
        assert_true(sum->value >= 0);
    }
}

static void test_metrics_move_exactly(void **state) {
    (void)state;
    static const char bad[] = "{\"a\":{\"radius\":-1,\"position\":[0,0]},"
                              "\"b\":{\"radius\":0.5,\"position\":[3,0]}}";
    metrics before = scrape(&main_daemon);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    for (int i = 0; i < 3; ++i)
        assert_head_on_ok(c, &main_daemon);
    imp_http_result r;
    post_json(c, &main_daemon, "/v1/toi", bad, sizeof bad - 1, &r);
    assert_problem(&r, 422, "/a/radius");
    imp_http_result_free(&r);
    curl_easy_cleanup(c);
    metrics after = scrape(&main_daemon);

    assert_true(strncmp(after.content_type, "text/plain", 10) == 0);
    assert_delta(requests_total(&before, "/v1/toi", "200"),
                 requests_total(&after, "/v1/toi", "200"), 3, "requests_total{/v1/toi,200}");
    assert_delta(requests_total(&before, "/v1/toi", "422"),
                 requests_total(&after, "/v1/toi", "422"), 1, "requests_total{/v1/toi,422}");
    assert_delta(counter(&before, "impactd_http_request_duration_seconds_count", "route", "/v1/toi",
                         NULL, NULL),
                 counter(&after, "impactd_http_request_duration_seconds_count", "route", "/v1/toi",
                         NULL, NULL),
                 4, "duration_seconds_count{/v1/toi}");
    assert_delta(counter(&before, "impactd_http_request_duration_seconds_bucket", "route",
                         "/v1/toi", "le", "+Inf"),
                 counter(&after, "impactd_http_request_duration_seconds_bucket", "route", "/v1/toi",
                         "le", "+Inf"),
                 4, "duration_seconds_bucket{/v1/toi,+Inf}");
    assert_true(counter(&after, "impactd_http_request_duration_seconds_sum", "route", "/v1/toi",
                        NULL, NULL) >= counter(&before, "impactd_http_request_duration_seconds_sum",
                                               "route", "/v1/toi", NULL, NULL));
    assert_histograms_consistent(&before);
    assert_histograms_consistent(&after);

    assert_true(must_have(&after, "impactd_worker_threads", NULL, NULL) == MAIN_THREADS);
    double start = must_have(&after, "process_start_time_seconds", NULL, NULL);
    if (!(fabs(start - (double)time(NULL)) <= 60.0)) {
        print_error("process_start_time_seconds %.3f is not within 60 s of now (%lld)\n", start,
                    (long long)time(NULL));
        fail();
    }
    /* nothing is waiting now; the scrape itself is in flight */
    assert_true(must_have(&after, "impactd_queue_depth", NULL, NULL) == 0);
    assert_true(must_have(&after, "impactd_in_flight_requests", NULL, NULL) >= 1);
    double busy = must_have(&after, "impactd_workers_busy", NULL, NULL);
    assert_true(busy >= 0 && busy <= MAIN_THREADS);
    assert_true(must_have(&after, "impactd_open_connections", NULL, NULL) >= 1);
    assert_true(must_have(&after, "impactd_draining", NULL, NULL) == 0);
    assert_true(must_have(&after, "process_resident_memory_bytes", NULL, NULL) > 0);
    metrics_free(&before);
    metrics_free(&after);
}

static void test_metrics_unknown_path_is_other(void **state) {
    (void)state;
    metrics before = scrape(&main_daemon);
    imp_http_result r;
    get(&main_daemon, "/nope", &r);
    assert_problem(&r, 404, NULL);
    imp_http_result_free(&r);
    metrics after = scrape(&main_daemon);
    assert_delta(requests_total(&before, "other", "404"), requests_total(&after, "other", "404"), 1,
                 "requests_total{other,404}");
    assert_delta(counter(&before, "impactd_http_request_duration_seconds_count", "route", "other",
                         NULL, NULL),
                 counter(&after, "impactd_http_request_duration_seconds_count", "route", "other",
                         NULL, NULL),
                 1, "duration_seconds_count{other}");
    for (size_t i = 0; i < after.n; ++i) {
        const char *route = label(&after.s[i], "route");
        if (route && strcmp(route, "/nope") == 0) {
            print_error("%s has a series for route=\"/nope\"\n", after.s[i].name);
            fail();
        }
    }
    metrics_free(&before);
    metrics_free(&after);
}

/* ==== 5. operations routes ================================================================== */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open %s (tests run from the repository root)\n", path);
        fail();
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void test_openapi_is_the_file(void **state) {
    (void)state;
    size_t len;
    char *want = read_file("api/openapi.yaml", &len);
    imp_http_result r;
    get(&main_daemon, "/openapi.yaml", &r);
    assert_status(&r, 200);
    assert_media_type(r.content_type, "application/yaml");
    if (r.len != len || memcmp(r.body, want, len) != 0) {
        size_t i = 0;
        while (i < len && i < r.len && r.body[i] == want[i])
            ++i;
        print_error("/openapi.yaml (%zu bytes) differs from api/openapi.yaml (%zu bytes) at "
                    "byte %zu (is build/impactd older than the file?)\n",
                    r.len, len, i);
        fail();
    }
    imp_http_result_free(&r);
    free(want);
}

static void test_readyz(void **state) {
    (void)state;
    imp_http_result r;
    get(&main_daemon, "/readyz", &r);
    assert_status(&r, 200);
    assert_media_type(r.content_type, "application/json");
    json_t *j = parse_json(r.body, r.len);
    json_t *want = json_pack("{s:s}", "status", "ready");
    assert_true(json_equal(j, want));
    json_decref(want);
    json_decref(j);
    imp_http_result_free(&r);

    char url[256];
    url_of(&main_daemon, "/readyz", url, sizeof url);
    assert_int_equal(imp_http(NULL, "POST", url, "application/json", "{}", 2, &r), 0);
    assert_problem(&r, 405, NULL);
    assert_string_equal(r.allow, "GET, HEAD");
    imp_http_result_free(&r);
}

/* ==== 6. batch ============================================================================== */

/* splitmix64: a fixed, portable sequence for a seed. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned rng_below(rng *r, unsigned n) { return (unsigned)(rng_next(r) % n); }

/* Uniform in [lo, hi), on a grid of 1/1024 so that it prints short and exact. */
static double rng_range(rng *r, double lo, double hi) {
    double u = (double)(rng_next(r) >> 11) / 9007199254740992.0;
    return floor((lo + (hi - lo) * u) * 1024.0) / 1024.0;
}

static json_t *rand_vec(rng *r, int dim, double scale) {
    json_t *v = json_array();
    for (int i = 0; i < dim; ++i)
        json_array_append_new(v, json_real(rng_range(r, -scale, scale)));
    return v;
}

static json_t *vec_plus(const json_t *a, const json_t *b) {
    json_t *v = json_array();
    for (size_t i = 0; i < json_array_size(a); ++i)
        json_array_append_new(v, json_real(json_real_value(json_array_get(a, i)) +
                                           json_real_value(json_array_get(b, i))));
    return v;
}

static json_t *vec_scaled(const json_t *a, double k) {
    json_t *v = json_array();
    for (size_t i = 0; i < json_array_size(a); ++i)
        json_array_append_new(v, json_real(k * json_real_value(json_array_get(a, i))));
    return v;
}

/* A random valid body object at `position` (stolen). */
static json_t *rand_body(rng *r, int dim, json_t *position, double radius) {
    json_t *b = json_object();
    if (rng_below(r, 2))
        json_object_set_new(b, "radius", json_real(radius));
    else
        json_object_set_new(b, "shape", json_pack("{s:s,s:f}", "type", "sphere", "radius", radius));
    json_object_set_new(b, "position", position);
    if (rng_below(r, 5) != 0) json_object_set_new(b, "velocity", rand_vec(r, dim, 4));
    if (rng_below(r, 3) == 0) json_object_set_new(b, "acceleration", rand_vec(r, dim, 3));
    if (rng_below(r, 6) == 0) json_object_set_new(b, "mass", json_real(rng_range(r, 0.5, 10)));
    if (rng_below(r, 8) == 0) json_object_set_new(b, "static", json_boolean(rng_below(r, 2)));
    if (rng_below(r, 5) == 0)
        json_object_set_new(b, "id",
                            rng_below(r, 2) ? json_string("ship-7")
                                            : json_integer((json_int_t)rng_below(r, 100)));
    return b;
}

/* The radius member's holder: the body itself or its "shape". */
static json_t *radius_holder(json_t *body) {
    json_t *shape = json_object_get(body, "shape");
    return shape ? shape : body;
}

/* A random /v1/toi body and the status it must get. */
static json_t *rand_toi(rng *r, int *expect) {
    int dim = rng_below(r, 2) ? 2 : 3;
    double ra = rng_range(r, 0, 1.5), rb = rng_range(r, 0, 1.5);
    json_t *pa = rand_vec(r, dim, 10);
    json_t *pb;
    json_t *a, *b;
    switch (rng_below(r, 3)) {
    case 0: { /* aimed: b heads for a, usually a hit */
        json_t *off = rand_vec(r, dim, 8);
        pb = vec_plus(pa, off);
        a = rand_body(r, dim, pa, ra);
        b = rand_body(r, dim, pb, rb);
        json_object_set_new(b, "velocity", vec_scaled(off, -rng_range(r, 0.25, 2)));
        json_object_del(b, "acceleration");
        json_object_set_new(a, "velocity", vec_scaled(off, 0)); /* a stands still */
        json_object_del(a, "acceleration");
        json_decref(off);
        break;
    }
    case 1: { /* overlapping at t = 0 */
        json_t *off = rand_vec(r, dim, 0.25);
        pb = vec_plus(pa, off);
        json_decref(off);
        if (ra + rb < 1) ra = rb = 0.75;
        a = rand_body(r, dim, pa, ra);
        b = rand_body(r, dim, pb, rb);
        break;
    }
    default: /* anywhere: mostly misses */
        pb = rand_vec(r, dim, 10);
        a = rand_body(r, dim, pa, ra * 0.25);
        b = rand_body(r, dim, pb, rb * 0.25);
        break;
    }
    if (json_object_get(b, "velocity") == NULL && rng_below(r, 2))
        json_object_set_new(b, "velocity", rand_vec(r, dim, 4));
    json_t *req = json_pack("{s:o,s:o}", "a", a, "b", b);
    if (rng_below(r, 4) == 0)
        json_object_set_new(req, "horizon", json_real(rng_range(r, 0.25, 20)));
    *expect = 200;

    if (rng_below(r, 10) != 0) return req;
    /* about one in ten: break it */
    json_t *victim = rng_below(r, 2) ? a : b;
    switch (rng_below(r, 9)) {
    case 0:
        json_object_set_new(radius_holder(victim), "radius", json_real(-rng_range(r, 0.25, 2)));
        *expect = 422;
        break;
    case 1:
        json_object_del(req, "b");
        *expect = 400;
        break;
    case 2:
        json_object_set_new(radius_holder(victim), "radius", json_string("big"));
        *expect = 400;
        break;
    case 3:
        json_object_set_new(victim, "position", json_string("here"));
        *expect = 400;
        break;
    case 4: /* b's position in the other dimension */
        json_object_set_new(b, "position", rand_vec(r, dim == 2 ? 3 : 2, 5));
        *expect = 400;
        break;
    case 5:
        json_object_set_new(req, "horizon", json_real(rng_below(r, 2) ? 0.0 : -1.0));
        *expect = 422;
        break;
    case 6:
        json_object_set_new(victim, "mass", json_real(0));
        *expect = 422;
        break;
    case 7:
        json_object_set_new(victim, "static", json_string("yes"));
        *expect = 400;
        break;
    default:
        json_array_set_new(json_object_get(victim, "position"), 0, json_real(1e61));
        *expect = 422;
        break;
    }
    return req;
}

/* POST a JSON document; returns the parsed answer and sets *status. */
static json_t *post_doc(void *curl, const imp_test_daemon *d, const char *path, const json_t *doc,
                        long *status) {
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_non_null(text);
    imp_http_result r;
    post_json(curl, d, path, text, strlen(text), &r);
    free(text);
    *status = r.status;
    json_t *j = parse_json(r.body, r.len);
    if (r.status != 200) assert_media_type(r.content_type, "application/problem+json");
    imp_http_result_free(&r);
    return j;
}

static void test_batch_equals_singles(void **state) {
    (void)state;
    rng g = {RANDOM_SEED};
    json_t *bodies[RANDOM_REQUESTS];
    int expect[RANDOM_REQUESTS];
    json_t *requests = json_array();
    for (size_t i = 0; i < RANDOM_REQUESTS; ++i) {
        bodies[i] = rand_toi(&g, &expect[i]);
        json_array_append_new(requests, json_pack("{s:s,s:O}", "op", "toi", "body", bodies[i]));
    }
    json_t *batch = json_pack("{s:o}", "requests", requests);

    long batch_status;
    json_t *answer = post_doc(NULL, &main_daemon, "/v1/batch", batch, &batch_status);
    assert_int_equal(batch_status, 200);
    const json_t *results = json_object_get(answer, "results");
    assert_true(json_is_array(results));
    assert_int_equal(json_array_size(results), RANDOM_REQUESTS);

    CURL *c = curl_easy_init();
    assert_non_null(c);
    size_t invalid = 0, hits = 0, overlaps = 0, misses = 0;
    for (size_t i = 0; i < RANDOM_REQUESTS; ++i) {
        long single_status;
        json_t *single = post_doc(c, &main_daemon, "/v1/toi", bodies[i], &single_status);
        const json_t *item = json_array_get(results, i);
        long item_status = (long)json_integer_value(json_object_get(item, "status"));
        const json_t *item_body = json_object_get(item, "body");
        if (single_status != expect[i] || item_status != single_status ||
            !json_equal(single, item_body)) {
            char *req = json_dumps(bodies[i], JSON_COMPACT);
            char *s1 = json_dumps(single, JSON_COMPACT);
            char *s2 = json_dumps(item_body, JSON_COMPACT);
            print_error("seed 0x%llx, request %zu: expected %d, alone %ld, in batch %ld\n"
                        "request: %s\nalone:    %s\nin batch: %s\n",
                        (unsigned long long)RANDOM_SEED, i, expect[i], single_status, item_status,
                        req, s1, s2 ? s2 : "(none)");
            free(req);
            free(s1);
            free(s2);
            fail();
        }
        if (single_status != 200) {
            ++invalid;
        } else {
            const char *st = str_member(single, "status");
            hits += strcmp(st, "hit") == 0;
            overlaps += strcmp(st, "overlapping") == 0;
            misses += strcmp(st, "none") == 0;
        }
        json_decref(single);
    }
    curl_easy_cleanup(c);
    fprintf(stderr, "batch vs singles: %zu invalid, %zu hit, %zu overlapping, %zu none\n", invalid,
            hits, overlaps, misses);
    /* the generator must keep covering every kind of answer */
    if (invalid < 10 || hits < 20 || overlaps < 20 || misses < 20) {
        print_error("seed 0x%llx: weak mix: %zu invalid, %zu hit, %zu overlapping, %zu none\n",
                    (unsigned long long)RANDOM_SEED, invalid, hits, overlaps, misses);
        fail();
    }
    for (size_t i = 0; i < RANDOM_REQUESTS; ++i)
        json_decref(bodies[i]);
    json_decref(answer);
    json_decref(batch);
}

/* Items' envelopes: problems point into the batch document; the other items still run. */
static void test_batch_envelopes(void **state) {
    (void)state;
    imp_http_result r;
    static const char empty[] = "{\"requests\":[]}";
    post_json(NULL, &main_daemon, "/v1/batch", empty, sizeof empty - 1, &r);
    assert_status(&r, 200);
    json_t *j = parse_json(r.body, r.len);
    json_t *want = json_pack("{s:[]}", "results");
    assert_true(json_equal(j, want));
    json_decref(want);
    json_decref(j);
    imp_http_result_free(&r);

    static const char *const bad_docs[] = {"{}", "{\"requests\":{}}", "{\"requests\":5}"};
    for (size_t i = 0; i < sizeof bad_docs / sizeof bad_docs[0]; ++i) {
        post_json(NULL, &main_daemon, "/v1/batch", bad_docs[i], strlen(bad_docs[i]), &r);
        assert_problem(&r, 400, "/requests");
        imp_http_result_free(&r);
    }
    /* a misspelt envelope is an unknown member, not a missing one */
    post_json(NULL, &main_daemon, "/v1/batch", "{\"reqs\":[]}", 11, &r);
    assert_problem(&r, 400, "/reqs");
    imp_http_result_free(&r);

    static const char mixed[] = "{\"requests\":["
                                "{\"op\":\"toi\",\"body\":" HEAD_ON "},"
                                "{\"op\":\"batch\",\"body\":{\"requests\":[]}},"
                                "{\"op\":\"teleport\",\"body\":{}},"
                                "5,"
                                "{\"op\":\"toi\"},"
                                "{\"body\":" HEAD_ON "},"
                                "{\"op\":\"toi\",\"body\":" HEAD_ON "}]}";
    post_json(NULL, &main_daemon, "/v1/batch", mixed, sizeof mixed - 1, &r);
    assert_status(&r, 200);
    j = parse_json(r.body, r.len);
    const json_t *res = json_object_get(j, "results");
    assert_int_equal(json_array_size(res), 7);
    static const struct {
        long status;
        const char *pointer;
    } want_items[] = {{200, NULL},          {422, "/requests/1/op"},   {422, "/requests/2/op"},
                      {400, "/requests/3"}, {400, "/requests/4/body"}, {400, "/requests/5/op"},
                      {200, NULL}};
    for (size_t i = 0; i < 7; ++i) {
        const json_t *it = json_array_get(res, i);
        const json_t *b = json_object_get(it, "body");
        long st = (long)json_integer_value(json_object_get(it, "status"));
        if (st != want_items[i].status) {
            print_error("item %zu: status %ld, expected %ld\n", i, st, want_items[i].status);
            fail();
        }
        if (want_items[i].pointer)
            assert_problem_doc(b, st, want_items[i].pointer);
        else
            assert_true(json_real_value(json_object_get(b, "time")) == 1.0);
    }
    json_decref(j);
    imp_http_result_free(&r);
}

/* A JSON scalar is a valid JSON document (RFC 8259); as a batch item's
 * body and as a POST /v1/toi body it must get the same answer. */
static void test_batch_scalar_body_equals_single(void **state) {
    (void)state;
    static const char *const scalars[] = {"5", "null", "\"x\"", "true"};
    int mismatches = 0;
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; ++i) {
        imp_http_result single, batch;
        post_json(NULL, &main_daemon, "/v1/toi", scalars[i], strlen(scalars[i]), &single);
        char doc[128];
        snprintf(doc, sizeof doc, "{\"requests\":[{\"op\":\"toi\",\"body\":%s}]}", scalars[i]);
        post_json(NULL, &main_daemon, "/v1/batch", doc, strlen(doc), &batch);
        assert_status(&batch, 200);
        json_t *s = parse_json(single.body, single.len);
        json_t *b = parse_json(batch.body, batch.len);
        const json_t *item = json_array_get(json_object_get(b, "results"), 0);
        long item_status = (long)json_integer_value(json_object_get(item, "status"));
        int same = item_status == single.status && json_equal(s, json_object_get(item, "body"));
        if (!same) {
            char *ib = json_dumps(json_object_get(item, "body"), JSON_COMPACT);
            print_error("body %s: alone %ld %s\n             in batch %ld %s\n", scalars[i],
                        single.status, single.body, item_status, ib ? ib : "(none)");
            free(ib);
            ++mismatches;
        }
        json_decref(s);
        json_decref(b);
        imp_http_result_free(&single);
        imp_http_result_free(&batch);
    }
    assert_int_equal(mismatches, 0);
}

static void test_batch_item_limit(void **state) {
    (void)state;
    static const char *const args[] = {"--max-batch-items", "5", NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
    size_t len;
    char *six = heavy_batch(6, &len);
    imp_http_result r;
    post_json(NULL, &d, "/v1/batch", six, len, &r);
    assert_problem(&r, 422, "/requests");
    imp_http_result_free(&r);
    free(six);
    char *five = heavy_batch(5, &len);
    post_json(NULL, &d, "/v1/batch", five, len, &r);
    assert_status(&r, 200);
    assert_heavy_answer(r.body, r.len, 5);
    imp_http_result_free(&r);
    free(five);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
}

/* ==== 7. access log ========================================================================= */

static void test_access_log_json(void **state) {
    (void)state;
    static const char *const args[] = {"--log", "json", NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 1), 0);
    imp_http_result r;
    post_json(NULL, &d, "/v1/toi", HEAD_ON, strlen(HEAD_ON), &r);
    assert_status(&r, 200);
    size_t reply_len = r.len;
    imp_http_result_free(&r);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
    char *err = imp_test_daemon_read_stderr(&d);
    assert_non_null(err);

    size_t found = 0;
    for (char *line = err; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n > 0) {
            json_error_t e;
            json_t *j = json_loadb(line, n, 0, &e); /* every line is one JSON object */
            if (!json_is_object(j)) {
                print_error("log line is not a JSON object (%s): %.*s\n", e.text, (int)n, line);
                fail();
            }
            if (strcmp(str_member(j, "msg"), "request") == 0 &&
                strcmp(str_member(j, "path"), "/v1/toi") == 0) {
                ++found;
                assert_string_equal(str_member(j, "method"), "POST");
                assert_true(json_is_integer(json_object_get(j, "status")));
                assert_int_equal(json_integer_value(json_object_get(j, "status")), 200);
                assert_true(json_is_integer(json_object_get(j, "bytes")));
                assert_int_equal(json_integer_value(json_object_get(j, "bytes")), reply_len);
                const json_t *in = json_object_get(j, "request_bytes");
                if (in) assert_int_equal(json_integer_value(in), strlen(HEAD_ON));
                const json_t *ms = json_object_get(j, "duration_ms");
                assert_true(json_is_number(ms));
                assert_true(json_number_value(ms) >= 0);
            }
            json_decref(j);
        }
        line += n + (nl != NULL);
    }
    if (found != 1) {
        print_error("%zu access lines for POST /v1/toi, expected 1; stderr:\n%s\n", found, err);
        fail();
    }
    free(err);
}

static void test_log_off_is_silent(void **state) {
    (void)state;
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, NULL, NULL, 1), 0); /* defaults: --log off */
    assert_head_on_ok(NULL, &d);
    imp_http_result r;
    get(&d, "/nope", &r);
    assert_status(&r, 404);
    imp_http_result_free(&r);
    assert_int_equal(imp_test_daemon_stop(&d, SIGTERM), 0);
    char *err = imp_test_daemon_read_stderr(&d);
    assert_non_null(err);
    if (err[0] != '\0') {
        print_error("--log off, yet stderr has: %s\n", err);
        fail();
    }
    free(err);
}

/* ==== 8. settings =========================================================================== */

static void test_help_lists_service_settings(void **state) {
    (void)state;
    static const char *const args[] = {"--help", NULL};
    char *out = NULL;
    assert_int_equal(imp_test_run(args, NULL, &out, NULL), 0);
    static const char *const names[] = {
        "--io-threads",      "IMPACTD_IO_THREADS", "--request-timeout-s", "--drain-grace-s",
        "--drain-timeout-s", "--max-batch-items",  "--max-events"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        if (!strstr(out, names[i])) {
            print_error("--help does not mention %s:\n%s\n", names[i], out);
            fail();
        }
    }
    free(out);
}

static void expect_bad_flag(const char *flag, const char *value) {
    const char *const args[] = {flag, value, NULL};
    char *out = NULL, *err = NULL;
    int status = imp_test_run(args, NULL, &out, &err);
    if (status != 2 || !strstr(err, flag)) {
        print_error("%s %s: exit %d (expected 2), stderr: %s\n", flag, value, status, err);
        fail();
    }
    free(out);
    free(err);
}

static void test_bad_service_settings(void **state) {
    (void)state;
    expect_bad_flag("--drain-grace-s", "-1");
    expect_bad_flag("--io-threads", "x");
}

int main(void) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
    const struct CMUnitTest overload_tests[] = {
        cmocka_unit_test(test_overload_503_and_recovery),
        cmocka_unit_test(test_503_keeps_connection),
    };
    const struct CMUnitTest lanes_tests[] = {
        cmocka_unit_test(test_light_beats_heavy),
    };
    const struct CMUnitTest slow_tests[] = {
        cmocka_unit_test(test_trickled_headers_cut),
        cmocka_unit_test(test_tricklers_do_not_block_others),
        cmocka_unit_test(test_trickled_body_cut),
        cmocka_unit_test(test_silent_connection_cut),
        cmocka_unit_test(test_idle_after_reply_cut),
        cmocka_unit_test(test_queued_work_not_cut),
        cmocka_unit_test(test_slow_reader_cut),
        cmocka_unit_test(test_hangup_while_queued),
        cmocka_unit_test(test_slow_bookkeeping),
    };
    const struct CMUnitTest limit_tests[] = {
        cmocka_unit_test(test_connection_limit),
    };
    const struct CMUnitTest main_tests[] = {
        cmocka_unit_test(test_metrics_move_exactly),
        cmocka_unit_test(test_metrics_unknown_path_is_other),
        cmocka_unit_test(test_openapi_is_the_file),
        cmocka_unit_test(test_readyz),
        cmocka_unit_test(test_batch_equals_singles),
        cmocka_unit_test(test_batch_envelopes),
        cmocka_unit_test(test_batch_scalar_body_equals_single),
    };
    const struct CMUnitTest own_daemon_tests[] = {
        cmocka_unit_test(test_batch_item_limit),
        cmocka_unit_test(test_access_log_json),
        cmocka_unit_test(test_log_off_is_silent),
        cmocka_unit_test(test_help_lists_service_settings),
        cmocka_unit_test(test_bad_service_settings),
    };
    int failed = 0;
    failed +=
        cmocka_run_group_tests_name("overload", overload_tests, start_overload, stop_overload);
    failed += cmocka_run_group_tests_name("lanes", lanes_tests, start_lanes, stop_lanes);
    failed += cmocka_run_group_tests_name("slow clients", slow_tests, start_slow, stop_slow);
    failed += cmocka_run_group_tests_name("connection limit", limit_tests, start_limit, stop_limit);
    failed += cmocka_run_group_tests_name("main", main_tests, start_main, stop_main);
    failed += cmocka_run_group_tests_name("own daemons", own_daemon_tests, NULL, NULL);
    curl_global_cleanup();
    return failed == 0 && teardown_failures == 0 ? 0 : 1;
}
