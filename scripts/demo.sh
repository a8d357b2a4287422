#!/usr/bin/env bash
# `make demo`: install what is missing, build, start an embedded Temporal dev server (persisted in
# .demo/, Web UI on :8233), the BMC simulator fleet and the worker, then run a real rollout with a
# progress bar and a per-host report. Stops everything it started on exit.
# EXIT=1 exits right after the report; otherwise the servers stay up for the Web UI until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO="$ROOT/.demo"
CONFIG="$ROOT/config/site.toml"
FLEET="$ROOT/config/demo-fleet.toml"
TEMPORAL="$ROOT/.tools/bin/temporal"
TEMPORAL_PORT=7233
UI_PORT=8233

step() { printf '\n==> %s\n' "$*"; }

scripts/tools.sh

step "building hostfw (debug)"
cargo build --bins -p hostfw-starter -p hostfw-worker -p hostfw-bmc-sim
BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug"

mkdir -p "$DEMO"
pids=()
cleanup() {
  status=$?
  if [ ${#pids[@]} -gt 0 ]; then
    for ((i=${#pids[@]}-1; i>=0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in $TEMPORAL_PORT $UI_PORT 8089 9464; do
  if port_busy "$p"; then
    echo "port $p on 127.0.0.1 is in use (another demo still running?); stop it first" >&2
    exit 1
  fi
done

wait_for() { # description, seconds, command...
  local what=$1 secs=$2; shift 2
  for ((i=0; i<secs*10; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $what" >&2
  return 1
}

step "starting the Temporal dev server (data in .demo/temporal.db, Web UI http://127.0.0.1:$UI_PORT)"
sa_args=()
for sa in HostfwMachineId HostfwSubstate HostfwVendor HostfwModel HostfwComponent; do
  sa_args+=(--search-attribute "$sa=Keyword")
done
"$TEMPORAL" server start-dev --db-filename "$DEMO/temporal.db" --ip 127.0.0.1 \
  --port $TEMPORAL_PORT --ui-port $UI_PORT --log-level warn \
  --dynamic-config-value history.transferProcessorMaxPollRPS=10000 \
  "${sa_args[@]}" >"$DEMO/temporal.log" 2>&1 &
pids+=($!)
wait_for "the Temporal server" 60 "$TEMPORAL" operator cluster health --address 127.0.0.1:$TEMPORAL_PORT
# A previous demo interrupted mid-rollout may have left host workflows running: end them, the
# rollout below starts fresh ones against a fresh simulator fleet.
"$TEMPORAL" workflow terminate --address 127.0.0.1:$TEMPORAL_PORT --yes --reason "demo restarted" \
  --query "WorkflowType='HostReprovision' AND ExecutionStatus='Running'" >/dev/null 2>&1 || true

step "starting the BMC simulator fleet ($FLEET)"
rm -f "$DEMO/bmc-sim.ready"
"$BIN/bmc-sim" --fleet "$FLEET" --ready-file "$DEMO/bmc-sim.ready" >"$DEMO/bmc-sim.log" 2>&1 &
pids+=($!)
wait_for "the BMC simulators" 30 test -s "$DEMO/bmc-sim.ready"

step "starting the worker (log: .demo/worker.log)"
rm -f "$DEMO"/site.db "$DEMO"/site.db-*
export HOSTFW_CONFIG="$CONFIG"
"$BIN/hostfw-worker" --config "$CONFIG" >"$DEMO/worker.log" 2>&1 &
pids+=($!)
wait_for "the worker's artifact server" 60 port_busy 8089

step "registering the fleet and loading the catalog"
"$BIN/hostfw" machine import --fleet "$FLEET"
"$BIN/hostfw" firmware show

step "rollout: explore every BMC, reprovision every drifted host"
set +e
HOSTFW_WEB_UI="http://127.0.0.1:$UI_PORT" "$BIN/hostfw" rollout
rollout_status=$?
set -e

if [ "${EXIT:-}" = "1" ]; then
  exit $rollout_status
fi
echo
echo "Servers stay up: Web UI http://127.0.0.1:$UI_PORT (search e.g. HostfwMachineId=\"smc-01\")."
echo "Try: HOSTFW_CONFIG=config/site.toml $BIN/hostfw managed-host show smc-01"
echo "Press Ctrl-C to stop (everything this demo started stops with it)."
while true; do sleep 3600; done
