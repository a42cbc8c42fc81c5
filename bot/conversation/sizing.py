"""The conversation side of inverse sizing (bot/plan/inverse.py): which turns ask it, and how a turn that asks it
becomes a pre-training job the dialogue answers instead of asking which model.

'What's the biggest model $50k trains Chinchilla-optimal on H100s?' names no model: the model is what is asked. The
turn is read as a pre-training job with a placeholder size (so the dialogue answers instead of asking 'which
model?'), the planner finds the size, and the answer is the plan for the sized job, its verdict first. A follow-up
that names no model, size or tokens ('same but on 2 nodes only, and we have 3 weeks') sizes again under the new
limits; a turn that names a model or an amount of work ends it.
"""
from __future__ import annotations

from typing import Any

from bot.plan.inverse import START_B, TOKENS_PER_PARAM

# the lexicon's ask (rules/lexicon.yaml `asks`) -> what is sized
INVERSE_ASKS = {"biggest_model": "model", "most_tokens": "tokens"}


def inverse_ask(parse, asks: list[str], state: dict[str, Any] | None) -> str | None:
    """'model' or 'tokens' when this turn asks for inverse sizing, or continues a conversation that did; else None."""
    s = parse.slots
    named = bool(s.model or s.params_b or parse.ambiguous.get("model"))
    for ask, what in INVERSE_ASKS.items():
        if ask in asks:
            if what == "tokens" and not (named or ((state or {}).get("slots") or {}).get("model")):
                return "model"          # 'how many tokens can $5k train' with no model: the model is sized too
            return what
    prev = (state or {}).get("inverse")
    if prev and not named and not s.tokens and parse.intent in (None, "train") and not parse.reset:
        return prev
    return None


def as_training_job(parse, what: str, state: dict[str, Any] | None, span_days: float | None = None) -> None:
    """Make the turn a pre-training job the dialogue answers: the intent, the time the fleet has ('64 H100 for two
    weeks' is the limit, not a short job) and a placeholder size when the model is what is asked (replaced by the
    sized one before the plan is made)."""
    parse.intent, parse.out_of_scope = "train", False
    if span_days and not parse.slots.deadline_days:
        parse.slots.deadline_days = span_days
        parse.slots.duration = None
    known = ((state or {}).get("slots") or {})
    if what == "model" and not known.get("params_b") and not parse.slots.params_b:
        parse.slots.params_b = START_B
        parse.slots.tokens = TOKENS_PER_PARAM * START_B * 1e9


def sized_slots(slots: dict[str, Any], v: dict[str, Any]) -> dict[str, Any]:
    """The job's slots with the sized model or token count (a sized model is a generic one of that size)."""
    if v.get("answer") != "estimate":
        return slots
    out = {**slots, **v["job"]}
    if v["kind"] == "biggest_model":
        for k in ("model", "arch", "model_name"):
            out.pop(k, None)
    return out
