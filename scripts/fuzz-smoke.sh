#!/usr/bin/env bash
# Runs every `go test -fuzz` target of the given modules for $FUZZTIME each
# (default 5s), so fuzz targets keep compiling and their seed corpora keep
# passing, and a short random search runs on every `make test`.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" at the -fuzztime boundary when its workers are slow to stop
# (go.dev/issue/75804, fixed in Go 1.27): no input failed, none is written.
# Such a run, and only such a run, is tried once more; a real finding (a
# failing input written to testdata/fuzz, a panic, a test error) fails at once.
set -euo pipefail
fuzztime=${FUZZTIME:-5s}
root=$(pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# deadline_flake: the log is the coordinator's boundary race, nothing else.
deadline_flake() {
  grep -q 'context deadline exceeded' "$log" &&
    ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"
}
# The targets are found in the test files' source rather than with
# `go test -list`, which would build every package's test binary once more
# (without -race, so none of the Go tests' builds is reused) only to list it.
for m in "$@"; do
  cd "$root/$m"
  while read -r dir pkg; do
    for f in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$dir"/*_test.go 2>/dev/null); do
      for attempt in 1 2; do
        echo "==> fuzz $pkg $f ($fuzztime)"
        if go test -run='^$' -fuzz="^${f}\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$log"; then
          break
        fi
        if [ "$attempt" = 1 ] && deadline_flake; then
          echo "==> $f: the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input; once more"
          continue
        fi
        exit 1
      done
    done
  done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}} {{.ImportPath}}{{end}}' ./...)
done
