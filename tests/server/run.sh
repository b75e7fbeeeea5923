#!/usr/bin/env bash
# ctest's entry to the server tests: pytest in the venv scripts/setup-test-env.sh
# makes. Skips (77) when that venv is absent, except in CI, where it fails.
set -euo pipefail
VENV="${SKIFF_TEST_VENV:-$HOME/.cache/skiff/test-venv}"
if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c "import pytest, openai" 2>/dev/null; then
  echo "no test venv at $VENV: run scripts/setup-test-env.sh" >&2
  [[ -n "${SKIFF_REQUIRE_REAL_MODELS:-}" ]] && exit 1
  exit 77
fi
cd "$(dirname "$0")"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
