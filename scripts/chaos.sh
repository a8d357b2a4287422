#!/usr/bin/env bash
# `make chaos`: the chaos suite (tests/tests/e2e/chaos/mod.rs): scenarios of worker and Temporal server
# kills, outages, a BMC fault matrix, orphaned scripts and PostgreSQL restarts; prints one table
# (lost, stuck, installed more than once per scenario) and fails on any unexpected outcome.
# HOSTFW_CHAOS_SEED=<n> replays the random moments of a run; HOSTFW_CHAOS_ONLY=<key>,… picks scenarios.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh
export HOSTFW_TEMPORAL_CLI="$PWD/.tools/bin/temporal"
cargo build --workspace --bins
export HOSTFW_WORKER_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/hostfw-worker"
# The chaos module of the one end-to-end binary; its ignored tests only (the others run in `make test`).
cargo test -p hostfw-tests --test e2e -- --ignored --nocapture chaos:: "$@"
