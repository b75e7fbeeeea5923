"""The router's view of the replicas' prefix caches and the /metrics merge,
without a cluster: small cases whose answers are worked out by hand, and the
engine's list of its cached blocks read as the replicas read it."""
import json

import httpx
import pytest
from skiff._skiff import RequestPrompts, prefix_block_hashes
from skiff.ray.metrics import merge_replica_metrics
from skiff.ray.prefix_view import BlockLru, PrefixView, ReplicaView
from skiff.ray.serve_process import ServeProcess

from conftest import BINARY, STORIES


def test_block_hashes_chain_full_blocks_only():
    ids = list(range(100, 140))  # 40 tokens: two full blocks of 16, 8 left over
    hashes = prefix_block_hashes(ids, 16)
    assert len(hashes) == 2
    assert prefix_block_hashes(ids[:32], 16) == hashes
    # A block's hash stands for everything before it: change the first token,
    # and the second block's hash changes although its own tokens did not.
    other = prefix_block_hashes([99] + ids[1:], 16)
    assert other[0] != hashes[0] and other[1] != hashes[1]
    assert prefix_block_hashes(ids[:15], 16) == []


def test_lru_keeps_the_most_recent_up_to_capacity():
    lru = BlockLru(capacity=3)
    lru.touch([1, 2, 3], now=1.0)
    lru.touch([1], now=2.0)  # 1 is now the newest: 2 goes first
    lru.touch([4], now=3.0)
    assert list(lru) == [3, 1, 4]
    lru.drop_older_than(2.5)
    assert list(lru) == [4]


def test_the_engine_lists_the_hashes_prefix_block_hashes_gives():
    """GET /kv/prefix_blocks (what record_routing_stats reports) against the
    ingress's routing keys: equal as Python ints, past 2^53 too."""
    engine = ServeProcess(BINARY, str(STORIES), 1, ["--api-key", "sekret", "--block-size", "16"])
    try:
        assert engine.api_key == "sekret"
        auth = {"Authorization": "Bearer sekret"}
        ids = httpx.post(engine.url + "/tokenize", headers=auth, timeout=30,
                         json={"prompt": "Once upon a time there was a cat. " * 4}).json()["tokens"]
        r = httpx.post(engine.url + "/v1/completions", headers=auth, timeout=60,
                       json={"prompt": ids, "max_tokens": 1})
        assert r.status_code == 200, r.text
        listing = httpx.get(engine.url + "/kv/prefix_blocks", headers=auth, timeout=30).json()
        key = prefix_block_hashes(ids, 16)
        assert len(key) >= 2 and listing["hashes"] == key
        assert listing["block_size"] == 16 and listing["total_blocks"] > 0
    finally:
        engine.stop()


def test_match_walks_the_chain_until_a_miss():
    view = ReplicaView()
    view.routed.touch([10, 11, 12], now=1.0)
    assert view.matched_blocks((10, 11, 12, 13)) == 3
    assert view.matched_blocks((10, 99, 12)) == 1
    assert view.matched_blocks((99, 10)) == 0


def test_a_report_replaces_what_was_routed_before_it():
    view = ReplicaView()
    view.routed.touch([1, 2], now=100.0)   # routed long before the report
    view.routed.touch([7, 8], now=1000.0)  # routed after it
    view.apply_report({"at": 500.0, "capacity_blocks": 64, "blocks": [1, 5]})
    # 2 was evicted by the replica (absent from its report): gone; 1 reported;
    # 7, 8 newer than the report: kept.
    assert view.matched_blocks((1, 2)) == 1
    assert view.matched_blocks((5,)) == 1
    assert view.matched_blocks((7, 8)) == 2
    assert view.routed.capacity == 64


def test_longest_match_and_forgetting_replicas():
    view = PrefixView()
    view.replica("a").routed.touch([1, 2], now=1.0)
    view.replica("b").routed.touch([1, 2, 3], now=1.0)
    assert view.longest_match((1, 2, 3, 4), ["a", "b"]) == ("b", 3)
    assert view.longest_match((9,), ["a", "b"]) == (None, 0)
    view.keep_only(["a"])
    assert view.longest_match((1, 2, 3), ["a", "b"]) == ("a", 2)


def test_metrics_merge_labels_each_replica_and_keeps_families_together():
    one = ('# HELP vllm:prefix_cache_hits_total Hits.\n# TYPE vllm:prefix_cache_hits_total counter\n'
           'vllm:prefix_cache_hits_total{model_name="m"} 5\n'
           '# HELP h H.\n# TYPE h histogram\nh_bucket{model_name="m",le="+Inf"} 1\nh_sum{model_name="m"} 0.5\n'
           'h_count{model_name="m"} 1\n')
    two = one.replace(" 5\n", " 7\n")
    merged = merge_replica_metrics({"r2": two, "r1": one}).splitlines()
    assert merged[:4] == [
        "# HELP vllm:prefix_cache_hits_total Hits.",
        "# TYPE vllm:prefix_cache_hits_total counter",
        'vllm:prefix_cache_hits_total{model_name="m",replica="r1"} 5',
        'vllm:prefix_cache_hits_total{model_name="m",replica="r2"} 7',
    ]
    assert merged[4:6] == ["# HELP h H.", "# TYPE h histogram"]
    assert len([l for l in merged if l.startswith("h_")]) == 6
    assert merge_replica_metrics({}) == ""


def test_block_hashes_are_those_of_the_prompt_ids():
    """The ingress's one-call key equals the engine's hashes of the prompt the replica's server reads."""
    from conftest import QWEN, need
    prompts = RequestPrompts(str(need(QWEN)))
    body = json.dumps({"messages": [{"role": "system", "content": "Answer in Python. " * 20},
                                    {"role": "user", "content": "Sort a list."}]})
    ids = prompts.prompt_ids("/v1/chat/completions", body)
    assert len(ids) > 64
    assert prompts.block_hashes("/v1/chat/completions", body, 16) == prefix_block_hashes(ids, 16)
    assert prompts.block_hashes("/v1/chat/completions", body, 32) == prefix_block_hashes(ids, 32)
    with pytest.raises(ValueError):
        prompts.block_hashes("/v1/chat/completions", "{not json", 16)


def test_the_haproxy_chooser_keys_a_body_as_the_ingress_keys_its_route():
    """RouteChooser (skiff.ray.direct) sees the body alone; its key is the
    ingress's for the route the body's fields name, long bodies (hashed on a
    thread) and short alike."""
    from skiff.ray.direct import RouteChooser
    from conftest import QWEN, need
    chooser = RouteChooser(None, str(need(QWEN)), 16)
    prompts = RequestPrompts(str(QWEN))
    chat = json.dumps({"messages": [{"role": "user", "content": "Sort a list. " * 400}]})
    completion = json.dumps({"prompt": list(range(100, 190))})  # 5 full blocks and 10 ids
    assert len(chat) > 4096  # past INLINE_KEY_BYTES
    assert chooser.routing_key(chat.encode()) == tuple(prompts.block_hashes("/v1/chat/completions", chat, 16))
    assert chooser.routing_key(completion.encode()) == tuple(prefix_block_hashes(list(range(100, 190)), 16))
    assert len(chooser.routing_key(completion.encode())) == 5
    assert chooser.routing_key(b'{"prompt": "x", "max_tokens": -1}') == ()  # refused by the server: no key
    assert chooser.routing_key(b"{not json") == ()
