#!/bin/sh
# load.sh - HTTP load benchmark: impactd's /v1/toi against nginx serving a
# static JSON file on the same machine, in one run.
#
#   tests/bench/load.sh [DURATION_S [CONNECTIONS [ROUNDS]]]
#                       (default 60 s a server, 64 connections, 6 rounds)
#   make bench-load     (the same, after building; LOAD_ARGS="60 64 6")
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
# The servers take turns: each one's DURATION_S is split into ROUNDS wrk runs
# of DURATION_S / ROUNDS seconds, impactd's and nginx's alternating, and the
# ratio is of the requests each served in all its rounds. On a shared machine
# the load of its other tenants moves within a minute: with one 60 s run of
# each server after the other, that move went into the ratio (15 s runs of the
# same build: 0.77 to 0.97); in turns both servers see it alike. The rounds'
# own ratios are printed too, with their spread.
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
ROUNDS=${3:-6}
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le "$DURATION" ] || ROUNDS=$DURATION
ROUND_S=$((DURATION / ROUNDS))
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

# run NAME URL SCRIPT -> one wrk round; its output is appended to $WORK/NAME.txt
run() {
    wrk -t$THREADS -c"$CONNS" -d"${ROUND_S}s" --latency -s "$3" "$2" >"$WORK/round.txt" 2>&1
    cat "$WORK/round.txt" >>"$WORK/$1.txt"
}
# The requests and seconds of each round of NAME, one "requests seconds" line a round
# (wrk: "  3807124 requests in 60.10s, 1.21GB read").
served() {
    awk '$2 == "requests" && $3 == "in" { s = $4; sub(/s,?$/, "", s); print $1, s }' "$WORK/$1.txt"
}
# A latency percentile ("50%", "99%") of each round of NAME, in ms, one a line.
pcts() {
    awk -v p="$2" '$1 == p {
        v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
        print (u == "us" ? v / 1000 : u == "s" ? v * 1000 : v) }' "$WORK/$1.txt"
}

echo "wrk -t$THREADS -c$CONNS, $ROUNDS rounds of ${ROUND_S}s a server in turns, on 127.0.0.1 ($(nproc) cores; nginx: $NGINX_WORKERS workers, no access log)"
: >"$WORK/impactd.txt"
: >"$WORK/nginx.txt"
for _ in $(seq "$ROUNDS"); do
    run impactd "$URL/v1/toi" tests/bench/toi.lua
    run nginx "http://127.0.0.1:$NGINX_PORT/toi.json" tests/bench/status_counts.lua
done
RSS_END=$(rss_kib "$IMPACTD_PID")

for s in impactd nginx; do
    printf '%-8s %10s req/s   p50 %-9s p99 %-9s %s%s\n' "$s" \
        "$(served $s | awk '{ n += $1; t += $2 } END { printf "%.2f", n / t }')" \
        "$(pcts $s 50% | sort -n | awk '{ v[NR] = $1 } END { printf "%.3gms", v[int((NR + 1) / 2)] }')" \
        "$(pcts $s 99% | sort -n | tail -1 | awk '{ printf "%.3gms", $1 }')" \
        "$(awk '$1 == "status" { n[$2] += $3 } END { for (k in n) printf "status %s %d ", k, n[k] }' \
            "$WORK/$s.txt")" \
        "$(grep 'Socket errors' "$WORK/$s.txt" | head -1 || true)"
done
echo "(p50: the median of the rounds'; p99: the worst round's)"
echo "impactd resident memory: start $RSS_START KiB, end $RSS_END KiB"
served impactd >"$WORK/a.txt"
served nginx >"$WORK/b.txt"
paste "$WORK/a.txt" "$WORK/b.txt" | awk '
    { r = ($1 / $2) / ($3 / $4); lo = NR == 1 || r < lo ? r : lo; hi = NR == 1 || r > hi ? r : hi
      a += $1; ta += $2; b += $3; tb += $4 }
    END { printf "rounds impactd/nginx: %.2f to %.2f\n", lo, hi
          printf "ratio impactd/nginx: %.2f\n", (a / ta) / (b / tb) }'

# Only 200 and designed 503s are acceptable from impactd, and no socket errors.
if grep '^status ' "$WORK/impactd.txt" | grep -qv '^status \(200\|503\):' ||
    grep -q 'Socket errors' "$WORK/impactd.txt"; then
    echo "load.sh: impactd answered errors:" >&2
    cat "$WORK/impactd.txt" >&2
    exit 1
fi
