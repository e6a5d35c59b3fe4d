#!/usr/bin/env bash
# Rewrites runtime/src/testing/strategic.tsv, how the fake API server
# merges Kubernetes' built-in kinds (strategic merge patch strategies and
# keys; server-side apply's list-maps, sets and atomic values),
# from the OpenAPI v3 definitions of k8s.io/kubernetes (fetched as a Go
# module) of one version, the newest `v1_*` feature of k8s-openapi: raise
# VERSION below with it. Kinds served only by older versions are not in
# the table (the fake merges their metadata as ObjectMeta).
#
#   runtime/strategic/regen.sh            rewrite the table
#   runtime/strategic/regen.sh --check    exit 1 if the table is stale
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
export GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"
VERSION=1.37.2

k8s="$(go mod download -json "k8s.io/kubernetes@v${VERSION}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -d "$k8s" ] || { echo "regen.sh: could not download k8s.io/kubernetes@v${VERSION}" >&2; exit 1; }

table="$HERE/../src/testing/strategic.tsv"
out="$table"
if [ "${1:-}" = "--check" ]; then
    out="$(mktemp)"
    trap 'rm -f "$out"' EXIT
fi
(cd "$HERE/regen" && go run . -out "$out" "$k8s/api/openapi-spec/v3")
if [ "${1:-}" = "--check" ]; then
    if ! cmp -s "$out" "$table"; then
        echo "runtime/src/testing/strategic.tsv is stale: run runtime/strategic/regen.sh" >&2
        exit 1
    fi
    echo "runtime/src/testing/strategic.tsv is up to date"
fi
