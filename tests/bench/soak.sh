#!/bin/sh
# soak.sh - soak test: wrk sends a mix of valid and invalid requests on every endpoint
# (tests/bench/soak.lua) to one daemon for a long time, while the daemon's resident
# memory and open file descriptors are sampled.
#
#   tests/bench/soak.sh [DURATION_S [CONNECTIONS]]     (default 600 s, 32 connections)
#   make soak                                           (the same, after building)
#
# Runs from the repository root; installs wrk when missing (root). The daemon listens
# on 127.0.0.1 only and is stopped on exit (it must exit 0 on SIGTERM).
#
# Prints the statuses seen, wrk's summary, and the samples of RSS (KiB) and fds every
# SAMPLE_S seconds. Passes (exit 0) when: no status 5xx but designed 503s; every
# invalid kind answered (400, 404, 405, 415, 422 all seen); no socket errors but
# timeouts of wrk's own; resident memory at the end within 10% (and 4 MiB) of its value
# after the first minute's warm-up; the fd count back to its value at start once wrk
# has closed its connections; the daemon alive throughout and exiting 0.
set -eu

DURATION=${1:-600}
CONNS=${2:-32}
SAMPLE_S=${SAMPLE_S:-10}
IMPACTD=${IMPACTD:-build/impactd}

command -v wrk >/dev/null 2>&1 || {
    [ "$(id -u)" -eq 0 ] || { echo "soak.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends wrk >/dev/null
}
[ -x "$IMPACTD" ] || { echo "soak.sh: $IMPACTD not built (make)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/impactd-soak.XXXXXX)
IMPACTD_PID=
SAMPLER_PID=
cleanup() {
    [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null
    [ -n "$IMPACTD_PID" ] && kill "$IMPACTD_PID" 2>/dev/null && wait "$IMPACTD_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

. tests/bench/daemon.sh
start_impactd

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
FD0=$(fds "$IMPACTD_PID")
RSS0=$(rss_kib "$IMPACTD_PID")

# the sampler: "seconds rss_kib fds" lines
(
    t=0
    while kill -0 "$IMPACTD_PID" 2>/dev/null; do
        echo "$t $(rss_kib "$IMPACTD_PID") $(fds "$IMPACTD_PID")"
        sleep "$SAMPLE_S"
        t=$((t + SAMPLE_S))
    done
) >"$WORK/samples" &
SAMPLER_PID=$!

echo "soak: $DURATION s, $CONNS connections, $IMPACTD at $URL (pid $IMPACTD_PID)"
wrk -t2 -c"$CONNS" -d"${DURATION}s" --timeout 10s --latency -s tests/bench/soak.lua "$URL" \
    >"$WORK/wrk.out" 2>&1 || true
sleep 1 # let the daemon close what wrk left
kill "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=
cat "$WORK/wrk.out"

fail=0
alive=1
kill -0 "$IMPACTD_PID" 2>/dev/null || { alive=0; fail=1; echo "soak: FAIL: the daemon died"; }
FD1=$( [ $alive -eq 1 ] && fds "$IMPACTD_PID" || echo 0)
RSS1=$( [ $alive -eq 1 ] && rss_kib "$IMPACTD_PID" || echo 0)
# the first sample at or after 60 s is the warmed-up reference
RSSW=$(awk '$1 >= 60 {print $2; exit}' "$WORK/samples")
RSSW=${RSSW:-$RSS0}
RSSMAX=$(awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}' "$WORK/samples")
FDMAX=$(awk 'BEGIN {m = 0} $3 > m {m = $3} END {print m}' "$WORK/samples")
echo "samples (s, rss KiB, fds):"
awk '{printf "  %s", $0; if (NR % 6 == 0) printf "\n"} END {printf "\n"}' "$WORK/samples"
echo "rss KiB: start $RSS0, after warm-up $RSSW, max $RSSMAX, end $RSS1"
echo "fds: start $FD0, max $FDMAX, end $FD1"

bad5xx=$(sed -n 's/^status \(5[0-9][0-9]\): \([0-9]*\)$/\1 \2/p' "$WORK/wrk.out" | grep -v '^503 ' || true)
[ -z "$bad5xx" ] || { echo "soak: FAIL: 5xx answers: $bad5xx"; fail=1; }
for s in 200 400 404 405 415 422; do
    grep -q "^status $s: " "$WORK/wrk.out" || { echo "soak: FAIL: no $s seen"; fail=1; }
done
if grep -q "Socket errors" "$WORK/wrk.out"; then
    grep "Socket errors" "$WORK/wrk.out" | grep -q "connect 0, read 0, write 0" ||
        { echo "soak: FAIL: socket errors"; fail=1; }
fi
[ $alive -eq 1 ] && [ "$RSS1" -le $((RSSW + RSSW / 10 + 4096)) ] ||
    { echo "soak: FAIL: resident memory grew"; fail=1; }
[ $alive -eq 1 ] && [ "$FD1" -le "$FD0" ] || { echo "soak: FAIL: file descriptors grew"; fail=1; }

if [ $alive -eq 1 ]; then
    kill -TERM "$IMPACTD_PID"
    status=0
    wait "$IMPACTD_PID" || status=$?
    IMPACTD_PID=
    [ $status -eq 0 ] || { echo "soak: FAIL: the daemon exited $status on SIGTERM"; fail=1; }
fi
[ $fail -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit $fail
