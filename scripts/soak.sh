#!/usr/bin/env bash
# The soak test: `skiff serve` (build/skiff, stories260K) at saturation for
# MINUTES (10; fractions too: 0.5 is 30 s) with valid, malformed and leaving
# clients; prints requests served, errors, RSS, the KV pool at the end and
# latency percentiles, and exits 1 unless all passed (scripts/soak.py says
# what is checked; figures in docs/reliability.md). More flags go to soak.py:
#   scripts/soak.sh 10 --concurrency 32 --out soak.json -- --max-seqs 32
# Runs in the venv of scripts/setup-test-env.sh (httpx, pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-10}
[[ $# -gt 0 ]] && shift
VENV="${SKIFF_TEST_VENV:-$HOME/.cache/skiff/test-venv}"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "soak.sh: no test venv at $VENV: run scripts/setup-test-env.sh" >&2
  exit 2
fi
exec "$VENV/bin/python" scripts/soak.py --minutes "$MINUTES" "$@"
