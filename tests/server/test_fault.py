"""The fault test: valid requests, malformed ones and clients that leave at
random points, all at once. Every valid request must get its correct
answer, every bad one a 4xx, and the server must end idle, its KV pool empty
and its memory where it was after warm-up."""
import json
import random
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from conftest import STORIES, Server, rss_kib

PROMPTS = ["Once upon a time", "Lily and Tom", "The cat", "One day, a little bird", "Sam had a red ball"]


def valid_body(rng):
    return {"prompt": rng.choice(PROMPTS), "max_tokens": rng.choice([4, 16, 48]), "temperature": 0}


def malformed(rng):
    return rng.choice([
        b'{"prompt": ',
        b'[]',
        b'{"prompt": "a", "max_tokens": -5}',
        b'{"prompt": "a", "temperature": "x"}',
        b'{"prompt": "\xff\xfe"}',
        b'{"prompt": "a", "stop": [1, 2]}',
        b'{"prompt": "a", "n": 100000}',
        b'{"prompt": "a", "max_tokens": 100000}',
        b'{"messages": "hi"}',
        json.dumps({"prompt": [0, 10 ** 9]}).encode(),
        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))),
    ])


def run_one(server, expected, seed):
    rng = random.Random(seed)
    kind = rng.choice(["valid", "valid", "stream", "bad", "leave_stream", "leave_wait", "leave_early"])
    url = server.url + "/v1/completions"
    if kind == "valid":
        body = valid_body(rng)
        r = httpx.post(url, json=body, timeout=120)
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["text"] == expected[(body["prompt"], body["max_tokens"])]
    elif kind == "stream":
        body = {**valid_body(rng), "stream": True}
        text = ""
        with httpx.stream("POST", url, json=body, timeout=120) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    text += json.loads(line[6:])["choices"][0]["text"]
        assert text == expected[(body["prompt"], body["max_tokens"])]
    elif kind == "bad":
        r = httpx.post(url, content=malformed(rng), timeout=120, headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (r.status_code, r.text)
        assert "error" in r.json()
    elif kind == "leave_stream":
        body = {"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True, "stream": True}
        with httpx.stream("POST", url, json=body, timeout=120) as r:
            for i, _ in enumerate(r.iter_lines()):
                if i >= rng.randrange(1, 20):
                    break
    else:  # a raw client that leaves while waiting, or before its request is whole
        body = json.dumps({"prompt": rng.choice(PROMPTS), "max_tokens": 400, "ignore_eos": True}).encode()
        head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
        data = head + body if kind == "leave_wait" else (head + body)[: rng.randrange(1, len(head) + len(body))]
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(data)
            time.sleep(rng.random() * 0.05)
    return kind


def test_mixed_valid_malformed_and_leaving_clients():
    server = Server(STORIES, "--max-seqs", "16")
    try:
        expected = {}
        for p in PROMPTS:
            for n in (4, 16, 48):
                r = httpx.post(server.url + "/v1/completions", json={"prompt": p, "max_tokens": n, "temperature": 0})
                expected[(p, n)] = r.json()["choices"][0]["text"]
        # Warm-up in the same shape: the threads' malloc arenas, the KV pages
        # first touched (the pool is committed as blocks are first written).
        with ThreadPoolExecutor(24) as pool:
            list(pool.map(lambda s: run_one(server, expected, s), range(200)))
        time.sleep(1)
        rss_after_warm_up = rss_kib(server.proc.pid)
        with ThreadPoolExecutor(24) as pool:
            kinds = list(pool.map(lambda s: run_one(server, expected, s), range(1000, 1400)))
        assert {"valid", "stream", "bad", "leave_stream", "leave_wait", "leave_early"} <= set(kinds)
        deadline = time.time() + 20
        while time.time() < deadline:
            m = server.metrics()
            if m["skiff:kv_cache_blocks_used"] == 0 and m["vllm:num_requests_running"] == 0 \
                    and m["vllm:num_requests_waiting"] == 0:
                break
            time.sleep(0.1)
        assert m["skiff:kv_cache_blocks_used"] == 0 and m["vllm:num_requests_running"] == 0, m
        assert rss_kib(server.proc.pid) < rss_after_warm_up * 1.05 + 2048, (rss_after_warm_up, rss_kib(server.proc.pid))
        assert httpx.get(server.url + "/health").status_code == 200
    finally:
        assert server.stop() == 0, "".join(server.log[-20:])
