#!/usr/bin/env bash
# helm-bin.sh [helm|helm-docs] — build the Helm tool the chart's tests run
# (deploy/helmtest) from the Go module proxy, once per pinned version, into
# the user's cache, and print the binary's path:
#   helm       the Helm CLI (lint, template, install, upgrade), the default;
#   helm-docs  the generator of charts/pulka/README.md from values.yaml.
#
# Why build: helm's release tarballs come from get.helm.sh and helm-docs'
# from GitHub releases, which this project cannot rely on; the module proxy
# is reachable and checked against sum.golang.org. Neither module has
# replace lines, so `go install pkg@version` builds each as released.
#
# Idempotent: a version already built is not rebuilt (a cold helm build
# takes a few minutes on two cores). Logs go to stderr; stdout is the path
# alone, so callers can capture it.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v4.3.2}
HELM_DOCS_VERSION=${HELM_DOCS_VERSION:-v1.14.2}
GO=${GO:-go}

tool=${1:-helm}
case $tool in
  helm) version=$HELM_VERSION pkg=helm.sh/helm/v4/cmd/helm ;;
  helm-docs) version=$HELM_DOCS_VERSION pkg=github.com/norwoodj/helm-docs/cmd/helm-docs ;;
  *) echo "usage: $0 [helm|helm-docs]" >&2; exit 2 ;;
esac

cache=${XDG_CACHE_HOME:-$HOME/.cache}/pulka
dir=$cache/$tool-$version
bin=$dir/$tool

fail() {
  echo "helm-bin: $*" >&2
  echo "helm-bin: the chart's tests need $tool $version built from the Go module proxy (GOPROXY=$($GO env GOPROXY 2>/dev/null || echo '?')); fix the above and run scripts/helm-bin.sh $tool again" >&2
  exit 1
}

if [ ! -x "$bin" ]; then
  command -v "$GO" >/dev/null 2>&1 || fail "no '$GO' on PATH"
  echo "helm-bin: building $tool $version into $dir (first time only; takes minutes)" >&2
  mkdir -p "$dir"
  # Into a scratch GOBIN first, so an interrupted build leaves no binary
  # that a later run would take for a finished one.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  GOWORK=off GOBIN=$tmp CGO_ENABLED=0 "$GO" install -trimpath "$pkg@$version" >&2 ||
    fail "go install $pkg@$version failed"
  mv "$tmp/$tool" "$bin"
fi
"$bin" --help >/dev/null 2>&1 || fail "$bin does not run"
echo "$bin"
