#!/usr/bin/env bash
# ctest's entry to the Python package's tests: a fresh venv, the checkout
# pip-installed into it with the build's compiled extension (SKIFF_PYTHON_MODULE;
# nothing is compiled twice), then pytest. Skips (77) without the extension or
# the build tools, except in CI (SKIFF_REQUIRE_REAL_MODELS), where it fails.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
skip() {
  echo "python.pytest: $1" >&2
  [[ -n "${SKIFF_REQUIRE_REAL_MODELS:-}" ]] && exit 1
  exit 77
}
[[ -f "${SKIFF_PYTHON_MODULE:-}" ]] || skip "no built extension: configure with -DSKIFF_PYTHON=ON (scripts/build.sh does when nanobind is there)"
[[ -x "${SKIFF_BINARY:-}" ]] || skip "no built skiff binary in SKIFF_BINARY (ctest sets it)"
PYTHON="${SKIFF_PYTHON_EXECUTABLE:-python3}"
VENV="${SKIFF_PYTHON_TEST_VENV:-$(dirname "$SKIFF_PYTHON_MODULE")/python-test-venv}"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" || skip "python3 -m venv failed"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" pytest scikit-build-core tqdm jsonschema
# --no-build-isolation: the backend just installed; the prebuilt module makes
# the CMake run a copy (CMakeLists.txt, SKIFF_PYTHON_PREBUILT).
"${PIP[@]}" --no-build-isolation --no-deps "$SRC" \
  -C cmake.define.SKIFF_PYTHON_PREBUILT="$SKIFF_PYTHON_MODULE" -C cmake.define.SKIFF_BINARY_PREBUILT="$SKIFF_BINARY" \
  -C build-dir="$VENV/wheel-build"
cd "$SRC/tests/python"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
