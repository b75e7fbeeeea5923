"""The application builder behind `serve run skiff.ray:app key=value ...`:
its arguments checked with messages that name them (no cluster needed)."""
import pytest

from skiff.ray import build_app, prompt_options
from skiff.ray.router import PrefixCacheRouter


def test_the_documented_arguments_build_the_app():
    app = build_app({"model": "m.gguf", "num_replicas": "2", "threads_per_replica": "1", "router": "prefix"})
    assert type(app).__name__ == "Application"


@pytest.mark.parametrize("args, message", [
    ({}, "model=PATH is required"),
    ({"model": "m", "router": "random"}, "router must be prefix or pow2"),
    ({"model": "m", "num_replicas": "two"}, "num_replicas must be an integer"),
    ({"model": "m", "threads_per_replica": "0"}, "threads_per_replica must be at least 1"),
    ({"model": "m", "min_match_ratio": "2"}, "min_match_ratio must be within [0, 1]"),
    ({"model": "m", "replicas": "2"}, "unknown argument(s) replicas"),
])
def test_bad_arguments_are_named(args, message):
    with pytest.raises(ValueError) as e:
        build_app(args)
    assert message in str(e.value)


def test_the_router_is_a_ray_serve_request_router():
    from ray.serve.request_router import RequestRouter
    assert issubclass(PrefixCacheRouter, RequestRouter)


def test_the_flags_that_change_prompt_ids_reach_the_ingress(tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0].content }}")
    assert prompt_options(["-c", "2048"]) == (None, False)
    assert prompt_options(["--chat-template", str(template), "--special-tokens-in-content"]) == \
        ("{{ messages[0].content }}", True)
    assert prompt_options([f"--chat-template={template}"]) == ("{{ messages[0].content }}", False)
    with pytest.raises(ValueError, match="cannot read --chat-template"):
        prompt_options(["--chat-template", str(tmp_path / "missing.jinja")])


HAPROXY_ENV = {"RAY_SERVE_ENABLE_HA_PROXY": "1", "RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY": "1"}


def test_behind_haproxy_the_replicas_are_the_ingress_and_the_chooser_routes(monkeypatch):
    from skiff.ray.direct import RouteChooser, SkiffHttpReplica
    for key, value in HAPROXY_ENV.items():
        monkeypatch.setenv(key, value)
    app = build_app({"model": "m.gguf", "num_replicas": "2", "max_ongoing_requests": "3", "max_queued_requests": "5"})
    replicas = app._bound_deployment
    assert replicas.func_or_class is SkiffHttpReplica
    assert replicas.init_kwargs == {"request_limit": 8}  # its own limit, 503 with Retry-After
    assert replicas.max_ongoing_requests == 16  # Ray's, above it
    assert app._ingress_request_router._bound_deployment.func_or_class is RouteChooser
    monkeypatch.delenv("RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY")
    with pytest.raises(ValueError, match="RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY=1"):
        build_app({"model": "m.gguf"})
    build_app({"model": "m.gguf", "router": "pow2"})  # Ray's router reads no prompt


@pytest.mark.parametrize("body, route", [
    (b'{"prompt": "x"}', "/v1/completions"),
    (b'{"messages": [], "model": "m"}', "/v1/chat/completions"),
    (b'{"messages": [], "system": "Be brief.", "max_tokens": 8}', "/v1/messages"),
    (b'{"input": "x"}', None),
    (b'[1, 2]', None),
    (b'{"prompt": "x"', None),  # truncated
])
def test_the_chooser_tells_the_route_from_the_body(body, route):
    from skiff.ray.direct import prompt_route
    assert prompt_route(body) == route
