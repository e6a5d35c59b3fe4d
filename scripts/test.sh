#!/usr/bin/env bash
# The whole kube-codegen test suite: unit, snapshot, compile, differential
# (controller-gen) and end-to-end tests. The end-to-end tests run against a
# real kube-apiserver + etcd, built from Go modules on first use and cached
# outside the clone with controller-gen (testenv/build.sh;
# ~/.cache/kube-codegen by default).
#
#   scripts/test.sh                 everything
#   scripts/test.sh -p codegen-core extra arguments go to `cargo test`
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

for tool in cargo go openssl python3; do
    command -v "$tool" >/dev/null || { echo "scripts/test.sh: '$tool' is required (see README.md, Set-up)" >&2; exit 1; }
done

testenv/build.sh >/dev/null
if [ "$#" -eq 0 ]; then
    set -- --workspace
fi
cargo test --locked "$@"
