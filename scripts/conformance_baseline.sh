#!/usr/bin/env bash
# Regenerate the conformance baselines (bmc-sim/tests/conformance/<tree>.txt): DMTF's service
# validator run on each captured tree as captured, served by sushy-static. See
# scripts/conformance/baseline.py and docs/conformance.md. Usage: scripts/conformance_baseline.sh [tree ...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh
exec .tools/bin/python scripts/conformance/baseline.py "$@"
