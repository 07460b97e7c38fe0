# daemon.sh - sourced by the benchmark scripts: start_impactd starts
# "$IMPACTD" on a free port of 127.0.0.1 (the kernel picks it: --port 0)
# with the log off and any extra flags in IMPACTD_ARGS, output in "$WORK",
# and sets IMPACTD_PID and URL; it exits the script when the daemon does
# not come up. The caller's EXIT trap stops it (kill "$IMPACTD_PID"), or
# bench_workdir NAME's: it makes WORK (/tmp/impactd-NAME.*) and on exit stops
# the daemon and removes WORK, for the scripts that need nothing more.
bench_workdir() {
    WORK=$(mktemp -d "/tmp/impactd-$1.XXXXXX")
    IMPACTD_PID=
    trap bench_cleanup EXIT INT TERM
}
bench_cleanup() {
    [ -n "$IMPACTD_PID" ] && kill "$IMPACTD_PID" 2>/dev/null && wait "$IMPACTD_PID" 2>/dev/null
    rm -rf "$WORK"
}
start_impactd() {
    "$IMPACTD" --port 0 --bind 127.0.0.1 --log off ${IMPACTD_ARGS:-} \
        >"$WORK/impactd.out" 2>"$WORK/impactd.err" &
    IMPACTD_PID=$!
    for _ in $(seq 100); do
        grep -q listening "$WORK/impactd.out" 2>/dev/null && break
        sleep 0.05
    done
    URL=$(sed -n 's/^impactd listening on //p' "$WORK/impactd.out")
    [ -n "$URL" ] || { echo "$0: impactd did not start" >&2; cat "$WORK/impactd.err" >&2; exit 1; }
}
