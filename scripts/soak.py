#!/usr/bin/env python3
"""The soak test (scripts/soak.sh; figures in docs/reliability.md): a `skiff serve`
driven at saturation for minutes by the fault test's mix and more: greedy and
seeded completions and chats, plain and streamed, each checked against the
answer the same request got alone before the load; malformed bodies and bad
HTTP, each of which must get a 4xx with an OpenAI-shaped error; and clients
that leave mid-stream, while waiting, or before their request is whole. It
records requests served, errors, the server's RSS over time, the KV pool once
the load stops, and latency percentiles; it exits 1 unless every valid
request was answered correctly, every bad one got its 4xx, the server never
crashed and exited 0 on SIGTERM, the pool went back to idle and RSS grew less
than 5% after warm-up."""
import argparse
import json
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))
import conftest  # noqa: E402
from conftest import BINARY, STORIES, Server  # noqa: E402
from test_fault import PROMPTS, malformed, rss_kib  # noqa: E402

# stories260K has no chat template; this one is enough to render a conversation.
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")
CONVERSATIONS = [[{"role": "user", "content": "Tell me a story about a cat."}],
                 [{"role": "system", "content": "You tell short stories."},
                  {"role": "user", "content": "Once upon a time there was a dog."}],
                 [{"role": "user", "content": "Lily went to the park."},
                  {"role": "assistant", "content": "She saw a bird."},
                  {"role": "user", "content": "What did the bird do?"}]]
MAX_TOKENS = [4, 16, 48]
SAMPLINGS = [None, 1, 2]  # greedy, or temperature 0.8 with this seed
VALID = ["completion", "completion_stream", "chat", "chat_stream"]
BAD = ["malformed", "bad_http"]
LEAVING = ["leave_stream", "leave_wait", "leave_early"]
KINDS = VALID * 3 + BAD + LEAVING  # valid requests 3/4 of the mix


def request_body(chat, prompt, max_tokens, seed):
    body = {"messages": prompt} if chat else {"prompt": prompt}
    body.update(max_tokens=max_tokens, temperature=0 if seed is None else 0.8)
    if seed is not None:
        body["seed"] = seed
    return body


def all_requests():
    """Every valid request of the mix: (chat, prompt index, max_tokens, seed)."""
    return [(chat, i, n, seed) for chat, prompts in ((False, PROMPTS), (True, CONVERSATIONS))
            for i in range(len(prompts)) for n in MAX_TOKENS for seed in SAMPLINGS]


def prompt_of(chat, i):
    return CONVERSATIONS[i] if chat else PROMPTS[i]


def text_of(chat, response):
    choice = response["choices"][0]
    return choice["message"]["content"] if chat else choice["text"]


def delta_of(chat, chunk):
    if not chunk["choices"]:
        return ""
    choice = chunk["choices"][0]
    return (choice["delta"].get("content") or "") if chat else choice["text"]


class Results:
    """What the workers saw, shared between them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}          # kind -> requests
        self.errors = []          # (kind, what went wrong), the first 50
        self.n_errors = 0
        self.latencies = {}       # valid kind -> end-to-end seconds
        self.first_chunk = []     # streams: seconds to the first event

    def record(self, kind, error=None, latency=None, first_chunk=None):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if error:
                self.n_errors += 1
                if len(self.errors) < 50:
                    self.errors.append((kind, error))
            elif latency is not None:
                self.latencies.setdefault(kind, []).append(latency)
            if first_chunk is not None and not error:
                self.first_chunk.append(first_chunk)


def path_of(chat):
    return "/v1/chat/completions" if chat else "/v1/completions"


def run_plain(client, expected, rng, chat):
    key = rng.choice(all_requests_of(chat))
    r = client.post(path_of(chat), json=request_body(chat, prompt_of(chat, key[1]), key[2], key[3]))
    if r.status_code != 200:
        return f"status {r.status_code}: {r.text[:200]}", None
    got = text_of(chat, r.json())
    return (None if got == expected[key] else f"{key}: {got!r} != {expected[key]!r}"), None


def run_stream(client, expected, rng, chat):
    key = rng.choice(all_requests_of(chat))
    body = {**request_body(chat, prompt_of(chat, key[1]), key[2], key[3]), "stream": True}
    start, first, text, done = time.time(), None, "", False
    with client.stream("POST", path_of(chat), json=body) as r:
        if r.status_code != 200:
            return f"status {r.status_code}", None
        for line in r.iter_lines():
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: {"):
                first = first if first is not None else time.time() - start
                text += delta_of(chat, json.loads(line[6:]))
    if not done:
        return "the stream ended without [DONE]", first
    return (None if text == expected[key] else f"{key} streamed: {text!r} != {expected[key]!r}"), first


def all_requests_of(chat):
    return [k for k in all_requests() if k[0] == chat]


def check_error_response(r):
    if not 400 <= r.status_code < 500:
        return f"status {r.status_code}: {r.text[:200]}"
    try:
        error = r.json()["error"]
        return None if error["code"] == r.status_code and error["message"] else f"error body {r.text[:200]}"
    except (ValueError, KeyError, TypeError):
        return f"not an OpenAI error: {r.text[:200]}"


def run_malformed(client, rng):
    path = rng.choice(["/v1/completions", "/v1/chat/completions"])
    r = client.post(path, content=malformed(rng), headers={"Content-Type": "application/json"})
    return check_error_response(r)


BAD_HTTP = [b"GET /no/such/route HTTP/1.1\r\nHost: x\r\n\r\n",
            b"DELETE /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n",
            b"NOT HTTP AT ALL\r\n",
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-Filler: " + b"a" * 70000 + b"\r\n\r\n",
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n{"]


def run_bad_http(port, rng):
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(rng.choice(BAD_HTTP))
        data = b""
        while b"\r\n\r\n" not in data or len(data) < data.find(b"\r\n\r\n") + 4 + content_length(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ")[1])
    except (IndexError, ValueError):
        return f"no HTTP answer: {data[:200]!r}"
    return check_error_response(httpx.Response(status, content=body[:content_length(data)]))


def content_length(data):
    for line in data.split(b"\r\n\r\n")[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def run_leaving(port, client, rng, kind):
    """A client that goes away: mid-stream, while waiting, or before its request is whole."""
    chat = rng.random() < 0.5
    body = {**request_body(chat, prompt_of(chat, 0), 400, None), "ignore_eos": True}
    if kind == "leave_stream":
        with client.stream("POST", path_of(chat), json={**body, "stream": True}) as r:
            for i, _ in enumerate(r.iter_lines()):
                if i >= rng.randrange(1, 20):
                    break
        return
    raw = json.dumps(body).encode()
    data = (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (path_of(chat).encode(), len(raw))) + raw
    if kind == "leave_early":
        data = data[:rng.randrange(1, len(data))]
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(data)
        time.sleep(rng.random() * 0.2)


def run_one(server, client, expected, rng, results):
    kind = rng.choice(KINDS)
    start = time.time()
    try:
        first = None
        if kind in ("completion", "chat"):
            error, _ = run_plain(client, expected, rng, kind == "chat")
        elif kind in ("completion_stream", "chat_stream"):
            error, first = run_stream(client, expected, rng, kind == "chat_stream")
        elif kind == "malformed":
            error = run_malformed(client, rng)
        elif kind == "bad_http":
            error = run_bad_http(server.port, rng)
        else:
            error = run_leaving(server.port, client, rng, kind)
    except Exception as e:  # a transport error is an error too, but only for requests that stay
        error = None if kind in LEAVING else f"{type(e).__name__}: {e}"
    results.record(kind, error, time.time() - start if kind in VALID else None, first)


def worker(server, expected, seed, deadline, results):
    rng = random.Random(seed)
    with httpx.Client(base_url=server.url, timeout=120) as client:
        while time.time() < deadline:
            run_one(server, client, expected, rng, results)


def references(server):
    """Each valid request's answer when it runs alone."""
    expected = {}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        for key in all_requests():
            chat, i, n, seed = key
            r = client.post(path_of(chat), json=request_body(chat, prompt_of(chat, i), n, seed))
            r.raise_for_status()
            expected[key] = text_of(chat, r.json())
    return expected


def fill_kv_pool(server, block_tokens=16):
    """Touches every block of the KV pool before RSS is measured: the pool is
    committed as blocks are first written, and the prefix cache spreads over
    blocks never used before ahead of evicting cached ones, so without this
    RSS creeps up for minutes towards the pool's size (not a leak)."""
    blocks = server.metrics()["skiff:kv_cache_blocks_total"]
    max_len = httpx.get(server.url + "/v1/models").json()["data"][0]["max_model_len"]
    n = int(blocks * block_tokens // max_len) + 2

    def long_request(i):
        body = {"prompt": f"{PROMPTS[i % len(PROMPTS)]} {i}", "max_tokens": max_len - 16, "temperature": 0,
                "ignore_eos": True}
        httpx.post(server.url + "/v1/completions", json=body, timeout=300).raise_for_status()

    for _ in range(2):  # the second round reaches the blocks the first left free
        threads = [threading.Thread(target=long_request, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def threads_of(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def monitor(server, samples, stop, start, interval):
    while not stop.wait(interval):
        m = server.metrics()
        samples.append({"t": round(time.time() - start, 1), "rss_kib": rss_kib(server.proc.pid),
                        "threads": threads_of(server.proc.pid),
                        "running": m.get("vllm:num_requests_running"), "waiting": m.get("vllm:num_requests_waiting"),
                        "kv_blocks_used": m.get("skiff:kv_cache_blocks_used")})


def percentiles(values):
    if not values:
        return {}
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"n": len(ordered), "p50_ms": round(at(0.5) * 1000, 1), "p90_ms": round(at(0.9) * 1000, 1),
            "p99_ms": round(at(0.99) * 1000, 1)}


def wait_until_idle(server, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = server.metrics()
        if m["skiff:kv_cache_blocks_used"] == 0 and m["vllm:num_requests_running"] == 0 \
                and m["vllm:num_requests_waiting"] == 0:
            return m
        time.sleep(0.2)
    return server.metrics()


def load(server, expected, args, results, samples):
    start = time.time()
    deadline = start + args.minutes * 60
    stop = threading.Event()
    watcher = threading.Thread(target=monitor, args=(server, samples, stop, start, args.sample_seconds))
    watcher.start()
    workers = [threading.Thread(target=worker, args=(server, expected, args.seed * 1000 + i, deadline, results))
               for i in range(args.concurrency)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    watcher.join()
    return time.time() - start


def rss_figures(samples, final_kib, warm_up_s):
    warm = [s for s in samples if s["t"] >= warm_up_s]
    if not warm:
        return {}
    base = warm[0]["rss_kib"]
    peak = max(s["rss_kib"] for s in warm)
    return {"after_warm_up_kib": base, "peak_after_warm_up_kib": peak, "final_idle_kib": final_kib,
            "growth_final_pct": round(100 * (final_kib - base) / base, 2),
            "growth_peak_pct": round(100 * (peak - base) / base, 2)}


def summarize(args, results, samples, seconds, idle, final_kib, crashed, exit_code):
    valid = sum(results.counts.get(k, 0) for k in VALID)
    bad = sum(results.counts.get(k, 0) for k in BAD)
    saturated = [s for s in samples if (s["waiting"] or 0) > 0]
    all_latencies = [x for k in VALID for x in results.latencies.get(k, [])]
    summary = {
        "minutes": args.minutes, "concurrency": args.concurrency, "seconds": round(seconds, 1),
        "requests": sum(results.counts.values()), "by_kind": results.counts,
        "requests_per_s": round(sum(results.counts.values()) / seconds, 1),
        "valid": valid, "bad": bad, "errors": results.n_errors, "first_errors": results.errors,
        "latency_valid": percentiles(all_latencies),
        "latency_by_kind": {k: percentiles(results.latencies.get(k, [])) for k in VALID},
        "first_chunk_streams": percentiles(results.first_chunk),
        "saturated_samples_pct": round(100 * len(saturated) / max(1, len(samples)), 1),
        "kv_blocks_used_at_end": idle.get("skiff:kv_cache_blocks_used"),
        "running_at_end": idle.get("vllm:num_requests_running"),
        "waiting_at_end": idle.get("vllm:num_requests_waiting"),
        "rss": rss_figures(samples, final_kib, args.warm_up_fraction * args.minutes * 60),
        "crashed": crashed, "exit_code": exit_code, "rss_samples": samples,
    }
    growth = summary["rss"].get("growth_final_pct", 100)
    summary["passed"] = (results.n_errors == 0 and not crashed and exit_code == 0 and growth < 5
                         and idle.get("skiff:kv_cache_blocks_used") == 0 and idle.get("vllm:num_requests_running") == 0)
    return summary


def print_summary(s):
    print(f"soak: {s['seconds']} s at concurrency {s['concurrency']}: {s['requests']} requests "
          f"({s['requests_per_s']}/s), {s['valid']} valid, {s['bad']} bad, {s['errors']} errors")
    print("soak: by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(s["by_kind"].items())))
    for kind, p in [("valid", s["latency_valid"]), *s["latency_by_kind"].items(),
                    ("first chunk of streams", s["first_chunk_streams"])]:
        if p:
            print(f"soak: latency {kind}: p50 {p['p50_ms']} ms, p90 {p['p90_ms']} ms, p99 {p['p99_ms']} ms (n {p['n']})")
    print(f"soak: the engine had requests waiting in {s['saturated_samples_pct']}% of samples")
    print(f"soak: at the end: {s['kv_blocks_used_at_end']} KV blocks used, {s['running_at_end']} running, "
          f"{s['waiting_at_end']} waiting")
    r = s["rss"]
    if r:
        print(f"soak: RSS after warm-up {r['after_warm_up_kib']} KiB, peak {r['peak_after_warm_up_kib']} KiB "
              f"({r['growth_peak_pct']:+}%), idle at the end {r['final_idle_kib']} KiB ({r['growth_final_pct']:+}%)")
    print(f"soak: crashed: {s['crashed']}, exit code on SIGTERM: {s['exit_code']}")
    for kind, error in s["first_errors"][:10]:
        print(f"soak: error ({kind}): {error}")
    print("soak: PASSED" if s["passed"] else "soak: FAILED")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10)
    p.add_argument("--concurrency", type=int, default=32, help="clients sending requests back to back")
    p.add_argument("--model", default=str(STORIES))
    p.add_argument("--binary", default=BINARY)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample-seconds", type=float, default=5, help="how often RSS and the engine are sampled")
    p.add_argument("--warm-up-fraction", type=float, default=0.3,
                   help="of the run, before RSS is compared (malloc's arenas settle over minutes)")
    p.add_argument("--out", help="the figures as JSON (with the RSS samples)")
    p.add_argument("serve_args", nargs="*", help="more `skiff serve` flags (after --)")
    return p.parse_args()


def main():
    args = parse_args()
    args.sample_seconds = min(args.sample_seconds, max(0.5, args.minutes * 60 / 20))
    template = tempfile.NamedTemporaryFile("w", suffix=".jinja", delete=False)
    template.write(CHAT_TEMPLATE)
    template.close()
    conftest.BINARY = args.binary
    server = Server(args.model, "--max-seqs", "16", "--max-queue", "256", "--chat-template", template.name,
                    "--no-log-requests", *args.serve_args)
    results, samples = Results(), []
    try:
        expected = references(server)
        fill_kv_pool(server)
        seconds = load(server, expected, args, results, samples)
        crashed = server.proc.poll() is not None
        idle = {} if crashed else wait_until_idle(server)
        time.sleep(1)
        final_kib = 0 if crashed else rss_kib(server.proc.pid)
    finally:
        exit_code = server.stop()
        Path(template.name).unlink()
    summary = summarize(args, results, samples, seconds, idle, final_kib, crashed, exit_code)
    print_summary(summary)
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
