"""The pick's cost per billing mode, with numbers: pay-per-use, spot (with the work reclaims cost and the
checkpoint interval that keeps it small), and for an always-on service the month and the year.

Spot overhead follows Young's first-order checkpoint interval (J. W. Young, "A first order approximation to the
optimum checkpoint interval", CACM 17(9), 1974): T = sqrt(2 C M) for a checkpoint that takes C and interruptions
every M on average; the share of time lost is about C/T (writing checkpoints) + T/(2M) (work redone) + R/M (restart).
No cloud publishes a reclaim rate, so M is an assumption the answer states, as are C's write speed and R.
Yearly/monthly prices are not in the catalog (no source gives a figure for most clouds), so the always-on line
gives pay-per-use x 730 h and x 8,760 h and says that commitments lower it by a figure to ask the vendor for.
"""
from __future__ import annotations

import math
from typing import Any

from bot.records.models import Workload

HOURS_MONTH, HOURS_YEAR = 730, 8760
RECLAIM_EVERY_H = 24.0          # assumed mean time between spot reclaims (no cloud publishes one)
SPOT_MIN_H = 0.1                # a job of minutes: spot saves cents and there is nothing to checkpoint
RESTART_H = 10 / 60             # assumed: new instance, image pull, loading the last checkpoint
SPOT_FLUSH_H = 10 / 60          # a batch job writes its results every ~10 min of work (one shard): what a reclaim can lose
CHECKPOINT_GBS = 1.0            # assumed write speed of a checkpoint to object storage, GB/s per instance


def checkpoint_gb(w: Workload) -> float:
    """What a training checkpoint writes: weights, gradients-free optimizer state (full training: fp32 master and
    two AdamW moments, 12 B/param, + 16-bit weights 2 B) or, for LoRA/QLoRA, the adapters and their state only."""
    if w.method in ("lora", "qlora"):
        adapters = w.params_b * 1e9 * 0.005            # rank-16 adapters on all linear layers: ~0.5 % of params
        return adapters * 16 / 1e9
    return w.params_b * 1e9 * 14 / 1e9


def spot_overhead(w: Workload, instances: int) -> tuple[float, float]:
    """(share of extra time from reclaims, checkpoint interval in hours) at Young's optimum."""
    c_h = checkpoint_gb(w) / (CHECKPOINT_GBS * max(1, instances)) / 3600
    m_h = RECLAIM_EVERY_H / max(1, instances) ** 0.5 if instances > 1 else RECLAIM_EVERY_H
    interval = math.sqrt(2 * c_h * m_h) if c_h > 0 else m_h / 10
    share = c_h / interval + interval / (2 * m_h) + RESTART_H / m_h
    return share, interval


def batch_spot_overhead() -> tuple[float, float]:
    """(share of extra time, minutes between result flushes) on spot: a batch job checkpoints by writing each shard's
    results, so a reclaim loses at most one shard in flight (half on average) plus a restart; the replicas are
    reclaimed independently, so the share does not grow with their number. Reclaims every RECLAIM_EVERY_H
    hours on average (assumed, as for training)."""
    share = (SPOT_FLUSH_H / 2 + RESTART_H) / RECLAIM_EVERY_H
    return share, SPOT_FLUSH_H * 60


def billing_costs(pick: dict[str, Any], w: Workload) -> list[dict[str, Any]]:
    """Each billing mode's cost of the picked plan, in the price's currency."""
    hourly, hours, f = pick.get("hourly"), pick.get("hours"), pick["flavor"]
    if hourly is None or not f.price:
        return []
    ccy = f.price.currency
    out: list[dict[str, Any]] = []
    if hours:
        out.append({"mode": "pay_per_use", "cost": round(hourly * hours, 2), "currency": ccy, "per": "job",
                    "hours": round(hours, 1)})
        if f.price.spot and hours >= SPOT_MIN_H:
            sized = pick.get("sized")
            batch = bool(getattr(sized, "items_per_s", None))
            if batch:        # a batch job checkpoints by writing each shard's results (batch_spot_overhead)
                share, minutes = batch_spot_overhead()
                interval = minutes / 60
            else:
                share, interval = spot_overhead(w, pick["instances"])
            spot_hourly = f.price.spot * pick["instances"] * max(1, pick.get("replicas") or 1)
            out.append({"mode": "spot", "cost": round(spot_hourly * hours * (1 + share), 2), "currency": ccy,
                        "per": "job", "hours": round(hours * (1 + share), 1), "overhead_pct": round(100 * share, 1),
                        "checkpoint_min": round(interval * 60), "reclaim_every_h": RECLAIM_EVERY_H,
                        "resume": "shards" if batch else "checkpoint"})
    elif w.method == "inference" and w.usage_hours_month and w.usage_hours_month < HOURS_MONTH:
        # a service used on a schedule: pay-per-use for the hours used against a month's commitment, which is paid
        # for all 730 h; it pays back only at a discount above 1 - used / 730 (the break-even utilisation)
        used = w.usage_hours_month
        out.append({"mode": "pay_per_use", "cost": round(hourly * used, 2), "currency": ccy, "per": "used_month",
                    "hours": round(used, 1), "hourly": round(hourly, 4)})
        out.append({"mode": "monthly", "cost": round(hourly * HOURS_MONTH, 2), "currency": ccy, "per": "month",
                    "hours": HOURS_MONTH, "need_discount_pct": round(100 * (1 - used / HOURS_MONTH)),
                    "utilisation_pct": round(100 * used / HOURS_MONTH)})
    elif w.method == "inference":      # an always-on service: its month and its year
        out.append({"mode": "pay_per_use", "cost": round(hourly * HOURS_MONTH, 2), "currency": ccy, "per": "month"})
        out.append({"mode": "pay_per_use", "cost": round(hourly * HOURS_YEAR, 2), "currency": ccy, "per": "year"})
    else:       # a run whose length is not known: per hour only (a month of a fine-tune is not its cost)
        out.append({"mode": "pay_per_use", "cost": round(hourly, 4), "currency": ccy, "per": "hour"})
        if f.price.spot:
            out.append({"mode": "spot", "cost": round(f.price.spot * pick["instances"], 4), "currency": ccy,
                        "per": "hour"})
    return out
