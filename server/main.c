/*
 * main.c - impactd: configuration, signals, start, wait, stop.
 *
 * DESIGN
 * What: the daemon's entry point. Exit codes: 0 after SIGINT/SIGTERM or
 * --help, 1 when it cannot start serving, 2 for a bad setting.
 * How: SIGINT and SIGTERM are blocked before any thread exists, so every
 * libmicrohttpd thread inherits the mask and the signals stay pending for
 * the main thread, which waits for them with sigwait and then stops the
 * server in ordinary code.
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

#include "config.h"
#include "http.h"
#include "log.h"

/* File descriptors besides client connections: listener, epoll instances
 * (one per thread), stdio, and the libraries' own. */
#define FD_HEADROOM 64

/* Each connection is a descriptor; the usual soft limit of 1024 would cap
 * the configured connection count silently, so raise it toward the hard
 * limit when needed. */
static void raise_fd_limit(const imp_config *cfg, const imp_logger *log) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
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

int main(int argc, char **argv) {
    imp_config cfg;
    imp_config_error cerr;
    switch (imp_config_load(&cfg, argc, argv, &cerr)) {
    case IMP_CONFIG_OK:
        break;
    case IMP_CONFIG_HELP:
        imp_config_usage(stdout, "impactd");
        return 0;
    case IMP_CONFIG_ERROR:
        fprintf(stderr, "impactd: %s\nTry 'impactd --help'.\n", cerr.message);
        return 2;
    }
    imp_logger log = {cfg.log, IMP_LOG_INFO};
    raise_fd_limit(&cfg, &log);

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

    imp_http_error herr;
    imp_http_server *srv = imp_http_start(&cfg, &log, &herr);
    if (!srv) {
        fprintf(stderr, "impactd: %s\n", herr.message);
        return 1;
    }
    const int v6 = strchr(cfg.bind, ':') != NULL;
    printf("impactd listening on http://%s%s%s:%u\n", v6 ? "[" : "", cfg.bind, v6 ? "]" : "",
           imp_http_port(srv));
    fflush(stdout);
    IMP_LOG(&log, IMP_LOG_INFO, "serving on port %u with %lld threads, max body %lld bytes",
            imp_http_port(srv), cfg.threads, cfg.max_body_bytes);

    int sig = 0;
    if (sigwait(&stop_signals, &sig) != 0) { /* EINVAL only: cannot happen for this set */
        fprintf(stderr, "impactd: sigwait failed\n");
        imp_http_stop(srv);
        return 1;
    }
    IMP_LOG(&log, IMP_LOG_INFO, "stopping on %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
    imp_http_stop(srv);
    return 0;
}
