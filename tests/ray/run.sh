#!/usr/bin/env bash
# ctest's entry to the skiff.ray tests: a fresh venv that sees the Ray venv's
# packages (scripts/setup-ray-env.sh; Ray is too large to install per run),
# the checkout pip-installed into it with its [ray] extra and the build's
# compiled extension, then pytest. Skips (77) without the extension or the
# Ray venv, except in CI (SKIFF_REQUIRE_REAL_MODELS), where it fails.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
skip() {
  echo "ray.pytest: $1" >&2
  [[ -n "${SKIFF_REQUIRE_REAL_MODELS:-}" ]] && exit 1
  exit 77
}
[[ -f "${SKIFF_PYTHON_MODULE:-}" ]] || skip "no built extension: configure with -DSKIFF_PYTHON=ON"
[[ -x "${SKIFF_BINARY:-}" ]] || skip "no built skiff binary in SKIFF_BINARY (ctest sets it)"
RAY_VENV="${SKIFF_RAY_VENV:-$HOME/.cache/skiff/ray-venv}"
"$RAY_VENV/bin/python" -c "import ray.serve, openai, pytest" 2>/dev/null ||
  skip "no Ray venv at $RAY_VENV: run scripts/setup-ray-env.sh"
VENV="${SKIFF_RAY_TEST_VENV:-$(dirname "$SKIFF_PYTHON_MODULE")/ray-test-venv}"
rm -rf "$VENV"
"$RAY_VENV/bin/python" -m venv "$VENV" || skip "python3 -m venv failed"
SITE=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$RAY_VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$SITE/skiff-ray-env.pth"
# [ray]: pip checks the extra's requirements, all met by the Ray venv.
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation "$SRC[ray]" \
  -C cmake.define.SKIFF_PYTHON_PREBUILT="$SKIFF_PYTHON_MODULE" -C cmake.define.SKIFF_BINARY_PREBUILT="$SKIFF_BINARY" \
  -C build-dir="$VENV/wheel-build"
cd "$SRC/tests/ray"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
