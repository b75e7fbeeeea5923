"""Streams yield what generate returns; closing cancels; the GIL is released."""
import asyncio
import threading

from skiff import SamplingParams

PROMPTS = ["Once upon a time", "The cat sat"]
PARAMS = SamplingParams(temperature=0.9, seed=5, max_tokens=40, ignore_eos=True)


def test_stream_yields_the_same_text_as_generate(llm):
    texts = ["", ""]
    for delta in llm.stream(PROMPTS, PARAMS):
        texts[delta.prompt_index] += delta.text
    assert texts == [o.outputs[0].text for o in llm.generate(PROMPTS, PARAMS, use_tqdm=False)]


def test_async_stream_yields_the_same_text(llm):
    async def collect():
        texts = ["", ""]
        async for delta in llm.stream_async(PROMPTS, PARAMS):
            texts[delta.prompt_index] += delta.text
        return texts
    assert asyncio.run(collect()) == [o.outputs[0].text for o in llm.generate(PROMPTS, PARAMS, use_tqdm=False)]


def test_closing_a_stream_cancels_it(llm):
    stream = llm.stream(PROMPTS, SamplingParams(max_tokens=400, ignore_eos=True))
    next(stream)
    assert llm.kv_cache_blocks_used() > 0
    stream.close()
    assert llm.kv_cache_blocks_used() == 0
    assert list(stream) == []


def test_generate_releases_the_gil(llm):
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    counter.start()
    before = ticks
    llm.generate(PROMPTS * 8, SamplingParams(max_tokens=200, ignore_eos=True), use_tqdm=False)
    during = ticks - before
    done.set()
    counter.join()
    # Holding the GIL, the counter would only run at Python's switch interval between steps.
    assert during > 100_000


def test_threads_share_one_engine(llm):
    # A generate on another thread and a stream here step the same engine in
    # turns; each step finishes the other's requests too, and each gets its own.
    alone = [o.outputs[0].text for o in llm.generate(PROMPTS, PARAMS, use_tqdm=False)]
    results = {}
    worker = threading.Thread(
        target=lambda: results.update(gen=[o.outputs[0].text for o in llm.generate(PROMPTS * 3, PARAMS, use_tqdm=False)]))
    worker.start()
    texts = ["", ""]
    for delta in llm.stream(PROMPTS, PARAMS):
        texts[delta.prompt_index] += delta.text
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert texts == alone and results["gen"] == alone * 3
    assert llm.kv_cache_blocks_used() == 0
