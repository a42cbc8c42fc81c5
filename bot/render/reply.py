"""Render computed advice as plain text (terminal, Slack fallback). Wording comes from templates.

The Slack Block Kit layout lives in bot/surfaces/slack/blocks.py, so the text and the Slack layout change independently."""
from __future__ import annotations

import math
from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.render.own import hours_text, layout_text, money_text
from bot.render.templates import Templates
from bot.render.verdicts import cannot_text

def citation_list(kb: KnowledgeBase, ids: list[str]) -> list[dict[str, Any]]:
    out = []
    for sid in ids:
        s = kb.sources.get(sid)
        if s:
            title = s.title + (f" ({s.section})" if s.section else "")
            out.append({"id": s.id, "title": title, "url": s.url})
    return out


def rentals(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rental plans of an answer: every recommendation but the user's own cards (label yours, shown first)."""
    return [r for r in recs if r.get("label") != "yours"]


class Citer:
    """Numbers sources in the order the text first cites them: a claim asks for its markers, and the sources line
    lists exactly the sources some marker refers to (no source without a marker, no marker without a source)."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.ids: list[str] = []

    def numbers(self, ids: list[str] | None) -> list[int]:
        """The numbers of a claim's sources, numbering the new ones; unknown ids are not cited."""
        marks: list[int] = []
        for sid in ids or []:
            if sid not in self.kb.sources:
                continue
            if sid not in self.ids:
                self.ids.append(sid)
            n = self.ids.index(sid) + 1
            if n not in marks:
                marks.append(n)
        return marks

    def __call__(self, ids: list[str] | None) -> str:
        """The markers for a claim's sources ('[2][5]')."""
        return "".join(f"[{n}]" for n in self.numbers(ids))

    def after(self, text: str, ids: list[str] | None) -> str:
        """The claim's text with its markers after it."""
        marks = self(ids)
        return f"{text} {marks}" if marks else text

    def citations(self) -> list[dict[str, Any]]:
        return citation_list(self.kb, self.ids)


def refs(ids: list[str], order: list[str]) -> str:
    return "".join(f"[{order.index(i) + 1}]" for i in ids if i in order)


def flavor_sources(rec: dict[str, Any]) -> list[str]:
    """What a plan line rests on: the flavor's own sources and its price's."""
    return [*(rec.get("sources") or []), *(rec.get("price_sources") or [])]


def price_text(t: Templates, rec: dict[str, Any], lang: str) -> str:
    if rec.get("price_per_hour") is None:
        return t.say("label.no_price", lang)
    kind = t.say(f"price.{rec['price_kind']}", lang)
    when = rec.get("price_date") or t.say("price.undated", lang)
    text = f"{rec['price_per_hour']:.2f} {rec['currency']}{t.say('label.per_hour', lang)} ({kind}, {when})"
    if rec.get("price_per_hour_user") is not None:
        text += " " + t.say("label.approx_in", lang, amount=f"{rec['price_per_hour_user']:.2f}",
                            currency=rec["user_currency"], date=rec.get("user_rate_date") or "-")
    return text


def flavor_line(kb: KnowledgeBase, rec: dict[str, Any], lang: str = "en") -> str:
    count = rec["gpu_count"]
    total = rec.get("instances", 1) * max(1, rec.get("replicas") or 1)
    inst = f"{total} x " if total > 1 else ""
    prov = kb.providers[rec["provider"]].display_name(lang) if rec["provider"] in kb.providers else rec["provider"]
    return f"{inst}{rec['flavor']} - {count}x {rec['gpu_name']} {rec['gpu_memory_gib']:g} GiB, {prov}"


def memory_terms(memory: dict[str, Any], lang: str, t: Templates) -> str:
    sep = "，" if lang == "zh" else ", "
    def name(n: str) -> str:
        role, _, rest = n.partition(": ")      # post-training terms name their model: "critic: adamw state"
        if rest and f"role.{role}" in t.table:
            return t.say(f"role.{role}", lang) + ("：" if lang == "zh" else ": ") + name(rest)
        return t.say(f"term.{n}", lang) if f"term.{n}" in t.table else n
    return sep.join(f"{name(x['name'])} {x['gib']:.1f}" for x in memory["terms"] if x["gib"] >= 0.05)


def _bridge(verdict: dict[str, Any], recs: list[dict[str, Any]], t: Templates, lang: str) -> list[str]:
    """The card asked about, judged on its own, and the pick on the same card laid out another way: say how, so the
    answer never shows 23.0 GiB a card in one line and 8.1 in the next for the same 64 H100s without a word."""
    recs = rentals(recs)
    if verdict.get("owned") or not recs or recs[0].get("mixed") or recs[0]["gpu"] != verdict["row"].get("gpu"):
        return []
    pick, row = recs[0], verdict["row"]
    if pick.get("per_gpu_gib") is None or abs(pick["per_gpu_gib"] - row["per_gpu_gib"]) < 0.5:
        return []
    n = pick["gpus_total"] * max(1, pick.get("replicas") or 1)
    return ["      " + t.say("yours.bridge", lang, n=n, need=f"{pick['per_gpu_gib']:.1f}",
                             layout=layout_text(pick, t, lang))]


def targets_line(targets: list[dict[str, Any]], t: Templates, lang: str) -> str | None:
    """'Targets: deadline 30 days - meets (29.7 days); budget 5,000 USD - misses by 1,200 USD (6,200 USD)': every
    target the user stated, met or missed and by how much (the critic's `targets`), for the first lines."""
    if not targets:
        return None
    sep = "；" if lang == "zh" else "; "
    return f"{t.say('label.targets', lang)}: " + sep.join(_target_text(x, t, lang) for x in targets)


def infeasible_line(reply: dict[str, Any], t: Templates, lang: str) -> str | None:
    """'Not feasible as asked: deadline 7 days - misses by 63 days (70 days). Below is the nearest plan; what would
    work: ...': a job no plan on offer can do as asked is said to be so first, not headlined as a pick (the
    critic's targets, on the first rental plan when it is the nearest rather than one that meets the job)."""
    recs = rentals(reply["recommendations"])
    if not recs or len(recs) < len(reply["recommendations"]) or not (recs[0].get("breaks") or
                                                                    recs[0].get("over_budget")):
        return None
    missed = [x for x in reply.get("targets") or [] if x["met"] is False]
    if not missed:
        return None
    sep = "；" if lang == "zh" else "; "
    return t.say("infeasible.head", lang, missed=sep.join(_target_text(x, t, lang) for x in missed),
                 fix=_fix(missed[0], reply, t, lang))


def _fix(x: dict[str, Any], reply: dict[str, Any], t: Templates, lang: str) -> str:
    """What would meet the first missed target, from the nearest plan's own numbers."""
    if x["target"] == "deadline":
        days = f"{math.ceil(x['plan'] or 0):,}"
        gpus = (reply.get("compute") or {}).get("gpus_for_deadline")
        return t.say("infeasible.fix.deadline_gpus", lang, gpus=f"{gpus:,}", days=days) if gpus else \
            t.say("infeasible.fix.deadline", lang, days=days)
    if x["target"] == "budget":
        return t.say("infeasible.fix.budget", lang, spend=f"{_num(x['plan'] or 0)} {x['unit']}")
    if x["target"] == "e2e" and x.get("parts"):       # the output that fits the budget at this plan's speed
        p = x["parts"]
        fits = max(0, int((x["asked"] - p["ttft_ms"]) / p["tpot_ms"]))
        return t.say("infeasible.fix.e2e", lang, tokens=f"{fits:,}", out=f"{p['output_tokens']:,}",
                     budget=_num(x["plan"] or 0))
    key = f"infeasible.fix.{x['target']}"
    return t.say(key, lang) if key in t.table else t.say("infeasible.fix.latency", lang)


def _in_hours(x: dict[str, Any]) -> dict[str, Any]:
    """A deadline under two days is said in hours: '工期 0.1 天 - 满足（0 天）' reads as no work at all."""
    if x["target"] != "deadline" or x["asked"] >= 2:
        return x
    if x["asked"] * 24 < 1:         # under an hour: in minutes ('deadline 10 min')
        mins = {k: (x[k] * 1440 if x.get(k) is not None else None) for k in ("asked", "plan", "by")}
        return {**x, **mins, "target": "deadline_minutes", "unit": "minutes"}
    hours = {k: (x[k] * 24 if x.get(k) is not None else None) for k in ("asked", "plan", "by")}
    return {**x, **hours, "target": "deadline_hours", "unit": "hours"}


def _target_text(x: dict[str, Any], t: Templates, lang: str) -> str:
    x = _in_hours(x)
    unit = t.say(f"target.unit.{x['unit']}", lang) if f"target.unit.{x['unit']}" in t.table else x["unit"]
    key, load_unit = x["target"], unit
    if key in ("rate", "rate_peak") and x.get("requests_per_s"):
        # '10 requests/s (about 30 requests in flight)': the rate said, and the sequences it keeps in flight
        key, load_unit = f"{key}_as", t.say(f"capacity.unit.{x['unit']}", lang)
        x = {**x, "asked": x["requests_per_s"]}
    elif key in ("users", "streams") and x.get("sized_for") is not None and (
            round(x["sized_for"]) != x["asked"] or x["unit"] not in ("sequences", "streams")):
        # users are not all generating at once: the requests in flight (or a second) they mean; video streams
        # are their frames a second
        key, load_unit = f"{key}_as", t.say(f"capacity.unit.{x['unit']}", lang)
    name = t.say(f"target.{key}", lang, asked=_num(x["asked"]), unit=load_unit, load=_num(x.get("sized_for") or 0))
    if x["met"] is None:
        verdict = t.say("target.unknown", lang)
    elif x["plan"] is None:     # judged by the plan's breaks, with no figure of its own to show
        verdict = t.say("target.meets_plain" if x["met"] else "target.misses_plain", lang)
    else:
        plan = f"{_num(x['plan'])} {unit}" if x["plan"] is not None else "?"
        if x.get("parts"):          # a whole answer: the first token + the output tokens x the time per token
            p = x["parts"]
            plan += t.say("target.e2e_sum", lang, ttft=_num(p["ttft_ms"]), out=f"{p['output_tokens']:,}",
                          tpot=_num(p["tpot_ms"]))
        by = f"{_num(abs(x['by']))} {unit}" if x.get("by") is not None else "?"
        if x["met"] and x.get("tight"):     # met with no margin (rules/critic.yaml headroom): said as tight
            kind = "deadline" if x["target"].startswith("deadline") else \
                "budget" if x["target"] == "budget" else \
                "latency" if x["target"] in ("ttft", "tpot", "e2e", "latency") else "load"
            verdict = t.say(f"target.meets_tight.{kind}", lang, plan=plan, share=f"{x['tight']:.0%}")
        else:
            verdict = t.say("target.meets" if x["met"] else "target.misses", lang, plan=plan, by=by)
    return f"{name} - {verdict}"


def _num(v: float) -> str:
    if 0 < abs(v) < 1:
        return f"{v:.2g}"           # '0.14 images/s / 0.11 per replica', not '0.1 / 0.1 = 2'
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}".rstrip("0").rstrip(".") if v != int(v) else f"{v:,.0f}"


def sources_line(citations: list[dict[str, Any]], lang: str, t: Templates) -> str:
    parts = [f"[{c.get('n') or i + 1}] {c['title']}" for i, c in enumerate(citations)]
    return f"{t.say('label.sources', lang)}: " + "  ".join(parts) if parts else ""


def plan_lines(t: Templates, top: dict[str, Any], lang: str, cheaper_shown: bool = False) -> list[str]:
    """The pick's time and cost (training), or its fleet and monthly cost (serving), its layout and cost per billing
    mode, and the targets it meets or misses."""
    return (cost_lines(t, top, lang, cheaper_shown) + layout_lines(t, top, lang)
            + billing_lines(t, top.get("costs") or [], lang) + target_lines(t, top, lang))


def capacity_lines(t: Templates, top: dict[str, Any], lang: str) -> list[str]:
    """The load over what one replica carries, as the division it is ('300 simultaneous streams / 90 per replica
    (1 x NVIDIA L4) = 4 replica(s), carrying 360'): every served kind, from the plan's capacity (capacity.py)."""
    cap = top.get("capacity")
    if not cap or not cap.get("per_replica"):
        return []
    unit = t.say(f"capacity.unit.{cap['unit']}", lang)
    shape = f"{cap['gpus_per_replica']} x {top.get('gpu_name') or top.get('gpu')}"
    key = "capacity.short" if cap["replicas"] == cap["need"] else "capacity.line"
    util = cap.get("utilisation") or 1.0
    if util < 1:        # sized for a utilisation target at peak (rules/critic.yaml headroom): the division shows it
        key += "_util"
    return ["      " + t.say(key, lang, load=_num(cap["load"]), unit=unit, per=_num(cap["per_replica"]),
                             shape=shape, need=cap["need"], replicas=cap["replicas"], total=_num(cap["total"]),
                             util=f"{util:.0%}", u=f"{util:g}")]


def cost_lines(t: Templates, top: dict[str, Any], lang: str, cheaper_shown: bool = False) -> list[str]:
    """The pick's time and cost (training), or its fleet and monthly cost (serving). With a cheaper plan shown beside
    it, the pick is not called the cheapest."""
    out = capacity_lines(t, top, lang)
    if top.get("job_cost") and top.get("items_per_hour"):
        out.append("      " + t.say("why.batch_cost", lang, cost=f"{top['job_cost']:,.0f} {top['currency']}",
                                    hours=f"{top['job_hours']:,.1f}",
                                    instances=top["instances"] * max(1, top.get("replicas") or 1)))
    elif top.get("job_cost"):
        out.append("      " + t.say("why.job_cost", lang, cost=f"{money_text(top['job_cost'])} {top['currency']}",
                                    hours=hours_text(top['job_hours']),
                                    instances=top["instances"] * max(1, top.get("replicas") or 1)))
    elif top.get("monthly_cost") is not None and top.get("request_ms") is not None and top.get("encoder_batch") \
            and (top.get("replicas") or 1) > 1:
        # an encoder: requests, each one forward pass; no output tokens and no KV cache
        out.append("      " + t.say("plan.encoder_fleet", lang, replicas=top.get("replicas") or 1,
                                    gpus=top["gpus_total"]))
    if top.get("query_ms") and top.get("query_split"):
        # a query's whole fan-out (a reranker's top-k pairs) on one card, against the latency asked
        key = "plan.encoder_query_split" if top["query_split"] > 1 else "plan.encoder_query"
        out.append("      " + t.say(key, lang, ms=f"{top['query_ms']:,.0f}", split=top["query_split"]))
    elif top.get("monthly_cost") is not None and (top.get("replicas") or 1) > 1 and top.get("tpot_ms") is None:
        # images, audio, scenes: copies side by side reach the rate asked; no token latency applies to them
        out.append("      " + t.say("plan.copies", lang, replicas=top["replicas"], gpus=top["gpus_total"],
                                    monthly=f"{top['monthly_cost']:,.0f} {top['currency']}"))
    elif top.get("monthly_cost") is not None and (top.get("replicas") or 1) > 1:
        out.append("      " + t.say("plan.fleet", lang, replicas=top["replicas"], gpus=top["gpus_total"],
                                    conc=top.get("replica_concurrency") or "?",
                                    tpot=f"{top.get('tpot_ms') or 0:.0f}",
                                    monthly=f"{top['monthly_cost']:,.0f} {top['currency']}"))
    elif top.get("price_per_hour") is not None:
        key = "why.preferred" if cheaper_shown else "why.cheapest"
        out.append("      " + t.say(key, lang, price=price_text(t, top, lang)))
    return out


def target_lines(t: Templates, top: dict[str, Any], lang: str) -> list[str]:
    """The budget the plan meets or exceeds, and every other target it misses."""
    out = []
    b = top.get("budget")
    if b:
        key = "budget.met" if b["met"] else "budget.over"
        out.append("      " + t.say(key, lang, spend=f"{b['spend']:,.0f}", amount=f"{b['amount']:,.0f}",
                                    currency=b["currency"], period=t.say(f"period.{b['period']}", lang),
                                    pct=f"{100 * b['spend'] / b['amount']:.0f}" if b["amount"] else "?"))
    missed = list(top.get("breaks") or []) + (["budget"] if top.get("over_budget") else [])
    if missed:
        what = ", ".join(t.say(f"breaks.{b}", lang) for b in missed)
        out.append("      " + t.say("plan.breaks", lang, what=what))
    return out


def layout_lines(t: Templates, top: dict[str, Any], lang: str) -> list[str]:
    """A training plan's expert-parallel layout, said because it is not the ZeRO-3 a reader would assume."""
    lay = top.get("layout") or {}
    if lay.get("ep", 1) <= 1:
        return []
    pipeline = t.say("plan.layout_pp", lang, pp=lay["pp"], mb=lay["grad_accumulation"]) if lay["pp"] > 1 else ""
    return ["      " + t.say("plan.layout_ep", lang, ep=lay["ep"], per_gpu=lay["experts"] // lay["ep"],
                               experts=lay["experts"], pipeline=pipeline, dp=lay["dp"], gpus=top["gpus_total"])]


def _pool_memory(t: Templates, part: dict[str, Any], lang: str) -> str:
    """One pool of a chosen mix: its memory per GPU against its own card, term by term."""
    return t.say("fleet.pool_memory", lang, prompt=f"{part['prompt_tokens']:,}", gpu=part["gpu_name"],
                 need=f"{part['per_gpu_gib']:.1f}", have=f"{part['gpu_memory_gib']:g}",
                 headroom=f"{part['headroom_pct']:.0f}", terms=memory_terms({"terms": part["memory_terms"]}, lang, t))


def _fleet_price(t: Templates, rec: dict[str, Any], lang: str) -> str:
    return f"{rec['price_per_hour']:,.2f} {rec['currency']}{t.say('label.per_hour', lang)}" \
        if rec.get("price_per_hour") is not None else t.say("label.no_price", lang)


def _part_line(t: Templates, part: dict[str, Any], lang: str) -> str:
    return t.say("fleet.part", lang, replicas=part["replicas"], flavor=part["flavor"], gpus=part["gpu_count"],
                 gpu=part["gpu_name"], prompt=f"{part['prompt_tokens']:,}", share=f"{part['share']:.0%}",
                 conc=part.get("replica_concurrency") or "?", tpot=f"{part.get('tpot_ms') or 0:.0f}",
                 price=f"{part['price_per_hour']:,.2f} {part['currency']}" if part.get("price_per_hour") is not None
                 else t.say("label.no_price", lang))


def fleet_lines(t: Templates, top: dict[str, Any], lang: str) -> list[str]:
    """A load of several request sizes: the pick's parts, one per request size."""
    parts = top.get("fleet") or []
    if len(parts) < 2:
        return []
    return ["      - " + _part_line(t, p, lang) for p in parts]


def fleet_alt_line(t: Templates, top: dict[str, Any], lang: str, cite: Citer) -> list[str]:
    """The other fleet beside a several-size pick: a mix of GPU types and what it saves, or the single type it beat."""
    alt = top.get("fleet_alternative")
    if len(top.get("fleet") or []) < 2 or not alt:
        return []
    names = " + ".join(f"{p['replicas']} x {p['flavor']} ({p['gpu_name']})" for p in alt["parts"])
    price = f"{alt['price_per_hour']:,.2f} {alt['currency']}" if alt.get("price_per_hour") is not None else "?"
    key = "fleet.vs_single" if alt["kind"] == "single" else "fleet.simpler"
    return [cite.after(t.say(key, lang, saving=f"{alt['saving_pct']:g}", fleet=names, price=price), ["serving-melange"])]


def _time_cost(t: Templates, r: dict[str, Any], lang: str) -> str:
    """A plan's time and cost for the job; a timed plan with no public price still says its time."""
    if r.get("job_hours") and (r.get("job_cost") or r.get("price_per_hour") is None):
        gpus = r["gpus_total"] * max(1, r.get("replicas") or 1)
        if r.get("job_cost"):
            return t.say("plan.time_cost", lang, hours=hours_text(r['job_hours']), gpus=gpus,
                         cost=f"{money_text(r['job_cost'])} {r['currency']}")
        return t.say("plan.time_no_price", lang, hours=hours_text(r['job_hours']), gpus=gpus,
                     price=price_text(t, r, lang))
    return price_text(t, r, lang)


def _lost(t: Templates, r: dict[str, Any], top: dict[str, Any], lang: str) -> str:
    """Why a plan lost, from the planner's reasons (which agree with the numbers shown)."""
    if r.get("why") and not r.get("ruled_out"):
        price = _time_cost(t, r, lang)
        h = r.get("job_hours")
        # a job of seconds or minutes in seconds or minutes; no time on file: 'slower' is not said (never '? h')
        why = [w for w in r["why"] if w != "slower" or h]
        slower = short_time(t, h * 3600, lang) if h and h < SHORT_JOB_H else None
        return "; ".join(t.say("lost.slower_short", lang, time=slower) if w == "slower" and slower else
                         t.say(f"lost.{w}", lang, price=price, hours=hours_text(h) if h else "",
                               instances=r.get("instances") or 1)
                         for w in why if f"lost.{w}" in t.table)
    if r.get("ruled_out") == "no_fit":
        per = r.get("per_gpu_gib") or 0
        if per <= r["gpu_memory_gib"] and (r.get("need_gpus") or 1) > r["gpu_count"] and per <= r["gpu_memory_gib"] * 0.95:
            # it holds the job only over more cards than one instance has: not 'too tight' at 3 of 16 GiB
            return t.say("ruled.no_fit_split", lang, need=f"{per:.1f}", have=f"{r['gpu_memory_gib']:g}",
                         gpus=r["need_gpus"], count=r["gpu_count"])
        if per <= r["gpu_memory_gib"]:
            return t.say("ruled.no_room", lang, need=f"{per:.1f}", have=f"{r['gpu_memory_gib']:g}")
        need, have = gib_up(r.get("per_gpu_gib") or 0), f"{r['gpu_memory_gib']:g}"
        if (r.get("need_gpus") or 1) > 1:
            return t.say("ruled.no_fit_over", lang, need=need, have=have, gpus=r["need_gpus"])
        return t.say("ruled.no_fit", lang, need=need, have=have)
    if r.get("implausible"):
        return t.say("ruled.implausible", lang, because=r["implausible"]["because"])
    if r.get("ruled_out"):
        return t.say("ruled.requirement", lang, requirement=t.say(r["ruled_out"], lang))
    if r.get("instances", 1) > 1 and r["instances"] != top.get("instances"):
        return t.say("ruled.more_instances", lang, instances=r["instances"]) + "; " + price_text(t, r, lang)
    return t.say("ruled.costs_more", lang, price=price_text(t, r, lang))


def compare_lines(kb: KnowledgeBase, t: Templates, data: dict[str, Any], lang: str, cite: Citer | None = None
                  ) -> list[str]:
    """A comparison with a job: each GPU's best plan (time and cost, or hourly and monthly; its flavor and price
    cited through `cite`, which numbers the reply's sources), its caveats, then the verdict, decision first."""
    cite = cite or Citer(kb)
    lines = []
    if data["best"]:
        only = any(not x.get("rented", True) for x in data["side"])      # the other GPU: no flavor on file
        lines.append(t.say("compare.verdict", lang, best=_gpu_name(data, data["best"]),
                           why=t.say("compare.why_only_offered" if only else "compare.why_cost", lang)))
    elif data.get("by_cards"):
        lines.append(t.say("compare.verdict", lang, best=_gpu_name(data, data["by_cards"]),
                           why=t.say(f"compare.why_{data.get('why', 'cards')}", lang)))
    else:
        lines.append(t.say("compare.none", lang))
    for x in data["side"]:
        p = x["pick"]
        if p is None and x.get("why_not"):
            lines.append(f"{x.get('label') or x['gpu_name']}: {cannot_text(t, x['why_not'], lang)}")
            continue
        if p is None:
            lines += _unrented_lines(t, x, lang)
            continue
        if p.get("label") == "yours":        # judged on the user's own cards: what it needs there, and its time
            when = t.say("verdict.hours", lang, h=hours_text(p["job_hours"])) if p.get("job_hours") else ""
            lines.append(t.say("compare.own_fits", lang, name=x.get("label") or x["gpu_name"],
                               need=f"{p.get('per_gpu_gib') or 0:.1f}", mem=f"{p.get('gpu_memory_gib') or 0:g}",
                               time=(", " if lang == "en" else "，") + when if when else ""))
            continue
        cost = _time_cost(t, p, lang)
        cp = x.get("card_price")
        if cp and p.get("price_per_hour") is None:      # its size unpriced: its cards at the price a card on file
            cost += "; " + t.say("compare.card_priced", lang, flavor=cp["flavor"], per=f"{cp['per_card']:.2f}",
                                 ccy=cp["currency"], n=cp["cards"], hourly=money_text(cp["hourly"]),
                                 monthly=money_text(cp["hourly"] * 730))
        if p.get("monthly_cost") is not None:
            cost += "; " + t.say("compare.monthly", lang, monthly=f"{p['monthly_cost']:,.0f} {p['currency']}")
        if p.get("load_tpot_ms") and p.get("load_per_replica") and p.get("replica_concurrency"):
            # at the users asked: the faster card's time per token, where both replicas hold them with room
            cost += "; " + t.say("compare.speed_at_load", lang, tpot=f"{p['load_tpot_ms']:.0f}",
                                 tps=f"{1000 / p['load_tpot_ms']:.0f}", users=p["load_per_replica"],
                                 conc=p["replica_concurrency"])
        elif p.get("tpot_ms") and p.get("replica_concurrency"):
            # how each user is served, not only what it costs: the faster card may be worth its price
            cost += "; " + t.say("compare.speed", lang, tpot=f"{p['tpot_ms']:.0f}", tps=f"{1000 / p['tpot_ms']:.0f}",
                                 conc=p["replica_concurrency"])
        # a side the cloud the user named cannot carry (no such card there, or none that holds the job): labelled
        where = t.say("label.elsewhere", lang) if x.get("elsewhere") else ""
        lines.append(cite.after(f"{x.get('label') or x['gpu_name']}{where}: {flavor_line(kb, p)} - {cost}",
                                flavor_sources(p)))
        if p.get("breaks") or p.get("over_budget"):
            lines += [line.strip() for line in plan_lines(t, {**p, "job_cost": None, "monthly_cost": None,
                                                              "price_per_hour": None}, lang)]
        if data["training"] and not x["bf16"]:
            lines.append(cite.after("  " + t.say("compare.no_bf16", lang, gpu=x["gpu_name"]), x.get("bf16_sources")))
        if x["consumer"] and not data.get("verdict"):      # with a verdict, its licensing caveat says it
            lines.append("  " + t.say("compare.consumer", lang, gpu=x["gpu_name"]))
    return lines


def gib_up(gib: float) -> str:
    """GiB to one decimal, rounded up: a need that misses a card by a little never reads as equal to it
    (94.02 on a 94 GiB card is "94.1 > 94", never "94.0 > 94")."""
    return f"{math.ceil(round(gib * 10, 6)) / 10:.1f}"


def gib_down(gib: float) -> str:
    """GiB to one decimal, rounded down: what a card leaves usable is never overstated."""
    return f"{math.floor(round(gib * 10, 6)) / 10:.1f}"


def _unrented_lines(t: Templates, x: dict[str, Any], lang: str) -> list[str]:
    """One side of a comparison with no plan on offer: if no flavor on file rents the GPU at all, how many of its
    cards hold the job (or what they lack), so the verdict still rests on the card itself."""
    c = x.get("cards")
    cp = x.get("card_price")
    if cp and c and c.get("cards"):
        # rented on file only in smaller sizes, or in sizes with no public price: the cards that hold the job (per
        # replica, as many replicas as the plan keeps), at the price a card
        key = "compare.card_price_unpriced" if cp.get("unpriced_size") else "compare.card_price"
        return [t.say(key, lang, gpu=x["gpu_name"], n=cp["cards"], need=f"{c['need_gib']:.1f}", size=cp.get(
                      "unpriced_size") or "", reps=cp.get("replicas") or 1, per_replica=cp.get("per_replica") or c["cards"],
                      mem=f"{c['memory_gib']:g}", per=f"{cp['per_card']:.2f}", ccy=cp["currency"], flavor=cp["flavor"],
                      hourly=money_text(cp["hourly"]), monthly=money_text(cp["hourly"] * 730))]
    if x.get("rented", True) or not c:
        return [t.say("compare.no_plan", lang, gpu=x["gpu_name"])]
    key = "compare.cards_fit" if c["cards"] else "compare.cards_short"
    # a miss is rounded apart (need up, usable down) so that it never reads "22.8 over 22.8"
    need = f"{c['need_gib']:.1f}" if c["cards"] else gib_up(c["need_gib"])
    out = [t.say(key, lang, gpu=x["gpu_name"], n=c["cards"], need=need, mem=f"{c['memory_gib']:g}",
                 usable=gib_down(c["usable_gib"]))]
    if c.get("int4"):
        out.append("  " + t.say("compare.cards_int4", lang, n=c["int4"]["cards"], need=f"{c['int4']['need_gib']:.1f}"))
    if x["consumer"]:
        out.append("  " + t.say("compare.consumer", lang, gpu=x["gpu_name"]))
    if not c["cards"]:
        steps = "; ".join(f"{t.change(s['change'], lang)} -> {s['per_gpu_gib']:.1f} GiB" for s in c.get("steps", []))
        if steps:
            out.append("  " + t.say("compare.cards_steps", lang, steps=steps))
    return out


def _gpu_name(data: dict[str, Any], name: str) -> str:
    return next((x["gpu_name"] for x in data["side"] if x["name"] == name), name)


def compute_basis(t: Templates, c: dict[str, Any], gpu: str, lang: str) -> str:
    """How the GPU-hours were reached, worded in the answer's language (the English `basis` string otherwise)."""
    if not (c.get("tokens") and c.get("flops_per_token") and c.get("tokens_per_s_per_gpu") and c.get("goodput")):
        return c["basis"]
    return t.say("compute.basis", lang, tokens=f"{c['tokens']:.3g}", per_token=f"{c['flops_per_token']:.3g}",
                 flops=f"{c['flops']:.3g}", tps=f"{c['tokens_per_s_per_gpu']:,.0f}", mfu=f"{c['mfu']:.0%}", gpu=gpu,
                 gpus=c["gpus"], goodput=f"{c['goodput']:.0%}")


def billing_lines(t: Templates, costs: list[dict[str, Any]], lang: str) -> list[str]:
    """The pick's cost per billing mode: the job on pay-per-use and spot, or a service's month and year."""
    def money(c: dict[str, Any]) -> str:
        return f"{money_text(c['cost'])} {c['currency']}"
    job = [c for c in costs if c["per"] == "job"]
    if job:
        parts = [t.say("billing.job", lang, ppu=money(job[0]))]
        parts += [t.say("billing.spot_batch" if c.get("resume") == "shards" else "billing.spot", lang,
                        cost=money(c), pct=f"{c['overhead_pct']:g}", every=f"{c['reclaim_every_h']:g}",
                        ckpt=c["checkpoint_min"]) for c in job[1:]]
        return ["      " + ("；" if lang == "zh" else "; ").join(parts)]
    used = next((c for c in costs if c["per"] == "used_month"), None)
    full = next((c for c in costs if c["mode"] == "monthly"), None)
    if used and full:
        # a schedule said: pay-per-use for the hours used against a month paid whole, and the break-even
        return ["      " + t.say("billing.schedule", lang, hours=f"{used['hours']:,.0f}", hourly=f"{used['hourly']:,.2f}",
                                  ppu=money(used), full=money(full), pct=full["utilisation_pct"],
                                  need=full["need_discount_pct"])]
    month = next((c for c in costs if c["per"] == "month"), None)
    year = next((c for c in costs if c["per"] == "year"), None)
    if month and year:
        return ["      " + t.say("billing.always_on", lang, month=money(month), year=money(year))]
    return []


# a training job of under six minutes of GPU time is said in seconds or minutes, with what dominates it
SHORT_JOB_H = 0.1


def short_time(t: Templates, seconds: float, lang: str) -> str:
    """A short job's GPU time as read: whole seconds under 90 s ('under a second' below one), else minutes."""
    if seconds < 1:
        return t.say("duration.under_second", lang)
    if seconds < 90:
        return t.say("duration.seconds", lang, n=f"{seconds:.0f}")
    return t.say("duration.minutes", lang, n=f"{seconds / 60:.0f}")


def rate_text(rate: float) -> str:
    """A rate as shown: '41,430 images/s', '195.1', '3.9', '0.585' (never '4.143e+04')."""
    if rate >= 1000:
        return f"{rate:,.0f}"
    return f"{rate:,.1f}" if rate >= 10 else f"{rate:.3g}"
