#!/usr/bin/env bash
# Installs dependencies, makes the Python env of the server and Python package
# tests (scripts/setup-test-env.sh), builds (with the Python extension when
# that env is there), fetches the two small real models (cached in
# ~/.cache/skiff/models; their tests skip where they cannot be had, except in
# CI, which requires them), and runs the whole test suite; in CI, also under
# sanitizers, and the fuzz harnesses.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The server tests' Python (pytest, openai) and the extension's build tools
# (nanobind); without them those tests skip, except in CI.
if VENV=$(scripts/setup-test-env.sh 2>/dev/null); then
  export SKIFF_PYTHON="$VENV/bin/python"
elif [[ "${CI:-}" == true ]]; then
  scripts/setup-test-env.sh >/dev/null  # again, to show why it failed
else
  echo "test.sh: no Python test env; the server and Python package tests skip" >&2
fi
scripts/build.sh
if [[ "${CI:-}" == true ]]; then
  scripts/fetch-models.sh qwen2.5-coder-0.5b gemma3-270m
  export SKIFF_REQUIRE_REAL_MODELS=1
else
  scripts/fetch-models.sh qwen2.5-coder-0.5b gemma3-270m || echo "test.sh: real models not fetched; their tests skip" >&2
fi
(cd "${SKIFF_BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)")
# CI (or SKIFF_SANITIZERS=1) also runs the tests under ASan + UBSan and TSan,
# and every fuzz harness from its seeds for SKIFF_FUZZ_SECONDS (30) each.
if [[ "${CI:-}" == true || -n "${SKIFF_SANITIZERS:-}" ]]; then
  scripts/sanitize.sh address
  scripts/sanitize.sh thread
  scripts/fuzz.sh "${SKIFF_FUZZ_SECONDS:-30}"
fi
