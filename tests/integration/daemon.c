/*
 * daemon.c - start/stop the daemon under test, run it as a command, and
 * make HTTP requests with libcurl.
 *
 * DESIGN
 * What: the fixtures every integration test shares.
 * How: fork/exec with stdout (and optionally stderr) on pipes; the port
 * comes from the daemon's one "impactd listening on http://127.0.0.1:<port>"
 * line, read with poll() against a deadline, so tests run on a free port
 * the kernel picked and never collide with each other or a running
 * daemon. The child asks the kernel (PR_SET_PDEATHSIG) to kill it if the
 * test process dies, so a crashed test leaves no daemon behind. Stopping
 * is a signal plus waitpid against a deadline, and the exit status is
 * returned so that tests assert a clean exit.
 * Why: parsing the listening line tests the daemon's documented start-up
 * contract and avoids the race of guessing a free port.
 */
#include "daemon.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Most arguments a spawned command line may have (program and NULL included). */
#define MAX_ARGS 64
/* Per-request curl timeout (s): far above any request of these tests. */
#define HTTP_TIMEOUT_S 30L

static const char LISTEN_PREFIX[] = "impactd listening on http://127.0.0.1:";

double imp_test_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void imp_test_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

const char *imp_test_daemon_bin(void) {
    const char *bin = getenv("IMPACTD_BIN");
    return bin && *bin ? bin : "build/impactd";
}

/* argv = bin, defaults..., args..., NULL. Returns 0, or -1 when too long. */
static int build_argv(const char **argv, const char *const *defaults, const char *const *args) {
    size_t n = 0;
    argv[n++] = imp_test_daemon_bin();
    for (const char *const *p = defaults; p && *p; ++p) {
        if (n + 1 >= MAX_ARGS) return -1;
        argv[n++] = *p;
    }
    for (const char *const *p = args; p && *p; ++p) {
        if (n + 1 >= MAX_ARGS) return -1;
        argv[n++] = *p;
    }
    argv[n] = NULL;
    return 0;
}

/* Forks and execs argv with env added; child stdout -> out_w, stderr ->
 * err_w (when >= 0). All other pipe ends are closed in the child. */
static pid_t spawn(const char *const *argv, const char *const *env, const int *close_fds,
                   size_t n_close, int out_w, int err_w) {
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;

    /* child: never outlive the test */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (dup2(out_w, STDOUT_FILENO) < 0) _exit(127);
    if (err_w >= 0 && dup2(err_w, STDERR_FILENO) < 0) _exit(127);
    for (size_t i = 0; i < n_close; ++i)
        close(close_fds[i]);
    for (const char *const *e = env; e && *e; ++e) {
        char name[128];
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : 0;
        if (!eq || len == 0 || len >= sizeof name) _exit(127);
        memcpy(name, *e, len);
        name[len] = '\0';
        if (setenv(name, eq + 1, 1) != 0) _exit(127);
    }
    execv(argv[0], (char *const *)argv);
    fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* waitpid with a deadline; on timeout SIGKILL. Exit status or -1. */
static int wait_exit(pid_t pid, double timeout_s) {
    double deadline = imp_test_now_s() + timeout_s;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return -1;
        if (imp_test_now_s() > deadline) {
            fprintf(stderr, "daemon %d did not exit within %.0f s; killing it\n", (int)pid,
                    timeout_s);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        imp_test_sleep_ms(5);
    }
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    fprintf(stderr, "daemon %d died of signal %d\n", (int)pid, WTERMSIG(st));
    return -1;
}

/* Appends everything readable until EOF on fd to *buf. */
static int drain_fd(int fd, char **buf, size_t *len, size_t *cap) {
    for (;;) {
        if (*cap - *len < 4096) {
            size_t ncap = *cap ? *cap * 2 : 8192;
            char *p = realloc(*buf, ncap + 1);
            if (!p) return -1;
            *buf = p;
            *cap = ncap;
        }
        ssize_t n = read(fd, *buf + *len, *cap - *len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 1; /* would block: not at EOF yet */
        if (n <= 0) {
            (*buf)[*len] = '\0';
            return 0;
        }
        *len += (size_t)n;
        (*buf)[*len] = '\0';
    }
}

/* Reads one line from fd within the deadline; returns 0 and the line
 * (without '\n') in buf, or -1 on EOF, error or timeout. */
static int read_line(int fd, char *buf, size_t cap, double timeout_s) {
    double deadline = imp_test_now_s() + timeout_s;
    size_t n = 0;
    while (n + 1 < cap) {
        int left_ms = (int)((deadline - imp_test_now_s()) * 1000.0);
        if (left_ms <= 0) return -1;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, left_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        char c;
        ssize_t k = read(fd, &c, 1); /* byte by byte: never read past the line */
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        if (c == '\n') {
            buf[n] = '\0';
            return 0;
        }
        buf[n++] = c;
    }
    return -1;
}

int imp_test_daemon_start(imp_test_daemon *d, const char *const *args, const char *const *env,
                          int capture_stderr) {
    /* No drain grace by default: a test that stops the daemon should not wait for
     * load balancers that are not there (the drain test sets its own). */
    static const char *const defaults[] = {
        "--port", "0", "--bind", "127.0.0.1", "--log", "off", "--drain-grace-s", "0", NULL};
    const char *argv[MAX_ARGS];
    memset(d, 0, sizeof *d);
    d->out_fd = d->err_fd = -1;
    if (build_argv(argv, defaults, args) != 0) return -1;

    int out[2], err[2] = {-1, -1};
    if (pipe(out) != 0) return -1;
    if (capture_stderr && pipe(err) != 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    int to_close[] = {out[0], out[1], err[0], err[1]};
    pid_t pid = spawn(argv, env, to_close, capture_stderr ? 4 : 2, out[1], err[1]);
    close(out[1]);
    if (capture_stderr) close(err[1]);
    if (pid < 0) {
        close(out[0]);
        if (capture_stderr) close(err[0]);
        return -1;
    }
    d->pid = pid;
    d->out_fd = out[0];
    d->err_fd = capture_stderr ? err[0] : -1;

    char line[256];
    if (read_line(d->out_fd, line, sizeof line, IMP_TEST_START_TIMEOUT_S) != 0) {
        fprintf(stderr, "%s: no listening line within %d s\n", argv[0], IMP_TEST_START_TIMEOUT_S);
        imp_test_daemon_stop(d, SIGKILL);
        free(imp_test_daemon_read_stderr(d));
        return -1;
    }
    const size_t plen = sizeof LISTEN_PREFIX - 1;
    char *end = NULL;
    unsigned long port = 0;
    if (strncmp(line, LISTEN_PREFIX, plen) == 0) port = strtoul(line + plen, &end, 10);
    if (!end || *end != '\0' || port == 0 || port > 65535) {
        fprintf(stderr, "unexpected start-up line: \"%s\"\n", line);
        imp_test_daemon_stop(d, SIGKILL);
        free(imp_test_daemon_read_stderr(d));
        return -1;
    }
    d->port = (unsigned)port;
    snprintf(d->url, sizeof d->url, "http://127.0.0.1:%u", d->port);
    return 0;
}

int imp_test_daemon_stop(imp_test_daemon *d, int sig) {
    if (d->pid <= 0) return -1;
    kill(d->pid, sig);
    int status = wait_exit(d->pid, IMP_TEST_STOP_TIMEOUT_S);
    d->pid = 0;
    if (d->out_fd >= 0) close(d->out_fd);
    d->out_fd = -1;
    return status;
}

char *imp_test_daemon_read_stderr(imp_test_daemon *d) {
    if (d->err_fd < 0) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    drain_fd(d->err_fd, &buf, &len, &cap);
    close(d->err_fd);
    d->err_fd = -1;
    return buf;
}

int imp_test_run(const char *const *args, const char *const *env, char **out, char **err) {
    const char *argv[MAX_ARGS];
    if (build_argv(argv, NULL, args) != 0) return -1;
    int po[2], pe[2];
    if (pipe(po) != 0) return -1;
    if (pipe(pe) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    int to_close[] = {po[0], po[1], pe[0], pe[1]};
    pid_t pid = spawn(argv, env, to_close, 4, po[1], pe[1]);
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        return -1;
    }

    /* Read both pipes as output arrives, so a chatty child never blocks. */
    char *bufs[2] = {NULL, NULL};
    size_t lens[2] = {0, 0}, caps[2] = {0, 0};
    int fds[2] = {po[0], pe[0]};
    int open_n = 2;
    double deadline = imp_test_now_s() + IMP_TEST_STOP_TIMEOUT_S;
    for (int i = 0; i < 2; ++i)
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    while (open_n > 0 && imp_test_now_s() < deadline) {
        struct pollfd p[2];
        for (int i = 0; i < 2; ++i)
            p[i] = (struct pollfd){fds[i], POLLIN, 0};
        if (poll(p, 2, 100) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                if (drain_fd(fds[i], &bufs[i], &lens[i], &caps[i]) <= 0) {
                    close(fds[i]);
                    fds[i] = -1;
                    --open_n;
                }
            }
        }
    }
    for (int i = 0; i < 2; ++i) {
        if (fds[i] >= 0) close(fds[i]);
        if (!bufs[i]) bufs[i] = calloc(1, 1);
    }
    if (open_n > 0) kill(pid, SIGKILL); /* still talking after the deadline */
    int status = wait_exit(pid, IMP_TEST_STOP_TIMEOUT_S);
    if (out)
        *out = bufs[0];
    else
        free(bufs[0]);
    if (err)
        *err = bufs[1];
    else
        free(bufs[1]);
    return status;
}

/* ---- HTTP ---------------------------------------------------------------------------------- */

typedef struct sink {
    imp_http_result *r;
    size_t cap;
    int failed;
} sink;

int imp_test_buf_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n + 1)
            c *= 2;
        char *q = realloc(*buf, c);
        if (!q) return -1;
        *buf = q;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

void imp_test_printf(imp_test_text *t, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf ||
        imp_test_buf_append(&t->p, &t->len, &t->cap, buf, (size_t)n) != 0) {
        fprintf(stderr, "imp_test_printf: output cut or out of memory\n");
        abort();
    }
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud) {
    sink *s = ud;
    size_t n = size * nmemb;
    if (imp_test_buf_append(&s->r->body, &s->r->len, &s->cap, p, n) != 0) {
        s->failed = 1;
        return 0;
    }
    return n;
}

void imp_test_header_value(const char *line, size_t n, const char *name, char *dst, size_t cap) {
    size_t nl = strlen(name);
    if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':') return;
    const char *v = line + nl + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        ++v;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        --end;
    size_t len = (size_t)(end - v);
    if (len >= cap) len = cap - 1;
    memcpy(dst, v, len);
    dst[len] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud) {
    imp_http_result *r = ((sink *)ud)->r;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new response (e.g. after 100) */
        r->content_type[0] = r->allow[0] = r->connection[0] = '\0';
        r->content_encoding[0] = r->vary[0] = r->accept_encoding[0] = r->content_length[0] = '\0';
    }
    imp_test_header_value(p, n, "Content-Type", r->content_type, sizeof r->content_type);
    imp_test_header_value(p, n, "Allow", r->allow, sizeof r->allow);
    imp_test_header_value(p, n, "Connection", r->connection, sizeof r->connection);
    imp_test_header_value(p, n, "Content-Encoding", r->content_encoding,
                          sizeof r->content_encoding);
    imp_test_header_value(p, n, "Vary", r->vary, sizeof r->vary);
    imp_test_header_value(p, n, "Accept-Encoding", r->accept_encoding, sizeof r->accept_encoding);
    imp_test_header_value(p, n, "Content-Length", r->content_length, sizeof r->content_length);
    imp_test_header_value(p, n, "Location", r->location, sizeof r->location);
    imp_test_header_value(p, n, "Retry-After", r->retry_after, sizeof r->retry_after);
    imp_test_header_value(p, n, "WWW-Authenticate", r->www_authenticate,
                          sizeof r->www_authenticate);
    return n;
}

static int perform(CURL *c, struct curl_slist *headers, imp_http_result *out) {
    sink s = {out, 0, 0};
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, HTTP_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*"); /* never send test traffic to a proxy */
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK && !s.failed) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &out->new_connections);
    } else {
        fprintf(stderr, "curl: %s\n", curl_easy_strerror(rc));
    }
    if (!out->body) out->body = calloc(1, 1);
    return rc == CURLE_OK && !s.failed && out->body ? 0 : -1;
}

int imp_http(void *curl, const char *method, const char *url, const char *content_type,
             const char *body, size_t len, imp_http_result *out) {
    memset(out, 0, sizeof *out);
    CURL *c = curl ? (CURL *)curl : curl_easy_init();
    if (!c) return -1;
    curl_easy_reset(c); /* keeps live connections: keep-alive tests rely on that */
    curl_easy_setopt(c, CURLOPT_URL, url);

    char ct[160];
    snprintf(ct, sizeof ct, "Content-Type:%s%s", content_type ? " " : "",
             content_type ? content_type : "");
    struct curl_slist *h = curl_slist_append(NULL, "Expect:");
    h = curl_slist_append(h, ct); /* "Content-Type:" alone removes curl's default */

    if (body || strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
        if (strcmp(method, "POST") != 0) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    int rc = perform(c, h, out);
    curl_slist_free_all(h);
    if (!curl) curl_easy_cleanup(c);
    return rc;
}

typedef struct source {
    const char *p;
    size_t left, piece;
} source;

static size_t on_read(char *dst, size_t size, size_t nmemb, void *ud) {
    source *s = ud;
    size_t n = size * nmemb;
    if (n > s->piece) n = s->piece;
    if (n > s->left) n = s->left;
    memcpy(dst, s->p, n);
    s->p += n;
    s->left -= n;
    return n;
}

/* `method` `url` with extra header lines; a POST's body goes whole (piece 0), or through a
 * read callback `piece` bytes at a time, chunked or with its length. */
static int send_request(const char *method, const char *url, const char *const *headers,
                        const char *body, size_t len, size_t piece, int chunked,
                        imp_http_result *out) {
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    if (!c) return -1;
    source src = {body, len, piece};
    curl_easy_setopt(c, CURLOPT_URL, url);
    struct curl_slist *h = curl_slist_append(NULL, "Expect:");
    for (size_t i = 0; headers && headers[i]; ++i)
        h = curl_slist_append(h, headers[i]);
    if (strcmp(method, "POST") == 0) {
        h = curl_slist_append(h, "Content-Type: application/json");
        if (piece > 0) {
            curl_easy_setopt(c, CURLOPT_POST, 1L);
            curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(c, CURLOPT_READDATA, &src);
        } else {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        }
        if (chunked)
            h = curl_slist_append(h, "Transfer-Encoding: chunked");
        else
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    int rc = perform(c, h, out);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return rc;
}

int imp_http_post_pieces(const char *url, const char *body, size_t len, size_t piece, int chunked,
                         imp_http_result *out) {
    return send_request("POST", url, NULL, body, len, piece, chunked, out);
}

int imp_http_with(const char *method, const char *url, const char *const *headers, const char *body,
                  size_t len, size_t piece, imp_http_result *out) {
    return send_request(method, url, headers, body, len, piece, piece > 0, out);
}

void imp_http_result_free(imp_http_result *r) {
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

int imp_test_under_valgrind(void) { return getenv("IMP_TEST_UNDER_VALGRIND") != NULL; }
