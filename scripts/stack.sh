# shellcheck shell=bash
# Sourced by scripts/loadrun.sh and scripts/idlemem.sh: starts bin/pulka-local with one
# runner for a measurement, finds its services' admin addresses in its log, and waits
# for pulkactl load to start playing. Expects $out (the run's directory) to be set.

# stack_start PORT [VAR=value ...]: starts pulka-local (the services of $LOADRUN_BIN,
# default bin) on 127.0.0.1:PORT with the given environment, logging to $out/local.log,
# stops it when the calling script exits, and returns once the gateway and the runner
# have said where their admin servers listen and the gateway serves its page.
# LOADRUN_PREFIX (words, e.g. "taskset -c 1") runs pulka-local under that command;
# what it starts inherits it. Sets local_pid.
stack_start() {
  local port=$1; shift
  local bin=${LOADRUN_BIN:-bin}
  local cluster=()
  # shellcheck disable=SC2206 # "M R": two words on purpose
  [ -n "${LOADRUN_CLUSTER:-}" ] && cluster=($LOADRUN_CLUSTER) && cluster=(-cluster-masters "${cluster[0]}" -cluster-replicas "${cluster[1]:-0}")
  local extra=()
  # shellcheck disable=SC2206 # flags split on spaces on purpose
  [ -n "${LOADRUN_LOCAL_FLAGS:-}" ] && extra=($LOADRUN_LOCAL_FLAGS)
  local prefix=()
  # shellcheck disable=SC2206 # a command and its arguments, split on spaces on purpose
  [ -n "${LOADRUN_PREFIX:-}" ] && prefix=($LOADRUN_PREFIX)
  "${prefix[@]}" env "$@" "$bin/pulka-local" "${cluster[@]}" "${extra[@]}" -bin-dir "$(realpath "$bin")" \
    -addr "127.0.0.1:$port" -runners 1 -raw-logs >"$out/local.log" 2>&1 &
  local_pid=$!
  trap 'kill $local_pid 2>/dev/null; wait $local_pid 2>/dev/null || true' EXIT
  for _ in $(seq 150); do
    [ -n "$(stack_admin gateway)" ] && [ -n "$(stack_admin table-runner)" ] &&
      curl -fs -o /dev/null "http://127.0.0.1:$port/" && return 0
    kill -0 "$local_pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "pulka-local did not come up on 127.0.0.1:$port; its log is $out/local.log:" >&2
  tail -20 "$out/local.log" >&2
  return 1
}

# stack_admin SERVICE: the host:port of SERVICE's admin server (metrics, pprof).
stack_admin() {
  grep -o "\"service\":\"$1\"[^}]*admin_addr\":\"[^\"]*" "$out/local.log" 2>/dev/null |
    head -1 | grep -o '[0-9.]*:[0-9]*$'
}

# stack_wait_playing FILE PID: waits until the pulkactl load writing FILE has opened
# and joined its tables (its "playing" line), so that a measured window leaves out the
# setup's sign-ups and sits. Fails, printing FILE, if PID exits first.
stack_wait_playing() {
  for _ in $(seq 1200); do
    grep -q 'playing' "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { cat "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "pulkactl load did not start playing in 120 s:" >&2
  cat "$1" >&2
  return 1
}
