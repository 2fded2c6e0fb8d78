#!/usr/bin/env bash
# Runs every `go test -fuzz` target of the given modules for $FUZZTIME each
# (default 5s), so fuzz targets keep compiling and their seed corpora keep
# passing, and a short random search runs on every `make test`.
set -euo pipefail
fuzztime=${FUZZTIME:-5s}
root=$(pwd)
for m in "$@"; do
  cd "$root/$m"
  for p in $(go list ./...); do
    for f in $(go test -list '^Fuzz' "$p" 2>/dev/null | grep '^Fuzz' || true); do
      echo "==> fuzz $p $f ($fuzztime)"
      go test -run='^$' -fuzz="^${f}\$" -fuzztime="$fuzztime" "$p"
    done
  done
done
