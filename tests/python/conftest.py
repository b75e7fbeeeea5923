import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = pathlib.Path(os.environ.get("SKIFF_MODELS_DIR", pathlib.Path(__file__).parents[3] / "shared" / "models"))
STORIES = MODELS / "derived" / "stories260K-f32.gguf"
QWEN = pathlib.Path.home() / ".cache" / "skiff" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN15 = QWEN.with_name("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")


@pytest.fixture(scope="session")
def stories_path():
    return str(STORIES)


@pytest.fixture(scope="session")
def llm(stories_path):
    from skiff import LLM
    return LLM(model=stories_path, max_num_seqs=16)


def real_model(path):
    if not path.exists():
        if os.environ.get("SKIFF_REQUIRE_REAL_MODELS"):
            pytest.fail(f"{path} missing: run scripts/fetch-models.sh")
        pytest.skip(f"the real model {path.name} is not fetched (scripts/fetch-models.sh)")
    return str(path)


@pytest.fixture(scope="session")
def qwen():
    from skiff import LLM
    return LLM(model=real_model(QWEN), max_num_seqs=4, max_model_len=2048)


@pytest.fixture(scope="session")
def qwen15():
    """Qwen2.5-Coder-1.5B-Instruct: the smallest of these that answers after a tool's result."""
    from skiff import LLM
    return LLM(model=real_model(QWEN15), max_num_seqs=4, max_model_len=4096)


@pytest.fixture(scope="session")
def json_schema_suite():
    """The JSON-Schema-Test-Suite's tests folder (json/tests of the jsonschema
    sdist): SKIFF_JSON_SCHEMA_SUITE, as scripts/test.sh sets it, else what
    scripts/fetch-json-schema-suite.sh prints (it fetches once, then reads its
    cache). Never a skip: without the suite the tests that need it fail."""
    path = os.environ.get("SKIFF_JSON_SCHEMA_SUITE")
    if not path:
        fetch = subprocess.run([str(ROOT / "scripts" / "fetch-json-schema-suite.sh")], capture_output=True,
                               text=True, env={**os.environ, "PYTHON": sys.executable})
        if fetch.returncode != 0:
            pytest.fail("no JSON-Schema-Test-Suite: scripts/fetch-json-schema-suite.sh failed:\n" + fetch.stderr)
        path = fetch.stdout.strip()
    path = pathlib.Path(path)
    if not (path / "draft2020-12").is_dir() or not (path / "draft7").is_dir():
        pytest.fail(f"{path} holds no JSON-Schema-Test-Suite: run scripts/fetch-json-schema-suite.sh")
    return path
