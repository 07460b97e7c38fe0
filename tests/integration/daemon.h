/*
 * daemon.h - integration-test helpers: run build/impactd as a child
 * process on a free port, and talk HTTP to it with libcurl.
 *
 * The daemon binary is $IMPACTD_BIN (make sets it to the absolute path of
 * the daemon of the build under test), else build/impactd.
 * All traffic goes to 127.0.0.1.
 */
#ifndef IMP_TEST_DAEMON_H
#define IMP_TEST_DAEMON_H

#include <stddef.h>
#include <sys/types.h>

/* Seconds to wait for the "listening" line, and for exit after a signal. */
#define IMP_TEST_START_TIMEOUT_S 20
#define IMP_TEST_STOP_TIMEOUT_S 20

typedef struct imp_test_daemon {
    pid_t pid;
    int out_fd; /* read end of the daemon's stdout (kept open while it runs) */
    int err_fd; /* read end of its stderr when captured, else -1 */
    unsigned port;
    char url[64]; /* "http://127.0.0.1:<port>" */
} imp_test_daemon;

/* The daemon binary under test. */
const char *imp_test_daemon_bin(void);

/*
 * Starts the daemon with --port 0 --bind 127.0.0.1 --log off --drain-grace-s 0,
 * then `args`
 * (NULL-terminated, may be NULL; a later flag overrides an earlier one),
 * with the environment variables in `env` ("NAME=value", NULL-terminated,
 * may be NULL) added. With capture_stderr the daemon's stderr goes to a pipe
 * (read it with imp_test_daemon_read_stderr after stopping), else it is the
 * test's own. Waits for the listening line and reads the port from it.
 * Returns 0, or -1 with a message on stderr (the child is reaped).
 */
int imp_test_daemon_start(imp_test_daemon *d, const char *const *args, const char *const *env,
                          int capture_stderr);

/* Sends `sig` and waits for the exit. Returns the exit status (0..255), or
 * -1 when the daemon died of a signal or had to be killed after the
 * timeout. Closes the pipes except a captured stderr. */
int imp_test_daemon_stop(imp_test_daemon *d, int sig);

/* After stop: everything the daemon wrote to a captured stderr, as a
 * malloc'd NUL-terminated string (caller frees); closes the pipe. */
char *imp_test_daemon_read_stderr(imp_test_daemon *d);

/*
 * Runs the daemon binary to completion with `args` and `env` as above (but
 * without the default flags), capturing stdout and stderr into malloc'd
 * strings (caller frees; either pointer may be NULL to discard). Returns
 * the exit status, or -1 on a signal or timeout.
 */
int imp_test_run(const char *const *args, const char *const *env, char **out, char **err);

/* One HTTP exchange. */
typedef struct imp_http_result {
    long status; /* 0 when the transfer failed */
    char *body;  /* NUL-terminated, malloc'd; free with imp_http_result_free */
    size_t len;
    char content_type[128]; /* header values, "" when absent */
    char allow[128];
    char connection[64];
    char content_encoding[64];
    char vary[64];
    char accept_encoding[64];
    char content_length[32];
    char location[160];
    char retry_after[32];
    char www_authenticate[96];
    long new_connections; /* connections curl opened for this request (0: reused) */
} imp_http_result;

/*
 * Sends `method` `url` with `body` (len bytes; NULL for none). content_type
 * NULL sends no Content-Type header at all. Reuses `curl` (a CURL *, for
 * keep-alive tests) when not NULL, else uses a fresh handle. Returns 0 when
 * an HTTP response arrived.
 */
int imp_http(void *curl, const char *method, const char *url, const char *content_type,
             const char *body, size_t len, imp_http_result *out);

/* POST with a curl read callback that hands over `piece` bytes per call;
 * chunked transfer when `chunked`, else a declared Content-Length. */
int imp_http_post_pieces(const char *url, const char *body, size_t len, size_t piece, int chunked,
                         imp_http_result *out);

/* `method` `url` with extra header lines (NULL-terminated, may be NULL) and, for a POST,
 * Content-Type: application/json and `body`: whole with a Content-Length when piece is 0,
 * else chunked in `piece`-byte pieces. libcurl decodes no content coding: the reply body is
 * as it came. Returns 0 when an HTTP response arrived. */
int imp_http_with(const char *method, const char *url, const char *const *headers, const char *body,
                  size_t len, size_t piece, imp_http_result *out);

void imp_http_result_free(imp_http_result *r);

/* 1 when make check-valgrind runs the suite (IMP_TEST_UNDER_VALGRIND set): the
 * daemon is 20-50 times slower, so tests whose verdict depends on timing (queues
 * filling within a window, replicas killed at set moments) skip themselves there;
 * they run in make test, plain and under ASan. */
int imp_test_under_valgrind(void);

/* Monotonic clock in seconds, and a sleep that resumes after signals. */
double imp_test_now_s(void);
void imp_test_sleep_ms(long ms);

/* Appends n bytes to a growable NUL-terminated buffer (*buf may start
 * NULL with *len and *cap 0). Returns 0, or -1 when memory ran out (the
 * buffer is then unchanged). */
int imp_test_buf_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n);

/* A growable NUL-terminated text (start it zeroed; free p). */
typedef struct imp_test_text {
    char *p;
    size_t len, cap;
} imp_test_text;

/* Appends printf output (at most 255 bytes a call) to t; aborts the test program when
 * memory runs out or the output is cut. */
void imp_test_printf(imp_test_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* When the header line "Name: value\r\n" (n bytes, as libcurl hands it
 * over) has the name `name` (any case), copies its trimmed value into dst
 * (cap bytes, truncated, NUL-terminated); otherwise leaves dst alone. */
void imp_test_header_value(const char *line, size_t n, const char *name, char *dst, size_t cap);

#endif
