"""The prefix-cache-aware request router: a Ray Serve `RequestRouter`.

Ray Serve calls `choose_replicas` for each request a handle sends to the skiff
replicas. The request's first argument is its routing key: the chained hashes
of its prompt's KV blocks (the ingress computes them, skiff.ray.ingress). The
router sends it to the replica with the longest cached match it knows of
(skiff.ray.prefix_view), so that a conversation's later turns, or requests
over one long system prompt, reuse the KV their replica already computed.
A match of less than `min_match_ratio` of the prompt (a chat template's
common first block, say) is no reason to pile new prompts onto one replica:
those go to the replica whose cache holds least, so new conversations spread
evenly. Either choice stands unless that replica's queue is longer than the
least loaded one's by more than `imbalance_threshold`: then Ray's own
power-of-two-choices procedure decides, as it does for requests without a
key. Ray probes queue lengths and backs off from full replicas below this
method, so the router itself never waits.
"""
from __future__ import annotations

from typing import List, Optional

from ray.serve._private.request_router import PowerOfTwoChoicesRequestRouter
from ray.serve.request_router import PendingRequest, ReplicaID, ReplicaResult, RunningReplica

from .prefix_view import PrefixView

# The kwarg by which a pick-only caller (skiff.ray.direct's RouteChooser, for
# HAProxy) marks a choice Ray will not send, so on_request_routed never runs.
PICK_ONLY = "skiff_pick_only"


def routing_key(pending_request: Optional[PendingRequest]) -> tuple:
    """The block hashes the ingress passed as the call's first argument (empty: none)."""
    if pending_request is None or not pending_request.args:
        return ()
    key = pending_request.args[0]
    return key if isinstance(key, tuple) else ()


class PrefixCacheRouter(PowerOfTwoChoicesRequestRouter):
    """Longest known cached prefix first; power of two choices when that
    replica is overloaded or nothing matches. Ray's power-of-two router is the
    base class, so its locality and FIFO handling stay as they are."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._imbalance_threshold = 4
        self._min_match_ratio = 0.5
        self._view = PrefixView()

    def initialize_state(self, imbalance_threshold: int = 4, min_match_ratio: float = 0.5):
        """RequestRouterConfig.request_router_kwargs."""
        self._imbalance_threshold = imbalance_threshold
        self._min_match_ratio = min_match_ratio

    def _queue_len(self, replica: RunningReplica) -> int:
        # Ray's cache of each replica's ongoing requests (updated as requests
        # are sent and finish, and by the replicas' answers); unknown counts as idle.
        return self.replica_queue_len_cache.get(replica.replica_id) or 0

    async def choose_replicas(
        self,
        candidate_replicas: List[RunningReplica],
        pending_request: Optional[PendingRequest] = None,
    ) -> List[List[RunningReplica]]:
        fallback = await super().choose_replicas(candidate_replicas, pending_request)
        key = routing_key(pending_request)
        if not key or not candidate_replicas:
            return fallback
        by_id = {}
        for r in candidate_replicas:
            rid = r.replica_id.unique_id
            by_id[rid] = r
            if r.routing_stats:
                self._view.replica(rid).apply_report(r.routing_stats)
        best_id, matched = self._view.longest_match(key, by_id)
        if matched < self._min_match_ratio * len(key):
            best_id = self._view.least_cached(by_id)
        best = by_id[best_id]
        least = min(self._queue_len(r) for r in candidate_replicas)
        if self._queue_len(best) - least > self._imbalance_threshold:
            ranks = fallback
        else:  # Ray takes the first rank whose replica has room, else the next.
            ranks = [[best], [r for r in fallback[0] if r is not best]] if fallback else [[best]]
        if pending_request.kwargs.get(PICK_ONLY) and ranks and ranks[0]:
            # HAProxy sends it (skiff.ray.direct) to the first pick, and Ray
            # never calls on_request_routed: the view learns of it here.
            self._view.replica(ranks[0][0].replica_id.unique_id).routed.touch(key)
        return ranks

    def on_request_routed(self, pending_request: PendingRequest, replica_id: ReplicaID,
                          result: ReplicaResult) -> None:
        key = routing_key(pending_request)
        if key:
            self._view.replica(replica_id.unique_id).routed.touch(key)

    def update_replicas(self, replicas: List[RunningReplica]) -> None:
        super().update_replicas(replicas)
        self._view.keep_only(r.replica_id.unique_id for r in replicas)
