/*
 * bench_schedule.c - light-request latency with and without heavy work in
 * flight, against a real daemon.
 *
 * Usage: build/tests/bench/bench_schedule [DAEMON] [LIGHT] [HEAVY]
 * (defaults build/impactd, 2000 light requests, 3 heavy simulations).
 *
 * Starts DAEMON --port 0 --threads 2 --log off, then sends LIGHT requests
 * (2-body scenes/predict and toi, alternating) one after another on one
 * keep-alive connection and reports p50, p99 and max: first alone, then
 * with HEAVY simulations of 3,000 balls under gravity running (sent on
 * connections of their own, closed at the end, which also measures how
 * soon their workers are free: the time until a request that needs the
 * heavy lane's worker is answered). The goal of issue 15: p99 <= 10 ms
 * beside heavy work on a 2-core machine.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_to(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        exit(1);
    }
    return fd;
}

static void send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) {
            perror("send");
            exit(1);
        }
        p += k;
        n -= (size_t)k;
    }
}

/* One send for headers and body: two would meet Nagle's algorithm and the peer's delayed
 * acknowledgement (40 ms a request). */
static void post(int fd, const char *path, const char *body, size_t len) {
    char *req = malloc(len + 256);
    int n = snprintf(req, 256,
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     path, len);
    memcpy(req + n, body, len);
    send_all(fd, req, (size_t)n + len);
    free(req);
}

/* Reads one reply (headers and a Content-Length body); returns its status. */
static int read_reply(int fd) {
    static char buf[1 << 20];
    size_t len = 0;
    for (;;) {
        ssize_t k = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (k <= 0) return 0;
        len += (size_t)k;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        char *cl = strstr(buf, "Content-Length: ");
        if (end && cl && len >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10)) break;
    }
    int status = 0;
    sscanf(buf, "HTTP/1.1 %d", &status);
    return status;
}

static const char PREDICT[] =
    "{\"horizon\": 2, \"bodies\": [{\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
    " {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}]}";
static const char TOI[] = "{\"a\": {\"radius\": 0.5, \"position\": [0, 0], \"velocity\": [1, 0]},"
                          " \"b\": {\"radius\": 0.5, \"position\": [3, 0], \"velocity\": [-1, 0]}}";

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void light_run(unsigned port, int n, const char *label) {
    double *lat = malloc((size_t)n * sizeof *lat);
    int fd = connect_to(port);
    for (int i = 0; i < n; ++i) {
        double t0 = now_s();
        post(fd, i % 2 ? "/v1/toi" : "/v1/scenes/predict", i % 2 ? TOI : PREDICT,
             strlen(i % 2 ? TOI : PREDICT));
        if (read_reply(fd) != 200) {
            fprintf(stderr, "a light request failed\n");
            exit(1);
        }
        lat[i] = now_s() - t0;
    }
    close(fd);
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    printf("%-34s p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms  (%d requests)\n", label,
           lat[n / 2] * 1e3, lat[n * 99 / 100 - 1] * 1e3, lat[n - 1] * 1e3, n);
    free(lat);
}

static char *heavy_body(size_t *len) {
    size_t cap = 3000 * 96 + 1024, n = 0;
    char *t = malloc(cap);
    n += (size_t)snprintf(t + n, cap - n,
                          "{\"horizon\": 1e6, \"gravity\": [0, -9.8], \"record\": \"none\", "
                          "\"time_budget_ms\": 600000, \"bodies\": [");
    static const char *const walls[4] = {"[1, 0], \"offset\": 300", "[-1, 0], \"offset\": 0",
                                         "[0, 1], \"offset\": 300", "[0, -1], \"offset\": 0"};
    for (int w = 0; w < 4; ++w)
        n += (size_t)snprintf(t + n, cap - n,
                              "{\"shape\": {\"type\": \"halfspace\", \"normal\": %s}, "
                              "\"position\": [0, 0], \"static\": true},",
                              walls[w]);
    for (int i = 0; i < 3000; ++i)
        n += (size_t)snprintf(
            t + n, cap - n, "%s{\"radius\": 0.5, \"position\": [%d, %d], \"velocity\": [%d, %d]}",
            i ? "," : "", 2 + 3 * (i % 90), 2 + 3 * (i / 90), (i * 7) % 11 - 5, (i * 5) % 13 - 6);
    n += (size_t)snprintf(t + n, cap - n, "]}");
    *len = n;
    return t;
}

int main(int argc, char **argv) {
    const char *bin = argc > 1 ? argv[1] : "build/impactd";
    int light = argc > 2 ? atoi(argv[2]) : 2000, heavy = argc > 3 ? atoi(argv[3]) : 3;
    int out[2];
    if (pipe(out) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        execl(bin, bin, "--port", "0", "--bind", "127.0.0.1", "--threads", "2", "--log", "off",
              "--drain-grace-s", "0", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256] = {0};
    ssize_t k = read(out[0], line, sizeof line - 1);
    unsigned port = 0;
    const char *p = k > 0 ? strstr(line, "127.0.0.1:") : NULL;
    if (!p || sscanf(p, "127.0.0.1:%u", &port) != 1) {
        fprintf(stderr, "cannot start %s: %s\n", bin, line);
        return 1;
    }
    printf("impactd --threads 2 on port %u\n", port);
    light_run(port, light, "light alone:");

    size_t hlen;
    char *hb = heavy_body(&hlen);
    int *fds = malloc((size_t)heavy * sizeof *fds);
    for (int i = 0; i < heavy; ++i) {
        fds[i] = connect_to(port);
        post(fds[i], "/v1/scenes/simulate", hb, hlen);
    }
    nanosleep(&(struct timespec){0, 300 * 1000000L}, NULL); /* decoded and running */
    char label[64];
    snprintf(label, sizeof label, "light beside %d heavy simulations:", heavy);
    light_run(port, light, label);

    /* the heavy clients leave; a heavy request then needs the heavy lane's worker */
    double t0 = now_s();
    for (int i = 0; i < heavy; ++i)
        close(fds[i]);
    int fd = connect_to(port);
    size_t small_len;
    char *small = heavy_body(&small_len);
    /* the same simulation with a 1 ms budget: heavy work, answered as soon as it runs */
    char *budget = strstr(small, "600000");
    memcpy(budget, "     1", 6);
    post(fd, "/v1/scenes/simulate", small, small_len);
    int status = read_reply(fd);
    printf("heavy clients closed: the heavy lane served the next heavy request after %.1f ms "
           "(status %d)\n",
           (now_s() - t0) * 1e3, status);
    close(fd);
    free(small);
    free(hb);
    free(fds);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    return 0;
}
