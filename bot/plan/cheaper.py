"""'cheaper?' after an answer: what the same job costs if one thing about it gives.

The answer before was already the cheapest plan that meets the job as stated on its cloud, so asking again with a low
budget changes nothing by itself (the first-run review of 2026-12-04 found "cheaper?" answered with the same plan).
What an engineer answers instead is the price of each concession: quantized weights for a service (FP8 where the card
runs it, INT4 AWQ/GPTQ elsewhere), QLoRA for a LoRA fine-tune and LoRA for a full one, spot capacity for a job that
checkpoints, another cloud when none was asked for. Each is the planner's own pick for the changed job, so its count,
memory and speed are sized as in any answer; an option is kept only when it meets the job's targets and saves at
least MIN_SAVING in the same currency.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

MIN_SAVING = 0.05          # a saving under 5 % is within the noise of list prices: not worth a concession
MAX_OPTIONS = 3


@dataclass(frozen=True)
class Option:
    """One concession and the plan it buys: what changes, the pick's cloud, flavor and count, its cost in the base
    plan's units (per job when the job has a length, per hour for a service) and the share it saves."""
    change: str                # precision.fp8, precision.int4, method.qlora, method.lora, spot, provider
    provider: str
    flavor: str
    instances: int
    gpus_total: int
    gpu_name: str
    cost: float
    currency: str
    per: str                   # job or hour
    saving: float              # share of the base cost saved, 0-1

    def as_dict(self) -> dict[str, Any]:
        return {"change": self.change, "provider": self.provider, "flavor": self.flavor, "instances": self.instances,
                "gpus_total": self.gpus_total, "gpu": self.gpu_name, "cost": round(self.cost, 2),
                "currency": self.currency, "per": self.per, "saving_pct": round(100 * self.saving)}


def cost_of(rec: dict[str, Any]) -> tuple[float, str] | None:
    """(cost, per) of a plan as the answer states it: the whole job when it has a length, else an hour of it."""
    if rec.get("job_cost") is not None:
        return float(rec["job_cost"]), "job"
    if rec.get("hourly_total") is not None:
        return float(rec["hourly_total"]), "hour"
    return None


def meets(rec: dict[str, Any]) -> bool:
    """A plan that holds the job and misses none of its targets (deadline, latency, load, budget aside)."""
    return bool(rec.get("fits")) and not rec.get("ruled_out") and not [b for b in rec.get("breaks") or []
                                                                         if b != "budget"]


def concessions(intent: str, slots: dict[str, Any], method: str | None, providers: list[str],
                provider: str) -> list[tuple[str, dict[str, Any]]]:
    """What may give, as the slots it changes: the job's own precision or method first, then where it runs."""
    out: list[tuple[str, dict[str, Any]]] = []
    if intent == "inference" and not slots.get("precision"):
        out += [("precision.fp8", {"precision": "fp8"}), ("precision.int4", {"precision": "int4"})]
    if intent in ("finetune", "train") and method == "lora":
        out.append(("method.qlora", {"method": "qlora"}))
    if intent == "finetune" and method == "full":
        out.append(("method.lora", {"method": "lora"}))
    if not slots.get("provider"):
        out += [("provider", {"provider": p}) for p in providers if p != provider]
    return out


def cheaper_options(advise: Callable[[dict[str, Any]], list[dict[str, Any]]], intent: str, slots: dict[str, Any],
                    base: dict[str, Any], method: str | None, providers: list[str]) -> list[Option]:
    """The concessions that make the job cheaper than `base` (the answer's pick), cheapest first, one per kind of
    change (the cheapest other cloud, not all of them). `advise(slots)` is the planner's ranked plans for slots."""
    base_cost = cost_of(base)
    if base_cost is None:
        return []
    found: dict[str, Option] = {}
    for change, extra in concessions(intent, slots, method, providers, base.get("provider")):
        recs = [r for r in advise({**slots, **extra}) if r.get("label") != "yours"]
        pick = recs[0] if recs else None
        got = cost_of(pick) if pick else None
        if not got or got[1] != base_cost[1] or pick.get("currency") != base.get("currency") or not meets(pick):
            continue
        saving = 1 - got[0] / base_cost[0] if base_cost[0] else 0.0
        if saving < MIN_SAVING:
            continue
        option = Option(change, pick["provider"], pick["flavor"], pick.get("instances") or 1,
                        pick.get("gpus_total") or pick.get("gpu_count") or 1, pick.get("gpu_name") or pick.get("gpu"),
                        got[0], pick["currency"], got[1], saving)
        kind = change.split(".")[0]
        if kind not in found or option.cost < found[kind].cost:
            found[kind] = option
    spot = _spot(intent, base, base_cost)
    if spot:
        found["spot"] = spot
    return sorted(found.values(), key=lambda o: o.cost)[:MAX_OPTIONS]


def _spot(intent: str, base: dict[str, Any], base_cost: tuple[float, str]) -> Option | None:
    """The same plan on spot capacity, for a job with a length (it checkpoints and resumes; the billing line's
    overhead is in the spot cost): never for an always-on service, which a reclaim takes down."""
    if intent == "inference" or base_cost[1] != "job":
        return None
    spot = next((c for c in base.get("costs") or [] if c.get("mode") == "spot" and c.get("per") == "job"), None)
    if not spot or spot.get("currency") != base.get("currency") or not base_cost[0]:
        return None
    saving = 1 - spot["cost"] / base_cost[0]
    if saving < MIN_SAVING:
        return None
    return Option("spot", base["provider"], base["flavor"], base.get("instances") or 1,
                  base.get("gpus_total") or 1, base.get("gpu_name") or base.get("gpu"), spot["cost"],
                  spot["currency"], "job", saving)
