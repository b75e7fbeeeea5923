"""What a router knows of each replica's prefix cache, as chained KV-block hashes.

A request's routing key is the chain of hashes of its prompt's full KV blocks
(skiff._skiff.prefix_block_hashes: the engine's own prefix-cache hashes), so a
replica holds the first k blocks of a prompt exactly when it holds block k's
hash, and matching a key against a replica is walking the chain until a miss.

Two sources feed a replica's view:
- what the replica reports (`reported`: Ray's routing stats, each period the
  blocks its engine's prefix cache holds, as `skiff serve` lists them at
  GET /kv/prefix_blocks, whichever router sent their requests): the truth as
  of the report, evictions and restarts included;
- what this router sent it since (`routed`), which the next report has not
  seen yet: a conversation's next turn must find its replica before then.
  Routed entries older than a report leave the view when it comes.
Neither is ever waited for: a stale view costs a cache miss, never a request.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Dict, Iterable, Optional, Sequence

# A replica that has not reported its pool's size yet keeps this many blocks.
DEFAULT_CAPACITY_BLOCKS = 65536


class BlockLru:
    """Block hashes in least-recently-used order, at most `capacity` of them
    (the replica's pool, bounding the view if reports stop), each with the
    time it was last touched."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY_BLOCKS):
        self.capacity = capacity
        self._blocks: "OrderedDict[int, float]" = OrderedDict()

    def touch(self, hashes: Iterable[int], now: Optional[float] = None) -> None:
        now = time.time() if now is None else now
        for h in hashes:
            self._blocks[h] = now
            self._blocks.move_to_end(h)
        self.trim()

    def trim(self) -> None:
        while len(self._blocks) > self.capacity:
            self._blocks.popitem(last=False)

    def drop_older_than(self, when: float) -> None:
        while self._blocks:
            h, t = next(iter(self._blocks.items()))
            if t >= when:
                # Touches are in time order, so the rest are newer.
                break
            del self._blocks[h]

    def __iter__(self):
        return iter(self._blocks)

    def __contains__(self, h: int) -> bool:
        return h in self._blocks

    def __len__(self) -> int:
        return len(self._blocks)


class ReplicaView:
    """One replica's cached blocks as a router sees them."""

    def __init__(self):
        self.routed = BlockLru()
        self.reported: frozenset = frozenset()
        self.report_at: Optional[float] = None

    def apply_report(self, stats: dict) -> None:
        """Takes a replica's routing stats (SkiffReplica.record_routing_stats)
        once per report: its blocks replace what was routed before it was made."""
        at = stats.get("at")
        if at is None or at == self.report_at:
            return
        self.report_at = at
        self.reported = frozenset(stats.get("blocks", ()))
        self.routed.capacity = max(1, int(stats.get("capacity_blocks", self.routed.capacity)))
        self.routed.trim()
        # A report made at time t covers what was routed before t (the replica
        # saw it); a margin for the clocks of two nodes and requests in flight.
        self.routed.drop_older_than(at - 2.0)

    def cached_blocks(self) -> int:
        """How many distinct blocks the view holds."""
        return len(self.reported) + sum(1 for h in self.routed if h not in self.reported)

    def matched_blocks(self, key: Sequence[int]) -> int:
        """How many leading blocks of the key this replica holds."""
        n = 0
        for h in key:
            if h not in self.routed and h not in self.reported:
                break
            n += 1
        return n


class PrefixView:
    """Every replica's view, by replica id."""

    def __init__(self):
        self._replicas: Dict[str, ReplicaView] = {}

    def replica(self, replica_id: str) -> ReplicaView:
        view = self._replicas.get(replica_id)
        if view is None:
            view = self._replicas[replica_id] = ReplicaView()
        return view

    def keep_only(self, replica_ids: Iterable[str]) -> None:
        """Forgets replicas that are gone (a restarted one comes back empty, under a new id)."""
        alive = set(replica_ids)
        for rid in list(self._replicas):
            if rid not in alive:
                del self._replicas[rid]

    def longest_match(self, key: Sequence[int], replica_ids: Iterable[str]):
        """(replica id, matched blocks) of the replica holding most of the key; ties to the first."""
        best, best_n = None, 0
        for rid in replica_ids:
            n = self.replica(rid).matched_blocks(key)
            if n > best_n:
                best, best_n = rid, n
        return best, best_n

    def least_cached(self, replica_ids: Iterable[str]) -> Optional[str]:
        """The replica whose cache holds the fewest blocks: where a new prefix
        displaces least (SGLang's router sends unmatched prompts so too)."""
        return min(replica_ids, key=lambda rid: self.replica(rid).cached_blocks(), default=None)
