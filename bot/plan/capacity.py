"""What a serving fleet carries, in the load's own unit, for every kind of served model.

Why a record of its own: each kind is sized by its own speed model (a language model by sequences in flight at the
latency target, an encoder by requests or query-passage pairs a second, speech by live streams or x real time,
images by images a second), and each had its own way to say, or not say, whether the fleet carries the load. A
plan that states 7.3x real time per GPU and picks one GPU for 300 live calls contradicts itself; with one record
per plan (the load, what one replica carries, the replicas) the answer shows the division ("300 streams / 90 per
replica = 4 replicas"), the critic checks every kind the same way (rules/critic.yaml `serving-load`), and the
user's own cards are judged by the same numbers ("8 x A800 carry about 4,900 streams: enough for 300").
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from bot.estimate.speech import STREAM_UTILISATION

# the units a capacity is said in; each has a template `capacity.unit.<unit>` in both languages
UNITS = ("streams", "sequences", "requests/s", "pairs/s", "texts/s", "images/s", "x real time", "frames/s")


@dataclass(frozen=True)
class Capacity:
    """A serving plan's load and what it carries, in one unit."""
    unit: str                 # one of UNITS
    load: float               # the peak load the fleet is sized for
    per_replica: float        # what one replica carries at the latency target
    replicas: int             # replicas the plan runs
    gpus_per_replica: int
    # the share of `per_replica` the fleet is sized to run at the peak (rules/critic.yaml `headroom`
    # utilisation_target): replicas = load / (utilisation x per replica), so a spike or a speed model 20 % optimistic
    # still meets the latency target; 1.0 where `per_replica` is already derated (`derated` below)
    utilisation: float = 1.0
    # the share of the raw rate `per_replica` already is (live speech streams at STREAM_UTILISATION of the batched
    # rate): what the fleet really runs at is load / total x derated
    derated: float = 1.0

    @property
    def total(self) -> float:
        return self.per_replica * self.replicas

    @property
    def need(self) -> int:
        """Replicas the load needs: the load over the share of one replica's capacity the fleet plans to use
        (`utilisation`), rounded up."""
        if self.per_replica <= 0:
            return 0
        return max(1, math.ceil(self.load / (self.per_replica * self.utilisation) - 1e-9))

    @property
    def used(self) -> float:
        """The share of what the fleet carries (of the raw rate, where its capacity is derated) the peak load
        uses (37 in flight on 3 replicas of 19 each: 0.65): what the `headroom` invariant judges."""
        return self.load / self.total * self.derated if self.total > 0 else math.inf

    @property
    def enough(self) -> bool:
        return self.per_replica > 0 and self.total >= self.load * 0.999

    def record(self) -> dict[str, Any]:
        """The contract's `capacity` field (ask --json): the numbers and the derived need and verdict."""
        return {**asdict(self), "total": _round(self.total), "need": self.need, "enough": self.enough,
                "load": _round(self.load), "per_replica": _round(self.per_replica),
                "used": round(self.used, 3) if self.total > 0 else None}


def _round(x: float) -> float:
    return round(x, 1) if x >= 10 else round(x, 3)


def of_sized(s: Any, t: Any, kind: str, encoder: bool, fanout: int | None = None,
             fanout_unit: str | None = None) -> Capacity | None:
    """The capacity of a sized serving plan (plans.Sized) at its targets (plans.Targets), or None when no load was
    stated or the plan has no speed to carry one with. A kind sized by its own speed model carries its
    capacity already (`s.capacity`)."""
    if getattr(s, "capacity", None) is not None:
        return s.capacity
    if s.parts:
        return None          # a mix of request sizes: each bucket has its own replicas (fleet_stage says them)
    replicas = max(1, s.replicas or 1)
    if encoder:
        rate = t.encoder_rate()
        if not rate or not s.items_per_s:
            return None
        unit = ("texts/s" if fanout_unit == "texts" else "pairs/s") if fanout else "requests/s"
        return Capacity(unit, rate, s.items_per_s, replicas, s.gpus_total, _util(t))
    if kind not in ("llm", "multimodal"):
        return None
    if t.qps and s.items_per_s and not t.concurrency:
        return Capacity("requests/s", t.qps, s.items_per_s, replicas, s.gpus_total, _util(t))
    load = t.load_sequences()
    if load and s.replica_concurrency:
        return Capacity("sequences", load, s.replica_concurrency, replicas, s.gpus_total, _util(t))
    return None


def _util(t: Any) -> float:
    return getattr(t, "utilisation", 1.0) or 1.0


def of_kind_speed(speed: Any, n: int, replicas: int, utilisation: float = 1.0) -> Capacity | None:
    """An image, audio or video plan's capacity from its speed model (kinds.job_speed on one GPU), when a load was
    asked: live streams by the streams one GPU keeps up with (already at STREAM_UTILISATION of the batched rate:
    not derated twice), a rate (images/s, x real time, frames/s of video streams) by one GPU's rate, sized at
    `utilisation` of it."""
    if speed is None or not speed.target:
        return None
    if speed.streams_per_gpu and speed.kind == "speech":
        return Capacity("streams", speed.target, speed.streams_per_gpu * n, replicas, n,
                        min(1.0, utilisation / STREAM_UTILISATION), STREAM_UTILISATION)
    per_gpu = speed.rate / max(1, speed.gpus)
    unit = speed.unit if speed.unit in UNITS else "images/s"
    if speed.unit == "images/s" and speed.kind == "vision" and speed.target != speed.rate and _is_frames(speed):
        unit = "frames/s"
    return Capacity(unit, speed.target, per_gpu * n, replicas, n, utilisation)


def _is_frames(speed: Any) -> bool:
    return any(term.name == "frames needed" for term in speed.terms)
