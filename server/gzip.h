/*
 * gzip.h - HTTP content coding with zlib: which coding a request body has
 * (Content-Encoding), whether a reply may be gzip-compressed
 * (Accept-Encoding), a gzip body inflated piece by piece as it arrives, and
 * a reply deflated in one call.
 *
 * Thread-safety: the parsers and imp_gzip_compress are reentrant; one
 * imp_gunzip is used by one thread at a time.
 */
#ifndef IMP_SERVER_GZIP_H
#define IMP_SERVER_GZIP_H

#include <stddef.h>

/* Replies larger than this many bytes are compressed when the client accepts gzip. */
#define IMP_GZIP_MIN_REPLY_BYTES 1024u
/* The deflate level of replies (1 fastest .. 9 smallest). A 100,000-sphere scene's
 * /v1/scenes/predict reply (11.8 MB of JSON, zlib 1.2.13 on the 2-core development machine):
 * level 1 makes it 2.30x smaller in 102 ms, level 3 2.40x in 260 ms, level 6 (zlib's default)
 * 2.50x in 517 ms, level 9 2.51x in 727 ms. Level 1 has nearly all of the gain at a fifth of
 * the worker time; it pays off on any link slower than about 65 MB/s. */
#define IMP_GZIP_REPLY_LEVEL 1

/* The content coding of a request body. */
typedef enum imp_coding {
    IMP_CODING_IDENTITY = 0, /* none (no header, an empty one, or "identity") */
    IMP_CODING_GZIP,         /* "gzip" or "x-gzip", once */
    IMP_CODING_UNSUPPORTED   /* any other coding, or gzip twice: 415 */
} imp_coding;

/*
 * Folds one Content-Encoding header value (a comma-separated list of codings, RFC 9110
 * section 8.4) into `so_far` (IMP_CODING_IDENTITY for the first; a request may send the
 * header more than once). Codings are matched without regard to case; "identity" and empty
 * list elements change nothing.
 */
imp_coding imp_gzip_content_coding(imp_coding so_far, const char *value);

/* Most wire bytes a gzip body may have when its decoded bytes may be `limit`: the limit plus
 * 1/16 plus 1 KiB. Deflate expands incompressible data by under 4% (zlib's deflateBound) and a
 * gzip member costs 18 bytes of framing, so no honest body is refused by it; a stream of empty
 * members, which decodes to nothing, cannot be sent forever. */
size_t imp_gzip_wire_limit(size_t limit);

/* What a client's Accept-Encoding says about gzip (RFC 9110 section 12.5.3), accumulated over
 * every Accept-Encoding header of a request. Weights are in thousandths; -1: not listed. */
typedef struct imp_accept {
    int gzip, any, identity;
} imp_accept;

void imp_accept_init(imp_accept *a);
/* Adds one header value: "gzip", "x-gzip", "*" and "identity" with optional ";q=" weights;
 * other codings and malformed elements are ignored. */
void imp_accept_add(imp_accept *a, const char *value);
/* 1 when a reply may be sent gzip-compressed: gzip (or x-gzip), else "*", is listed with a
 * weight above 0, and identity is not listed with a higher one. No header: 0. */
int imp_accept_gzip(const imp_accept *a);
/* imp_accept_gzip of a single header value (NULL: no header). */
int imp_gzip_accepted(const char *value);

/* A gzip body being inflated as it arrives: one or more gzip members (RFC 1952), nothing
 * after the last. */
typedef struct imp_gunzip imp_gunzip;

typedef enum imp_gunzip_status {
    IMP_GUNZIP_OK = 0,  /* every byte fed was used; more may follow */
    IMP_GUNZIP_STOPPED, /* the sink refused decoded bytes: nothing more was inflated */
    IMP_GUNZIP_CORRUPT, /* not gzip, corrupt, or bytes after the last member that are not one */
    IMP_GUNZIP_NOMEM
} imp_gunzip_status;

/* Receives n decoded bytes; returns 0 to stop inflating (the body is too large, say). */
typedef int (*imp_gunzip_sink)(void *cls, const char *data, size_t n);

/* NULL when memory runs out. One holds about 56 KiB while it lives (zlib's state and 32 KiB
 * window, and the 16 KiB output buffer), outside the daemon's budget of buffered body bytes:
 * at most one per connection, so --max-connections bounds them. */
imp_gunzip *imp_gunzip_new(void);
void imp_gunzip_free(imp_gunzip *g);

/* Inflates n more wire bytes, handing the decoded bytes to `sink` in pieces of at most 16 KiB.
 * After anything but IMP_GUNZIP_OK, feed no more. */
imp_gunzip_status imp_gunzip_feed(imp_gunzip *g, const char *data, size_t n, imp_gunzip_sink sink,
                                  void *cls);

/* After the last piece: 1 when the body was whole (at least one member, the last one
 * complete); else 0 with why in imp_gunzip_error. */
int imp_gunzip_finish(imp_gunzip *g);

/* Why the body did not decode (after CORRUPT or a failed finish): a sentence for a problem
 * document's detail, naming no library. */
const char *imp_gunzip_error(const imp_gunzip *g);

/* Wire bytes inflated so far, and decoded bytes the sink took. */
size_t imp_gunzip_wire_bytes(const imp_gunzip *g);
size_t imp_gunzip_decoded_bytes(const imp_gunzip *g);

/* `len` bytes as one gzip member at `level` (1..9): malloc'd, NUL-terminated after *out_len
 * bytes; NULL when memory runs out. */
char *imp_gzip_compress(const char *data, size_t len, int level, size_t *out_len);

#endif
