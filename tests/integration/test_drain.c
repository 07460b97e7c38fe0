/*
 * test_drain.c - graceful drain on SIGTERM, under continuous load.
 *
 * DESIGN
 * What: clients fire requests without pause across a SIGTERM; every request
 * the daemon accepted must complete with a correct 200. Accepted means it
 * got an HTTP answer other than 503 draining; a request may instead be
 * refused (connection refused once the listener is closed) or answered
 * 503 draining with Retry-After, and nothing else is allowed: no 5xx, no
 * connection cut after a request was sent on an established connection,
 * no wrong body. Also: /readyz turns 503 immediately while /v1/toi is
 * still served during the grace period; heavy work in flight when the
 * listener closes completes; the process exits 0 within a bound.
 * How: client threads with their own libcurl handles (keep-alive, so the
 * "503 + Connection: close on an open connection" path is exercised as
 * well as fresh connects); each records its outcomes in its own counters.
 * A fresh connection that fails before any byte comes back once SIGTERM
 * has been sent is the kernel resetting a connection it had queued but
 * nobody accepted when the listener closed: counted separately as
 * refused, and reported; so is a request whose send fails on a kept-alive
 * connection the daemon closed while it was idle. (Keyed to the signal, not
 * to /readyz being seen at 503: without grace the listener may close before
 * the test has polled readiness.)
 */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/integration/daemon.h"

#define TOI_BODY                                                                                   \
    "{\"a\":{\"radius\":0.5,\"position\":[0,0],\"velocity\":[1,0]},"                               \
    "\"b\":{\"radius\":0.5,\"position\":[3,0],\"velocity\":[-1,0]}}"

/* Items in a heavy batch: enough for tens of milliseconds of work. */
#define HEAVY_ITEMS 10000
/* Upper bound on SIGTERM-to-exit beyond the configured grace (seconds);
 * generous for sanitizer builds on a loaded machine. */
#define EXIT_BOUND_S 15

typedef struct outcome {
    _Atomic long ok;     /* 200 with the right body (read while the client runs) */
    long draining;       /* 503 draining with Retry-After */
    long refused;        /* no connection: listener closed */
    _Atomic long bad;    /* anything else: the test fails (read while the client runs) */
    long ok_after_ready; /* 200s that completed after /readyz was seen at 503 */
    char first_bad[256];
} outcome;

typedef struct client {
    pthread_t thread;
    const char *url; /* POST target */
    const char *body;
    size_t len;
    long expect_results; /* batch: number of results; 0: a single toi */
    int keep_alive;      /* reuse one handle */
    _Atomic int *stop;
    _Atomic int *not_ready_seen;
    _Atomic int *term_sent; /* SIGTERM is on its way: the listener may close any moment */
    outcome out;
} client;

typedef struct buf {
    char *p;
    size_t len, cap;
    char retry_after[32];
} buf;

static size_t on_data(char *d, size_t size, size_t n, void *ud) {
    buf *b = ud;
    return imp_test_buf_append(&b->p, &b->len, &b->cap, d, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *d, size_t size, size_t n, void *ud) {
    buf *b = ud;
    imp_test_header_value(d, size * n, "Retry-After", b->retry_after, sizeof b->retry_after);
    return size * n;
}

static void note_bad(outcome *o, const char *fmt, ...) {
    o->bad++;
    if (o->first_bad[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->first_bad, sizeof o->first_bad, fmt, ap);
    va_end(ap);
}

/* 1 when body is the right answer: the toi hit at 1.0, or a batch of
 * expect_results items whose first is that hit. */
static int body_is_right(const char *body, long expect_results) {
    json_t *doc = json_loads(body, 0, NULL);
    if (!doc) return 0;
    const json_t *toi = doc;
    int ok = 1;
    if (expect_results > 0) {
        const json_t *results = json_object_get(doc, "results");
        ok = json_array_size(results) == (size_t)expect_results &&
             json_integer_value(json_object_get(json_array_get(results, 0), "status")) == 200;
        toi = json_object_get(json_array_get(results, 0), "body");
    }
    ok = ok && json_real_value(json_object_get(toi, "time")) == 1.0 &&
         strcmp(json_string_value(json_object_get(toi, "status")), "hit") == 0;
    json_decref(doc);
    return ok;
}

/* One request; classifies its outcome. Returns 1 when the server refused
 * the connection (the loop may stop). */
static int one_request(client *c, CURL *h) {
    buf b = {0};
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    int not_ready_before = *c->not_ready_seen;
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    int refused = 0;
    if (rc == CURLE_COULDNT_CONNECT) {
        c->out.refused++;
        refused = 1;
    } else if (rc != CURLE_OK) {
        long connects = 0;
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
        if (connects > 0 && b.len == 0 &&
            (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR) &&
            *c->term_sent) {
            c->out.refused++; /* reset of a queued, never-accepted connection */
            refused = 1;
        } else if (connects == 0 && b.len == 0 && rc == CURLE_SEND_ERROR && *c->term_sent) {
            /* a kept-alive connection the stopping daemon closed while idle, just as the
             * next request went out: the send failed, so nothing was accepted (a server
             * may close an idle connection at any time, RFC 9112 9.6) */
            c->out.refused++;
            refused = 1;
        } else {
            note_bad(&c->out, "transport error %s (new connections %ld)", curl_easy_strerror(rc),
                     connects);
        }
    } else {
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (status == 200 && b.p && body_is_right(b.p, c->expect_results)) {
            c->out.ok++;
            if (not_ready_before) c->out.ok_after_ready++;
        } else if (status == 503 && b.p && strstr(b.p, "\"draining\"") &&
                   strcmp(b.retry_after, "1") == 0) {
            c->out.draining++;
        } else {
            note_bad(&c->out, "status %ld body %.120s", status, b.p ? b.p : "");
        }
    }
    free(b.p);
    return refused;
}

static void *client_main(void *arg) {
    client *c = arg;
    CURL *h = c->keep_alive ? curl_easy_init() : NULL;
    int refused_in_a_row = 0;
    while (!*c->stop && refused_in_a_row < 3) {
        CURL *e = h ? h : curl_easy_init();
        if (!e) {
            note_bad(&c->out, "curl_easy_init failed");
            break;
        }
        refused_in_a_row = one_request(c, e) ? refused_in_a_row + 1 : 0;
        if (!h) curl_easy_cleanup(e);
    }
    if (h) curl_easy_cleanup(h);
    return NULL;
}

static char *heavy_body(size_t *len) {
    static const char item[] = "{\"op\":\"toi\",\"body\":" TOI_BODY "}";
    size_t cap = 32 + HEAVY_ITEMS * (sizeof item + 1);
    char *s = malloc(cap);
    assert_non_null(s);
    size_t n = (size_t)snprintf(s, cap, "{\"requests\":[");
    for (int i = 0; i < HEAVY_ITEMS; ++i) {
        if (i) s[n++] = ',';
        memcpy(s + n, item, sizeof item - 1);
        n += sizeof item - 1;
    }
    memcpy(s + n, "]}", 3);
    *len = n + 2;
    return s;
}

static long status_of(const char *url) {
    imp_http_result r;
    long status = imp_http(NULL, "GET", url, NULL, NULL, 0, &r) == 0 ? r.status : 0;
    imp_http_result_free(&r);
    return status;
}

static void print_outcome(const char *name, const outcome *o) {
    print_message(
        "%-12s ok %ld (after readyz 503: %ld), 503 draining %ld, refused %ld, bad %ld%s%s\n", name,
        (long)o->ok, o->ok_after_ready, o->draining, o->refused, (long)o->bad, o->bad ? ": " : "",
        o->first_bad);
}

/*
 * The whole drain under load with a grace period: readiness flips first,
 * work continues through the grace, then the listener closes and the
 * daemon exits 0 once the work in flight is done.
 */
static void run_drain(const char *grace) {
    const char *const args[] = {"--threads", "2", "--drain-grace-s", grace, "--drain-timeout-s",
                                "30",        NULL};
    imp_test_daemon d;
    assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
    char toi_url[128], batch_url[128], readyz[128];
    snprintf(toi_url, sizeof toi_url, "%s/v1/toi", d.url);
    snprintf(batch_url, sizeof batch_url, "%s/v1/batch", d.url);
    snprintf(readyz, sizeof readyz, "%s/readyz", d.url);
    assert_int_equal(status_of(readyz), 200);

    size_t heavy_len;
    char *heavy = heavy_body(&heavy_len);
    _Atomic int stop = 0, not_ready = 0, term_sent = 0;
    client clients[] = {
        {.url = toi_url, .body = TOI_BODY, .len = sizeof TOI_BODY - 1, .keep_alive = 1},
        {.url = toi_url, .body = TOI_BODY, .len = sizeof TOI_BODY - 1, .keep_alive = 0},
        {.url = batch_url,
         .body = heavy,
         .len = heavy_len,
         .expect_results = HEAVY_ITEMS,
         .keep_alive = 1},
    };
    const size_t n = sizeof clients / sizeof clients[0];
    for (size_t i = 0; i < n; ++i) {
        clients[i].stop = &stop;
        clients[i].not_ready_seen = &not_ready;
        clients[i].term_sent = &term_sent;
        assert_int_equal(pthread_create(&clients[i].thread, NULL, client_main, &clients[i]), 0);
    }
    /* let the load establish itself, including at least one heavy batch */
    while (clients[2].out.ok < 1 && clients[2].out.bad == 0)
        imp_test_sleep_ms(10);
    long ok_before = clients[0].out.ok + clients[1].out.ok;

    double t0 = imp_test_now_s();
    term_sent = 1;
    assert_int_equal(kill(d.pid, SIGTERM), 0);
    /* Readiness flips at once (bounded generously: the daemon is busy). Without
     * grace the listener may already be closed: refused is not-ready too. No
     * assert may fire while the client threads run, so outcomes are checked
     * after they are joined. */
    double ready_flip = -1;
    long ready_status = 0;
    while (imp_test_now_s() - t0 < 5) {
        ready_status = status_of(readyz);
        if (ready_status == 503 || (ready_status == 0 && atof(grace) == 0)) {
            ready_flip = imp_test_now_s() - t0;
            break;
        }
        if (ready_status != 200) break;
        imp_test_sleep_ms(5);
    }
    not_ready = 1;

    /* the clients run until the listener refuses them; the daemon then exits */
    int status = -1;
    double exited = -1;
    while (imp_test_now_s() - t0 < atof(grace) + EXIT_BOUND_S) {
        int ws;
        pid_t p = waitpid(d.pid, &ws, WNOHANG);
        if (p == d.pid) {
            exited = imp_test_now_s() - t0;
            status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
            break;
        }
        imp_test_sleep_ms(10);
    }
    if (exited < 0) {
        kill(d.pid, SIGKILL);
        waitpid(d.pid, NULL, 0);
    }
    close(d.out_fd); /* reaped here rather than by imp_test_daemon_stop */
    stop = 1;
    for (size_t i = 0; i < n; ++i)
        pthread_join(clients[i].thread, NULL);

    print_message("grace %ss: readyz 503 after %.3f s, exit %d after %.3f s\n", grace, ready_flip,
                  status, exited);
    print_outcome("toi (k-a)", &clients[0].out);
    print_outcome("toi (fresh)", &clients[1].out);
    print_outcome("batch", &clients[2].out);
    free(heavy);

    assert_true(ready_flip >= 0);
    assert_true(exited >= 0);
    assert_int_equal(status, 0);
    long after = 0;
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(clients[i].out.bad, 0);
        after += clients[i].out.ok_after_ready;
    }
    assert_true(ok_before > 0);
    assert_true(clients[2].out.ok >= 1);
    if (atof(grace) > 0) {
        assert_true(clients[0].out.ok + clients[1].out.ok > ok_before);
        /* the grace period: not ready, yet still serving */
        assert_true(after > 0);
        assert_true(exited >= atof(grace));
    }
}

static void test_drain_with_grace(void **state) {
    (void)state;
    run_drain("1");
}

static void test_drain_without_grace(void **state) {
    (void)state;
    run_drain("0");
}

/* Stop cycles while keep-alive clients keep every connection thread busy.
 * Regression for an abort at shutdown: with libmicrohttpd's epoll loop,
 * MHD_quiesce_daemon raced the connection threads for the listener's epoll
 * entry and panicked on losing (see http.c); a rare race, so many cycles. */
#define STOP_CYCLES 40

static void test_repeated_stop_under_traffic(void **state) {
    (void)state;
    const char *const args[] = {"--threads", "2", "--io-threads", "2", NULL};
    for (int cycle = 0; cycle < STOP_CYCLES; ++cycle) {
        imp_test_daemon d;
        assert_int_equal(imp_test_daemon_start(&d, args, NULL, 0), 0);
        char toi_url[128];
        snprintf(toi_url, sizeof toi_url, "%s/v1/toi", d.url);
        _Atomic int stop = 0, not_ready = 0, term_sent = 0;
        client clients[2];
        for (size_t i = 0; i < 2; ++i) {
            clients[i] = (client){.url = toi_url,
                                  .body = TOI_BODY,
                                  .len = sizeof TOI_BODY - 1,
                                  .keep_alive = 1,
                                  .stop = &stop,
                                  .not_ready_seen = &not_ready,
                                  .term_sent = &term_sent};
            assert_int_equal(pthread_create(&clients[i].thread, NULL, client_main, &clients[i]), 0);
        }
        while (clients[0].out.ok + clients[1].out.ok < 4 && clients[0].out.bad == 0 &&
               clients[1].out.bad == 0)
            imp_test_sleep_ms(1);
        term_sent = 1; /* from here a reset of a fresh connection counts as refused */
        int status = imp_test_daemon_stop(&d, SIGTERM);
        stop = 1;
        for (size_t i = 0; i < 2; ++i)
            pthread_join(clients[i].thread, NULL);
        if (status != 0 || clients[0].out.bad || clients[1].out.bad) {
            print_error("cycle %d: exit status %d\n", cycle, status);
            print_outcome("client 0", &clients[0].out);
            print_outcome("client 1", &clients[1].out);
            fail();
        }
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drain_with_grace),
        cmocka_unit_test(test_drain_without_grace),
        cmocka_unit_test(test_repeated_stop_under_traffic),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
