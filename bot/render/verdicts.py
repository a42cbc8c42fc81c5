"""A verdict (bot/plan/verdicts.py) as the lines an answer starts with, in the reply's language.

The first line is the decision ("L4: 1.6x faster for 7 % more per hour, so 33 % cheaper per job", "Yes: about 230 CNY
of your 2,000"); the second, where there is one, what decided it. Slack blocks and the short form read the same
verdict data; this module only words it.
"""
from __future__ import annotations

from typing import Any

from bot.render.own import days_text, hours_text, money_text
from bot.render.templates import Templates


def _name(v: dict[str, Any], name: str | None) -> str:
    return next((s.get("label") or s["gpu_name"] for s in v.get("sides", []) if s["name"] == name), name or "")


def cannot_text(t: Templates, why: dict[str, Any], lang: str) -> str:
    """Why one side of a comparison cannot do the job, with its number: memory, no FP8, not rented there."""
    kind = why.get("kind") or "memory"
    if kind == "memory" and not why.get("need_gib"):
        kind = "none"
    if kind == "memory" and (why.get("count") or 1) > 1:
        kind = "memory_on"
    return t.say(f"verdict.cannot.{kind}", lang, gpu=why.get("gpu") or "", need=f"{why.get('need_gib') or 0:,.1f}",
                 count=why.get("count") or 1,
                 mem=f"{why.get('memory_gib') or 0:g}", provider=why.get("provider_name") or why.get("provider") or "")


def _money(value: float | None, ccy: str | None) -> str:
    return f"{money_text(value)} {ccy}" if value is not None else "?"


def compare_lines(t: Templates, v: dict[str, Any], lang: str, figures: dict[str, Any] | None = None,
                  cite=None) -> list[str]:
    """The verdict of a comparison and the factor that decided it, then its caveats (bf16, FP8, licensing)."""
    best, other = _name(v, v.get("preferred")), _name(v, v.get("other"))
    basis = v.get("basis")
    if basis in ("job", "month", "mtok"):
        by = {s["name"]: s for s in v["sides"]}
        key = v["cost_key"]
        if v.get("tie") or v.get("shape") == "tie_quality":
            a, b = (by[n] for n in v["tie_names"])
        else:
            a, b = by[v["preferred"]], by[v["other"]]
        shape = v["shape"] if v.get("speed_x") or v["shape"] in ("tie", "tie_quality") else "cheaper"
        if shape in ("faster_cheaper", "slower_cheaper", "faster_dearer", "same_speed_cheaper",
                     "faster_same_price") and \
                v.get("hourly_pct") is None:
            shape = "cheaper"
        elif shape in ("slower_cheaper", "faster_cheaper") and f"{v.get('speed_x') or 1:.1f}" == "1.0":
            shape = "same_speed_cheaper"      # '1.0x slower' says nothing: the same speed, as said
        first = t.say(f"verdict.compare.{shape}", lang, best=best, other=other, speed=f"{v.get('speed_x') or 1:.1f}",
                      hourly_pct=v.get("hourly_pct"), cost_pct=v.get("cost_pct"), per=t.say(f"verdict.per.{basis}", lang),
                      cost=_cost_time(t, a, key, v["currency"], lang),
                      other_cost=_cost_time(t, b, key, v["currency"], lang))
    elif basis == "cards":
        why = v.get("factor")
        key = "verdict.compare.cards_" + why if why in ("bandwidth", "compute") else "verdict.compare.cards"
        first = t.say(key, lang, best=best)
        counts = _cards_said(t, v, lang)
        if counts:          # each side's count, the numbers the verdict rests on
            first = first.rstrip(".。") + t.say("verdict.compare.counts", lang, counts=counts)
    elif basis == "priced_timed":
        first = _priced_timed_line(t, v, lang, best, other)
    elif basis == "cannot":
        by = {s["name"]: s for s in v["sides"]}
        a = by[v["preferred"]]
        cost = a["job_cost"] if a.get("job_cost") is not None else a.get("monthly")
        per = "job" if a.get("job_cost") is not None else "month"
        key = "verdict.compare.cannot" if cost is not None else "verdict.compare.cannot_unpriced"
        first = t.say(key, lang, best=best, other=other, why=cannot_text(t, v["why_not"], lang),
                      cost=_money(cost, v["currency"]), per=t.say(f"verdict.per.{per}", lang),
                      need=f"{a.get('need_gib') or 0:,.1f}", mem=f"{a.get('memory_gib') or 0:g}")
    elif basis == "flagged":
        by = {s["name"]: s for s in v["sides"]}
        a, b = by[v["preferred"]], by[v["other"]]
        key = v["cost_key"]
        first = t.say("verdict.compare.flagged", lang, best=best, other=other, cost=_money(a[key], v["currency"]),
                      other_cost=_money(b[key], v["currency"]), per=t.say(f"verdict.per.{'job' if key == 'job_cost' else 'month'}", lang))
    elif basis in ("flagged_listed", "flagged_dearer"):
        by = {s["name"]: s for s in v["sides"]}
        flagged, sound = (by[v["preferred"]], by[v["other"]]) if basis == "flagged_listed" else \
            (by[v["other"]], by[v["preferred"]])
        key = v["cost_key"]
        first = t.say(f"verdict.compare.{basis}", lang, best=best, other=other,
                      lo=_money(v["span"][0], v["currency"]), hi=_money(v["span"][1], v["currency"]),
                      cost=_money(sound[key], v["currency"]), flagged=flagged.get("label") or flagged["gpu_name"],
                      cards=flagged.get("gpus") or 1, other_cards=sound.get("gpus") or 1,
                      per=t.say(f"verdict.per.{'job' if key == 'job_cost' else 'month'}", lang))
    elif basis == "both_fit":
        by = {s["name"]: s for s in v["sides"]}
        a, b = by[v["preferred"]], by[v["other"]]
        first = t.say("verdict.compare.both_fit", lang, best=best, other=other, need=f"{a.get('need_gib') or 0:,.1f}",
                      other_need=f"{b.get('need_gib') or 0:,.1f}", mem=f"{a.get('memory_gib') or 0:g}")
    elif basis == "time":
        by = {s["name"]: s for s in v["sides"]}
        a, b = by[v["preferred"]], by[v["other"]]
        rented = any(x.get("flavor") for x in (a, b))       # plans on offer with no public price, not your cards
        first = t.say("verdict.compare.time" + ("_rented" if rented else ""), lang, best=best, other=other,
                      speed=f"{v['speed_x']:.1f}", cards=a.get("gpus") or 1, other_cards=b.get("gpus") or 1,
                      time=t.say("verdict.hours", lang, h=hours_text(a["hours"])),
                      other_time=t.say("verdict.hours", lang, h=hours_text(b["hours"])))
    elif basis in ("fit", "priced"):
        first = t.say(f"verdict.compare.{basis}", lang, best=best, other=other)
        by = {s["name"]: s for s in v["sides"]}
        a, b = by.get(v.get("preferred")), by.get(v.get("other"))
        said = _side_said(t, a, v.get("currency"), lang) if a else ""
        if said:            # the preferred side's own numbers (time, cards, cost), and the other's where it has any
            first = t.say("verdict.compare.with_numbers", lang, best=best, numbers=said,
                          rest=first.split(": ", 1)[-1].split("：", 1)[-1].rstrip(".。"),
                          other=(t.say("verdict.compare.other_numbers", lang, other=other,
                                       numbers=_side_said(t, b, None, lang)) if b and _side_said(t, b, None, lang)
                                 else ""))
    else:
        first = t.say("verdict.compare.none", lang)
        why = [t.say("verdict.side_named", lang, gpu=s.get("label") or s["gpu_name"],
                     what=cannot_text(t, s["why_not"], lang)) if s.get("why_not") and s["why_not"].get("need_gib") else
               t.say("verdict.compare.none_side", lang, gpu=s.get("label") or s["gpu_name"],
                     need=f"{s['need_gib']:,.1f}", mem=f"{s['memory_gib']:g}")
               for s in v.get("sides", []) if (s.get("why_not") or {}).get("need_gib") or
               (s.get("need_gib") and s.get("memory_gib"))]
        if why:             # what each side would need a card against what it has
            first = first.rstrip(".。") + t.say("verdict.compare.counts", lang, counts=t.say("list.sep", lang).join(why))
    lines = [first]
    factor = v.get("factor")
    if basis in ("job", "month", "mtok", "time") and factor in ("bandwidth", "compute") and figures:
        key = "compute_serving" if factor == "compute" and v.get("serving") else factor
        lines.append(t.say(f"verdict.factor.{key}", lang, **{k: _fig(x) for k, x in figures.items()}))
    elif basis in ("job", "month", "mtok", "cannot", "both_fit", "time", "flagged", "flagged_listed",
                   "flagged_dearer") and factor and \
            not (factor in ("bandwidth", "compute") and not figures):      # those lines need their datasheet figures
        lines.append(t.say(f"verdict.factor.{factor}", lang))
    elif basis in ("priced", "priced_timed"):
        lines.append(t.say("verdict.factor.priced", lang, other=other))
        if basis == "priced_timed" and figures and figures.get("fa") and figures.get("fb") and \
                v.get("faster") == v.get("other"):
            lines.append(t.say("verdict.factor.unpriced_faster", lang, **{k: _fig(x) for k, x in figures.items()}))
    served = [x for x in v.get("sides", []) if x.get("tps_card")]
    if len(served) >= 2 and v.get("serving"):
        # what 'which has more throughput?' asks: output tokens a second a card, at the users each serves
        lines.append(t.say("verdict.throughput", lang, sides=t.say("list.sep", lang).join(
            t.say("verdict.throughput_side", lang, name=x.get("label") or x["gpu_name"], tps=f"{x['tps_card']:,.0f}",
                  users=x["users"], tpot=f"{x['tpot_ms']:.0f}")
            for x in sorted(served, key=lambda x: -x["tps_card"]))))
    for c in v.get("caveats", []):
        line = "  " + t.say(f"verdict.caveat.{c['kind']}", lang, gpu=c["gpu"])
        if line in lines:
            continue
        lines.append(cite.after(line, c["sources"]) if cite and c.get("sources") else line)
    return lines


def _cost_time(t: Templates, s: dict[str, Any], key: str, ccy: str | None, lang: str) -> str:
    """A side's cost as compared, with its time for the job when the cost is per job ('923 USD in 24 h')."""
    cost = _money(s[key], ccy)
    if key == "job_cost" and s.get("hours"):
        return t.say("verdict.cost_time", lang, cost=cost, h=hours_text(s["hours"]))
    return cost


def _side_said(t: Templates, s: dict[str, Any] | None, ccy: str | None, lang: str) -> str:
    """One side's plan in numbers for a verdict that does not rest on costs: its time on its cards, and its cost per
    job (or month) where it is priced ('24 h on 8 cards, about 923 USD'); '' when it has none."""
    if not s:
        return ""
    parts = []
    if s.get("hours") and s.get("gpus"):
        parts.append(t.say("verdict.side_time", lang, h=hours_text(s["hours"]), n=s["gpus"]))
    elif s.get("gpus") or s.get("cards"):
        parts.append(t.say("verdict.side_cards", lang, n=s.get("gpus") or s.get("cards")))
    if ccy and s.get("job_cost") is not None:
        parts.append(t.say("verdict.side_cost", lang, cost=_money(s["job_cost"], ccy), per=t.say("verdict.per.job", lang)))
    elif ccy and s.get("monthly") is not None:
        parts.append(t.say("verdict.side_cost", lang, cost=_money(s["monthly"], ccy), per=t.say("verdict.per.month", lang)))
    return t.say("list.sep", lang).join(parts)


def _cards_said(t: Templates, v: dict[str, Any], lang: str) -> str:
    return t.say("list.sep", lang).join(
        t.say("verdict.side_named", lang, gpu=s.get("label") or s["gpu_name"], what=_side_said(t, s, None, lang))
        for s in v.get("sides", []) if _side_said(t, s, None, lang))


def _priced_timed_line(t: Templates, v: dict[str, Any], lang: str, best: str, other: str) -> str:
    """'H100: 756 h on 64 cards for about 186,301 USD; Ascend 910B: 1,748 h on 64 cards (2.3x slower per card), no
    public price: cheaper per job only below 1.67 USD a card-hour.' Both sides timed for the same work."""
    by = {s["name"]: s for s in v["sides"]}
    a, b = by[v["preferred"]], by[v["other"]]
    pace = "slower" if v.get("faster") == a["name"] else "faster"
    return t.say("verdict.compare.priced_timed", lang, best=best, other=other, cards=a.get("gpus") or 1,
                 time=t.say("verdict.hours", lang, h=hours_text(a["hours"])), cost=_money(a["job_cost"], v["currency"]),
                 other_time=t.say("verdict.hours", lang, h=hours_text(b["hours"])), other_cards=b.get("gpus") or 1,
                 days=days_text(a['hours']), other_days=days_text(b['hours']),
                 speed=f"{v.get('speed_x') or 1:.1f}", pace=t.say(f"verdict.pace.{pace}", lang),
                 break_even=_money(v["break_even_card_hour"], v["currency"]))


def _fig(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:,.0f}" if x >= 100 else f"{x:g}"
    return "?" if x is None else str(x)


def budget_line(t: Templates, v: dict[str, Any], lang: str) -> str:
    """'Yes: about 230 CNY of your 2,000 (12 %), 19 h on ...' / 'No: ...' / what the verdict needs."""
    if v["answer"] in ("yes", "no"):
        return t.say(f"verdict.enough.{v['answer']}", lang, spend=money_text(v["spend"]), ccy=v["currency"],
                     amount=money_text(v["amount"]), pct=v.get("pct"),
                     period=t.say(f"verdict.period.{v['period']}", lang),
                     hours=t.say("verdict.enough.hours", lang, h=hours_text(v["hours"])) if v.get("hours") else "")
    return t.say(f"verdict.enough.missing_{v['missing']}", lang, amount=money_text(v.get("amount") or 0),
                 ccy=v.get("currency") or "")


def time_line(t: Templates, v: dict[str, Any], lang: str) -> str:
    """'About 3.7 days (89 h) on 64 x H100' / 'No: 64 H100 need about 19 days; 30 days needs at least 42'."""
    if v["answer"] == "unknown":
        return t.say(f"verdict.how_long.missing_{v['missing']}", lang, gpu=v.get("gpu_name") or "")
    ctx = dict(hours=t.say("verdict.hours", lang, h=hours_text(v["hours"])), days=f"{v['days']:g}", cards=v["cards"], gpu=v.get("gpu_name") or "",
               deadline=f"{v['deadline_days']:g}" if v.get("deadline_days") else "", need=v.get("cards_needed"),
               spare=span_text(t, v.get("spare_h"), lang), late=span_text(t, v.get("late_h"), lang))
    # a job under a day is said in hours alone: '0.80 h (0 days)' reads as a contradiction
    short = "_hours" if v["answer"] in ("estimate", "yes") and v["hours"] < 24 else ""
    line = t.say(f"verdict.how_long.{v['answer']}{short}", lang, **ctx)
    if v.get("rent"):           # renting that count: the cost of those hours, in the same line
        line = line.rstrip(".。") + t.say("verdict.how_long.rented", lang, cost=_money(v["rent"]["cost"],
                                                                                    v["rent"]["currency"]))
    return line


def span_text(t: Templates, hours: float | None, lang: str) -> str:
    """A margin against a deadline: hours under two days ('7.5 h'), else days ('3.2 days')."""
    if hours is None:
        return ""
    if hours < 48:
        return t.say("verdict.hours", lang, h=hours_text(hours))
    return t.say("verdict.days", lang, d=f"{round(hours / 24, 1):,g}")


def asked_line(t: Templates, v: dict[str, Any], lang: str) -> str | None:
    """The one line a sub-question of a job question gets (bot/conversation/sub_questions.py): its cost, monthly
    or pay-per-use, the deadline met or missed and by how much, whether it fits; None where nothing can be said."""
    k = v["kind"]
    if k == "cost":
        if v["answer"] == "unknown":
            return t.say(f"verdict.asked.cost_missing_{v['missing']}", lang, flavor=v.get("flavor") or "")
        ccy = v.get("currency")
        ctx = dict(amount=_money(v["amount"], ccy), hourly=_money(v["hourly"], ccy), copies=v.get("copies") or 1,
                   flavor=v.get("flavor") or "", hours=t.say("verdict.hours", lang, h=hours_text(v["hours"])),
                   monthly=_money(v.get("monthly"), ccy))
        key = "cost_month" if v["answer"] == "month" else "cost_job_month" if v.get("monthly") else "cost_job"
        return t.say(f"verdict.asked.{key}", lang, **ctx)
    if k == "billing_mode":
        if not v.get("preferred"):
            return t.say("verdict.asked.billing_no_price", lang, flavor=v.get("flavor") or "")
        ccy = v.get("currency")
        key = {"pay_per_use": "billing_pay_per_use", "monthly": "billing_monthly"}.get(v["preferred"],
                                                                                         "billing_monthly_if")
        return t.say(f"verdict.asked.{key}", lang, hours=f"{v['hours_month']:,}", pct=v["utilisation_pct"],
                     need=v["need_discount_pct"], full=_money(v.get("full_month"), ccy),
                     ppu=_money(v.get("pay_per_use_month"), ccy))
    if k == "how_long":
        if v["answer"] == "unknown":
            return t.say("verdict.asked.deadline_unknown", lang)
        ctx = dict(hours=t.say("verdict.hours", lang, h=hours_text(v["hours"])) if v["hours"] < 48 else
                   t.say("verdict.days", lang, d=days_text(v["hours"])),
                   deadline=span_text(t, (v.get("deadline_days") or 0) * 24, lang),
                   cards=v["cards"], gpu=v.get("gpu_name") or "", need=v.get("cards_needed"),
                   spare=span_text(t, v.get("spare_h"), lang), late=span_text(t, v.get("late_h"), lang))
        key = {"yes": "deadline_yes", "no": "deadline_no"}.get(v["answer"], "deadline_estimate")
        return t.say(f"verdict.asked.{key}", lang, **ctx)
    if k == "spot_service":
        key = "verdict.billing.spot_service" if v.get("saving") is not None else "verdict.billing.spot_service_none"
        return t.say(key, lang, saving=v.get("saving"), spot=money_text(v.get("spot_h") or 0), od=money_text(v["od_h"]),
                     ccy=v.get("currency") or "", flavor=v.get("flavor") or "", provider=v.get("provider_name") or "")
    if k == "fits":
        if v["answer"] == "unknown":
            return None
        return t.say(f"verdict.asked.fits_{v['answer']}", lang, need=f"{v['need_gib']:g}", mem=f"{v['memory_gib']:g}",
                     gpu=v.get("gpu_name") or "", headroom=v.get("headroom_pct"))
    return None


# ----- explain a flavor --------------------------------------------------------------------------------------------
def flavor_first_line(t: Templates, group: list[dict[str, Any]], provider_name: str, lang: str) -> str:
    """The card first: 'p2s (Huawei Cloud): NVIDIA Tesla V100 32GB, 32 GiB, 1 to 8 per instance.'"""
    f = group[0]
    counts = sorted({x["gpu_count"] for x in group})
    count = f"{counts[0]}" if len(counts) == 1 else t.say("explain.count_range", lang, lo=counts[0], hi=counts[-1])
    name = f["flavor"] if len(group) == 1 else f["family"]
    return t.say("explain.flavor_card", lang, name=name, provider=provider_name, gpu=f["gpu_name"],
                 mem=f"{f['gpu_memory_gib']:g}", count=count)


def flavor_line(t: Templates, f: dict[str, Any], lang: str) -> str:
    """One flavor's card, count, memory, CPU and RAM, interconnect, network, price and what it is for."""
    link = t.say(f"explain.link.{f['interconnect'] or 'unknown'}", lang) if f["gpu_count"] > 1 else \
        t.say("explain.link.single", lang)
    rdma = t.say("explain.rdma." + ("yes" if f["rdma"] else "no" if f["rdma"] is False else "unknown"), lang)
    p = f["price"]
    price = t.say("explain.price" if p and p["date"] else "explain.price_undated", lang,
                  price=f"{p['per_hour']:.2f}", ccy=p["currency"], date=p["date"],
                  kind=t.say(f"price.{p['kind']}", lang) if f"price.{p['kind']}" in t.table else p["kind"]
                  ) if p else t.say("label.no_price", lang)
    use = t.say("list.sep", lang).join(t.say(f"explain.use.{u}", lang) for u in f["use"]) or \
        t.say("explain.use_unknown", lang)
    # a figure not on file is said as such, never as '?' (the consistency check's placeholder)
    ram = f"{f['memory_gib']:g}" if f["memory_gib"] else None
    host = t.say("explain.host" if f["vcpus"] and ram else "explain.host_vcpus" if f["vcpus"] else
                 "explain.host_ram" if ram else "explain.host_unknown", lang, vcpus=f["vcpus"], ram=ram)
    return t.say("explain.flavor", lang, flavor=f["flavor"], count=f["gpu_count"], gpu=f["gpu_name"],
                 mem=f"{f['gpu_memory_gib']:g}", host=host, link=link,
                 network=f["network"] or t.say("explain.network_unknown", lang), rdma=rdma, price=price, use=use)


# ----- billing -----------------------------------------------------------------------------------------------------
def billing_lines(t: Templates, v: dict[str, Any], lang: str, provider_name: str) -> list[str]:
    """The break-even verdict first, then the money at the user's hours, published discounts, spot, capacity."""
    pub = [d for d in v.get("discounts", []) if not d["spot"]]
    published = t.say("verdict.billing.published", lang, provider=provider_name,
                      offers="; ".join(f"{d['mode']}: {d['text']}" for d in pub)) if pub else \
        t.say("verdict.billing.unpublished", lang, provider=provider_name)
    if v.get("basis") == "no_hours":
        lines = [t.say("verdict.billing.no_hours", lang), published]
    elif v.get("preferred") == "split":
        sp = v["split"]
        lines = [t.say("verdict.billing.split", lang, base=sp["base"], burst=sp["burst"], replicas=sp["replicas"],
                       x=f"{sp['peak_x']:g}", month=money_text(sp.get("base_month") or 0), ccy=v.get("currency") or ""),
                 published]
    else:
        lines = [t.say(f"verdict.billing.{v['preferred']}", lang, hours=f"{v['hours_month']:,}",
                       util=v["utilisation_pct"], need=v["need_discount_pct"]), published]
        if v.get("pay_per_use_month") is not None:
            lines.append(t.say("verdict.billing.money", lang, ppu=money_text(v["pay_per_use_month"]),
                               full=money_text(v["full_month"]), ccy=v["currency"], flavor=v.get("flavor") or "",
                               hours=f"{v['hours_month']:,}"))
    if v.get("hours_from") and len(lines) > 1:
        lines.insert(1, t.say(f"verdict.billing.hours_from.{v['hours_from']}", lang, flavor=v.get("flavor") or "",
                              hours=f"{v['hours_month']:,}"))
    y = v.get("year")
    if y:
        lines.insert(1, t.say(f"verdict.billing.year_{y['answer']}", lang, hours=f"{y['hours']:,}", pct=y["pct"],
                              need=y["need_pct"], ppu=money_text(y.get("pay_per_use") or 0),
                              full=money_text(y.get("full_year") or 0), ccy=v.get("currency") or ""))
    ss = v.get("spot_service")
    if ss:
        key = "verdict.billing.spot_service" if ss.get("saving") is not None else "verdict.billing.spot_service_none"
        line = t.say(key, lang, saving=ss.get("saving"), spot=money_text(ss.get("spot_h") or 0),
                     od=money_text(ss["od_h"]), ccy=v.get("currency") or "", flavor=v.get("flavor") or "",
                     provider=provider_name)
        if ss.get("asked"):
            lines.insert(0, line)       # 'is spot ok for that?': its answer first
        else:
            lines.append(line)
    s = v.get("spot")
    if s:
        spot = [t.say("verdict.billing.spot", lang, **{k: (f"{x:g}" if isinstance(x, float) else x)
                                                         for k, x in s.items()})]
        if s.get("od_cost") is not None:
            spot.append(t.say("verdict.billing.spot_money", lang, hours=f"{s['hours']:,}", flavor=v.get("flavor") or "",
                              od=money_text(s["od_cost"]), spot=money_text(s["spot_cost"]), ccy=v.get("currency") or "",
                              net=s["net"]))
        if s.get("asked"):
            lines[0:0] = spot        # 'how much does spot save?': its answer first
        else:
            lines += spot
    if v.get("reserve"):
        lines.append(t.say("verdict.billing.reserve", lang, gpus=v["reserve"]["gpus"], days=v["reserve"]["days"]))
    return lines


# ----- inverse sizing: the biggest model or most tokens a limit trains -------------------------------------------
def inverse_lines(t: Templates, v: dict[str, Any], lang: str) -> list[str]:
    """'About 9.9B parameters on 198B tokens (Chinchilla-optimal ...): 8 x H100 for 63 days, about 47,981 USD; the
    budget is the limit.', then how it was reached (C = 6 N D, N = sqrt(C / 120))."""
    if v.get("answer") != "estimate":
        return [t.say(f"verdict.inverse.missing_{v.get('missing', 'limit')}", lang)]
    cost = v.get("spend") if v.get("spend") is not None else v.get("job_cost")
    ccy = v.get("currency") if v.get("spend") is not None else v.get("plan_currency")
    bound = t.say(f"verdict.inverse.bound_{v['bound']}", lang, amount=money_text(v.get("budget") or 0),
                  ccy=v.get("budget_currency") or "", deadline=f"{v.get('deadline_days') or 0:g}", gpus=v.get("gpus"))
    first = t.say(f"verdict.inverse.{v['kind']}", lang, params=f"{v['params_b']:g}", tokens=f"{v['tokens'] / 1e9:,.0f}",
                  ratio=f"{v['ratio']:g}", gpus=v.get("gpus") or "?", gpu=v.get("gpu_name") or "?",
                  days=days_text(v.get('hours') or 0), cost=_money(cost, ccy), bound=bound)
    how = t.say("verdict.inverse.how" if v["kind"] == "biggest_model" else "verdict.inverse.how_tokens", lang, flops=f"{v['flops']:.2e}", mfu=f"{100 * (v.get('mfu') or 0):.0f}",
                ratio=f"{v['ratio']:g}")
    m = v.get("margin")
    if not m:
        return [first, how]
    # sized to the edge of the limit (rules/critic.yaml headroom): said as tight, with the size that keeps the margin
    m_cost = m.get("spend") if m.get("spend") is not None else m.get("job_cost")
    m_ccy = m.get("currency") if m.get("spend") is not None else m.get("plan_currency")
    margin = t.say(f"verdict.inverse.margin_{v['kind']}", lang, used=f"{v['used']:.0%}",
                   limit=t.say(f"verdict.inverse.limit_{v['bound']}", lang), share=f"{m['share']:.0%}",
                   m_used=f"{(m.get('used') or 0):.0%}", params=f"{m['params_b']:g}",
                   tokens=f"{m['tokens'] / 1e9:,.0f}", gpus=m.get("gpus") or "?", gpu=m.get("gpu_name") or "?",
                   days=days_text(m.get("hours") or 0), cost=_money(m_cost, m_ccy))
    return [first, margin, how]


# ----- spot for a training job -------------------------------------------------------------------------------------
def spot_lines(t: Templates, v: dict[str, Any], lang: str, provider: str, reclaim: str | None) -> list[str]:
    """The spot verdict first ('Yes, if it resumes by itself: ...' / 'No: ...'), then the interruption terms and what
    running on spot takes (the checkpoint interval, automatic resume, capacity not guaranteed)."""
    if v["answer"] == "unknown":
        return [t.say(f"verdict.spot.missing_{v['missing']}", lang, flavor=v.get("flavor") or "", provider=provider)]
    hours = t.say("verdict.hours", lang, h=hours_text(v["hours"])) if v.get("hours") else None
    ctx = dict(flavor=(f"{v['instances']} x " if v["instances"] > 1 else "") + (v["flavor"] or ""),
               provider=provider, saving=v["saving_pct"], list_saving=v["list_saving_pct"],
               overhead=f"{v['overhead_pct']:g}", interval=v["interval_min"], ckpt=f"{v['checkpoint_gb']:g}",
               mtbf=f"{v['mtbf_h']:g}", restart=v["restart_min"], hours=hours or "?",
               spot_cost=_money(v.get("spot_cost"), v["currency"]), od_cost=_money(v.get("on_demand_cost"), v["currency"]),
               spot_h=_money(v["spot_hourly"], v["currency"]), od_h=_money(v["on_demand_hourly"], v["currency"]),
               deadline=f"{v.get('deadline_days') or 0:g}", hours_spot=hours_text(v.get("hours_spot") or 0))
    key = v["answer"] if v["answer"] == "yes_if" else f"no_{v['why']}"
    first = t.say(f"verdict.spot.{key}" + ("" if hours else "_hourly"), lang, **ctx)
    lines = [first, t.say("verdict.spot.how_batch" if v.get("batch") else "verdict.spot.how", lang, **ctx)]
    if v["instances"] > 1 and not v.get("batch"):     # a batch job's replicas are reclaimed and resume apart
        lines.append(t.say("verdict.spot.all_at_once", lang, n=v["instances"], flavor=v["flavor"]))
    if reclaim:
        lines.append(f"{provider}: {reclaim}")
    return lines


# ----- 'not enough': the priced ways to fit the budget ----------------------------------------------------------
def path_line(t: Templates, p: dict[str, Any], lang: str, kb) -> str:
    """One way to fit the budget, with its number: '- 6.2B tokens instead of 20B (31 % of the data): about 99,000
    CNY, 16 x H100 for 9.5 days' / '- LoRA instead of full fine-tuning: about ... (still over)'."""
    fit = t.say("verdict.paths.fits" if p.get("fits") else "verdict.paths.over", lang)
    spend = _money(p.get("spend"), p.get("spend_currency") or p.get("currency")) if p.get("spend") is not None else None
    if spend and p.get("spend_period") not in (None, "total"):
        spend += " " + t.say(f"verdict.period.{p['spend_period']}", lang)
    run = t.say("verdict.paths.run", lang, gpus=p.get("gpus") or "?", gpu=p.get("gpu") or "?",
                days=days_text(p.get('hours') or 0)) if p.get("hours") else ""
    if p["kind"] == "tokens":
        return t.say("verdict.paths.tokens", lang, tokens=_billions(p["tokens"]), was=_billions(p["was"]),
                     pct=p["pct"], spend=spend or "?", run=run, fit=fit)
    if p["kind"] == "model":
        return t.say("verdict.paths.model", lang, model=p["model"], spend=spend or "?", run=run, fit=fit)
    provider = kb.providers[p["provider"]].display_name(lang) if p["provider"] in kb.providers else p["provider"]
    change = t.say(f"cheaper.change.{p['change']}", lang, provider=provider)
    cost = spend or f"{money_text(p['cost'])} {p['currency']} {t.say('cheaper.per.' + p['per'], lang)}"
    return t.say("verdict.paths.concession", lang, change=change, spend=cost, saving=p["saving_pct"],
                 instances=p["instances"], flavor=p["flavor"], fit=fit)


def _billions(tokens: float) -> str:
    return f"{tokens / 1e9:,.1f}".replace(".0", "") + "B"
