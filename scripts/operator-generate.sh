#!/usr/bin/env bash
# operator-generate.sh DIR — run controller-gen (bin/controller-gen, pinned by
# tools/codegen) over the operator module in DIR: the deepcopy code beside the
# API types (api/v1alpha1/zz_generated.deepcopy.go), the CRD into
# DIR/config/crd and the operator's ClusterRole into DIR/config/rbac.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
gen=$root/bin/controller-gen
[ -x "$gen" ] || { echo "operator-generate: $gen missing; run 'make operator-generate'" >&2; exit 1; }
cd "$dir"
# The rbac markers make a ClusterRole (pulka-operator) for the Nodes alone
# and a Role in the sample's namespace pulka for everything else: the
# operator manages one namespace (-namespace, default the pool's).
"$gen" \
  paths=./... object \
  crd output:crd:artifacts:config=config/crd \
  rbac:roleName=pulka-operator output:rbac:artifacts:config=config/rbac
