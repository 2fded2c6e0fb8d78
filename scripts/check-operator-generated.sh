#!/usr/bin/env bash
# Regenerates the operator's deepcopy code, CRD and RBAC in a scratch copy of
# services/operator and fails if they differ from what is committed: a marker
# changed without `make operator-generate` would ship a CRD or a role that
# does not match the code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
op=services/operator
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/services"
cp -r "$root/$op" "$scratch/$op"
# The module's replace line points at ../../pkg; the copy builds on its own
# (GOWORK=off), as the standalone check builds it.
ln -s "$root/pkg" "$scratch/pkg"
rm -rf "$scratch/$op/config/crd" "$scratch/$op/config/rbac"
find "$scratch/$op/api" -name 'zz_generated.*' -delete
GOWORK=off "$root/scripts/operator-generate.sh" "$scratch/$op"
stale=""
for d in config/crd config/rbac api; do
  if ! diff -r "$root/$op/$d" "$scratch/$op/$d" >/dev/null; then
    diff -r "$root/$op/$d" "$scratch/$op/$d" | head -40
    stale="$stale $op/$d"
  fi
done
if [ -n "$stale" ]; then
  echo "check-operator-generated: stale:$stale; run 'make operator-generate' and commit the result" >&2
  exit 1
fi
echo "check-operator-generated: $op deepcopy, config/crd and config/rbac are up to date"
