#!/usr/bin/env bash
# Regenerates the protobuf code into a scratch copy and fails if it differs
# from what is committed: generated code must never go stale. Both outputs
# are checked: the Go code of every contract (pkg/gen, proto/buf.gen.yaml)
# and the web client's TypeScript of the client protocol (web/src/gen,
# proto/buf.gen.web.yaml, with protoc-gen-es from web/node_modules).
set -euo pipefail
root=$(pwd)
if [ ! -f proto/buf.gen.yaml ]; then
  echo "check-generated: no proto/buf.gen.yaml yet, nothing to check"; exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r proto "$scratch/proto"
mkdir -p "$scratch/pkg" "$scratch/web/src"
(cd "$scratch/proto" && PATH="$root/bin:$PATH" buf generate)
(cd "$scratch/proto" && PATH="$root/bin:$root/web/node_modules/.bin:$PATH" \
  buf generate --template buf.gen.web.yaml --path pulka/gateway/v1)
stale=""
for d in pkg/gen web/src/gen; do
  if ! diff -r "$root/$d" "$scratch/$d" >/dev/null; then
    diff -r "$root/$d" "$scratch/$d" | head -40
    stale="$stale $d"
  fi
done
if [ -n "$stale" ]; then
  echo "check-generated: stale:$stale; run 'make generate' and commit the result" >&2
  exit 1
fi
echo "check-generated: pkg/gen and web/src/gen are up to date"
