#!/usr/bin/env bash
# make-venv.sh DIR: a Python venv at DIR (with $PYTHON, default python3) unless
# one is there; installs Debian's python3-venv where `python3 -m venv` needs it.
# Shared by scripts/setup-test-env.sh and scripts/setup-ray-env.sh.
set -euo pipefail
ENV_DIR="$1"
PYTHON="${PYTHON:-python3}"
[[ -x "$ENV_DIR/bin/python" ]] && exit 0
mkdir -p "$(dirname "$ENV_DIR")"
"$PYTHON" -m venv "$ENV_DIR" 2>/dev/null || {
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq python3-venv >/dev/null
  rm -rf "$ENV_DIR"
  "$PYTHON" -m venv "$ENV_DIR"
}
