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
cargo build --bins -p hostfw-starter -p hostfw-worker -p hostfw-bmc-sim -p hostfw-scout
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

# Where each simulated host is, for the Scout upgrade script's in-band flash (see its comments).
rm -rf "$DEMO/simhosts" && mkdir -p "$DEMO/simhosts"
python3 - "$DEMO/bmc-sim.ready" "$DEMO/simhosts" <<'PY'
import json, os, sys
for host in json.load(open(sys.argv[1])):
    open(os.path.join(sys.argv[2], host["id"]), "w").write(host["base_url"])
PY

step "starting Scout for the DGX hosts (one agent process serving both; log: .demo/scout.log)"
HOSTFW_SIM_HOSTS_DIR="$DEMO/simhosts" "$BIN/scout" --machine dgx-01 --machine dgx-02 \
  --temporal-address 127.0.0.1:$TEMPORAL_PORT >"$DEMO/scout.log" 2>&1 &
pids+=($!)

step "starting the worker (log: .demo/worker.log)"
rm -f "$DEMO"/site.db "$DEMO"/site.db-*
export HOSTFW_CONFIG="$CONFIG"
"$BIN/hostfw-worker" --config "$CONFIG" >"$DEMO/worker.log" 2>&1 &
pids+=($!)
wait_for "the worker's artifact server" 60 port_busy 8089

step "registering the fleet and loading the catalog"
"$BIN/hostfw" machine import --fleet "$FLEET"
# r760-02 runs a tenant instance: its update waits for the tenant's approval.
"$BIN/hostfw" machine add --id r760-02 --bmc 127.0.10.2:8000 --state Assigned --instance tenant-a-17
"$BIN/hostfw" firmware show

substate_of() {
  "$BIN/hostfw" machine show "$1" --format json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"].get("substate") or "")' 2>/dev/null || true
}

# The people around the rollout: the platform team finishes the GB200's manual procedure, and the
# tenant of r760-02 approves applying updates on reboot, each once their host waits for them.
operators() {
  local gb_done="" tenant_done=""
  while [ -z "$gb_done" ] || [ -z "$tenant_done" ]; do
    if [ -z "$gb_done" ] && [ "$(substate_of gb200-01)" = "WaitingForManualUpgrade" ]; then
      echo "demo: platform team completes the GB200 manual procedure on gb200-01"
      "$BIN/hostfw" host reprovision mark-manual-upgrade-complete --id gb200-01 && gb_done=1
    fi
    if [ -z "$tenant_done" ] && [ "$(substate_of r760-02)" = "WaitingForApproval" ]; then
      echo "demo: tenant approves updates on reboot of instance tenant-a-17 (r760-02)"
      "$BIN/hostfw" instance reboot --instance tenant-a-17 --apply-updates-on-reboot && tenant_done=1
    fi
    sleep 1
  done
}

step "rollout: explore every BMC, reprovision every drifted host"
operators &
operators_pid=$!
pids+=($operators_pid)
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
while true; do sleep 3600 & wait $!; done  # wait returns at once on a signal, so cleanup runs
