#!/usr/bin/env bash
# `make test`: install what is missing, make sure the services the tests use are up, check the
# formatting and lints, run the whole suite. The end-to-end tests start their own Temporal dev
# servers and BMC simulators.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh

# PostgreSQL: the store tests run on it when it is reachable (and say so loudly when not).
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "test: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
fi

export HOSTFW_TEMPORAL_CLI="$PWD/.tools/bin/temporal"
# tools.sh installed DMTF's Redfish validators: the conformance tests of bmc-sim must not skip
# for want of them (docs/conformance.md).
export HOSTFW_CONFORMANCE_REQUIRED=1

echo "test: formatting (cargo fmt --check; rustfmt.toml is the style)"
cargo fmt --all -- --check
echo "test: lints (cargo clippy, warnings are errors; workflows/clippy.toml forbids clocks, randomness, threads and I/O)"
cargo clippy --workspace --all-targets -- -D warnings

echo "test: checking that workflows depend on no side-effecting crate"
bad=$(cargo tree -p hostfw-workflows -e normal --prefix none | grep -E '^(reqwest|sqlx|hostfw-store|hostfw-redfish) ' || true)
if [ -n "$bad" ]; then
  echo "hostfw-workflows must not depend on: $bad" >&2
  exit 1
fi
echo "test: checking that the CLI links neither the worker nor the simulator"
bad=$(cargo tree -p hostfw-starter -e normal --prefix none | grep -E '^hostfw-(worker|bmc-sim) ' || true)
if [ -n "$bad" ]; then
  echo "hostfw-starter (the hostfw CLI) must not depend on: $bad" >&2
  exit 1
fi

echo "test: checking that the test fixtures sit below every crate whose tests use them"
bad=$(cargo tree -p hostfw-fixtures -e normal --prefix none | grep -E '^hostfw-' | grep -vE '^hostfw-(fixtures|model) ' || true)
if [ -n "$bad" ]; then
  echo "hostfw-fixtures must depend on no hostfw crate but hostfw-model: $bad" >&2
  exit 1
fi

# The durability tests run the real worker binary as a child process (and kill -9 it).
cargo build --workspace --bins
export HOSTFW_WORKER_BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/hostfw-worker"

cargo test --workspace --no-fail-fast "$@"
