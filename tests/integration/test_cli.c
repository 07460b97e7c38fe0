/*
 * test_cli.c - the `impact` command-line tool as a script meets it: the
 * answer on stdout, exit 0/1/2 for success/problem/usage, --help,
 * --version, --pretty, --file, byte-for-byte agreement with the daemon's
 * response bodies, and `impact world import|upload`.
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
 * The "world" group writes small model files (OBJ, glTF with a data: URI
 * buffer, GLB, ASCII FBX) into a temporary directory and compares the
 * imported World text exactly: ids, vertices after the node transforms,
 * index triples, number format. The uploads run against the "daemon"
 * group's daemon: the id is checked against sha256sum of the bytes, and
 * the daemon's /metrics counters show a second upload is a HEAD and no POST.
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
#include "tests/sha256sum.h"

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

/* ---- world import -------------------------------------------------------------------------- */

/* The model files below are written by the test into world_dir, a fresh temporary directory. */
static char world_dir[] = "/tmp/impact-test-world-XXXXXX";

/* world_dir/name, in a static buffer (one at a time). */
static const char *world_path(const char *name) {
    static char path[sizeof world_dir + 64];
    snprintf(path, sizeof path, "%s/%s", world_dir, name);
    return path;
}

/* Writes n bytes to world_dir/name and returns its path (world_path's buffer). */
static const char *write_model(const char *name, const void *bytes, size_t n) {
    const char *path = world_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

static const char *write_text(const char *name, const char *text) {
    return write_model(name, text, strlen(text));
}

/* Two named objects: a quad Assimp cuts into two triangles (its vertices in the order the
 * face lists them), and a triangle with a line, which the import drops. */
static const char TWO_OBJECTS_OBJ[] = "o Floor\n"
                                      "v 0 0 0\nv 10 0 0\nv 10 0 10\nv 0 0 10\n"
                                      "f 1 4 3 2\n"
                                      "o Ramp\n"
                                      "v 0 1 0\nv 1 1 0\nv 0 2 1\n"
                                      "f 5 6 7\n"
                                      "l 5 7\n";
static const char TWO_OBJECTS_WORLD[] =
    "{\"colliders\":["
    "{\"id\":\"Floor\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,0.0,0.0],[0.0,0.0,10.0],[10.0,0.0,10.0],[10.0,0.0,0.0]],"
    "\"triangles\":[[0,1,2],[0,2,3]]},\"position\":[0.0,0.0,0.0]},"
    "{\"id\":\"Ramp\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,1.0,0.0],[1.0,1.0,0.0],[0.0,2.0,1.0]],"
    "\"triangles\":[[0,1,2]]},\"position\":[0.0,0.0,0.0]}]}\n";
/* The same with --one-sided --scale 0.5. */
static const char TWO_OBJECTS_HALF_ONE_SIDED[] =
    "{\"colliders\":["
    "{\"id\":\"Floor\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,0.0,0.0],[0.0,0.0,5.0],[5.0,0.0,5.0],[5.0,0.0,0.0]],"
    "\"triangles\":[[0,1,2],[0,2,3]],\"one_sided\":true},\"position\":[0.0,0.0,0.0]},"
    "{\"id\":\"Ramp\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,0.5,0.0],[0.5,0.5,0.0],[0.0,1.0,0.5]],"
    "\"triangles\":[[0,1,2]],\"one_sided\":true},\"position\":[0.0,0.0,0.0]}]}\n";

/* The glTF buffer: a unit quad in the y = 0 plane (float32 positions, little-endian like
 * this machine), then its two triangles as uint16 indices, counter-clockwise seen from +y. */
typedef struct quad_buffer {
    float pos[4][3];
    uint16_t idx[6];
} quad_buffer;
static const quad_buffer QUAD = {{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}}, {0, 2, 1, 0, 3, 2}};
#define QUAD_BYTES (sizeof QUAD.pos + sizeof QUAD.idx) /* 60 */

static const char GLTF_VIEWS[] =
    "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":48},"
    "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":12}],"
    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\","
    "\"min\":[0,0,0],\"max\":[1,0,1]},"
    "{\"bufferView\":1,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"}]";

/* Mesh "Quad" under three nodes: Child (scale 2) inside Parent (translation 1, 2, 3), so
 * (1, 0, 1) lands on (3, 2, 5); Again with no transform (the id "Quad" made unique); Mirror
 * (scale -1 on x), whose triangles are swapped to stay counter-clockwise. */
static const char GLTF_NODES[] =
    "\"scene\":0,\"scenes\":[{\"nodes\":[0,2,3]}],"
    "\"nodes\":[{\"name\":\"Parent\",\"translation\":[1,2,3],\"children\":[1]},"
    "{\"name\":\"Child\",\"scale\":[2,2,2],\"mesh\":0},{\"name\":\"Again\",\"mesh\":0},"
    "{\"name\":\"Mirror\",\"scale\":[-1,1,1],\"mesh\":0}],"
    "\"meshes\":[{\"name\":\"Quad\",\"primitives\":[{\"attributes\":{\"POSITION\":0},"
    "\"indices\":1}]}]";
static const char GLTF_WORLD[] =
    "{\"colliders\":["
    "{\"id\":\"Quad\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[1.0,2.0,3.0],[3.0,2.0,3.0],[3.0,2.0,5.0],[1.0,2.0,5.0]],"
    "\"triangles\":[[0,2,1],[0,3,2]]},\"position\":[0.0,0.0,0.0]},"
    "{\"id\":\"Quad-2\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,0.0,0.0],[1.0,0.0,0.0],[1.0,0.0,1.0],[0.0,0.0,1.0]],"
    "\"triangles\":[[0,2,1],[0,3,2]]},\"position\":[0.0,0.0,0.0]},"
    "{\"id\":\"Quad-3\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,0.0,0.0],[-1.0,0.0,0.0],[-1.0,0.0,1.0],[0.0,0.0,1.0]],"
    "\"triangles\":[[0,1,2],[0,2,3]]},\"position\":[0.0,0.0,0.0]}]}\n";

/* The same quad in a .glb: one node translated by (0.5, 0, -4), a mesh without a name
 * (Assimp names it "meshes[0]"). */
static const char GLB_NODES[] =
    "\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
    "\"nodes\":[{\"name\":\"Node\",\"translation\":[0.5,0,-4],\"mesh\":0}],"
    "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}]";
static const char GLB_WORLD[] =
    "{\"colliders\":[{\"id\":\"meshes[0]\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.5,0.0,-4.0],[1.5,0.0,-4.0],[1.5,0.0,-3.0],[0.5,0.0,-3.0]],"
    "\"triangles\":[[0,2,1],[0,3,2]]},\"position\":[0.0,0.0,0.0]}]}\n";

/* A minimal ASCII FBX 7.4: geometry "Box" (a quad; the last index of a polygon is stored
 * as -(i + 1)) under model "Crate" translated by (0, 5, 0). */
static const char FBX_ASCII[] = "; FBX 7.4.0 project file\n"
                                "FBXHeaderExtension:  {\n"
                                "\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n}\n"
                                "GlobalSettings:  {\n\tVersion: 1000\n\tProperties70:  {\n"
                                "\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",1\n"
                                "\t}\n}\n"
                                "Objects:  {\n"
                                "\tGeometry: 1000, \"Geometry::Box\", \"Mesh\" {\n"
                                "\t\tVertices: *12 {\n\t\t\ta: 0,0,0,1,0,0,1,0,1,0,0,1\n\t\t}\n"
                                "\t\tPolygonVertexIndex: *4 {\n\t\t\ta: 0,3,2,-2\n\t\t}\n"
                                "\t\tGeometryVersion: 124\n\t}\n"
                                "\tModel: 2000, \"Model::Crate\", \"Mesh\" {\n"
                                "\t\tVersion: 232\n\t\tProperties70:  {\n"
                                "\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\","
                                "0,5,0\n"
                                "\t\t}\n\t}\n}\n"
                                "Connections:  {\n"
                                "\tC: \"OO\",1000,2000\n\tC: \"OO\",2000,0\n}\n";
static const char FBX_WORLD[] =
    "{\"colliders\":[{\"id\":\"Box\",\"shape\":{\"type\":\"mesh\","
    "\"vertices\":[[0.0,5.0,0.0],[0.0,5.0,1.0],[1.0,5.0,1.0],[1.0,5.0,0.0]],"
    "\"triangles\":[[0,1,2],[0,2,3]]},\"position\":[0.0,0.0,0.0]}]}\n";

/* Standard base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes). */
static void base64(const unsigned char *p, size_t n, char *out) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned long v = (unsigned long)p[i] << 16;
        if (i + 1 < n) v |= (unsigned long)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        *out++ = A[v >> 18 & 63];
        *out++ = A[v >> 12 & 63];
        *out++ = i + 1 < n ? A[v >> 6 & 63] : '=';
        *out++ = i + 2 < n ? A[v & 63] : '=';
    }
    *out = '\0';
}

static void quad_bytes(unsigned char out[QUAD_BYTES]) {
    memcpy(out, QUAD.pos, sizeof QUAD.pos);
    memcpy(out + sizeof QUAD.pos, QUAD.idx, sizeof QUAD.idx);
}

/* Appends s to t (imp_test_printf takes at most 255 bytes a call). */
static void text_add(imp_test_text *t, const char *s) {
    assert_int_equal(imp_test_buf_append(&t->p, &t->len, &t->cap, s, strlen(s)), 0);
}

/* level.gltf: the buffer inline as a base64 data: URI. */
static const char *write_gltf(void) {
    unsigned char buf[QUAD_BYTES];
    char b64[4 * ((QUAD_BYTES + 2) / 3) + 1];
    quad_bytes(buf);
    base64(buf, sizeof buf, b64);
    imp_test_text t = {0};
    text_add(&t, "{\"asset\":{\"version\":\"2.0\"},");
    text_add(&t, GLTF_NODES);
    imp_test_printf(&t, ",\"buffers\":[{\"byteLength\":%zu,", sizeof buf);
    imp_test_printf(&t, "\"uri\":\"data:application/octet-stream;base64,%s\"}],", b64);
    text_add(&t, GLTF_VIEWS);
    text_add(&t, "}");
    const char *path = write_model("level.gltf", t.p, t.len);
    free(t.p);
    return path;
}

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; ++i)
        p[i] = (unsigned char)(v >> 8 * i);
}

/* level.glb: the 12-byte header, a JSON chunk (padded with spaces to 4 bytes) and a BIN
 * chunk (padded with zeros), each behind its length and type. */
static const char *write_glb(void) {
    imp_test_text json = {0};
    text_add(&json, "{\"asset\":{\"version\":\"2.0\"},");
    text_add(&json, GLB_NODES);
    imp_test_printf(&json, ",\"buffers\":[{\"byteLength\":%zu}],", QUAD_BYTES);
    text_add(&json, GLTF_VIEWS);
    text_add(&json, "}");
    while (json.len % 4)
        imp_test_printf(&json, " ");
    size_t bin = (QUAD_BYTES + 3) / 4 * 4, total = 12 + 8 + json.len + 8 + bin;
    unsigned char *glb = calloc(1, total), *p = glb;
    assert_non_null(glb);
    memcpy(p, "glTF", 4);
    put_u32(p + 4, 2);
    put_u32(p + 8, (uint32_t)total);
    put_u32(p + 12, (uint32_t)json.len);
    memcpy(p + 16, "JSON", 4);
    memcpy(p + 20, json.p, json.len);
    p += 20 + json.len;
    put_u32(p, (uint32_t)bin);
    memcpy(p + 4, "BIN", 4); /* and a NUL */
    quad_bytes(p + 8);
    const char *path = write_model("level.glb", glb, total);
    free(glb);
    free(json.p);
    return path;
}

/* `impact world import PATH [extra]` prints exactly `want`, exits 0, says nothing on stderr. */
static void expect_import(const char *path, const char *const *extra, const char *want) {
    const char *args[CLI_MAX_ARGS] = {"world", "import", path};
    size_t n = 3;
    for (const char *const *a = extra; a && *a; ++a)
        args[n++] = *a;
    args[n] = NULL;
    cli_result r;
    run_expect(args, NULL, 0, 0, &r);
    if (strcmp(r.out, want) != 0) {
        print_error("%s: imported\n%s\nexpected\n%s\n", path, r.out, want);
        fail();
    }
    cli_result_free(&r);
}

/* Exit `status` (1: a bad model), nothing on stdout, stderr naming the file and `needle`. */
static void expect_model_error(const char *const *args, int status, const char *needle) {
    cli_result r;
    run_cli(args, NULL, 0, &r);
    if (r.status != status || r.out_len != 0 || !strstr(r.err, needle)) {
        print_error("exit %d (expected %d)\nstdout: %s\nstderr (expected \"%s\"): %s\n", r.status,
                    status, r.out, needle, r.err);
        fail();
    }
    cli_result_free(&r);
}

static int make_world_dir(void **state) {
    (void)state;
    return mkdtemp(world_dir) ? 0 : -1;
}

static int remove_world_dir(void **state) {
    (void)state;
    char cmd[sizeof world_dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", world_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_world_import_obj(void **state) {
    (void)state;
    const char *path = write_text("two.obj", TWO_OBJECTS_OBJ);
    expect_import(path, NULL, TWO_OBJECTS_WORLD);
    static const char *const half[] = {"--one-sided", "--scale", "0.5", NULL};
    expect_import(world_path("two.obj"), half, TWO_OBJECTS_HALF_ONE_SIDED);

    /* --out writes the same bytes; the daemon's decoder takes them (via `impact worlds`) */
    char out[sizeof world_dir + 64];
    snprintf(out, sizeof out, "%s", world_path("two.json"));
    const char *const to_file[] = {"world", "import", world_path("two.obj"), "--out", out, NULL};
    cli_result r;
    run_cli(to_file, NULL, 0, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_len, 0);
    assert_string_equal(r.err, "");
    cli_result_free(&r);
    const char *const from_file[] = {"worlds", "--file", out, NULL};
    run_expect(from_file, NULL, 0, 0, &r);
    json_t *j = parse_out(&r);
    assert_int_equal(json_integer_value(json_object_get(j, "colliders")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "triangles")), 3);
    assert_int_equal(json_integer_value(json_object_get(j, "degenerate_triangles")), 0);
    json_decref(j);
    cli_result_free(&r);

    /* --pretty: the same document, indented */
    const char *const pretty[] = {"world", "import", world_path("two.obj"), "--pretty", NULL};
    run_expect(pretty, NULL, 0, 0, &r);
    assert_non_null(strstr(r.out, "{\n  \"colliders\": ["));
    json_t *jp = parse_out(&r);
    json_t *jc = json_loads(TWO_OBJECTS_WORLD, 0, NULL);
    assert_true(json_equal(jp, jc));
    json_decref(jp);
    json_decref(jc);
    cli_result_free(&r);
}

/* A name that is not UTF-8 cannot be a JSON string: the id falls back to mesh-N. */
static void test_world_import_bad_name(void **state) {
    (void)state;
    static const char obj[] = "o Fl\xffoor\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    static const char want[] = "{\"colliders\":[{\"id\":\"mesh-0\",\"shape\":{\"type\":\"mesh\","
                               "\"vertices\":[[0.0,0.0,0.0],[1.0,0.0,0.0],[0.0,1.0,0.0]],"
                               "\"triangles\":[[0,1,2]]},\"position\":[0.0,0.0,0.0]}]}\n";
    expect_import(write_text("latin1.obj", obj), NULL, want);
}

static void test_world_import_gltf_glb_fbx(void **state) {
    (void)state;
    expect_import(write_gltf(), NULL, GLTF_WORLD);
    expect_import(write_glb(), NULL, GLB_WORLD);
    expect_import(write_text("level.fbx", FBX_ASCII), NULL, FBX_WORLD);
}

static void test_world_import_errors(void **state) {
    (void)state;
    static const char garbage[] = "this is not\na model\n";
    const char *const bad[] = {"world", "import", write_text("bad.obj", garbage), NULL};
    expect_model_error(bad, 1, "bad.obj: not a model file Assimp can read");
    static const char lines[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nl 2 3\n";
    const char *const no_tris[] = {"world", "import", write_text("lines.obj", lines), NULL};
    expect_model_error(no_tris, 1, "lines.obj: no triangles");
    const char *const unknown[] = {"world", "import", write_text("level.xyz", "hello"), NULL};
    expect_model_error(unknown, 1, "level.xyz: not a model file Assimp can read");

    static const char *const missing[] = {"world", "import", "/nonexistent/level.obj", NULL};
    expect_usage_error(missing, "/nonexistent/level.obj");
    static const char *const no_sub[] = {"world", NULL};
    expect_usage_error(no_sub, "import");
    static const char *const bad_sub[] = {"world", "export", "x.obj", NULL};
    expect_usage_error(bad_sub, "export");
    static const char *const no_file[] = {"world", "import", NULL};
    expect_usage_error(no_file, "FILE");
    static const char *const bad_flag[] = {"world", "import", "x.obj", "--url", "http://x", NULL};
    expect_usage_error(bad_flag, "--url");
    static const char *const bad_scale[] = {"world", "import", "x.obj", "--scale", "0", NULL};
    expect_usage_error(bad_scale, "--scale");
    static const char *const no_url[] = {"world", "upload", "x.json", NULL};
    expect_usage_error(no_url, "--url");

    static const char *const help[] = {"world", "--help", NULL};
    cli_result r;
    run_cli(help, NULL, 0, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "world upload FILE --url URL"));
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

/* ---- world upload -------------------------------------------------------------------------- */

/* The value of the counter line `series` ("name{labels}") in /metrics; 0 when absent. */
static double metric(const char *series) {
    char url[128];
    snprintf(url, sizeof url, "%s/metrics", cli_daemon.url);
    imp_http_result h;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &h), 0);
    assert_int_equal(h.status, 200);
    double v = 0;
    size_t n = strlen(series);
    for (const char *p = h.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ') v = strtod(p + n + 1, NULL);
    imp_http_result_free(&h);
    return v;
}

#define POSTS_201 "impactd_http_requests_total{route=\"/v1/worlds\",code=\"201\"}"
#define POSTS_200 "impactd_http_requests_total{route=\"/v1/worlds\",code=\"200\"}"
#define HEADS_200 "impactd_http_requests_total{route=\"/v1/worlds/{id}\",code=\"200\"}"

/* Uploads `file` and returns the id it printed (malloc'd) after checking stdout is one
 * document whose "status", when `already` is set, says the upload was skipped. */
static char *upload(const char *file, int already) {
    const char *const args[] = {"world", "upload", file, "--url", cli_daemon.url, NULL};
    cli_result r;
    run_expect(args, NULL, 0, 0, &r);
    json_t *j = parse_out(&r);
    const json_t *st = json_object_get(j, "status");
    if (already ? !json_is_string(st) || strcmp(json_string_value(st), "already-stored") != 0
                : st != NULL || json_integer_value(json_object_get(j, "colliders")) < 1) {
        print_error("%s: unexpected reply %s\n", file, r.out);
        fail();
    }
    char *id = strdup(str(j, "id"));
    assert_non_null(id);
    json_decref(j);
    cli_result_free(&r);
    return id;
}

/* A World file is sent as it is: the id is its sha256sum. The first upload is a POST answered
 * 201, the second only a HEAD answered 200. */
static void test_world_upload(void **state) {
    (void)state;
    const char *path = write_text("w.json", TWO_OBJECTS_WORLD);
    char want[65];
    assert_int_equal(imp_test_sha256sum(TWO_OBJECTS_WORLD, strlen(TWO_OBJECTS_WORLD), want), 0);
    double posts = metric(POSTS_201), heads = metric(HEADS_200);
    char *first = upload(path, 0);
    assert_string_equal(first, want);
    assert_true(metric(POSTS_201) == posts + 1);
    char *second = upload(world_path("w.json"), 1);
    assert_string_equal(second, want);
    assert_true(metric(POSTS_201) == posts + 1);
    assert_true(metric(POSTS_200) == 0);
    assert_true(metric(HEADS_200) == heads + 1);
    free(first);
    free(second);

    /* a model file is imported first: the same id as uploading what `world import` prints */
    path = write_text("up.obj", TWO_OBJECTS_OBJ);
    const char *const args[] = {"world",   "upload", path,          "--url", cli_daemon.url,
                                "--scale", "0.5",    "--one-sided", NULL};
    cli_result r;
    run_expect(args, NULL, 0, 0, &r);
    json_t *j = parse_out(&r);
    size_t n = strlen(TWO_OBJECTS_HALF_ONE_SIDED);
    assert_int_equal(imp_test_sha256sum(TWO_OBJECTS_HALF_ONE_SIDED, n, want), 0);
    assert_string_equal(str(j, "id"), want);
    assert_int_equal(json_integer_value(json_object_get(j, "triangles")), 3);
    json_decref(j);
    cli_result_free(&r);
}

static void test_world_upload_errors(void **state) {
    (void)state;
    /* a World the server refuses: its problem on stdout, exit 1 */
    static const char empty[] = "{\"colliders\":[]}";
    const char *path = write_text("empty.json", empty);
    const char *const refused[] = {"world", "upload", path, "--url", cli_daemon.url, NULL};
    cli_result r;
    run_expect(refused, NULL, 0, 1, &r);
    assert_problem(&r, 422, "invalid-geometry", "/colliders");
    cli_result_free(&r);

    /* a bad model file: exit 1 before any request */
    double heads = metric("impactd_http_requests_total{route=\"/v1/worlds/{id}\",code=\"404\"}");
    path = write_text("bad.glb", "glTF junk");
    const char *const bad[] = {"world", "upload", path, "--url", cli_daemon.url, NULL};
    expect_model_error(bad, 1, "bad.glb");
    assert_true(metric("impactd_http_requests_total{route=\"/v1/worlds/{id}\",code=\"404\"}") ==
                heads);

    /* nobody listening: exit 3 and why on stderr */
    path = write_text("w2.json", TWO_OBJECTS_WORLD);
    const char *const nobody[] = {"world", "upload", path, "--url", "http://127.0.0.1:1", NULL};
    expect_model_error(nobody, 3, "HEAD http://127.0.0.1:1/v1/worlds/");

    /* the token goes in a header only: never in the output */
    static const char token[] = "s3cret-token-7f1c\n";
    const char *token_path = write_text("token", token);
    char tp[sizeof world_dir + 64];
    snprintf(tp, sizeof tp, "%s", token_path);
    path = write_text("w3.json", empty);
    const char *const with_token[] = {"world",        "upload",       path, "--url",
                                      cli_daemon.url, "--token-file", tp,   NULL};
    run_expect(with_token, NULL, 0, 1, &r);
    assert_null(strstr(r.out, "s3cret"));
    assert_null(strstr(r.err, "s3cret"));
    cli_result_free(&r);

    static const char *const no_url[] = {"world", "upload", "w.json", NULL};
    expect_usage_error(no_url, "--url");
    const char *const json_scaled[] = {
        "world", "upload", world_path("w.json"), "--url", cli_daemon.url, "--scale", "2", NULL};
    expect_usage_error(json_scaled, "--scale");
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
    const struct CMUnitTest world_tests[] = {
        cmocka_unit_test(test_world_import_obj),
        cmocka_unit_test(test_world_import_gltf_glb_fbx),
        cmocka_unit_test(test_world_import_bad_name),
        cmocka_unit_test(test_world_import_errors),
    };
    const struct CMUnitTest daemon_tests[] = {
        cmocka_unit_test(test_same_bytes_as_daemon),
        cmocka_unit_test(test_world_upload),
        cmocka_unit_test(test_world_upload_errors),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("cli", cli_tests, NULL, NULL);
    failed += cmocka_run_group_tests_name("world", world_tests, make_world_dir, NULL);
    failed += cmocka_run_group_tests_name("daemon", daemon_tests, start_daemon, stop_daemon);
    if (remove_world_dir(NULL) != 0) ++teardown_failures;
    curl_global_cleanup();
    return failed == 0 && teardown_failures == 0 ? 0 : 1;
}
