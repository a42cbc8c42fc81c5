"""Comparing two replies in plain words (`audit replay`: the reply recorded then, the one given today)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """One difference between two replies, in plain words (`text`)."""
    kind: str            # status | top_pick | price | fits | instances | added | removed | checklist | memory | kb
    subject: str         # what changed: "status", a flavor, a checklist item, "memory"
    old: Any
    new: Any
    text: str

    def __str__(self) -> str:
        return self.text


def _recs(reply: dict[str, Any]) -> list[dict[str, Any]]:
    recs = (reply or {}).get("recommendations") or []
    return [r for r in recs if isinstance(r, dict)]


def _rec_key(rec: dict[str, Any]) -> str:
    return f"{rec.get('provider') or '?'}/{rec.get('flavor') or '?'}"


def _rec_label(rec: dict[str, Any] | None) -> str:
    if not rec:
        return "nothing"
    n = rec.get("instances") or 1
    gpu = rec.get("gpu")
    count = rec.get("gpu_count")
    inside = f"{count} x {gpu}" if gpu and count else (gpu or "?")
    where = f", {rec['provider']}" if rec.get("provider") else ""
    return f"{n} x {rec.get('flavor') or '?'} ({inside}{where})"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _fmt(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value is not None else "?"


def diff_records(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """What changed between two reply dicts (the one recorded, the one given today), in plain words.

    Compares: status, the top pick, each recommendation's price / fit / instance count, recommendations
    added or dropped, checklist statuses, the memory estimate per GPU and the knowledge-base version.
    An empty list means the advice is the same.
    """
    old, new = old or {}, new or {}
    changes: list[Change] = []
    if old.get("status") != new.get("status"):
        changes.append(Change("status", "status", old.get("status"), new.get("status"),
                              f"Status changed from {old.get('status')} to {new.get('status')}."))
    old_recs, new_recs = _recs(old), _recs(new)
    changes += _top_pick_changes(old_recs, new_recs)
    changes += _recommendation_changes(old_recs, new_recs)
    changes += _checklist_changes(old, new)
    changes += _memory_changes(old, new)
    k0, k1 = old.get("kb_version"), new.get("kb_version")
    if k0 and k1 and k0 != k1:
        changes.append(Change("kb", "kb_version", k0, k1,
                              f"Knowledge base changed ({str(k0)[:12]} -> {str(k1)[:12]})."))
    return changes


def _top_pick_changes(old_recs: list[dict[str, Any]], new_recs: list[dict[str, Any]]) -> list[Change]:
    """The top pick replaced, gone or new (the same flavor with another count is reported per recommendation)."""
    old_top, new_top = (old_recs[0] if old_recs else None), (new_recs[0] if new_recs else None)
    old_key = _rec_key(old_top) if old_top else None
    new_key = _rec_key(new_top) if new_top else None
    if old_key == new_key:
        return []
    if old_top is None:
        return [Change("top_pick", "top pick", None, new_key,
                       f"Top pick is now {_rec_label(new_top)}; there was none.")]
    if new_top is None:
        return [Change("top_pick", "top pick", old_key, None,
                       f"No recommendation any more; it was {_rec_label(old_top)}.")]
    return [Change("top_pick", "top pick", old_key, new_key,
                   f"Top pick changed from {_rec_label(old_top)} to {_rec_label(new_top)}.")]


def _recommendation_changes(old_recs: list[dict[str, Any]], new_recs: list[dict[str, Any]]) -> list[Change]:
    """Per flavor: dropped, price, fit and instance count changed; then the newly recommended ones."""
    changes: list[Change] = []
    old_by = {_rec_key(r): r for r in old_recs}
    new_by = {_rec_key(r): r for r in new_recs}
    for key, before in old_by.items():
        after = new_by.get(key)
        flavor = before.get("flavor") or key
        if after is None:
            changes.append(Change("removed", key, _rec_label(before), None, f"{flavor} is no longer recommended."))
            continue
        changes += _price_change(key, flavor, before, after)
        f0, f1 = before.get("fits"), after.get("fits")
        if f0 != f1 and f0 is not None and f1 is not None:
            changes.append(Change("fits", key, f0, f1, f"{flavor}: {'now fits' if f1 else 'no longer fits'} the job."))
        n0, n1 = before.get("instances"), after.get("instances")
        if n0 != n1 and n0 is not None and n1 is not None:
            changes.append(Change("instances", key, n0, n1, f"{flavor}: {n0} -> {n1} instance(s) needed."))
    for key, after in new_by.items():
        if key not in old_by:
            changes.append(Change("added", key, None, _rec_label(after), f"Newly recommended: {_rec_label(after)}."))
    return changes


def _price_change(key: str, flavor: str, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    p0, p1 = _num(before.get("price_per_hour")), _num(after.get("price_per_hour"))
    c0, c1 = before.get("currency"), after.get("currency")
    if not ((p0 is None) != (p1 is None) or (p0 is not None and p1 is not None and abs(p0 - p1) > 1e-9) or
            (p0 is not None and c0 != c1)):
        return []
    if p0 is None:
        text = f"{flavor}: now priced at {_fmt(p1)} {c1 or ''}/h (no price before)."
    elif p1 is None:
        text = f"{flavor}: no price any more (was {_fmt(p0)} {c0 or ''}/h)."
    elif c0 != c1:
        text = f"{flavor}: price {_fmt(p0)} {c0 or '?'}/h -> {_fmt(p1)} {c1 or '?'}/h (currency changed)."
    else:
        pct = f" ({(p1 - p0) / p0 * 100:+.0f} %)" if p0 else ""
        text = f"{flavor}: price {_fmt(p0)} -> {_fmt(p1)} {c1 or ''}/h{pct}."
    return [Change("price", key, p0, p1, text.replace(" /h", "/h"))]


def _checklist_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes: list[Change] = []
    old_check = {c.get("item"): c for c in (old.get("checklist") or []) if isinstance(c, dict)}
    new_check = {c.get("item"): c for c in (new.get("checklist") or []) if isinstance(c, dict)}
    for item in list(old_check) + [i for i in new_check if i not in old_check]:
        s0 = (old_check.get(item) or {}).get("status")
        s1 = (new_check.get(item) or {}).get("status")
        if s0 == s1:
            continue
        if s0 is None:
            text = f"Checklist {item}: new item, {s1}."
        elif s1 is None:
            text = f"Checklist {item}: no longer checked (was {s0})."
        else:
            text = f"Checklist {item}: {s0} -> {s1}."
        detail = (new_check.get(item) or {}).get("text")
        if detail and s1:
            text = f"{text[:-1]}: {detail}"
        changes.append(Change("checklist", str(item), s0, s1, text))
    return changes


def _memory_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    m0 = _num(((old.get("memory") or {}) if isinstance(old.get("memory"), dict) else {}).get("per_gpu_gib"))
    m1 = _num(((new.get("memory") or {}) if isinstance(new.get("memory"), dict) else {}).get("per_gpu_gib"))
    if not ((m0 is None) != (m1 is None) or (m0 is not None and m1 is not None and abs(m0 - m1) >= 0.05)):
        return []
    if m0 is None:
        text = f"Memory estimate is now {_fmt(m1)} GiB per GPU (none before)."
    elif m1 is None:
        text = f"No memory estimate any more (was {_fmt(m0)} GiB per GPU)."
    else:
        text = f"Memory per GPU: {_fmt(m0)} -> {_fmt(m1)} GiB."
    return [Change("memory", "memory", m0, m1, text)]
