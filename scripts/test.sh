#!/usr/bin/env bash
# Installs dependencies, makes the Python env of the server and Python package
# tests (scripts/setup-test-env.sh), builds (with the Python extension when
# that env is there), fetches the two small real models (cached in
# ~/.cache/skiff/models; their tests skip where they cannot be had, except in
# CI, which requires them) and the JSON-Schema-Test-Suite
# (scripts/fetch-json-schema-suite.sh), and runs the whole test suite; in CI, also under
# sanitizers, and the fuzz harnesses.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed at the end (and when a stage fails).
STAGE_TIMES=()
stage() {  # stage NAME COMMAND...: runs COMMAND and records how long it took
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  STAGE_TIMES+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
  ((status == 0)) || { print_stage_times; exit "$status"; }
}
print_stage_times() { printf 'test.sh: %s\n' "${STAGE_TIMES[@]}" >&2; }
stage "install dependencies" scripts/install-deps.sh
# The server tests' Python (pytest, openai) and the extension's build tools
# (nanobind); without them those tests skip, except in CI.
python_test_env() {
  if VENV=$(scripts/setup-test-env.sh 2>/dev/null); then
    export SKIFF_PYTHON="$VENV/bin/python"
  elif [[ "${CI:-}" == true ]]; then
    scripts/setup-test-env.sh >/dev/null  # again, to show why it failed
  else
    echo "test.sh: no Python test env; the server and Python package tests skip" >&2
  fi
}
stage "Python test env" python_test_env
# Ray Serve for the skiff.ray tests (tests/ray), in a venv of its own
# (scripts/setup-ray-env.sh); without it those tests skip, except in CI.
ray_test_env() {
  if VENV=$(scripts/setup-ray-env.sh 2>/dev/null); then
    export SKIFF_RAY_VENV="$VENV"
  elif [[ "${CI:-}" == true ]]; then
    scripts/setup-ray-env.sh >/dev/null  # again, to show why it failed
  else
    echo "test.sh: no Ray env; the Ray Serve tests skip" >&2
  fi
}
stage "Ray test env" ray_test_env
# The official JSON-Schema-Test-Suite, cached (tests/python/test_json_schema_suite.py
# fails without it, naming scripts/fetch-json-schema-suite.sh).
json_schema_suite() {
  local tests
  tests=$(PYTHON="${SKIFF_PYTHON:-python3}" scripts/fetch-json-schema-suite.sh) || return 1
  export SKIFF_JSON_SCHEMA_SUITE="$tests"
}
if [[ "${CI:-}" == true ]]; then
  stage "fetch JSON-Schema-Test-Suite" json_schema_suite
else
  json_schema_suite || echo "test.sh: JSON-Schema-Test-Suite not fetched; its test fails" >&2
fi
stage "Release build" scripts/build.sh
# llama.cpp's sample GBNF grammars, cached (tests/grammar/gbnf_test.cpp fails
# without them, naming scripts/fetch-llama-grammars.sh).
llama_grammars() {
  local dir
  dir=$(scripts/fetch-llama-grammars.sh) || return 1
  export SKIFF_LLAMA_GRAMMARS="$dir"
}
if [[ "${CI:-}" == true ]]; then
  stage "fetch llama.cpp grammars" llama_grammars
else
  llama_grammars || echo "test.sh: llama.cpp's grammars not fetched; the GBNF tests fail" >&2
fi
if [[ "${CI:-}" == true ]]; then
  stage "fetch real models" scripts/fetch-models.sh qwen2.5-coder-0.5b gemma3-270m
  export SKIFF_REQUIRE_REAL_MODELS=1
else
  scripts/fetch-models.sh qwen2.5-coder-0.5b gemma3-270m || echo "test.sh: real models not fetched; their tests skip" >&2
fi
release_tests() { (cd "${SKIFF_BUILD_DIR:-build}" && ctest --output-on-failure -j "$(nproc)"); }
stage "Release tests" release_tests
# CI (or SKIFF_SANITIZERS=1) also runs the tests under ASan + UBSan and TSan,
# and every fuzz harness from its seeds for SKIFF_FUZZ_SECONDS (15) each.
if [[ "${CI:-}" == true || -n "${SKIFF_SANITIZERS:-}" ]]; then
  stage "ASan+UBSan build and tests" scripts/sanitize.sh address
  stage "TSan build and tests" scripts/sanitize.sh thread
  stage "fuzzing" scripts/fuzz.sh "${SKIFF_FUZZ_SECONDS:-15}"
fi
print_stage_times
