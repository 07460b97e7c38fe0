/*
 * test_viewer.c - GET /viewer: the page as built into the daemon, then in a real browser.
 *
 * DESIGN
 * What: GET and HEAD /viewer answer viewer/index.html byte for byte as text/html; then
 * tests/integration/test_viewer.py drives headless Chromium (Selenium, chromium-driver)
 * against the same daemon: it replays a predict, a simulate and a validate request through
 * the page, checks what the page drew (contacts listed, timeline, a pixel of a body where it
 * must be), a 422's pointer marked in the request, and saves screenshots under the build
 * directory (viewer-screenshots/ next to the daemon under test).
 * How: the daemon is started on 127.0.0.1 by the harness (daemon.h) and stopped by its pid
 * after the script exits; the script runs under Debian's /usr/bin/python3 (python3-selenium
 * is a Debian package, which another python3 on PATH would not see), in its own process
 * group, with a time limit after which that group (the script, its driver and browser) is
 * killed.
 * Why: the page is JavaScript the C tests cannot run; only a browser shows that it loads
 * from the daemon alone and draws the answers where they are.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/integration/daemon.h"

#define PAGE_PATH "viewer/index.html"
#define SCRIPT_PATH "tests/integration/test_viewer.py"
#define PYTHON "/usr/bin/python3"
/* The browser part takes 20-40 s on a loaded machine. */
#define BROWSER_TIMEOUT_S 100

static imp_test_daemon daemon_;

static int start_daemon(void **state) {
    (void)state;
    return imp_test_daemon_start(&daemon_, NULL, NULL, 0);
}

static int stop_daemon(void **state) {
    (void)state;
    return imp_test_daemon_stop(&daemon_, SIGTERM) == 0 ? 0 : -1;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (imp_test_buf_append(&buf, len, &cap, chunk, n) != 0) {
            free(buf);
            buf = NULL;
            break;
        }
    }
    fclose(f);
    return buf;
}

static void test_page_is_the_file(void **state) {
    (void)state;
    size_t len = 0;
    char *want = read_file(PAGE_PATH, &len);
    assert_non_null(want);
    char url[128];
    snprintf(url, sizeof url, "%s/viewer", daemon_.url);
    imp_http_result get, head;
    assert_int_equal(imp_http(NULL, "GET", url, NULL, NULL, 0, &get), 0);
    assert_int_equal(get.status, 200);
    assert_string_equal(get.content_type, "text/html; charset=utf-8");
    assert_int_equal(get.len, len);
    assert_memory_equal(get.body, want, len);
    assert_int_equal(imp_http(NULL, "HEAD", url, NULL, NULL, 0, &head), 0);
    assert_int_equal(head.status, 200);
    assert_string_equal(head.content_type, get.content_type);
    assert_int_equal(strtoul(head.content_length, NULL, 10), len);
    imp_http_result_free(&get);
    imp_http_result_free(&head);
    free(want);
}

/* The directory of the daemon under test ("build" or "build/san"), where screenshots go. */
static void screenshot_dir(char *dst, size_t cap) {
    const char *bin = imp_test_daemon_bin();
    const char *slash = strrchr(bin, '/');
    if (slash) {
        snprintf(dst, cap, "%.*s/viewer-screenshots", (int)(slash - bin), bin);
    } else {
        snprintf(dst, cap, "viewer-screenshots");
    }
}

static void test_in_a_browser(void **state) {
    (void)state;
    if (imp_test_under_valgrind()) {
        printf("skipped under valgrind: the browser's timeouts assume a daemon at full speed\n");
        skip();
    }
    char shots[1024];
    screenshot_dir(shots, sizeof shots);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0); /* its own group: a timeout stops the browser it started too */
        execl(PYTHON, PYTHON, SCRIPT_PATH, daemon_.url, shots, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s (make deps-test installs python3-selenium)\n", PYTHON,
                strerror(errno));
        _exit(127);
    }
    double deadline = imp_test_now_s() + BROWSER_TIMEOUT_S;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && imp_test_now_s() < deadline)
        imp_test_sleep_ms(100);
    if (done == 0) {
        fprintf(stderr, "the browser test took over %d s; stopping it\n", BROWSER_TIMEOUT_S);
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail();
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_is_the_file),
        cmocka_unit_test(test_in_a_browser),
    };
    return cmocka_run_group_tests_name("viewer", tests, start_daemon, stop_daemon);
}
