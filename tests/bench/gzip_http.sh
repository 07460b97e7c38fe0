#!/bin/sh
# gzip_http.sh - a 100,000-sphere 3D /v1/scenes/predict end to end over HTTP,
# with and without gzip each way: the bytes on the wire and the time the
# client waits (best of RUNS): curl's exchange (upload, the server's inflate,
# parse, solve, encode and deflate, download), the solve the server reports
# (stats.elapsed_ms), and the client's own gzip work (gzip -1 of the request,
# gzip -d of the reply, by the gzip tool, which is zlib too).
#
#   tests/bench/gzip_http.sh [RUNS] [MBIT]    (default 3 runs, a 100 Mbit/s link)
#
# The bytes go over loopback, where they cost little more than the copies,
# so there gzip can only add time. The last column adds what the wire bytes
# would take on a link of MBIT Mbit/s each way (request bytes, then reply
# bytes; latency aside), which is where gzip wins or loses. (curl's
# --limit-rate cannot stand in for the link: it holds the average rate
# since the transfer began, so a download after a long upload is not slowed
# at all.) curl is given Accept-Encoding as a plain header and inflates
# nothing itself. Runs from the repository root after `make`; the daemon
# listens on 127.0.0.1 only and is stopped on exit.
set -eu

RUNS=${1:-3}
MBIT=${2:-100}
IMPACTD=${IMPACTD:-build/impactd}
[ -x "$IMPACTD" ] || { echo "gzip_http.sh: $IMPACTD not built (make)" >&2; exit 2; }
command -v gzip >/dev/null || { echo "gzip_http.sh: needs gzip" >&2; exit 2; }

. tests/bench/daemon.sh
bench_workdir gzip
. tests/bench/scene.sh
start_impactd

# ms CMD...: runs CMD, prints its wall time in ms
ms() {
    t0=$(date +%s%N)
    "$@"
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'
}

scene 100000 3 >"$WORK/req.json"
zip_ms=$(ms sh -c "gzip -1 -c '$WORK/req.json' >'$WORK/req.json.gz'")
awk -v a="$(wc -c <"$WORK/req.json")" -v b="$(wc -c <"$WORK/req.json.gz")" -v t="$zip_ms" \
    'BEGIN { printf "request: %.2f MB of JSON, %.2f MB with gzip -1 (%.2fx, %.0f ms to compress)\n", a / 1e6, b / 1e6, a / b, t }'
echo "loopback, best of $RUNS runs (by curl + client ms); the last column adds the wire bytes at $MBIT Mbit/s"

# run MODE: one row (mode: plain, gzip-request, gzip-reply, gzip-both)
run() {
    body=$WORK/req.json
    mode=$1
    zip=0
    set -- -H 'Content-Type: application/json'
    case $mode in
    gzip-request | gzip-both) body=$WORK/req.json.gz zip=$zip_ms; set -- "$@" -H 'Content-Encoding: gzip' ;;
    esac
    case $mode in
    gzip-reply | gzip-both) set -- "$@" -H 'Accept-Encoding: gzip' ;;
    esac
    best=
    for _ in $(seq "$RUNS"); do
        t=$(curl -s --noproxy '*' -o "$WORK/reply" -D "$WORK/headers" \
            -w '%{http_code} %{size_upload} %{size_download} %{time_total}' \
            "$@" --data-binary @"$body" "$URL/v1/scenes/predict")
        # shellcheck disable=SC2086
        set -- $t "$@"
        code=$1 up=$2 down=$3 total=$4
        shift 4
        unzip=0
        if grep -qi '^content-encoding: gzip' "$WORK/headers"; then
            unzip=$(ms sh -c "gzip -dc '$WORK/reply' >'$WORK/reply.json'")
        else
            mv "$WORK/reply" "$WORK/reply.json"
        fi
        [ "$code" = 200 ] || { echo "gzip_http.sh: status $code" >&2; head -c 300 "$WORK/reply.json" >&2; exit 1; }
        grep -q '"bodies":100000' "$WORK/reply.json" || { echo "gzip_http.sh: not the scene's reply" >&2; exit 1; }
        curl_ms=$(awk -v a="$total" 'BEGIN { printf "%.1f", a * 1000 }')
        client=$(awk -v a="$zip" -v b="$unzip" 'BEGIN { printf "%.1f", a + b }')
        sum=$(awk -v a="$curl_ms" -v b="$client" 'BEGIN { printf "%.1f", a + b }')
        if [ -z "$best" ] || awk -v a="$sum" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$sum best_curl=$curl_ms best_client=$client best_up=$up best_down=$down
            best_solve=$(sed -n 's/.*"elapsed_ms":\([0-9.eE+-]*\).*/\1/p' "$WORK/reply.json")
        fi
    done
    awk -v m="$mode" -v q="$best_up" -v p="$best_down" -v c="$best_curl" -v z="$best_client" \
        -v t="$best" -v s="$best_solve" -v r="$MBIT" \
        'BEGIN { printf "%-13s %8.2f %8.2f %8.2f %9.1f %9.1f %9.1f %9.1f %9.1f\n", m, q / 1e6, p / 1e6, (q + p) / 1e6, c, z, t, s, t + (q + p) * 8 / (r * 1e3) }'
}

printf '%-13s %8s %8s %8s %9s %9s %9s %9s %9s\n' mode "req MB" "reply MB" "wire MB" "curl ms" "client ms" "total ms" "solve ms" "link ms"
for mode in plain gzip-request gzip-reply gzip-both; do
    run "$mode"
done
