#!/usr/bin/env bash
# `make demo`: install what is missing, build, start an embedded Temporal dev server (persisted in
# .demo/, Web UI on :8233), a simulated fleet of 62 BMCs (serving the Redfish trees captured from
# real hardware when ../shared/redfish/vendor-mockups is there, see scripts/demo_site.py), Scout
# and the worker. The worker's
# Machine Update Manager then rolls the fleet to the catalog under the site ceiling, in canary
# waves per target (the DGX image is bad: its targets pause after their canary fails), while
# `hostfw watch` shows a live bar and ends with the report. Every `hostfw` command after the first
# admin token (`hostfw admin bootstrap`, on the site) goes through the hostfw API the worker serves
# on 127.0.0.1:9443, each person with a token of their own role: the admin registers the fleet,
# the operators run the rollout, the tenant of tenant-05 approves its own host's update.
# Stops everything it started on exit.
# EXIT=1 exits right after the report; otherwise the servers stay up for the Web UI until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO="$ROOT/.demo"
CONFIG="$DEMO/site.toml"
FLEET="$DEMO/fleet.toml"
# The tenant instances' autoreboot period opens this many seconds after the demo starts.
AUTOREBOOT_DELAY=${AUTOREBOOT_DELAY:-60}
TEMPORAL="$ROOT/.tools/bin/temporal"
TEMPORAL_PORT=7233
UI_PORT=8233
API_PORT=9443
API="http://127.0.0.1:$API_PORT"

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
for p in $TEMPORAL_PORT $UI_PORT 8089 9464 $API_PORT; do
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
for sa in HostfwMachineId=Keyword HostfwSubstate=Keyword HostfwVendor=Keyword HostfwModel=Keyword \
  HostfwComponent=Keyword HostfwRetriesExhausted=Bool HostfwApprovalOverdue=Bool; do
  sa_args+=(--search-attribute "$sa")
done
"$TEMPORAL" server start-dev --db-filename "$DEMO/temporal.db" --ip 127.0.0.1 \
  --port $TEMPORAL_PORT --ui-port $UI_PORT --log-level warn \
  --dynamic-config-value history.transferProcessorMaxPollRPS=10000 \
  "${sa_args[@]}" >"$DEMO/temporal.log" 2>&1 &
pids+=($!)
wait_for "the Temporal server" 60 "$TEMPORAL" operator cluster health --address 127.0.0.1:$TEMPORAL_PORT
# A previous demo may have left workflows running (host updates, the site workflows): end them,
# this demo starts fresh ones against a fresh simulator fleet and site database.
"$TEMPORAL" workflow terminate --address 127.0.0.1:$TEMPORAL_PORT --yes --reason "demo restarted" \
  --query "ExecutionStatus='Running'" >/dev/null 2>&1 || true

step "writing the demo fleet (62 hosts) and site config into .demo/"
python3 scripts/demo_site.py "$ROOT" "$DEMO" "$AUTOREBOOT_DELAY"
# DEMO_FLEET (captured|generic), DELL (the Dell hosts' id prefix), DELL_MODEL
source "$DEMO/demo.env"

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

rm -f "$DEMO"/site.db "$DEMO"/site.db-*
export HOSTFW_CONFIG="$CONFIG"
# The site key encrypts the BMC passwords the import stores; kept across demo runs.
[ -f "$DEMO/site.key" ] || "$BIN/hostfw" site-key generate --out "$DEMO/site.key"

step "signing the Scout packages (a copy of config/scout-firmware-scripts in .demo/)"
rm -rf "$DEMO/scout-firmware-scripts" && cp -r "$ROOT/config/scout-firmware-scripts" "$DEMO/scout-firmware-scripts"
[ -f "$DEMO/scout-keys/scout-signing.key" ] || "$BIN/hostfw" scout-package keygen --out "$DEMO/scout-keys"
# Each package is signed for the firmware version it installs, the catalog's target (Scout refuses
# it for any other): the NIC of config/firmware-generic/dgx-h100, the CPLD of config/firmware/dgx-h100.
"$BIN/hostfw" scout-package sign --key "$DEMO/scout-keys/scout-signing.key" --version 28.43.1014 \
  "$DEMO/scout-firmware-scripts/nvidia/dgx_h100/nic"
"$BIN/hostfw" scout-package sign --key "$DEMO/scout-keys/scout-signing.key" --version 0.2.1.8 \
  "$DEMO/scout-firmware-scripts/nvidia/dgxh100/cpldmb"

dgx_args=()
for n in $(seq -w 1 12); do dgx_args+=(--machine "dgx-$n"); done
step "starting Scout for the 12 DGX hosts (one agent process serving all; log: .demo/scout.log)"
HOSTFW_SIM_HOSTS_DIR="$DEMO/simhosts" "$BIN/scout" "${dgx_args[@]}" \
  --trusted-key "$DEMO/scout-keys/scout-signing.pub" --script-env HOSTFW_SIM_HOSTS_DIR \
  --temporal-address 127.0.0.1:$TEMPORAL_PORT >"$DEMO/scout.log" 2>&1 &
pids+=($!)

step "starting the worker: Site Explorer, Machine Update Manager, host workflows (log: .demo/worker.log)"
"$BIN/hostfw-worker" --config "$CONFIG" >"$DEMO/worker.log" 2>&1 &
pids+=($!)
wait_for "the worker's metrics endpoint" 60 port_busy 9464
wait_for "the hostfw API" 60 port_busy $API_PORT

step "identity: the first admin token (on the site), then tokens for the operators and one tenant (through the API, $API)"
rm -rf "$DEMO/tokens" && mkdir -m 700 "$DEMO/tokens"
"$BIN/hostfw" admin bootstrap --out "$DEMO/tokens/admin.token"
# The CLI's own config: contexts name an API and a token file (like kubectl contexts).
export HOSTFW_CLI_CONFIG="$DEMO/cli.toml"
rm -f "$HOSTFW_CLI_CONFIG"
"$BIN/hostfw" context set demo --api "$API" --token-file "$DEMO/tokens/admin.token" >/dev/null
"$BIN/hostfw" context use demo >/dev/null
new_token() { # file, token create arguments...
  local file=$1; shift
  (umask 077 && "$BIN/hostfw" token create "$@" | grep '^hfw_' >"$file")
}
new_token "$DEMO/tokens/operator.token" --name demo-operator --role operator --expires 1d
new_token "$DEMO/tokens/tenant-05.token" --name tenant-05 --role tenant --instance tenant-05 --expires 1d
"$BIN/hostfw" token list | cut -c1-110
as_operator() { "$BIN/hostfw" --token-file "$DEMO/tokens/operator.token" "$@"; }
as_tenant() { "$BIN/hostfw" --token-file "$DEMO/tokens/tenant-05.token" "$@"; }

step "registering the fleet as the admin (four $DELL_MODEL hosts run tenant instances)"
"$BIN/hostfw" machine import --fleet "$FLEET"
for n in 05 06 07 08; do
  "$BIN/hostfw" machine add --id "$DELL-$n" --bmc "http://127.0.10.$((10#$n)):8000" --state Assigned --instance "tenant-$n"
  if [ "$DEMO_FLEET" = captured ]; then
    # The tenant runs its host locked down, through iDRAC's own attribute (the catalog's
    # `lockdown`): the update turns it off and on again.
    curl -sSf -u admin:password -X PATCH -H 'Content-Type: application/json' \
      -d '{"Attributes": {"Lockdown.1.SystemLockdown": "Enabled"}}' \
      "http://127.0.10.$((10#$n)):8000/redfish/v1/Managers/iDRAC.Embedded.1/Attributes" >/dev/null
  fi
done
"$BIN/hostfw" firmware show
# Canary waves release each rollout target one host first: the operator picks which.
as_operator machine label "$DELL-10" --set canary=true
as_operator machine label smc-03 --set canary=true
# Read every BMC's inventory now (the Site Explorer's own crawl runs every 60 s).
as_operator site-explorer explore

substate_of() {
  as_operator machine show "$1" --format json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"].get("substate") or "")' 2>/dev/null || true
}

# The people around the rollout: the platform team finishes the GB200s' manual procedure as each
# host waits for it, the tenant of $DELL-05 approves its update (the other tenants' hosts wait for
# the autoreboot period), and after a while an operator opens the Supermicro hosts' update window.
operators() {
  local pending_gb="gb200-01 gb200-02 gb200-03 gb200-04" tenant_done="" window_done="" t=0
  while [ -n "$pending_gb" ] || [ -z "$tenant_done" ] || [ -z "$window_done" ]; do
    local still=""
    for gb in $pending_gb; do
      if [ "$(substate_of "$gb")" = "WaitingForManualUpgrade" ]; then
        echo "demo: platform team completes the GB200 manual procedure on $gb"
        as_operator host reprovision mark-manual-upgrade-complete --id "$gb" >/dev/null || still="$still $gb"
      else
        still="$still $gb"
      fi
    done
    pending_gb="${still# }"
    if [ -z "$tenant_done" ] && [ "$(substate_of "$DELL-05")" = "WaitingForApproval" ]; then
      echo "demo: the tenant of instance tenant-05 ($DELL-05) approves updates on reboot, with its own token"
      as_tenant instance reboot --instance tenant-05 --apply-updates-on-reboot >/dev/null && tenant_done=1
    fi
    if [ -z "$window_done" ] && [ "$t" -ge 30 ]; then
      echo "demo: an operator opens the update window of the 16 Supermicro hosts (explicit start)"
      as_operator managed-host start-updates --machines $(seq -f "smc-%02g" 1 16) >/dev/null && window_done=1
    fi
    sleep 1
    t=$((t + 1))
  done
}

step "rollout: the Machine Update Manager updates every drifted host, at most 8 at once, in canary waves per target (one host, 25 %, all; 10 s soak); the DGX image is bad"
as_operator plan >"$DEMO/plan-before.txt"
head -n 3 "$DEMO/plan-before.txt"
operators &
operators_pid=$!
pids+=($operators_pid)
set +e
HOSTFW_WEB_UI="http://127.0.0.1:$UI_PORT" as_operator watch --timeout-secs 900
rollout_status=$?
set -e
# The injected bad image paused the DGX targets: what `hostfw plan` says of them.
as_operator plan | sed -n '/^PAUSED TARGET/,/^resume it/p' | cut -c1-220

paused=$(as_operator --format json budget list | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin):
    if t["paused"]:
        x = t["target"]
        print(" ".join(shlex.quote(a) for a in ["--vendor", x["vendor"], "--model", x["model"], "--component", x["component"], "--version", x["version"]]))
')
if [ -n "$paused" ]; then
  step "the DGX image is fixed: the operator resumes each paused target and resets the failed canaries"
  for n in $(seq 1 12); do
    curl -sSf -X PUT -H 'Content-Type: application/json' -d '{}' "http://127.0.12.$n:8000/sim/faults" >/dev/null
  done
  while read -r args; do
    eval "as_operator budget resume $args"
  done <<<"$paused"
  for id in $(as_operator --format json host reprovision list |
    python3 -c 'import json,sys; print(" ".join(r["machine_id"] for r in json.load(sys.stdin) if r["exhausted"]))'); do
    as_operator managed-host reset-host-reprovisioning --machine "$id"
  done
  set +e
  HOSTFW_WEB_UI="http://127.0.0.1:$UI_PORT" as_operator watch --timeout-secs 600
  rollout_status=$?
  set -e
fi

if [ "${EXIT:-}" = "1" ]; then
  exit $rollout_status
fi
echo
echo "Servers stay up: Web UI http://127.0.0.1:$UI_PORT (search e.g. HostfwMachineId=\"smc-02\"),"
echo "metrics http://127.0.0.1:9464/metrics."
echo "Try: HOSTFW_CLI_CONFIG=.demo/cli.toml $BIN/hostfw plan    (the API as the demo's admin; or managed-host show smc-02, audit, ...)"
echo "     $BIN/hostfw -a $API --token-file .demo/tokens/tenant-05.token managed-host show $DELL-06    (a tenant sees only its own hosts)"
echo "Press Ctrl-C to stop (everything this demo started stops with it)."
while true; do sleep 3600 & wait $!; done  # wait returns at once on a signal, so cleanup runs
