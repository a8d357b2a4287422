#!/usr/bin/env bash
# `make chaos`: the chaos suite. A 100-host rollout while the worker is killed with SIGKILL ten
# times and the Temporal dev server restarts once, plus a BMC fault matrix; prints a table and
# fails on any unexpected outcome. HOSTFW_CHAOS_SEED=<n> replays the random moments of a run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh
export HOSTFW_TEMPORAL_CLI="$PWD/.tools/bin/temporal"
cargo build --workspace --bins
export HOSTFW_WORKER_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/hostfw-worker"
cargo test -p hostfw-tests --test chaos -- --ignored --nocapture "$@"
