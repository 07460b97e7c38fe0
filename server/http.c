/*
 * http.c - libmicrohttpd glue: listening socket, body accumulation, replies.
 *
 * DESIGN
 * What: owns the libmicrohttpd daemon and turns its callback protocol into
 * one call of imp_router_handle per complete request.
 * How: libmicrohttpd calls the access handler once when the headers are in
 * (*con_cls still NULL), then once per piece of body, then once more with
 * no data when the body is complete. On the first call we allocate the
 * per-request state and ask the router whether the headers alone decide
 * the reply (404, 405, 415, 413 by Content-Length, /healthz); if so it is
 * queued at once and libmicrohttpd never reads the body. Otherwise body
 * pieces are appended to a buffer sized from Content-Length when known.
 * A body that grows past the limit (chunked, or a lying client) is freed
 * and the rest of it is drained without storing it; the 413 goes out when
 * the body ends, because libmicrohttpd accepts a reply only after the
 * headers or after the whole body. The state is freed in the
 * request-completed callback, which libmicrohttpd calls on every path,
 * including aborted connections.
 * We bind the listening socket ourselves and hand it to libmicrohttpd, so
 * a failure to listen is reported with its errno text and the port chosen
 * for --port 0 is read back with getsockname.
 * Why: today libmicrohttpd's own thread pool runs the router inline; the
 * worker pool that replaces it needs exactly this split (collect body,
 * then one self-contained call), so only the "call" part will change.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "router.h"

/* Initial body buffer when the length is not declared (bytes); it doubles
 * from here, capped at the limit. */
#define BODY_INITIAL_CAP 4096
/* A declared Content-Length is a promise, not bytes: the buffer is sized
 * from it only up to this much (bytes), so idle connections that announce
 * large bodies do not pin memory; larger bodies grow as they arrive. */
#define BODY_PREALLOC_MAX ((size_t)1 << 20)
/* Pending connections the kernel queues before accept (passed to listen). */
#define LISTEN_BACKLOG 1024

struct imp_http_server {
    struct MHD_Daemon *daemon;
    imp_router router;
    imp_logger log;
    unsigned port;
};

/* Body bytes we read and throw away past the limit so that a chunked
 * upload can still be answered 413 (libmicrohttpd takes no reply mid-body);
 * past this the connection is cut without a reply instead. */
#define DRAIN_MAX_BYTES (64u << 20)

/* One request in flight; owned through libmicrohttpd's *con_cls. */
typedef struct request_state {
    struct timespec start; /* headers received */
    char *body;            /* NULL until the first byte, and after too_large */
    size_t len, cap;       /* cap excludes the NUL kept after the body */
    size_t received;       /* body bytes seen, stored or drained */
    int too_large;         /* drain the rest of the body, then reply 413 */
    int has_early;         /* `early` holds a reply decided from the headers */
    imp_reply early;
} request_state;

static void set_error(imp_http_error *err, const char *fmt, ...) IMP_PRINTF_LIKE(2, 3);
static void set_error(imp_http_error *err, const char *fmt, ...) {
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Declared Content-Length, or -1 when absent or unreadable (libmicrohttpd
 * has already rejected a malformed one; chunked bodies have none). */
static long long content_length(struct MHD_Connection *c) {
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!v)
        return -1;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < 0)
        return -1;
    return n;
}

/* The reply body is released by libmicrohttpd when it is done with it. */
static void free_boxed_response(void *cls) {
    imp_api_response *resp = cls;
    imp_api_response_free(resp);
    free(resp);
}

static enum MHD_Result send_reply(imp_http_server *s, struct MHD_Connection *c,
                                  const request_state *st, const char *method, const char *url,
                                  imp_reply *reply) {
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
        return MHD_NO;
    }
    int status = box->status;
    size_t bytes_out = box->len;
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, box->content_type) != MHD_YES ||
        (reply->allow &&
         MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, reply->allow) != MHD_YES)) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r); /* the queued reply holds its own reference */
    IMP_LOG_ACCESS(&s->log, method, url, status, st->received, bytes_out, ms_since(&st->start));
    return ok;
}

/* Appends n bytes, growing the buffer geometrically up to `limit`; 0 on
 * allocation failure. The caller has checked st->len + n <= limit, which
 * is what ends the growth loop. */
static int append(request_state *st, const char *data, size_t n, size_t limit) {
    if (n > st->cap - st->len) {
        size_t cap = st->cap ? st->cap : (limit < BODY_INITIAL_CAP ? limit : BODY_INITIAL_CAP);
        while (cap - st->len < n)
            cap = cap > limit / 2 ? limit : cap * 2;
        char *p = realloc(st->body, cap + 1);
        if (!p)
            return 0;
        st->body = p;
        st->cap = cap;
    }
    memcpy(st->body + st->len, data, n);
    st->len += n;
    st->body[st->len] = '\0';
    return 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)version;
    imp_http_server *s = cls;
    request_state *st = *con_cls;
    const char *ctype =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    imp_reply reply;

    if (!st) { /* headers complete, no body seen yet */
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &st->start);
        *con_cls = st;
        long long declared = content_length(c);
        if (imp_router_early(&s->router, method, url, ctype, declared, &st->early)) {
            /* A reply queued now makes libmicrohttpd skip the body but also close the
             * connection; worth it only when a body is coming. Without one, wait for
             * the final call and keep the connection alive. */
            int body_coming =
                declared > 0 || MHD_lookup_connection_value(
                                    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
            if (body_coming)
                return send_reply(s, c, st, method, url, &st->early);
            st->has_early = 1;
            return MHD_YES;
        }
        if (declared > 0) {
            /* imp_router_early has checked declared <= the limit */
            size_t cap =
                (size_t)declared < BODY_PREALLOC_MAX ? (size_t)declared : BODY_PREALLOC_MAX;
            st->body = malloc(cap + 1);
            if (!st->body)
                return MHD_NO;
            st->cap = cap;
        }
        return MHD_YES;
    }

    if (*upload_data_size > 0) { /* a piece of body */
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        st->received += n;
        if (st->too_large) {
            return st->received - s->router.max_body_bytes <= DRAIN_MAX_BYTES ? MHD_YES : MHD_NO;
        }
        if (n > s->router.max_body_bytes - st->len) {
            st->too_large = 1;
            free(st->body);
            st->body = NULL;
            st->len = st->cap = 0;
            return MHD_YES;
        }
        return append(st, upload_data, n, s->router.max_body_bytes) ? MHD_YES : MHD_NO;
    }

    /* body complete */
    if (st->has_early) {
        st->has_early = 0; /* ownership passes to send_reply */
        return send_reply(s, c, st, method, url, &st->early);
    }
    if (st->too_large) {
        imp_router_too_large(&s->router, &reply);
    } else {
        imp_request req = {method, url, ctype, st->body, st->len};
        imp_router_handle(&s->router, &req, &reply);
    }
    return send_reply(s, c, st, method, url, &reply);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)c;
    (void)toe;
    request_state *st = *con_cls;
    if (!st)
        return;
    if (st->has_early)
        imp_reply_free(&st->early); /* the client left before the reply */
    free(st->body);
    free(st);
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    const imp_http_server *s = cls;
    if (IMP_LOG_ENABLED(&s->log, IMP_LOG_WARN))
        imp_log_vwrite(&s->log, IMP_LOG_WARN, fmt, ap);
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
        set_error(err, "\"%s\" is not a numeric IPv4 or IPv6 address", bind_addr);
        return -1;
    }

    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0) {
        set_error(err, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    /* a restarted daemon must not wait out TIME_WAIT connections of the last one */
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        set_error(err, "fcntl: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&ss, ss_len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        set_error(err, "cannot listen on %s port %u: %s", bind_addr, port, strerror(errno));
        close(fd);
        return -1;
    }
    ss_len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &ss_len) < 0) {
        set_error(err, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *bound_port = ntohs(ss.ss_family == AF_INET6 ? v6->sin6_port : v4->sin_port);
    return fd;
}

imp_http_server *imp_http_start(const imp_config *cfg, const imp_logger *log, imp_http_error *err) {
    imp_http_server *s = calloc(1, sizeof *s);
    if (!s) {
        set_error(err, "out of memory");
        return NULL;
    }
    s->log = *log;
    imp_router_init(&s->router, (size_t)cfg->max_body_bytes, (size_t)cfg->max_bodies);

    int is_v6;
    int fd = open_listener(cfg->bind, (unsigned)cfg->port, &is_v6, &s->port, err);
    if (fd < 0) {
        free(s);
        return NULL;
    }

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_AUTO;
    if (is_v6)
        flags |= MHD_USE_IPv6;
    /* One thread means no pool; libmicrohttpd warns about a pool size of 0 or 1, so the
     * option is only passed (through an option array) for a real pool. */
    struct MHD_OptionItem pool_opt[] = {
        {cfg->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)cfg->threads,
         NULL},
        {MHD_OPTION_END, 0, NULL},
    };

    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                                 /* first, so that start-up messages already go through our log */
                                 MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
                                 MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_ARRAY, pool_opt,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->daemon) {
        set_error(err, "libmicrohttpd failed to start (see the log for its reason)");
        close(fd);
        free(s);
        return NULL;
    }
    return s;
}

unsigned imp_http_port(const imp_http_server *s) { return s->port; }

void imp_http_stop(imp_http_server *s) {
    if (!s)
        return;
    MHD_stop_daemon(s->daemon); /* also closes the listening socket */
    free(s);
}
