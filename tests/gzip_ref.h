/*
 * gzip_ref.h - gzip made and checked by zlib itself, for the tests of the
 * server's content coding (unit, integration and hostile): the reference
 * the server's own streaming code is held against.
 */
#ifndef IMP_TEST_GZIP_REF_H
#define IMP_TEST_GZIP_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* zlib's window bits for gzip framing (RFC 1952). */
#define IMP_REF_GZIP_BITS (15 + 16)
/* Bytes to spare after a made member, for tests that append to it. */
#define IMP_REF_GZIP_SPARE 64

/* `len` bytes as one gzip member at `level`: malloc'd with IMP_REF_GZIP_SPARE bytes to spare,
 * *out_len bytes long; NULL when zlib or memory fails. */
static inline unsigned char *imp_ref_gzip(const void *data, size_t len, int level,
                                          size_t *out_len) {
    *out_len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, IMP_REF_GZIP_BITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap + IMP_REF_GZIP_SPARE);
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (unsigned)len;
    z.next_out = out;
    z.avail_out = (unsigned)cap;
    if (!out || deflate(&z, Z_FINISH) != Z_STREAM_END) {
        free(out);
        out = NULL;
    }
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

/* n zero bytes as one gzip member at level 9, deflated 1 MiB at a time (1 GiB makes about
 * 1 MB: a gzip bomb); malloc'd, *out_len bytes; NULL when zlib or memory fails. */
static inline unsigned char *imp_ref_gzip_zeros(size_t n, size_t *out_len) {
    const size_t step = (size_t)1 << 20;
    *out_len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, IMP_REF_GZIP_BITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = n / 512 + 4096; /* zeros deflate about 1030 to 1 */
    unsigned char *out = malloc(cap), *zeros = calloc(1, step);
    int rc = out && zeros ? Z_OK : Z_MEM_ERROR;
    z.next_out = out;
    z.avail_out = (unsigned)cap;
    for (size_t done = 0; rc == Z_OK;) {
        size_t k = n - done < step ? n - done : step;
        z.next_in = zeros;
        z.avail_in = (unsigned)k;
        done += k;
        rc = deflate(&z, done == n ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_OK && z.avail_in != 0) rc = Z_BUF_ERROR; /* out of room */
    }
    free(zeros);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

/* A gzip body as zlib inflates it: one member, nothing after it. malloc'd, NUL-terminated,
 * *out_len bytes; NULL when it does not decode so or memory fails. */
static inline char *imp_ref_gunzip(const void *data, size_t len, size_t *out_len) {
    *out_len = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, IMP_REF_GZIP_BITS) != Z_OK) return NULL;
    size_t cap = 4 * len + 4096, n = 0;
    char *out = malloc(cap + 1);
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (unsigned)len;
    int rc = out ? Z_OK : Z_MEM_ERROR;
    while (rc == Z_OK) {
        if (n == cap) {
            char *p = realloc(out, 2 * cap + 1);
            if (!p) {
                rc = Z_MEM_ERROR;
                break;
            }
            out = p;
            cap *= 2;
        }
        z.next_out = (unsigned char *)out + n;
        z.avail_out = (unsigned)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
    }
    int whole = rc == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    if (!whole) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    *out_len = n;
    return out;
}

#endif
