"""'Why not 4 x 4090?', 'why does it OOM?', 'can a 910B serve it?' (bot/plan/why.py) as the lines an answer starts
with: the verdict with this job's own numbers first, then what decides it, in the reply's language."""
from __future__ import annotations

from typing import Any

from bot.render.own import hours_text, money_text
from bot.render.templates import Templates


def _money(value: float | None, ccy: str | None) -> str:
    return f"{money_text(value)} {ccy}" if value is not None else "?"


def _numbers(t: Templates, s: dict[str, Any], key: str | None, ccy: str | None, lang: str) -> str:
    """'16 h for about 230 USD' (a job) or 'about 942 USD a month' (a service); '' when the side has no price."""
    if key == "job_cost" and s.get("job_cost") is not None and s.get("hours"):
        return t.say("why_not.numbers_job", lang, h=hours_text(s["hours"]), cost=_money(s["job_cost"], ccy))
    if s.get("monthly") is not None and key != "job_cost":
        return t.say("why_not.numbers_month", lang, cost=_money(s["monthly"], ccy))
    if s.get("job_cost") is not None and s.get("hours"):
        return t.say("why_not.numbers_job", lang, h=hours_text(s["hours"]), cost=_money(s["job_cost"], ccy))
    return ""


def _pick_name(p: dict[str, Any]) -> str:
    return f"{p['gpus']} x {p['gpu_name']}" + (f" ({p['flavor']})" if p.get("flavor") else "")


def why_not_lines(t: Templates, v: dict[str, Any], lang: str, cite=None, reasons_below: bool = True) -> list[str]:
    """The verdict ('Not 4 x RTX 4090: on 4 cards this job needs 49 GiB a card ...; the plan does it in 16 h for
    about 230 USD'), then each reason with its number."""
    a, p, ccy = v["alt"], v["pick"], v["currency"]
    key = v.get("cost_key") or ("job_cost" if p.get("job_cost") is not None else "monthly")
    pick_numbers = _numbers(t, p, key, ccy, lang)
    ctx = dict(n=a["gpus"], alt_n=a["gpus"], alt=a["gpu_name"], need=f"{a['need_gib']:,.1f}", mem=f"{a['memory_gib']:g}",
               usable=f"{a['usable_gib']:g}", pick=_pick_name(p), per=t.say(f"verdict.per.{'job' if key == 'job_cost' else 'month'}", lang),
               pct=a.get("cost_pct"), alt_numbers=_numbers(t, a, key, ccy, lang),
               cards_word="card" if a["gpus"] == 1 else "cards",
               price=t.say("why_not.price", lang, cost=_money(a["hourly"] / max(1, a["gpus"]), ccy),
                           flavor=a.get("price_flavor") or "", provider=a.get("price_provider_name") or
                           a.get("price_provider") or "") if a.get("hourly") is not None else "")
    x = a.get("pick_speed_x")
    ctx["rest"] = t.say("why_not.rest.below", lang) if v["reasons"] and reasons_below else \
        t.say("why_not.rest.faster", lang, x=f"{x:.1f}", alt=a["gpu_name"]) if x and x >= 1.15 else ""
    if v["winner"] == "pick" and not a["fits"]:
        first = t.say("why_not.cannot", lang, **ctx,
                      fewest=t.say("why_not.fewest", lang, k=a["fewest"]) if a.get("fewest") and a["fewest"] != a["gpus"] else "",
                      pick_numbers=t.say("why_not.with", lang, numbers=pick_numbers) if pick_numbers else "")
    elif v["winner"] in ("pick", "alt", "tie"):
        first = t.say(f"why_not.{v['winner']}", lang, **ctx, pick_numbers=pick_numbers or "?")
    else:
        first = t.say("why_not.unpriced", lang, **ctx,
                      alt_time=t.say("why_not.numbers_time", lang, h=hours_text(a["hours"])) if a.get("hours") else "",
                      pick_numbers=t.say("why_not.with", lang, numbers=pick_numbers) if pick_numbers else "")
    lines = [first]
    for r in v["reasons"]:
        line = t.say(f"why_not.reason.{r['kind']}", lang, **ctx, offload=r.get("offload") or "")
        lines.append(cite.after(line, r["sources"]) if cite and r.get("sources") else line)
    return lines


def _terms(t: Templates, breakdown: dict[str, float], lang: str) -> str:
    return t.say("why_oom.terms_sep", lang).join(
        t.say("why_oom.term", lang, name=t.say(f"why_oom.name.{k}", lang), gib=f"{g:,.1f}")
        for k, g in breakdown.items() if g >= 0.05)


def why_oom_lines(t: Templates, v: dict[str, Any], lang: str) -> list[str]:
    """The job's memory a card on the cards in question, term by term, whether it fits, then what brings it under."""
    ctx = dict(n=v["gpus"], gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}", usable=f"{v['usable_gib']:g}",
               need=f"{v['need_gib']:,.1f}", terms=_terms(t, v["breakdown"], lang),
               biggest=t.say(f"why_oom.name.{v['biggest']}", lang) if v.get("biggest") else "",
               hint=t.say("why_oom.hint." + ("serve" if v["serving"] else "train"), lang),
               one_card=t.say("why_oom.one_card", lang, gib=f"{v['one_card_gib']:,.1f}") if v.get("one_card_gib") else "")
    if not v["fits"]:
        key = "why_oom.over"
    else:
        key = "why_oom.plan_fits" if v["where"] == "plan" else "why_oom.fits_named"
    lines = [t.say(key, lang, **ctx)]
    fixes = [f for f in v["fixes"] if f["fits"]] if not v["fits"] else v["fixes"]
    said = t.say("list.sep_clause", lang).join(t.say(f"why_oom.fix.{f['kind']}", lang, n=f["gpus"],
                                                     gib=f"{f['need_gib']:,.1f}") for f in (fixes or v["fixes"]))
    if said:
        key = "why_oom.fixes_anyway" if v["fits"] else "why_oom.fixes" if fixes else "why_oom.fixes_none"
        lines.append(t.say(key, lang, fixes=said, usable=ctx["usable"]))
    return lines


def why_count_lines(t: Templates, v: dict[str, Any], lang: str) -> list[str]:
    """'Why 2 GPUs?': memory (one card would not hold it: its figure) or time (one would, the plan is faster)."""
    one = v.get("one_card_gib")
    ctx = dict(n=v["gpus"], gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}", usable=f"{v['usable_gib']:g}",
               need=f"{v['need_gib']:,.1f}", terms=_terms(t, v["breakdown"], lang),
               one=f"{one:,.1f}" if one else "?")
    key = "why_count.memory" if one and one > v["usable_gib"] else "why_count.speed"
    return [t.say(key, lang, **ctx)]


def can_run_line(t: Templates, v: dict[str, Any], lang: str) -> str:
    """'Yes: 4 x Huawei Ascend 910B (64 GiB each) hold it at 39.6 GiB a card, served with vLLM-Ascend or MindIE.'"""
    stack = t.say("can_run.stack", lang, stack=v["stack"][lang]) if v.get("stack") else ""
    i4 = v.get("int4")
    int4 = t.say("can_run.int4", lang, n=i4["cards"], need=f"{i4['need_gib']:,.1f}") if i4 else ""
    if v["answer"] == "no":
        return t.say("can_run.no", lang, gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}", need=f"{v['need_gib']:,.1f}",
                     int4=int4)
    pick = {"pn": v["pick_cards"], "pneed": f"{v['pick_need_gib']:,.1f}"} if v.get("pick_cards") else None
    if v["answer"] == "port":
        line = t.say("can_run.port", lang, n=v["cards"], gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}",
                     need=f"{v['need_gib']:,.1f}")
        return line + t.say("can_run.pick_uses", lang, **pick) if pick else line
    if pick:
        # the plan below on another count of the same cards (a whole 8-card server, more cards for speed): the
        # verdict says the plan's count first and the fewest as the other option, never a count the plan contradicts
        return t.say("can_run.yes_pick", lang, n=v["cards"], gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}",
                     need=f"{v['need_gib']:,.1f}", int4=int4, stack=stack, **pick)
    key = "can_run.yes_one" if v["cards"] == 1 else "can_run.yes"
    return t.say(key, lang, n=v["cards"], gpu=v["gpu_name"], mem=f"{v['memory_gib']:g}", need=f"{v['need_gib']:,.1f}",
                 int4=int4, stack=stack)
