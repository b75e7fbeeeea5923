"""Clients that leave, many clients at once, a full queue, and shutdown."""
import json
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from conftest import STORIES, Server, rss_kib, threads


def wait_for(predicate, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def idle(server):
    m = server.metrics()
    return m["skiff:kv_cache_blocks_used"] == 0 and m["vllm:num_requests_running"] == 0


def long_request(stream):
    return {"model": "qwen", "prompt": "def quicksort(arr):", "max_tokens": 1500, "temperature": 0,
            "ignore_eos": True, "stream": stream}


def test_disconnect_mid_stream_frees_the_blocks(qwen):
    cancelled = qwen.metrics()["skiff:requests_cancelled_total"]
    with httpx.stream("POST", qwen.url + "/v1/completions", json=long_request(True), timeout=60) as r:
        lines = r.iter_lines()
        for _ in range(6):
            next(lines)
        assert qwen.metrics()["skiff:kv_cache_blocks_used"] > 0
    assert wait_for(lambda: idle(qwen)), qwen.metrics()
    assert qwen.metrics()["skiff:requests_cancelled_total"] == cancelled + 1


def test_disconnect_while_waiting_frees_the_blocks(qwen):
    body = json.dumps(long_request(False)).encode()
    with socket.create_connection(("127.0.0.1", qwen.port)) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert wait_for(lambda: qwen.metrics()["vllm:num_requests_running"] == 1)
    assert wait_for(lambda: idle(qwen)), qwen.metrics()


def test_64_concurrent_streaming_clients(qwen):
    prompts = [f"# Python function number {i}: compute the {w}\ndef " for i, w in
               enumerate(["sum", "mean", "max", "min", "median", "mode", "range", "product"] * 8)]
    client = qwen.client(timeout=300)
    expected = {p: client.completions.create(model="qwen", prompt=p, max_tokens=8, temperature=0).choices[0].text
                for p in set(prompts)}
    health = []
    done = threading.Event()

    def watch_health():
        while not done.is_set():
            health.append(httpx.get(qwen.url + "/health", timeout=10).status_code)
            time.sleep(0.05)

    def stream(prompt):
        chunks = client.completions.create(model="qwen", prompt=prompt, max_tokens=8, temperature=0, stream=True)
        return "".join(c.choices[0].text for c in chunks if c.choices)

    watcher = threading.Thread(target=watch_health)
    watcher.start()
    with ThreadPoolExecutor(64) as pool:
        texts = list(pool.map(stream, prompts))
    done.set()
    watcher.join()
    assert texts == [expected[p] for p in prompts]
    assert health and set(health) == {200}


def test_300_concurrent_streaming_clients_on_a_constant_set_of_threads():
    server = Server(STORIES, "--max-seqs", "64")
    try:
        pid = server.proc.pid
        prompts = [f"Once upon a time, {name} found a {thing}" for name in ("Tim", "Lily", "Sue", "Ben", "Max")
                   for thing in ("ball", "cat", "tree", "boat", "star", "cake")] * 10
        body = {"max_tokens": 16, "temperature": 0, "ignore_eos": True}
        expected = {p: server.post("/v1/completions", {**body, "prompt": p}).json()["choices"][0]["text"]
                    for p in set(prompts)}  # one at a time

        def stream(prompt):
            with httpx.stream("POST", server.url + "/v1/completions", json={**body, "prompt": prompt, "stream": True},
                              timeout=120) as r:
                events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
            assert events[-1] == "[DONE]"
            return "".join(json.loads(e)["choices"][0]["text"] for e in events[:-1])

        # A full batch first: the KV blocks and scratch of 64 sequences are
        # touched once and kept for the next batch; the wave must add nothing.
        with ThreadPoolExecutor(64) as pool:
            list(pool.map(stream, prompts[:64]))
        threads_before, rss_before = threads(pid), rss_kib(pid)
        most_threads = threads_before
        done = threading.Event()

        def watch_threads():
            nonlocal most_threads
            while not done.is_set():
                most_threads = max(most_threads, threads(pid))
                time.sleep(0.005)

        watcher = threading.Thread(target=watch_threads)
        watcher.start()
        with ThreadPoolExecutor(len(prompts)) as pool:
            texts = list(pool.map(stream, prompts))
        done.set()
        watcher.join()
        deadline = time.time() + 3  # an idle engine gives back what the requests freed
        while (rss_after := rss_kib(pid)) > rss_before * 1.1 and time.time() < deadline:
            time.sleep(0.1)
        print(f"threads {threads_before} (most {most_threads}), RSS {rss_before} KiB before, {rss_after} after")
        assert texts == [expected[p] for p in prompts]
        assert most_threads == threads_before == threads(pid)
        assert rss_after <= rss_before * 1.1
    finally:
        assert server.stop() == 0, "".join(server.log[-20:])


def test_a_full_queue_answers_503_at_once(stories):
    # max-seqs 2 and max-queue 2: of many long requests at once, some must be refused.
    body = {"prompt": "Once upon a time", "max_tokens": 400, "ignore_eos": True}
    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(lambda _: stories.post("/v1/completions", body).status_code, range(12)))
    assert 503 in statuses and 200 in statuses and set(statuses) <= {200, 503}
    refused = stories.post("/v1/completions", body)  # the queue is empty again
    assert refused.status_code == 200
    assert stories.metrics()["skiff:requests_rejected_total"] >= statuses.count(503)


def test_sigterm_cancels_streams_and_exits_cleanly():
    server = Server(STORIES)
    body = {"prompt": "Once upon a time", "max_tokens": 500, "ignore_eos": True, "stream": True}
    events = []
    with httpx.stream("POST", server.url + "/v1/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if line:
                events.append(line)
            if len(events) == 3:
                server.proc.send_signal(signal.SIGTERM)
    assert events[-1] == "data: [DONE]"
    last = json.loads(events[-2][len("data: "):])
    assert last["choices"][0]["finish_reason"] in ("abort", "length")
    assert server.proc.wait(30) == 0, "".join(server.log)
    assert any("cancelling requests in flight" in line for line in server.log)


def test_health_is_503_while_the_model_loads():
    from conftest import BINARY, QWEN, need
    import re
    import subprocess
    proc = subprocess.Popen([BINARY, "serve", "-m", str(need(QWEN)), "--port", "0", "-t", "1"],
                            stderr=subprocess.PIPE, text=True)
    try:
        # Lines before it (the reply syntax) may come first.
        port = next(int(m.group(1)) for line in proc.stderr if (m := re.search(r":(\d+) \(loading", line)))
        statuses = []
        deadline = time.time() + 120
        while (not statuses or statuses[-1] != 200) and time.time() < deadline:
            r = httpx.get(f"http://127.0.0.1:{port}/health")
            statuses.append(r.status_code)
            if r.status_code == 503:
                assert "loading" in r.json()["error"]["message"]
        assert statuses[0] == 503 and statuses[-1] == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
