"""Mixed-GPU serving fleets: each request size on the GPU type that serves it cheapest at the latency target.

Mélange (Griggs et al., "Mélange: Cost Efficient LLM Serving by Exploiting GPU Heterogeneity", arXiv 2404.14527)
finds that which GPU type is most cost-efficient depends on the request size, the rate and the latency SLO, so a
load of mixed request sizes is often served cheapest by a mix of GPU types (up to 77 % less than one type for
conversations, 33 % for documents, 51 % for a mix). It profiles each GPU type per request-size bucket and solves
a cost-aware bin-packing ILP: GPUs are bins, slices of each bucket's load are items.

Here the speed model gives each (bucket, flavor) plan directly (replicas at the bucket's rate and TPOT target,
ranking.Ranker), so the search is a small deterministic greedy instead of an ILP: per bucket, the cheapest plan that
meets every target and passes its checklist; the fleet is their sum. It gives up one thing the ILP has: slices of
two buckets cannot share a replica, so each bucket pays for its own last, partly used replica. That bias works
against the mix (the single-type plan it is compared with serves the whole load as one pool), so a mix proposed
here saves at least what it says. With two or three buckets and a few dozen flavors the search is a handful of
comparisons, fast enough for Slack. One GPU type is simpler to run (one image, one autoscaling group, one failure
mode): a mix is proposed only when it saves more than MIX_MARGIN; below that the single type is kept and the
saving is mentioned.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Row = dict[str, Any]
MIX_MARGIN = 0.12        # policy: a mix must save more than 12 % to be worth running two GPU types


@dataclass(frozen=True)
class Part:
    """One request-size bucket of the load, served by one flavor's plan (its replicas at the bucket's targets)."""
    share: float             # of the requests
    prompt: int              # prompt tokens of the bucket's requests
    row: Row                 # the ranked row: flavor, instances, replicas, hourly, sized (TPOT, concurrency)
    usd: float               # what the part costs per hour, in USD


@dataclass(frozen=True)
class FleetChoice:
    mix: list[Part]          # the cheapest plan per bucket (at least two GPU types), or [] when there is none
    mix_usd: float
    single_usd: float        # the single-type plan the mix is compared with, in USD per hour
    chosen: str              # "mix" or "single"

    @property
    def saving(self) -> float:
        """The mix's saving against the single type, as a share of the single type's cost."""
        return 1 - self.mix_usd / self.single_usd if self.mix and self.single_usd else 0.0


def cheapest_part(share: float, prompt: int, rows: list[Row], usd: Callable[[Row], float],
                  meets: Callable[[Row], bool]) -> Part | None:
    """The bucket's cheapest plan that meets every target, or None (then no mix: a part must meet its SLO).
    Plans are tried cheapest first, so `meets` (which may evaluate a checklist) runs on few of them."""
    order = sorted(rows, key=lambda r: (usd(r), r.get("gpus_total", 0) * max(1, r.get("replicas") or 1), r["id"]))
    best = next((r for r in order if meets(r)), None)
    return Part(share, prompt, best, usd(best)) if best is not None else None


def search(buckets: list[tuple[float, int]], bucket_rows: list[list[Row]], single_usd: float,
           usd: Callable[[Row], float], meets: Callable[[Row], bool], margin: float | None = None
           ) -> FleetChoice | None:
    """Compare the cheapest per-bucket fleet with the best single-type plan (`single_usd` per hour, already sized
    for the whole load). None when the load has one bucket or a bucket has no plan meeting its targets; a fleet
    of one GPU type is not a mix (the single-type plan already is that)."""
    if len(buckets) < 2 or len(bucket_rows) != len(buckets):
        return None
    parts = []
    for (share, prompt), rows in zip(buckets, bucket_rows):
        part = cheapest_part(share, prompt, rows, usd, meets)
        if part is None:
            return None
        parts.append(part)
    if len({p.row["gpu"] for p in parts}) < 2:
        return None
    mix_usd = sum(p.usd for p in parts)
    if mix_usd >= single_usd:
        return None
    margin = MIX_MARGIN if margin is None else margin
    chosen = "mix" if mix_usd < single_usd * (1 - margin) else "single"
    return FleetChoice(parts, mix_usd, single_usd, chosen)
