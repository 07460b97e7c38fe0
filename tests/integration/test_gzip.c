/*
 * test_gzip.c - compression over HTTP (docs/API.md, "Compression"): gzip
 * request bodies on every POST endpoint answer exactly what the plain body
 * does, with a declared length and chunked; a gzip bomb is 413 quickly,
 * having inflated no more than the limit; corrupt, truncated and trailing
 * gzip is 400 bad-content-encoding; another content coding is 415 with
 * Accept-Encoding: gzip; replies over 1 KiB are gzip for Accept-Encoding:
 * gzip and decompress to exactly the plain reply, small ones and gzip;q=0
 * are not; HEAD says what GET would; the /metrics counters move.
 *
 * DESIGN
 * How: one daemon (a 16 MiB body limit, so the bomb passes it early)
 * driven with libcurl, which is told to send Accept-Encoding as a plain
 * header so that it hands over the reply bytes as they came; the test
 * gzips and gunzips with zlib itself. Replies of the scene endpoints carry
 * the server's elapsed_ms, which differs from run to run: its digits are
 * blanked before two replies are compared.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "daemon.h"
#include "tests/gzip_ref.h"

#define MIB ((size_t)1 << 20)
#define BODY_LIMIT (16 * MIB)
#define BODY_LIMIT_ARG "16777216"
/* The bomb's 413 must come within this (s), sanitizers included; reading all of the 1 MB is
 * well under a second, inflating 1 GiB is not. */
#define BOMB_SECONDS 10.0

static imp_test_daemon daemon_;

/* ---- HTTP ---------------------------------------------------------------------------------- */

typedef imp_http_result reply;

/* A request to the daemon's `path` (imp_http_with); the test fails when no reply came. */
static reply request(const char *method, const char *path, const char *const *headers,
                     const void *body, size_t len, size_t piece) {
    char url[256];
    snprintf(url, sizeof url, "%s%s", daemon_.url, path);
    reply r;
    if (imp_http_with(method, url, headers, body, len, piece, &r) != 0)
        fail_msg("%s %s: no reply", method, path);
    return r;
}

static reply post(const char *path, const char *const *headers, const void *body, size_t len) {
    return request("POST", path, headers, body, len, 0);
}

/* ---- gzip ------------------------------------------------------------------------------------ */

/* zlib's gzip of `len` bytes (with bytes to spare after it). */
static unsigned char *gzip_bytes(const void *data, size_t len, size_t *out_len) {
    unsigned char *z = imp_ref_gzip(data, len, 6, out_len);
    assert_non_null(z);
    return z;
}

/* A gzip reply body decoded by zlib; the test fails when it does not decode. */
static char *gunzip_bytes(const char *data, size_t len, size_t *out_len) {
    char *out = imp_ref_gunzip(data, len, out_len);
    if (!out) fail_msg("the gzip reply does not decode");
    return out;
}

/* Sets every "elapsed_ms" value (the only member that differs between two runs of one
 * request) to 0, in place; returns the new length. */
static size_t blank_elapsed(char *s, size_t len) {
    static const char key[] = "\"elapsed_ms\":";
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        if (len - i >= sizeof key - 1 && memcmp(s + i, key, sizeof key - 1) == 0) {
            memmove(s + out, key, sizeof key - 1);
            out += sizeof key - 1;
            s[out++] = '0';
            for (i += sizeof key - 1; i < len && s[i] != ',' && s[i] != '}';)
                ++i;
        } else {
            s[out++] = s[i++];
        }
    }
    return out;
}

/* Two reply bodies are the same, but for elapsed_ms. */
static void expect_same_reply(const char *what, const char *a, size_t alen, const char *b,
                              size_t blen) {
    char *ca = malloc(alen + 1), *cb = malloc(blen + 1);
    assert_non_null(ca);
    assert_non_null(cb);
    memcpy(ca, a, alen);
    memcpy(cb, b, blen);
    alen = blank_elapsed(ca, alen);
    blen = blank_elapsed(cb, blen);
    ca[alen] = cb[blen] = '\0';
    if (alen != blen || memcmp(ca, cb, alen) != 0)
        fail_msg("%s: the replies differ\n  %.300s\n  %.300s", what, ca, cb);
    free(ca);
    free(cb);
}

/* ---- requests -------------------------------------------------------------------------------- */

/* A valid body for every POST endpoint (the README's examples). */
static const struct {
    const char *path, *body;
} ENDPOINTS[] = {
    {"/v1/toi", "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
                " \"b\": {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}}"},
    {"/v1/paths/intersect", "{\"p\": [[0, 0], [2, 2]], \"q\": [[0, 2], [2, 0]]}"},
    {"/v1/overlap", "{\"a\": {\"shape\": {\"type\": \"box\", \"half_extents\": [1, 1]},"
                    " \"position\": [0, 0]}, \"b\": {\"radius\": 0.5, \"position\": [1.3, 0]}}"},
    {"/v1/respond", "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0],"
                    " \"mass\": 1}, \"b\": {\"radius\": 0.5, \"position\": [1, 0],"
                    " \"velocity\": [-1, 0], \"mass\": 3}}"},
    {"/v1/scenes/predict",
     "{\"bodies\": [{\"id\": \"ship-7\", \"radius\": 0.5, \"position\": [0, 0], \"velocity\": "
     "[1, 0]}, {\"id\": \"rock\", \"radius\": 1, \"position\": [4, 0]}], \"horizon\": 5}"},
    {"/v1/scenes/simulate",
     "{\"bodies\": [{\"id\": \"ball\", \"radius\": 0.5, \"position\": [0, 2], \"restitution\": "
     "0.5}, {\"id\": \"floor\", \"shape\": {\"type\": \"halfspace\", \"normal\": [0, 1], "
     "\"offset\": 0}, \"position\": [0, 0], \"static\": true}], \"horizon\": 1, \"gravity\": "
     "[0, -9.81]}"},
    {"/v1/validate",
     "{\"body\": {\"radius\": 0.5, \"position\": [0, 0]}, \"to\": [6, 0], \"dt\": 0.1, "
     "\"world\": [{\"id\": \"wall-2\", \"shape\": {\"type\": \"box\", \"half_extents\": "
     "[0.5, 3]}, \"position\": [3, 0], \"static\": true}], \"max_speed\": 100}"},
    {"/v1/batch", "{\"requests\": [{\"op\": \"toi\", \"body\": {\"a\": {\"radius\": 0.5, "
                  "\"position\": [0, 0], \"velocity\": [1, 0]}, \"b\": {\"radius\": 0.5, "
                  "\"position\": [3, 0]}}}, {\"op\": \"overlap\", \"body\": {\"a\": "
                  "{\"radius\": -1, \"position\": [0, 0]}, \"b\": {\"radius\": 1, "
                  "\"position\": [3, 0]}}}]}"},
};
#define N_ENDPOINTS (sizeof ENDPOINTS / sizeof ENDPOINTS[0])

static const char *const GZIP_BODY[] = {"Content-Encoding: gzip", NULL};
static const char *const ACCEPT_GZIP[] = {"Accept-Encoding: gzip", NULL};

/* A 3D scene of n moving spheres on a grid (deterministic): a reply of about 200 bytes per
 * body. */
static char *scene(int n, size_t *len) {
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    const char head[] = "{\"horizon\": 1, \"bodies\": [";
    assert_int_equal(imp_test_buf_append(&buf, len, &cap, head, sizeof head - 1), 0);
    for (int i = 0; i < n; ++i) {
        char b[160];
        int k = snprintf(b, sizeof b,
                         "%s{\"id\": %d, \"radius\": 0.5, \"position\": [%d.25, %d.5, 0], "
                         "\"velocity\": [0.%d, -0.%d, 0.125]}",
                         i ? "," : "", i, i % 40, i / 40, i % 7 + 1, i % 5 + 1);
        assert_int_equal(imp_test_buf_append(&buf, len, &cap, b, (size_t)k), 0);
    }
    assert_int_equal(imp_test_buf_append(&buf, len, &cap, "]}", 2), 0);
    return buf;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_gzip_request_on_every_endpoint(void **state) {
    (void)state;
    for (size_t i = 0; i < N_ENDPOINTS; ++i) {
        const char *body = ENDPOINTS[i].body;
        reply plain = post(ENDPOINTS[i].path, NULL, body, strlen(body));
        size_t zlen;
        unsigned char *z = gzip_bytes(body, strlen(body), &zlen);
        reply coded = post(ENDPOINTS[i].path, GZIP_BODY, z, zlen);
        /* x-gzip, in capitals, is the same coding */
        static const char *const x_gzip[] = {"Content-Encoding: X-GZIP", NULL};
        reply x = post(ENDPOINTS[i].path, x_gzip, z, zlen);
        /* chunked, in 7-byte pieces: a piece ends inside the header, a block, the trailer */
        reply chunked = request("POST", ENDPOINTS[i].path, GZIP_BODY, z, zlen, 7);
        printf("%-20s %4zu bytes, %3zu gzip: %ld\n", ENDPOINTS[i].path, strlen(body), zlen,
               plain.status);
        assert_int_equal(plain.status, 200);
        assert_int_equal(coded.status, 200);
        assert_int_equal(x.status, 200);
        assert_int_equal(chunked.status, 200);
        assert_string_equal(coded.content_type, plain.content_type);
        assert_string_equal(coded.content_encoding, ""); /* small replies are sent as they are */
        expect_same_reply(ENDPOINTS[i].path, plain.body, plain.len, coded.body, coded.len);
        expect_same_reply(ENDPOINTS[i].path, plain.body, plain.len, x.body, x.len);
        expect_same_reply(ENDPOINTS[i].path, plain.body, plain.len, chunked.body, chunked.len);
        imp_http_result_free(&plain);
        imp_http_result_free(&coded);
        imp_http_result_free(&x);
        imp_http_result_free(&chunked);
        free(z);
    }
}

/* A large scene, gzip both ways, against the same scene plain: the request decodes to the
 * same answer, a chunked upload too, and the gzip reply decodes to the plain reply. */
static void test_large_scene_both_ways(void **state) {
    (void)state;
    size_t len, zlen;
    char *body = scene(20000, &len);
    unsigned char *z = gzip_bytes(body, len, &zlen);
    reply plain = post("/v1/scenes/predict", NULL, body, len);
    assert_int_equal(plain.status, 200);
    assert_true(plain.len > 1024);
    assert_string_equal(plain.content_encoding, "");
    assert_string_equal(plain.vary, "Accept-Encoding"); /* it could have been compressed */

    static const char *const both[] = {"Content-Encoding: gzip", "Accept-Encoding: gzip", NULL};
    reply coded = post("/v1/scenes/predict", both, z, zlen);
    reply chunked = request("POST", "/v1/scenes/predict", both, z, zlen, 4000);
    printf("scene: request %zu bytes, gzip %zu; reply %zu bytes, gzip %zu\n", len, zlen, plain.len,
           coded.len);
    reply *replies[] = {&coded, &chunked};
    for (size_t i = 0; i < 2; ++i) {
        reply *r = replies[i];
        assert_int_equal(r->status, 200);
        assert_string_equal(r->content_encoding, "gzip");
        assert_string_equal(r->vary, "Accept-Encoding");
        assert_string_equal(r->content_type, "application/json");
        assert_true(r->len < plain.len / 2);
        size_t n;
        char *decoded = gunzip_bytes(r->body, r->len, &n);
        expect_same_reply("gzip scene", plain.body, plain.len, decoded, n);
        free(decoded);
        imp_http_result_free(r);
    }
    imp_http_result_free(&plain);
    free(z);
    free(body);
}

static void test_reply_compression_rules(void **state) {
    (void)state;
    size_t len;
    char *body = scene(200, &len);
    static const struct {
        const char *accept;
        int gzip;
    } cases[] = {
        {"Accept-Encoding: gzip", 1},
        {"Accept-Encoding: deflate, gzip;q=0.5, br", 1},
        {"Accept-Encoding: x-gzip", 1},
        {"Accept-Encoding: *", 1},
        {"Accept-Encoding: gzip;q=0", 0},
        {"Accept-Encoding: *, gzip;q=0", 0},
        {"Accept-Encoding: br", 0},
        {"Accept-Encoding: identity", 0},
        {"Accept-Encoding: gzip;q=0.5, identity", 0},
        {"X-None: no Accept-Encoding at all", 0},
    };
    reply plain = post("/v1/scenes/predict", NULL, body, len);
    assert_int_equal(plain.status, 200);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *const h[] = {cases[i].accept, NULL};
        reply r = post("/v1/scenes/predict", h, body, len);
        assert_int_equal(r.status, 200);
        if (strcmp(r.content_encoding, cases[i].gzip ? "gzip" : "") != 0)
            fail_msg("%s: Content-Encoding \"%s\"", cases[i].accept, r.content_encoding);
        assert_string_equal(r.vary, "Accept-Encoding");
        if (cases[i].gzip) {
            size_t n;
            char *decoded = gunzip_bytes(r.body, r.len, &n);
            expect_same_reply(cases[i].accept, plain.body, plain.len, decoded, n);
            free(decoded);
        }
        imp_http_result_free(&r);
    }
    imp_http_result_free(&plain);
    free(body);

    /* a small reply is never compressed, and does not vary */
    const char *toi = ENDPOINTS[0].body;
    reply small = post("/v1/toi", ACCEPT_GZIP, toi, strlen(toi));
    assert_int_equal(small.status, 200);
    assert_true(small.len <= 1024);
    assert_string_equal(small.content_encoding, "");
    assert_string_equal(small.vary, "");
    imp_http_result_free(&small);

    /* the operations routes too: /openapi.yaml by GET and by HEAD, whose headers are GET's */
    reply get = request("GET", "/openapi.yaml", ACCEPT_GZIP, NULL, 0, 0);
    reply head = request("HEAD", "/openapi.yaml", ACCEPT_GZIP, NULL, 0, 0);
    reply doc = request("GET", "/openapi.yaml", NULL, NULL, 0, 0);
    assert_int_equal(get.status, 200);
    assert_int_equal(head.status, 200);
    assert_string_equal(get.content_encoding, "gzip");
    assert_string_equal(head.content_encoding, "gzip");
    assert_string_equal(head.vary, "Accept-Encoding");
    assert_string_equal(head.content_length, get.content_length);
    assert_int_equal(head.len, 0);
    size_t n;
    char *decoded = gunzip_bytes(get.body, get.len, &n);
    assert_int_equal(n, doc.len);
    assert_memory_equal(decoded, doc.body, n);
    printf("/openapi.yaml: %zu bytes, gzip %zu\n", doc.len, get.len);
    free(decoded);
    imp_http_result_free(&get);
    imp_http_result_free(&head);
    imp_http_result_free(&doc);
}

/* A problem+json reply to a request that went wrong in a given way. */
static void expect_problem(const char *what, const reply *r, long status, const char *type) {
    char want[96];
    snprintf(want, sizeof want, "\"type\":\"%s\"", type);
    if (r->status != status || strcmp(r->content_type, "application/problem+json") != 0 ||
        !strstr(r->body, want))
        fail_msg("%s: %ld %s %.300s, expected %ld %s", what, r->status, r->content_type, r->body,
                 status, type);
}

static void test_bad_gzip_is_400(void **state) {
    (void)state;
    const char *body = ENDPOINTS[0].body;
    size_t zlen;
    unsigned char *z = gzip_bytes(body, strlen(body), &zlen);
    unsigned char *bad = malloc(zlen + 64);
    assert_non_null(bad);

    memcpy(bad, z, zlen);
    bad[zlen / 2] ^= 0x55;
    reply r = post("/v1/toi", GZIP_BODY, bad, zlen);
    expect_problem("corrupt", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    memcpy(bad, z, zlen);
    bad[zlen - 8] ^= 1; /* the CRC-32 */
    r = post("/v1/toi", GZIP_BODY, bad, zlen);
    expect_problem("wrong CRC", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    r = post("/v1/toi", GZIP_BODY, z, zlen - 3);
    expect_problem("truncated", &r, 400, "bad-content-encoding");
    assert_non_null(strstr(r.body, "truncated"));
    imp_http_result_free(&r);

    r = request("POST", "/v1/toi", GZIP_BODY, z, zlen - 3, 5);
    expect_problem("truncated, chunked", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    memcpy(bad, z, zlen);
    memcpy(bad + zlen, "\n{}", 3);
    r = post("/v1/toi", GZIP_BODY, bad, zlen + 3);
    expect_problem("trailing garbage", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    r = post("/v1/toi", GZIP_BODY, body, strlen(body));
    expect_problem("plain JSON said to be gzip", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    r = post("/v1/toi", GZIP_BODY, "", 0);
    expect_problem("empty gzip body", &r, 400, "bad-content-encoding");
    imp_http_result_free(&r);

    /* two members are one body */
    size_t half = strlen(body) / 2, l1, l2;
    unsigned char *m1 = gzip_bytes(body, half, &l1),
                  *m2 = gzip_bytes(body + half, strlen(body) - half, &l2);
    unsigned char *both = malloc(l1 + l2);
    assert_non_null(both);
    memcpy(both, m1, l1);
    memcpy(both + l1, m2, l2);
    r = post("/v1/toi", GZIP_BODY, both, l1 + l2);
    assert_int_equal(r.status, 200);
    imp_http_result_free(&r);
    free(both);
    free(m1);
    free(m2);

    /* the decoded body is what the API judges: a gzip of broken JSON is malformed-json */
    size_t blen;
    unsigned char *broken = gzip_bytes("{\"a\":", 5, &blen);
    r = post("/v1/toi", GZIP_BODY, broken, blen);
    expect_problem("gzip of broken JSON", &r, 400, "malformed-json");
    imp_http_result_free(&r);
    free(broken);
    free(bad);
    free(z);
}

static void test_other_codings_are_415(void **state) {
    (void)state;
    const char *body = ENDPOINTS[0].body;
    static const char *const codings[] = {
        "Content-Encoding: br",           "Content-Encoding: deflate",
        "Content-Encoding: compress",     "Content-Encoding: zstd",
        "Content-Encoding: gzip, br",     "Content-Encoding: gzip, gzip",
        "Content-Encoding: identity, br", "Content-Encoding: *",
    };
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; ++i) {
        const char *const h[] = {codings[i], NULL};
        reply r = post("/v1/toi", h, body, strlen(body));
        expect_problem(codings[i], &r, 415, "unsupported-media-type");
        assert_string_equal(r.accept_encoding, "gzip");
        imp_http_result_free(&r);
    }
    /* a second Content-Encoding line counts too */
    const char *const two[] = {"Content-Encoding: gzip", "Content-Encoding: br", NULL};
    reply r = post("/v1/toi", two, body, strlen(body));
    expect_problem("two header lines", &r, 415, "unsupported-media-type");
    imp_http_result_free(&r);
    /* identity is no coding */
    const char *const identity[] = {"Content-Encoding: identity", NULL};
    r = post("/v1/toi", identity, body, strlen(body));
    assert_int_equal(r.status, 200);
    imp_http_result_free(&r);
    /* the path and method are judged first */
    const char *const br[] = {"Content-Encoding: br", NULL};
    r = post("/v1/nope", br, body, strlen(body));
    expect_problem("unknown path", &r, 404, "not-found");
    imp_http_result_free(&r);
}

/* The value of a counter in the /metrics text. */
static double metric(const char *name) {
    reply m = request("GET", "/metrics", NULL, NULL, 0, 0);
    assert_int_equal(m.status, 200);
    char key[128];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = strstr(m.body, key);
    if (!p) fail_msg("no %s in /metrics", name);
    double v = strtod(p + strlen(key), NULL);
    imp_http_result_free(&m);
    return v;
}

/* 1 GiB of zeros in about 1 MB: 413 as soon as 16 MiB are decoded, and no more inflated. */
static void test_bomb_is_413(void **state) {
    (void)state;
    size_t blen;
    unsigned char *bomb = imp_ref_gzip_zeros((size_t)1 << 30, &blen);
    assert_non_null(bomb);

    double decoded_before = metric("impactd_decompressed_request_bytes_total");
    double wire_before = metric("impactd_compressed_request_bytes_total");
    for (int chunked = 0; chunked <= 1; ++chunked) {
        double t0 = imp_test_now_s();
        reply r = request("POST", "/v1/scenes/predict", GZIP_BODY, bomb, blen, chunked ? 65536 : 0);
        double took = imp_test_now_s() - t0;
        printf("bomb of %zu bytes (%s): %ld in %.3f s\n", blen,
               chunked ? "chunked" : "Content-Length", r.status, took);
        expect_problem("gzip bomb", &r, 413, "payload-too-large");
        assert_true(took < BOMB_SECONDS);
        imp_http_result_free(&r);
    }
    double decoded = metric("impactd_decompressed_request_bytes_total") - decoded_before;
    double wire = metric("impactd_compressed_request_bytes_total") - wire_before;
    printf("two bombs: %.0f wire bytes, %.0f decoded\n", wire, decoded);
    /* each decoded at most the limit, and every wire byte was read (the connection handled) */
    assert_true(decoded <= 2.0 * (double)BODY_LIMIT);
    assert_true(wire >= 2.0 * (double)blen);
    /* and the daemon is well */
    const char *body = ENDPOINTS[0].body;
    reply after = post("/v1/toi", NULL, body, strlen(body));
    assert_int_equal(after.status, 200);
    imp_http_result_free(&after);
    free(bomb);
}

/* A gzip body may decode to exactly the limit; a byte more is 413. */
static void test_limit_on_decoded_bytes(void **state) {
    (void)state;
    /* a JSON body of exactly the limit: a string pads it (400 at /a: not a toi) */
    char *body = malloc(BODY_LIMIT + 2);
    assert_non_null(body);
    const char head[] = "{\"pad\":\"";
    memcpy(body, head, sizeof head - 1);
    memset(body + sizeof head - 1, 'p', BODY_LIMIT - (sizeof head - 1) - 2);
    memcpy(body + BODY_LIMIT - 2, "\"}", 2);
    size_t zlen;
    unsigned char *z = gzip_bytes(body, BODY_LIMIT, &zlen);
    reply r = post("/v1/toi", GZIP_BODY, z, zlen);
    expect_problem("exactly the limit", &r, 400, "unknown-field");
    imp_http_result_free(&r);
    free(z);
    body[BODY_LIMIT] = ' ';
    z = gzip_bytes(body, BODY_LIMIT + 1, &zlen);
    r = post("/v1/toi", GZIP_BODY, z, zlen);
    expect_problem("a byte past the limit", &r, 413, "payload-too-large");
    imp_http_result_free(&r);
    free(z);
    free(body);
}

int main(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *const args[] = {"--max-body-bytes", BODY_LIMIT_ARG, NULL};
    if (imp_test_daemon_start(&daemon_, args, NULL, 0) != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gzip_request_on_every_endpoint),
        cmocka_unit_test(test_large_scene_both_ways),
        cmocka_unit_test(test_reply_compression_rules),
        cmocka_unit_test(test_bad_gzip_is_400),
        cmocka_unit_test(test_other_codings_are_415),
        cmocka_unit_test(test_bomb_is_413),
        cmocka_unit_test(test_limit_on_decoded_bytes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (imp_test_daemon_stop(&daemon_, SIGTERM) != 0) {
        fprintf(stderr, "the daemon did not exit 0 after SIGTERM\n");
        rc = 1;
    }
    curl_global_cleanup();
    return rc;
}
