"""'Not enough': the concrete, priced ways to bring the job within the budget.

A "No" to "is my budget enough?" is only half an answer; an engineer follows it with what would fit, each with its
number: the concessions of bot/plan/cheaper.py (quantized weights, a lighter method, spot, another cloud), and, for a
training job, less work: the most tokens the budget trains on the same plan (bot/plan/inverse.py, cost linear in
tokens) or the largest smaller model of the same family that fits it on the same tokens. Each path is the planner's own
plan for the changed job, priced in the budget's currency and period, and marked as within the budget or still over.
"""
from __future__ import annotations

from typing import Any, Callable

from bot.plan.billing import HOURS_MONTH
from bot.plan.cheaper import Option, cheaper_options

MAX_SIBLINGS = 3           # smaller models of the family tried, largest first


def in_budget_units(kb, cost: float, currency: str, per: str, budget: dict[str, Any]) -> float | None:
    """A plan's cost in the budget's currency and period (a job against a total budget, an hour x 730 against a
    month's); None when the two cannot be compared (a job's cost against a monthly budget)."""
    period = budget.get("budget_period") or "total"
    if per == "hour" and period == "month":
        cost = cost * HOURS_MONTH
    elif not (per == "job" and period == "total"):
        return None
    try:
        return kb.convert(cost, currency, budget["budget_currency"])
    except Exception:          # a currency the rate table lacks: not comparable
        return None


def concession_paths(kb, options: list[Option], budget: dict[str, Any]) -> list[dict[str, Any]]:
    """cheaper.py's options with their cost in the budget's units and whether each fits it."""
    out = []
    for o in options:
        spend = in_budget_units(kb, o.cost, o.currency, o.per, budget)
        out.append({"kind": "concession", **o.as_dict(), "spend": round(spend, 2) if spend is not None else None,
                    "spend_currency": budget["budget_currency"], "spend_period": budget.get("budget_period") or "total",
                    "fits": spend is not None and spend <= budget["budget_amount"]})
    return out


def work_paths(kb, intent: str, slots: dict[str, Any], tokens_to_fit: Callable[[], dict[str, Any]],
               plan: Callable[[dict[str, Any]], dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Less work for a training job with a token count: the most tokens the budget trains, and the largest smaller
    model of the family that fits the budget on the same tokens."""
    if intent not in ("train", "finetune") or not slots.get("tokens"):
        return []
    out = []
    v = tokens_to_fit()
    if v.get("answer") == "estimate" and v["tokens"] < slots["tokens"]:
        out.append({"kind": "tokens", "tokens": v["tokens"], "was": slots["tokens"],
                    "pct": round(100 * v["tokens"] / slots["tokens"]), "spend": v.get("spend"),
                    "currency": v.get("currency"), "hours": v.get("hours"), "gpus": v.get("gpus"),
                    "gpu": v.get("gpu_name"), "fits": True})
    model = kb.models.get(slots.get("model") or "")
    if model is not None:
        smaller = sorted((m for m in kb.models.values() if m.family == model.family
                          and m.params_b < 0.8 * model.params_b), key=lambda m: -m.params_b)
        for m in smaller[:MAX_SIBLINGS]:
            rec = plan({**slots, "model": m.id, "params_b": m.params_b})
            use = (rec or {}).get("budget")
            if use and use.get("met"):
                out.append({"kind": "model", "model": m.name, "params_b": m.params_b, "spend": use["spend"],
                            "currency": use["currency"], "hours": rec.get("job_hours"),
                            "gpus": rec.get("gpus_total"), "gpu": rec.get("gpu_name"), "fits": True})
                break
    return out


class BudgetPathsStage:
    """The Advisor's 'not enough' stage (a mixin over the forward planner and cheaper.py)."""

    def budget_paths(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                     base: dict[str, Any], method: str | None) -> list[dict[str, Any]]:
        """Every priced way to bring the job within the stated budget: less work first (it always fits, by
        construction), then the concessions, each marked as within the budget or still over."""
        def ranked(s: dict[str, Any]) -> list[dict[str, Any]]:
            return self.advise(intent, s, assumed, lang).recommendations

        def plan(s: dict[str, Any]) -> dict[str, Any] | None:
            return next((r for r in ranked(s) if r.get("label") != "yours"), None)
        paths = work_paths(self.kb, intent, slots, lambda: self.inverse(slots, assumed, lang, "tokens", margin=False), plan)
        options = cheaper_options(ranked, intent, slots, base, method, list(self.kb.providers))
        return paths + concession_paths(self.kb, options, slots)
