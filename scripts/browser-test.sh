#!/usr/bin/env bash
# browser-test.sh — what `make browser-test` runs: the web client's tests in a
# real browser (web/e2e, docs/web-client.md "Browser tests"). It makes sure
# Debian's Chromium is there, builds what is needed, starts all of Pulka on a
# free port with bin/pulka-local (Redis, lobby, scoring, a table runner, the
# gateway serving the web client), runs the tests against it, and stops
# everything again, also when a test fails or the run is interrupted.
#
# Environment: PULKA_E2E_MEASURE=1 holds the timings to their goals (a quiet
# machine: measure.e2e.ts's p99 under 16 ms); PULKA_E2E_SEED repeats a run's random choices; PULKA_E2E_DEBUG=1
# logs every WebSocket frame; PULKA_E2E_OUT moves the screenshots and
# numbers (default web/e2e/out); extra arguments go to Vitest (a file name
# filter, e.g. scripts/browser-test.sh lobby).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHROMIUM=/usr/bin/chromium
OUT=${PULKA_E2E_OUT:-$ROOT/web/e2e/out}

# Debian's Chromium, never a browser downloaded by a test tool.
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser-test: $CHROMIUM not found; installing Debian's chromium" >&2
    if ! { apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
           { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null; }; }; then
      echo "browser-test: could not install chromium with apt-get; install it by hand (apt-get install chromium) and run again" >&2
      exit 1
    fi
  fi
  if [ ! -x "$CHROMIUM" ]; then
    echo "browser-test: the browser tests need Debian's Chromium at $CHROMIUM. Install it: sudo apt-get install chromium" >&2
    exit 1
  fi
fi

# make browser-test has built everything already (its prerequisite is build);
# run directly, build here.
if [ -z "${MAKELEVEL:-}" ]; then
  make -C "$ROOT" --no-print-directory build
fi
for bin in pulka-local gateway lobby scoring wallet table-runner; do
  [ -x "$ROOT/bin/$bin" ] || { echo "browser-test: bin/$bin is missing: run make build" >&2; exit 1; }
done
[ -d "$ROOT/web/node_modules/playwright-core" ] || { echo "browser-test: web/node_modules lacks playwright-core: run make web" >&2; exit 1; }

mkdir -p "$OUT"
PORT=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
LOG=$OUT/pulka-local.log

# Bots move at once and runners look for new tables often, so a whole game
# takes seconds; the per-IP limits are lifted because every browser of the
# run comes from 127.0.0.1. Move timers stay as they are (20 s): a browser
# must never be overtaken by its own timer.
PULKA_RUNNER_BOT_DELAY=0s \
PULKA_RUNNER_POLL_INTERVAL=100ms \
PULKA_SIGNUPS_PER_IP=100000 \
PULKA_LOGIN_PER_IP=100000 \
PULKA_WS_PER_IP=100000 \
PULKA_CONN_PER_IP=100000 \
PULKA_WS_RATE=200 \
PULKA_WS_BURST=400 \
  "$ROOT/bin/pulka-local" -addr "127.0.0.1:$PORT" -runners 1 -log-level warn -stop-timeout 5s >"$LOG" 2>&1 &
STACK=$!

stop() {
  if kill -0 "$STACK" 2>/dev/null; then
    kill -TERM "$STACK" 2>/dev/null || true
    wait "$STACK" 2>/dev/null || true
  fi
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq 1 600); do
  if grep -q 'Pulka is running' "$LOG"; then break; fi
  if ! kill -0 "$STACK" 2>/dev/null; then
    echo "browser-test: pulka-local stopped before Pulka was running:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  fi
  sleep 0.1
done
if ! grep -q 'Pulka is running' "$LOG"; then
  echo "browser-test: Pulka was not running after 60 s:" >&2
  tail -n 40 "$LOG" >&2
  exit 1
fi
echo "browser-test: Pulka is running at http://localhost:$PORT (log: $LOG)"

status=0
(cd "$ROOT/web" && PULKA_E2E_BASE_URL="http://localhost:$PORT" PULKA_E2E_OUT="$OUT" npm run --silent test:browser -- \
  --reporter=default --reporter=json --outputFile.json="$OUT/vitest.json" "$@") || status=$?
if [ "$status" != 0 ]; then
  # CI keeps only the end of the output: name the failed tests and their
  # first lines here, after Vitest's own report.
  node -e '
    const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    for (const f of r.testResults ?? []) {
      for (const t of f.assertionResults ?? []) {
        if (t.status !== "failed") continue;
        console.error(`browser-test: FAILED ${f.name.replace(/.*\/e2e\//, "")} > ${t.fullName}`);
        for (const m of t.failureMessages ?? []) console.error("  " + m.split("\n").slice(0, 6).join("\n  "));
      }
      if (f.status === "failed" && !(f.assertionResults ?? []).some((t) => t.status === "failed"))
        console.error(`browser-test: FAILED ${f.name} (outside a test): ${(f.message ?? "").split("\n")[0]}`);
    }' "$OUT/vitest.json" || true
  echo "browser-test: failed; the last lines of the services' log ($LOG):" >&2
  tail -n 30 "$LOG" >&2
fi
exit "$status"
