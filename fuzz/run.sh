#!/usr/bin/env bash
# Runs every fuzz target (or those named) for SECONDS each (default 600) on
# its committed corpus, one job per target, and prints one line per target:
# executions, time, and whether it found a crash (the input is left in
# fuzz/artifacts/<target>/). Needs the nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`). New corpus entries are written to
# fuzz/corpus/<target>/; minimize before committing:
# `cargo +nightly fuzz cmin <target>`.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${SECONDS_PER_TARGET:-600}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
mkdir -p logs
for t in "${targets[@]}"; do
    log="logs/$t.log"
    status=ok
    cargo +nightly fuzz run -O "$t" -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        >"$log" 2>&1 || status=crash
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    echo "$t: ${runs:-?} executions in ${seconds}s: $status"
done
