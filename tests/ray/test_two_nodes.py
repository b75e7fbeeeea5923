"""Two Ray nodes on this machine, started as separate `ray start` processes
(one CPU each), one skiff replica on each, the endpoint served through the
head: what several machines do, on one."""
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from conftest import QWEN, deploy, free_port, need, replica_actors

ray = pytest.importorskip("ray")
from ray import serve  # noqa: E402


def ray_node(*args):
    """`ray start --block ...` in a session of its own: stopping it stops that node's processes."""
    return subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--num-cpus", "1",
                             "--disable-usage-stats", *args], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_node(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_one_replica_on_each_of_two_nodes_served_through_the_head():
    need(QWEN)
    gcs_port = free_port()
    nodes = [ray_node("--head", "--port", str(gcs_port), "--include-dashboard", "false")]
    try:
        address = f"127.0.0.1:{gcs_port}"
        deadline = time.time() + 120
        while True:  # the head's GCS answers
            try:
                ray.init(address=address, log_to_driver=False)
                break
            except Exception:
                assert time.time() < deadline, "the head node did not start"
                time.sleep(1)
        nodes.append(ray_node("--address", address))
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.time() < deadline, "the second node did not join"
            time.sleep(0.5)
        port = free_port()
        # One proxy, on the head: both nodes share this machine's ports.
        serve.start(http_options={"host": "127.0.0.1", "port": port, "location": "HeadOnly"})
        endpoint = deploy(f"http://127.0.0.1:{port}", router="prefix")
        actors = replica_actors()
        assert len(actors) == 2 and len({node for _, _, node in actors}) == 2, actors
        served = set()
        for i in range(12):
            r = httpx.post(endpoint.url + "/v1/completions", timeout=120,
                           json={"prompt": f"# {i}: a Python function that reverses a list\n", "max_tokens": 4})
            assert r.status_code == 200, r.text
            served.add(r.headers["x-skiff-replica"])
        assert served == {rid for rid, _, _ in actors}
        assert set(endpoint.metrics_by_replica()) == served
        serve.shutdown()
    finally:
        ray.shutdown()
        for node in reversed(nodes):
            stop_node(node)
