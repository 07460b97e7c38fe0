#!/bin/sh
# scene_http.sh - /v1/scenes/predict end to end over HTTP: 10k and 100k
# moving spheres (2D and 3D), the time a client waits split into what the
# server reports as the solve (stats.elapsed_ms) and the rest (upload,
# parse, decode, encode, download).
#
#   tests/bench/scene_http.sh [RUNS]          (default 3; best run reported)
#
# Runs from the repository root after `make`. The scenes are those of
# bench_scenes (uniform density, 10% covered, radius 0.5, speed up to 1,
# horizon 1), written by awk with a fixed seed (tests/bench/scene.sh). The daemon listens on
# 127.0.0.1 only and is stopped on exit. bench_scenes splits the server's
# share further into parse, decode, solve and encode in-process.
set -eu

RUNS=${1:-3}
IMPACTD=${IMPACTD:-build/impactd}
[ -x "$IMPACTD" ] || { echo "scene_http.sh: $IMPACTD not built (make)" >&2; exit 2; }

. tests/bench/daemon.sh
bench_workdir scene
. tests/bench/scene.sh
start_impactd

printf '%-4s %8s %10s %10s %10s %10s %10s\n' dim bodies "req MB" "reply MB" "total ms" "solve ms" "rest ms"
for dim in 2 3; do
    for n in 10000 100000; do
        scene "$n" "$dim" >"$WORK/req.json"
        best=
        for _ in $(seq "$RUNS"); do
            t=$(curl -s --noproxy '*' -o "$WORK/reply.json" -w '%{http_code} %{time_pretransfer} %{time_total}' \
                -H 'Content-Type: application/json' --data-binary @"$WORK/req.json" "$URL/v1/scenes/predict")
            set -- $t
            [ "$1" = 200 ] || { echo "scene_http.sh: status $1" >&2; head -c 300 "$WORK/reply.json" >&2; exit 1; }
            ms=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
            solve=$(sed -n 's/.*"elapsed_ms":\([0-9.eE+-]*\).*/\1/p' "$WORK/reply.json")
            if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                best=$ms
                best_solve=$solve
                reply_bytes=$(wc -c <"$WORK/reply.json")
            fi
        done
        awk -v d="$dim" -v n="$n" -v q="$(wc -c <"$WORK/req.json")" -v p="$reply_bytes" \
            -v t="$best" -v s="$best_solve" \
            'BEGIN { printf "%-4s %8d %10.1f %10.1f %10.1f %10.1f %10.1f\n", d, n, q / 1e6, p / 1e6, t, s, t - s }'
    done
done
