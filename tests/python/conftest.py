import os
import pathlib

import pytest

MODELS = pathlib.Path(os.environ.get("SKIFF_MODELS_DIR", pathlib.Path(__file__).parents[3] / "shared" / "models"))
STORIES = MODELS / "derived" / "stories260K-f32.gguf"
QWEN = pathlib.Path.home() / ".cache" / "skiff" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


@pytest.fixture(scope="session")
def stories_path():
    return str(STORIES)


@pytest.fixture(scope="session")
def llm(stories_path):
    from skiff import LLM
    return LLM(model=stories_path, max_num_seqs=16)


@pytest.fixture(scope="session")
def qwen():
    if not QWEN.exists():
        if os.environ.get("SKIFF_REQUIRE_REAL_MODELS"):
            pytest.fail(f"{QWEN} missing: run scripts/fetch-models.sh")
        pytest.skip("the real Qwen model is not fetched (scripts/fetch-models.sh)")
    from skiff import LLM
    return LLM(model=str(QWEN), max_num_seqs=4, max_model_len=2048)
