/*
 * http.c - libmicrohttpd glue: connections, bodies, hand-off to the worker
 * pool, replies, deadlines, draining.
 *
 * DESIGN
 * What: owns the libmicrohttpd daemon and the worker pool, and turns the
 * callback protocol into one imp_router_handle call per complete request,
 * run on a worker, or for a small pair query on the connection thread.
 * How: libmicrohttpd's threads (--io-threads, poll) move bytes. The
 * access handler is called once when the headers are in (*con_cls NULL),
 * then once per piece of body, then once with no data when the body is
 * complete. On the first call we allocate the per-request state and ask
 * the router whether the headers alone decide the reply (404, 405, 415,
 * 413 by Content-Length, the operations routes). Body pieces are appended
 * to a buffer; a body that grows past the limit is drained and answered
 * 413 once complete (libmicrohttpd takes a reply only after the headers or
 * after the whole body). A gzip body (Content-Encoding: gzip, server/gzip.c)
 * is inflated piece by piece on the connection thread into the same buffer,
 * so the limit and the buffer budget count decoded bytes: a gzip bomb is
 * refused as soon as it passes the limit, and the rest is drained without
 * being inflated; corrupt or truncated gzip is 400 once the body is in,
 * any other content coding 415 from the headers. A complete small pair query
 * (imp_router_is_inline: /v1/toi and its kind, up to IMP_EP_INLINE_BYTES) is
 * answered right there: the router runs on the connection thread with a stop
 * check that says IMP_STOP_HANDOFF once the slice (--inline-slice-us) has
 * passed, and a request stopped so is dropped and goes to the pool like any
 * other, afresh. Any other complete request is
 * suspended (MHD_suspend_connection) and submitted to the pool; the worker
 * runs the router, compresses the reply when the client accepts gzip and it
 * is over 1 KiB, stores it in the request state, publishes it with a
 * release store and resumes the connection, and libmicrohttpd calls the
 * handler once more, which queues the stored reply. When the queue is
 * full the same path carries a 503 with Retry-After instead, so nothing
 * waits in an unbounded backlog.
 * Deadlines: libmicrohttpd's own timeout only measures inactivity, so a
 * client that sends one byte a second would hold a connection forever.
 * Every connection therefore carries a deadline: idle-timeout from accept
 * or from its last reply until its next request headers are complete,
 * request-timeout from there until the body is complete and from the
 * reply being queued until it is sent, none while a worker has it. The
 * main thread calls imp_http_tick about once a second, which shuts down
 * (shutdown(2)) sockets past their deadline; libmicrohttpd then sees the
 * connection end and cleans up. The connection list is guarded by a mutex
 * that is also held in the close notification, which libmicrohttpd runs
 * before it closes the descriptor, so a shutdown never hits a reused fd.
 * Draining: imp_http_drain_begin only flips readiness; imp_http_close
 * stops accepting (MHD_quiesce_daemon, then shutdown(2) of the listener so
 * connection attempts are refused rather than queued) and answers any further request on
 * an open connection 503 draining with Connection: close; imp_http_stop
 * answers queued-but-unstarted work 503, waits for running work, then
 * stops libmicrohttpd, which never sees a connection left suspended.
 * Why suspend/resume rather than libmicrohttpd's thread pool running the
 * handlers: a scene that takes a second would block every other connection
 * of that thread, and the queue bound (503) would not exist. A slow client
 * costs a connection slot and a buffer, never a worker. Why small pair
 * queries stay on their thread: they take microseconds, and the hand-off to
 * a worker and back took two thread switches, the largest cost of a /v1/toi
 * under load (perf during make bench-load's /v1/toi: the kernel's task
 * switch and wake-up functions were about 16% of the daemon's samples;
 * answered inline, from 0.89 to 0.95 of nginx's rate; 1.01 to 1.03 once the route
 * lookup dropped strstr and the pointer index snprintf). The slice bounds how long
 * another connection of the thread can wait: the work that can run long (a
 * turning pair, /v1/ccd's exact path) polls the stop check, and the rest is
 * bounded by the 2 KiB.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/problem.h"
#include "api/world_store.h"
#include "gzip.h"
#include "metrics.h"
#include "pool.h"
#include "router.h"
#include "world_backend.h"

/* Initial body buffer when the length is not declared (bytes); it doubles
 * from here, capped at the limit. */
#define BODY_INITIAL_CAP 4096
/* A declared Content-Length is a promise, not bytes: the buffer is sized
 * from it only up to this much (bytes), so idle connections that announce
 * large bodies do not pin memory; larger bodies grow as they arrive. */
#define BODY_PREALLOC_MAX ((size_t)1 << 20)
/* How often the watcher looks for clients that closed their connection while their
 * request is with the pool (ms): a cancelled request stops within this plus one poll
 * interval of its work (core/parallel.h), inside the contract's 100 ms. */
#define CANCEL_POLL_MS 20
/* How long a stopping daemon lets replies to stopped work reach their clients (ms). */
#define STOP_FLUSH_MS 500
/* Pending connections the kernel queues before accept (passed to listen). */
#define LISTEN_BACKLOG 1024
/* Body bytes we read and throw away past the limit so that a chunked
 * upload can still be answered 413 (libmicrohttpd takes no reply mid-body);
 * past this the connection is cut without a reply instead. */
#define DRAIN_MAX_BYTES (64u << 20)
/* libmicrohttpd's per-connection buffer (request line, headers, read buffer), zeroed
 * on every request: 16 KiB holds any sane header block (nginx's own default limit
 * is 8 KiB) and halves that cost against the default 32 KiB. */
#define CONNECTION_POOL_BYTES (16u * 1024u)

/* One client connection, for deadlines; owned through libmicrohttpd's
 * socket context, linked in the server's list. */
typedef struct conn_state {
    int fd;
    atomic_llong deadline_ms; /* CLOCK_MONOTONIC ms; 0: none (a worker has it) */
    int bad_target;       /* the request line being parsed held a percent-encoded control byte */
    atomic_int busy;      /* a request of it is with the pool (queued or running) */
    atomic_int cancelled; /* its client closed the connection while busy */
    struct conn_state *prev, *next;
} conn_state;

struct imp_http_server {
    struct MHD_Daemon *daemon;
    imp_router router;
    imp_logger log;
    imp_pool *pool;
    imp_metrics *metrics;
    unsigned port;
    long long idle_ms, request_ms; /* idle_ms 0: no idle deadline */
    atomic_int draining;           /* /readyz answers 503 */
    atomic_int closing;            /* listener closed; new requests get 503 draining */
    atomic_size_t open_requests;   /* headers received, reply not yet fully sent */
    atomic_size_t open_connections;
    atomic_size_t buffered; /* request body bytes allocated across connections */
    atomic_int abort_work;  /* the drain timeout expired: running work stops (503 draining) */
    long long inline_ns;    /* --inline-slice-us: a small pair query's slice on its connection
                               thread; 0: every request goes to a worker */
    pthread_t watcher;      /* watches busy connections for clients that left */
    atomic_int watcher_stop;
    int watcher_started;
    size_t max_buffered; /* --max-buffered-bytes */
    pthread_mutex_t conns_lock;
    conn_state *conns;
    MHD_socket quiesced_fd; /* the listener after imp_http_close, closed at stop */
};

typedef enum phase { PHASE_READING, PHASE_QUEUED, PHASE_DONE } phase;

/* One request in flight; owned through libmicrohttpd's *con_cls. */
typedef struct request_state {
    imp_http_server *srv;
    struct MHD_Connection *conn;
    conn_state *cs;     /* NULL when the connection state could not be allocated */
    const char *method; /* libmicrohttpd's strings: valid until the request completes */
    const char *url;
    const char *ctype;
    struct timespec start;  /* headers received */
    char *body;             /* NULL until the first byte, and after too_large */
    size_t len, cap;        /* cap excludes the NUL kept after the body */
    size_t received;        /* body bytes seen, stored or drained */
    size_t reserved;        /* bytes of the server's buffer budget this body holds */
    long long declared;     /* Content-Length, -1 when absent */
    int too_large;          /* drain the rest of the body, then reply 413 */
    int over_budget;        /* drain the rest of the body, then reply 503 */
    int bad_coding;         /* the gzip body does not decode: drain the rest, then reply 400 */
    imp_gunzip *gunzip;     /* Content-Encoding: gzip, until the body is complete */
    int accept_gzip;        /* the client's Accept-Encoding allows a gzip reply */
    int reply_coded;        /* encode_reply has seen `reply` */
    size_t drain_from;      /* `received` when draining began */
    atomic_int phase;       /* PHASE_DONE: `reply` holds the answer */
    struct timespec queued; /* handed to the pool */
    int heavy;              /* in the heavy lane */
    imp_reply reply;
} request_state;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static long long now_ms(void) { return now_ns() / 1000000; }

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void set_deadline(conn_state *cs, long long after_ms) {
    if (cs)
        atomic_store_explicit(&cs->deadline_ms, after_ms > 0 ? now_ms() + after_ms : 0,
                              memory_order_relaxed);
}

/* Declared Content-Length, or -1 when absent or unreadable (libmicrohttpd
 * has already rejected a malformed one; chunked bodies have none). */
static long long content_length(struct MHD_Connection *c) {
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!v) return -1;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < 0) return -1;
    return n;
}

/* The reply body is released by libmicrohttpd when it is done with it. */
static void free_boxed_response(void *cls) {
    imp_api_response *resp = cls;
    imp_api_response_free(resp);
    free(resp);
}

static int add_headers(struct MHD_Response *r, const imp_reply *reply) {
    return MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, reply->resp.content_type) ==
               MHD_YES &&
           (!reply->allow ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, reply->allow) == MHD_YES) &&
           (!reply->retry_after || MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER,
                                                           reply->retry_after) == MHD_YES) &&
           (!reply->close ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES) &&
           (!reply->accept_encoding ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_ENCODING, reply->accept_encoding) ==
                MHD_YES) &&
           (!reply->gzip ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip") == MHD_YES) &&
           (!reply->vary ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding") == MHD_YES) &&
           (!reply->resp.location[0] || MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION,
                                                                reply->resp.location) == MHD_YES) &&
           (!reply->www_authenticate ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, reply->www_authenticate) ==
                MHD_YES);
}

/* Compresses a reply over IMP_GZIP_MIN_REPLY_BYTES when the client takes gzip, once per reply,
 * on the thread that made it: the worker for the API routes, the connection thread for the
 * few replies made there (problems found from the headers, the operations routes). Every
 * reply that size says Vary: Accept-Encoding, compressed or not. Out of memory, or no gain,
 * leaves the reply as it is. */
static void encode_reply(request_state *st) {
    imp_reply *reply = &st->reply;
    if (st->reply_coded) return;
    st->reply_coded = 1;
    if (reply->resp.len <= IMP_GZIP_MIN_REPLY_BYTES) return;
    reply->vary = 1;
    if (!st->accept_gzip) return;
    size_t n;
    char *z = imp_gzip_compress(reply->resp.body, reply->resp.len, IMP_GZIP_REPLY_LEVEL, &n);
    if (!z || n >= reply->resp.len) {
        free(z);
        return;
    }
    imp_metrics_gzip_reply(st->srv->metrics, reply->resp.len, n);
    imp_api_response plain = reply->resp;
    imp_api_response_free(&plain);
    reply->resp.body = z;
    reply->resp.len = n;
    reply->gzip = 1;
}

/* Queues st->reply (ownership passes to libmicrohttpd), logs and counts it. */
static enum MHD_Result send_reply(request_state *st) {
    imp_http_server *s = st->srv;
    imp_reply *reply = &st->reply;
    encode_reply(st);
    int status = reply->resp.status;
    size_t bytes_out = reply->resp.len;
    imp_metrics_observe(s->metrics, imp_metrics_route(st->url), status, seconds_since(&st->start));
    IMP_LOG_ACCESS(&s->log, st->method, st->url, status, st->received, bytes_out,
                   seconds_since(&st->start) * 1e3);

    imp_api_response *box = malloc(sizeof *box);
    if (!box) {
        imp_reply_free(reply);
        return MHD_NO; /* out of memory: drop the connection */
    }
    *box = reply->resp;
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
        box->len, box->body, free_boxed_response, box);
    if (!r) {
        free_boxed_response(box);
        memset(&reply->resp, 0, sizeof reply->resp);
        return MHD_NO;
    }
    int headers_ok = add_headers(r, reply);
    memset(&reply->resp, 0, sizeof reply->resp); /* the response owns the body now */
    if (!headers_ok) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_queue_response(st->conn, (unsigned)status, r);
    MHD_destroy_response(r);             /* the queued reply holds its own reference */
    set_deadline(st->cs, s->request_ms); /* the client has this long to read it */
    return ok;
}

/* Raises what st holds of the buffer budget to `total` bytes; 0 (nothing taken) when the
 * budget cannot spare the difference. */
static int reserve(request_state *st, size_t total) {
    imp_http_server *s = st->srv;
    if (total <= st->reserved) return 1;
    size_t more = total - st->reserved;
    size_t before = atomic_fetch_add(&s->buffered, more);
    if (before + more > s->max_buffered) {
        atomic_fetch_sub(&s->buffered, more);
        return 0;
    }
    st->reserved = total;
    return 1;
}

/* Frees the body and gives its bytes back to the budget. */
static void drop_body(request_state *st) {
    free(st->body);
    st->body = NULL;
    st->len = st->cap = 0;
    atomic_fetch_sub(&st->srv->buffered, st->reserved);
    st->reserved = 0;
}

/* Appends n bytes, growing the buffer geometrically up to `limit`; 0 on
 * allocation failure or when the budget cannot hold the larger buffer
 * (st->over_budget says which). The caller has checked st->len + n <= limit, which
 * is what ends the growth loop. */
static int append(request_state *st, const char *data, size_t n, size_t limit) {
    if (n > st->cap - st->len) {
        size_t cap = st->cap ? st->cap : (limit < BODY_INITIAL_CAP ? limit : BODY_INITIAL_CAP);
        while (cap - st->len < n)
            cap = cap > limit / 2 ? limit : cap * 2;
        if (!reserve(st, cap + 1)) {
            st->over_budget = 1;
            return 0;
        }
        char *p = realloc(st->body, cap + 1);
        if (!p) return 0;
        st->body = p;
        st->cap = cap;
    }
    memcpy(st->body + st->len, data, n);
    st->len += n;
    st->body[st->len] = '\0';
    return 1;
}

/* 1 once the body is being drained to be refused (413, 503 or 400). */
static int refused(const request_state *st) {
    return st->too_large || st->over_budget || st->bad_coding;
}

/* Keeps n more body bytes (decoded ones for a gzip body: the limit is on those); 0 when they
 * are refused, past the limit (st->too_large) or past the buffer budget (st->over_budget),
 * or when memory ran out (neither). An imp_gunzip_sink. */
static int keep(void *cls, const char *data, size_t n) {
    request_state *st = cls;
    size_t max = st->srv->router.max_body_bytes;
    if (n > max - st->len) {
        st->too_large = 1;
        return 0;
    }
    /* a plain body's declared length is what libmicrohttpd delivers: the buffer grows to it,
     * not past */
    size_t limit = st->declared > 0 && !st->gunzip ? (size_t)st->declared : max;
    return append(st, data, n, limit);
}

/* One piece of body off the wire, kept as it is or inflated into the body; 0 as keep, or
 * with st->bad_coding when the gzip data does not decode. A gzip body's wire bytes are
 * bounded too (imp_gzip_wire_limit): empty members decode to nothing, forever. */
static int take_piece(request_state *st, const char *data, size_t n) {
    if (!st->gunzip) return keep(st, data, n);
    if (st->received > imp_gzip_wire_limit(st->srv->router.max_body_bytes)) {
        st->too_large = 1;
        return 0;
    }
    imp_gunzip_status z = imp_gunzip_feed(st->gunzip, data, n, keep, st);
    st->bad_coding = z == IMP_GUNZIP_CORRUPT;
    return z == IMP_GUNZIP_OK;
}

/* Counts a gzip body's bytes and frees its inflater: when the body is complete, or when the
 * request ends without it. */
static void end_gunzip(request_state *st) {
    if (!st->gunzip) return;
    imp_metrics_gzip_request(st->srv->metrics, st->received, imp_gunzip_decoded_bytes(st->gunzip));
    imp_gunzip_free(st->gunzip);
    st->gunzip = NULL;
}

static void finish(request_state *st) {
    struct MHD_Connection *conn = st->conn;
    if (st->cs) atomic_store(&st->cs->busy, 0);
    atomic_store_explicit(&st->phase, PHASE_DONE, memory_order_release);
    /* st may be freed by the connection thread from here on: touch only conn */
    MHD_resume_connection(conn);
}

/* The stop check of a request's work (core/parallel.h), polled by core's long loops: the
 * drain timeout has expired, or the client has closed its connection (the watcher saw it). */
static int request_stop(void *cls) {
    const request_state *st = cls;
    if (atomic_load_explicit(&st->srv->abort_work, memory_order_relaxed)) return IMP_STOP_DRAINING;
    if (st->cs && atomic_load_explicit(&st->cs->cancelled, memory_order_relaxed))
        return IMP_STOP_CANCELLED;
    return IMP_STOP_NONE;
}

/* The router's answer to st, into st->reply, with `stop` as its work's stop check. */
static void route(request_state *st, imp_stop stop) {
    imp_request req = {st->method, st->url, st->ctype, st->body, st->len, stop};
    imp_router_handle(&st->srv->router, &req, &st->reply);
}

/* Worker job: the whole request decision, then wake the connection. */
static void run_request(void *arg) {
    request_state *st = arg;
    imp_metrics_queue_wait(st->srv->metrics, st->heavy, seconds_since(&st->queued));
    int why = request_stop(st);
    if (why == IMP_STOP_CANCELLED) {
        /* its client left while it waited: nobody wants the work */
        memset(&st->reply, 0, sizeof st->reply);
        imp_api_problem(IMP_E_CANCELLED, "the client closed the connection", NULL, &st->reply.resp);
        st->reply.resp.stopped = why;
    } else if (why == IMP_STOP_DRAINING) {
        imp_router_unavailable(IMP_UNAVAILABLE_DRAINING, &st->reply);
        st->reply.resp.stopped = why;
    } else {
        route(st, (imp_stop){request_stop, st});
    }
    imp_metrics_stopped(st->srv->metrics, st->reply.resp.stopped);
    encode_reply(st);
    finish(st);
}

/* A queued job that will not run (shutdown): it is answered 503 instead. */
static void cancel_request(void *arg) {
    request_state *st = arg;
    imp_router_unavailable(IMP_UNAVAILABLE_DRAINING, &st->reply);
    finish(st);
}

/* The slice of a small pair query on its connection thread: the request, and when its work
 * must give way to a worker. */
typedef struct inline_slice {
    request_state *st;
    long long end_ns; /* now_ns's clock */
} inline_slice;

/* The stop check of work on a connection thread: the request's own (the drain timeout; the
 * watcher looks only at connections a worker has, so it never says the client left), then the
 * slice. The request's time budget is checked by api/ after this. */
static int inline_stop(void *cls) {
    const inline_slice *sl = cls;
    int why = request_stop(sl->st);
    if (why) return why;
    return now_ns() > sl->end_ns ? IMP_STOP_HANDOFF : IMP_STOP_NONE;
}

/* A small pair query (imp_router_is_inline) answered by the connection thread that read it:
 * 1 with st->reply ready. 0 when the request is not one, or its slice ran out (what the slice
 * did is dropped; a worker starts afresh): the caller dispatches it. */
static int answer_inline(request_state *st) {
    imp_http_server *s = st->srv;
    if (s->inline_ns <= 0 || !imp_router_is_inline(st->url, st->len)) return 0;
    inline_slice sl = {st, now_ns() + s->inline_ns};
    route(st, (imp_stop){inline_stop, &sl});
    int handed_off = st->reply.resp.stopped == IMP_STOP_HANDOFF;
    imp_metrics_inline(s->metrics, handed_off);
    if (handed_off) {
        imp_reply_free(&st->reply);
        return 0;
    }
    imp_metrics_stopped(s->metrics, st->reply.resp.stopped);
    atomic_store_explicit(&st->phase, PHASE_DONE, memory_order_relaxed);
    return 1;
}

/* Hands a complete request to the pool, or answers 503 when the queue is full. */
static enum MHD_Result dispatch(request_state *st) {
    imp_http_server *s = st->srv;
    atomic_store_explicit(&st->phase, PHASE_QUEUED, memory_order_relaxed);
    set_deadline(st->cs, 0);
    /* Suspend before submitting: the worker may resume as soon as it is queued. */
    MHD_suspend_connection(st->conn);
    st->heavy = imp_router_is_heavy(st->url, st->len);
    imp_pool_lane lane = st->heavy ? IMP_POOL_HEAVY : IMP_POOL_LIGHT;
    clock_gettime(CLOCK_MONOTONIC, &st->queued);
    if (st->cs) {
        atomic_store(&st->cs->cancelled, 0);
        atomic_store(&st->cs->busy, 1);
    }
    if (imp_pool_submit(s->pool, lane, run_request, st) != 0) {
        imp_router_unavailable(atomic_load(&s->closing) ? IMP_UNAVAILABLE_DRAINING
                                                        : IMP_UNAVAILABLE_OVERLOADED,
                               &st->reply);
        finish(st);
    }
    return MHD_YES;
}

static conn_state *connection_state(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* A Transfer-Encoding value that libmicrohttpd decodes as chunked: "chunked" in any case,
 * leading space aside (it trims only that; "chunked " it would read as another coding). */
static int is_chunked(const char *te) {
    while (*te == ' ' || *te == '\t')
        ++te;
    return strcasecmp(te, "chunked") == 0;
}

static int hex_digit(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/*
 * libmicrohttpd's percent-decoding of the request target (the path and each query
 * argument), done here in place as it would, plus a note on the connection when a decoded
 * byte is a control byte (%00 to %1F, %7F): "/v1/toi%00" must not become "/v1/toi", so such
 * a request is answered 400 when its headers are in (begin_request).
 */
static size_t unescape_target(void *cls, struct MHD_Connection *c, char *text) {
    (void)cls;
    size_t n = 0;
    int control = 0;
    for (const char *p = text; *p;) {
        int hi = p[0] == '%' ? hex_digit(p[1]) : -1, lo = hi >= 0 ? hex_digit(p[2]) : -1;
        if (lo >= 0) {
            unsigned char b = (unsigned char)(hi * 16 + lo);
            control |= b < 0x20 || b == 0x7f;
            text[n++] = (char)b;
            p += 3;
        } else {
            text[n++] = *p++;
        }
    }
    text[n] = '\0';
    conn_state *cs = control ? connection_state(c) : NULL;
    if (cs) cs->bad_target = 1;
    return n;
}

/* What a request's Content-Encoding and Accept-Encoding headers say, over every line of
 * each (a second Content-Encoding line must not go unread). */
typedef struct codings {
    imp_coding content;
    imp_accept accept;
} codings;

static enum MHD_Result read_codings(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
    (void)kind;
    codings *k = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_ENCODING) == 0)
        k->content = imp_gzip_content_coding(k->content, value);
    else if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) == 0)
        imp_accept_add(&k->accept, value);
    return MHD_YES;
}

/* The Content-Length the size check of the headers sees. A gzip body's counts wire bytes:
 * only one past what a body of the limit can compress to is refused from the headers, since
 * deflate never expands much (imp_gzip_wire_limit); the decoded bytes are checked as they are
 * inflated. An unsupported coding is answered (415) before any size. */
static long long early_length(const imp_router *r, imp_coding coding, long long declared) {
    if (coding == IMP_CODING_UNSUPPORTED) return -1;
    if (coding == IMP_CODING_GZIP && declared >= 0 &&
        (unsigned long long)declared <= imp_gzip_wire_limit(r->max_body_bytes))
        return -1;
    return declared;
}

/* First call of a request: headers complete, no body seen yet. */
static enum MHD_Result begin_request(imp_http_server *s, struct MHD_Connection *c, const char *url,
                                     const char *method, void **con_cls) {
    request_state *st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    clock_gettime(CLOCK_MONOTONIC, &st->start);
    st->srv = s;
    st->conn = c;
    st->cs = connection_state(c);
    st->method = method;
    st->url = url;
    st->ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    atomic_init(&st->phase, PHASE_READING);
    *con_cls = st;
    atomic_fetch_add(&s->open_requests, 1);
    set_deadline(st->cs, s->request_ms);
    codings coding = {IMP_CODING_IDENTITY, {0, 0, 0}};
    imp_accept_init(&coding.accept);
    MHD_get_connection_values(c, MHD_HEADER_KIND, read_codings, &coding);
    st->accept_gzip = imp_accept_gzip(&coding.accept);

    long long declared = st->declared = content_length(c);
    const char *te =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    int bad_target = st->cs && st->cs->bad_target;
    if (st->cs) st->cs->bad_target = 0;
    int decided = 1;
    if (bad_target) {
        imp_router_bad_framing(IMP_FRAMING_CONTROL_BYTE, &st->reply);
    } else if (te &&
               MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        imp_router_bad_framing(IMP_FRAMING_TE_AND_LENGTH, &st->reply);
    } else if (te && !is_chunked(te)) {
        imp_router_bad_framing(IMP_FRAMING_TE_UNSUPPORTED, &st->reply);
    } else if (atomic_load(&s->closing)) {
        imp_router_unavailable(IMP_UNAVAILABLE_DRAINING, &st->reply);
    } else {
        decided = imp_router_early(&s->router, method, url, st->ctype,
                                   early_length(&s->router, coding.content, declared), &st->reply);
        if (!decided && coding.content == IMP_CODING_UNSUPPORTED) {
            imp_router_unsupported_coding(&st->reply);
            decided = 1;
        }
        if (!decided)
            decided = imp_router_authorize(
                &s->router, method, url,
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
                &st->reply);
        /* A plain body of declared length takes its whole share of the budget now, or is
         * turned away before it is sent: reserved piece by piece, many large uploads at once
         * would each hold part of the budget and none could finish. A gzip body's decoded
         * size is not known, so it (like a chunked one) reserves as it grows. */
        if (!decided && declared > 0 && coding.content != IMP_CODING_GZIP &&
            !reserve(st, (size_t)declared + 1)) {
            imp_router_unavailable(IMP_UNAVAILABLE_BUFFERS, &st->reply);
            decided = 1;
        }
    }
    if (decided) {
        atomic_store_explicit(&st->phase, PHASE_DONE, memory_order_relaxed);
        /* A reply queued now makes libmicrohttpd skip the body but also close the
         * connection; worth it only when a body is coming. Without one, wait for
         * the final call and keep the connection alive. */
        int body_coming =
            declared > 0 || MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
        return body_coming || st->reply.close ? send_reply(st) : MHD_YES;
    }
    if (coding.content == IMP_CODING_GZIP && !(st->gunzip = imp_gunzip_new())) return MHD_NO;
    if (declared > 0) {
        /* imp_router_early has checked declared <= the limit (a gzip body's may pass it a
         * little, and its decoded bytes may be more or fewer) */
        size_t cap = (size_t)declared < BODY_PREALLOC_MAX ? (size_t)declared : BODY_PREALLOC_MAX;
        if (cap > s->router.max_body_bytes) cap = s->router.max_body_bytes;
        if (!reserve(st, cap + 1)) {
            imp_router_unavailable(IMP_UNAVAILABLE_BUFFERS, &st->reply);
            atomic_store_explicit(&st->phase, PHASE_DONE, memory_order_relaxed);
            return send_reply(st);
        }
        st->body = malloc(cap + 1);
        if (!st->body) return MHD_NO;
        st->cap = cap;
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)version;
    imp_http_server *s = cls;
    request_state *st = *con_cls;
    if (!st) return begin_request(s, c, url, method, con_cls);

    if (*upload_data_size > 0) { /* a piece of body */
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        st->received += n;
        if (refused(st)) {
            /* drained (never inflated): at most DRAIN_MAX_BYTES past what was kept, then cut */
            return st->received - st->drain_from <= DRAIN_MAX_BYTES ? MHD_YES : MHD_NO;
        }
        if (take_piece(st, upload_data, n)) return MHD_YES;
        if (!refused(st)) return MHD_NO; /* out of memory: drop the connection */
        st->drain_from = st->received - n;
        drop_body(st);
        return MHD_YES;
    }

    /* body complete, or the connection was resumed */
    switch ((phase)atomic_load_explicit(&st->phase, memory_order_acquire)) {
    case PHASE_DONE: return send_reply(st);
    case PHASE_QUEUED: return MHD_YES; /* not ours to answer yet (a spurious call) */
    case PHASE_READING: break;
    }
    if (st->gunzip) {
        /* the body must end where a gzip member does */
        if (!refused(st) && !imp_gunzip_finish(st->gunzip)) st->bad_coding = 1;
        if (st->bad_coding) imp_router_bad_coding(imp_gunzip_error(st->gunzip), &st->reply);
        end_gunzip(st);
    }
    if (st->too_large) {
        imp_router_too_large(&s->router, &st->reply);
        return send_reply(st);
    }
    if (st->over_budget) {
        imp_router_unavailable(IMP_UNAVAILABLE_BUFFERS, &st->reply);
        return send_reply(st);
    }
    if (st->bad_coding) {
        drop_body(st);
        return send_reply(st);
    }
    if (answer_inline(st)) return send_reply(st);
    return dispatch(st);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)c;
    (void)toe;
    imp_http_server *s = cls;
    request_state *st = *con_cls;
    if (!st) return;
    set_deadline(st->cs, s->idle_ms);
    imp_reply_free(&st->reply); /* set when the client left before the reply went out */
    end_gunzip(st);             /* the client left inside a gzip body */
    drop_body(st);
    free(st);
    *con_cls = NULL;
    atomic_fetch_sub(&s->open_requests, 1);
}

/* Runs on the connection's thread, before libmicrohttpd closes the socket. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    imp_http_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&s->open_connections, 1);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_state *cs = ci ? calloc(1, sizeof *cs) : NULL;
        *socket_context = cs;
        if (!cs) return; /* no deadline for this one; libmicrohttpd's idle timeout still applies */
        cs->fd = ci->connect_fd;
        atomic_init(&cs->deadline_ms, 0);
        set_deadline(cs, s->idle_ms);
        pthread_mutex_lock(&s->conns_lock);
        cs->next = s->conns;
        if (s->conns) s->conns->prev = cs;
        s->conns = cs;
        pthread_mutex_unlock(&s->conns_lock);
        return;
    }
    atomic_fetch_sub(&s->open_connections, 1);
    conn_state *cs = *socket_context;
    if (!cs) return;
    pthread_mutex_lock(&s->conns_lock);
    if (cs->prev)
        cs->prev->next = cs->next;
    else
        s->conns = cs->next;
    if (cs->next) cs->next->prev = cs->prev;
    pthread_mutex_unlock(&s->conns_lock);
    free(cs);
    *socket_context = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    const imp_http_server *s = cls;
    if (IMP_LOG_ENABLED(&s->log, IMP_LOG_WARN)) imp_log_vwrite(&s->log, IMP_LOG_WARN, fmt, ap);
}

static int hook_ready(void *cls) {
    imp_http_server *s = cls;
    return !atomic_load(&s->draining);
}

static char *hook_metrics(void *cls, size_t *len) {
    imp_http_server *s = cls;
    imp_metrics_gauges g = {
        .queue_depth = imp_pool_queued(s->pool),
        .in_flight = atomic_load(&s->open_requests),
        .workers_busy = imp_pool_running(s->pool),
        .connections = atomic_load(&s->open_connections),
        .buffered_bytes = atomic_load(&s->buffered),
        .worker_threads = imp_pool_threads(s->pool),
        .draining = atomic_load(&s->draining),
    };
    imp_world_store_counters worlds;
    imp_world_store_counters_get(s->router.api.worlds, &worlds);
    g.worlds = &worlds;
    return imp_metrics_render(s->metrics, &g, len);
}

/* A bound, listening, non-blocking socket on bind:port, or -1 with err set. */
static int open_listener(const char *bind_addr, unsigned port, int *is_v6, unsigned *bound_port,
                         imp_http_error *err) {
    struct sockaddr_storage ss;
    socklen_t ss_len;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bind_addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        ss_len = sizeof *v4;
        *is_v6 = 0;
    } else if (inet_pton(AF_INET6, bind_addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        ss_len = sizeof *v6;
        *is_v6 = 1;
    } else {
        IMP_SET_ERROR(err, "\"%s\" is not a numeric IPv4 or IPv6 address", bind_addr);
        return -1;
    }

    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0) {
        IMP_SET_ERROR(err, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    /* a restarted daemon must not wait out TIME_WAIT connections of the last one */
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        IMP_SET_ERROR(err, "fcntl: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&ss, ss_len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        IMP_SET_ERROR(err, "cannot listen on %s port %u: %s", bind_addr, port, strerror(errno));
        close(fd);
        return -1;
    }
    ss_len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &ss_len) < 0) {
        IMP_SET_ERROR(err, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *bound_port = ntohs(ss.ss_family == AF_INET6 ? v6->sin6_port : v4->sin_port);
    return fd;
}

static void *watch_cancellations(void *arg);

/* The write token from --world-write-token-file: the file's text without trailing white
 * space. 0, or -1 with err set (a missing or empty file stops the start: a typo in the path
 * must not leave the store open to writes). */
static int read_token(imp_http_server *s, const char *path, imp_http_error *err) {
    if (!path[0]) return 0;
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(4097) : NULL;
    size_t n = buf ? fread(buf, 1, 4096, f) : 0;
    int more = f && fgetc(f) != EOF;
    if (f) fclose(f);
    while (buf && n &&
           (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        --n;
    if (!buf || n == 0 || more || memchr(buf, '\n', n) || memchr(buf, '\0', n)) {
        if (buf) OPENSSL_cleanse(buf, 4097);
        free(buf);
        IMP_SET_ERROR(err, "--world-write-token-file: %.160s %s", path,
                      !f     ? "cannot be read"
                      : more ? "is longer than 4096 bytes"
                             : "holds no token (one line of text)");
        return -1;
    }
    buf[n] = '\0';
    s->router.write_token = buf;
    s->router.write_token_len = n;
    return 0;
}

/* The world store of --world-store under --world-cache-bytes, and the write token. */
static int open_worlds(imp_http_server *s, const imp_config *cfg, imp_http_error *err) {
    if (read_token(s, cfg->world_write_token_file, err)) return -1;
    imp_world_backend be;
    char why[200];
    if (imp_world_backend_open(cfg->world_store, &s->log, &be, why, sizeof why)) {
        IMP_SET_ERROR(err, "--world-store: %s", why);
        return -1;
    }
    imp_world_store_config wc = {(size_t)cfg->world_cache_bytes, be.fetch ? &be : NULL,
                                 imp_ep_worlds_build, &s->router.api};
    if (!(s->router.api.worlds = imp_world_store_open(&wc))) {
        IMP_SET_ERROR(err, "out of memory");
        return -1;
    }
    if (be.fetch)
        IMP_LOG(&s->log, IMP_LOG_INFO, "world store: %s, cache of %lld bytes", be.name,
                cfg->world_cache_bytes);
    return 0;
}

static void free_server(imp_http_server *s) {
    if (s->watcher_started) {
        atomic_store(&s->watcher_stop, 1);
        pthread_join(s->watcher, NULL);
    }
    imp_pool_destroy(s->pool);
    imp_world_store_destroy(s->router.api.worlds);
    if (s->router.write_token) { /* wiped: a token should not outlive its use in memory */
        OPENSSL_cleanse((char *)s->router.write_token, s->router.write_token_len);
        free((char *)s->router.write_token);
    }
    imp_metrics_destroy(s->metrics);
    pthread_mutex_destroy(&s->conns_lock);
    free(s);
}

imp_http_server *imp_http_start(const imp_config *cfg, const imp_logger *log, double start_time,
                                imp_http_error *err) {
    imp_http_server *s = calloc(1, sizeof *s);
    if (!s) {
        IMP_SET_ERROR(err, "out of memory");
        return NULL;
    }
    s->log = *log;
    s->idle_ms = cfg->idle_timeout_s * 1000;
    s->request_ms = cfg->request_timeout_s * 1000;
    s->inline_ns = cfg->inline_slice_us * 1000;
    atomic_init(&s->draining, 0);
    atomic_init(&s->closing, 0);
    atomic_init(&s->open_requests, 0);
    atomic_init(&s->open_connections, 0);
    pthread_mutex_init(&s->conns_lock, NULL);
    s->quiesced_fd = MHD_INVALID_SOCKET;
    s->metrics = imp_metrics_create(start_time);
    s->pool = imp_pool_create((unsigned)cfg->threads, (size_t)cfg->queue_depth);
    if (!s->metrics || !s->pool) {
        IMP_SET_ERROR(err, "cannot start %lld worker threads", cfg->threads);
        free_server(s);
        return NULL;
    }
    imp_router_init(&s->router, (size_t)cfg->max_body_bytes, (size_t)cfg->max_bodies);
    if (open_worlds(s, cfg, err)) {
        free_server(s);
        return NULL;
    }
    s->max_buffered = (size_t)cfg->max_buffered_bytes;
    s->router.api.max_batch_items = (size_t)cfg->max_batch_items;
    s->router.api.max_events = (size_t)cfg->max_events;
    s->router.api.max_world_triangles = (size_t)cfg->max_world_triangles;
    s->router.api.parallel = imp_pool_parallel(s->pool);
    s->router.api.time_budget_ms = (double)cfg->time_budget_ms;
    s->router.api.max_time_budget_ms = (double)cfg->max_time_budget_ms;
    s->router.hooks = (imp_router_hooks){hook_ready, hook_metrics, s};

    int is_v6;
    int fd = open_listener(cfg->bind, (unsigned)cfg->port, &is_v6, &s->port, err);
    if (fd < 0) {
        free_server(s);
        return NULL;
    }

    /* poll(2), not epoll: with epoll, MHD_quiesce_daemon (libmicrohttpd 0.9.75,
     * Debian 12) removes the listener from each connection thread's epoll set
     * while that thread may be removing it too, and panics (abort) when it
     * loses that race with ENOENT; with poll, quiescing only drops the
     * listener from the next poll set. tests/bench/load.sh (15 s, 64
     * connections, two runs each) gave 51k and 57k requests/s with poll
     * against 48k and 56k with epoll: no measurable cost at the connection
     * counts one thread serves here. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_POLL;
    if (is_v6) flags |= MHD_USE_IPv6;
    /* One thread means no pool; libmicrohttpd warns about a pool size of 0 or 1, so the
     * option is only passed (through an option array) for a real pool. */
    struct MHD_OptionItem pool_opt[] = {
        {cfg->io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
         (intptr_t)cfg->io_threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };

    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        /* first, so that start-up messages already go through our log */
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_ARRAY,
        pool_opt, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_POOL_BYTES,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->idle_timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK,
        unescape_target, s, MHD_OPTION_END);
    if (!s->daemon) {
        IMP_SET_ERROR(err, "libmicrohttpd failed to start (see the log for its reason)");
        close(fd);
        free_server(s);
        return NULL;
    }
    if (pthread_create(&s->watcher, NULL, watch_cancellations, s) != 0) {
        IMP_SET_ERROR(err, "cannot start the connection watcher thread");
        MHD_stop_daemon(s->daemon);
        free_server(s);
        return NULL;
    }
    s->watcher_started = 1;
    return s;
}

/*
 * The watcher: every CANCEL_POLL_MS it looks, without blocking, at the sockets of the
 * connections whose request is with the pool (queued or running), which libmicrohttpd does
 * not poll while they are suspended. A socket that has hung up, failed, or reads end of
 * file (a peek, so pipelined bytes stay for libmicrohttpd) marks its connection cancelled,
 * and the request's stop check tells its work to stop. The list lock is held for the
 * non-blocking look only, so a connection cannot close (and its fd be reused) meanwhile.
 */
static void *watch_cancellations(void *arg) {
    imp_http_server *s = arg;
    size_t cap = 64;
    struct pollfd *fds = malloc(cap * sizeof *fds);
    conn_state **who = malloc(cap * sizeof *who);
    while (fds && who && !atomic_load(&s->watcher_stop)) {
        pthread_mutex_lock(&s->conns_lock);
        size_t n = 0;
        for (conn_state *cs = s->conns; cs; cs = cs->next) {
            if (!atomic_load(&cs->busy) || atomic_load(&cs->cancelled)) continue;
            if (n == cap) {
                struct pollfd *f2 = realloc(fds, 2 * cap * sizeof *fds);
                if (f2) fds = f2;
                conn_state **w2 = f2 ? realloc(who, 2 * cap * sizeof *who) : NULL;
                if (!w2) break; /* the rest waits for the next round */
                who = w2;
                cap *= 2;
            }
            fds[n] = (struct pollfd){cs->fd, POLLIN, 0};
            who[n++] = cs;
        }
        if (n > 0 && poll(fds, (nfds_t)n, 0) > 0) {
            for (size_t i = 0; i < n; ++i) {
                char b;
                int gone = (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) ||
                           ((fds[i].revents & POLLIN) &&
                            recv(fds[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0);
                if (gone) atomic_store(&who[i]->cancelled, 1);
            }
        }
        pthread_mutex_unlock(&s->conns_lock);
        struct timespec nap = {0, CANCEL_POLL_MS * 1000000L};
        nanosleep(&nap, NULL);
    }
    free(fds);
    free(who);
    return NULL;
}

unsigned imp_http_port(const imp_http_server *s) { return s->port; }

size_t imp_http_tick(imp_http_server *s) {
    long long now = now_ms();
    size_t cut = 0;
    pthread_mutex_lock(&s->conns_lock);
    for (conn_state *cs = s->conns; cs; cs = cs->next) {
        long long d = atomic_load_explicit(&cs->deadline_ms, memory_order_relaxed);
        if (d != 0 && now > d) {
            (void)shutdown(cs->fd, SHUT_RDWR);
            atomic_store_explicit(&cs->deadline_ms, 0, memory_order_relaxed);
            ++cut;
        }
    }
    pthread_mutex_unlock(&s->conns_lock);
    if (cut) IMP_LOG(&s->log, IMP_LOG_INFO, "closed %zu connections past their deadline", cut);
    return cut;
}

void imp_http_drain_begin(imp_http_server *s) { atomic_store(&s->draining, 1); }

void imp_http_close(imp_http_server *s) {
    atomic_store(&s->draining, 1);
    if (atomic_exchange(&s->closing, 1)) return;
    s->quiesced_fd = MHD_quiesce_daemon(s->daemon);
    /* Refuse new connections now. Closing the descriptor would race with
     * libmicrohttpd's thread taking it out of its epoll set; shutdown(2)
     * ends the listening state (connection attempts are refused) and the
     * descriptor itself is closed after libmicrohttpd has stopped. */
    if (s->quiesced_fd != MHD_INVALID_SOCKET) (void)shutdown(s->quiesced_fd, SHUT_RDWR);
}

size_t imp_http_in_flight(imp_http_server *s) { return atomic_load(&s->open_requests); }

void imp_http_stop(imp_http_server *s) {
    if (!s) return;
    imp_http_close(s);
    /* the drain timeout is over: running work stops at its next poll (503 draining) */
    atomic_store(&s->abort_work, 1);
    /* Work nobody started is answered 503; running work finishes and resumes its
     * connection, so libmicrohttpd stops with none left suspended. */
    size_t cancelled = imp_pool_cancel_queued(s->pool, cancel_request);
    if (cancelled)
        IMP_LOG(&s->log, IMP_LOG_WARN, "answered %zu queued requests 503 at shutdown", cancelled);
    imp_pool_destroy(s->pool);
    s->pool = NULL;
    /* the replies of stopped work are queued: give them a moment to reach their clients */
    for (int waited = 0; atomic_load(&s->open_requests) > 0 && waited < STOP_FLUSH_MS; waited += 10)
        nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
    MHD_stop_daemon(s->daemon);
    if (s->quiesced_fd != MHD_INVALID_SOCKET) close(s->quiesced_fd);
    free_server(s);
}
