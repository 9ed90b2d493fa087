#!/usr/bin/env bash
# Run N LDP classroom processes on this machine behind nginx: phones (/join, /api/)
# round-robin, Streamlit's websockets (dashboard, self-study pages) sticky.
#
#   LDP_CLASSROOM_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5432/ldp \
#   LDP_CLASSROOM_RATE_LIMIT_STORAGE=redis://127.0.0.1:6379 \
#     deploy/run-cluster.sh -n 2 -l 127.0.0.1:8080
#
# Options:
#   -n N        number of Streamlit processes (default: the number of cores)
#   -l ADDR     where nginx listens (default 127.0.0.1:8080; 0.0.0.0:80 for phones in the room)
#   -b PORT     first process port; process i listens on 127.0.0.1:PORT+i (default 8601)
#   -d DIR      run directory for the rendered nginx.conf, logs and pid files
#               (default: a new temporary directory, removed on exit)
#   -a LOG      nginx access log: a path, or "off" (default: <run dir>/access.log, written
#               in the template's ldp_privacy format: no client address, no query string)
#   -- ARGS     passed to every `streamlit run app.py` (e.g. -- --runner.postScriptGC true)
#
# Phones need no sticky sessions: their requests hold no state in a process. The
# dashboard's and the self-study pages' websockets do (see the template).
#
# Every process must share one database, so LDP_CLASSROOM_DATABASE_URL must name
# PostgreSQL (several processes on one SQLite file work on one machine, but the
# layout would not survive a second machine). Set LDP_CLASSROOM_INSTRUCTOR_KEY
# too when the processes do not share a data directory: the instructor's login
# cookie is checked by whichever process serves the dashboard, and the device cookies
# are signed with it. LDP_CLASSROOM_RATE_LIMIT_STORAGE=redis://... makes every process
# count the rate limits together (without it each counts its own: N times the tries).
#
# The script stays in the foreground; Ctrl-C (or SIGTERM) stops nginx and every
# process. Writes <run dir>/server-<i>.pid, <run dir>/nginx.pid and prints
# "cluster ready: http://..." once nginx and every process answer /_stcore/health.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NGINX="${NGINX:-/usr/sbin/nginx}"
PYTHON="${PYTHON:-python3}"
N="$(nproc 2>/dev/null || echo 2)"
LISTEN="127.0.0.1:8080"
BASE_PORT=8601
RUN_DIR=""
ACCESS_LOG=""
while getopts "n:l:b:d:a:h" opt; do
  case "$opt" in
    n) N="$OPTARG" ;;
    l) LISTEN="$OPTARG" ;;
    b) BASE_PORT="$OPTARG" ;;
    d) RUN_DIR="$OPTARG" ;;
    a) ACCESS_LOG="$OPTARG" ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
EXTRA_ARGS=("$@")

die() { echo "run-cluster: $*" >&2; exit 2; }
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "-n must be a positive whole number, got '$N'"
[[ -x "$NGINX" ]] || die "nginx not found at $NGINX (apt-get install nginx, or set NGINX=...)"
URL="${LDP_CLASSROOM_DATABASE_URL:-}"
[[ "$URL" == postgres* ]] || die "set LDP_CLASSROOM_DATABASE_URL to a PostgreSQL URL (postgresql+psycopg://user:pass@host:5432/db): every process must share one database"

CLEAN_RUN_DIR=0
if [[ -z "$RUN_DIR" ]]; then
  RUN_DIR="$(mktemp -d -t ldp-cluster-XXXXXX)"
  CLEAN_RUN_DIR=1
fi
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
# nginx workers (user "nobody" when started as root) must reach the run directory.
chmod 755 "$RUN_DIR"

# Every waiting phone holds a connection open (long-poll): allow as many open files as
# the hard limit permits, for nginx and the processes.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

PIDS=()
cleanup() {
  trap - EXIT INT TERM
  if [[ -s "$RUN_DIR/nginx.pid" ]]; then kill "$(cat "$RUN_DIR/nginx.pid")" 2>/dev/null || true; fi
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ "$CLEAN_RUN_DIR" == 1 ]] && rm -rf "$RUN_DIR"
  exit 0
}
trap cleanup EXIT INT TERM

# Rate limits (wrong join codes and keys, new device cookies) kept in each process's memory
# give a guesser N times the tries: every process should count in one Redis.
if ((N > 1)) && [[ -z "${LDP_CLASSROOM_RATE_LIMIT_STORAGE:-}" ]]; then
  echo "run-cluster: warning: LDP_CLASSROOM_RATE_LIMIT_STORAGE is not set, so each of the $N" \
       "processes keeps its own rate limits; set it to redis://127.0.0.1:6379 (a Redis" \
       "server) so that they share them" >&2
fi

# One Streamlit process per port, all on the same database.
UPSTREAMS=""
for ((i = 0; i < N; i++)); do
  port=$((BASE_PORT + i))
  (cd "$ROOT" && exec "$PYTHON" -m streamlit run app.py --server.headless true \
      --server.address 127.0.0.1 --server.port "$port" --browser.gatherUsageStats false \
      "${EXTRA_ARGS[@]}") >"$RUN_DIR/server-$i.log" 2>&1 &
  PIDS+=("$!")
  echo "$!" >"$RUN_DIR/server-$i.pid"
  UPSTREAMS+="server 127.0.0.1:$port max_fails=1 fail_timeout=10s; "
done

# The site file (deploy/nginx-site.conf.template) inside a minimal nginx.conf that keeps
# every path in the run directory, so no root-owned nginx state is touched.
if [[ -z "$ACCESS_LOG" ]]; then ACCESS_LOG="$RUN_DIR/access.log"; fi
if [[ "$ACCESS_LOG" != off ]]; then ACCESS_LOG="$ACCESS_LOG ldp_privacy buffer=32k flush=1s"; fi
sed -e "s|@LISTEN@|$LISTEN|g" -e "s|@UPSTREAM_SERVERS@|$UPSTREAMS|g" -e "s|@ACCESS_LOG@|$ACCESS_LOG|g" \
  -e "s|@ERROR_LOG@|stderr warn|g" \
  "$ROOT/deploy/nginx-site.conf.template" >"$RUN_DIR/ldp-classroom.conf"
cat >"$RUN_DIR/nginx.conf" <<EOF
worker_processes 1;
pid $RUN_DIR/nginx.pid;
# To stderr, which the sed below filters into <run dir>/nginx-error.log.
error_log stderr warn;
# Every waiting phone holds a long-poll: a client and an upstream connection each.
events { worker_connections 16384; }
http {
    access_log off;
    client_body_temp_path $RUN_DIR/tmp-body;
    proxy_temp_path $RUN_DIR/tmp-proxy;
    fastcgi_temp_path $RUN_DIR/tmp-fastcgi;
    uwsgi_temp_path $RUN_DIR/tmp-uwsgi;
    scgi_temp_path $RUN_DIR/tmp-scgi;
    include $RUN_DIR/ldp-classroom.conf;
}
EOF

healthy() { curl -fsS --max-time 2 "http://$1/_stcore/health" >/dev/null 2>&1; }
for ((i = 0; i < N; i++)); do
  port=$((BASE_PORT + i))
  for _ in $(seq 1 300); do
    healthy "127.0.0.1:$port" && break
    kill -0 "${PIDS[$i]}" 2>/dev/null || { tail -n 30 "$RUN_DIR/server-$i.log" >&2; die "process $i exited (log $RUN_DIR/server-$i.log)"; }
    sleep 0.1
  done
  healthy "127.0.0.1:$port" || die "process $i on port $port did not answer /_stcore/health"
done

# nginx's error log names the client's address in every line about a request (", client:
# 203.0.113.5, ...") and its format cannot be changed: the lines pass through sed, which
# writes "client: -" instead, before they reach the file.
# (env -u: nginx reads a variable named NGINX as a list of inherited sockets)
env -u NGINX "$NGINX" -e stderr -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" -g "daemon off;" \
  2> >(sed -u -E 's/, client: [^,]*/, client: -/' >>"$RUN_DIR/nginx-error.log") &
NGINX_PID=$!
for _ in $(seq 1 100); do healthy "$LISTEN" && break; sleep 0.1; done
healthy "$LISTEN" || die "nginx does not answer on $LISTEN (log $RUN_DIR/nginx-error.log)"
echo "cluster ready: http://$LISTEN/ ($N processes on ports $BASE_PORT..$((BASE_PORT + N - 1)), run dir $RUN_DIR)"

# Stay in the foreground until nginx exits or Ctrl-C. A process that dies is reported;
# nginx passes its students to the others (run it under a supervisor such as systemd
# to have it restarted).
declare -A REPORTED=()
while kill -0 "$NGINX_PID" 2>/dev/null; do
  for ((i = 0; i < N; i++)); do
    if [[ -z "${REPORTED[$i]:-}" ]] && ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
      REPORTED[$i]=1
      echo "run-cluster: process $i (port $((BASE_PORT + i))) exited; nginx sends its students to the others" >&2
    fi
  done
  sleep 1
done
echo "run-cluster: nginx exited; stopping the cluster" >&2
