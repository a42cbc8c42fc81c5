"""The amount of work as the multiplication it is, in the reply's language: '50,000 samples x 1,024 tokens x 3 epochs
= 154M tokens', '5 万条样本 × 2,000 token × 3 个 epoch = 3 亿 token'. The record comes from bot/plan/work.py."""
from __future__ import annotations

from typing import Any

from bot.render.templates import Templates


def amount_text(value: float, lang: str) -> str:
    """A large amount in three figures: 153,600,000 -> '154M' ('1.54 亿' in Chinese); small ones in full."""
    if lang == "zh":
        for size, word in ((1e8, "亿"), (1e4, "万")):
            if value >= size:
                x = value / size
                return f"{x:,.0f} {word}" if x >= 1000 else f"{x:.3g} {word}"
        return f"{value:,.0f}" if value == int(value) else f"{value:g}"
    for size, word in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= size:
            return f"{value / size:.3g}{word}"
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _factor_text(f: dict[str, Any], t: Templates, lang: str) -> str:
    unit = "epoch" if f["unit"] == "epochs" and f["value"] == 1 else f["unit"]
    value = f"{f['value']:,.0f}" if f["value"] == int(f["value"]) else f"{f['value']:g}"
    text = f"{value} {t.say(f'work.unit.{unit}', lang)}"
    return text + (t.say("work.at_most", lang) if f.get("bound") == "at_most" else "")


def work_text(work: dict[str, Any], t: Templates, lang: str) -> str:
    """The factors multiplied out, then what the planner times when it differs from the amount."""
    sep = " × " if lang == "zh" else " x "
    factors = sep.join(_factor_text(f, t, lang) for f in work["factors"])
    if work.get("generated_tokens") is not None:        # online RL: the rollout's tokens, then those trained
        amount = f"{amount_text(work['generated_tokens'], lang)} {t.say('work.generated', lang)}"
        tail = t.say("work.tokens_trained", lang, tokens=amount_text(work["tokens"], lang))
    elif work["unit"] == "tokens":
        amount, tail = f"{amount_text(work['amount'], lang)} {t.say('work.unit.tokens', lang)}", ""
    else:
        amount = f"{amount_text(work['tokens'], lang)} {t.say('work.unit.tokens', lang)}"
        tail = ""
    if work.get("packing") is False:
        tail += t.say("work.lower_bound", lang)
    return t.say("work.line", lang, factors=factors, amount=amount, tail=tail)
