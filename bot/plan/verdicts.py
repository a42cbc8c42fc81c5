"""Verdicts: the one-line answer a question that asks for a decision gets first, as data the renderers read.

Four kinds, each a dict with `kind` and the numbers behind it (wording lives in bot/render/verdicts.py):
- compare: two plans for the same job (two GPUs), which is preferred and by how much: speed (the plan's wall-clock
  time, or time per output token for serving), price per hour, cost per job (or per month for a service), and the
  deciding factor (memory, availability, bandwidth, compute, bf16/FP8 support, licensing);
- billing: the break-even utilisation between pay-per-use and a month's commitment, given the hours the user
  rents in a month, and spot's saving after its restart overhead with a checkpoint interval (Young's formula);
- enough: a stated budget against the plan's cost;
- how_long: the plan's wall-clock time, against a stated deadline, with the cards the deadline needs.
Pure arithmetic over plans the advisor already made; nothing here reads text or templates.
"""
from __future__ import annotations

import math
from typing import Any

from bot.plan.billing import HOURS_MONTH, HOURS_YEAR, RECLAIM_EVERY_H, RESTART_H

# policy: two plans whose cost per job (or month) differ by at most this share are a tie on cost; a tie on cost is
# broken by speed when one is at least SPEED_MATTERS times faster, else it is a tie
COST_TIE = 0.05
SPEED_MATTERS = 1.15
PRECISION_RANK = {"fp32": 7, "bf16": 6, "fp16": 6, "fp8": 5, "int8": 4, "int4": 3, "nf4": 3}   # quality kept
METHOD_RANK = {"full": 3, "lora": 2, "freeze": 1, "qlora": 1}      # how much of the model a method can change
SAME_SPEED = 1.05             # policy: sides within 5 % of each other's speed are called the same speed
# policy: a comparison that names no job compares a typical one of the kind the question implies, said in the answer
# (render key verdict.typical.<kind>): a chat service of a popular 8B model, or a LoRA fine-tune of a popular 7B
TYPICAL_JOBS: dict[str, dict[str, Any]] = {
    "inference": {"model": "llama-3.1-8b", "concurrency": 16},
    "finetune": {"model": "qwen2.5-7b", "method": "lora"},
}
# policy: a training comparison with no amount of work is timed on a typical amount (said; the ratio between the
# sides does not depend on it): an SFT set of 50k samples x 1k tokens x 2 epochs; a continued pre-training of 10B
TYPICAL_TOKENS = {"finetune": 1e8, "train": 1e10}


def _side_numbers(kb, x: dict[str, Any], ccy: str | None) -> dict[str, Any]:
    """One side's plan as the numbers a verdict compares, costs in `ccy` (the first priced side's currency)."""
    p = x.get("pick")
    out = {"name": x["name"], "label": x.get("label") or x["gpu_name"], "gpu": x["gpu"], "gpu_name": x["gpu_name"],
           "fits": bool(p and not p.get("breaks")), "why_not": x.get("why_not"),
           "rented": x.get("rented", True), "consumer": x.get("consumer", False), "bf16": x.get("bf16", True),
           "hours": None, "job_cost": None, "hourly": None, "monthly": None, "currency": ccy, "gpus": None,
           "tpot_ms": None, "flavor": None, "provider": None, "price_kind": None}
    if not p:
        cards = x.get("cards") or {}
        out.update(cards=cards.get("cards"), need_gib=cards.get("need_gib"), memory_gib=cards.get("memory_gib"),
                   fits=bool(cards.get("cards")))      # a card no flavor rents still holds the job on its cards
        if out["fits"]:
            # a training job's time on those cards (a service has none): what the side is timed on per job
            out.update(hours=cards.get("hours"), gpus=cards.get("cards"))
        cp = x.get("card_price")
        conv = _converter(kb, cp["currency"], ccy or cp["currency"]) if cp else None
        if cp and conv and out["fits"]:
            # the cards that hold it, at the price a card on file (a 1-card rental): priced per month of use, and per
            # job when the job is timed on as many cards as are priced
            out.update(hourly=conv(cp["hourly"]), monthly=conv(cp["hourly"] * HOURS_MONTH), gpus=cp["cards"],
                       price_kind="per_card", currency=ccy or cp["currency"])
            if out["hours"] and cp["cards"] == cards.get("cards"):
                out["job_cost"] = conv(cp["hourly"] * out["hours"])
        return out
    conv = _converter(kb, p.get("currency"), ccy)
    hourly = p.get("hourly_total")
    tpot = p.get("load_tpot_ms") or p.get("tpot_ms")
    conc = p.get("load_per_replica") if p.get("load_tpot_ms") else p.get("replica_concurrency")
    out.update(hours=p.get("job_hours"), gpus=(p.get("gpus_total") or 1) * max(1, p.get("replicas") or 1),
               flavor=p.get("flavor"), provider=p.get("provider"), price_kind=p.get("price_kind"), tpot_ms=tpot,
               need_gib=p.get("per_gpu_gib"), memory_gib=p.get("gpu_memory_gib"), users=conc,
               # output tokens a second a card at the users each replica serves: what 'which has more throughput' asks
               tps_card=round(conc * 1000 / tpot / max(1, p.get("gpus_total") or 1), 1) if tpot and conc else None,
               load_stated=bool(p.get("load_tpot_ms")))
    if hourly is not None and conv and out["tps_card"] and not out["load_stated"]:
        # no load stated: replicas of different capacity compare by what a million output tokens cost
        out["per_mtok"] = round(conv(hourly) / (out["tps_card"] * max(1, p.get("gpus_total") or 1) * 3600) * 1e6, 3)
    cp = x.get("card_price")
    if hourly is None and cp and _converter(kb, cp["currency"], ccy or cp["currency"]):
        # the plan's size has no public price: its cards at the price a card on file (said on its line)
        conv, hourly = _converter(kb, cp["currency"], ccy or cp["currency"]), cp["hourly"]
        out["price_kind"] = "per_card"
    if hourly is not None and conv:
        out["hourly"] = conv(hourly)
        out["monthly"] = conv(p["monthly_cost"]) if p.get("monthly_cost") is not None else conv(hourly * HOURS_MONTH)
        out["job_cost"] = conv(p["job_cost"]) if p.get("job_cost") is not None else None
    return out


def _listed_span(kb, side: dict[str, Any], key: str, ccy: str | None) -> tuple[float, float] | None:
    """A side whose own price is a flagged catalog row, priced instead at its card's list prices elsewhere (lowest
    and highest list price a card-hour, on-demand, in the verdict's currency), over the same cards and hours: the
    range its real price most likely falls in. None where no sound list price of that card is on file."""
    per_card = []
    for f in kb.flavors_with_gpu(side.get("gpu") or ""):
        price = f.price
        if not price or price.kind != "list" or price.on_demand is None or not f.gpu_count:
            continue
        conv = _converter(kb, price.currency, ccy)
        if conv:
            per_card.append(conv(price.on_demand / f.gpu_count))
    hours = side.get("hours") if key == "job_cost" else HOURS_MONTH
    if not per_card or not hours or not side.get("gpus"):
        return None
    return (round(min(per_card) * side["gpus"] * hours, 2), round(max(per_card) * side["gpus"] * hours, 2))


def _converter(kb, src: str | None, dst: str | None):
    if not src or not dst or src == dst:
        return (lambda v: round(v, 2)) if src else None
    try:
        kb.convert(1.0, src, dst)
    except Exception:          # a currency the rate table lacks: that side is not priced for the comparison
        return None
    return lambda v: round(kb.convert(v, src, dst), 2)


def compare_verdict(kb, data: dict[str, Any], precision: str | None = None) -> dict[str, Any]:
    """Which of two (or more) sides to take for the job, and the numbers that decide it."""
    ccy = next((x["pick"]["currency"] for x in data["side"] if x.get("pick") and x["pick"].get("hourly_total")
                is not None and x["pick"].get("currency")), None) or \
        next((x["card_price"]["currency"] for x in data["side"] if x.get("card_price")), None)
    sides = [_side_numbers(kb, x, ccy) for x in data["side"]]
    serving = not data.get("training")
    axis = data.get("axis") or "gpu"
    v: dict[str, Any] = {"kind": "compare", "preferred": None, "tie": False, "sides": sides, "currency": ccy,
                         "basis": None, "factor": None, "serving": serving, "axis": axis,
                         "rental": data.get("rental"),
                         "caveats": _caveats(kb, sides, data, precision) + _axis_caveats(data)}
    fitting = [s for s in sides if s["fits"]]
    priced = [s for s in fitting if s["hourly"] is not None]
    sound = [s for s in priced if s.get("price_kind") != "flagged"]
    if len(priced) >= 2 and len(sound) == 1:
        # a catalog row flagged as a data problem decides nothing alone: the flagged side is re-priced at its card's
        # list prices on other clouds, and where the verdict holds over that whole range it is given
        best, other = sound[0], next(s for s in priced if s is not sound[0])
        key = "job_cost" if best.get("job_cost") is not None and other.get("job_cost") is not None else "monthly"
        v.update(preferred=best["name"], other=other["name"], basis="flagged", factor="flagged_price", cost_key=key)
        span = _listed_span(kb, other, key, ccy)
        if span and span[0] < best[key] and span[1] < best[key]:
            v.update(preferred=other["name"], other=best["name"], basis="flagged_listed", span=span, factor="price")
        elif span and span[0] > best[key]:
            v.update(basis="flagged_dearer", span=span, factor="price")       # dearer even at the cheapest list price elsewhere
        return v
    if len(priced) >= 2:
        return _by_cost(kb, v, sound if len(sound) >= 2 else priced, serving)
    if len(priced) == 1 and len(fitting) == 1:
        best = priced[0]
        other = next(s for s in sides if s is not best)
        v.update(preferred=best["name"], basis="fit", factor="memory", other=other["name"])
        if other.get("why_not"):          # what stops the other side, with its number
            v.update(basis="cannot", why_not=other["why_not"], factor=_cannot_factor(other["why_not"]))
        return v
    if len(priced) == 1:
        best = priced[0]
        other = next(s for s in sides if s is not best)
        v.update(preferred=best["name"], basis="priced", factor="availability", other=other["name"])
        v.update(_unpriced_terms(best, other))
        return v
    timed = [s for s in fitting if s.get("hours")]
    # neither side priced, both timed for the job (a rented size with no public price, or the cards that hold it):
    # the faster per card decides ('910B 和 H800 训练 70B 哪个快'), by their hours for the job
    if not priced and len(timed) >= 2 and len(timed) == len(fitting) and _faster_side(v, timed, kb, serving, axis):
        return v
    planned = [s for s in fitting if s["flavor"]]
    if not priced and len(planned) == 1 and len(fitting) > 1:
        # one side has a rentable plan on file (with no public price: ask for a quote), the other holds the job only
        # on cards nobody on file rents for it: the side one can rent is the answer, not 'neither'
        v.update(preferred=planned[0]["name"], basis="fit", factor="memory",
                 other=next(s["name"] for s in sides if s is not planned[0]))
        return v
    if data.get("by_cards"):
        v.update(preferred=data["by_cards"], basis="cards", factor=data.get("why") or "cards")
        return v
    if len(fitting) == 1:
        other = next(s for s in sides if s is not fitting[0])
        v.update(preferred=fitting[0]["name"], basis="fit", factor="memory", other=other["name"])
        if other.get("why_not"):          # what stops the other side, with its number
            v.update(basis="cannot", why_not=other["why_not"], factor=_cannot_factor(other["why_not"]))
        return v
    timed = [s for s in fitting if s.get("hours")]
    # on the user's own cards (no price): the faster side, by its time for the job
    if len(timed) >= 2 and len(timed) == len(fitting) and _faster_side(v, timed, kb, serving, axis):
        return v
    if len(fitting) >= 2 and axis in ("precision", "method") and not priced:
        # both fit the user's cards and neither is priced or clearly faster: the one that keeps more quality
        rank = PRECISION_RANK if axis == "precision" else METHOD_RANK
        keep, lose = sorted(fitting, key=lambda s: (-rank.get(s["name"], 0), s["name"]))[:2]
        if rank.get(keep["name"]) != rank.get(lose["name"]):
            v.update(preferred=keep["name"], other=lose["name"], basis="both_fit", factor="quality")
            return v
    v.update(basis="none", factor="memory" if not fitting else "availability")
    return v


def _unpriced_terms(priced: dict[str, Any], unpriced: dict[str, Any]) -> dict[str, Any]:
    """A timed side with no public price against a priced one: how much faster or slower it is card for card, and
    the price per card-hour under which it would do the same job for less (the priced side's job cost over the
    unpriced side's card-hours): what to hold a vendor's quote against."""
    if not (priced.get("hours") and unpriced.get("hours") and priced.get("job_cost") and unpriced.get("fits")):
        return {}
    card_h = unpriced["hours"] * (unpriced.get("gpus") or 1)
    speed = _speed_ratio(priced, unpriced, True)          # > 1: the priced side is faster per card
    return {"basis": "priced_timed", "speed_x": round(max(speed, 1 / speed), 2) if speed else None,
            "faster": priced["name"] if speed and speed >= 1 else unpriced["name"],
            "break_even_card_hour": round(priced["job_cost"] / card_h, 2)}


def _by_cost(kb, v: dict[str, Any], priced: list[dict[str, Any]], serving: bool) -> dict[str, Any]:
    """Two priced plans: cost per job (a timed job) or per month (a service, or a job of unknown length)."""
    timed = all(s["job_cost"] is not None and s["hours"] for s in priced)
    key = "job_cost" if timed else "per_mtok" if serving and all(s.get("per_mtok") for s in priced) else "monthly"
    a, b = sorted(priced, key=lambda s: (s[key], s["name"]))[:2]          # a: the cheaper
    cost_gap = 1 - a[key] / b[key] if b[key] else 0.0
    speed = None if v.get("rental") else _speed_ratio(a, b, timed)          # > 1: a is faster (a rental: hours said)
    if speed is None and serving and "per_card" in (a.get("price_kind"), b.get("price_kind")):
        # a side priced by the card has no timed plan: decoding is bound by memory bandwidth, card for card
        ga, gb = kb.gpus.get(a["gpu"]), kb.gpus.get(b["gpu"])
        if ga and gb and ga.memory_bandwidth_gbs and gb.memory_bandwidth_gbs and ga.id != gb.id:
            speed = ga.memory_bandwidth_gbs / gb.memory_bandwidth_gbs
            v["speed_basis"] = "bandwidth"
    card_a, card_b = _per_card(a["hourly"], a), _per_card(b["hourly"], b)
    v.update(basis="job" if timed else "mtok" if key == "per_mtok" else "month", cost_key=key,
             cost_pct=round(100 * cost_gap),
             hourly_pct=round(100 * (card_a / card_b - 1)) if card_b else None,
             speed_x=round(speed, 2) if speed else None)
    if cost_gap <= COST_TIE:
        if speed and max(speed, 1 / speed) >= SPEED_MATTERS:
            fast, slow = (a, b) if speed > 1 else (b, a)
            v.update(preferred=fast["name"], other=slow["name"], shape="same_cost_faster",
                     speed_x=round(max(speed, 1 / speed), 2),
                     factor=_speed_factor(kb, fast, slow, serving, v.get("axis", "gpu")))
            return v
        if v.get("axis") == "precision" and PRECISION_RANK.get(a["name"]) != PRECISION_RANK.get(b["name"]):
            # the same cost and about the same speed: the precision that keeps more of the model's quality
            keep, lose = sorted((a, b), key=lambda s: -PRECISION_RANK.get(s["name"], 0))
            v.update(preferred=keep["name"], other=lose["name"], shape="tie_quality", factor="quality",
                     speed_x=round(max(speed, 1 / speed), 2) if speed else None, tie_names=[keep["name"], lose["name"]])
            return v
        v.update(tie=True, shape="tie", factor="price", other=b["name"], preferred=None, tie_names=[a["name"], b["name"]])
        return v
    faster = speed is not None and speed >= 1.0
    dearer = v["hourly_pct"] is not None and v["hourly_pct"] > 0
    shape = ("faster_dearer" if dearer else "faster_cheaper") if faster else "slower_cheaper"
    if speed is not None and max(speed, 1 / speed) < SAME_SPEED and not dearer:
        shape = "same_speed_cheaper"          # the same card at two clouds: the price per hour is all there is
    elif faster and v["hourly_pct"] == 0:
        shape = "faster_same_price"           # one card, two ways to run it: the speed is all there is
    if v.get("speed_basis") == "bandwidth" and faster:
        dearer = True          # the factor line names the bandwidth, the card-for-card speed it was judged on
    v.update(preferred=a["name"], other=b["name"], shape=shape,
             speed_x=round(speed if faster else 1 / speed, 2) if speed else None,
             hourly_pct=abs(v["hourly_pct"]) if v["hourly_pct"] is not None else None,
             factor=_speed_factor(kb, a, b, serving, v.get("axis", "gpu")) if faster and dearer else
             _speed_factor(kb, a, b, serving, v.get("axis", "gpu")) if faster and v.get("axis") in ("precision",
                                                                                                  "method") else
             "price")
    return v


def _per_card(value: float | None, s: dict[str, Any]) -> float | None:
    return value / max(1, s.get("gpus") or 1) if value is not None else None


def _speed_ratio(a: dict[str, Any], b: dict[str, Any], timed: bool) -> float | None:
    """How many times faster a card of a is than one of b: GPU-hours of the job (plans of 1 and 8 cards compare
    card for card), or time per output token of a service."""
    if timed and a["hours"] and b["hours"]:
        return (b["hours"] * (b.get("gpus") or 1)) / (a["hours"] * (a.get("gpus") or 1))
    if a.get("tps_card") and b.get("tps_card") and a.get("users") != b.get("users"):
        # times per token at different numbers of users do not compare: the tokens a second a card they serve do
        return a["tps_card"] / b["tps_card"]
    if a.get("tpot_ms") and b.get("tpot_ms"):
        return b["tpot_ms"] / a["tpot_ms"]
    return None


def _speed_factor(kb, fast: dict[str, Any], slow: dict[str, Any], serving: bool, axis: str = "gpu") -> str:
    """What makes the faster side faster: memory bandwidth for decoding, bf16 compute for training; on one card,
    the bytes a weight takes (precisions) or the work a step does (methods); the price alone across clouds."""
    if axis in ("precision", "method"):
        return axis
    if axis == "provider" and fast["gpu"] == slow["gpu"]:
        return "price"
    ga, gb = kb.gpus.get(fast["gpu"]), kb.gpus.get(slow["gpu"])
    if serving and ga and gb and ga.memory_bandwidth_gbs and gb.memory_bandwidth_gbs and \
            max(ga.memory_bandwidth_gbs, gb.memory_bandwidth_gbs) < 1.1 * min(ga.memory_bandwidth_gbs,
                                                                          gb.memory_bandwidth_gbs):
        return "compute"        # the same bandwidth (L4 and T4, 300 GB/s): the compute per card made the difference
    return "bandwidth" if serving else "compute"


def _cannot_factor(why: dict[str, Any]) -> str:
    return {"no_fp8": "fp8", "not_rented": "availability"}.get(why.get("kind"), "memory")


# the quality a precision or a method costs, as published (render key verdict.caveat.quality_<value>, sources)
QUALITY: dict[str, list[str]] = {
    "fp8": ["kurtic-quant-tradeoffs"], "int8": ["kurtic-quant-tradeoffs"], "int4": ["kurtic-quant-tradeoffs"],
    "nf4": ["qlora-paper"], "lora": ["lora-learns-less"], "qlora": ["qlora-paper", "lora-learns-less"],
}


def _axis_caveats(data: dict[str, Any]) -> list[dict[str, Any]]:
    """What a precision or a method costs in quality, once per value compared (a side that is not 16-bit or full)."""
    if data.get("axis") not in ("precision", "method"):
        return []
    out = []
    for x in data["side"]:
        value = x.get("value")
        if value in QUALITY:
            out.append({"kind": f"quality_{value}", "gpu": x.get("label") or value, "sources": QUALITY[value]})
    return out


def _caveats(kb, sides: list[dict[str, Any]], data: dict[str, Any], precision: str | None) -> list[dict[str, Any]]:
    """What else can decide it, per side: no FP8 when FP8 was asked, a GeForce card's datacenter licensing (no
    bf16 for training is said on the side's own line)."""
    out = []
    for s in sides:
        if s.get("price_kind") == "flagged":      # a catalog row flagged as a data problem decides nothing alone
            out.append({"kind": "flagged_price", "gpu": s.get("label") or s["gpu_name"]})
        g = kb.gpus.get(s["gpu"])
        if g is None:
            continue
        if precision == "fp8" and not g.fp8_tflops:
            out.append({"kind": "no_fp8", "gpu": s["gpu_name"]})
        if "consumer" in g.positioning:
            out.append({"kind": "licensing", "gpu": s["gpu_name"], "sources": ["gpu-nvidia-geforce-license"]})
        if data.get("training") and (s.get("gpus") or 1) > 1 and g.nvlink_capable is False and not g.nvlink_gbs:
            # several cards with no NVLink (GeForce Ada: no P2P either): every step's all-reduce crosses PCIe
            out.append({"kind": "pcie", "gpu": s["gpu_name"],
                        "sources": ["gpu-tweaktown-ada-no-nvlink"] if "consumer" in g.positioning else []})
    return [c for i, c in enumerate(out) if c not in out[:i]]      # two sides on one card: its caveat once


def factor_figures(kb, v: dict[str, Any]) -> dict[str, Any]:
    """The datasheet figures behind a speed factor, for the line that says what decided it."""
    by = {s["name"]: s for s in v["sides"]}
    pref = by.get(v.get("preferred") or "") or v["sides"][0]
    other = by.get(v.get("other") or "") or v["sides"][-1]
    ga, gb = kb.gpus[pref["gpu"]], kb.gpus[other["gpu"]]
    if v["factor"] == "bandwidth":
        return {"a": pref["gpu_name"], "b": other["gpu_name"], "fa": ga.memory_bandwidth_gbs, "fb": gb.memory_bandwidth_gbs}
    return {"a": pref["gpu_name"], "b": other["gpu_name"], "fa": ga.bf16_tflops or ga.fp16_tflops,
            "fb": gb.bf16_tflops or gb.fp16_tflops}


# ----- billing ---------------------------------------------------------------------------------------------------
def billing_verdict(usage: dict[str, Any] | None, hourly: float | None, currency: str | None,
                    spot_hourly: float | None, discounts: list[dict[str, Any]], spot: dict[str, Any] | None
                    ) -> dict[str, Any]:
    """Pay-per-use against a month's commitment at the user's hours, and spot's saving after restarts.

    A month's commitment at price M beats pay-per-use at h an hour for U hours of use in that month when M < h x U,
    i.e. when its discount off a full pay-per-use month (h x 730) exceeds 1 - U / 730: the break-even utilisation
    is U / 730, whatever the price. A month's package is paid whole, so a 3-week job still buys one month."""
    v: dict[str, Any] = {"kind": "billing", "hourly": hourly, "currency": currency, "discounts": discounts,
                         "spot": spot}
    if not usage or not usage.get("hours_month"):
        v.update(preferred=None, basis="no_hours")
        return v
    used = min(usage["hours_month"], HOURS_MONTH)
    share = used / HOURS_MONTH
    v.update(hours_month=round(used), utilisation_pct=round(100 * share), need_discount_pct=round(100 * (1 - share)),
             span_days=usage.get("span_days"), months=usage.get("months"))
    if hourly is not None:
        v["pay_per_use_month"] = round(hourly * used, 2)
        v["full_month"] = round(hourly * HOURS_MONTH, 2)
    best_published = max((d["pct"] for d in discounts), default=None)
    if share >= 0.95:
        v["preferred"] = "monthly"            # always on: any commitment discount wins
    elif best_published is not None and best_published > 100 * (1 - share):
        v["preferred"] = "monthly_if"         # a published discount would reach the break-even, if it applies
    elif share <= 0.5:
        v["preferred"] = "pay_per_use"        # a commitment would need over half off to pay back
    else:
        v["preferred"] = "monthly_if"
    return v


def peak_split(replicas: int, peak_x: float, hourly: float | None) -> dict[str, Any]:
    """A service sized for a peak `peak_x` times its average: the replicas that carry the average run all month (a
    monthly package wins for them, at 730 h), the rest only in busy hours (pay-per-use, or spot behind them)."""
    base = max(1, min(replicas, math.ceil(replicas / peak_x)))
    out: dict[str, Any] = {"preferred": "split", "split": {"base": base, "burst": replicas - base, "replicas": replicas,
                                                            "peak_x": round(peak_x, 2)}}
    if hourly is not None:
        out["split"]["base_month"] = round(hourly / replicas * base * HOURS_MONTH, 2)
    return out


def year_terms(usage: dict[str, Any], hourly: float | None) -> dict[str, Any]:
    """A year's commitment pays for all 8,760 h of the year: the hours the user needs in the year (a span said, else
    the monthly hours x 12), their share of the year, and the discount it would need to pay back."""
    span = usage.get("span_days")
    used = min(HOURS_YEAR, span * 24 if span else (usage.get("hours_month") or 0) * 12)
    share = used / HOURS_YEAR
    out = {"hours": round(used), "pct": round(100 * share), "need_pct": round(100 * (1 - share)),
           "answer": "no" if share < 0.5 else "yes_if" if share < 0.95 else "yes"}
    if hourly is not None:
        out["pay_per_use"] = round(hourly * used, 2)
        out["full_year"] = round(hourly * HOURS_YEAR, 2)
    return out


def spot_terms(checkpoint_gb: float, write_gbs: float, instances: int = 1) -> dict[str, Any]:
    """Young's checkpoint interval T = sqrt(2 C M) for a checkpoint of C hours and reclaims every M hours (assumed,
    no cloud publishes one), and the share of time lost: C/T writing + T/(2M) redone + R/M restarting."""
    c_h = checkpoint_gb / (write_gbs * max(1, instances)) / 3600
    m_h = RECLAIM_EVERY_H / math.sqrt(instances) if instances > 1 else RECLAIM_EVERY_H
    interval = math.sqrt(2 * c_h * m_h) if c_h > 0 else m_h / 10
    share = c_h / interval + interval / (2 * m_h) + RESTART_H / m_h
    return {"checkpoint_gb": round(checkpoint_gb, 1), "checkpoint_s": round(c_h * 3600), "mtbf_h": round(m_h, 1),
            "interval_min": max(1, round(interval * 60)), "overhead_pct": round(100 * share, 1),
            "restart_min": round(RESTART_H * 60)}


# ----- enough? how long? ---------------------------------------------------------------------------------------
def budget_verdict(pick: dict[str, Any] | None, slots: dict[str, Any]) -> dict[str, Any]:
    """'Is my budget enough?': yes or no with the plan's spend in the budget's currency, or what is missing."""
    v: dict[str, Any] = {"kind": "enough", "amount": slots.get("budget_amount"),
                         "currency": slots.get("budget_currency"), "period": slots.get("budget_period")}
    use = (pick or {}).get("budget")
    if use:
        v.update(answer="yes" if use["met"] else "no", spend=use["spend"], currency=use["currency"],
                 period=use["period"], pct=round(100 * use["spend"] / use["amount"]) if use["amount"] else None,
                 hours=(pick or {}).get("job_hours"), flavor=(pick or {}).get("flavor"),
                 instances=(pick or {}).get("instances"))
        return v
    if slots.get("budget_amount") is None:
        v.update(answer="unknown", missing="budget")
    elif pick is None:
        v.update(answer="unknown", missing="plan")
    elif (pick or {}).get("hourly_total") is None:
        v.update(answer="unknown", missing="price", flavor=pick.get("flavor"))
    else:
        v.update(answer="unknown", missing="work", hourly=pick.get("hourly_total"), currency_plan=pick.get("currency"))
    return v


def time_verdict(plan: dict[str, Any] | None, deadline_days: float | None, work_said: bool = False) -> dict[str, Any]:
    """'How long?': the plan's wall-clock time; against a deadline, whether it meets it and, if not, the fewest
    cards that could (linear in cards, so a floor: scaling out loses some speed to communication). With the work
    said and no time, what is missing is the card's speed on file, not the work (never ask for what was said)."""
    v: dict[str, Any] = {"kind": "how_long", "deadline_days": deadline_days}
    hours = (plan or {}).get("job_hours")
    if not plan or not hours:
        v.update(answer="unknown", missing=("speed" if work_said else "work") if plan else "plan",
                 gpu_name=(plan or {}).get("gpu_name"))
        return v
    cards = plan.get("gpus_total") or plan.get("cards") or 1
    v.update(hours=round(hours, 1), days=round(hours / 24, 1), cards=cards, gpu_name=plan.get("gpu_name"),
             yours=plan.get("label") == "yours")
    if plan.get("rent"):        # the count they mean to rent: what those hours cost on it
        v["rent"] = plan["rent"]
    if deadline_days:
        met = hours <= deadline_days * 24 * 1.0001
        v["answer"] = "yes" if met else "no"
        # by how much: the hours to spare, or the hours it misses by (what 'can it finish by Friday?' asks)
        v["spare_h" if met else "late_h"] = round(abs(deadline_days * 24 - hours), 1)
        if not met:
            v["cards_needed"] = math.ceil(cards * hours / (deadline_days * 24))
    else:
        v["answer"] = "estimate"
    return v


# ----- spot for a training job ----------------------------------------------------------------------------------
SPOT_WORTH = 0.15          # policy: spot is worth its restarts when it saves at least 15 % after the time they cost


def spot_verdict(rec: dict[str, Any] | None, share: float | None, interval_h: float | None, ckpt_gb: float | None,
                 span_hours: float | None = None, deadline_days: float | None = None) -> dict[str, Any]:
    """'Is spot a good idea for our 4-day fine-tune?': yes if it can resume, or no, with the numbers.

    The job's hours are the plan's (or, untimed, the length the user said); reclaims cost `share` more time
    (Young's interval, bot/plan/billing.spot_overhead). Spot wins when, after that time, it still saves SPOT_WORTH
    and a deadline (if any) still holds; a job whose length is unknown is judged per hour."""
    v: dict[str, Any] = {"kind": "spot", "deadline_days": deadline_days}
    n = max(1, (rec or {}).get("instances") or 1)
    v.update(mtbf_h=round(RECLAIM_EVERY_H / math.sqrt(n), 1), restart_min=round(RESTART_H * 60))
    if not rec or rec.get("price_per_hour") is None:
        v.update(answer="unknown", missing="price")
        return v
    v.update(flavor=rec.get("flavor"), instances=rec.get("instances") or 1, gpus=rec.get("gpus_total"),
             gpu_name=rec.get("gpu_name"), provider=rec.get("provider"), currency=rec.get("currency"))
    if rec.get("spot_price_per_hour") is None:
        v.update(answer="unknown", missing="spot_price")
        return v
    hours = rec.get("job_hours") or span_hours
    on_h, spot_h = rec["price_per_hour"], rec["spot_price_per_hour"]
    share = share or 0.0
    saving = 1 - spot_h * (1 + share) / on_h
    v.update(hours=round(hours, 1) if hours else None, hours_spot=round(hours * (1 + share), 1) if hours else None,
             overhead_pct=round(100 * share, 1), saving_pct=round(100 * saving), list_saving_pct=round(100 * (1 - spot_h / on_h)),
             interval_min=max(1, round((interval_h or 0) * 60)), checkpoint_gb=round(ckpt_gb or 0, 1),
             on_demand_cost=round(on_h * hours, 2) if hours else None,
             spot_cost=round(spot_h * hours * (1 + share), 2) if hours else None,
             on_demand_hourly=on_h, spot_hourly=spot_h, timed_by="plan" if rec.get("job_hours") else
             ("said" if span_hours else None))
    late = bool(deadline_days and hours and hours * (1 + share) > deadline_days * 24)
    if late:
        v.update(answer="no", why="deadline")
    elif saving < SPOT_WORTH:
        v.update(answer="no", why="saving")
    else:
        v.update(answer="yes_if")
    return v


def _faster_side(v: dict[str, Any], timed: list[dict[str, Any]], kb, serving: bool, axis: str) -> bool:
    """Sides timed for the job and not priced: the faster per card wins when it is clearly faster (card-hours for
    the job, SPEED_MATTERS); the verdict is filled in and True returned, else v is left alone."""
    a, b = sorted(timed, key=lambda s: (s["hours"] * (s.get("gpus") or 1), s["name"]))[:2]
    speed = (b["hours"] * (b.get("gpus") or 1)) / (a["hours"] * (a.get("gpus") or 1))
    if speed < SPEED_MATTERS:
        return False
    v.update(preferred=a["name"], other=b["name"], basis="time", speed_x=round(speed, 2),
             factor=_speed_factor(kb, a, b, serving, axis))
    return True


# ----- sub-questions a job question carries ('..., and how much a month?', '包月还是按需?') ------------------------
def cost_verdict(plan: dict[str, Any] | None, month_asked: bool = False) -> dict[str, Any]:
    """'How much will it cost?': the plan's own cost, per job (its hours x its price an hour for all its instances)
    for a timed job, else per month always on (x 730 h); a timed job asked per month and running past a month
    also says its cost per month of running."""
    v: dict[str, Any] = {"kind": "cost", "answer": "unknown"}
    if not plan:
        v["missing"] = "plan"
        return v
    hourly = plan.get("hourly_total")
    if hourly is None and plan.get("price_per_hour") is not None:
        hourly = plan["price_per_hour"] * (plan.get("instances") or 1) * max(1, plan.get("replicas") or 1)
    v.update(flavor=plan.get("flavor"), provider=plan.get("provider"), currency=plan.get("currency"),
             copies=(plan.get("instances") or 1) * max(1, plan.get("replicas") or 1), gpu_name=plan.get("gpu_name"))
    if hourly is None:
        v["missing"] = "price"
        return v
    hours = plan.get("job_hours")
    v.update(hourly=round(hourly, 2))
    if hours and plan.get("job_cost") is not None:
        v.update(answer="job", hours=round(hours, 1), amount=round(plan["job_cost"], 2))
        if month_asked and hours > HOURS_MONTH:
            v["monthly"] = round(hourly * HOURS_MONTH, 2)
        return v
    monthly = plan.get("monthly_cost") if plan.get("monthly_cost") is not None else hourly * HOURS_MONTH
    v.update(answer="month", hours=HOURS_MONTH, amount=round(monthly, 2))
    return v


def billing_mode_verdict(plan: dict[str, Any] | None, discounts: list[dict[str, Any]],
                         usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """'包月还是按需?' about the plan: a timed job uses its own hours (a month's package is paid whole), a service is
    on all month; the break-even is the same arithmetic as billing_verdict (a commitment pays back when its discount
    exceeds 1 - hours used / 730)."""
    if not plan or plan.get("price_per_hour") is None:
        return {"kind": "billing_mode", "preferred": None, "basis": "no_price", "flavor": (plan or {}).get("flavor")}
    hourly = plan.get("hourly_total") or plan["price_per_hour"] * (plan.get("instances") or 1)
    hours = plan.get("job_hours")
    if hours or not (usage or {}).get("hours_month"):
        # a timed job's own hours decide (a deadline said is not its use); an untimed one, the hours the user said
        # they use it ('10 hours a week'); else a service is on all month
        usage = {"hours_month": min(HOURS_MONTH, hours) if hours else HOURS_MONTH, "span_days": None, "months": None}
    v = billing_verdict(usage, hourly, plan.get("currency"), plan.get("spot_price_per_hour"), discounts, None)
    v.update(kind="billing_mode", flavor=plan.get("flavor"), timed=bool(hours), hours_from=usage.get("from") or (
             "said" if usage.get("span_days") is not None or usage.get("months") is not None else None),
             job_hours=round(hours, 1) if hours else None,
             best_discount_pct=max((d["pct"] for d in discounts), default=None))
    return v


def fits_verdict(plan: dict[str, Any] | None) -> dict[str, Any]:
    """'Will it fit?': the plan's memory a card against its card's memory, with the room left."""
    if not plan or not plan.get("per_gpu_gib") or not plan.get("gpu_memory_gib"):
        return {"kind": "fits", "answer": "unknown"}
    need, have = plan["per_gpu_gib"], plan["gpu_memory_gib"]
    return {"kind": "fits", "answer": "yes" if need <= have else "no", "need_gib": round(need, 1),
            "memory_gib": round(have, 1), "headroom_pct": round(100 * (1 - need / have)),
            "gpu_name": plan.get("gpu_name"), "cards": plan.get("gpus_total") or 1}


def memory_verdict(one_gib: float, one_terms: dict[str, float], card: dict[str, Any] | None,
                   plans: list[dict[str, Any]], headroom: float) -> dict[str, Any]:
    """'How much VRAM / 显存够不够 / why OOM': the whole job on one card as stated, term by term, against the memory
    of the card the answer is about (the user's or the pick's), then each plan's own GiB a card (the card asked
    about, then the rental when that one does not hold it), its terms when they are known, against its card: each
    total with the terms it is the sum of, and fits exactly when the total is within the card's usable memory (all
    but `headroom` of it, bot/plan/candidates.MIN_HEADROOM)."""
    v: dict[str, Any] = {"kind": "memory", "one_copy_gib": round(one_gib, 1),
                         "breakdown": {k: round(x, 2) for k, x in one_terms.items()}, "plans": []}
    if card and card.get("memory_gib"):
        mem = float(card["memory_gib"])
        v["card"] = {"gpu_name": card.get("gpu_name") or "", "memory_gib": mem,
                     "usable_gib": round(mem * (1 - headroom), 1), "fits": one_gib <= mem * (1 - headroom)}
    for plan in plans:
        if plan.get("per_gpu_gib") is None or not plan.get("memory_gib"):
            continue
        mem = float(plan["memory_gib"])
        terms = plan.get("breakdown")
        v["plans"].append({
            "per_gpu_gib": round(plan["per_gpu_gib"], 1), "cards": int(plan.get("cards") or 1),
            "gpu_name": plan.get("gpu_name") or "", "memory_gib": mem, "usable_gib": round(mem * (1 - headroom), 1),
            "breakdown": {k: round(x, 2) for k, x in terms.items()} if terms else None,
            "fits": plan["per_gpu_gib"] <= mem * (1 - headroom) + 0.05, "side": plan.get("side") or "pick"})
    return v


def memory_problems(v: dict[str, Any]) -> list[str]:
    """A memory answer's totals are the sums of the terms it gives (within rounding: 0.05 GiB a term said), and its
    fits / does-not-fit agrees with each total against its card's usable memory."""
    out: list[str] = []

    def said(terms: dict[str, float]) -> list[float]:
        return [round(x, 1) for x in terms.values() if x >= 0.05]
    totals = [("one copy", v.get("one_copy_gib"), v.get("breakdown"))] + [
        (f"plan {p.get('side')}", p.get("per_gpu_gib"), p.get("breakdown")) for p in v.get("plans") or []]
    for name, total, terms in totals:
        if total is not None and terms:
            parts = said(terms)
            if abs(sum(parts) - total) > 0.05 * len(parts) + 0.1:
                out.append(f"memory {name}: terms sum to {sum(parts):.1f} GiB, the total said is {total:.1f}")
    card = v.get("card") or {}
    if card and (v["one_copy_gib"] <= card["usable_gib"] + 0.05) != card["fits"]:
        out.append(f"memory: {v['one_copy_gib']} GiB against {card['usable_gib']} usable says fits={card['fits']}")
    for p in v.get("plans") or []:
        if (p["per_gpu_gib"] <= p["usable_gib"] + 0.1) != p["fits"]:
            out.append(f"memory: plan {p['per_gpu_gib']} GiB a card against {p['usable_gib']} usable says "
                       f"fits={p['fits']}")
    return out
