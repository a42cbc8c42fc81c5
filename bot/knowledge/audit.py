"""`gpu-advisor kb audit`: what in the knowledge base a decision could rest on without enough behind it.

Four lists, each a finding a person can act on: records whose only support is weak (the seed article alone, a
source with no address), flavors documented only by a same-stack cloud, decision-relevant fields no source fills
(interconnect on multi-GPU flavors, RDMA, bf16/fp8 of GPUs whose note does not say "unsupported"), and prices or
exchange rates older than the warning age.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from bot.knowledge.loader import KnowledgeBase

_SAYS_UNSUPPORTED = ("unsupported", "no bf16", "no fp8", "has no bf16", "has no fp8")


def _weakly_sourced(kb: KnowledgeBase) -> list[dict[str, str]]:
    out = []
    for sid, s in kb.sources.items():
        if not s.url and not s.section:
            out.append({"id": sid, "why": "source without a URL or section: nobody can find it again"})
    for table in ("gpus", "models", "flavors", "topics", "claims"):
        for rid, rec in getattr(kb, table).items():
            if table != "claims" and list(rec.sources) == ["seed-article"]:
                out.append({"id": rid, "why": "cites only the seed article, which claims.yaml shows is often wrong"})
    for fid, f in kb.flavors.items():
        if f.price and f.price.kind in ("list", "flagged") and not f.price.sources:
            out.append({"id": fid, "why": f"a {f.price.kind} price without a source"})
    return out


def _unknown_fields(kb: KnowledgeBase) -> list[dict[str, str]]:
    out = []
    for fid, f in kb.flavors.items():
        if f.gpu_count > 1 and f.interconnect is None and not f.vgpu:
            out.append({"id": fid, "field": "interconnect", "why": f"{f.gpu_count} GPUs, link not documented"})
        if f.rdma is None and "training" in f.use:
            out.append({"id": fid, "field": "rdma", "why": "inter-node network not documented"})
    for gid, g in kb.gpus.items():
        note = (g.note or "").lower()
        for field, value in (("bf16", g.bf16_tflops), ("fp8", g.fp8_tflops)):
            if value is None and not any(w in note for w in _SAYS_UNSUPPORTED):
                out.append({"id": gid, "field": field, "why": "null and the note does not say it is unsupported"})
    return out


# The words an imported price's date basis used while a fixed date stood in for the unknown catalog date.
STAND_IN_WORDS = ("stands in", "stand-in", "not known exactly")


def _stale(kb: KnowledgeBase, max_age_days: int, today: dt.date) -> list[dict[str, Any]]:
    out = []
    for fid, f in kb.flavors.items():
        if f.price and f.price.date and (today - f.price.date).days > max_age_days:
            out.append({"id": fid, "date": f.price.date.isoformat(), "age_days": (today - f.price.date).days,
                        "kind": f.price.kind})
    for rid, r in kb.rates.items():
        if (today - r.date).days > max_age_days:
            out.append({"id": rid, "date": r.date.isoformat(), "age_days": (today - r.date).days, "kind": "rate"})
    return out


def _undated(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Published prices no dated source gives: answers call them undated; a dated reading would date them."""
    return [{"id": fid, "why": f.price.date_basis or "no date and no basis", "kind": f.price.kind}
            for fid, f in kb.flavors.items()
            if f.price and f.price.kind in ("list", "flagged", "local") and f.price.date is None]


def _stand_ins(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """A date that stands in for an unknown one (the old catalog import did this) makes the age warning a lie."""
    out = []
    for fid, f in kb.flavors.items():
        text = " ".join(filter(None, [f.price.date_basis, f.price.basis])).lower() if f.price else ""
        if f.price and f.price.date and any(w in text for w in STAND_IN_WORDS):
            out.append({"id": fid, "why": f"date {f.price.date} stands in for an unknown one"})
    return out


def audit(kb: KnowledgeBase, max_age_days: int, today: dt.date | None = None) -> dict[str, Any]:
    today = today or dt.date.today()
    return {
        "today": today.isoformat(), "max_age_days": max_age_days,
        "weakly_sourced": _weakly_sourced(kb),
        "same_stack_only": [{"id": fid, "why": "size known only from Open Telekom Cloud's docs of the same stack"}
                            for fid, f in kb.flavors.items() if f.evidence == "same-stack"],
        "unknown_decision_fields": _unknown_fields(kb),
        "stale_prices": _stale(kb, max_age_days, today),
        "undated_prices": _undated(kb),
        "stand_in_dates": _stand_ins(kb),
    }
