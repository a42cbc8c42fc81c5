"""The user's own cards in words (the `yours` plan of bot/plan/own.py): fits or not on every card they named, the
layout, what was changed to make it fit, how long it takes, and, when nothing fits, what would."""
from __future__ import annotations

from typing import Any

from bot.render.templates import Templates

MFU_SHOWN = "{:.0%}"


def own_lines(verdict: dict[str, Any], t: Templates, lang: str, refs: str, owned: bool
              ) -> tuple[list[str], list[str]]:
    """The verdict line (head: fits or not, with the layout) and its time on their cards (continuation lines,
    indented): the short form; then what made it fit, the network, the data loading: the details."""
    row = verdict["row"]
    have = f"{row['gpu_memory_gib']:g}"
    need = f"{row['per_gpu_gib']:.1f}"
    layout = layout_text(row, t, lang)
    if row["fits"] and row.get("for_deadline"):
        v = t.say(f"yours.fits_for_{row['for_deadline']}", lang, n=row["gpus_total"], need=need, have=have,
                  layout=layout)
    elif row["fits"] and row.get("one_card_gib"):
        key = "yours.fits_on_n_offload" if row.get("one_card_offload") else "yours.fits_on_n"
        steps = row.get("one_card_steps") or []
        fix = t.say("yours.one_fix", lang, steps=_steps_text(steps, t, lang)) if steps and steps[-1]["fits"] else ""
        v = t.say(key, lang, n=row["gpus_total"], one=f"{row['one_card_gib']:.1f}", need=need, have=have,
                  layout=layout, offload=t.say(f"offload_what.{row.get('one_card_offload') or 'none'}", lang), fix=fix)
    elif row["fits"]:
        v = t.say("yours.fits", lang, need=need, have=have, layout=layout)
    else:
        key = "yours.no_room" if row["per_gpu_gib"] <= row["gpu_memory_gib"] else "yours.no_fit"
        v = t.say(key, lang, need=need, have=have, layout=layout, fit_hint=_hint(row, t, lang, have))
    if owned:
        head = t.say("yours.head" if row["gpu"] else "yours.head_card", lang, n=row["cards"], gpu=row["gpu_name"],
                     have=have)
        first = f"{t.say('label.yours', lang)}: {head}{'：' if lang == 'zh' else ': '}{v}"
    else:
        first = t.say("why.user_gpu", lang, gpu=row["gpu_name"], verdict=v)
    short, more = _details(row, t, lang)
    if owned and row.get("extra"):
        short += extra_lines(row["extra"], t, lang)
    if not owned and verdict.get("rentable") is False:
        short.append(t.say("yours.not_rented", lang, gpu=row["gpu_name"]))
    return [f"{first} {refs}".rstrip()] + ["      " + x for x in short], more


def layout_text(row: dict[str, Any], t: Templates, lang: str) -> str:
    """'FSDP over all 2 cards, micro-batch 4, gradient checkpointing, parameters and optimizer state offloaded to
    CPU' or 'tensor parallel over 2 cards, 10 concurrent sequences of 4096 tokens'."""
    lay = row["layout"] or {}
    sep = "，" if lang == "zh" else ", "
    if lay.get("kv_dtype") is not None:          # serving
        parts = [t.say("own.layout.replicas", lang, dp=lay["dp"], tp=lay["tp"]) if lay.get("dp", 1) > 1 else
                 t.say("own.layout.tp", lang, tp=lay["tp"]) if lay.get("tp", 1) > 1 else t.say("own.layout.none", lang)]
        return sep.join(parts)
    n = row["gpus_total"]
    if lay.get("ep", 1) > 1:       # a mixture of experts: experts split inside each 8-card node, ZeRO-1 over all
        parts = [t.say("own.layout.ep", lang, n=n, ep=lay["ep"], per_gpu=lay["experts"] // lay["ep"],
                       experts=lay["experts"])]
        if lay.get("pp", 1) > 1:
            parts.append(t.say("own.layout.pp", lang, pp=lay["pp"]))
    elif lay.get("tp", 1) * lay.get("pp", 1) > 1:      # a dense model across machines: TP inside, PP across
        parts = [t.say("own.layout.3d", lang, tp=lay["tp"], pp=lay["pp"], dp=lay["dp"])]
    else:
        sharding = lay.get("sharding") or "none"
        parts = [t.say(f"own.layout.{'ddp' if sharding == 'none' and n > 1 else sharding}", lang, n=n)]
    mb, acc = lay.get("micro_batch"), lay.get("grad_accumulation") or 1
    if mb:
        parts.append(t.say("own.layout.accum", lang, mb=mb, acc=acc) if acc > 1 else
                     t.say("own.layout.batch", lang, mb=mb))
    if lay.get("checkpointing") == "full":
        parts.append(t.say("own.layout.ckpt", lang))
    if lay.get("chunked_loss"):
        parts.append(t.say("own.layout.chunked", lang))
    if lay.get("optimizer") == "adamw8bit":
        parts.append(t.say("own.layout.adamw8bit", lang))
    if lay.get("offload") in ("full", "optimizer"):
        parts.append(t.say(f"own.layout.offload_{lay['offload']}", lang))
    if (lay.get("rollout_tp") or 1) > 1:
        parts.append(t.say("own.layout.rollout_tp", lang, tp=lay["rollout_tp"]))
    return sep.join(parts)


def change_text(c: dict[str, Any], t: Templates, lang: str, n: int) -> str:
    key = f"own.change.{c['change']}"
    words = t.say(key, lang, n=n, **{k: v for k, v in c.items() if k not in ("change", "per_gpu_gib")}) \
        if key in t.table else c["change"]
    return f"{words} -> {c['per_gpu_gib']:.1f} GiB"


def _steps_text(steps: list[dict[str, Any]], t: Templates, lang: str) -> str:
    """'int8 weights -> 85.2 GiB; int4 weights (AWQ/GPTQ) -> 52.5 GiB': job changes and the memory after each."""
    return "; ".join(f"{t.change(s['change'], lang)} -> {s['per_gpu_gib']:.1f} GiB" for s in steps)


def _hint(row: dict[str, Any], t: Templates, lang: str, have: str) -> str:
    steps = row.get("fit_steps") or []
    if not steps:
        return t.say("fit.none", lang)
    hint = t.say("fit.hint", lang, have=have, steps=_steps_text(steps, t, lang))
    return hint if steps[-1]["fits"] else f"{hint} {t.say('fit.still_too_big', lang)}"


def _details(row: dict[str, Any], t: Templates, lang: str) -> tuple[list[str], list[str]]:
    """The time on their cards (the short form), and what made it fit (or what was tried), the KV budget of a tight
    server, the fewer cards used, the other layouts' times, the data loading (the details)."""
    out, more = [], []
    sep = "；" if lang == "zh" else "; "
    changes = [c for c in row.get("changes") or [] if c["change"] != "kv budget"]
    if changes:
        key = "yours.changed" if row["fits"] else "yours.tried"
        more.append(t.say(key, lang, changes=sep.join(change_text(c, t, lang, row["gpus_total"]) for c in changes)))
    kv = next((c for c in row.get("changes") or [] if c["change"] == "kv budget"), None)
    if kv and row["fits"]:
        more.append(t.say("yours.kv", lang, tokens=f"{kv['tokens']:,}", full=kv["sequences"],
                         context=f"{(row['layout'] or {}).get('context') or 0:,}", users=kv["users"],
                         request=f"{kv['request']:,}"))
    if row.get("fewer_cards"):
        more.append(t.say("yours.fewer", lang, used=row["gpus_total"], n=row["cards"]))
    b = row.get("batch")
    if row["fits"] and b:           # a batch job on their cards: how long, and whether the deadline holds
        key = "yours.batch_hours" if b["meets"] else "yours.batch_miss"
        out.append(t.say(key, lang, replicas=b["replicas"], tp=b["tp"],
                         rate=f"{b['items_per_s']:,.0f}" if b["items_per_s"] >= 100 else f"{b['items_per_s']:.3g}",
                         hours=f"{b['hours']:,.1f}", days=days_text(b['hours']),
                         deadline=f"{(b['deadline_h'] or 0):,.0f}"))
    elif row["fits"] and row["gpu"] is None and row.get("timed"):
        out += _bracket_lines(row, t, lang)
    elif row["fits"] and row.get("job_hours") and row.get("mfu") is None:
        # images, clips (dataset x epochs): their own speed model, no MFU to state
        items = _items_lines(row, t, lang)
        out, more = out + items[:1], more + items[1:]        # the rate and hours; the CPUs to feed it
    elif row["fits"] and row.get("job_hours"):
        # one card: no 'all 1 cards', and no link between cards to name
        out.append(t.say("yours.hours" if row["gpus_total"] > 1 else "yours.hours_single", lang,
                         hours=f"{row['job_hours']:,.0f}", days=days_text(row['job_hours']),
                         n=row["gpus_total"], mfu=MFU_SHOWN.format(row["mfu"]) if row.get("mfu") else "?",
                         link=t.say(f"yours.link.{_intra(row)}", lang)))
        if row.get("zero3_hours"):
            more.append(t.say("yours.zero3_hours", lang, hours=f"{row['zero3_hours']:,.0f}",
                             days=days_text(row['zero3_hours'])))
        if row.get("network_assumed"):
            out.append(_assumed_fabric(row, t, lang))
        if row.get("job_hours_rdma"):
            key = "yours.network_tcp" if row.get("network_said") else "yours.network"
            out.append(t.say(key, lang, machines=row["instances"], rate=f"{row.get('network_gbps') or 25:g}",
                             hours=f"{row['job_hours_rdma']:,.0f}", days=days_text(row['job_hours_rdma'])))
    elif row["fits"] and (row["layout"] or {}).get("kv_dtype") is None and row.get("mfu") is None:
        # training, no time: with no tokens, how long needs them; with them said, the card has no speed on file
        out.append(t.say("yours.hours_no_speed" if row.get("work_said") else "yours.hours_unknown", lang,
                         gpu=row["gpu_name"]))
    elif row["fits"] and row.get("capacity") and row["capacity"]["unit"] != "sequences" and not row.get("encoder"):
        out.append(capacity_text(row, t, lang))
    elif row["fits"] and row.get("encoder"):
        e = row["encoder"]
        key = "yours.encoder" if not e["qps"] else "yours.encoder_enough" \
            if e["requests_per_s"] >= e["qps"] else "yours.encoder_short"
        out.append(t.say(key, lang, n=row["gpus_total"], rps=f"{e['requests_per_s']:,.0f}", batch=e["batch"],
                         ms=f"{e['request_ms']:.0f}", qps=f"{e['qps'] or 0:,.0f}", need=e["cards_for_qps"] or "?"))
    elif row["fits"] and row.get("tpot_ms") and row.get("users"):
        out.append(t.say("yours.tpot", lang, tpot=f"{row['tpot_ms']:.0f}", users=row["users"]))
    rent = row.get("rent")
    if row["fits"] and rent:          # the count they mean to rent, priced for the hours it takes
        out.append(t.say("yours.rent_cost", lang, n=rent["cards"], cost=money_text(rent["cost"]),
                         ccy=rent["currency"], per=f"{rent['per_card']:.2f}", flavor=rent["flavor"],
                         provider=rent.get("provider_name") or rent["provider"], hours=f"{rent['hours']:,.1f}"))
    return out, more


def capacity_text(row: dict[str, Any], t: Templates, lang: str) -> str:
    """'8 x A800 carry about 4,900 simultaneous streams (615 a card): enough for 300, on 1 card(s)': the load asked
    against what their cards carry, in the load's unit (plan/capacity.py), and the cards it needs."""
    cap = row["capacity"]
    key = "yours.capacity_enough" if cap["enough"] else "yours.capacity_short"
    return t.say(key, lang, n=row["cards"], gpu=row["gpu_name"], total=_num(cap["total"]),
                 unit=t.say(f"capacity.unit.{cap['unit']}", lang), per=_num(cap["per_replica"]),
                 load=_num(cap["load"]), need=cap["need"])


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}".rstrip("0").rstrip(".")


def _assumed_fabric(row: dict[str, Any], t: Templates, lang: str) -> str:
    """Their network was not named: the time assumes the RDMA fabric their server class ships with (NVLink or HCCS
    inside); the time over plain TCP Ethernet is the risk said beside it, or that it would not be much slower."""
    server = t.say(f"yours.server.{row.get('intra_link') or 'pcie'}_{'ascend' if _ascend(row) else 'gpu'}", lang)
    tcp = row.get("job_hours_tcp")
    if tcp and tcp > row["job_hours"] * 1.1:
        return t.say("yours.network_assumed", lang, machines=row["instances"], server=server,
                     hours=f"{tcp:,.0f}", days=days_text(tcp))
    return t.say("yours.network_assumed_same", lang, machines=row["instances"], server=server)


def _ascend(row: dict[str, Any]) -> bool:
    return (row.get("gpu") or "").startswith("ascend")


def _intra(row: dict[str, Any]) -> str:
    """The link inside their machines as said: NVLink (SXM), HCCS (Ascend NPU modules), or PCIe assumed."""
    link = row.get("intra_link") or "pcie"
    return "hccs" if link == "nvlink" and _ascend(row) else link


def _items_lines(row: dict[str, Any], t: Templates, lang: str) -> list[str]:
    """Images or clips on their cards: the rate on all of them, the dataset x epochs it runs, the hours; for images,
    the CPU cores each machine needs to decode that many (their CPU is not known: a requirement, not a verdict)."""
    n, hours, it = row["gpus_total"], row["job_hours"], row.get("items")
    if not it or not row.get("items_per_s"):
        return [t.say("yours.hours_items" if n > 1 else "yours.hours_items_one", lang, hours=hours_text(hours),
                      days=days_text(hours), n=n)]
    unit = t.say(f"items.{it['item_unit']}", lang)
    out = [t.say("yours.items_rate" if n > 1 else "yours.items_rate_one", lang, n=n,
                 rate=f"{row['items_per_s']:,.0f}", unit=t.say(f"unit.{it['unit']}", lang),
                 per_epoch=f"{it['per_epoch']:,.0f}", epochs=f"{round(it['epochs'], 1):g}", items=f"{it['items']:,.0f}",
                 items_unit=unit, hours=hours_text(hours), days=days_text(hours))]
    feed = row.get("feed")
    if feed:
        out.append(t.say("yours.data_machines" if feed["machines"] > 1 else "yours.data", lang,
                         rate=f"{feed['images_per_s']:,.0f}", cores=f"{feed['cores']:,}",
                         per_core=f"{feed['per_core']:g}", machines=feed["machines"]))
    return out


def _bracket_lines(row: dict[str, Any], t: Templates, lang: str) -> list[str]:
    """A card known by its memory: its time (or time per token) on the fastest and slowest cards on file of that
    memory, or that no such card's speed is on file; and when a deadline falls inside the range, that the card
    decides it."""
    b, mem = row.get("bracket") or [], f"{row['gpu_memory_gib']:g}"
    if not b:
        return [t.say("yours.speed_unknown", lang, mem=mem)]
    fast, slow = b[0], b[-1]
    if fast.get("tpot_ms"):
        return [t.say("yours.tpot_bracket", lang, users=row.get("users") or "?", fast=fast["gpu_name"],
                      slow=slow["gpu_name"], fast_tpot=f"{fast['tpot_ms']:.0f}", slow_tpot=f"{slow['tpot_ms']:.0f}",
                      count=len(b), mem=mem)]
    n = row["gpus_total"]
    on = t.say("yours.on.one", lang) if n == 1 else t.say("yours.on.all", lang, n=n)
    link = t.say("yours.bracket_link", lang) if n > 1 else ""
    if len(b) == 1:
        line = t.say("yours.hours_one", lang, mem=mem, gpu=fast["gpu_name"], hours=f"{fast['hours']:,.0f}", on=on,
                     link=link)
    else:
        line = t.say("yours.hours_bracket", lang, on=on, link=link, fast=fast["gpu_name"], slow=slow["gpu_name"],
                     fast_hours=f"{fast['hours']:,.0f}", slow_hours=f"{slow['hours']:,.0f}", count=len(b), mem=mem)
    if row.get("card_decides"):
        line += ("" if lang == "zh" else " ") + t.say("yours.card_decides", lang, days=f"{row['card_decides']:g}")
    return [line]


def days_text(hours: float) -> str:
    """A wall clock in days beside its hours: one decimal, two under a tenth of a day ('0.23 h (0.01 days)', not
    '(0.0 days)', which reads as no time at all)."""
    days = hours / 24
    if days >= 0.1:
        return f"{days:,.1f}"
    return f"{days:.2f}" if days >= 0.01 else "<0.01"


def hours_text(hours: float) -> str:
    """A job's wall clock as shown: whole hours, one decimal under ten hours, two under one ('0.02 h', not '0.0')."""
    if hours < 0.1:
        return f"{hours:.1g}"
    if hours < 1:
        return f"{hours:.2f}"
    return f"{hours:,.1f}" if hours < 10 else f"{hours:,.0f}"


def money_text(amount: float) -> str:
    """A job's cost as shown: whole units, cents under ten ('0.07 USD', not '0 USD')."""
    return f"{amount:,.2f}" if amount < 10 else f"{amount:,.0f}"


def extra_lines(x: dict[str, Any], t: Templates, lang: str) -> list[str]:
    """Their cluster misses the deadline: the cards of their class it needs in all and the extra over theirs, then
    why rented cards do not simply join their job, and the ways that do meet it (the whole job on a cloud cluster of
    that size, on the named cloud's servers of that card when it sells them; or their cards, with their time or the
    work they finish in time)."""
    days = f"{x['deadline_h'] / 24:g}"
    if x.get("needed"):
        head = t.say("yours.extra", lang, days=days, needed=f"{x['needed']:,}", extra=f"{x['extra']:,}",
                     owned=f"{x['owned']:,}", gpu=x["gpu_name"], hours=f"{x['hours']:,.0f}",
                     run_days=days_text(x["hours"]))
    else:
        head = t.say("yours.extra_none", lang, days=days, gpu=x["gpu_name"])
    where = ""
    if x.get("provider_name") and x.get("same_card_flavors"):
        where = t.say("yours.extra_where", lang, provider=x["provider_name"], gpu=x["gpu_name"],
                      flavors=", ".join(x["same_card_flavors"]))
    elif x.get("provider_name"):
        where = t.say("yours.extra_not_sold", lang, provider=x["provider_name"], gpu=x["gpu_name"])
    tokens = x["tokens_in_time"]
    cut = f"{tokens / 1e9:,.0f}B" if lang == "en" else f"{tokens / 1e8:,.0f} 亿"
    caveat = t.say("yours.extra_caveat" if x.get("needed") else "yours.extra_caveat_none", lang,
                   needed=f"{x['needed']:,}" if x.get("needed") else "", owned=f"{x['owned']:,}",
                   own_days=days_text(x["own_hours"]), tokens=cut, days=days)
    return [head, caveat + (" " + where if where and lang == "en" else where)]
