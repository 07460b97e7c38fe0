/*
 * test_gzip.c - server/gzip.c: a gzip body inflated piece by piece against
 * zlib's own deflate, and replies compressed by us against zlib's own
 * inflate; concatenated members; corrupt, truncated, empty and trailing
 * data; a gzip bomb stopping at the limit after reading a small part of its
 * input; the Content-Encoding and Accept-Encoding tables.
 *
 * DESIGN
 * The reference side is zlib used directly (tests/gzip_ref.h: deflate and
 * inflate with gzip framing), so a round trip checks our streaming against the library's
 * one-shot behaviour, not against itself. The data is random with a fixed
 * seed (printed): runs of JSON-like text and runs of random bytes, in
 * pieces of random sizes from 1 byte up, so every boundary case of the
 * input loop (a piece ending inside the header, inside a block, between
 * members) is met.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "server/gzip.h"
#include "tests/gzip_ref.h"
#include "tests/rng.h"

#define SEED 0x67a1f00dull

/* Decoded bytes collected by the sink, refused past `limit`. */
typedef struct sink {
    char *buf;
    size_t len, cap, limit;
    int calls;
} sink;

static int take(void *cls, const char *data, size_t n) {
    sink *s = cls;
    ++s->calls;
    if (n > s->limit - s->len) return 0;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        char *p = realloc(s->buf, cap);
        assert_non_null(p);
        s->buf = p;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    return 1;
}

/* zlib's gzip of `len` bytes at `level` (the test fails when it cannot make it). */
static unsigned char *zlib_gzip(const void *data, size_t len, int level, size_t *out_len) {
    unsigned char *z = imp_ref_gzip(data, len, level, out_len);
    assert_non_null(z);
    return z;
}

/* Feeds `data` to a fresh inflater in pieces of 1 to max_piece bytes (random); returns the
 * status of the last feed and leaves the decoded bytes in *s and the inflater in *out. */
static imp_gunzip_status feed_pieces(const void *data, size_t len, size_t max_piece, uint64_t *rng,
                                     sink *s, imp_gunzip **out) {
    imp_gunzip *g = imp_gunzip_new();
    assert_non_null(g);
    imp_gunzip_status st = IMP_GUNZIP_OK;
    for (size_t off = 0; off < len && st == IMP_GUNZIP_OK;) {
        size_t k = 1 + (size_t)(imp_rng_next(rng) % max_piece);
        if (k > len - off) k = len - off;
        st = imp_gunzip_feed(g, (const char *)data + off, k, take, s);
        off += k;
    }
    *out = g;
    return st;
}

/* Random test data: runs of JSON-like text and runs of random bytes. */
static char *random_data(size_t len, uint64_t *rng) {
    static const char text[] = "{\"radius\":0.5,\"position\":[12.25,-3.0,7.5]},";
    char *p = malloc(len + 1);
    assert_non_null(p);
    for (size_t i = 0; i < len;) {
        size_t run = 1 + (size_t)(imp_rng_next(rng) % 4096);
        int binary = imp_rng_next(rng) % 4 == 0;
        for (size_t k = 0; k < run && i < len; ++k, ++i)
            p[i] = binary ? (char)(imp_rng_next(rng) & 0xff) : text[i % (sizeof text - 1)];
    }
    return p;
}

static void test_round_trip_against_zlib(void **state) {
    (void)state;
    uint64_t rng = SEED;
    printf("seed 0x%llx\n", (unsigned long long)SEED);
    static const size_t sizes[] = {0, 1, 100, 16383, 16384, 16385, 1000000, 3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        char *data = random_data(sizes[i], &rng);
        for (int level = 1; level <= 9; level += 4) {
            /* zlib's gzip, inflated by us in random pieces */
            size_t zlen;
            unsigned char *z = zlib_gzip(data, sizes[i], level, &zlen);
            sink s = {.limit = SIZE_MAX};
            imp_gunzip *g;
            size_t max_piece = i % 2 ? 7 : 70000;
            assert_int_equal(feed_pieces(z, zlen, max_piece, &rng, &s, &g), IMP_GUNZIP_OK);
            assert_true(imp_gunzip_finish(g));
            assert_int_equal(s.len, sizes[i]);
            assert_true(sizes[i] == 0 || memcmp(s.buf, data, sizes[i]) == 0);
            assert_int_equal(imp_gunzip_wire_bytes(g), zlen);
            assert_int_equal(imp_gunzip_decoded_bytes(g), sizes[i]);
            imp_gunzip_free(g);
            free(s.buf);
            free(z);

            /* ours, inflated by zlib */
            size_t ours_len, back_len;
            char *ours = imp_gzip_compress(data, sizes[i], level, &ours_len);
            assert_non_null(ours);
            char *back = imp_ref_gunzip(ours, ours_len, &back_len);
            assert_non_null(back);
            assert_int_equal(back_len, sizes[i]);
            assert_true(sizes[i] == 0 || memcmp(back, data, sizes[i]) == 0);
            free(back);
            free(ours);
        }
        free(data);
    }
}

static void test_members_are_concatenated(void **state) {
    (void)state;
    uint64_t rng = SEED + 1;
    static const char a[] = "{\"horizon\":1,", b[] = "", c[] = "\"bodies\":[]}";
    size_t la, lb, lc;
    unsigned char *za = zlib_gzip(a, strlen(a), 6, &la), *zb = zlib_gzip(b, 0, 6, &lb),
                  *zc = zlib_gzip(c, strlen(c), 1, &lc);
    size_t len = la + lb + lc;
    unsigned char *all = malloc(len);
    assert_non_null(all);
    memcpy(all, za, la);
    memcpy(all + la, zb, lb);
    memcpy(all + la + lb, zc, lc);
    for (size_t max_piece = 1; max_piece <= len; max_piece *= 3) {
        sink s = {.limit = SIZE_MAX};
        imp_gunzip *g;
        assert_int_equal(feed_pieces(all, len, max_piece, &rng, &s, &g), IMP_GUNZIP_OK);
        assert_true(imp_gunzip_finish(g));
        assert_int_equal(s.len, strlen(a) + strlen(c));
        assert_memory_equal(s.buf, "{\"horizon\":1,\"bodies\":[]}", s.len);
        imp_gunzip_free(g);
        free(s.buf);
    }
    /* a lone empty member is a whole body of no bytes */
    sink s = {.limit = SIZE_MAX};
    imp_gunzip *g;
    assert_int_equal(feed_pieces(zb, lb, 5, &rng, &s, &g), IMP_GUNZIP_OK);
    assert_true(imp_gunzip_finish(g));
    assert_int_equal(s.len, 0);
    imp_gunzip_free(g);
    free(all);
    free(za);
    free(zb);
    free(zc);
}

/* Feeding `data` whole: the status, and finish's verdict when the feed was OK. */
static imp_gunzip_status verdict(const void *data, size_t len, const char *want_error) {
    sink s = {.limit = SIZE_MAX};
    imp_gunzip *g = imp_gunzip_new();
    assert_non_null(g);
    imp_gunzip_status st = imp_gunzip_feed(g, data, len, take, &s);
    if (st == IMP_GUNZIP_OK && !imp_gunzip_finish(g)) st = IMP_GUNZIP_CORRUPT;
    if (want_error && !strstr(imp_gunzip_error(g), want_error))
        fail_msg("error \"%s\", expected one containing \"%s\"", imp_gunzip_error(g), want_error);
    imp_gunzip_free(g);
    free(s.buf);
    return st;
}

static void test_corrupt_truncated_and_trailing(void **state) {
    (void)state;
    uint64_t rng = SEED + 2;
    size_t n = 200000, zlen;
    char *data = random_data(n, &rng);
    unsigned char *z = zlib_gzip(data, n, 6, &zlen);
    unsigned char *bad = malloc(zlen + 64);
    assert_non_null(bad);

    assert_int_equal(verdict(z, zlen, NULL), IMP_GUNZIP_OK);
    /* not gzip at all: plain JSON, and zlib (RFC 1950) framing */
    assert_int_equal(verdict(data, 100, "not gzip"), IMP_GUNZIP_CORRUPT);
    unsigned char zl[256];
    uLongf zl_len = sizeof zl;
    assert_int_equal(compress(zl, &zl_len, (const Bytef *)"{}", 2), Z_OK);
    assert_int_equal(verdict(zl, zl_len, "not gzip"), IMP_GUNZIP_CORRUPT);
    /* a flipped byte in the compressed blocks, and one in the CRC-32 trailer */
    memcpy(bad, z, zlen);
    bad[zlen / 2] ^= 0x5a;
    assert_int_equal(verdict(bad, zlen, "corrupt"), IMP_GUNZIP_CORRUPT);
    memcpy(bad, z, zlen);
    bad[zlen - 6] ^= 1;
    assert_int_equal(verdict(bad, zlen, "corrupt"), IMP_GUNZIP_CORRUPT);
    /* truncated anywhere: inside the header, the blocks, the trailer */
    static const size_t cuts[] = {1, 5, 10, 11, 1000};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i)
        assert_int_equal(verdict(z, cuts[i], "truncated"), IMP_GUNZIP_CORRUPT);
    assert_int_equal(verdict(z, zlen - 1, "truncated"), IMP_GUNZIP_CORRUPT);
    assert_int_equal(verdict(z, zlen - 8, "truncated"), IMP_GUNZIP_CORRUPT);
    assert_int_equal(verdict(z, 0, "empty"), IMP_GUNZIP_CORRUPT);
    /* bytes after the member that are not one: text, zeros, a lone magic number */
    static const char *const tails[] = {"junk", "\n", "\0\0\0\0", "\x1f\x8b"};
    static const size_t tail_len[] = {4, 1, 4, 2};
    for (size_t i = 0; i < 4; ++i) {
        memcpy(bad, z, zlen);
        memcpy(bad + zlen, tails[i], tail_len[i]);
        imp_gunzip_status st = verdict(bad, zlen + tail_len[i], NULL);
        assert_int_equal(st, IMP_GUNZIP_CORRUPT);
    }
    memcpy(bad, z, zlen);
    memcpy(bad + zlen, "junk", 4);
    assert_int_equal(verdict(bad, zlen + 4, "after its last member"), IMP_GUNZIP_CORRUPT);
    free(bad);
    free(z);
    free(data);
}

/* 1 GiB of zeros in one member (about 1 MB at level 9), inflated against a 16 MiB limit:
 * inflating stops at the limit, having read a small part of the input. */
static void test_bomb_stops_at_the_limit(void **state) {
    (void)state;
    const size_t plain = (size_t)1 << 30, limit = (size_t)16 << 20;
    size_t blen;
    unsigned char *bomb = imp_ref_gzip_zeros(plain, &blen);
    assert_non_null(bomb);

    sink s = {.limit = limit};
    imp_gunzip *g = imp_gunzip_new();
    assert_non_null(g);
    assert_int_equal(imp_gunzip_feed(g, (const char *)bomb, blen, take, &s), IMP_GUNZIP_STOPPED);
    size_t read = imp_gunzip_wire_bytes(g);
    printf("bomb: %zu bytes decode to %zu; stopped at %zu decoded bytes after reading %zu wire "
           "bytes (%.2f%%)\n",
           blen, plain, s.len, read, 100.0 * (double)read / (double)blen);
    assert_true(s.len <= limit);
    assert_true(s.len > limit - (16u << 10));
    assert_int_equal(imp_gunzip_decoded_bytes(g), s.len);
    /* what was read is in proportion to the limit: the 1/64 part, and some slack */
    assert_true(read < blen / 32);
    imp_gunzip_free(g);
    free(s.buf);
    free(bomb);
}

/* A body that decodes to exactly the limit is taken whole; one byte more is refused. */
static void test_limit_is_exact(void **state) {
    (void)state;
    const size_t limit = 100000;
    char *data = calloc(1, limit + 1);
    assert_non_null(data);
    for (size_t extra = 0; extra <= 1; ++extra) {
        size_t zlen;
        unsigned char *z = zlib_gzip(data, limit + extra, 6, &zlen);
        sink s = {.limit = limit};
        imp_gunzip *g = imp_gunzip_new();
        assert_non_null(g);
        imp_gunzip_status st = imp_gunzip_feed(g, (const char *)z, zlen, take, &s);
        assert_int_equal(st, extra ? IMP_GUNZIP_STOPPED : IMP_GUNZIP_OK);
        if (!extra) assert_true(imp_gunzip_finish(g));
        imp_gunzip_free(g);
        free(s.buf);
        free(z);
    }
    free(data);
}

static void test_content_coding(void **state) {
    (void)state;
    static const struct {
        const char *value;
        imp_coding want;
    } cases[] = {
        {NULL, IMP_CODING_IDENTITY},
        {"", IMP_CODING_IDENTITY},
        {"identity", IMP_CODING_IDENTITY},
        {" Identity ,", IMP_CODING_IDENTITY},
        {"gzip", IMP_CODING_GZIP},
        {"GZip", IMP_CODING_GZIP},
        {"x-gzip", IMP_CODING_GZIP},
        {" X-GZIP\t", IMP_CODING_GZIP},
        {"identity, gzip", IMP_CODING_GZIP},
        {"gzip,", IMP_CODING_GZIP},
        {"gzip, gzip", IMP_CODING_UNSUPPORTED},
        {"br", IMP_CODING_UNSUPPORTED},
        {"deflate", IMP_CODING_UNSUPPORTED},
        {"compress", IMP_CODING_UNSUPPORTED},
        {"zstd", IMP_CODING_UNSUPPORTED},
        {"gzip, br", IMP_CODING_UNSUPPORTED},
        {"br, gzip", IMP_CODING_UNSUPPORTED},
        {"gzip;q=1", IMP_CODING_UNSUPPORTED},
        {"gzipx", IMP_CODING_UNSUPPORTED},
        {"*", IMP_CODING_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        imp_coding got = imp_gzip_content_coding(IMP_CODING_IDENTITY, cases[i].value);
        if (got != cases[i].want)
            fail_msg("Content-Encoding \"%s\": %d, expected %d",
                     cases[i].value ? cases[i].value : "(none)", got, cases[i].want);
    }
    /* over two header lines */
    assert_int_equal(imp_gzip_content_coding(IMP_CODING_GZIP, "identity"), IMP_CODING_GZIP);
    assert_int_equal(imp_gzip_content_coding(IMP_CODING_GZIP, "gzip"), IMP_CODING_UNSUPPORTED);
    assert_int_equal(imp_gzip_content_coding(IMP_CODING_UNSUPPORTED, ""), IMP_CODING_UNSUPPORTED);
}

static void test_accept_encoding(void **state) {
    (void)state;
    static const struct {
        const char *value;
        int want;
    } cases[] = {
        {NULL, 0},
        {"", 0},
        {"identity", 0},
        {"gzip", 1},
        {"GZIP", 1},
        {"x-gzip", 1},
        {"gzip, deflate, br", 1},
        {"br;q=1.0, gzip;q=0.8, *;q=0.1", 1},
        {"deflate, br", 0},
        {"gzip;q=0", 0},
        {"gzip; q=0", 0},
        {"gzip;Q=0.000", 0},
        {"gzip;q=0.001", 1},
        {"gzip;q=1.000", 1},
        {"*", 1},
        {"*;q=0", 0},
        {"*, gzip;q=0", 0},
        {"gzip;q=0, *", 0},
        {"x-gzip;q=0, *", 0},
        {"*;q=0, gzip", 1},
        {"gzip;q=0.5, identity", 0},
        {"gzip;q=0.5, identity;q=0.5", 1},
        {"gzip, identity;q=0", 1},
        {"gzip;q=2", 0},
        {"gzip;q=1.5", 0},
        {"gzip;q=0.5555", 0},
        {"gzip;q=", 0},
        {"gzip;q", 0},
        {"gzip;level=9", 1},
        {" , gzip ,", 1},
        {"gzipx", 0},
        {"xgzip", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int got = imp_gzip_accepted(cases[i].value);
        if (got != cases[i].want)
            fail_msg("Accept-Encoding \"%s\": %d, expected %d",
                     cases[i].value ? cases[i].value : "(none)", got, cases[i].want);
    }
    /* over two header lines */
    imp_accept a;
    imp_accept_init(&a);
    imp_accept_add(&a, "br");
    assert_false(imp_accept_gzip(&a));
    imp_accept_add(&a, "gzip;q=0.3");
    assert_true(imp_accept_gzip(&a));
}

static void test_wire_limit(void **state) {
    (void)state;
    static const size_t limits[] = {0, 1, 1000, (size_t)64 << 20, SIZE_MAX / 2, SIZE_MAX};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; ++i) {
        size_t w = imp_gzip_wire_limit(limits[i]);
        assert_true(w >= limits[i]);
        assert_true(w == SIZE_MAX || w >= limits[i] + limits[i] / 16);
    }
    /* the worst case of deflate itself: random bytes at the limit fit under it */
    uint64_t rng = SEED + 3;
    const size_t n = 1 << 20;
    unsigned char *r = malloc(n);
    assert_non_null(r);
    for (size_t i = 0; i < n; ++i)
        r[i] = (unsigned char)imp_rng_next(&rng);
    size_t zlen;
    unsigned char *z = zlib_gzip(r, n, 9, &zlen);
    assert_true(zlen > n);
    assert_true(zlen <= imp_gzip_wire_limit(n));
    free(z);
    free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_against_zlib),
        cmocka_unit_test(test_members_are_concatenated),
        cmocka_unit_test(test_corrupt_truncated_and_trailing),
        cmocka_unit_test(test_bomb_stops_at_the_limit),
        cmocka_unit_test(test_limit_is_exact),
        cmocka_unit_test(test_content_coding),
        cmocka_unit_test(test_accept_encoding),
        cmocka_unit_test(test_wire_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
