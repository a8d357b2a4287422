#!/usr/bin/env bash
# `make chaos`: the chaos suite (tests/tests/e2e/chaos/mod.rs): scenarios of worker and Temporal server
# kills, outages, a BMC fault matrix, orphaned scripts and PostgreSQL restarts; prints one table
# (lost, stuck, installed more than once per scenario) and fails on any unexpected outcome.
# HOSTFW_CHAOS_SEED=<n> replays the random moments of a run; HOSTFW_CHAOS_ONLY=<key>,… picks scenarios.
# Before it, two randomized suites on fresh seeds they print (each replays with its variable):
# - the gate properties (model/tests/it/properties) on many more random evolving sites than
#   `make test` runs (6,000 per property, about 3 minutes): HOSTFW_PROPTEST_SEED=<n>,
#   HOSTFW_PROPTEST_CASES=<n> sets the cases per property;
# - random signal sequences on a real worker (tests/tests/e2e/signal_sequences.rs), on 6 hosts
#   instead of 3: HOSTFW_SIGNAL_SEED=<n>, HOSTFW_SIGNAL_HOSTS=<n>.
set -euo pipefail
cd "$(dirname "$0")/.."
fresh_seed() { echo $(( (RANDOM << 30) | (RANDOM << 15) | RANDOM )); }
scripts/tools.sh
export HOSTFW_TEMPORAL_CLI="$PWD/.tools/bin/temporal"
cargo build --workspace --bins
export HOSTFW_WORKER_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/hostfw-worker"

seed="${HOSTFW_PROPTEST_SEED:-$(fresh_seed)}"
echo "gate properties: HOSTFW_PROPTEST_SEED=$seed"
HOSTFW_PROPTEST_SEED="$seed" HOSTFW_PROPTEST_CASES="${HOSTFW_PROPTEST_CASES:-6000}" \
  cargo test -p hostfw-model --test it properties::

seed="${HOSTFW_SIGNAL_SEED:-$(fresh_seed)}"
echo "signal sequences: HOSTFW_SIGNAL_SEED=$seed"
HOSTFW_SIGNAL_SEED="$seed" HOSTFW_SIGNAL_HOSTS="${HOSTFW_SIGNAL_HOSTS:-6}" \
  cargo test -p hostfw-tests --test e2e -- --nocapture signal_sequences::

# The chaos module of the one end-to-end binary; its ignored tests only (the others run in `make test`).
cargo test -p hostfw-tests --test e2e -- --ignored --nocapture chaos:: "$@"
