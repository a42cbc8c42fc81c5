"""What a re-plan changed in the fleet: a follow-up that changes one quantity of the job ('traffic triples', '首字延迟
放宽到 5 秒', 'context 32k instead?') is answered with the new plan and, said with what changed, how many cards more or
fewer than the plan before and what that does to the price an hour and a month ('要加多少？' is a delta, not a new total).
The plan before is the one the session kept (turn._plan_of); both sides are read from the same fields."""
from __future__ import annotations

from typing import Any

HOURS_MONTH = 730      # an always-on month, as the answer's own monthly figure (bot/render/reply.py)


def plan_cards(rec: dict[str, Any]) -> int:
    """All the cards a plan rents: replicas x cards a replica for a service, else its cards."""
    cap = rec.get("capacity") or {}
    if cap.get("replicas") and cap.get("gpus_per_replica"):
        return int(cap["replicas"]) * int(cap["gpus_per_replica"])
    return int(rec.get("gpus_total") or 0) * max(1, int(rec.get("replicas") or 1))


def plan_summary(rec: dict[str, Any]) -> dict[str, Any]:
    """The figures of a plan a later delta is taken against."""
    return {"cards": plan_cards(rec), "per_hour": rec.get("hourly_total") or rec.get("price_per_hour"),
            "currency": rec.get("currency"), "gpu": rec.get("gpu"), "job_cost": rec.get("job_cost"),
            "job_hours": rec.get("job_hours"), "tpot_ms": rec.get("tpot_ms"),
            "precision": (rec.get("layout") or {}).get("precision"), "sequences": rec.get("replica_concurrency"),
            "per_replica": (rec.get("capacity") or {}).get("per_replica"),
            "replicas": (rec.get("capacity") or {}).get("replicas") or rec.get("replicas")}


def fleet_delta(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any] | None:
    """Cards and price an hour before and after, with their differences; None when the plan before is not known."""
    if not before or not before.get("cards") or not after.get("cards"):
        return None
    out: dict[str, Any] = {"cards_before": int(before["cards"]), "cards_after": int(after["cards"]),
                           "cards_delta": int(after["cards"]) - int(before["cards"]),
                           "gpu_before": before.get("gpu"), "gpu_after": after.get("gpu")}
    if before.get("per_hour") and after.get("per_hour") and before.get("currency") == after.get("currency"):
        a, b = float(before["per_hour"]), float(after["per_hour"])
        out.update(hour_before=a, hour_after=b, hour_delta=b - a, month_delta=(b - a) * HOURS_MONTH,
                   currency=after.get("currency"))
    return out
