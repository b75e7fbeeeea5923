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
