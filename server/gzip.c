/*
 * gzip.c - content coding with zlib (see gzip.h).
 *
 * DESIGN
 * What: the request side decodes `Content-Encoding: gzip` bodies, the reply
 * side compresses replies for clients whose Accept-Encoding allows gzip.
 * How: a gzip body is inflated as its pieces arrive (inflate with
 * windowBits 15 + 16: gzip framing only, header and CRC-32 and length
 * trailer checked by zlib), into a 16 KiB buffer handed to a sink after
 * each fill. The sink is the connection's body buffer, which applies the
 * body limit to the decoded bytes: when it refuses a piece, inflating stops
 * there, so a gzip bomb (1 GiB of zeros in 1 MB) costs at most the limit
 * plus 16 KiB of output and the wire bytes read up to that point, never
 * the rest. Members are concatenated (RFC 1952 section 2.2): after a
 * member's end, further bytes start the next member (inflateReset); bytes
 * that are not one are an error, as is a stream that ends inside a member.
 * Replies are deflated in one call into a buffer of deflateBound's size,
 * then trimmed; the pages a smaller result never touches are never made
 * resident.
 * Why zlib: it is the reference implementation of deflate, on every Debian
 * machine (zlib1g is essential), and its streaming inflate is what lets
 * the limit be enforced while decoding rather than after.
 */
#include "gzip.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* Decoded bytes inflated per call before the sink sees them. */
#define OUT_BYTES (16u * 1024u)
/* Wire bytes handed to zlib per call (its counts are unsigned int). */
#define IN_CHUNK ((size_t)1 << 30)
/* zlib's window bits for gzip framing only (15 + 16). */
#define GZIP_WINDOW_BITS (15 + 16)
/* zlib's default memory level (8): its internal state, about 256 KiB for deflate. */
#define DEFLATE_MEM_LEVEL 8

/* ---- header values -------------------------------------------------------------------------- */

static int is_ows(char ch) { return ch == ' ' || ch == '\t'; }

/* The next element of a comma-separated list starting at *p, trimmed: [*start, *start + *len);
 * *p moves past its comma. 0 when the list is done. */
static int next_element(const char **p, const char **start, size_t *len) {
    if (!**p) return 0;
    const char *s = *p, *e = strchr(s, ',');
    if (!e) e = s + strlen(s);
    *p = *e ? e + 1 : e;
    while (s < e && is_ows(*s))
        ++s;
    while (e > s && is_ows(e[-1]))
        --e;
    *start = s;
    *len = (size_t)(e - s);
    return 1;
}

static int token_is(const char *s, size_t n, const char *want) {
    return n == strlen(want) && strncasecmp(s, want, n) == 0;
}

static int is_gzip(const char *s, size_t n) {
    /* RFC 9110 section 8.4.1.3: x-gzip is gzip */
    return token_is(s, n, "gzip") || token_is(s, n, "x-gzip");
}

imp_coding imp_gzip_content_coding(imp_coding so_far, const char *value) {
    const char *p = value ? value : "", *s;
    size_t n;
    while (so_far != IMP_CODING_UNSUPPORTED && next_element(&p, &s, &n)) {
        if (n == 0 || token_is(s, n, "identity")) continue;
        /* gzip applied twice would need decoding twice: not offered */
        so_far = is_gzip(s, n) && so_far == IMP_CODING_IDENTITY ? IMP_CODING_GZIP
                                                                : IMP_CODING_UNSUPPORTED;
    }
    return so_far;
}

size_t imp_gzip_wire_limit(size_t limit) {
    size_t slack = limit / 16 + 1024;
    return limit > SIZE_MAX - slack ? SIZE_MAX : limit + slack;
}

void imp_accept_init(imp_accept *a) { a->gzip = a->any = a->identity = -1; }

/* An RFC 9110 qvalue ("0", "0.5", "1.000") in thousandths, or -1 when malformed. */
static int qvalue(const char *s, size_t n) {
    if (n == 0 || (s[0] != '0' && s[0] != '1')) return -1;
    int whole = s[0] - '0', frac = 0, scale = 100;
    if (n > 1) {
        if (s[1] != '.' || n > 5) return -1;
        for (size_t i = 2; i < n; ++i, scale /= 10) {
            if (s[i] < '0' || s[i] > '9') return -1;
            frac += (s[i] - '0') * scale;
        }
    }
    if (whole == 1 && frac != 0) return -1;
    return whole * 1000 + frac;
}

/* The weight of one Accept-Encoding element's parameters [s, s + n) ("; q=0.5"): 1000 when
 * there is no q, -1 when a parameter is malformed. */
static int element_weight(const char *s, size_t n) {
    int q = 1000;
    const char *end = s + n;
    while (s < end) {
        /* s is at a ';' */
        ++s;
        while (s < end && is_ows(*s))
            ++s;
        const char *param = s;
        while (s < end && *s != ';')
            ++s;
        const char *pend = s;
        while (pend > param && is_ows(pend[-1]))
            --pend;
        const char *eq = memchr(param, '=', (size_t)(pend - param));
        if (!eq) return -1;
        if (token_is(param, (size_t)(eq - param), "q")) {
            q = qvalue(eq + 1, (size_t)(pend - eq - 1));
            if (q < 0) return -1;
        }
    }
    return q;
}

static void raise_to(int *weight, int q) {
    if (q > *weight) *weight = q;
}

void imp_accept_add(imp_accept *a, const char *value) {
    const char *p = value ? value : "", *s;
    size_t n;
    while (next_element(&p, &s, &n)) {
        const char *semi = memchr(s, ';', n);
        size_t name_len = semi ? (size_t)(semi - s) : n;
        while (name_len > 0 && is_ows(s[name_len - 1]))
            --name_len;
        int q = semi ? element_weight(semi, n - (size_t)(semi - s)) : 1000;
        if (q < 0 || name_len == 0) continue;
        if (is_gzip(s, name_len))
            raise_to(&a->gzip, q);
        else if (token_is(s, name_len, "*"))
            raise_to(&a->any, q);
        else if (token_is(s, name_len, "identity"))
            raise_to(&a->identity, q);
    }
}

int imp_accept_gzip(const imp_accept *a) {
    /* a coding named outright overrides "*" (gzip;q=0 with * refuses gzip) */
    int q = a->gzip >= 0 ? a->gzip : a->any;
    return q > 0 && a->identity <= q;
}

int imp_gzip_accepted(const char *value) {
    if (!value) return 0;
    imp_accept a;
    imp_accept_init(&a);
    imp_accept_add(&a, value);
    return imp_accept_gzip(&a);
}

/* ---- inflating a request body --------------------------------------------------------------- */

struct imp_gunzip {
    z_stream z;
    int members;         /* members decoded to their end */
    int member_ended;    /* the last member ended; the next byte starts another */
    int fed;             /* any byte was fed */
    size_t member_bytes; /* decoded bytes of the member being read */
    size_t wire, decoded;
    char error[160];
    unsigned char out[OUT_BYTES];
};

imp_gunzip *imp_gunzip_new(void) {
    imp_gunzip *g = malloc(sizeof *g);
    if (!g) return NULL;
    memset(g, 0, offsetof(imp_gunzip, out));
    if (inflateInit2(&g->z, GZIP_WINDOW_BITS) != Z_OK) {
        free(g);
        return NULL;
    }
    return g;
}

void imp_gunzip_free(imp_gunzip *g) {
    if (!g) return;
    inflateEnd(&g->z);
    free(g);
}

static imp_gunzip_status corrupt(imp_gunzip *g) {
    if (g->members > 0 && g->member_bytes == 0)
        snprintf(g->error, sizeof g->error,
                 "the gzip body has bytes after its last member that are not another member");
    else if (g->members == 0 && g->member_bytes == 0)
        snprintf(g->error, sizeof g->error, "the body is not gzip data (%s)",
                 g->z.msg ? g->z.msg : "no gzip header");
    else
        snprintf(g->error, sizeof g->error, "the gzip data is corrupt (%s)",
                 g->z.msg ? g->z.msg : "invalid data");
    return IMP_GUNZIP_CORRUPT;
}

/* Inflates what z holds of its input; the sink gets each filled output buffer. */
static imp_gunzip_status inflate_input(imp_gunzip *g, imp_gunzip_sink sink, void *cls) {
    z_stream *z = &g->z;
    do {
        if (g->member_ended) {
            if (z->avail_in == 0) break;
            if (inflateReset(z) != Z_OK) return IMP_GUNZIP_NOMEM;
            g->member_ended = 0;
            g->member_bytes = 0;
        }
        z->next_out = g->out;
        z->avail_out = OUT_BYTES;
        unsigned before = z->avail_in;
        int rc = inflate(z, Z_NO_FLUSH);
        g->wire += before - z->avail_in;
        size_t got = OUT_BYTES - z->avail_out;
        g->member_bytes += got;
        if (got > 0) {
            if (!sink(cls, (const char *)g->out, got)) return IMP_GUNZIP_STOPPED;
            g->decoded += got;
        }
        if (rc == Z_STREAM_END) {
            ++g->members;
            g->member_ended = 1;
        } else if (rc == Z_MEM_ERROR) {
            return IMP_GUNZIP_NOMEM;
        } else if (rc == Z_BUF_ERROR) {
            break; /* no progress possible: the input is used up */
        } else if (rc != Z_OK) {
            return corrupt(g); /* Z_DATA_ERROR, or Z_NEED_DICT, which gzip never asks */
        }
        /* a full output buffer may leave decoded bytes inside zlib: go round again */
    } while (z->avail_in > 0 || z->avail_out == 0);
    return IMP_GUNZIP_OK;
}

imp_gunzip_status imp_gunzip_feed(imp_gunzip *g, const char *data, size_t n, imp_gunzip_sink sink,
                                  void *cls) {
    g->fed |= n > 0;
    while (n > 0) {
        size_t k = n < IN_CHUNK ? n : IN_CHUNK;
        g->z.next_in = (unsigned char *)(uintptr_t)data; /* zlib does not write its input */
        g->z.avail_in = (unsigned)k;
        imp_gunzip_status st = inflate_input(g, sink, cls);
        if (st != IMP_GUNZIP_OK) return st;
        data += k;
        n -= k;
    }
    return IMP_GUNZIP_OK;
}

int imp_gunzip_finish(imp_gunzip *g) {
    if (g->members > 0 && g->member_ended) return 1;
    snprintf(g->error, sizeof g->error, "%s",
             g->fed ? "the gzip body ends inside a member (truncated)" : "the gzip body is empty");
    return 0;
}

const char *imp_gunzip_error(const imp_gunzip *g) {
    return g->error[0] ? g->error : "the gzip body does not decode";
}

size_t imp_gunzip_wire_bytes(const imp_gunzip *g) { return g->wire; }
size_t imp_gunzip_decoded_bytes(const imp_gunzip *g) { return g->decoded; }

/* ---- compressing a reply -------------------------------------------------------------------- */

char *imp_gzip_compress(const char *data, size_t len, int level, size_t *out_len) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, GZIP_WINDOW_BITS, DEFLATE_MEM_LEVEL,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    /* deflateBound covers the whole output, so one buffer never needs to grow */
    size_t cap = (size_t)deflateBound(&z, (uLong)len);
    unsigned char *out = malloc(cap + 1);
    if (!out) {
        deflateEnd(&z);
        return NULL;
    }
    z.next_out = out;
    size_t off = 0;
    int rc;
    do {
        if (z.avail_in == 0 && off < len) {
            size_t k = len - off < IN_CHUNK ? len - off : IN_CHUNK;
            z.next_in = (unsigned char *)(uintptr_t)(data + off); /* zlib does not write it */
            z.avail_in = (unsigned)k;
            off += k;
        }
        size_t room = cap - (size_t)(z.next_out - out);
        z.avail_out = room < IN_CHUNK ? (unsigned)room : (unsigned)IN_CHUNK;
        rc = deflate(&z, off == len ? Z_FINISH : Z_NO_FLUSH);
    } while (rc == Z_OK);
    size_t n = (size_t)(z.next_out - out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    unsigned char *trimmed = realloc(out, n + 1);
    *out_len = n;
    return (char *)(trimmed ? trimmed : out);
}
