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
    if f.get("bound") == "mean" and f.get("limit"):
        return text + t.say("work.mean_of_limit", lang, limit=f"{f['limit']:,.0f}")
    return text + (t.say("work.at_most", lang) if f.get("bound") == "at_most" else "")


def work_text(work: dict[str, Any], t: Templates, lang: str) -> str:
    """The factors multiplied out, then what the planner times when it differs from the amount; a service's load as
    its count over its period and the rate it is sized for."""
    if work.get("kind") == "serving":
        return load_text(work, t, lang)
    sep = " × " if lang == "zh" else " x "
    factors = sep.join(_factor_text(f, t, lang) for f in work["factors"])
    if work.get("generated_tokens") is not None:        # online RL: the rollout's tokens, then those trained
        amount = f"{amount_text(work['generated_tokens'], lang)} {t.say('work.generated', lang)}"
        tail = t.say("work.tokens_trained", lang, tokens=amount_text(work["tokens"], lang))
    elif work["unit"] == "tokens" or work.get("tokens") is None:      # tokens, or images / hours of audio
        unit = t.say(f"work.unit.{work['unit']}", lang)
        amount, tail = f"{amount_text(work['amount'], lang)} {unit}", ""
    else:
        amount = f"{amount_text(work['tokens'], lang)} {t.say('work.unit.tokens', lang)}"
        tail = ""
    if work.get("packing") is False:
        tail += t.say("work.lower_bound", lang)
    return t.say("work.line", lang, factors=factors, amount=amount, tail=tail)


def _per_s(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def load_text(load: dict[str, Any], t: Templates, lang: str) -> str:
    """'2,000,000 requests a day = 23.1/s on average; x 3 at the busy hours = 69.4 requests/s; each 500 prompt +
    300 output tokens'."""
    unit = t.say(f"work.load_unit.{load['unit'] if not load.get('fanout') else 'requests'}", lang)
    per_query = load["amount"] / (load.get("fanout") or 1)
    count = f"{load['count']:,.0f}" if load.get("count") else None
    period = t.say(f"work.period.{load['period']}", lang)
    if load.get("tokens_per_s"):        # '5,000 output tokens/s / 256 a request = 19.5 requests/s'
        key = f"work.load.tokens_{load['tokens_role']}" if load.get("tokens_role") else "work.load.tokens"
        text = t.say(key, lang, tokens=_per_s(load["tokens_per_s"]),
                     per=f"{load['tokens_per_request']:,}", rate=_per_s(load["average_per_s"] or load["amount"]))
        if load["basis"] == "average":
            text += t.say("work.load.tokens_peak", lang, factor=f"{load['peak_factor']:g}", rate=_per_s(per_query))
    elif load.get("daily_users"):       # '10,000 daily users x 10 requests = 100,000 requests a day = ...'
        text = t.say("work.load.daily_users", lang, users=f"{load['daily_users']:,}", per=f"{load['requests_per_user']:g}",
                     count=count, average=_per_s(load["average_per_s"]), factor=f"{load['peak_factor']:g}",
                     rate=_per_s(per_query))
    elif load["unit"] == "audio_hours" and count:     # hours of audio per hour of wall clock: x real time
        text = t.say("work.load.audio", lang, count=count, period=period, rate=_per_s(load["amount"]))
    elif load["basis"] == "average" and count:
        text = t.say("work.load.average", lang, count=count, unit=unit, period=period,
                     average=_per_s(load["average_per_s"]), factor=f"{load['peak_factor']:g}", rate=_per_s(per_query))
    elif load.get("every_s"):          # '300 users x 1 request every 30 s each = 10 requests/s'
        text = t.say("work.load.per_user", lang, users=f"{load['containers']:,.0f}", who=load["container"],
                     each=f"{load['per_container']:g}", every=f"{load['every_s']:g}", rate=_per_s(per_query))
    elif load["basis"] == "peak" and load.get("average_said"):    # 'average 5 QPS, peak 20': the peak is sized
        text = t.say("work.load.peak_over_average", lang, rate=_per_s(per_query), unit=unit,
                     average=_per_s(load["average_said"]))
    elif count and load["period"] != "second":
        text = t.say("work.load.per", lang, count=count, unit=unit, period=period, rate=_per_s(per_query))
    else:
        text = t.say("work.load.rate", lang, rate=_per_s(per_query), unit=unit)
    if load.get("containers") and not load.get("every_s") and count:
        # '1,000 orders a day x 50 images each = 50,000 images a day = ...'
        text = t.say("work.load.containers", lang, containers=f"{load['containers']:,.0f}", container=load["container"],
                     period=period, each=f"{load['per_container']:g}", unit=unit) + text
    if load.get("fanout"):
        key = "work.load.fanout_texts" if load["unit"] == "texts" else "work.load.fanout"
        text += t.say(key, lang, fanout=load["fanout"], pairs=_per_s(load["amount"]))
        if load.get("pair_tokens"):     # the tokens the encoder runs a second: the real load
            text += t.say("work.load.fanout_tokens", lang, tokens=f"{load['pair_tokens']:,}",
                          rate=_per_s(load["amount"] * load["pair_tokens"]))
    # a fan-out's tokens are each document's or text's, said above with it
    sizes = {k: f"{load[k]:,}" for k in ("input_tokens", "output_tokens")
             if load.get(k) and not (k == "input_tokens" and load.get("pair_tokens"))}
    if sizes:
        key = "work.load.lengths" if len(sizes) == 2 else f"work.load.{next(iter(sizes)).split('_')[0]}"
        text += t.say(key, lang, input=sizes.get("input_tokens"), output=sizes.get("output_tokens"))
    return text
