#!/usr/bin/env bash
# Regenerates the protobuf Go code into a scratch copy and fails if it differs
# from what is committed: generated code must never go stale.
set -euo pipefail
root=$(pwd)
if [ ! -f proto/buf.gen.yaml ]; then
  echo "check-generated: no proto/buf.gen.yaml yet, nothing to check"; exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r proto "$scratch/proto"
mkdir -p "$scratch/pkg"
(cd "$scratch/proto" && PATH="$root/bin:$PATH" buf generate)
if ! diff -r "$root/pkg/gen" "$scratch/pkg/gen" >/dev/null; then
  diff -r "$root/pkg/gen" "$scratch/pkg/gen" | head -40
  echo "check-generated: pkg/gen is stale; run 'make generate' and commit the result" >&2
  exit 1
fi
echo "check-generated: pkg/gen is up to date"
