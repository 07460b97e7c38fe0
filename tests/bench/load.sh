#!/bin/sh
# load.sh - HTTP load benchmark: impactd's /v1/toi against nginx serving a
# static JSON file on the same machine, in one run.
#
#   tests/bench/load.sh [DURATION_S [CONNECTIONS]]     (default 60 s, 64 connections)
#   make bench-load                                     (the same, after building)
#
# Runs from the repository root. Needs wrk and nginx (Debian packages; the
# script installs them with apt-get when missing and it is root). Both
# servers listen on 127.0.0.1 only and are stopped on exit.
#
# nginx answering a static file with sendfile and no application work is
# the ceiling of this machine for small HTTP exchanges; impactd/nginx says
# how much of that ceiling the daemon reaches while doing real work. Both
# runs use the same wrk settings (2 threads, same connections, same
# duration) and the client shares the machine's cores with the server,
# exactly alike for both. Figures from one run only compare with each other.
#
# A fair ceiling: nginx runs as many worker processes as impactd has
# connection threads (both one per online core unless IMPACTD_ARGS says
# --io-threads), keeps connections alive like impactd (no request cap, the
# same idle timeout), and logs no requests, as impactd runs with --log off.
#
# Prints for each server: requests/s, p50 and p99 latency, statuses seen,
# socket errors; for impactd also resident memory at start and end; and
# finally the ratio. Exits 1 when impactd answered anything but 200 and
# designed 503s, or had socket errors.
set -eu

DURATION=${1:-60}
CONNS=${2:-64}
THREADS=2
IMPACTD=${IMPACTD:-build/impactd}   # IMPACTD_ARGS: extra daemon flags

need() {
    command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "load.sh: $1 is not installed (apt-get install $2)" >&2
        exit 2
    fi
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends "$2" >/dev/null
}
need wrk wrk
need nginx nginx
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$IMPACTD" ] || { echo "load.sh: $IMPACTD not built (make)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/impactd-load.XXXXXX)
chmod 755 "$WORK"
IMPACTD_PID=
NGINX_STARTED=
cleanup() {
    [ -n "$IMPACTD_PID" ] && kill "$IMPACTD_PID" 2>/dev/null && wait "$IMPACTD_PID" 2>/dev/null
    [ -n "$NGINX_STARTED" ] && "$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -s stop 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

. tests/bench/daemon.sh
start_impactd

# The static file nginx serves: exactly the body impactd answers.
mkdir -p "$WORK/www"
curl -s --noproxy '*' -H 'Content-Type: application/json' \
    -d '{"a": {"radius": 0.5, "position": [0, 0], "velocity": [1, 0]}, "b": {"radius": 0.5, "position": [3, 0], "velocity": [-1, 0]}}' \
    "$URL/v1/toi" >"$WORK/www/toi.json"
chmod 644 "$WORK/www/toi.json"
# nginx on a port below Linux's ephemeral range (32768-60999), so no client
# socket of the tests or of wrk can hold it; retried if something listens there.
mkdir -p "$WORK/tmp" "$WORK/logs"
NGINX_WORKERS=$(printf '%s\n' "${IMPACTD_ARGS:-}" |
    sed -n 's/.*--io-threads[= ]\([0-9][0-9]*\).*/\1/p')
[ -n "$NGINX_WORKERS" ] && [ "$NGINX_WORKERS" -gt 0 ] || NGINX_WORKERS=$(nproc)
for try in $(seq 20); do
    NGINX_PORT=$(( 20000 + ($$ * 7 + try * 331) % 12000 ))
    cat >"$WORK/nginx.conf" <<EOF
worker_processes $NGINX_WORKERS;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 30s;
    types { application/json json; }
    client_body_temp_path $WORK/tmp;
    proxy_temp_path $WORK/tmp;
    fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp;
    scgi_temp_path $WORK/tmp;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/www;
    }
}
EOF
    if "$NGINX" -p "$WORK" -c "$WORK/nginx.conf" 2>"$WORK/nginx-start.err"; then
        NGINX_STARTED=1
        break
    fi
done
[ -n "$NGINX_STARTED" ] || { echo "load.sh: nginx did not start" >&2; cat "$WORK/nginx-start.err" >&2; exit 1; }
sleep 0.2

RSS_START=$(rss_kib "$IMPACTD_PID")

# run NAME URL SCRIPT -> prints a summary line and leaves wrk's output in $WORK/NAME.txt
run() {
    wrk -t$THREADS -c"$CONNS" -d"${DURATION}s" --latency -s "$3" "$2" >"$WORK/$1.txt" 2>&1
}
num() { # value of a wrk "Requests/sec:" style line
    awk -v k="$2" '$1 == k {print $2}' "$WORK/$1.txt"
}
pct() { # latency distribution line "50%  1.02ms"
    awk -v p="$2" '$1 == p {print $2}' "$WORK/$1.txt"
}

echo "wrk -t$THREADS -c$CONNS -d${DURATION}s on 127.0.0.1 ($(nproc) cores; nginx: $NGINX_WORKERS workers, no access log)"
run impactd "$URL/v1/toi" tests/bench/toi.lua
RSS_END=$(rss_kib "$IMPACTD_PID")
run nginx "http://127.0.0.1:$NGINX_PORT/toi.json" tests/bench/status_counts.lua

for s in impactd nginx; do
    printf '%-8s %10s req/s   p50 %-9s p99 %-9s %s%s\n' "$s" "$(num $s Requests/sec:)" \
        "$(pct $s 50%)" "$(pct $s 99%)" \
        "$(grep '^status ' "$WORK/$s.txt" | tr '\n' ' ')" \
        "$(grep 'Socket errors' "$WORK/$s.txt" || true)"
done
echo "impactd resident memory: start $RSS_START KiB, end $RSS_END KiB"
awk -v a="$(num impactd Requests/sec:)" -v b="$(num nginx Requests/sec:)" \
    'BEGIN { printf "ratio impactd/nginx: %.2f\n", a / b }'

# Only 200 and designed 503s are acceptable from impactd, and no socket errors.
if grep '^status ' "$WORK/impactd.txt" | grep -qv '^status \(200\|503\):' ||
    grep -q 'Socket errors' "$WORK/impactd.txt"; then
    echo "load.sh: impactd answered errors:" >&2
    cat "$WORK/impactd.txt" >&2
    exit 1
fi
