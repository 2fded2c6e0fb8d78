#!/usr/bin/env bash
# Measures the memory of idle players: starts bin/pulka-local (one runner), seats
# TABLES×4 guests with pulkactl load at a pace so slow that they stay idle
# (classic tables, mid-game, every client following its table), and reads the
# gateway's and the runner's live heap, goroutine stacks and goroutines three
# times: before the load, with the clients connected, and after they left (the
# tables' state stays in the runner; the gateway's per-connection memory is what
# left with the clients). Each reading forces two GCs first: after one,
# sync.Pool's victim cache still holds net/http's buffers of closed connections.
# Usage: scripts/idlemem.sh [TABLES (default 1000)]
# LOADRUN_BIN=DIR measures the services built in DIR, as in scripts/loadrun.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${1:-1000}
out=${LOADRUN_OUT:-tmp/idlemem}
mkdir -p "$out"
port=${LOADRUN_PORT:-28418}
# shellcheck source=scripts/stack.sh
. scripts/stack.sh
stack_start "$port" PULKA_WS_RATE=1000 PULKA_WS_BURST=1000 PULKA_SIGNUPS_PER_IP=1000000 \
  PULKA_WS_PER_IP=1000000 PULKA_CONN_PER_IP=1000000
# reading SERVICE: "live-heap-bytes stack-bytes goroutines" after two forced GCs.
reading() {
  local a; a=$(stack_admin "$1")
  curl -fs -o /dev/null "http://$a/debug/pprof/heap?gc=1"
  curl -fs "http://$a/debug/pprof/heap?gc=1&debug=1" >"$out/heap.txt"
  local heap stack g
  heap=$(awk '/^# HeapAlloc = /{print $4}' "$out/heap.txt")
  stack=$(awk '/^# Stack = /{print $4}' "$out/heap.txt")
  g=$(curl -fs "http://$a/debug/pprof/goroutine?debug=1" | awk 'NR==1{print $4}')
  echo "$heap $stack $g"
}
mb() { echo "$1" | awk '{printf "%.1f MB", $1/1048576}'; }
show() { # label gateway-reading runner-reading
  read -r gh gs gg <<<"$2"; read -r rh rs rg <<<"$3"
  printf '  %-28s gateway heap %9s stacks %9s goroutines %6d · runner heap %9s stacks %9s goroutines %6d\n' \
    "$1" "$(mb "$gh")" "$(mb "$gs")" "$gg" "$(mb "$rh")" "$(mb "$rs")" "$rg"
}
sleep 2
before_g=$(reading gateway); before_r=$(reading table-runner)
# A rate of one move per 1,000 s per table: nobody moves while we look.
bin/pulkactl load --server http://127.0.0.1:$port --tables "$tables" --mode paced --rate 0.001 \
  --duration 30s --warmup 1s --setup-concurrency 32 >"$out/load.txt" 2>&1 &
load_pid=$!
stack_wait_playing "$out/load.txt" "$load_pid"
sleep 10
with_g=$(reading gateway); with_r=$(reading table-runner)
clients=$((tables * 4))
wait $load_pid || { cat "$out/load.txt"; exit 1; }
sleep 3
after_g=$(reading gateway); after_r=$(reading table-runner)
echo "idle memory: $tables tables, $clients connections (bin: ${LOADRUN_BIN:-bin})"
show "before the load" "$before_g" "$before_r"
show "with $clients idle clients" "$with_g" "$with_r"
show "after they left" "$after_g" "$after_r"
read -r wh ws wg <<<"$with_g"; read -r ah as ag <<<"$after_g"
read -r rwh rws rwg <<<"$with_r"; read -r rbh rbs rbg <<<"$before_r"
awk -v wh="$wh" -v ws="$ws" -v wg="$wg" -v ah="$ah" -v as="$as" -v ag="$ag" -v n="$clients" 'BEGIN{
  h=(wh-ah)/n/1024; s=(ws-as)/n/1024
  printf "per idle connection (with − after): %.1f KB heap + %.1f KB stacks = %.1f KB; %.2f goroutines\n", h, s, h+s, (wg-ag)/n }'
awk -v wh="$rwh" -v ws="$rws" -v wg="$rwg" -v bh="$rbh" -v bs="$rbs" -v bg="$rbg" -v n="$tables" 'BEGIN{
  h=(wh-bh)/n/1024; s=(ws-bs)/n/1024
  printf "per live table in the runner (with − before): %.1f KB heap + %.1f KB stacks = %.1f KB; %.2f goroutines\n", h, s, h+s, (wg-bg)/n }'
