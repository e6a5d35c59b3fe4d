#!/usr/bin/env bash
# Rewrites codegen-core/builtin/schemas.tsv, the table of Kubernetes
# built-in schemas kube-codegen expands into CRDs, from upstream sources of
# every supported Kubernetes version: the OpenAPI v3 definitions of
# k8s.io/kubernetes and the Go types of k8s.io/api, k8s.io/apimachinery and
# k8s.io/kube-aggregator, all fetched as Go modules (see regen/main.go for
# what is taken from where).
#
#   codegen-core/builtin/regen.sh            rewrite the table
#   codegen-core/builtin/regen.sh --check    exit 1 if the table is stale
#
# The versions follow k8s-openapi's `v1_*` features; add a line below when
# k8s-openapi adds one.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"

VERSIONS=(
    1.33.13
    1.34.4
    1.35.4
    1.36.3
    1.37.2
)

dir_of() {
    go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'
}

args=()
for full in "${VERSIONS[@]}"; do
    minor="${full%.*}"
    staging="v0.${full#1.}"
    k8s="$(dir_of "k8s.io/kubernetes@v${full}")"
    api="$(dir_of "k8s.io/api@${staging}")"
    machinery="$(dir_of "k8s.io/apimachinery@${staging}")"
    aggregator="$(dir_of "k8s.io/kube-aggregator@${staging}")"
    for d in "$k8s" "$api" "$machinery" "$aggregator"; do
        [ -d "$d" ] || { echo "regen.sh: could not download the modules of Kubernetes ${full}" >&2; exit 1; }
    done
    args+=("$minor" "$k8s/api/openapi-spec/v3" "$api" "$machinery" "$aggregator")
done

out="$HERE/schemas.tsv"
if [ "${1:-}" = "--check" ]; then
    out="$(mktemp)"
    trap 'rm -f "$out"' EXIT
fi
(cd "$HERE/regen" && go run . -out "$out" "${args[@]}")
if [ "${1:-}" = "--check" ]; then
    if ! cmp -s "$out" "$HERE/schemas.tsv"; then
        echo "codegen-core/builtin/schemas.tsv is stale: run codegen-core/builtin/regen.sh" >&2
        exit 1
    fi
    echo "codegen-core/builtin/schemas.tsv is up to date"
fi
