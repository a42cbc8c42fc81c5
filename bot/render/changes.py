"""A follow-up's changes said first: 'Re-planned the same job (serving Qwen2.5-7B) with requests/s 5 -> 50.' Every
slot a follow-up changed (bot/conversation/dialogue.changed_slots) is named with its value before and after, so the
reader sees that the answer below is the same job planned again, and with what."""
from __future__ import annotations

from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.render.own import money_text
from bot.render.templates import Templates

# the slot's value as said: a template per slot, or the number as it is
_UNITS = {"qps": "changed.unit.qps", "concurrency": "changed.unit.users", "deadline_days": "changed.unit.days",
          "ttft_ms": "changed.unit.ms", "tpot_ms": "changed.unit.ms", "gpus": "changed.unit.cards",
          "max_gpus": "changed.unit.cards", "tokens": "changed.unit.tokens", "request_tokens": "changed.unit.tokens",
          "output_tokens": "changed.unit.tokens", "seq_len": "changed.unit.tokens", "image_size": "changed.unit.px",
          "item_input_tokens": "changed.unit.tokens",
          "item_output_tokens": "changed.unit.tokens", "batch_tokens": "changed.unit.tokens",
          "token_rate": "changed.unit.token_rate", "fps": "changed.unit.fps", "e2e_ms": "changed.unit.ms",
          "latency_ms": "changed.unit.ms", "usage_hours_month": "changed.unit.hours_month",
          "peak_factor": "changed.unit.times", "image_tokens": "changed.unit.tokens", "train_steps": "changed.unit.steps"}


def _number(v: float) -> str:
    if v >= 1e9:
        return f"{v / 1e9:g}B"
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    return f"{v:,.6g}" if v != int(v) else f"{int(v):,}"


def value_text(slot: str, value: Any, t: Templates, lang: str, kb: KnowledgeBase, slots: dict[str, Any]) -> str:
    """One slot's value in words: a model's or card's name, a cloud's, a method's, a number with its unit."""
    if value is None:
        return t.say("changed.none", lang)
    if slot == "model":
        return kb.models[value].name if value in kb.models else str(value)
    if slot == "gpu_model":
        return kb.gpus[value].name if value in kb.gpus else str(value).upper()
    if slot in ("gpu_excluded", "gpu_allowed"):
        names = [kb.gpus[g].name if g in kb.gpus else str(g).upper() for g in value]
        return t.say("list.sep", lang).join(names)
    if slot == "provider":
        return kb.providers[value].display_name(lang) if value in kb.providers else str(value)
    if slot == "method" and f"method.{value}" in t.table:
        return t.say(f"method.{value}", lang)
    if slot == "budget_amount":
        money = f"{money_text(float(value))} {slots.get('budget_currency') or ''}".strip()
        period = slots.get("budget_period")
        return t.say(f"changed.unit.per_{period}", lang, v=money) if f"changed.unit.per_{period}" in t.table else money
    if slot == "deadline_days" and isinstance(value, (int, float)) and value < 1:
        return t.say("changed.unit.hours", lang, n=f"{float(value) * 24:.3g}")     # '2 h', not '0.083333 day(s)'
    if slot == "dataset_items" and f"changed.unit.{slots.get('dataset_unit')}" in t.table:
        return t.say(f"changed.unit.{slots['dataset_unit']}", lang, n=_number(float(value)))
    if slot == "usage_hours_month" and isinstance(value, (int, float)):
        return t.say("changed.unit.hours_month", lang, n=f"{float(value):,.0f}")
    if slot == "mfu" and isinstance(value, (int, float)):
        return f"{float(value) * 100:.3g} %"
    if slot in ("latency", "sharding", "offload", "network") and f"changed.value.{value}" in t.table:
        return t.say(f"changed.value.{value}", lang)
    if slot == "params_b":
        return f"{float(value):g}B"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        key = _UNITS.get(slot)
        return t.say(key, lang, n=_number(float(value))) if key else _number(float(value))
    return str(value)


def changed_line(changes: list[tuple[str, Any, Any]], job: str, t: Templates, lang: str, kb: KnowledgeBase,
                 slots: dict[str, Any]) -> str:
    """'Re-planned the same job (serving Qwen2.5-7B): requests/s 5/s -> 50/s.' in the reply's language."""
    parts = []
    for slot, before, after in changes:
        said = "budget_hour" if slot == "budget_amount" and slots.get("budget_period") == "hour" else slot
        name = t.say(f"changed.slot.{said}", lang) if f"changed.slot.{said}" in t.table else slot
        now = value_text(slot, after, t, lang, kb, slots)
        if slot in ("gpu_excluded", "gpu_allowed") or before is None:
            parts.append(t.say("changed.set", lang, name=name, after=now))
        else:
            parts.append(t.say("changed.from_to", lang, name=name, after=now,
                               before=value_text(slot, before, t, lang, kb, slots)))
    return t.say("changed.line", lang, job=job, changes=t.say("list.sep_clause", lang).join(parts))


def changes_as_data(changes: list[tuple[str, Any, Any]]) -> list[dict[str, Any]]:
    return [{"slot": s, "before": b, "after": a} for s, b, a in changes]
