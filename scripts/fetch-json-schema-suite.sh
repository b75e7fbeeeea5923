#!/usr/bin/env bash
# Fetches the official JSON-Schema-Test-Suite, as the `jsonschema` sdist on
# PyPI ships it (json/tests/<draft>/*.json), into a cache outside the
# repository, and prints the path of its tests folder. The JSON Schema
# grammar's conformance test reads it (tests/python/test_json_schema_suite.py,
# found through SKIFF_JSON_SCHEMA_SUITE, which scripts/test.sh sets).
#
# Cache: ${SKIFF_JSON_SCHEMA_SUITE_CACHE:-$HOME/.cache/skiff/jsonschema-suite};
# once there, running it again only prints the path.
set -euo pipefail

HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE="${SKIFF_JSON_SCHEMA_SUITE_CACHE:-$HOME/.cache/skiff/jsonschema-suite}"
PYTHON="${PYTHON:-python3}"
VERSION=4.26.0
SHA256=0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326
TESTS="$CACHE/jsonschema-$VERSION/json/tests"

if [[ ! -d "$TESTS/draft2020-12" || ! -d "$TESTS/draft7" ]]; then
  mkdir -p "$CACHE"
  TMP=$(mktemp -d "$CACHE/fetch.XXXXXX")
  trap 'rm -rf "$TMP"' EXIT
  "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
    --dest "$TMP" "jsonschema==$VERSION" >&2
  SDIST="$TMP/jsonschema-$VERSION.tar.gz"
  if [[ "$(sha256sum "$SDIST" | cut -d' ' -f1)" != "$SHA256" ]]; then
    echo "fetch-json-schema-suite.sh: $SDIST does not have the sha256 $SHA256" >&2
    exit 1
  fi
  tar -xzf "$SDIST" -C "$TMP" "jsonschema-$VERSION/json"
  rm -rf "$CACHE/jsonschema-$VERSION"
  mv "$TMP/jsonschema-$VERSION" "$CACHE/"
fi
echo "$TESTS"
