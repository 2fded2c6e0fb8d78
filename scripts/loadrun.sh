#!/usr/bin/env bash
# Measures Pulka under pulkactl load on this machine: starts bin/pulka-local (one runner,
# instant bots, frame and sign-up limits raised for one client process), runs one load
# with the given pulkactl load flags, and prints the load's result with each process's
# CPU seconds over the measured window and Redis's command statistics.
# Usage: scripts/loadrun.sh --tables 100 --duration 20s --warmup 3s [more pulkactl load flags]
# LOADRUN_BIN=DIR runs the services built in DIR (e.g. an older commit's, to compare
# builds back to back with the same load generator, bin/pulkactl). LOADRUN_GEN=FILE runs
# that load generator instead (a build whose client protocol differs needs its own).
# LOADRUN_GOGC=N runs the services (not the load generator) with GOGC=N, LOADRUN_GOMAXPROCS=N
# with GOMAXPROCS=N; LOADRUN_GEN_GOMAXPROCS=N runs the load generator with GOMAXPROCS=N, and
# LOADRUN_GEN_ENV="VAR=value ..." with those variables (e.g. "GODEBUG=gctrace=1 GOGC=400"; what
# the runtime prints goes to the report's file, tmp/loadrun/load.txt); LOADRUN_SVC_ENV="..." the
# same for pulka-local and every service (their output: tmp/loadrun/local.log).
# LOADRUN_CLUSTER="M R" runs the services on a Redis Cluster of M masters with R replicas
# each (pulka-local -cluster-masters M -cluster-replicas R); redis-server's CPU is then the
# sum over every node, and its command statistics are the first node's.
# LOADRUN_LOCAL_FLAGS="..." adds pulka-local flags (e.g. "-redis 127.0.0.1:6390" for a Redis you
# started with the settings to measure, such as appendfsync always); LOADRUN_REDIS_PIDS="pid ..."
# names that Redis's processes for the CPU figures.
# LOADRUN_PIN="G S" pins the load generator to CPUs G and the services (pulka-local, Redis and
# every service it starts) to CPUs S (taskset lists, e.g. "0 1"; then "1 0" for the reverse), so
# that the generator's work does not land in the services' latency; each Go process then sees
# only its CPUs (GOMAXPROCS follows). A Redis of LOADRUN_LOCAL_FLAGS is not pinned.
# Pinned, the generator also runs at real-time priority (chrt -f 10, where allowed): the
# machine's own daemons and kernel threads (kdamond, a broker's scheduler, rcu) took its
# core for up to 2-4 ms at a time under the normal scheduler, and 1.3-1.7 % of its moves
# left more than 1 ms late; with it, 0.15 % (issue 24). The services keep the normal
# scheduler: such neighbours are part of what they meet. LOADRUN_GEN_RT=0 turns it off.
# The report starts with the CPU model and the pinning; per process it gives the cores used
# (and each service's share of the services' CPU, the figure to compare builds by on a drifting machine),
# the CPU per move, and the system calls per move (all of them, counted by perf when it can
# attach; read+write from /proc/PID/io always), and how many times each Go service collected
# its garbage over the window (from its /metrics).
# LOADRUN_CPU_TIMELINE=1 also prints each process's CPU per second of the window.
# LOADRUN_PROFILE=1 also writes CPU profiles of the gateway, the runner and the load
# generator over the window to $LOADRUN_OUT (default tmp/loadrun): go tool pprof bin/gateway tmp/loadrun/gateway.prof
# LOADRUN_TRACE=1 also writes the load generator's execution trace of the window's first 3 s
# there (pulkactl.trace; go tool trace -pprof=sched tmp/loadrun/pulkactl.trace).
# LOADRUN_STAGES=RATIO samples that share of the moves (e.g. 0.05) in every service's traces and
# has the generator receive their spans (pulkactl load --stages): the report then splits the
# sampled moves' latency by stage (gateway in, to the runner, runner, to the gateway, gateway
# out). Recording and exporting spans costs the services CPU: compare latencies without it.
# The spans go to 127.0.0.1:LOADRUN_STAGES_PORT (default: the gateway's port + 100). The services
# start before the generator listens there; a span exported in that gap makes the exporter back
# off (up to a minute) while the spans queue, which the generator's wait for them (up to 15 s
# after the window) may not cover: a report with many moves "missing a span" is that.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${LOADRUN_OUT:-tmp/loadrun}
mkdir -p "$out"
port=${LOADRUN_PORT:-28417}
# shellcheck source=scripts/stack.sh
. scripts/stack.sh
pin_gen=() pin_svc=()
if [ -n "${LOADRUN_PIN:-}" ]; then
  read -r g_cpus s_cpus <<<"$LOADRUN_PIN"
  [ -n "${s_cpus:-}" ] || { echo "loadrun: LOADRUN_PIN=\"G S\": the generator's CPUs, then the services' (e.g. \"0 1\")" >&2; exit 2; }
  command -v taskset >/dev/null || { echo "loadrun: LOADRUN_PIN needs taskset (util-linux)" >&2; exit 2; }
  pin_gen=(taskset -c "$g_cpus") pin_svc=(taskset -c "$s_cpus")
  gen_rt=
  if [ "${LOADRUN_GEN_RT:-1}" != 0 ]; then
    if command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then
      pin_gen=(taskset -c "$g_cpus" chrt -f 10) gen_rt=", the generator at real-time priority (SCHED_FIFO 10)"
    else
      echo "loadrun: cannot run the generator at real-time priority (chrt -f 10 refused: root or CAP_SYS_NICE); it runs at normal priority" >&2
    fi
  fi
fi
stage_env=() stage_flags=()
if [ -n "${LOADRUN_STAGES:-}" ]; then
  stage_addr=127.0.0.1:${LOADRUN_STAGES_PORT:-$((port + 100))}
  # Batches every 200 ms, and room for a second's spans of a saturated run.
  stage_env=(OTEL_EXPORTER_OTLP_ENDPOINT="http://$stage_addr" OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://$stage_addr/v1/traces"
    OTEL_TRACES_SAMPLER=parentbased_traceidratio
    OTEL_TRACES_SAMPLER_ARG="$LOADRUN_STAGES" OTEL_BSP_SCHEDULE_DELAY=200 OTEL_BSP_MAX_QUEUE_SIZE=65536)
  stage_flags=(--stages "$stage_addr")
fi
# shellcheck disable=SC2086 # LOADRUN_SVC_ENV is a list of VAR=value words
LOADRUN_PREFIX="${pin_svc[*]}" stack_start "$port" "${stage_env[@]}" ${LOADRUN_SVC_ENV:-} ${LOADRUN_GOMAXPROCS:+GOMAXPROCS=$LOADRUN_GOMAXPROCS} GOGC="${LOADRUN_GOGC:-100}" \
  PULKA_RUNNER_BOT_DELAY=1ms PULKA_WS_RATE=1000 PULKA_WS_BURST=1000 PULKA_SIGNUPS_PER_IP=1000000 \
  PULKA_WS_PER_IP=1000000 PULKA_CONN_PER_IP=1000000 PULKA_LOBBY_CREATES_PER_MINUTE=1000000 \
  PULKA_LOBBY_COMMANDS_PER_MINUTE=1000000 PULKA_LOBBY_COIN_SITS_PER_MINUTE=1000000
pids() { pgrep -P "$local_pid" -f "$1" | head -1; }
# CPU ticks and system calls are summed over a space-separated list of pids
# (every node of a Redis Cluster).
cpu() { local n=0 x; for x in $1; do n=$((n + $(awk '{print $14+$15}' /proc/"$x"/stat))); done; echo "$n"; }
# read and write system calls of a process so far (all its threads): a count
# of I/O per move that does not move with the machine's speed as CPU does.
sysc() { local n=0 x; for x in $1; do n=$((n + $(awk '/^sysc[rw]:/{n+=$2} END{print n}' /proc/"$x"/io))); done; echo "$n"; }
declare -A pid
for p in gateway table-runner scoring lobby; do pid[$p]=$(pids "$p"); done
pid[redis-server]=${LOADRUN_REDIS_PIDS:-$(pgrep -P "$local_pid" -f redis-server | tr '\n' ' ')}
gen_flags=()
[ -n "${LOADRUN_PROFILE:-}" ] && gen_flags=(--cpuprofile "$out/pulkactl.prof")
[ -n "${LOADRUN_TRACE:-}" ] && gen_flags+=(--trace "$out/pulkactl.trace")
# shellcheck disable=SC2086 # LOADRUN_GEN_ENV is a list of VAR=value words
"${pin_gen[@]}" env ${LOADRUN_GEN_GOMAXPROCS:+GOMAXPROCS=$LOADRUN_GEN_GOMAXPROCS} ${LOADRUN_GEN_ENV:-} "${LOADRUN_GEN:-bin/pulkactl}" load --server http://127.0.0.1:$port "${gen_flags[@]}" "${stage_flags[@]}" "$@" >"$out/load.txt" 2>&1 &
load_pid=$!
# The measured window starts after the warm-up; sample CPU over its middle part.
warm=$(printf '%s\n' "$@" | awk 'p{print; exit} /^--warmup$/{p=1}'); warm=${warm:-2s}
dur=$(printf '%s\n' "$@" | awk 'p{print; exit} /^--duration$/{p=1}'); dur=${dur:-10s}
tosec() { local v=$1; case $v in *ms) echo "${v%ms}/1000" | bc -l;; *s) echo "${v%s}";; *m) echo "${v%m}*60" | bc;; esac; }
# The generator's warm-up starts once its tables are open and joined ("playing"); the
# window must not include the setup's sign-ups and sits, or the lobby's work.
stack_wait_playing "$out/load.txt" "$load_pid"
sleep "$(tosec "$warm")"; sleep 1
pid[pulkactl]=$load_pid
# steal: time the hypervisor ran something else while this machine wanted its
# CPUs (/proc/stat's 8th field). A run with much of it is not comparable.
steal() { awk '/^cpu /{print $9}' /proc/stat; }
raddr=$(grep -o 'redis_addr":"[^"]*' "$out/local.log" | head -1 | cut -d'"' -f3)
rcli() { redis-cli -u "redis://$raddr" "$@" | tr -d '\r'; }
# Redis's own view of the window's tail: events over 1 ms (LATENCY) and commands over 1 ms
# (SLOWLOG), both from here on.
rcli CONFIG SET latency-monitor-threshold 1 >/dev/null; rcli LATENCY RESET >/dev/null
rcli CONFIG SET slowlog-log-slower-than 1000 >/dev/null; rcli SLOWLOG RESET >/dev/null
# Collections per Go service over the window (go_gc_duration_seconds_count), read before
# the CPU readings start and after they end so that the scrapes stay out of the figures.
gc_svcs=(gateway table-runner scoring lobby)
gcs() { { curl -fs --max-time 2 "http://$(stack_admin "$1")/metrics" 2>/dev/null || true; } | awk '/^go_gc_duration_seconds_count/{print $2}'; }
declare -A g0 g1; for p in "${gc_svcs[@]}"; do g0[$p]=$(gcs "$p"); done
declare -A c0 s0; for p in "${!pid[@]}"; do c0[$p]=$(cpu "${pid[$p]}"); s0[$p]=$(sysc "${pid[$p]}"); done
st0=$(steal)
t0=$(date +%s.%N)
win=$(echo "$(tosec "$dur") - 2" | bc -l)
# Every system call of each process over the window, where perf may count them.
perf_ok= perf_pids=()
if command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
  perf_ok=1
  for p in "${!pid[@]}"; do
    # shellcheck disable=SC2086 # pids separated by spaces become perf's comma list
    perf stat -x, -e raw_syscalls:sys_enter -p "$(echo ${pid[$p]} | tr ' ' ',')" -o "$out/syscalls-$p.csv" -- sleep "$win" >/dev/null 2>&1 &
    perf_pids+=($!)
  done
fi
if [ -n "${LOADRUN_PROFILE:-}" ]; then
  for svc in ${LOADRUN_PROFILE_SERVICES:-gateway table-runner}; do
    curl -fs -o "$out/$svc.prof" "http://$(stack_admin "$svc")/debug/pprof/profile?seconds=${win%.*}" &
  done
fi
if [ -n "${LOADRUN_CPU_TIMELINE:-}" ]; then
  order=(gateway table-runner redis-server scoring pulkactl)
  printf '%-6s' t >"$out/cpu-timeline.txt"; printf ' %13s' "${order[@]}" >>"$out/cpu-timeline.txt"; echo >>"$out/cpu-timeline.txt"
  declare -A prev; for p in "${order[@]}"; do prev[$p]=$(cpu "${pid[$p]}"); done
  # Each second's readings take time too: keep to the window by the clock,
  # or the last reading comes after the generator has exited.
  for s in $(seq 0 $(( ${win%.*} - 1 ))); do
    left=$(echo "$t0 + $s + 1 - $(date +%s.%N)" | bc -l)
    case $left in -*) break;; esac
    sleep "$left"
    printf '%-6s' "+${s}s" >>"$out/cpu-timeline.txt"
    for p in "${order[@]}"; do
      now=$(cpu "${pid[$p]}"); printf ' %13s' "$(( now - prev[$p] ))%" >>"$out/cpu-timeline.txt"; prev[$p]=$now
    done
    echo >>"$out/cpu-timeline.txt"
  done
else
  sleep "$win"
fi
t1=$(date +%s.%N)
st1=$(steal)
declare -A c1 s1; for p in "${!pid[@]}"; do c1[$p]=$(cpu "${pid[$p]}"); s1[$p]=$(sysc "${pid[$p]}"); done
for p in "${gc_svcs[@]}"; do g1[$p]=$(gcs "$p"); done
wait $load_pid || true
cat "$out/load.txt"
[ -n "${LOADRUN_CPU_TIMELINE:-}" ] && { echo "CPU per second of the window (% of one core; the window starts 1 s in):"; cat "$out/cpu-timeline.txt"; }
hz=$(getconf CLK_TCK)
el=$(echo "$t1 - $t0" | bc -l)
# perf writes its counts when its window's sleep ends.
[ ${#perf_pids[@]} -eq 0 ] || wait "${perf_pids[@]}" || true
pinning=none; [ -n "${LOADRUN_PIN:-}" ] && pinning="the generator on CPUs $g_cpus, the services on CPUs $s_cpus${gen_rt:-}"
echo "CPU model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs; pinning: $pinning"
echo "CPU over ${el%.*}s of the window (cores): load average $(cut -d' ' -f1-3 /proc/loadavg), stolen by the hypervisor $(echo "($st1 - $st0) / $hz / $el" | bc -l | xargs printf '%.2f')"
rate=$(grep -o '[0-9.]* moves/s end to end' "$out/load.txt" | cut -d' ' -f1)
# Share: each service's part of the services' CPU, from the same window. This machine class
# drifts by a tenth within minutes, moving every process together, so two builds' totals in
# runs a minute apart differ by more than most changes do; one process's share does not drift
# so (issue 24, session 26: the gateway's share fell in every pair where the totals could not
# tell the builds apart).
echo "  process        cores  CPU µs/move  syscalls/move  read+write/move  share of services"
tot=0; stot=0; atot=0; svc=0
declare -A cores
for p in gateway table-runner redis-server scoring lobby pulkactl; do
  cores[$p]=$(echo "(${c1[$p]} - ${c0[$p]}) / $hz / $el" | bc -l)
  [ "$p" = pulkactl ] || svc=$(echo "$svc + ${cores[$p]}" | bc -l)
done
for p in gateway table-runner redis-server scoring lobby pulkactl; do
  c=${cores[$p]}; tot=$(echo "$tot + $c" | bc -l)
  sc=$(echo "(${s1[$p]} - ${s0[$p]}) / $el / ${rate:-1}" | bc -l); stot=$(echo "$stot + $sc" | bc -l)
  all=-
  if [ -n "$perf_ok" ] && n=$(awk -F, '/raw_syscalls/{print $1}' "$out/syscalls-$p.csv" 2>/dev/null) && [[ $n =~ ^[0-9]+$ ]]; then
    all=$(echo "$n / $win / ${rate:-1}" | bc -l | xargs printf '%.1f'); atot=$(echo "$atot + $all" | bc -l)
  fi
  share=-; [ "$p" = pulkactl ] || share=$(echo "if ($svc > 0) 100 * $c / $svc else 0" | bc -l | xargs printf '%.1f %%')
  printf '  %-13s %.2f   %9.1f   %12s   %14.2f   %16s\n' "$p" "$c" "$(echo "$c * 1000000 / ${rate:-1}" | bc -l)" "$all" "$sc" "$share"
done
printf '  %-13s %.2f   %9.1f   %12s   %14.2f\n' total "$tot" "$(echo "$tot * 1000000 / ${rate:-1}" | bc -l)" "$([ -n "$perf_ok" ] && printf '%.1f' "$atot" || echo -)" "$stot"
echo "  (services = total less pulkactl; syscalls/move from perf over the window, - where it could not attach)"
# At GOMAXPROCS 1 a collection's mark phase holds moves back (its fractional worker runs ahead
# of them): at 1,000 paced tables about 40 % of the p99 (docs/benchmarks.md, issue 24).
gcline=; for p in "${gc_svcs[@]}"; do
  if [[ ${g0[$p]:-} =~ ^[0-9]+$ && ${g1[$p]:-} =~ ^[0-9]+$ ]]; then gcline+=" $p $(( g1[$p] - g0[$p] )),"; else gcline+=" $p -,"; fi
done
echo "Go collections over the window:${gcline%,} (go_gc_duration_seconds_count; - where /metrics could not be read)"
rcli INFO commandstats | grep calls >"$out/commandstats.txt"
echo "Redis over the window: events over 1 ms (LATENCY LATEST: event, last at, last ms, worst ms) and commands over 1 ms (SLOWLOG, $(rcli SLOWLOG LEN) of them):"
rcli LATENCY LATEST | paste -sd' ' | sed 's/^/  /'
# The slow log by command: how many, the slowest (µs), and the first key of the slowest.
rcli --no-raw SLOWLOG GET 128 | awk '
  function flush() { if (c == "") return; n[c]++; if (us > m[c]) { m[c] = us; k[c] = a }; c = ""; a = "" }
  /^ *[0-9]+\) 1\) \(integer\)/ { flush() }
  /^ +3\) \(integer\)/ { us = $3 + 0 }
  /^ +4\) +1\) "/ { c = $NF; gsub(/"/, "", c); c = tolower(c) }
  /^ +2\) "/ && c != "" && a == "" { a = $2 }
  END { flush(); for (x in n) printf "  %-10s %4d over 1 ms, slowest %6d µs (%s)\n", x, n[x], m[x], k[x] }' | sort -k2 -nr
echo "Redis commands over the whole run (setup included), by time spent; all in $out/commandstats.txt:"
sort -t= -k3 -n -r "$out/commandstats.txt" | head -8 | sed 's/^/  /'
