#!/usr/bin/env bash
# envtest-bins.sh — build the binaries envtest runs (kube-apiserver, etcd)
# from the Go module proxy, once per pinned version, into a cache outside the
# clone, and print the directory to use as KUBEBUILDER_ASSETS.
#
# Why build: setup-envtest downloads release tarballs from a bucket this
# project cannot rely on (only the Go module proxy, Debian and npm are
# reachable); every byte here comes through the module proxy, checked against
# sum.golang.org like any other module.
#
# Why a scratch module: k8s.io/kubernetes points its k8s.io/* staging modules
# at ./staging with replace lines, which `go install pkg@version` refuses. A
# module that requires k8s.io/kubernetes and replaces each staging module
# with its published v0.X.Y builds the same code.
#
# Idempotent: a version already built is not rebuilt (a cold kube-apiserver
# build takes about 8 minutes on two cores, etcd about 1). Logs go to stderr;
# stdout is the assets directory alone, so callers can capture it.
set -euo pipefail

# Pinned: kube-apiserver at the release of the k8s.io modules the operator
# uses (services/operator/go.mod), etcd at the version that release's go.mod
# requires.
KUBE_VERSION=${KUBE_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.7.0}
GO=${GO:-go}

cache=${XDG_CACHE_HOME:-$HOME/.cache}/pulka
assets=$cache/envtest-k8s-$KUBE_VERSION-etcd-$ETCD_VERSION
apiserver_dir=$cache/kube-apiserver-$KUBE_VERSION
etcd_dir=$cache/etcd-$ETCD_VERSION

fail() {
  echo "envtest-bins: $*" >&2
  echo "envtest-bins: the operator's tests need kube-apiserver $KUBE_VERSION and etcd $ETCD_VERSION built from the Go module proxy (GOPROXY=$($GO env GOPROXY)); fix the above and run scripts/envtest-bins.sh again" >&2
  exit 1
}

command -v "$GO" >/dev/null 2>&1 || fail "no '$GO' on PATH"

# build_in DIR BINARY PACKAGE GO.MOD-BODY: build PACKAGE as BINARY in a
# scratch module whose go.mod is GO.MOD-BODY, into DIR/BINARY.
build_in() {
  local dir=$1 bin=$2 pkg=$3 gomod=$4 ldflags=${5:-}
  if [ -x "$dir/$bin" ]; then return 0; fi
  echo "envtest-bins: building $bin into $dir (first time only; takes minutes)" >&2
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: work is local
  trap "rm -rf '$work'" RETURN
  # The package is a `tool` of the scratch module, so `go mod tidy` records
  # every module it needs and `go build` builds it from the module cache.
  printf '%s\n\ntool %s\n' "$gomod" "$pkg" >"$work/go.mod"
  (cd "$work" && GOWORK=off "$GO" mod tidy >"$work/tidy.log" 2>&1) ||
    { cat "$work/tidy.log" >&2; fail "go mod tidy for $bin failed"; }
  mkdir -p "$dir"
  (cd "$work" && GOWORK=off CGO_ENABLED=0 "$GO" build -trimpath -ldflags="$ldflags" -o "$dir/$bin.tmp" "$pkg") ||
    fail "go build $pkg failed"
  mv "$dir/$bin.tmp" "$dir/$bin"
}

staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
cloud-provider cluster-bootstrap code-generator component-base component-helpers
controller-manager cri-api cri-client cri-streaming csi-translation-lib
dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver sample-cli-plugin
sample-controller streaming"
staging_version=v0.${KUBE_VERSION#1.}
replaces=""
for m in $staging; do
  replaces+="	k8s.io/$m => k8s.io/$m $staging_version"$'\n'
done
apiserver_mod="module pulka.local/envtest-kube-apiserver

go 1.26

require k8s.io/kubernetes v$KUBE_VERSION

replace (
$replaces)"

etcd_mod="module pulka.local/envtest-etcd

go 1.26

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION"

build_in "$etcd_dir" etcd go.etcd.io/etcd/server/v3 "$etcd_mod"
# The version a release build stamps in (hack/lib/version.sh): without it the
# server reports v0.0.0-master, and clients that gate features on the
# server's version would take it for an ancient one.
v=k8s.io/component-base/version
minor=${KUBE_VERSION#1.}; minor=${minor%%.*}
apiserver_ldflags="-X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
build_in "$apiserver_dir" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$apiserver_mod" "$apiserver_ldflags"

# envtest wants both in one directory (KUBEBUILDER_ASSETS); links keep one
# build of each version however many combinations are used.
mkdir -p "$assets"
ln -sf "$apiserver_dir/kube-apiserver" "$assets/kube-apiserver"
ln -sf "$etcd_dir/etcd" "$assets/etcd"
echo "$assets"
