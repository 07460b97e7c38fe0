#!/bin/sh
# check.sh - carry out docker/Dockerfile's steps without a Docker engine
# (`make docker-check`): every stage starts from a Debian 12 minbase root
# made by debootstrap (what debian:12-slim is), and its WORKDIR, ENV, COPY
# and RUN instructions run in that root with chroot, in order. Then the
# runtime stage's ENTRYPOINT runs as its USER with its ENV, the HEALTHCHECK
# command runs inside the root, and /healthz and a /v1/toi answer are
# checked from outside. Prints "docker-check: passed" or fails.
#
# Needs root and the Debian mirror this machine's apt uses; installs
# debootstrap when missing. Takes a few minutes (two package installs).
# Everything lives under one temporary directory, removed at the end.
set -eu

DOCKERFILE=docker/Dockerfile
[ -f "$DOCKERFILE" ] || { echo "check.sh: run from the repository root" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "check.sh: needs root (debootstrap, chroot)" >&2; exit 2; }
if ! command -v debootstrap >/dev/null 2>&1; then
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >/dev/null
fi

# The mirror apt already uses (deb822 sources, else the one-line format).
MIRROR=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v security | head -n 1)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' \
    /etc/apt/sources.list 2>/dev/null)
[ -n "$MIRROR" ] || { echo "check.sh: no Debian mirror in apt's sources" >&2; exit 1; }

WORK=$(mktemp -d /tmp/impactd-docker-check.XXXXXX)
PID=
MOUNTS=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    [ -n "$PID" ] && wait "$PID" 2>/dev/null
    for m in $MOUNTS; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

echo "docker-check: debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$WORK/base" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -n 20 "$WORK/debootstrap.log" >&2; exit 1; }

# The build context: the tree without what .dockerignore leaves out.
mkdir -p "$WORK/context"
tar -cf - --exclude=./build --exclude=./.git --exclude=./.ci . | tar -xf - -C "$WORK/context"

# Instructions, one a line, continuation lines joined, comments dropped.
awk '
    /^[ \t]*#/ && cont == "" { next }
    {
        line = $0
        if (sub(/\\[ \t]*$/, "", line)) { cont = cont line " "; next }
        line = cont line; cont = ""
        if (line ~ /^[ \t]*$/) next
        print line
    }' "$DOCKERFILE" >"$WORK/instructions"

in_root() { # in_root ROOT WORKDIR ENV CMD
    chroot "$1" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root $3 /bin/sh -c "cd '${2:-/}' && $4"
}

ROOT=
STAGE=
while IFS= read -r line; do
    instr=${line%% *}
    args=${line#* }
    case "$instr" in
    FROM)
        STAGE=$(echo "$args" | awk '{print $3}')
        [ -n "$STAGE" ] || STAGE=final
        ROOT="$WORK/stage-$STAGE"
        echo "docker-check: stage $STAGE from $(echo "$args" | awk '{print $1}')"
        cp -a "$WORK/base" "$ROOT"
        cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
        mount -t proc proc "$ROOT/proc" && MOUNTS="$ROOT/proc $MOUNTS"
        eval "WORKDIR_$STAGE=/ ENV_$STAGE=''"
        ;;
    WORKDIR)
        mkdir -p "$ROOT$args"
        eval "WORKDIR_$STAGE=\$args"
        ;;
    ENV)
        eval "ENV_$STAGE=\"\$ENV_$STAGE \$args\""
        ;;
    COPY)
        eval "wd=\$WORKDIR_$STAGE"
        set -- $args
        case "$1" in
        --from=*)
            from=${1#--from=}
            mkdir -p "$ROOT$(dirname "$3")"
            cp -a "$WORK/stage-$from$2" "$ROOT$3"
            ;;
        *)
            [ "$1" = . ] && [ "$2" = . ] || { echo "check.sh: unhandled COPY $args" >&2; exit 1; }
            cp -a "$WORK/context/." "$ROOT$wd/"
            ;;
        esac
        ;;
    RUN)
        echo "docker-check: RUN $(echo "$args" | tr -s ' ' | cut -c1-100)"
        eval "wd=\$WORKDIR_$STAGE env=\$ENV_$STAGE"
        in_root "$ROOT" "$wd" "$env" "$args" >"$WORK/run.log" 2>&1 ||
            { tail -n 30 "$WORK/run.log" >&2; echo "docker-check: failed" >&2; exit 1; }
        ;;
    USER) USER_SPEC=$args ;;
    ENTRYPOINT) ENTRY=$(echo "$args" | sed 's/^\["\([^"]*\)".*/\1/') ;;
    HEALTHCHECK) HEALTH=$(echo "$args" | sed 's/.*CMD \["bash", "-c", "\(.*\)"\]$/\1/; s/\\\\/\\/g') ;;
    EXPOSE | STOPSIGNAL | LABEL | ARG) ;;
    *) echo "check.sh: unhandled instruction $instr" >&2; exit 1 ;;
    esac
done <"$WORK/instructions"

# The image: the last stage, run as it would be, on a free loopback port.
eval "env=\$ENV_$STAGE"
PORT=$(( 20000 + $$ % 10000 ))
echo "docker-check: starting $ENTRY as $USER_SPEC on 127.0.0.1:$PORT"
chroot --userspec="$USER_SPEC" "$ROOT" /usr/bin/env -i $env IMPACTD_BIND=127.0.0.1 \
    IMPACTD_PORT=$PORT "$ENTRY" >"$WORK/impactd.out" 2>"$WORK/impactd.err" &
PID=$!
for _ in $(seq 100); do
    grep -q listening "$WORK/impactd.out" 2>/dev/null && break
    sleep 0.05
done
grep -q listening "$WORK/impactd.out" || { cat "$WORK/impactd.err" >&2; echo "docker-check: failed" >&2; exit 1; }

fail() { echo "docker-check: $*" >&2; echo "docker-check: failed" >&2; exit 1; }
in_root "$ROOT" / "$env IMPACTD_PORT=$PORT" "exec bash -c \"$HEALTH\"" ||
    fail "the HEALTHCHECK command failed"
curl -s --noproxy '*' "http://127.0.0.1:$PORT/healthz" | grep -q '"status": *"ok"' ||
    fail "/healthz did not answer ok"
curl -s --noproxy '*' -H 'Content-Type: application/json' "http://127.0.0.1:$PORT/v1/toi" \
    -d '{"a":{"radius":0.5,"position":[0,0],"velocity":[1,0]},"b":{"radius":0.5,"position":[3,0],"velocity":[-1,0]}}' |
    grep -q '"time":1.0,' || fail "/v1/toi gave a wrong answer"
ps -o user= -p "$PID" | grep -qv '^root$' || fail "the daemon runs as root"
kill -TERM "$PID"
wait "$PID" || fail "the daemon did not exit 0 on SIGTERM"
PID=
du -sh "$ROOT/usr/local/bin/impactd" | awk '{print "docker-check: binary " $1}'
echo "docker-check: passed"
