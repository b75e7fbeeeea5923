"""Statuses (issue 42, row 9): a request that can never be admitted is a 400,
a queue full for now a 503 that says when to retry."""
from concurrent.futures import ThreadPoolExecutor


def test_more_prompts_than_the_queue_holds_is_400(stories):
    # --max-queue 2: three prompts in one request can never all wait at once.
    before = stories.metrics()
    r = stories.post("/v1/completions", {"prompt": ["Once", "upon", "a time"], "max_tokens": 2})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "prompt" and "--max-queue" in r.json()["error"]["message"]
    after = stories.metrics()
    assert after["skiff:requests_rejected_total"] == before["skiff:requests_rejected_total"]
    assert stories.post("/v1/completions", {"prompt": ["Once", "upon"], "max_tokens": 2}).status_code == 200


def test_a_full_queue_is_503_with_retry_after(stories):
    # --max-seqs 2 --max-queue 2: of twelve long requests at once, some wait for room.
    body = {"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": True}
    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(lambda _: stories.post("/v1/completions", body), range(12)))
    refused = [r for r in answers if r.status_code == 503]
    assert refused and all(r.headers.get("Retry-After") == "1" for r in refused)
    assert {r.status_code for r in answers} == {200, 503}
