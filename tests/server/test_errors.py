"""Bad requests get OpenAI-shaped errors with the right status; the server keeps serving."""
import socket

import httpx
import openai
import pytest

AUTH = {"Authorization": "Bearer sekret"}


def error_of(response, status):
    assert response.status_code == status, response.text
    err = response.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["code"] == status
    return err


def test_api_key_is_required(stories):
    assert error_of(httpx.post(stories.url + "/v1/completions", json={"prompt": "a"}), 401)
    assert error_of(httpx.post(stories.url + "/v1/completions", json={"prompt": "a"},
                               headers={"Authorization": "Bearer wrong"}), 401)
    assert error_of(httpx.get(stories.url + "/v1/models"), 401)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=stories.url + "/v1", api_key="wrong", max_retries=0).models.list()
    assert httpx.get(stories.url + "/health").status_code == 200  # health needs no key


def test_malformed_json_and_wrong_shapes(stories):
    raw = httpx.post(stories.url + "/v1/completions", content=b'{"prompt": "a",', headers=AUTH)
    assert "invalid JSON" in error_of(raw, 400)["message"]
    assert error_of(stories.post("/v1/completions", [1, 2]), 400)
    assert error_of(stories.post("/v1/completions", {"max_tokens": 3}), 400)["param"] == "prompt"
    assert error_of(stories.post("/v1/completions", {"prompt": 5}), 400)["param"] == "prompt"
    assert error_of(stories.post("/v1/completions", {"prompt": []}), 400)["param"] == "prompt"
    assert error_of(stories.post("/v1/completions", {"prompt": [1, 999999]}), 400)["param"] == "prompt"


@pytest.mark.parametrize("field,value", [("max_tokens", "ten"), ("max_tokens", 0), ("temperature", -1),
                                         ("temperature", "hot"), ("top_p", 0), ("top_p", 1.5),
                                         ("top_k", -2), ("min_p", 2), ("n", 0), ("logprobs", 21),
                                         ("stop", 7), ("stop", [""]), ("seed", -1), ("stream", "yes"),
                                         ("presence_penalty", 3), ("repetition_penalty", 0),
                                         ("stop_token_ids", [-1]), ("ignore_eos", 1),
                                         ("stop", ["x"] * 65), ("stop", ["a" * 5000]),
                                         ("stop_token_ids", [1] * 65), ("min_tokens", -1),
                                         ("min_tokens", 17), ("skip_special_tokens", "no")])
def test_out_of_range_and_wrong_types(stories, field, value):
    err = error_of(stories.post("/v1/completions", {"prompt": "Once", field: value}), 400)
    assert field in err["message"]


def test_unknown_model_is_404(stories):
    err = error_of(stories.post("/v1/completions", {"model": "gpt-9", "prompt": "a"}), 404)
    assert "gpt-9" in err["message"]
    client = openai.OpenAI(base_url=stories.url + "/v1", api_key="sekret", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="gpt-9", prompt="a")


def test_too_long_for_the_context_names_both_counts(stories):
    err = error_of(stories.post("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 600}), 400)
    assert "512" in err["message"] and "600 in the completion" in err["message"]
    long_prompt = "Once upon a time " * 200
    err = error_of(stories.post("/v1/completions", {"prompt": long_prompt}), 400)
    assert "maximum context length is 512" in err["message"]


def test_body_over_the_limit_is_413(stories):
    err = error_of(stories.post("/v1/completions", {"prompt": "a" * 70000}), 413)
    assert "too large" in err["message"]


def test_invalid_utf8_is_400(stories):
    raw = httpx.post(stories.url + "/v1/completions", content=b'{"prompt": "caf\xc3"}', headers=AUTH)
    assert error_of(raw, 400)


def test_deep_json_and_unknown_route(stories):
    deep = b'{"prompt": "a", "x": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    big = httpx.post(stories.url + "/v1/completions", content=deep, headers=AUTH)
    assert big.status_code in (400, 413)
    assert error_of(httpx.get(stories.url + "/v2/nothing"), 404)


def test_garbage_on_the_socket_does_not_hurt(stories):
    for junk in (b"\x00\xff" * 100 + b"\r\n\r\n", b"POST /v1/completions HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", stories.port)) as s:
            s.sendall(junk)
            s.settimeout(2)
            try:
                s.recv(4096)
            except (socket.timeout, ConnectionResetError):
                pass
    ok = stories.post("/v1/completions", {"prompt": "Once", "max_tokens": 3})
    assert ok.status_code == 200, ok.text
