"""speculative_config reaches the engine: drafts are made, greedy output is
the target's own, and bad configs raise ValueError."""
import pytest

from skiff import LLM, SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=48, ignore_eos=True)
PROMPTS = ["Once upon a time", "The little dog"]


def texts(llm):
    return [o.outputs[0].text for o in llm.generate(PROMPTS, GREEDY, use_tqdm=False)]


@pytest.fixture(scope="module")
def heavy_path(stories_path):
    return stories_path.replace("stories260K-f32.gguf", "stories260K-heavy-f16.gguf")


@pytest.mark.parametrize("config", [
    {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2},
    {"method": "suffix", "num_speculative_tokens": 4},
    "draft",
])
def test_speculation_keeps_greedy_output(heavy_path, stories_path, config):
    if config == "draft":
        config = {"model": stories_path, "num_speculative_tokens": 3}
    plain = texts(LLM(heavy_path, max_num_seqs=4))
    speculating = LLM(heavy_path, max_num_seqs=4, speculative_config=config)
    assert texts(speculating) == plain
    assert speculating._engine.spec_drafted_tokens() > 0


@pytest.mark.parametrize("config,message", [
    ({"method": "eagle"}, "method"), ({"method": "draft_model"}, "model"),
    ({"method": "ngram", "model": "x"}, "model"), ({"method": "ngram", "num_speculative_tokens": 0}, "num_speculative_tokens"),
    ({"method": "ngram", "prompt_lookup_min": 5, "prompt_lookup_max": 2}, "prompt_lookup_min"),
    ({"method": "ngram", "draft_tensor_parallel_size": 1}, "draft_tensor_parallel_size"), ("ngram", "dict"),
])
def test_bad_speculative_config_raises_value_error(stories_path, config, message):
    with pytest.raises(ValueError, match=message):
        LLM(stories_path, speculative_config=config)
