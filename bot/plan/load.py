"""A service's load as a typed record (records.models.Load): the rate it is sized for, from what the user said.

A count per day, week or month is an average: the busy hours carry more. PEAK_FACTOR is this module's assumption,
said in every answer that uses it: a day's requests arriving within about 8 busy hours of the users' working day is
24 / 8 = 3x the daily average (a service used around the clock is closer to 1.5-2x; one launched with a campaign
peaks higher). A production service (its traffic counted per day or month) keeps at least MIN_PRODUCTION_REPLICAS
replicas, so that one can fail or be updated while the other serves: the redundancy the Google SRE book plans
capacity with (N+2; 'Site Reliability Engineering', Beyer et al., O'Reilly 2016, chapter 1), at its smallest.
"""
from __future__ import annotations

from typing import Any

from bot.records.kb import Model
from bot.records.models import Load

PEAK_FACTOR = 3.0
MIN_PRODUCTION_REPLICAS = 2
UNITS = ("requests", "images", "documents", "audio_hours", "samples", "prompts")


def serving_load(slots: dict[str, Any]) -> Load | None:
    """The load the slots state, or None when no rate was said."""
    qps = slots.get("qps") or slots.get("audio_rate")
    if not qps or qps <= 0:
        return None
    said = slots.get("load") or {}
    basis = slots.get("qps_basis") or "rate"
    factor = PEAK_FACTOR if basis == "average" else 1.0
    fanout = slots.get("fanout")
    unit = said.get("unit") if said.get("unit") in UNITS else "requests"
    production = basis == "average" and not slots.get("gpus")
    return Load(amount=qps * factor * (fanout or 1), unit="documents" if fanout else unit, count=said.get("count"),
                period=said.get("period") or "second", average_per_s=qps if basis == "average" else None,
                peak_factor=factor, basis=basis, fanout=fanout, input_tokens=slots.get("request_tokens"),
                output_tokens=slots.get("output_tokens"),
                min_replicas=MIN_PRODUCTION_REPLICAS if production else 1)


def sized_rate(slots: dict[str, Any]) -> float | None:
    """The rate a service is sized for: the stated one, a daily or monthly average raised to its busy hours, each
    query's fan-out counted."""
    load = serving_load(slots)
    return load.amount if load else None


def load_notes(load: Load | None) -> list[tuple[str, dict[str, Any]]]:
    """The assumptions the load rests on, said back: the peak factor and the replicas of a production service."""
    if load is None or load.basis != "average":
        return []
    notes = [("assume.peak_load", {"factor": f"{load.peak_factor:g}", "average": _rate(load.average_per_s),
                                   "peak": _rate(load.amount / (load.fanout or 1))})]
    if load.min_replicas > 1:
        notes.append(("assume.min_replicas", {"replicas": load.min_replicas}))
    return notes


def _rate(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.1f}" if value >= 1 else f"{value:.3g}"


def with_reasoning_output(slots: dict[str, Any], model: Model | None) -> tuple[dict[str, Any], list]:
    """A reasoning model served with no output length said: its requests generate what a typical answer of it does
    (the model's reasoning_output_tokens, from a published evaluation), not a chat's 256 tokens; said back."""
    if model is None or not model.reasoning_output_tokens or slots.get("output_tokens") or slots.get("offline"):
        return slots, []
    tokens = model.reasoning_output_tokens
    return {**slots, "output_tokens": tokens}, [("assume.reasoning_output", {"model": model.name,
                                                                             "tokens": f"{tokens:,}"})]
