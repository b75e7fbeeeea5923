"""skiff on Ray Serve: replicas of the engine behind one OpenAI-compatible
endpoint and a prefix-cache-aware router (docs/ray.md).

    serve run skiff.ray:app model=PATH num_replicas=2 threads_per_replica=1 router=prefix

Each replica (SkiffReplica) owns one `skiff serve` process, so the endpoint
behaves as `skiff serve` does; the ingress (SkiffIngress) hashes each prompt
in KV-block-sized pieces as the engine's prefix cache does, and the router
(PrefixCacheRouter, a Ray Serve RequestRouter) sends it to the replica that
holds the longest cached prefix unless that one is overloaded. router=pow2
keeps Ray's default power-of-two-choices router, for comparison.

With Ray Serve's HAProxy ingress on (RAY_SERVE_ENABLE_HA_PROXY=1 and
RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY=1 in the cluster's environment)
the replicas serve HTTP themselves and HAProxy asks a RouteChooser which one
takes each request (skiff.ray.direct): two process crossings fewer each way.
"""
from __future__ import annotations

import shlex
from typing import Dict

from ray import serve
from ray.serve.config import RequestRouterConfig

from .direct import RouteChooser, SkiffHttpReplica, forwards_bodies, haproxy_ingress
from .ingress import SkiffIngress
from .replica import MetricsBoard, SkiffReplica
from .router import PrefixCacheRouter

__all__ = ["app", "build_app", "PrefixCacheRouter", "SkiffIngress", "SkiffReplica", "MetricsBoard"]

# The builder's arguments (all strings on `serve run`'s command line) and defaults.
DEFAULTS = {
    "model": None,                 # GGUF file or HF directory, on every node
    "num_replicas": "1",
    "threads_per_replica": "1",    # skiff serve -t, and the replica's Ray CPUs
    "router": "prefix",            # prefix | pow2 (Ray's default)
    "serve_args": "",              # more skiff serve flags, e.g. "-c 4096 --max-seqs 32"
    "binary": "",                  # the skiff binary; default $SKIFF_BINARY, else skiff on PATH
    "block_size": "16",            # the engines' KV block, which routing keys are hashed by
    "max_ongoing_requests": "64",  # requests a replica holds at once (its engine batches them)
    "max_queued_requests": "256",  # waiting for a replica, per ingress (behind HAProxy: per replica); past it 503
    "imbalance_threshold": "4",    # queue difference past which the best match is passed over
    "min_match_ratio": "0.5",      # a smaller cached share of the prompt is no match
    "routing_stats_period_s": "1",
    "name": "skiff",               # the deployments' name prefix
}


def _int(args: Dict[str, str], key: str, low: int) -> int:
    try:
        value = int(args[key])
    except (TypeError, ValueError):
        raise ValueError(f"skiff.ray: {key} must be an integer, not {args[key]!r}") from None
    if value < low:
        raise ValueError(f"skiff.ray: {key} must be at least {low}, not {value}")
    return value


def _ratio(args: Dict[str, str], key: str) -> float:
    try:
        value = float(args[key])
    except ValueError:
        raise ValueError(f"skiff.ray: {key} must be a number, not {args[key]!r}") from None
    if not 0 <= value <= 1:
        raise ValueError(f"skiff.ray: {key} must be within [0, 1], not {value}")
    return value


def prompt_options(serve_args):
    """What of skiff serve's flags changes a prompt's ids, for the ingress to
    hash as the engines tokenize: --chat-template FILE (read here, on the node
    that builds the app) and --special-tokens-in-content."""
    template, special = None, False
    for i, arg in enumerate(serve_args):
        if arg == "--special-tokens-in-content":
            special = True
        elif arg.startswith("--chat-template"):
            path = arg.split("=", 1)[1] if "=" in arg else (serve_args[i + 1] if i + 1 < len(serve_args) else "")
            try:
                with open(path, encoding="utf-8") as f:
                    template = f.read()
            except OSError as e:
                raise ValueError(f"skiff.ray: cannot read --chat-template {path!r}: {e.strerror}") from None
    return template, special


def build_app(args: Dict[str, str]):
    """The application of `serve run skiff.ray:app key=value ...` (Ray's application builder)."""
    unknown = sorted(set(args) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"skiff.ray: unknown argument(s) {', '.join(unknown)} (known: {', '.join(DEFAULTS)})")
    a = {**DEFAULTS, **{k: str(v) for k, v in args.items()}}
    if not a["model"]:
        raise ValueError("skiff.ray: model=PATH is required")
    if a["router"] not in ("prefix", "pow2"):
        raise ValueError(f"skiff.ray: router must be prefix or pow2, not {a['router']!r}")
    threads = _int(a, "threads_per_replica", 1)
    block_size = _int(a, "block_size", 1)
    serve_args = [*shlex.split(a["serve_args"]), "--block-size", str(block_size)]

    stats_period_s = float(a["routing_stats_period_s"])
    router_config = RequestRouterConfig(request_routing_stats_period_s=stats_period_s)
    if a["router"] == "prefix":
        router_config = RequestRouterConfig(
            request_router_class=PrefixCacheRouter,
            request_router_kwargs={"imbalance_threshold": _int(a, "imbalance_threshold", 0),
                                   "min_match_ratio": _ratio(a, "min_match_ratio")},
            request_routing_stats_period_s=stats_period_s)
    board = serve.deployment(MetricsBoard, name=f"{a['name']}-metrics", num_replicas=1,
                             ray_actor_options={"num_cpus": 0}).bind()
    direct = haproxy_ingress()
    if direct and a["router"] == "prefix" and not forwards_bodies():
        raise ValueError("skiff.ray: with RAY_SERVE_ENABLE_HA_PROXY=1, router=prefix needs "
                         "RAY_SERVE_INGRESS_REQUEST_ROUTER_FORWARD_BODY=1 (HAProxy then passes "
                         "each prompt to the router)")
    max_ongoing, max_queued = _int(a, "max_ongoing_requests", 1), _int(a, "max_queued_requests", 1)
    limits = {"max_ongoing_requests": max_ongoing, "max_queued_requests": max_queued}
    extra = {}
    if direct:  # each replica keeps its own limit (skiff.ray.direct), under Ray's
        limits = {"max_ongoing_requests": 2 * (max_ongoing + max_queued), "max_queued_requests": -1}
        extra = {"request_limit": max_ongoing + max_queued}
    replicas = serve.deployment(
        SkiffHttpReplica if direct else SkiffReplica, name=f"{a['name']}-replica",
        num_replicas=_int(a, "num_replicas", 1),
        ray_actor_options={"num_cpus": threads},
        **limits,
        request_router_config=router_config,
        health_check_period_s=2, health_check_timeout_s=10,
        graceful_shutdown_timeout_s=5,
    ).bind(a["model"], threads, serve_args, a["binary"] or None, board, **extra)
    prompts = (a["model"], block_size, *prompt_options(serve_args))
    if direct:  # the replicas are the HTTP ingress; HAProxy asks the chooser which one
        chooser = serve.deployment(RouteChooser, name=f"{a['name']}-router", num_replicas=1,
                                   ray_actor_options={"num_cpus": 0}, max_ongoing_requests=4096)
        return replicas._with_ingress_request_router(chooser.bind(replicas, *prompts))
    ingress = serve.deployment(SkiffIngress, name=f"{a['name']}-ingress", num_replicas=1,
                               ray_actor_options={"num_cpus": 0}, max_ongoing_requests=4096)
    return ingress.bind(replicas, board, *prompts)


app = build_app
