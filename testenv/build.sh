#!/usr/bin/env bash
# Builds the real kube-apiserver, etcd, a matching kubectl and
# k8s.io/sample-apiserver (the aggregated API server of the aggregation
# tests) used by the end-to-end tests from Go modules, into a cache
# directory outside the clone keyed by version, and installs controller-gen
# (the CRD oracle of the differential tests) beside them. Builds only what
# is missing; does nothing when all are already there.
#
#   testenv/build.sh            build if missing, print the bin directory
#   testenv/build.sh --regen    rewrite the wrapper go.mod/go.sum after a version
#                               change in testenv/versions.env (maintainers)
#
# The wrapper modules under testenv/go/ are committed with go.mod and go.sum,
# so a normal build resolves nothing new and needs no checksum database.
set -euo pipefail

# shellcheck source=testenv/versions.env
. "$(dirname "${BASH_SOURCE[0]}")/versions.env"
STAGING_VERSION="v0.${K8S_VERSION#1.}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"   # never download a toolchain unless asked (.ci/run does on old Go)
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

BIN="$CACHE_ROOT/testenv/k8s-v${K8S_VERSION}-etcd-${ETCD_VERSION}/bin"
TOOLS="$CACHE_ROOT/tools/controller-gen-${CONTROLLER_GEN_VERSION}"

install_controller_gen() {
    [ -x "$TOOLS/controller-gen" ] && return 0
    echo "installing controller-gen ${CONTROLLER_GEN_VERSION} into $TOOLS" >&2
    mkdir -p "$TOOLS"
    GOBIN="$TOOLS" go install "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}"
}

regen() {
    local kas="$HERE/go/kube-apiserver" etcd="$HERE/go/etcd" sample="$HERE/go/sample-apiserver" gomod mods etcd_version
    gomod="$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\([^"]*\)".*/\1/p')"
    mods="$(sed -n 's|^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/src/k8s\.io/.*|\1|p' "$gomod")"
    [ -n "$mods" ] || { echo "no staging replace directives found in $gomod" >&2; exit 1; }
    etcd_version="$(sed -n 's|^[[:space:]]*go\.etcd\.io/etcd/server/v3 \(v[^ ]*\).*|\1|p' "$gomod")"
    rm -f "$kas/go.mod" "$kas/go.sum" "$etcd/go.mod" "$etcd/go.sum" "$sample/go.mod" "$sample/go.sum"
    (cd "$kas" && go mod init kube-codegen.invalid/testenv/kube-apiserver >/dev/null 2>&1 \
        && for m in $mods; do go mod edit -replace="$m=$m@$STAGING_VERSION"; done \
        && go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@v${K8S_VERSION}" \
        && go get -tool "k8s.io/kubernetes/cmd/kubectl@v${K8S_VERSION}" \
        && go mod tidy)
    (cd "$etcd" && go mod init kube-codegen.invalid/testenv/etcd >/dev/null 2>&1 \
        && go get -tool "go.etcd.io/etcd/server/v3@${etcd_version}" \
        && go mod tidy)
    # Its own module: sample-apiserver's dependency versions must not move
    # the test server's.
    (cd "$sample" && go mod init kube-codegen.invalid/testenv/sample-apiserver >/dev/null 2>&1 \
        && go get -tool "k8s.io/sample-apiserver@${STAGING_VERSION}" \
        && go mod tidy)
    if [ "$etcd_version" != "$ETCD_VERSION" ]; then
        echo "k8s.io/kubernetes v${K8S_VERSION} pins etcd ${etcd_version}: set ETCD_VERSION=${etcd_version} in testenv/versions.env" >&2
    fi
}

if [ "${1:-}" = "--regen" ]; then
    regen
    exit 0
fi

install_controller_gen
BINARIES=(etcd kube-apiserver kubectl sample-apiserver)
missing=()
for b in "${BINARIES[@]}"; do
    [ -x "$BIN/$b" ] || missing+=("$b")
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "$BIN"
    exit 0
fi

mkdir -p "$BIN"
TMP_BIN="$(mktemp -d "$BIN/../build.XXXXXX")"
trap 'rm -rf "$TMP_BIN"' EXIT
MINOR="$(echo "$K8S_VERSION" | cut -d. -f2)"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${MINOR} \
 -X k8s.io/component-base/version.gitTreeState=clean"

# Each binary is built beside its final name and moved in place when done,
# so an interrupted build never leaves one that looks complete.
build() { # <binary> <wrapper module> <package> <ldflags>
    echo "building $1 into $BIN" >&2
    (cd "$HERE/go/$2" && CGO_ENABLED=0 go build -mod=readonly -trimpath -pgo=off -ldflags "$4" \
        -o "$TMP_BIN/$1" "$3")
    mv "$TMP_BIN/$1" "$BIN/$1"
}
for b in "${missing[@]}"; do
    case "$b" in
        etcd) build etcd etcd go.etcd.io/etcd/server/v3 "-s -w" ;;
        kube-apiserver) build kube-apiserver kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$LDFLAGS" ;;
        kubectl) build kubectl kube-apiserver k8s.io/kubernetes/cmd/kubectl "$LDFLAGS" ;;
        sample-apiserver) build sample-apiserver sample-apiserver k8s.io/sample-apiserver "$LDFLAGS" ;;
    esac
done
echo "$BIN"
