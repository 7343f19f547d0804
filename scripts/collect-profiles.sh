#!/bin/bash
# Regenerates schedlab's default model from real programs run on this machine, as the
# thesis (shared/seeds/000) collected system-call profiles of interactive and
# background programs and trained a decision tree on them:
#
#   data/profiles.arff    one row per observed process and round (`schedlab observe
#                         --arff --arff-format wide`), only the programs labels.txt names
#   data/labels.txt       program (comm) pattern -> INTERACTIVE | BACKGROUND
#   data/model.json       the decision tree `schedlab learn train` fits on them
#   data/model-eval.json  its k-fold and leave-one-program-out evaluation
#
# Interactive programs (bash, vim, less, python3, bc, top) run in a private tmux server
# and are driven like a person would: keys typed 100-400 ms apart, 1-3 s of thinking
# between commands. Background programs (gzip, xz, zstd, sort, find, tar, gcc, and
# nginx, redis-server and postgres under wrk, redis-benchmark and pgbench, on
# 127.0.0.1 only) run in loops at the same time. `schedlab observe` watches ROUNDS
# windows of OBSERVE_SECS each.
#
# Needs root (eBPF). Installs what is missing (DEB_PACKAGES) and nothing else. Bounded in
# time (MAX_SECONDS; the default run takes about 5 minutes) and leaves nothing behind:
# every process it started is killed, the servers it started are stopped, its temporary
# directory (files, the throwaway postgres cluster) is removed, on success, error or
# Ctrl-C alike.
#
# Settings (environment): ROUNDS (8), SESSIONS (2), OBSERVE_SECS (30), MAX_SECONDS (600), FOLDS (10),
# OUT_DIR (data), SCHEDLAB (target/release/schedlab; built if missing).
set -euo pipefail

# The script's own subshells (drivers, loops) should not look like bash processes in the
# data: run by its path, they are named after the script (comm "collect-profile"); run
# as `bash script`, they would be "bash". So rerun it by path.
if [ "$(cat /proc/$$/comm)" = bash ] && [ -x "$0" ]; then exec "$0" "$@"; fi

# Debian packages that hold the programs profiled (and the load generators).
DEB_PACKAGES="tmux vim less python3 bc gzip xz-utils zstd build-essential findutils tar coreutils
 nginx-light redis-server redis-tools wrk postgresql postgresql-client util-linux"

ROUNDS=${ROUNDS:-8}
# How many copies of each interactive program run (each gives a row per round).
SESSIONS=${SESSIONS:-2}
OBSERVE_SECS=${OBSERVE_SECS:-30}
MAX_SECONDS=${MAX_SECONDS:-600}
FOLDS=${FOLDS:-10}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_DIR=${OUT_DIR:-$ROOT/data}
SCHEDLAB=${SCHEDLAB:-$ROOT/target/release/schedlab}
# Loopback ports of the throwaway servers.
NGINX_PORT=${NGINX_PORT:-18080}
REDIS_PORT=${REDIS_PORT:-16379}
PG_PORT=${PG_PORT:-15432}
PY=/usr/bin/python3

START=$(date +%s)
say() { printf 'collect-profiles [%3ds]: %s\n' "$(($(date +%s) - START))" "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (schedlab observe needs eBPF): sudo $0"
# Setup (~40 s) + rounds + training must fit in MAX_SECONDS.
need=$((60 + ROUNDS * (OBSERVE_SECS + 3) + 60))
[ "$need" -le "$MAX_SECONDS" ] ||
    die "ROUNDS=$ROUNDS x OBSERVE_SECS=$OBSERVE_SECS needs about ${need}s, over MAX_SECONDS=$MAX_SECONDS"
DEADLINE=$((START + MAX_SECONDS))

# ---------------------------------------------------------------- cleanup
WORK=""
JOBS=()           # process-group leaders of everything started in the background
TMUX_SOCK=""       # the private tmux server's socket, in WORK
POLICY_RC_CREATED=0
PGDATA=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e
    if [ $rc -ne 0 ]; then say "failed (exit $rc); stopping everything it started"; fi
    # No "Terminated" notices for the jobs killed below.
    exec 2>/dev/null
    [ -n "$WORK" ] && touch "$WORK/stop" 2>/dev/null
    [ -n "$TMUX_SOCK" ] && tmux -S "$TMUX_SOCK" kill-server >/dev/null 2>&1
    # postgres: fast shutdown first, so that it does not leave shared memory behind.
    if [ -n "$PGDATA" ] && [ -f "$PGDATA/postmaster.pid" ]; then
        local pm
        pm=$(head -n1 "$PGDATA/postmaster.pid")
        if [ -n "$pm" ] && kill -INT "$pm" 2>/dev/null; then
            for _ in $(seq 50); do kill -0 "$pm" 2>/dev/null || break; sleep 0.2; done
        fi
    fi
    local pid
    for pid in "${JOBS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
    sleep 0.5
    for pid in "${JOBS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
    wait 2>/dev/null
    if [ "$POLICY_RC_CREATED" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
    [ -n "$WORK" ] && rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Every background job gets its own process group (job control), so that cleanup can
# end it with all its children.
set -m

# Starts "$@" in the background, in its own process group, remembered for cleanup.
spawn() {
    # set +m inside: the job's own commands stay in its group (with job control on,
    # each would get a group of its own and outlive the kill).
    (
        set +m
        "$@"
    ) &
    JOBS+=($!)
}

# ---------------------------------------------------------------- packages
install_missing() {
    command -v dpkg-query >/dev/null 2>&1 || { say "not Debian: install the equivalents of: $DEB_PACKAGES"; return; }
    local missing=() p
    for p in $DEB_PACKAGES; do
        # nginx-light is enough, but any nginx will do.
        if [ "$p" = nginx-light ] && command -v nginx >/dev/null 2>&1; then continue; fi
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != "installed" ]; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    # Installing server packages must not start their system services: policy-rc.d says no
    # (removed again afterwards if this script created it).
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        POLICY_RC_CREATED=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >/dev/null
    if [ "$POLICY_RC_CREATED" = 1 ]; then rm -f /usr/sbin/policy-rc.d; POLICY_RC_CREATED=0; fi
}
install_missing

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$PGBIN/postgres" ] || die "no postgres server binaries under /usr/lib/postgresql/*/bin"
for c in tmux vim less bc gzip xz zstd sort find tar gcc nginx redis-server redis-benchmark wrk pgbench top runuser; do
    command -v "$c" >/dev/null 2>&1 || die "$c is missing after the install step"
done
[ -x "$PY" ] || die "$PY is missing"

if [ ! -x "$SCHEDLAB" ]; then
    say "building schedlab"
    (cd "$ROOT" && cargo build --release -q -p schedlab-cli)
fi
"$SCHEDLAB" observe --help | grep -q -- '--arff-format' ||
    die "$SCHEDLAB observe has no --arff-format: rebuild it (cargo build --release -p schedlab-cli)"

# ---------------------------------------------------------------- inputs
OUT_DIR=$(realpath -m "$OUT_DIR")
WORK=$(mktemp -d /tmp/schedlab-profiles.XXXXXX)
chmod 755 "$WORK"
cd "$WORK"
mkdir -p "$WORK/home" "$WORK/in" "$WORK/rounds" "$WORK/out"
say "generating inputs in $WORK"
# Text that compresses like real text: words from the dictionary-like /usr/share files.
timeout 60 find /usr/share/doc /usr/include -type f -size -200k 2>/dev/null | head -n 4000 |
    xargs cat 2>/dev/null | head -c 24M >"$WORK/in/text" || true
head -c 8M /dev/urandom | base64 >>"$WORK/in/text"
head -c 8M "$WORK/in/text" >"$WORK/in/small"
# Lines to sort: random keys.
head -c 30M /dev/urandom | base64 -w 40 >"$WORK/in/lines"
# A C file that takes cc1 about a second at -O2.
{
    echo '#include <stdio.h>'
    echo '#include <string.h>'
    for i in $(seq 1 300); do
        echo "static int f$i(const char *s, int n) { int h = $i; for (int k = 0; k < n; k++) { h = h * 31 + s[k]; if (h % 7 == $((i % 7))) h ^= k << 3; } return h; }"
    done
    echo 'int main(int argc, char **argv) { int t = 0; const char *s = argc > 1 ? argv[1] : "x"; int n = (int)strlen(s);'
    for i in $(seq 1 300); do echo "  t += f$i(s, n);"; done
    echo '  printf("%d\n", t); return 0; }'
} >"$WORK/in/prog.c"
# What the interactive programs look at.
cp /etc/services "$WORK/home/notes.txt" 2>/dev/null || head -c 200k "$WORK/in/text" >"$WORK/home/notes.txt"
head -c 2M "$WORK/in/text" >"$WORK/home/manual.txt"

# ---------------------------------------------------------------- servers (127.0.0.1 only)
say "starting nginx, redis-server and postgres on 127.0.0.1"
mkdir -p "$WORK/nginx/html" "$WORK/nginx/logs"
head -c 16k "$WORK/in/text" >"$WORK/nginx/html/index.html"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 2;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx/tmp_body;
    proxy_temp_path $WORK/nginx/tmp_proxy;
    fastcgi_temp_path $WORK/nginx/tmp_fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp_uwsgi;
    scgi_temp_path $WORK/nginx/tmp_scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/nginx/html;
    }
}
EOF
spawn nginx -e "$WORK/nginx/logs/error.log" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;'

mkdir -p "$WORK/redis"
spawn redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
    --daemonize no --dir "$WORK/redis" --logfile "$WORK/redis/redis.log"

PGDATA="$WORK/pg/data"
mkdir -p "$WORK/pg"
chown postgres: "$WORK/pg"
timeout 120 runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust \
    --no-sync >/dev/null
spawn runuser -u postgres -- "$PGBIN/postgres" -D "$PGDATA" -p "$PG_PORT" -k "$WORK/pg" \
    -c listen_addresses=127.0.0.1 -c fsync=off -c logging_collector=off 2>"$WORK/pg/postgres.log"
ok=0
for _ in $(seq 100); do
    if "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres 2>/dev/null; then ok=1; break; fi
    sleep 0.2
done
[ $ok = 1 ] || die "postgres did not start on 127.0.0.1:$PG_PORT"
timeout 120 pgbench -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -i -s 5 postgres >/dev/null 2>&1
for _ in $(seq 50); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
done

# ---------------------------------------------------------------- background loads
# Each loop runs until the stop file appears; every command in it is bounded by timeout.
# (printf's %()T is a builtin: no `date` process per key pressed.)
running() {
    local now
    printf -v now '%(%s)T' -1
    [ ! -e "$WORK/stop" ] && [ "$now" -lt "$DEADLINE" ]
}
loop() {
    # loop SECONDS COMMAND...: runs COMMAND again and again, each run at most SECONDS.
    local limit=$1; shift
    while running; do
        timeout --foreground "$limit" "$@" >/dev/null 2>&1 || true
    done
}
load_gzip() { loop 60 sh -c "gzip -6 -c '$WORK/in/text' >/dev/null"; }
load_xz() { loop 60 sh -c "xz -6 -T1 -c '$WORK/in/small' >/dev/null"; }
load_zstd() { loop 60 sh -c "zstd -q -19 -T1 -c '$WORK/in/small' >/dev/null"; }
load_sort() { loop 60 sort -S 64M -o /dev/null "$WORK/in/lines"; }
load_find() { loop 60 find /usr -xdev -type f -size +50k; }
load_tar() { loop 60 sh -c "tar -cf - /usr/include /usr/share/doc 2>/dev/null | wc -c"; }
load_gcc() { loop 60 gcc -O2 -c "$WORK/in/prog.c" -o "$WORK/out/prog.o"; }
load_wrk() { loop 20 wrk -t1 -c8 -d15s "http://127.0.0.1:$NGINX_PORT/"; }
load_redis() { loop 30 redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -q -c 8 -n 100000 -t set,get,incr,lpush,lpop; }
load_pgbench() { loop 30 pgbench -h 127.0.0.1 -p "$PG_PORT" -U postgres -c 2 -j 1 -T 20 -n postgres; }

# ---------------------------------------------------------------- interactive programs
# Typing: one key at a time, 100-400 ms apart; thinking: 1-3 s.
pause_key() { sleep "0.$((RANDOM % 30 + 10))"; }
think() { sleep "$((RANDOM % 3 + 1)).$((RANDOM % 10))"; }
key() {
    if running; then tmux -S "$TMUX_SOCK" send-keys -t "profiles:$1" "$2" 2>/dev/null || true; fi
    pause_key
}
typed() {
    # typed WINDOW TEXT: types TEXT key by key, then Enter.
    local w=$1 text=$2 i
    for ((i = 0; i < ${#text}; i++)); do
        running || return 0
        tmux -S "$TMUX_SOCK" send-keys -t "profiles:$w" -l -- "${text:i:1}" 2>/dev/null || true
        pause_key
    done
    key "$w" Enter
}
drive_shell() {
    local w=$1
    local cmds=("ls" "ls -la" "cd /usr/share/doc" "ls | head" "cd" "cat notes.txt | head -n 20"
        "pwd" "echo hello world" "date" "grep -c tcp notes.txt" "wc -l manual.txt" "clear"
        "cat /etc/os-release" "ls -l /etc | tail" "history | tail -n 3")
    while running; do
        typed "$w" "${cmds[RANDOM % ${#cmds[@]}]}"
        think
    done
}
drive_vim() {
    local w=$1
    while running; do
        case $((RANDOM % 8)) in
        0) key "$w" G; key "$w" o; typed "$w" "a new line of notes $RANDOM"; key "$w" Escape ;;
        1) key "$w" g; key "$w" g ;;
        2) for _ in 1 2 3 4; do key "$w" j; done ;;
        3) key "$w" /; typed "$w" "tcp" ;;
        4) key "$w" n; key "$w" n ;;
        5) key "$w" d; key "$w" d; key "$w" u ;;
        6) key "$w" :; typed "$w" "w" ;;
        7) key "$w" C-f ;;
        esac
        think
    done
}
drive_less() {
    local w=$1
    while running; do
        case $((RANDOM % 6)) in
        0) key "$w" Space ;;
        1) key "$w" b ;;
        2) for _ in 1 2 3; do key "$w" j; done ;;
        3) key "$w" /; typed "$w" "the" ;;
        4) key "$w" n ;;
        5) key "$w" g ;;
        esac
        think
    done
}
drive_python() {
    local w=$1
    local exprs=("1 + 2" "sum(range(100))" "import math" "math.sqrt(2)" "[x * x for x in range(10)]"
        "'hello'.upper()" "len('schedlab')" "2 ** 64" "sorted([3, 1, 2])" "{'a': 1}.get('a')")
    while running; do typed "$w" "${exprs[RANDOM % ${#exprs[@]}]}"; think; done
}
drive_bc() {
    local w=$1
    local exprs=("2^10" "17 * 23" "scale = 5; 4 * a(1)" "sqrt(2)" "100 / 7" "e(1)")
    while running; do typed "$w" "${exprs[RANDOM % ${#exprs[@]}]}"; think; done
}

say "starting the interactive programs under tmux ($SESSIONS of each)"
# A private tmux server (its own socket), HOME in the work dir so that no history or
# viminfo file lands in the real home. The shell and the REPL run under names of their
# own (comm `bash-tty`, `python3-repl`, through symlinks): a machine runs many
# non-interactive bash and python3 processes (scripts, shims) that must not be labeled
# INTERACTIVE with them.
mkdir -p "$WORK/bin"
TMUX_SOCK="$WORK/tmux.sock"
ln -s /bin/bash "$WORK/bin/bash-tty"
ln -s "$(readlink -f "$PY")" "$WORK/bin/python3-repl"
tmuxc() { tmux -S "$TMUX_SOCK" -f /dev/null "$@"; }
env HOME="$WORK/home" LESSHISTFILE=- HISTFILE=/dev/null TERM=xterm-256color \
    tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s profiles -n top -x 120 -y 40 -c "$WORK/home" \
    "top -d 1"
DRIVERS=()
for i in $(seq 1 "$SESSIONS"); do
    cp "$WORK/home/notes.txt" "$WORK/home/notes$i.txt"
    tmuxc new-window -d -t profiles -n "shell$i" -c "$WORK/home" "$WORK/bin/bash-tty --norc --noprofile -i"
    tmuxc new-window -d -t profiles -n "vim$i" -c "$WORK/home" "vim -N -u NONE -i NONE -n notes$i.txt"
    tmuxc new-window -d -t profiles -n "less$i" -c "$WORK/home" "less manual.txt"
    tmuxc new-window -d -t profiles -n "python$i" -c "$WORK/home" "$WORK/bin/python3-repl -q"
    tmuxc new-window -d -t profiles -n "bc$i" -c "$WORK/home" "bc -q -l"
    DRIVERS+=("drive_shell shell$i" "drive_vim vim$i" "drive_less less$i" "drive_python python$i" "drive_bc bc$i")
done

say "starting the drivers and the background loads"
for d in "${DRIVERS[@]}"; do
    # shellcheck disable=SC2086 # "function window"
    spawn $d
done
for f in load_gzip load_xz load_zstd load_sort load_find load_tar load_gcc load_wrk load_redis load_pgbench; do
    spawn "$f"
done
sleep 3

# ---------------------------------------------------------------- observe
for r in $(seq 1 "$ROUNDS"); do
    left=$((DEADLINE - $(date +%s) - 60))
    if [ "$left" -lt "$OBSERVE_SECS" ]; then
        say "out of time after $((r - 1)) rounds"
        break
    fi
    say "round $r/$ROUNDS: schedlab observe --duration ${OBSERVE_SECS}s"
    timeout $((OBSERVE_SECS + 60)) "$SCHEDLAB" observe --duration "${OBSERVE_SECS}s" \
        --arff "$WORK/rounds/$r.arff" --arff-format wide --no-store >"$WORK/rounds/$r.txt" 2>&1 ||
        { cat "$WORK/rounds/$r.txt" >&2; die "schedlab observe failed in round $r"; }
done
say "stopping the programs"
touch "$WORK/stop"
tmuxc kill-server >/dev/null 2>&1 || true

# ---------------------------------------------------------------- dataset, labels, model
mkdir -p "$OUT_DIR"
cat >"$OUT_DIR/labels.txt" <<'EOF'
# Classes of the programs scripts/collect-profiles.sh runs, by process name (comm).
# `PATTERN CLASS`, `*` and `?` wildcards, the first match wins; other rows are dropped.
# Interactive: driven through tmux like a person would, typing and thinking (the shell
# is bash and the REPL python3, run under names of their own: see the script).
bash-tty INTERACTIVE
vim* INTERACTIVE
less INTERACTIVE
python3-repl INTERACTIVE
bc INTERACTIVE
top INTERACTIVE
# Background: batch jobs, servers under load, and the load generators themselves.
gzip BACKGROUND
xz BACKGROUND
zstd BACKGROUND
sort BACKGROUND
find BACKGROUND
tar BACKGROUND
gcc BACKGROUND
cc1 BACKGROUND
as BACKGROUND
nginx BACKGROUND
redis-server BACKGROUND
postgres BACKGROUND
wrk BACKGROUND
redis-benchmark BACKGROUND
pgbench BACKGROUND
EOF

say "merging ${ROUNDS} rounds into $OUT_DIR/profiles.arff"
"$PY" - "$OUT_DIR/labels.txt" "$OUT_DIR/profiles.arff" "$WORK"/rounds/*.arff <<'PYEOF'
"""Merges wide ARFF files: the union of their attributes (a numeric one a file lacks is 0
there), keeping only the rows of the programs the labels file names."""
import fnmatch
import re
import sys

labels, out, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
patterns = []
for line in open(labels):
    line = line.split("#", 1)[0].split()
    if len(line) == 2:
        patterns.append(line[0])


def tokens(line):
    """Splits an ARFF data line on commas (quotes and backslash escapes honoured), each
    field kept as written."""
    out, cur, quote, i = [], [], None, 0
    while i < len(line):
        c = line[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(line):
                cur.append(line[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == ",":
            out.append("".join(cur).strip())
            cur = []
        elif c == "%":
            break
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return out


def unquote(v):
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), v[1:-1])
    return v


relation, attrs, kinds, rows = None, [], {}, []
for path in inputs:
    names, data = [], False
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if not data and low.startswith("@relation"):
            relation = relation or line
        elif not data and low.startswith("@attribute"):
            m = re.match(r"@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.*)$", line, re.I)
            name, kind = m.group(1), m.group(2)
            names.append(name)
            if name not in kinds:
                kinds[name] = kind
                attrs.append(name)
        elif low.startswith("@data"):
            data = True
        elif data:
            values = dict(zip(names, tokens(line)))
            rows.append(values)

proc = next((a for a in attrs if unquote(a).lower() == "process"), None)
if proc is None:
    sys.exit("merge: the rounds have no `process` attribute")
kept = [r for r in rows if any(fnmatch.fnmatchcase(unquote(r.get(proc, "")), p) for p in patterns)]
with open(out, "w") as f:
    f.write("% schedlab default model data: profiles of real programs, written by\n")
    f.write("% scripts/collect-profiles.sh (one row per process and observation round).\n")
    f.write((relation or "@relation profiles") + "\n\n")
    for a in attrs:
        f.write(f"@attribute {a} {kinds[a]}\n")
    f.write("\n@data\n")
    for r in kept:
        f.write(",".join(r.get(a, "0" if kinds[a].lower() in ("numeric", "real", "integer") else "?") for a in attrs) + "\n")
counts = {}
for r in kept:
    counts[unquote(r[proc])] = counts.get(unquote(r[proc]), 0) + 1
print(f"merge: {len(kept)} of {len(rows)} rows kept from {len(inputs)} rounds: "
      + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
PYEOF

say "training: schedlab learn train (${FOLDS}-fold and leave-one-program-out)"
# From the repository, with relative paths, so that the JSON names data/model.json.
cd "$ROOT"
OUT=$(realpath --relative-to="$ROOT" "$OUT_DIR")
"$SCHEDLAB" learn train "$OUT/profiles.arff" --labels "$OUT/labels.txt" --folds "$FOLDS" \
    --out "$OUT/model.json" --json >"$OUT/model-eval.json.tmp"
mv "$OUT/model-eval.json.tmp" "$OUT/model-eval.json"
"$PY" - "$OUT/model-eval.json" <<'PYEOF' >&2
import json, sys
e = json.load(open(sys.argv[1]))
print(f"collect-profiles: {e['rows']} rows, {e['features']} features; "
      f"{e['folds']}-fold accuracy {100 * e['kfold']['accuracy']:.1f} %, "
      f"leave-one-program-out {100 * e['leave_one_program_out']['accuracy']:.1f} %")
PYEOF
say "done: $OUT_DIR/profiles.arff, labels.txt, model.json, model-eval.json"
