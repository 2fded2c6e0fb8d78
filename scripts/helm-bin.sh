#!/usr/bin/env bash
# helm-bin.sh — build the helm CLI the chart's tests run (deploy/helmtest)
# from the Go module proxy, once per pinned version, into the user's cache,
# and print the binary's path.
#
# Why build: helm's release tarballs come from get.helm.sh, which this
# project cannot rely on; the module proxy is reachable and checked against
# sum.golang.org. helm.sh/helm/v4 has no replace lines, so `go install
# pkg@version` builds it as released.
#
# Idempotent: a version already built is not rebuilt (a cold build takes a
# few minutes on two cores). Logs go to stderr; stdout is the path alone, so
# callers can capture it.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v4.3.2}
GO=${GO:-go}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/pulka
dir=$cache/helm-$HELM_VERSION
bin=$dir/helm

fail() {
  echo "helm-bin: $*" >&2
  echo "helm-bin: the chart's tests need helm $HELM_VERSION built from the Go module proxy (GOPROXY=$($GO env GOPROXY 2>/dev/null || echo '?')); fix the above and run scripts/helm-bin.sh again" >&2
  exit 1
}

if [ ! -x "$bin" ]; then
  command -v "$GO" >/dev/null 2>&1 || fail "no '$GO' on PATH"
  echo "helm-bin: building helm $HELM_VERSION into $dir (first time only; takes minutes)" >&2
  mkdir -p "$dir"
  # Into a scratch GOBIN first, so an interrupted build leaves no binary
  # that a later run would take for a finished one.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  GOWORK=off GOBIN=$tmp CGO_ENABLED=0 "$GO" install -trimpath "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2 ||
    fail "go install helm.sh/helm/v4/cmd/helm@$HELM_VERSION failed"
  mv "$tmp/helm" "$bin"
fi
"$bin" version --short >/dev/null 2>&1 || fail "$bin does not run"
echo "$bin"
