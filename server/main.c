/*
 * main.c - impactd: configuration, signals, start, wait, stop.
 *
 * DESIGN
 * What: the daemon's entry point. Exit codes: 0 after SIGINT/SIGTERM or
 * --help, 1 when it cannot start serving, 2 for a bad setting.
 * How: SIGINT and SIGTERM are blocked before any thread exists, so every
 * thread inherits the mask and the signals stay pending for the main
 * thread, which waits for them with sigtimedwait, waking once a second to
 * close connections past their deadline (imp_http_tick).
 * Draining on SIGTERM: /readyz turns 503 at once; the daemon keeps
 * serving for --drain-grace-s (load balancers need a few probe periods to
 * take an instance out); then it stops accepting and waits up to
 * --drain-timeout-s for requests in flight; then it stops and exits 0.
 * SIGINT (an operator's Ctrl-C) skips the grace period, and a second
 * signal during the grace period ends it early.
 * Why: sigwait needs no signal handler and no global flag: shutdown runs
 * as plain sequential code instead of inside async-signal context.
 * Once serving, one line goes to stdout, exactly
 *     impactd listening on http://<bind>:<port>
 * with the real port; tests and scripts start the daemon with --port 0 and
 * read the port from it, so its format is part of the interface.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "alloc.h"
#include "config.h"
#include "http.h"
#include "log.h"

/* File descriptors besides client connections: listener, inter-thread channels
 * (one per thread), stdio, and the libraries' own. */
#define FD_HEADROOM 64

/* Each connection is a descriptor; the usual soft limit of 1024 would cap
 * the configured connection count silently, so raise it toward the hard
 * limit when needed. */
static void raise_fd_limit(const imp_config *cfg, const imp_logger *log) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t need = (rlim_t)cfg->max_connections + (rlim_t)cfg->threads + FD_HEADROOM;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) ? need : rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < need) {
            IMP_LOG(log, IMP_LOG_WARN,
                    "file descriptor limit %llu is below the %llu that max-connections needs",
                    (unsigned long long)rl.rlim_cur, (unsigned long long)need);
        }
    }
}

/* How often the drain loop looks at the in-flight count (ms). */
#define DRAIN_POLL_MS 10

/* Waits for a signal of `set`, ticking deadlines once a second. With
 * timeout_ms >= 0, gives up after that long and returns 0. */
static int wait_signal(imp_http_server *srv, const sigset_t *set, long long timeout_ms) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        long long slice = 1000;
        if (timeout_ms >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long left = timeout_ms - ((long long)(now.tv_sec - start.tv_sec) * 1000 +
                                           (now.tv_nsec - start.tv_nsec) / 1000000);
            if (left <= 0) return 0;
            if (left < slice) slice = left;
        }
        struct timespec ts = {(time_t)(slice / 1000), (long)(slice % 1000) * 1000000L};
        int sig = sigtimedwait(set, NULL, &ts);
        if (sig > 0) return sig;
        imp_http_tick(srv); /* timeout (EAGAIN) or EINTR */
    }
}

int main(int argc, char **argv) {
    imp_config cfg;
    imp_config_error cerr;
    switch (imp_config_load(&cfg, argc, argv, &cerr)) {
    case IMP_CONFIG_OK: break;
    case IMP_CONFIG_HELP: imp_config_usage(stdout, "impactd"); return 0;
    case IMP_CONFIG_ERROR:
        fprintf(stderr, "impactd: %s\nTry 'impactd --help'.\n", cerr.message);
        return 2;
    }
    imp_logger log = {cfg.log, IMP_LOG_INFO};
    raise_fd_limit(&cfg, &log);
    imp_alloc_keep();

    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0) {
        fprintf(stderr, "impactd: cannot block SIGINT/SIGTERM\n");
        return 1;
    }
    /* A client that hangs up mid-reply must cost an EPIPE, not the process. */
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, NULL);

    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    imp_http_error herr;
    imp_http_server *srv =
        imp_http_start(&cfg, &log, (double)wall.tv_sec + (double)wall.tv_nsec / 1e9, &herr);
    if (!srv) {
        fprintf(stderr, "impactd: %s\n", herr.message);
        return 1;
    }
    const int v6 = strchr(cfg.bind, ':') != NULL;
    printf("impactd listening on http://%s%s%s:%u\n", v6 ? "[" : "", cfg.bind, v6 ? "]" : "",
           imp_http_port(srv));
    fflush(stdout);
    IMP_LOG(&log, IMP_LOG_INFO,
            "serving on port %u with %lld workers and %lld connection threads, max body %lld bytes",
            imp_http_port(srv), cfg.threads, cfg.io_threads, cfg.max_body_bytes);

    int sig = wait_signal(srv, &stop_signals, -1);
    IMP_LOG(&log, IMP_LOG_INFO,
            "%s: draining (grace %llds, then up to %llds for requests in flight)",
            sig == SIGINT ? "SIGINT" : "SIGTERM", sig == SIGINT ? 0LL : cfg.drain_grace_s,
            cfg.drain_timeout_s);
    imp_http_drain_begin(srv);
    if (sig == SIGTERM && cfg.drain_grace_s > 0)
        (void)wait_signal(srv, &stop_signals, cfg.drain_grace_s * 1000);
    imp_http_close(srv);
    long long waited_ms = 0;
    while (imp_http_in_flight(srv) > 0 && waited_ms < cfg.drain_timeout_s * 1000) {
        struct timespec step = {0, DRAIN_POLL_MS * 1000000L};
        nanosleep(&step, NULL);
        waited_ms += DRAIN_POLL_MS;
        if (waited_ms % 1000 == 0) imp_http_tick(srv);
    }
    size_t left = imp_http_in_flight(srv);
    if (left > 0)
        IMP_LOG(&log, IMP_LOG_WARN, "drain timeout: stopping with %zu requests in flight", left);
    imp_http_stop(srv);
    IMP_LOG(&log, IMP_LOG_INFO, "stopped");
    return 0;
}
