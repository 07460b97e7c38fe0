#!/bin/sh
# world_store.sh - the shared world store end to end: a 1,000,000-triangle
# world (a 708 x 709 heightfield) uploaded to one replica, then the first
# query on a second, cold replica (fetch from Redis plus build) and warm
# queries on it afterwards.
#
#   tests/bench/world_store.sh [WARM_QUERIES]     (default 200)
#
# Runs from the repository root after `make`; needs redis-server (make deps-test). Redis
# and both daemons listen on 127.0.0.1 only and are stopped on exit. Reports the upload
# (decode + build + SET), the cold query, and warm query latency (median, p99, max) of a
# one-ray raycast, each as the client sees it (curl's time_total).
set -eu

WARM=${1:-200}
IMPACTD=${IMPACTD:-build/impactd}
[ -x "$IMPACTD" ] || { echo "world_store.sh: $IMPACTD not built (make)" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "world_store.sh: redis-server missing (make deps-test)" >&2; exit 2; }

. tests/bench/daemon.sh
bench_workdir world-store
REDIS_PID=
B_PID=
cleanup_all() {
    [ -n "$B_PID" ] && kill "$B_PID" 2>/dev/null && wait "$B_PID" 2>/dev/null
    [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
    bench_cleanup
}
trap cleanup_all EXIT INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save "" --appendonly no \
    >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
    redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
    sleep 0.05
done

# 708 rows x 709 cols: 2 * 707 * 708 = 1,001,112 triangles; heights from a fixed formula
awk 'BEGIN {
    r = 708; c = 709;
    printf "{\"colliders\":[{\"id\":\"terrain\",\"shape\":{\"type\":\"heightfield\",\"rows\":%d,\"cols\":%d,\"spacing\":[1,1],\"heights\":[", r, c;
    for (i = 0; i < r * c; ++i) printf "%s%.3f", (i ? "," : ""), ((i * 7919) % 1000) / 100.0;
    printf "]},\"position\":[0,0,0]}]}";
}' >"$WORK/world.json"

IMPACTD_ARGS="--world-store redis://127.0.0.1:$PORT --max-world-triangles 2000000"
start_impactd
A_URL=$URL
mv "$WORK/impactd.out" "$WORK/a.out"
A_PID=$IMPACTD_PID
start_impactd
B_URL=$URL
B_PID=$IMPACTD_PID
IMPACTD_PID=$A_PID

t=$(curl -s --noproxy '*' -o "$WORK/up.json" -w '%{http_code} %{time_total}' \
    -H 'Content-Type: application/json' --data-binary @"$WORK/world.json" "$A_URL/v1/worlds")
set -- $t
[ "$1" = 201 ] || { echo "world_store.sh: upload status $1" >&2; head -c 300 "$WORK/up.json" >&2; exit 1; }
ID=$(sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p' "$WORK/up.json")
TRIS=$(sed -n 's/.*"triangles":\([0-9]*\).*/\1/p' "$WORK/up.json")
BUILD=$(sed -n 's/.*"build_ms":\([0-9.eE+-]*\).*/\1/p' "$WORK/up.json")
echo "world: $TRIS triangles, $(wc -c <"$WORK/world.json") bytes of JSON"
echo "upload to replica A: $(awk -v s="$2" 'BEGIN { printf "%.0f", s * 1000 }') ms (build $BUILD ms)"

RAY='{"rays":[{"origin":[300.5,50,300.5],"direction":[0,-1,0]}]}'
query() {
    curl -s --noproxy '*' -o "$WORK/q.json" -w '%{http_code} %{time_total}\n' \
        -H 'Content-Type: application/json' -d "$RAY" "$B_URL/v1/worlds/$ID/raycast"
}
t=$(query)
set -- $t
[ "$1" = 200 ] || { echo "world_store.sh: cold query status $1" >&2; cat "$WORK/q.json" >&2; exit 1; }
grep -q '"hit":true' "$WORK/q.json" || { echo "world_store.sh: the ray missed" >&2; exit 1; }
echo "first query on cold replica B (fetch + build + query): $(awk -v s="$2" 'BEGIN { printf "%.0f", s * 1000 }') ms"
for _ in $(seq "$WARM"); do query; done | awk '$1 != 200 { bad++ } { print $2 * 1000 }
    END { if (bad) { print "bad " bad > "/dev/stderr"; exit 1 } }' | sort -n >"$WORK/warm.txt"
awk '{ v[NR] = $1 } END { printf "warm queries on B (%d, one ray each, curl time_total): median %.2f ms, p99 %.2f ms, max %.2f ms\n",
    NR, v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.5)], v[NR] }' "$WORK/warm.txt"
curl -s --noproxy '*' "$B_URL/metrics" | grep -E '^impactd_world_(cache_(hits|misses)_total|build_seconds_(sum|count)) '
