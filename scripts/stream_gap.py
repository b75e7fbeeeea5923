#!/usr/bin/env python3
"""The largest gap between two tokens of one client's stream while another
client's long prompt is prefilled (issue 42, row 7).

  scripts/stream_gap.py --binary build/skiff --model MODEL.gguf --prompt-tokens 8000 [-- SERVE FLAGS]

Starts `skiff serve` (default flags, plus any after --), streams a short
completion, sends the long prompt once the stream runs, and prints the stream's
largest inter-token gap while the prompt was in, its median gap, and the time
the prompt took. Needs httpx (the test venv has it)."""
import argparse
import json
import re
import statistics
import subprocess
import threading
import time

import httpx


def start(binary, model, flags, log=None):
    proc = subprocess.Popen([binary, "serve", "-m", model, "--port", "0", *flags], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if m := re.search(r"listening on http://[^:]+:(\d+)", line):
            url = f"http://127.0.0.1:{m.group(1)}"
            break
    else:
        raise RuntimeError("skiff serve did not start")
    out = open(log, "w", buffering=1) if log else None
    threading.Thread(target=lambda: [out and out.write(line) for line in proc.stderr], daemon=True).start()
    while True:
        try:
            if httpx.get(url + "/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)


def long_prompt(url, n_tokens):
    """Distinct numbered words, about n_tokens of them after tokenization."""
    words = [f"w{i}" for i in range(n_tokens)]
    count = httpx.post(url + "/tokenize", json={"prompt": " ".join(words)}).json()["count"]
    return " ".join(words[: int(len(words) * n_tokens / count)])


def measure(url, prompt_tokens, max_tokens=4000, warm_tokens=5):
    """While a stream runs, a prompt of prompt_tokens arrives: the stream's
    largest gap between tokens while the prompt was in ("gap"), its median gap
    before ("median"), the prompt's seconds to its answer ("prompt_s"), and how
    long GET /metrics took half a second into it ("metrics_s")."""
    prompt = long_prompt(url, prompt_tokens)
    times = []
    window = {}
    body = {"prompt": "def quicksort(arr):", "max_tokens": max_tokens, "ignore_eos": True, "temperature": 0,
            "stream": True}

    def send_long():
        window["start"] = time.monotonic()
        r = httpx.post(url + "/v1/completions", json={"prompt": prompt, "max_tokens": 1}, timeout=600)
        window["end"] = time.monotonic()
        window["status"] = r.status_code

    def time_metrics():
        time.sleep(0.5)
        started = time.monotonic()
        httpx.get(url + "/metrics", timeout=600)
        window["metrics_s"] = time.monotonic() - started

    threads = [threading.Thread(target=send_long), threading.Thread(target=time_metrics)]
    with httpx.stream("POST", url + "/v1/completions", json=body, timeout=600) as r:
        for line in r.iter_lines():
            if not line.startswith("data: {"):
                continue
            if json.loads(line[6:])["choices"][0]["text"] == "":
                continue
            times.append(time.monotonic())
            if len(times) == warm_tokens:
                for t in threads:
                    t.start()
            if "end" in window and times[-1] > window["end"] + 0.5:
                break
    for t in threads:
        t.join()
    assert window["status"] == 200, window
    gaps = [(b - a, b) for a, b in zip(times, times[1:])]
    return {"gap": max(g for g, t in gaps if t >= window["start"]),
            "median": statistics.median(g for g, t in gaps if t < window["start"]),
            "prompt_s": window["end"] - window["start"], "metrics_s": window["metrics_s"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/skiff")
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt-tokens", type=int, default=8000)
    ap.add_argument("--log", help="write the server's stderr here")
    ap.add_argument("flags", nargs="*", help="more `skiff serve` flags (after --)")
    a = ap.parse_args()
    proc, url = start(a.binary, a.model, a.flags, a.log)
    try:
        m = measure(url, a.prompt_tokens)
        print(f"largest inter-token gap {m['gap'] * 1e3:.0f} ms during a {a.prompt_tokens}-token prompt "
              f"({m['prompt_s']:.1f} s to its answer); median gap before it {m['median'] * 1e3:.0f} ms; "
              f"GET /metrics during it {m['metrics_s'] * 1e3:.0f} ms")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
