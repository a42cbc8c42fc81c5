"""`gpu-advisor kb list/show`: records as tables or JSON (flavor JSON fields as DESIGN.md lists them)."""
from __future__ import annotations

import json
from typing import Any

import click

from bot.knowledge.loader import default_knowledge
from bot.records.kb import Flavor


def flavor_json(f: Flavor) -> dict[str, Any]:
    p = f.price
    return {"id": f.id, "provider": f.provider, "flavor": f.flavor, "family": f.family, "service": f.service,
            "gpu": f.gpu, "gpu_count": f.gpu_count, "gpu_memory_gib": f.gpu_memory_gib, "vcpus": f.vcpus,
            "memory_gib": f.memory_gib, "interconnect": f.interconnect, "rdma": f.rdma, "network": f.network,
            "interconnect_evidence": f.interconnect_evidence, "rdma_evidence": f.rdma_evidence,
            "price_region": p.region if p else None, "price_flags": list(p.flags) if p else [],
            "price_per_hour": p.on_demand if p else None, "spot_price_per_hour": p.spot if p else None,
            "currency": p.currency if p else None, "price_kind": p.kind if p else None,
            "price_date": p.date.isoformat() if p and p.date else None,
            "price_date_basis": p.date_basis if p else None,
            "spot_price_date": p.spot_date.isoformat() if p and p.spot_date else None,
            "price_basis": p.basis if p else None,
            "region": f.region, "evidence": f.evidence, "sources": list(f.sources), "note": f.note}


def rule_quote_problems(rules: Any, kb: Any) -> list:
    """Each rule's `justify` quote must stand, verbatim, in the note of the source it names: a rule cannot
    rest on a sentence nobody can find."""
    from bot.records.errors import Problem
    out = []
    for r in rules:
        for q in r.justify:
            src = kb.sources.get(q.source)
            if src is not None and q.quote not in " ".join((src.note or "").split()):
                out.append(Problem("rules/advice.yaml", f"rules[{r.id}].justify",
                                   f"the quote is not in source '{q.source}''s note",
                                   "copy the sentence into that source's note (verbatim), or fix the quote"))
    return out


def record_json(rec: Any) -> dict[str, Any]:
    if isinstance(rec, Flavor):
        return flavor_json(rec)
    return json.loads(rec.model_dump_json())


def list_records(what: str, provider: str | None, as_json: bool) -> None:
    kb = default_knowledge()
    table = getattr(kb, what)
    recs = list(table.values())
    if provider:
        if provider not in kb.providers:
            from bot.records.errors import NotFound
            from bot.knowledge.loader import did_you_mean
            raise NotFound(f"unknown provider '{provider}'", fix="use one of " + ", ".join(kb.providers),
                           did_you_mean=did_you_mean(provider, kb.providers))
        recs = [r for r in recs if getattr(r, "provider", provider) == provider]
    if as_json:
        click.echo(json.dumps([record_json(r) for r in recs], ensure_ascii=False, default=str))
        return
    for r in recs:
        if what == "flavors":
            price = f"{r.price.on_demand:.2f} {r.price.currency}/h {r.price.kind}" if r.price and r.price.on_demand \
                is not None else "no price"
            click.echo(f"{r.id:<44} {r.gpu_count}x {r.gpu:<12} {r.gpu_memory_gib:>6g} GiB  "
                       f"{(r.interconnect or '?'):<8} rdma={'?' if r.rdma is None else r.rdma!s:<5} {price:<26} {r.evidence}")
        elif what == "gpus":
            click.echo(f"{r.id:<16} {r.name:<32} {r.memory_gib:>6g} GiB  {r.memory_bandwidth_gbs or '?':>6} GB/s  "
                       f"bf16 {r.bf16_tflops or '-':>6}  {r.architecture}")
        elif what == "models":
            click.echo(f"{r.id:<34} {r.params_b:>8g}B  {r.kind:<18} {', '.join(r.aliases[:3])}")
        elif what == "sources":
            click.echo(f"{r.id:<40} {r.title[:70]:<70} {r.url or r.section or ''}")
        else:
            click.echo(f"{r.id:<32} {getattr(r, 'name', None) or getattr(r, 'title_en', None) or getattr(r, 'claim', '')[:80]}")
    click.echo(f"({len(recs)} {what})", err=True)


def show_record(rid: str, as_json: bool) -> None:
    kb = default_knowledge()
    rec = kb.get(rid)
    data = record_json(rec)
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
        return
    for k, v in data.items():
        if v in (None, [], ""):
            continue
        click.echo(f"{k:<22} {v if not isinstance(v, (list, dict)) else json.dumps(v, ensure_ascii=False, default=str)}")
    for sid in data.get("sources", []):
        s = kb.sources.get(sid)
        if s:
            click.echo(f"  source {sid}: {s.title} {s.url or s.section or ''}")


# ----- kb update-prices / kb audit ---------------------------------------------------------------------------------
def _pct(c: dict[str, Any]) -> str:
    return f" ({c['pct']:+.1f} %)" if c.get("pct") is not None else ""


def print_update_report(r: dict[str, Any], as_json: bool) -> None:
    """What `kb update-prices` changed, newest facts first: sizes added or gone, price moves, flagged rows."""
    if as_json:
        click.echo(json.dumps(r, ensure_ascii=False, default=str))
        return
    verb = "would change" if r["dry_run"] else "changed"
    dated = (f"prices dated {r['date']}" + (f" (version {r['version']})" if r.get("version") else "")
             if r["date"] else "prices dated by versions.yaml where a dated source gives them")
    click.echo(f"catalog for {', '.join(r['providers'])}, {dated}: "
               f"{len(r['added'])} added, {len(r['removed'])} removed, {len(r['changed'])} price field(s) {verb}")
    for fid in r["added"]:
        click.echo(f"  + {fid}")
    for fid in r["removed"]:
        click.echo(f"  - {fid}")
    for c in r["changed"]:
        click.echo(f"  ~ {c['id']} {c['field']}: {c['old']} -> {c['new']}{_pct(c)}")
    if r["flagged"]:
        click.echo(f"  ! {len(r['flagged'])} row(s) the catalog flags as data quirks, imported as 'flagged' "
                   f"(never a list price): {', '.join(r['flagged'][:6])}{' ...' if len(r['flagged']) > 6 else ''}")
    if r.get("undated"):
        click.echo(f"  ? {len(r['undated'])} row(s) undated (no --date and no dated reading): answers say so; give "
                   f"--date with the catalog commit's date to date them")
    for path in r["written"]:
        click.echo(f"  wrote {path}")
    if r["written"]:
        click.echo("Run `gpu-advisor kb validate`, then commit knowledge/flavors/.")


def print_audit(report: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, default=str))
        return
    titles = {"weakly_sourced": "facts without a findable or independent source",
              "same_stack_only": "flavors documented only by a same-stack cloud (Open Telekom Cloud)",
              "unknown_decision_fields": "decision-relevant fields no source fills (unknown, not 'no')",
              "stale_prices": f"prices and rates older than {report['max_age_days']} days (on {report['today']})",
              "undated_prices": "prices no dated source gives (answers say 'undated')",
              "stand_in_dates": "prices whose date is a stand-in, not a source's"}
    for key, title in titles.items():
        rows = report[key]
        click.echo(f"{title}: {len(rows)}")
        for row in rows[:40]:
            detail = row.get("why") or f"{row.get('date')}, {row.get('age_days')} days, {row.get('kind')}"
            click.echo(f"  {row['id']}{' ' + row['field'] if row.get('field') else ''}: {detail}")
        if len(rows) > 40:
            click.echo(f"  ... and {len(rows) - 40} more (--json lists all)")


def print_offers(report: dict[str, Any], as_json: bool) -> None:
    """`kb gpus`: per GPU a table, one offer a line, cheapest per GPU-hour first; an undated price says so."""
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, default=str))
        return
    where = f" in {report['region']}" if report["region"] else ""
    for g in report["gpus"]:
        _print_gpu_offers(g, where)


def _print_gpu_offers(g: dict[str, Any], where: str) -> None:
    offers = g["offers"]
    click.echo(f"{g['name']} ({g['memory_gib']:g} GiB): {len(offers)} offer(s){where}")
    if not offers:
        click.echo("  none on file: no cloud or platform read rents it" + (" there" if where else "")
                   + "; ask a provider for a quote.")
        return
    click.echo(f"  {'PROVIDER':<12} {'FLAVOR':<34} {'GPUS':>4} {'REGION':<13} {'PER GPU-H':>14} {'SPOT/GPU-H':>11}"
               f"  PRICE DATE")
    for o in offers:
        price = f"{o['per_gpu_hour']:.2f} {o['currency']}" if o["per_gpu_hour"] is not None else "ask for quote"
        spot = f"{o['spot_per_gpu_hour']:.2f}" if o["spot_per_gpu_hour"] is not None else "-"
        when = o["price_date"] or ("undated" if o["price_per_hour"] is not None else "-")
        if o["price_kind"] and o["price_kind"] != "list":
            when += f" ({o['price_kind']})"
        click.echo(f"  {o['provider']:<12} {o['flavor']:<34} {o['gpu_count']:>4} {o['region'] or '-':<13} "
                   f"{price:>14} {spot:>11}  {when}")
