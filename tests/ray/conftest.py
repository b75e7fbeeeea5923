"""A local Ray cluster running skiff.ray, for the tests of this folder.

SKIFF_BINARY (set by ctest) is the skiff binary the replicas start; the real
Qwen2.5-Coder-0.5B comes from the cache scripts/fetch-models.sh fills
(missing: the tests skip, unless SKIFF_REQUIRE_REAL_MODELS is set, as in CI).
"""
import importlib.util
import os
import re
import socket
import time
from pathlib import Path

import httpx
import openai
import pytest


def _server_tests_conftest():
    """tests/server/conftest.py, for its `skiff serve` starter and model paths."""
    path = Path(__file__).resolve().parents[1] / "server" / "conftest.py"
    spec = importlib.util.spec_from_file_location("server_conftest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_server = _server_tests_conftest()
BINARY, QWEN, STORIES, Server, need = _server.BINARY, _server.QWEN, _server.STORIES, _server.Server, _server.need
# Every engine here, Ray's replicas and the reference `skiff serve` alike:
# bit-identical outputs alone or batched (--batch-invariant), and a KV pool of
# 90 blocks (1440 tokens), under the conversation test's 16 conversations of up
# to 13 blocks but about its half (8 of them): as when a cluster's memory is
# short of its working set, what a replica holds decides its hits there.
SERVE_ARGS = ["-c", "1024", "--batch-invariant", "--kv-mem", "17M", "--served-model-name", "qwen"]

# Whether this pytest run serves through Ray Serve's HAProxy ingress
# (skiff.ray.direct; ctest's ray.pytest.haproxy): Ray reads its settings from
# the environment as it is imported, so a run is in one mode or the other.
HAPROXY = os.environ.get("RAY_SERVE_ENABLE_HA_PROXY") == "1"

ray = pytest.importorskip("ray", reason="Ray is not installed: scripts/setup-ray-env.sh (tests/ray/run.sh uses it)")
from ray import serve  # noqa: E402

from skiff.ray import build_app  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url, timeout_s=180):
    deadline = time.time() + timeout_s
    while True:
        try:
            if httpx.get(url + "/health", timeout=10).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.time() > deadline:
            raise RuntimeError(f"{url} never became healthy")
        time.sleep(0.2)


class Endpoint:
    """skiff.ray's HTTP endpoint (Ray Serve's proxy) or a plain `skiff serve`."""

    def __init__(self, url):
        self.url = url

    def client(self, **kw):
        return openai.OpenAI(base_url=self.url + "/v1", api_key="none", max_retries=0, **kw)

    def metrics_by_replica(self):
        """{replica: {metric: value}} from /metrics' replica-labelled samples."""
        out = {}
        for line in httpx.get(self.url + "/metrics", timeout=30).text.splitlines():
            m = re.match(r'^([a-z_:]+)\{model_name="[^"]*",replica="([^"]+)"\} (\S+)$', line)
            if m:
                out.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3))
        return out

    def summed(self, metric):
        return sum(values.get(metric, 0.0) for values in self.metrics_by_replica().values())


def deploy(url, **args):
    """Runs skiff.ray's app (replacing any) and waits until it answers."""
    app_args = {"model": str(QWEN), "num_replicas": "2", "threads_per_replica": "1",
                "serve_args": " ".join(SERVE_ARGS), "binary": BINARY, "routing_stats_period_s": "0.5"}
    app_args.update({k: str(v) for k, v in args.items()})
    serve.run(build_app(app_args), name="skiff", route_prefix="/")
    wait_healthy(url)
    return Endpoint(url)


def replica_actors(app="skiff"):
    """The live replica actors of the app's engine deployment: [(replica id, pid, node id)]
    (asked of each actor: Ray's state API needs the dashboard these clusters run without)."""
    out = []
    for actor in ray.util.list_named_actors(all_namespaces=True):
        name = actor["name"]
        if actor["namespace"] == "serve" and name.startswith(f"SERVE_REPLICA::{app}#skiff-replica#"):
            handle = ray.get_actor(name, namespace="serve")
            try:
                pid, node = ray.get(handle.__ray_call__.remote(
                    lambda self: (os.getpid(), ray.get_runtime_context().get_node_id())), timeout=30)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                continue  # dead, or dying
            out.append((name.rsplit("#", 1)[1], pid, node))
    return out


def child_pids(pid):
    """Processes whose parent is pid."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out
