/*
 * test_cli.c - the `impact` command-line tool as a script meets it: the
 * answer on stdout, exit 0/1/2 for success/problem/usage, --help,
 * --version, --pretty, --file, and byte-for-byte agreement with the
 * daemon's response bodies.
 *
 * DESIGN
 * Every case runs the real binary ($IMPACT_BIN, which make sets to the CLI
 * of the build under test, else build/impact) through run_cli: fork/exec
 * with stdin, stdout and stderr on pipes, all three serviced by one poll()
 * loop so that neither side can block the other, against a deadline after
 * which the child is killed. imp_test_run in daemon.c runs the daemon
 * binary and cannot feed stdin, hence a helper of our own.
 * Cases that expect exit 0 or 1 also require an empty stderr: under
 * SANITIZE a sanitizer report goes there (and AddressSanitizer exits 1,
 * which would otherwise pass for a problem). The "daemon" group starts one
 * daemon and checks that the CLI prints exactly the bytes the daemon sends
 * for the same requests, answers and problems alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* Seconds one CLI run may take: far above any request here, even under
 * the sanitizers. */
#define CLI_TIMEOUT_S 30.0
/* Most arguments of one run (program and NULL included). */
#define CLI_MAX_ARGS 16
/* Size of the whitespace-padded request: well past the CLI's first read
 * buffer (64 KiB) and a pipe's capacity, so both must grow or wait. */
#define PADDED_BYTES ((size_t)3 << 20)

/* Two circles of radius 0.5 on the x axis, centres 3 apart, closing at
 * speed 2: the surface gap of 2 closes at t = 2 / 2 = 1, at x = 1.5. All
 * inputs are small dyadic numbers, so the exact root is 1.0 itself. */
#define HEAD_ON                                                                                    \
    "{\"a\":{\"radius\":0.5,\"position\":[0,0],\"velocity\":[1,0]},"                               \
    "\"b\":{\"radius\":0.5,\"position\":[3,0],\"velocity\":[-1,0]}}"
#define HEAD_ON_TIME 1.0

#define NEGATIVE_RADIUS_SHAPE                                                                      \
    "{\"a\":{\"shape\":{\"type\":\"sphere\",\"radius\":-0.5},\"position\":[0,0]},"                 \
    "\"b\":{\"radius\":0.5,\"position\":[3,0]}}"
#define NEGATIVE_RADIUS_BARE                                                                       \
    "{\"a\":{\"radius\":-0.5,\"position\":[0,0]},\"b\":{\"radius\":0.5,\"position\":[3,0]}}"

static const char TRY_HELP[] = "Try 'impact --help'.";

/* The daemon of the "daemon" group. */
static imp_test_daemon cli_daemon;
static int teardown_failures;

/* ---- running the CLI ----------------------------------------------------------------------- */

typedef struct cli_result {
    int status; /* exit status 0..255, or -1 after a signal or the timeout */
    char *out;  /* NUL-terminated, malloc'd */
    size_t out_len;
    char *err; /* NUL-terminated, malloc'd */
} cli_result;

static const char *cli_bin(void) {
    const char *bin = getenv("IMPACT_BIN");
    return bin && *bin ? bin : "build/impact";
}

static void cli_result_free(cli_result *r) {
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

typedef struct grow_buf {
    char *p;
    size_t len, cap;
} grow_buf;

/* Reads what is available on fd into b. Returns 1 while more may come,
 * 0 at EOF, -1 on error. */
static int read_some(int fd, grow_buf *b) {
    if (b->cap - b->len < 4096) {
        size_t cap = b->cap ? b->cap * 2 : 8192;
        char *p = realloc(b->p, cap + 1);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    ssize_t n = read(fd, b->p + b->len, b->cap - b->len);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (n == 0) return 0;
    b->len += (size_t)n;
    return 1;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/*
 * Runs the CLI with `args` (NULL-terminated, may be NULL), writing `in_len`
 * bytes of `in` (NULL: nothing) to its stdin and then closing it. Fills *r
 * (free with cli_result_free) and returns its status; -1 also when the
 * child could not be started.
 */
static int run_cli(const char *const *args, const char *in, size_t in_len, cli_result *r) {
    memset(r, 0, sizeof *r);
    r->status = -1;
    const char *argv[CLI_MAX_ARGS];
    size_t argc = 0;
    argv[argc++] = cli_bin();
    for (const char *const *a = args; a && *a; ++a) {
        if (argc + 1 >= CLI_MAX_ARGS) return -1;
        argv[argc++] = *a;
    }
    argv[argc] = NULL;

    int pin[2], pout[2], perr[2];
    if (pipe(pin) != 0) return -1;
    if (pipe(pout) != 0) {
        close(pin[0]);
        close(pin[1]);
        return -1;
    }
    if (pipe(perr) != 0) {
        close(pin[0]);
        close(pin[1]);
        close(pout[0]);
        close(pout[1]);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
        if (getppid() != parent) _exit(127);
        if (dup2(pin[0], STDIN_FILENO) < 0 || dup2(pout[1], STDOUT_FILENO) < 0 ||
            dup2(perr[1], STDERR_FILENO) < 0)
            _exit(127);
        int fds[] = {pin[0], pin[1], pout[0], pout[1], perr[0], perr[1]};
        for (size_t i = 0; i < sizeof fds / sizeof fds[0]; ++i)
            close(fds[i]);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    if (pid < 0) {
        close(pin[1]);
        close(pout[0]);
        close(perr[0]);
        return -1;
    }

    int fd_in = pin[1], fd_out = pout[0], fd_err = perr[0];
    fcntl(fd_in, F_SETFL, fcntl(fd_in, F_GETFL) | O_NONBLOCK);
    size_t sent = 0;
    if (!in || in_len == 0) close_fd(&fd_in);
    grow_buf out = {0}, err = {0};
    double deadline = imp_test_now_s() + CLI_TIMEOUT_S;
    int timed_out = 0;
    while (fd_in >= 0 || fd_out >= 0 || fd_err >= 0) {
        int left_ms = (int)((deadline - imp_test_now_s()) * 1000.0);
        if (left_ms <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p[3] = {{fd_in, POLLOUT, 0}, {fd_out, POLLIN, 0}, {fd_err, POLLIN, 0}};
        int k = poll(p, 3, left_ms); /* negative fds are skipped */
        if (k < 0 && errno != EINTR) break;
        if (k <= 0) continue;
        if (fd_in >= 0 && p[0].revents) {
            ssize_t n = write(fd_in, in + sent, in_len - sent);
            if (n > 0) sent += (size_t)n;
            /* EPIPE: the CLI stopped reading (it may legitimately exit first) */
            if (sent == in_len || (n < 0 && errno != EINTR && errno != EAGAIN)) close_fd(&fd_in);
        }
        if (fd_out >= 0 && p[1].revents && read_some(fd_out, &out) <= 0) close_fd(&fd_out);
        if (fd_err >= 0 && p[2].revents && read_some(fd_err, &err) <= 0) close_fd(&fd_err);
    }
    close_fd(&fd_in);
    close_fd(&fd_out);
    close_fd(&fd_err);

    if (timed_out) kill(pid, SIGKILL);
    int st = 0, reaped = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            reaped = 1;
            break;
        }
        if (w < 0 && errno != EINTR) break;
        if (!timed_out && imp_test_now_s() > deadline) { /* closed its output but did not exit */
            timed_out = 1;
            kill(pid, SIGKILL);
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    r->out = out.p ? out.p : calloc(1, 1);
    r->out_len = out.len;
    if (out.p) out.p[out.len] = '\0';
    r->err = err.p ? err.p : calloc(1, 1);
    if (err.p) err.p[err.len] = '\0';
    assert_non_null(r->out);
    assert_non_null(r->err);
    if (timed_out)
        print_error("%s did not finish within %.0f s; killed\n", argv[0], CLI_TIMEOUT_S);
    else if (!reaped)
        print_error("waitpid %d: %s\n", (int)pid, strerror(errno));
    else if (WIFSIGNALED(st))
        print_error("%s died of signal %d\n", argv[0], WTERMSIG(st));
    else if (WIFEXITED(st))
        r->status = WEXITSTATUS(st);
    return r->status;
}

/* ---- assertions ---------------------------------------------------------------------------- */

/* Runs the CLI and asserts the exit status; for 0 and 1 also an empty
 * stderr and a stdout of one JSON document plus one newline. */
static void run_expect(const char *const *args, const char *in, size_t in_len, int status,
                       cli_result *r) {
    run_cli(args, in, in_len, r);
    if (r->status != status) {
        print_error("exit status %d, expected %d\nstdout: %s\nstderr: %s\n", r->status, status,
                    r->out, r->err);
        fail();
    }
    if (status == 0 || status == 1) {
        if (r->err[0] != '\0') {
            print_error("unexpected stderr: %s\n", r->err);
            fail();
        }
        if (r->out_len < 2 || r->out[r->out_len - 1] != '\n' || r->out[r->out_len - 2] == '\n') {
            print_error("stdout does not end in exactly one newline: \"%s\"\n", r->out);
            fail();
        }
    }
}

static json_t *parse_out(const cli_result *r) {
    json_error_t e;
    json_t *j = json_loadb(r->out, r->out_len, 0, &e);
    if (!j) {
        print_error("stdout is not JSON (%s): %s\n", e.text, r->out);
        fail();
    }
    return j;
}

static const char *str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    if (!s) {
        print_error("\"%s\" is missing or not a string\n", key);
        fail();
    }
    return s;
}

/* The problem on stdout has this status, type and pointer (NULL: none). */
static void assert_problem(const cli_result *r, long status, const char *type,
                           const char *pointer) {
    json_t *j = parse_out(r);
    const json_t *st = json_object_get(j, "status");
    if (!json_is_integer(st) || json_integer_value(st) != status) {
        print_error("problem status is not %ld: %s\n", status, r->out);
        fail();
    }
    assert_string_equal(str(j, "type"), type);
    assert_true(json_string_length(json_object_get(j, "title")) > 0);
    const json_t *ptr = json_object_get(j, "pointer");
    if (pointer)
        assert_string_equal(json_string_value(ptr), pointer);
    else
        assert_null(ptr);
    json_decref(j);
}

/* Usage error: exit 2, nothing on stdout, the reason and the hint on stderr. */
static void expect_usage_error(const char *const *args, const char *needle) {
    cli_result r;
    run_expect(args, NULL, 0, 2, &r);
    assert_int_equal(r.out_len, 0);
    if (!strstr(r.err, TRY_HELP) || (needle && !strstr(r.err, needle))) {
        print_error("stderr does not mention \"%s\" and \"%s\":\n%s\n", needle ? needle : "",
                    TRY_HELP, r.err);
        fail();
    }
    cli_result_free(&r);
}

/* ---- answers and problems ------------------------------------------------------------------ */

static void test_head_on_hit(void **state) {
    (void)state;
    static const char *const args[] = {"toi", NULL};
    cli_result r;
    run_expect(args, HEAD_ON, strlen(HEAD_ON), 0, &r);
    json_t *j = parse_out(&r);
    assert_string_equal(str(j, "status"), "hit");
    assert_true(json_is_true(json_object_get(j, "hit")));
    const json_t *t = json_object_get(j, "time");
    assert_true(json_is_number(t));
    if (json_number_value(t) != HEAD_ON_TIME) {
        print_error("time = %.17g, expected exactly %.17g\n", json_number_value(t), HEAD_ON_TIME);
        fail();
    }
    json_decref(j);
    cli_result_free(&r);
}

static void test_malformed_json(void **state) {
    (void)state;
    static const char *const args[] = {"toi", NULL};
    static const char bad[] = "{\"a\": {\"radius\": 0.5,";
    cli_result r;
    run_expect(args, bad, strlen(bad), 1, &r);
    assert_problem(&r, 400, "malformed-json", NULL);
    cli_result_free(&r);
}

static void test_empty_stdin(void **state) {
    (void)state;
    static const char *const args[] = {"toi", NULL};
    cli_result r;
    run_expect(args, NULL, 0, 1, &r);
    assert_problem(&r, 400, "malformed-json", NULL);
    cli_result_free(&r);
}

/* The pointer names the field as the client wrote it: inside "shape" for
 * a full shape, on the body for the bare-radius shorthand. */
static void test_negative_radius(void **state) {
    (void)state;
    static const char *const args[] = {"toi", NULL};
    cli_result r;
    run_expect(args, NEGATIVE_RADIUS_SHAPE, strlen(NEGATIVE_RADIUS_SHAPE), 1, &r);
    assert_problem(&r, 422, "invalid-field", "/a/shape/radius");
    cli_result_free(&r);
    run_expect(args, NEGATIVE_RADIUS_BARE, strlen(NEGATIVE_RADIUS_BARE), 1, &r);
    assert_problem(&r, 422, "invalid-field", "/a/radius");
    cli_result_free(&r);
}

/* A request far larger than one read or one pipe buffer arrives whole. */
static void test_large_padded_request(void **state) {
    (void)state;
    static const char *const args[] = {"toi", NULL};
    size_t n = strlen(HEAD_ON);
    char *big = malloc(PADDED_BYTES);
    assert_non_null(big);
    memset(big, ' ', PADDED_BYTES);
    memcpy(big + PADDED_BYTES - n, HEAD_ON, n);
    cli_result r, small;
    run_expect(args, big, PADDED_BYTES, 0, &r);
    run_expect(args, HEAD_ON, n, 0, &small);
    assert_string_equal(r.out, small.out);
    free(big);
    cli_result_free(&r);
    cli_result_free(&small);
}

static void test_pretty_same_document(void **state) {
    (void)state;
    static const char *const compact_args[] = {"toi", NULL};
    static const char *const pretty_args[] = {"toi", "--pretty", NULL};
    static const char *const inputs[] = {HEAD_ON, NEGATIVE_RADIUS_SHAPE};
    static const int statuses[] = {0, 1};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
        cli_result c, p;
        run_expect(compact_args, inputs[i], strlen(inputs[i]), statuses[i], &c);
        run_expect(pretty_args, inputs[i], strlen(inputs[i]), statuses[i], &p);
        assert_ptr_equal(strchr(c.out, '\n'), c.out + c.out_len - 1); /* one line */
        assert_non_null(strstr(p.out, "{\n  \""));                    /* indented by two */
        json_t *jc = parse_out(&c), *jp = parse_out(&p);
        if (!json_equal(jc, jp)) {
            print_error("--pretty changed the document:\n%s\nvs\n%s\n", c.out, p.out);
            fail();
        }
        json_decref(jc);
        json_decref(jp);
        cli_result_free(&c);
        cli_result_free(&p);
    }
}

static void test_file(void **state) {
    (void)state;
    char path[] = "/tmp/impact-test-cli-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(HEAD_ON);
    assert_int_equal(write(fd, HEAD_ON, n), (ssize_t)n);
    close(fd);

    const char *const args[] = {"toi", "--file", path, NULL};
    char eq[sizeof path + 16];
    snprintf(eq, sizeof eq, "--file=%s", path);
    const char *const args_eq[] = {eq, "toi", NULL};
    static const char *const args_stdin[] = {"toi", NULL};
    cli_result f, f2, s;
    /* stdin carries garbage: --file must win */
    run_expect(args, "{", 1, 0, &f);
    run_expect(args_eq, NULL, 0, 0, &f2);
    run_expect(args_stdin, HEAD_ON, n, 0, &s);
    unlink(path);
    assert_string_equal(f.out, s.out);
    assert_string_equal(f2.out, s.out);
    cli_result_free(&f);
    cli_result_free(&f2);
    cli_result_free(&s);

    static const char *const missing[] = {"toi", "--file", "/nonexistent/impact-request.json",
                                          NULL};
    expect_usage_error(missing, "/nonexistent/impact-request.json");
    static const char *const no_path[] = {"toi", "--file", NULL};
    expect_usage_error(no_path, "--file");
}

/* ---- usage --------------------------------------------------------------------------------- */

static void test_unknown_op(void **state) {
    (void)state;
    static const char *const args[] = {"frobnicate", NULL};
    expect_usage_error(args, "frobnicate");
}

static void test_no_op(void **state) {
    (void)state;
    expect_usage_error(NULL, "operation");
    static const char *const only_flag[] = {"--pretty", NULL};
    expect_usage_error(only_flag, "operation");
}

static void test_unknown_flag(void **state) {
    (void)state;
    static const char *const args[] = {"toi", "--frobnicate", NULL};
    expect_usage_error(args, "--frobnicate");
    static const char *const two_ops[] = {"toi", "toi", NULL};
    expect_usage_error(two_ops, NULL);
}

static void test_help(void **state) {
    (void)state;
    static const char *const long_form[] = {"--help", NULL};
    static const char *const short_form[] = {"-h", NULL};
    static const char *const ops[] = {
        "toi",      "paths/intersect", "overlap",  "respond", "scenes/predict", "scenes/simulate",
        "validate", "batch",           "--pretty", "--file"};
    const char *const *forms[] = {long_form, short_form};
    for (size_t f = 0; f < 2; ++f) {
        cli_result r;
        run_expect(forms[f], NULL, 0, 0, &r);
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
            if (!strstr(r.out, ops[i])) {
                print_error("%s does not mention %s:\n%s\n", forms[f][0], ops[i], r.out);
                fail();
            }
        }
        cli_result_free(&r);
    }
}

static void test_version(void **state) {
    (void)state;
    static const char *const args[] = {"--version", NULL};
    cli_result r;
    run_expect(args, NULL, 0, 0, &r);
    assert_string_equal(r.out, "impact 1.0.0\n");
    cli_result_free(&r);
}

/* ---- against the daemon -------------------------------------------------------------------- */

static int start_daemon(void **state) {
    (void)state;
    return imp_test_daemon_start(&cli_daemon, NULL, NULL, 0);
}

static int stop_daemon(void **state) {
    (void)state;
    int status = imp_test_daemon_stop(&cli_daemon, SIGTERM);
    if (status != 0) {
        fprintf(stderr, "daemon exited with %d after SIGTERM\n", status);
        ++teardown_failures;
    }
    return status == 0 ? 0 : -1;
}

/* Same request, same bytes: the CLI's stdout is the daemon's body and a
 * newline, and its exit status is the class of the daemon's status. */
static void test_same_bytes_as_daemon(void **state) {
    (void)state;
    static const struct {
        const char *body;
        long http_status;
    } cases[] = {
        {HEAD_ON, 200},
        {NEGATIVE_RADIUS_SHAPE, 422},
        {NEGATIVE_RADIUS_BARE, 422},
        {"{\"a\": [", 400},
        {"", 400},
    };
    static const char *const args[] = {"toi", NULL};
    char url[128];
    snprintf(url, sizeof url, "%s/v1/toi", cli_daemon.url);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *body = cases[i].body;
        imp_http_result h;
        assert_int_equal(imp_http(NULL, "POST", url, "application/json", body, strlen(body), &h),
                         0);
        if (h.status != cases[i].http_status) {
            print_error("case %zu: daemon answered %ld, expected %ld: %s\n", i, h.status,
                        cases[i].http_status, h.body);
            fail();
        }
        cli_result r;
        run_expect(args, body, strlen(body), h.status == 200 ? 0 : 1, &r);
        if (r.out_len != h.len + 1 || memcmp(r.out, h.body, h.len) != 0) {
            print_error("case %zu: CLI and daemon differ\ncli:    %s\ndaemon: %s\n", i, r.out,
                        h.body);
            fail();
        }
        imp_http_result_free(&h);
        cli_result_free(&r);
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN); /* a CLI that exits before reading all stdin is an EPIPE */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
    const struct CMUnitTest cli_tests[] = {
        cmocka_unit_test(test_head_on_hit),
        cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_empty_stdin),
        cmocka_unit_test(test_negative_radius),
        cmocka_unit_test(test_large_padded_request),
        cmocka_unit_test(test_pretty_same_document),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_no_op),
        cmocka_unit_test(test_unknown_flag),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
    };
    const struct CMUnitTest daemon_tests[] = {
        cmocka_unit_test(test_same_bytes_as_daemon),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("cli", cli_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("daemon", daemon_tests, start_daemon, stop_daemon);
    curl_global_cleanup();
    return failed == 0 && teardown_failures == 0 ? 0 : 1;
}
