#!/usr/bin/env bash
# Creates the Python environment the server tests and bench-serve --plot run
# in (pytest, the official openai and anthropic clients, matplotlib, jsonschema for the JSON
# Schema suite's double check, selenium for the chat page's browser tests), with what builds the
# Python extension (nanobind, scikit-build-core, SKIFF_PYTHON): a venv outside the
# repository, by default
# ~/.cache/skiff/test-venv, or $SKIFF_TEST_VENV. Idempotent, and quiet when
# everything is there already. Prints nothing on success but the venv path.
set -euo pipefail
ENV_DIR="${SKIFF_TEST_VENV:-$HOME/.cache/skiff/test-venv}"
"$(dirname "$0")/make-venv.sh" "$ENV_DIR"
if ! "$ENV_DIR/bin/python" -c "import pytest, openai, anthropic, httpx, matplotlib, jsonschema, selenium, nanobind, scikit_build_core" 2>/dev/null; then
  "$ENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check pytest openai anthropic httpx matplotlib jsonschema selenium \
    nanobind scikit-build-core >&2
fi
echo "$ENV_DIR"
