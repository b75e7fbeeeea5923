"""Two Ray nodes on this machine, started as separate `ray start` processes
(one CPU each), one skiff replica on each, the endpoint served through the
head: what several machines do, on one. The driver runs in a process of its
own too (this file run as a script), so that every process of the cluster
starts with the same token for Ray's authentication, as every machine of a
real cluster is given it."""
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import QWEN, deploy, free_port, need, replica_actors

ray = pytest.importorskip("ray")
from ray import serve  # noqa: E402


def ray_node(env, *args):
    """`ray start --block ...` in a session of its own: stopping it stops that node's processes."""
    return subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--num-cpus", "1",
                             "--disable-usage-stats", *args], start_new_session=True, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_node(proc):
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def drive(address):
    """The driver: deploys 2 replicas × 1 thread on the cluster, sends 12
    requests through the head's proxy; prints what the test checks."""
    import socket

    import httpx
    deadline = time.time() + 120
    host, port = address.split(":")
    while True:  # the head's GCS listens
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            break
        except OSError:
            assert time.time() < deadline, "the head node did not start"
            time.sleep(0.5)
    ray.init(address=address, log_to_driver=False)
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        assert time.time() < deadline, "the second node did not join"
        time.sleep(0.5)
    port = free_port()
    # One proxy, on the head: both nodes share this machine's ports.
    serve.start(http_options={"host": "127.0.0.1", "port": port, "location": "HeadOnly"})
    endpoint = deploy(f"http://127.0.0.1:{port}", router="prefix")
    served, statuses = [], []
    for i in range(12):
        r = httpx.post(endpoint.url + "/v1/completions", timeout=120,
                       json={"prompt": f"# {i}: a Python function that reverses a list\n", "max_tokens": 4})
        statuses.append(r.status_code)
        served.append(r.headers.get("x-skiff-replica"))
    print("RESULT " + json.dumps({"actors": replica_actors(), "statuses": statuses, "served": served,
                      "metrics_replicas": sorted(endpoint.metrics_by_replica())}))
    serve.shutdown()
    ray.shutdown()


def test_one_replica_on_each_of_two_nodes_served_through_the_head():
    need(QWEN)
    # A Ray temp dir of its own: the head writes the cluster's address there
    # (ray_current_cluster), where a later ray.init() would look for it.
    temp_dir = tempfile.mkdtemp(prefix="skiff-ray-")
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_TMPDIR": temp_dir}
    gcs_port = free_port()
    address = f"127.0.0.1:{gcs_port}"
    nodes = [ray_node(env, "--head", "--port", str(gcs_port), "--include-dashboard", "false")]
    try:
        nodes.append(ray_node(env, "--address", address))
        out = subprocess.run([sys.executable, __file__, address], env=env, capture_output=True, text=True,
                             timeout=400, cwd=os.path.dirname(__file__))
        assert out.returncode == 0, out.stderr[-4000:]
        result = json.loads(next(line[7:] for line in out.stdout.splitlines() if line.startswith("RESULT ")))
    finally:
        for node in reversed(nodes):
            stop_node(node)
        shutil.rmtree(temp_dir, ignore_errors=True)
    actors = result["actors"]
    assert len(actors) == 2 and len({node for _, _, node in actors}) == 2, actors
    assert result["statuses"] == [200] * 12
    assert set(result["served"]) == {rid for rid, _, _ in actors}
    assert result["metrics_replicas"] == sorted(rid for rid, _, _ in actors)


if __name__ == "__main__":
    drive(sys.argv[1])
