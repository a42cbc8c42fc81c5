"""An answer laid out once, for every surface: bot/records/models.AnswerView.

The planner's advice becomes one typed view here (headline, decision sections, checklist rows, considered rows,
notes, assumptions, numbered sources); the terminal text (bot/render/text.py), the Slack blocks
(bot/surfaces/slack/blocks.py) and the JSON all render this same object, so no surface re-reads another's output
and a considered row can only carry its own plan's figures."""
from __future__ import annotations

from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.records.models import AnswerView, CheckRow, ConsideredRow, SourceRef, ViewSection
from bot.render.own import days_text, hours_text, money_text, own_lines
from bot.render.reply import (SHORT_JOB_H, Citer, _bridge, _fleet_price, _lost, _pool_memory, _time_cost,
                              billing_lines, compute_basis, cost_lines, flavor_line, flavor_sources, fleet_alt_line,
                              fleet_lines, infeasible_line, layout_lines, memory_terms, price_text, rate_text, rentals,
                              short_time, target_lines, targets_line)
from bot.render.templates import Templates

CONSIDERED_SHOWN = 6       # the considered plans an answer lists (the JSON keeps them all)


def answer_view(reply: dict[str, Any], kb: KnowledgeBase, t: Templates, extra: dict[str, Any]) -> AnswerView:
    """The answer's view (DESIGN.md 'What a good answer looks like'): each claim cites its sources where it is made
    (extra['claims']: memory, compute, speed; a plan line its flavor and price; the checklist and notes their own),
    numbered in order of first use, and the sources are exactly those cited. The short form is built first, so the
    sources it cites are the first ones; each section's details, the checklist and the notes number after them."""
    lang = reply["lang"]
    cite = Citer(kb)
    # a verdict the question asked for ('the biggest model $50k trains'), its last line citing its sources
    first = [ViewSection(key=f["key"], lines=[*f["lines"][:-1], cite.after(f["lines"][-1], f.get("sources"))])
             for f in extra.get("first") or []]
    sections = _lead_sections(reply, extra, t, lang, cite)
    infeasible = infeasible_line(reply, t, lang)
    if infeasible:       # the decision first: the job cannot be done as asked (then the nearest plan)
        sections.insert(0, ViewSection(key="infeasible", lines=[infeasible]))
    sections = first + sections
    verdict = extra.get("gpu_verdict") or {}
    said = targets_line(reply.get("targets") or [], t, lang)
    targets = [ViewSection(key="targets", lines=[said])] if said else []
    if verdict.get("owned"):              # every stated target, judged on their cards, right under them
        sections, targets = sections + targets, []
    work = _work_sections(reply, extra, t, lang)
    # their own cards hold the job: the verdict and its time are the answer, a rental beside it comes after the fold
    # (a target their cards miss, a deadline above all, makes the rental that meets it part of the answer)
    # Their cards holding it only by moving optimizer state or parameters to host RAM (slow: PCIe every step) is no
    # answer on its own when they named a cloud to rent on: that rental is part of the answer, not after the fold
    offloaded = ((verdict.get("row") or {}).get("layout") or {}).get("offload", "none") not in (None, "none")
    asked_cloud = bool((reply.get("slots") or {}).get("provider"))
    fold = bool(verdict.get("owned") and verdict["row"]["fits"]
                and not any(tg.get("met") is False for tg in reply.get("targets") or [])
                and not (offloaded and asked_cloud))
    if fold:
        sections, work = sections + work, []
    short_sources = len(cite.ids)
    recs = rentals(reply["recommendations"])
    rest = _plan_sections(reply, recs, kb, t, extra, cite) if recs else []
    if recs and verdict.get("owned") and extra.get("fallback"):
        # their own cards are the answer: why a rental is on another cloud belongs with the rental, not before it
        rest.insert(0, ViewSection(key="fallback", lines=[_fallback_line(extra["fallback"], t, lang)]))
    rest += work + _time_sections(reply, kb, t, extra, cite)
    # every stated target, met or missed, under the plan it judges (the critic's `targets`)
    at = next((i + 1 for i, x in enumerate(rest) if x.key == "pick"), None)
    rest = rest[:at] + targets + rest[at:] if at is not None else rest
    sections = (targets if at is None else []) + sections
    sections += [s.model_copy(update={"folded": True}) for s in rest] if fold else rest
    short_sources = short_sources if fold else len(cite.ids)
    sections = _with_details(sections, reply, kb, t, extra, cite)
    checklist = [CheckRow(item=c["item"], status=c["status"], status_word=t.say(f"status.{c['status']}", lang),
                          name=t.say(f"item.{c['item']}", lang), text=c["text"], refs=cite.numbers(c["citations"]))
                 for c in reply["checklist"]]
    note_sources = extra.get("note_sources") or {}
    notes = [cite.after(note, note_sources.get(note)) for note in reply.get("notes") or []]
    return AnswerView(headline=headline(reply, t), sections=sections, checklist=checklist,
                      considered=considered_rows(reply, t), notes=notes, assumed=_assumed(reply, t),
                      sources=[SourceRef(n=i + 1, **c) for i, c in enumerate(cite.citations())],
                      short_sources=short_sources)


def _with_details(sections: list[ViewSection], reply: dict[str, Any], kb: KnowledgeBase, t: Templates,
                  extra: dict[str, Any], cite: Citer) -> list[ViewSection]:
    """Each section's details after the fold: the other fleet, the memory term by term, the layout, how the time was
    reached, and a serving replica's throughput (the verdict's own details are set with it)."""
    lang = reply["lang"]
    recs = rentals(reply["recommendations"])
    top = recs[0] if recs else {}
    more: dict[str, list[str]] = {
        "pick": fleet_alt_line(t, top, lang, cite) if top else [],
        "why": _memory_more(reply, top, t, lang),
        "cost": layout_lines(t, top, lang) if top else [],
        "compute": _compute_more(reply.get("compute") or {}, kb, t, lang, cite, extra.get("claims") or {}),
        "throughput": _throughput_line(extra, t, lang, cite),
    }
    out = [s.model_copy(update={"more": s.more + [x.strip() for x in more.pop(s.key, [])]}) for s in sections]
    # details whose part has no short line (a serving replica's throughput): a part of their own
    return out + [ViewSection(key=key, title=t.say("label.time_cost", lang), more=[x.strip() for x in lines])
                  for key, lines in more.items() if lines]


def _memory_more(reply: dict[str, Any], top: dict[str, Any], t: Templates, lang: str) -> list[str]:
    """The memory per GPU term by term (each pool's, for a fleet of several GPU types)."""
    if top.get("mixed"):
        return [_pool_memory(t, p, lang) for p in top["fleet"]]
    mem = reply.get("memory")
    if not mem or not top:
        return []
    return [t.say("why.terms", lang, terms=memory_terms(mem, lang, t))]


def headline(reply: dict[str, Any], t: Templates) -> str:
    """The decision in one line with its counts: the user's own cards when they are the question, else the pick as
    instances x flavor and its GPUs in all ('Pick: 2 x p5s.40xlarge.12, 16 x H100'; a mixed fleet, each part);
    empty when there is no plan at all."""
    lang, recs = reply["lang"], reply["recommendations"]
    rent = rentals(recs)
    if len(rent) < len(recs):
        mine = recs[0]
        return t.say("headline.yours", lang, gpus=mine["gpu_count"], gpu=mine["gpu_name"])
    if not recs:
        return ""               # nothing to rent and no cards of theirs: the text says why
    top = rent[0] if rent else recs[0]
    parts = top.get("fleet") if top.get("mixed") else None
    if parts:
        plans = " + ".join(f"{p['replicas']} x {p['flavor']}" for p in parts)
        gpus = " + ".join(f"{p['replicas'] * p['gpu_count']} x {p['gpu_name']}" for p in parts)
        return t.say("headline.pick", lang, plans=plans, gpus=gpus)
    copies = top.get("instances", 1) * max(1, top.get("replicas") or 1)
    return t.say("headline.pick", lang, plans=f"{copies} x {top['flavor']}",
                 gpus=f"{copies * top['gpu_count']} x {top['gpu_name']}")


def considered_rows(reply: dict[str, Any], t: Templates) -> list[ConsideredRow]:
    """The plans that lost (other rentals not named cheapest or fastest, then the planner's considered ones), each
    with its own flavor, price and reason."""
    recs = rentals(reply["recommendations"])
    if not recs:
        return []
    others = [r for r in recs[1:] if r.get("label") not in ("cheapest", "fastest")] + reply.get("considered", [])
    return [ConsideredRow(provider=r["provider"], flavor=r["flavor"], gpu_count=r["gpu_count"], gpu_name=r["gpu_name"],
                          instances=(r.get("instances") or 1) * max(1, r.get("replicas") or 1),
                          price_per_hour=r.get("price_per_hour"), currency=r.get("currency"),
                          verdict=_lost(t, r, recs[0], reply["lang"]))
            for r in others[:CONSIDERED_SHOWN]]


def _assumed(reply: dict[str, Any], t: Templates) -> str | None:
    """What was assumed, one sentence each, ended the way the reply's language ends them."""
    if not reply["assumptions"]:
        return None
    sep, end = ("；", "。") if reply["lang"] == "zh" else ("; ", ". ")
    return sep.join(a.rstrip("。.") for a in reply["assumptions"]) + end + t.say("label.say_if_not", reply["lang"])


def _lead_sections(reply: dict[str, Any], extra: dict[str, Any], t: Templates, lang: str, cite: Citer
                   ) -> list[ViewSection]:
    """First, what the user asked about: whether the GPU they named fits (and what would make it fit), and why the
    pick is on another cloud when the default one has nothing that meets a hard requirement."""
    lines: list[str] = []
    more: list[str] = []
    verdict = extra.get("gpu_verdict")
    if verdict:
        short, more = own_lines(verdict, t, lang, cite(verdict.get("sources", [])), verdict.get("owned", False))
        if verdict["row"].get("implausible"):      # the critic: their cards hold it, yet it is no plan to run
            short.append("      " + t.say("yours.implausible", lang, because=verdict["row"]["implausible"]["because"]))
        lines += short + _bridge(verdict, extra.get("recommendations") or [], t, lang)
    # what the card led with can't do for the job (bf16 on a V100): it decides whether the plan runs, so it is said here
    if verdict:             # with no verdict, they follow the pick they are about (_plan_sections)
        lines += [cite.after("      " + line, sources) for line, sources in extra.get("caveats") or []]
    if extra.get("fallback") and not (verdict or {}).get("owned"):
        lines.append(_fallback_line(extra["fallback"], t, lang))
    return [ViewSection(key="lead", lines=lines, more=more)] if lines else []


def _fallback_line(fb: dict[str, Any], t: Templates, lang: str) -> str:
    """Why the rental pick is on another cloud than the default one."""
    return t.say(fb["key"], lang, provider=fb["provider"], requirement=fb["requirement"], fix=fb.get("fix", ""))


def _plan_sections(reply: dict[str, Any], recs: list[dict[str, Any]], kb: KnowledgeBase, t: Templates,
                   extra: dict[str, Any], cite: Citer) -> list[ViewSection]:
    """The pick (its flavor and price cited), why it holds the job (the memory estimate's sources), its cost, and
    the cheapest and fastest plans where they differ."""
    lang, mem = reply["lang"], reply["memory"]
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    time_cost = label("time_cost")
    top = recs[0]
    head = t.say("fleet.mixed", lang, price=_fleet_price(t, top, lang)) if top.get("mixed") else \
        f"{flavor_line(kb, top, lang)} - {price_text(t, top, lang)}"
    out = [ViewSection(key="rent", lines=[t.say("yours.rent", lang)])] if len(recs) < len(reply["recommendations"]) \
        else []
    # a cloud the user named: a plan on any other is labelled as elsewhere wherever it is shown
    named = extra.get("named_cloud")
    where = lambda r: t.say("label.elsewhere", lang) if named and r.get("provider") != named else ""  # noqa: E731
    # what the pick's card can't do for the job (bf16 on a T4), under it, when no verdict on a card led the answer
    # cited in the order they are read (the pick's own line first: sources are numbered by first use)
    head_line = cite.after(head, flavor_sources(top))
    fleet = fleet_lines(t, top, lang)
    caveats = [] if extra.get("gpu_verdict") else [cite.after("      " + line, sources)
                                                   for line, sources in extra.get("caveats") or []]
    out += [ViewSection(key="pick", label=label("pick") + where(top), lines=[head_line] + fleet + caveats)]
    task = t.say(f"task.{extra['task']}", lang)
    model = extra.get("model_name") or f"{extra['params_b']:g}B"
    method = extra.get("method")
    if method and method != "inference":
        model += f" ({t.say(f'method.{method}', lang)})"
    if extra.get("served_as"):
        model += f" ({t.say('served.' + extra['served_as'], lang)})"
    memory_cites = (extra.get("claims") or {}).get("memory")
    if top.get("mixed"):
        why = [cite.after(t.say("fleet.why", lang, task=task, model=model), memory_cites)]
    else:
        why = [cite.after(t.say("why.need", lang, task=task, model=model, need=f"{mem['per_gpu_gib']:.1f}"),
                          memory_cites)]
    out.append(ViewSection(key="why", label=label("why"), title=label("why"), lines=why))
    cost = cost_lines(t, top, lang, cheaper_shown=any(r.get("label") == "cheapest" for r in recs[1:]))
    cost += per_run_lines(t, top, reply.get("work"), lang)
    # a job's cost per billing mode repeats its cost line's figure: after the fold; a service's month and year stay
    billing = billing_lines(t, top.get("costs") or [], lang)
    job = any(c["per"] == "job" for c in top.get("costs") or [])
    cost, more = (cost, billing) if job else (cost + billing, [])
    # the budget and the targets missed: in the short form unless the Targets line already judges each one
    judged = target_lines(t, top, lang)
    cost, more = (cost, more + judged) if reply.get("targets") else (cost + judged, more)
    if cost or more:
        out.append(ViewSection(key="cost", title=time_cost, lines=cost, more=[x.strip() for x in more]))
    for r in recs[1:]:
        if r.get("label") in ("cheapest", "fastest"):
            line = cite.after(f"{flavor_line(kb, r, lang)} - {_time_cost(t, r, lang)}", flavor_sources(r))
            out.append(ViewSection(key=r["label"], label=label(r["label"]) + where(r), title=time_cost, lines=[line]))
    return out


def per_run_lines(t: Templates, top: dict[str, Any], work: dict[str, Any] | None, lang: str) -> list[str]:
    """The same job for each of N customers: the plan's time and cost are all N runs'; one run's share is said too."""
    runs = next((f["value"] for f in (work or {}).get("factors") or [] if f["unit"] == "runs"), None)
    if not runs or runs < 2 or not top.get("job_hours") or not top.get("job_cost"):
        return []
    return ["      " + t.say("why.per_run", lang, runs=f"{runs:,.0f}", hours=hours_text(top["job_hours"] / runs),
                             cost=f"{money_text(top['job_cost'] / runs)} {top['currency']}")]


def _work_sections(reply: dict[str, Any], extra: dict[str, Any], t: Templates, lang: str) -> list[ViewSection]:
    """The amount of work in the user's units, as a multiplication; or, for a training job with none said, what to
    tell for a time and a cost."""
    label = t.say("label.work", lang)
    work = reply.get("work")
    if work and (work.get("kind") != "training" or work["unit"] == "tokens"
                 or any(f["unit"] == "steps" for f in work["factors"])):
        # an image or audio job's dataset x epochs is on its speed line; steps x batch is said here
        line = work["derivation"]
    elif extra.get("work_missing"):
        line = t.say("work.missing_size", lang)
    else:
        return []
    return [ViewSection(key="work", label=label, title=t.say("label.time_cost", lang), lines=[line])]


def _time_sections(reply: dict[str, Any], kb: KnowledgeBase, t: Templates, extra: dict[str, Any], cite: Citer
                   ) -> list[ViewSection]:
    """How long training takes (FLOPs per token and the GPU's peak cited), a job's speed in its own unit, a batch
    job's rate and hours, and a serving replica's throughput (the GPU's spec cited)."""
    lang = reply["lang"]
    claims = extra.get("claims") or {}
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    time_cost = label("time_cost")
    out: list[ViewSection] = []
    if reply.get("compute") and not reply["compute"].get("items"):
        out.append(ViewSection(key="compute", label=label("compute"), title=time_cost,
                               lines=_compute_lines(reply["compute"], kb, t, lang, cite, claims)))
    if extra.get("speed"):
        out.append(ViewSection(key="speed", label=label("speed"), title=time_cost,
                               lines=_speed_lines(reply, extra["speed"], t, lang, cite, claims)))
    if extra.get("batch"):
        out.append(ViewSection(key="batch", label=label("batch"), title=time_cost,
                               lines=batch_lines(t, reply, extra["batch"], lang, cite, claims.get("speed"))))
    return out


def _throughput_line(extra: dict[str, Any], t: Templates, lang: str, cite: Citer) -> list[str]:
    """A serving replica's throughput (the GPU's spec cited), or an encoder's requests per second."""
    tp = extra.get("throughput")
    if not tp:
        return []
    if tp.get("encoder"):
        line = t.say("throughput.encoder", lang, gpu=tp["gpu"], rps=f"{tp['requests_per_s']:,.0f}",
                     batch=tp["batch"], ms=f"{tp['request_ms']:.0f}" if tp["request_ms"] >= 10
                     else f"{tp['request_ms']:.1f}", total=f"{tp['total_requests_per_s']:,.0f}")
    else:
        line = t.say("throughput.line", lang, gpu=tp["gpu"], tps=f"{tp['tokens_per_s']:,}", n=tp["concurrency"])
    return [cite.after(line, (extra.get("claims") or {}).get("speed"))]


def _compute_lines(c: dict[str, Any], kb: KnowledgeBase, t: Templates, lang: str, cite: Citer,
                   claims: dict[str, Any]) -> list[str]:
    """Training time: GPU-hours and days on the plan's GPUs, and a deadline it misses."""
    gpu = kb.gpus[c["gpu"]].name if c["gpu"] in kb.gpus else c["gpu"]
    # under a day the wall clock is said in hours ('0.0 days on 8 GPUs' read as no time at all)
    # (the hours from the GPU-hours, not from the rounded days: a 20-minute job is not '0 h')
    key = "compute.short" if c["days"] >= 1 else "compute.short_hours"
    line = t.say(key, lang, gpu_hours=hours_text(c["gpu_hours"]), gpu=gpu, days=f"{c['days']:,.1f}",
                 hours=hours_text(c["gpu_hours"] / max(1, c["gpus"] or 1)), gpus=c["gpus"])
    lines = [cite.after(line, claims.get("compute"))]
    if c.get("deadline_days"):
        lines.append("      " + t.say("compute.deadline_miss", lang, deadline=f"{c['deadline_days']:g}",
                                      needed=c["gpus_for_deadline"]))
    return lines


def _compute_more(c: dict[str, Any], kb: KnowledgeBase, t: Templates, lang: str, cite: Citer,
                  claims: dict[str, Any]) -> list[str]:
    """How the training time was reached (tokens x FLOPs per token at the speed model's rate), and the layout."""
    if not c or c.get("items"):
        return []
    gpu = kb.gpus[c["gpu"]].name if c["gpu"] in kb.gpus else c["gpu"]
    lines = [t.say("compute.how", lang, basis=compute_basis(t, c, gpu, lang))]
    if c.get("sharding") == "hsdp":
        lines.append(cite.after(t.say("compute.hsdp", lang, nodes=c["nodes"], per_node=c["gpus_per_node"]),
                                claims.get("layout")))
    elif c.get("layout_3d"):
        d = c["layout_3d"]
        zero3 = t.say("compute.zero3_days", lang, days=f"{d['zero3_days']:,.1f}") if d.get("zero3_days") else ""
        lines.append(cite.after(t.say("compute.layout_3d", lang, tp=d["tp"], pp=d["pp"], dp=d["dp"],
                                      per_node=d["gpus_per_node"], zero3=zero3), claims.get("layout")))
    return lines


def _audio_hours(reply: dict[str, Any], sp: dict[str, Any]) -> float | None:
    """The hours of audio a transcription job was timed on, when the speed is a real-time factor over them."""
    slots = reply.get("slots") or {}
    if sp.get("unit") != "x real time" or sp.get("hours") is None or sp.get("items") or not sp.get("rate"):
        return None
    return slots.get("dataset_items") if slots.get("dataset_unit") == "audio_hours" else None


def _hours_said(hours: float) -> str:
    """A deadline in hours as said: whole hours, one decimal under ten ('0.5', not '0')."""
    return f"{hours:,.0f}" if hours >= 10 else f"{hours:.2g}"


def _speed_lines(reply: dict[str, Any], sp: dict[str, Any], t: Templates, lang: str, cite: Citer,
                 claims: dict[str, Any]) -> list[str]:
    """A job's speed in its own unit (images/s, x real time), the dataset x epochs it runs and its hours."""
    recs = rentals(reply["recommendations"])
    # beside the user's own cards (whose rate is on their line) the speed is the rental pick's: say so
    owned = len(recs) < len(reply["recommendations"]) and recs
    line = t.say("jobspeed.line_rental" if owned else "jobspeed.line", lang, rate=rate_text(sp['rate']),
                 unit=t.say(f"unit.{sp['unit']}", lang), gpus=sp["gpus"], gpu=recs[0]["gpu_name"] if owned else "")
    lines = [cite.after(line, claims.get("speed"))]
    items = dict(per_epoch=f"{sp.get('items_per_epoch') or 0:,.0f}", epochs=f"{sp.get('epochs') or 0:g}",
                 items=f"{sp.get('items') or 0:,.0f}", rate=rate_text(sp['rate']),
                 unit=t.say(f"items.{sp['item_unit']}", lang) if sp.get("item_unit") else "")
    audio = _audio_hours(reply, sp)
    if audio:          # batch transcription: the hours of audio over the real-time factor, shown as the division
        lines.append("      " + t.say("jobspeed.audio_hours", lang, audio=f"{audio:,.0f}", rate=rate_text(sp["rate"]),
                                      hours=hours_text(sp["hours"])))
    elif sp.get("hours") is not None and sp.get("items") and sp["hours"] < SHORT_JOB_H and sp.get("rate"):
        gpu_time = short_time(t, sp["items"] / sp["rate"], lang)
        lines.append("      " + t.say("jobspeed.items_short", lang, time=gpu_time, **items))
    elif sp.get("hours") is not None and sp.get("items"):
        lines.append("      " + t.say("jobspeed.items_hours", lang, hours=hours_text(sp['hours']), **items))
    elif sp.get("hours") is not None and sp["hours"] < 0.1:      # minutes, not '0 h'
        lines.append("      " + t.say("jobspeed.short", lang, time=short_time(t, sp["hours"] * 3600, lang)))
    elif sp.get("hours") is not None:
        lines.append("      " + t.say("jobspeed.hours", lang, hours=hours_text(sp['hours'])))
    c = reply.get("compute") or {}
    if c.get("items") and c.get("deadline_days"):
        lines.append("      " + t.say("compute.deadline_miss", lang, deadline=f"{c['deadline_days']:g}",
                                      needed=c["gpus_for_deadline"]))
    # live calls: what the other way of showing words costs, against the plan's (interim results re-transcribe each
    # second; final transcripts only transcribe each utterance once)
    for term, key, field in (("GPUs for final transcripts only", "jobspeed.live_streams", "final"),
                             ("GPUs with interim results", "jobspeed.live_final", "interim")):
        other = next((x for x in sp.get("terms") or [] if x.get("name") == term), None)
        if sp.get("streams_per_gpu") and other and sp.get("target"):
            lines.append("      " + t.say(key, lang, per=sp["streams_per_gpu"], streams=f"{sp['target']:,.0f}",
                                          gpus=sp.get("gpus_for_target") or "?",
                                          **{field: other["formula"].split(" / ")[1].split(" ")[0],
                                             f"{field}_gpus": f"{other['value']:,.0f}"}))
    if sp.get("gpus_for_target") and not (recs and recs[0].get("capacity")):     # the capacity line says it
        lines.append("      " + t.say("jobspeed.target", lang, target=f"{sp['target']:g}", gpus=sp["gpus_for_target"],
                                      unit=t.say(f"unit.{sp['unit']}", lang)))
    return lines


def batch_lines(t: Templates, reply: dict[str, Any], b: dict[str, Any], lang: str, cite: Citer,
                sources: list[str] | None) -> list[str]:
    """A batch job: its tokens, one replica's rate at its maximum batch, the GPU-hours, and the replicas and hours
    the deadline (or, without one, the pick) takes; the rate cites the GPU's figures as a serving speed does."""
    top = next((r for r in rentals(reply["recommendations"]) if r.get("label") == "pick"), None)
    unit = t.say(f"unit.item.{b['unit']}", lang)
    replica = f"{top['gpus_total']}x {top['gpu_name']}" if top else "?"
    rate = b["items_per_s_per_replica"]
    common = dict(items=f"{b['items']:,}", unit=unit, replica=replica,
                  gpu_hours=f"{b['gpu_hours']:,.0f}" if b["gpu_hours"] >= 10 else f"{b['gpu_hours']:.1f}",
                  rate=f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}")
    if b["task"] != "images":
        key = "batch.tokens_embed" if b["task"] == "embed" else \
            "batch.tokens_image" if b["image_tokens"] else "batch.tokens"
        per_item = t.say(key, lang, image=f"{b['image_tokens']:,}", prompt=f"{b['prompt_tokens']:,}",
                         output=f"{b['output_tokens']:,}")
        tps = b.get("output_tokens_per_s_per_replica")
        key = "batch.rate_encoder" if b.get("encoder") else "batch.line" if tps and b["task"] != "embed" \
            else "batch.rate_plain"
        line = t.say(key, lang, per_item=per_item,
                     total=f"{b['total_tokens']:,}", tps=f"{tps or 0:,}", conc=b["replica_concurrency"], **common)
    else:
        line = t.say("batch.line_images", lang, **common)
    # an encoder or an image model runs one forward pass an item: no engine batch defaults, no KV cache to cite
    sources = list(sources or []) + ([] if b.get("encoder") or b["task"] == "images" else
                                     ["vllm-batch-defaults", "serving-vllm-paged-kv"])
    each = (reply.get("slots") or {}).get("items_each")
    if each and each.get("per") and each["count"] * each["per"] == b["items"]:
        # '10k PDFs of 20 pages each': the pages as the product said, then the line over them
        line = t.say("batch.items_each", lang, count=f"{each['count']:,}", container=each["container"],
                     per=each["per"], unit=unit, items=f"{b['items']:,}") + "; " + line
    out = [cite.after(line, sources)]
    deadline = (reply.get("slots") or {}).get("deadline_days")
    # the pick's own hours (as its cost line rounds them), so the two lines never disagree in the last digit
    hours = f"{(top.get('job_hours') if top and top.get('job_hours') else b['hours']):,.1f}"
    startup = f"{b['startup_h'] * 60:.0f}"
    if top and top.get("breaks"):
        out.append("      " + t.say("batch.miss", lang, replicas=b["replicas"], hours=hours,
                                    gpus=b["replicas"] * top["gpus_total"]))
    elif deadline:
        out.append("      " + t.say("batch.deadline", lang, deadline=_hours_said(deadline * 24), replicas=b["replicas"],
                                    hours=hours, startup=startup))
    else:
        out.append("      " + t.say("batch.free_one" if b["replicas"] == 1 else "batch.free", lang,
                                    replicas=b["replicas"], hours=hours, days=days_text(b['hours']),
                                    startup=startup))
    return out
