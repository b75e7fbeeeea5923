"""Clients that hold connections without doing their part: headers or bodies
sent a byte at a time (slowloris), idle and abandoned connections, headers
without end, bodies without a length, more connections than the limit, and a
stream its client never reads. Each is cut off within its bound with a clear
answer, and the other clients are served meanwhile. The timeouts are short
(flags) so that each test takes seconds."""
import json
import select
import socket
import threading
import time

import httpx
import pytest

from conftest import STORIES, Server, read_until_closed

TIMEOUTS = ["--header-timeout", "1", "--body-timeout", "1", "--idle-timeout", "1", "--write-timeout", "1"]


@pytest.fixture(scope="module")
def server():
    s = Server(STORIES, *TIMEOUTS, "--max-body", "65536", "--max-header-bytes", "16384", "--max-seqs", "8")
    yield s
    assert s.stop() == 0, "".join(s.log[-20:])


def connect(server, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", server.port))
    s.settimeout(5)
    return s


def status_and_error(response):
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, json.loads(body)["error"]["message"]


def completion_works(server, timeout=3):
    r = httpx.post(server.url + "/v1/completions", json={"prompt": "Once", "max_tokens": 4, "temperature": 0},
                   timeout=timeout)
    return r.status_code == 200 and r.json()["choices"][0]["text"]


def trickle(sockets, data, stop, interval=0.2):
    """Sends data a byte at a time on every socket, until stop is set or the socket fails."""
    for i in range(len(data)):
        if stop.is_set():
            return
        for s in sockets:
            try:
                s.send(data[i:i + 1])
            except OSError:
                pass
        time.sleep(interval)


def test_slowloris_headers_get_408_while_others_are_served(server):
    # More slow clients than the 128 threads httplib's pool had: they held
    # every thread, and later clients waited in its queue for ever.
    slow = [connect(server) for _ in range(140)]
    stop = threading.Event()
    sender = threading.Thread(target=trickle, args=(slow, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" * 20, stop))
    sender.start()
    try:
        time.sleep(0.3)
        start = time.time()
        assert completion_works(server)
        assert time.time() - start < 2
        for s in slow:
            status, message = status_and_error(read_until_closed(s))
            assert status == 408 and "headers did not arrive within 1" in message
        assert time.time() - start < 4
    finally:
        stop.set()
        sender.join()
        for s in slow:
            s.close()


def test_a_slow_body_gets_408(server):
    with connect(server) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        stop = threading.Event()
        sender = threading.Thread(target=trickle, args=([s], b' "prompt": "a"' * 50, stop))
        sender.start()
        start = time.time()
        try:
            status, message = status_and_error(read_until_closed(s))
        finally:
            stop.set()
            sender.join()
        assert status == 408 and "body did not arrive within 1" in message
        assert time.time() - start < 3


def test_a_request_abandoned_half_way_is_closed(server):
    with connect(server) as s:
        s.sendall(b"GET /hea")
        start = time.time()
        status, _ = status_and_error(read_until_closed(s))
        assert status == 408 and time.time() - start < 3


def test_idle_connections_are_closed(server):
    with connect(server) as s:  # never sends a byte
        start = time.time()
        assert read_until_closed(s) == b"" and time.time() - start < 3
    with connect(server) as s:  # one request, then keep-alive with nothing more
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        start = time.time()
        assert read_until_closed(s).startswith(b"HTTP/1.1 200") and time.time() - start < 3


def test_headers_over_the_limit_get_431(server):
    many_lines = b"GET /health HTTP/1.1\r\nHost: x\r\n" + (b"X-Filler: " + b"a" * 1000 + b"\r\n") * 20 + b"\r\n"
    endless_line = b"GET /health HTTP/1.1\r\nX-Filler: " + b"a" * 100000
    for request in (many_lines, endless_line):
        with connect(server) as s:
            s.sendall(request)
            status, message = status_and_error(read_until_closed(s))
            assert status == 431 and "over 16384 bytes" in message
    assert completion_works(server)


def test_a_body_declared_too_large_gets_413_before_it_is_sent(server):
    with connect(server) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 1000000000\r\n\r\n")
        start = time.time()
        status, message = status_and_error(read_until_closed(s))
        assert status == 413 and "too large" in message and time.time() - start < 0.5


def test_a_body_without_a_length_is_held_to_the_body_limit(server):
    with connect(server) as s:
        # No Content-Length: httplib reads until the client closes, so the
        # body limit has to be counted as the bytes come.
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n")
        try:
            for _ in range(100):
                s.sendall(b" " * 4096)
        except OSError:
            pass  # the server answered and closed
        status, message = status_and_error(read_until_closed(s))
        assert status == 413 and "too large" in message


def metric(server, name):
    return server.metrics()[name]


def wait_for(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_stream_nobody_reads_is_dropped_and_others_go_on(server):
    body = json.dumps({"prompt": "Once", "max_tokens": 496, "ignore_eos": True, "stream": True, "n": 8,
                       "logprobs": 20}).encode()
    with connect(server, rcvbuf=4096) as s:
        port = s.getsockname()[1]
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        # Its response (megabytes of log-probabilities) fills the socket
        # buffers, then no byte moves: after the write timeout it is dropped.
        start = time.time()
        assert completion_works(server)  # the engine and other clients go on meanwhile
        dropped = f"127.0.0.1:{port}: the client took no bytes for 1 s"
        assert wait_for(lambda: any(dropped in line for line in server.log), 4), "".join(server.log[-5:])
        assert time.time() - start < 3
        received = read_until_closed(s)  # what the buffers held, then the end
        assert received.startswith(b"HTTP/1.1 200") and b"data: [DONE]" not in received
        assert len(received) < 2 << 20
    assert wait_for(lambda: metric(server, "skiff:kv_cache_blocks_used") == 0, 2)
    assert completion_works(server)


def test_connections_past_the_limit_get_503():
    server = Server(STORIES, "--max-connections", "4", "--idle-timeout", "30")
    try:
        held = [connect(server) for _ in range(4)]

        def four_held_and_a_fifth_refused():
            # On a loaded machine the server may still count its start-up probe's closed connection
            # when the four arrive: one of them is answered 503 and closed. It is replaced.
            for i, s in enumerate(held):
                if select.select([s], [], [], 0)[0]:
                    s.close()
                    held[i] = connect(server)
            return httpx.get(server.url + "/health", timeout=3).status_code == 503

        assert wait_for(four_held_and_a_fifth_refused, 10)
        r = httpx.get(server.url + "/health", timeout=3)
        assert r.status_code == 503 and "--max-connections" in r.json()["error"]["message"]
        held.pop().close()
        assert wait_for(lambda: httpx.get(server.url + "/health", timeout=3).status_code == 200, 2)
        for s in held:
            s.close()
    finally:
        assert server.stop() == 0, "".join(server.log[-20:])
