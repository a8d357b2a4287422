#!/usr/bin/env bash
# `make bench`: build the release bench and worker binaries, then run the benchmarks. Prints one
# table and writes it, with the machine description and the date, to docs/benchmarks.md.
# Arguments go to the bench binary, e.g. `scripts/bench.sh --only pass,history --pass-sizes 1000`
# (or `make bench ARGS="--only rollout --hosts 100"`); see `target/release/hostfw-bench --help`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh

# PostgreSQL for the scheduler-pass benchmark: start it if it is installed but stopped.
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "bench: starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
fi

# 10k simulated BMCs are 10k listeners plus their connections: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

cargo build --release -p hostfw-bench -p hostfw-worker
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
export HOSTFW_TEMPORAL_CLI="$PWD/.tools/bin/temporal"
export HOSTFW_WORKER_BIN="$target_dir/release/hostfw-worker"
exec "$target_dir/release/hostfw-bench" "$@"
