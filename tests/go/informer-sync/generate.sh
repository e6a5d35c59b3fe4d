#!/usr/bin/env bash
# Regenerates the deep copies, the typed clientset, the lister and the
# informer of apis/bench/v1 with Kubernetes' code generators, the way
# kube_codegen.sh's gen_helpers and gen_client do (no apply configurations:
# the benchmark only lists and watches).
set -euo pipefail
cd "$(dirname "$0")"
cg=k8s.io/code-generator/cmd
ver=v0.37.2
pkg=kube-codegen.invalid/tests/go/informer-sync
header=$(mktemp)
trap 'rm -f "$header"' EXIT
printf '// Generated for the informer_sync benchmark of kube-codegen.\n\n' >"$header"
rm -rf generated apis/bench/v1/zz_generated.deepcopy.go
go run "$cg/deepcopy-gen@$ver" --go-header-file "$header" --output-file zz_generated.deepcopy.go ./apis/bench/v1
go run "$cg/client-gen@$ver" --go-header-file "$header" \
    --output-dir generated/clientset --output-pkg "$pkg/generated/clientset" \
    --clientset-name versioned --fake-clientset=false --input-base "$pkg/apis" --input bench/v1
go run "$cg/lister-gen@$ver" --go-header-file "$header" \
    --output-dir generated/listers --output-pkg "$pkg/generated/listers" ./apis/bench/v1
go run "$cg/informer-gen@$ver" --go-header-file "$header" \
    --output-dir generated/informers --output-pkg "$pkg/generated/informers" \
    --versioned-clientset-package "$pkg/generated/clientset/versioned" \
    --listers-package "$pkg/generated/listers" ./apis/bench/v1
