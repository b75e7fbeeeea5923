"""skiff.ray's routing measured with `skiff bench-serve` (docs/benchmarks.md,
"Ray Serve"): a shared-prefix workload (requests over a few long system
prompts) and a random one, against 2 replicas × 1 thread with the prefix
router, the same with Ray's default router, and one `skiff serve -t 2`;
output tok/s, TTFT p50/p99 and the prefix-cache hit rate (from /metrics).
Then the Ray path's overhead: TTFT at 1 client, one replica against `skiff
serve -t 1`, alternated. Prints a Markdown table.

    python python/benchmarks/ray_routing.py --binary build/skiff --model MODEL.gguf
    python python/benchmarks/ray_routing.py ... --overhead-only [--throughput-optimized] [--haproxy]
"""
import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url):
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            if httpx.get(url + "/health", timeout=10).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} never became healthy")


def prefix_counters(url):
    hits = queries = 0.0
    for line in httpx.get(url + "/metrics", timeout=30).text.splitlines():
        m = re.match(r"^vllm:prefix_cache_(hits|queries)_total\{[^}]*\} (\S+)$", line)
        if m:
            if m.group(1) == "hits":
                hits += float(m.group(2))
            else:
                queries += float(m.group(2))
    return hits, queries


def shared_prefix_dataset(path, n, output_len):
    """n requests, each one of 4 system prompts (~400 tokens) and a question of its own."""
    rng = random.Random(0)
    systems = [" ".join(f"Rule {s}.{i}: in project {s}, functions are short, tested, and named for what they do."
                        for i in range(24)) for s in range(4)]
    with open(path, "w") as f:
        for i in range(n):
            prompt = f"{rng.choice(systems)}\nQuestion {i}: write a Python function that returns {i} squared.\n"
            f.write(json.dumps({"prompt": prompt, "output_len": output_len}) + "\n")


def bench(args, port, workload, concurrency, n, output_len, input_len=256):
    out = tempfile.mktemp(suffix=".json")
    cmd = [args.binary, "bench-serve", "--port", str(port), "--tokenizer", args.model,
           "--num-prompts", str(n), "--max-concurrency", str(concurrency), "--result-file", out]
    cmd += ["--dataset", workload] if workload.endswith(".jsonl") else \
        ["--input-len", str(input_len), "--output-len", str(output_len), "--seed", "1"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)[0]


def measure(args, url, port, workloads):
    # An app deployed over another: the old replicas' /metrics leave the board
    # 5 s after they stop publishing.
    time.sleep(6)
    rows = {}
    for name, path in workloads.items():
        before = prefix_counters(url)
        r = bench(args, port, path, 8, args.num_prompts, 32)
        time.sleep(1.5)  # Ray's replicas publish /metrics every 0.5 s
        after = prefix_counters(url)
        hit = (after[0] - before[0]) / max(1.0, after[1] - before[1])
        rows[name] = (r["output_throughput"], r["ttft"]["median_ms"], r["ttft"]["p99_ms"], hit, r["failed"])
    return rows


def skiff_serve(args, threads):
    proc = subprocess.Popen([args.binary, "serve", "-m", args.model, "--port", "0", "-t", str(threads),
                             "--no-log-requests", *args.serve_args.split()], stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    wait_healthy(f"http://127.0.0.1:{port}")
    return proc, port


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--num-prompts", type=int, default=64)
    p.add_argument("--serve-args", default="-c 2048")
    p.add_argument("--overhead-only", action="store_true", help="only the TTFT overhead at 1 client")
    p.add_argument("--throughput-optimized", action="store_true",
                   help="Ray Serve's RAY_SERVE_THROUGHPUT_OPTIMIZED=1 (user code and router on the replicas' main "
                        "loops, gRPC between deployments), set before this script starts its cluster")
    p.add_argument("--haproxy", action="store_true",
                   help="Ray Serve's HAProxy ingress (RAY_SERVE_ENABLE_HA_PROXY=1, bodies forwarded to the "
                        "router): the replicas serve HTTP themselves (skiff.ray.direct)")
    args = p.parse_args()
    if args.throughput_optimized:
        os.environ["RAY_SERVE_THROUGHPUT_OPTIMIZED"] = "1"
    if args.haproxy:
        os.environ["RAY_SERVE_ENABLE_HA_PROXY"] = "1"
        os.environ["RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY"] = "1"
        os.environ.setdefault("RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S", "2")  # each redeployment waits it
    # Ray Serve reads its settings from the environment as it is imported.
    import ray
    from ray import serve

    from skiff.ray import build_app
    args.binary = os.path.abspath(args.binary)
    shared = tempfile.mktemp(suffix=".jsonl")
    shared_prefix_dataset(shared, args.num_prompts, 32)
    workloads = {"shared prefix": shared, "random": "random"}
    results = {}

    if not args.overhead_only:
        proc, port = skiff_serve(args, 2)
        results["skiff serve -t 2"] = measure(args, f"http://127.0.0.1:{port}", port, workloads)
        stop(proc)

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    http_port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": http_port})
    url = f"http://127.0.0.1:{http_port}"
    base = {"model": args.model, "binary": args.binary, "serve_args": args.serve_args + " --no-log-requests"}
    for router in () if args.overhead_only else ("prefix", "pow2"):
        serve.run(build_app({**base, "num_replicas": "2", "threads_per_replica": "1", "router": router}),
                  name="skiff", route_prefix="/")
        wait_healthy(url)
        results[f"Ray, 2 × 1 thread, {router}"] = measure(args, url, http_port, workloads)

    # Overhead: 1 client, 16-token prompts (TTFT is mostly the path, not the
    # prefill), one replica against skiff serve -t 1.
    serve.run(build_app({**base, "num_replicas": "1", "threads_per_replica": "1", "router": "prefix"}),
              name="skiff", route_prefix="/")
    wait_healthy(url)
    # Alternated with the plain server, rounds repeated: the two sides meet the same load.
    proc, port = skiff_serve(args, 1)
    ray_ttfts, plain_ttfts = [], []
    for _ in range(3):
        ray_ttfts.append(bench(args, http_port, "random", 1, 64, 2, input_len=16)["ttft"]["median_ms"])
        plain_ttfts.append(bench(args, port, "random", 1, 64, 2, input_len=16)["ttft"]["median_ms"])
    stop(proc)
    serve.shutdown()
    ray.shutdown()
    ray_ttft, plain_ttft = sorted(ray_ttfts)[1], sorted(plain_ttfts)[1]

    print("| endpoint | workload | output tok/s | TTFT p50 ms | TTFT p99 ms | prefix hit rate | failed |")
    print("|---|---|---|---|---|---|---|")
    for endpoint, rows in results.items():
        for workload, (tps, p50, p99, hit, failed) in rows.items():
            print(f"| {endpoint} | {workload} | {tps:.1f} | {p50:.0f} | {p99:.0f} | {hit:.2f} | {failed} |")
    print(f"\n1 client, 64 requests of 16 random tokens, 2 out, 3 alternated rounds: TTFT p50 "
          f"{', '.join(f'{t:.1f}' for t in ray_ttfts)} ms through Ray (1 replica), "
          f"{', '.join(f'{t:.1f}' for t in plain_ttfts)} ms from skiff serve -t 1; medians {ray_ttft:.1f} and "
          f"{plain_ttft:.1f}: {ray_ttft - plain_ttft:+.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
