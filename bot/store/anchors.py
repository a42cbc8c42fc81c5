"""Anchors of the audit chain: the head (record count, last id, its hash), timestamped, kept outside the database.

Why: the hash chain shows an edited or deleted row *inside* the log, but someone who can write the file can
also rewrite every row after it and re-hash them, or cut off the newest rows; the chain still verifies. A copy
of the head kept where the database cannot reach (a file on another system, a Slack channel, a cron job's
mail) closes that gap: `verify_anchors` checks that every anchored row is still there with the same hash.
Since each hash covers all rows before it, one matching anchor vouches for the whole prefix up to it.

An anchor is one JSON line: {"anchor": "gpu-advisor-audit", "at": ..., "count": ..., "head_id": ...,
"head_seq": ..., "head_hash": ...}. Lines that hold no such object (a Slack message's words around it) are
skipped when anchors are read back.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from bot.store.chain import (CHECKPOINT_STATUS, SYSTEM_SURFACE, TEAM_PRUNE_STATUS, format_id, iso_utc, team_gaps,
                             utc_now)

__all__ = ["make_anchor", "read_anchors", "check_anchors", "AnchorProblem", "MARK"]

MARK = "gpu-advisor-audit"
_OBJECT = re.compile(r"\{[^{}]*\"anchor\"\s*:\s*\"" + MARK + r"\"[^{}]*\}")


@dataclass(frozen=True)
class AnchorProblem:
    anchor: dict[str, Any]
    problem: str

    def __str__(self) -> str:
        return f"anchor of {self.anchor.get('at')} ({self.anchor.get('head_id')}): {self.problem}"


def make_anchor(log: Any) -> dict[str, Any]:
    """The head of `log` now (an AuditLog); an empty log anchors count 0."""
    with log._read() as conn:
        count = conn.execute("SELECT count(*) FROM advice").fetchone()[0]
        last = conn.execute("SELECT seq, hash FROM advice ORDER BY seq DESC LIMIT 1").fetchone()
    head_seq, head_hash = (last[0], last[1]) if last else (0, None)
    return {"anchor": MARK, "at": iso_utc(utc_now()), "count": count, "head_id": format_id(head_seq) if last else None,
            "head_seq": head_seq, "head_hash": head_hash}


def read_anchors(text: str) -> list[dict[str, Any]]:
    """Every anchor object in `text` (a file of JSON lines, or pasted Slack messages)."""
    found = []
    for match in _OBJECT.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(obj.get("head_seq"), int):
            found.append(obj)
    return found


def check_anchors(log: Any, anchors: Iterable[dict[str, Any]]) -> list[AnchorProblem]:
    """For each anchor: is its head row still there with the same hash (or sealed by a prune checkpoint)?"""
    problems = []
    with log._read() as conn:
        high = log._high_water(conn)
        checkpoints = [json.loads(r[0]).get("checkpoint", {}) for r in conn.execute(
            "SELECT reply FROM advice WHERE surface = ? AND status = ?", (SYSTEM_SURFACE, CHECKPOINT_STATUS))]
        gaps = team_gaps(r[0] for r in conn.execute("SELECT reply FROM advice WHERE surface = ? AND status = ?",
                                                    (SYSTEM_SURFACE, TEAM_PRUNE_STATUS)).fetchall())
        for anchor in anchors:
            problem = _check_one(conn, anchor, high, checkpoints, gaps)
            if problem:
                problems.append(AnchorProblem(anchor, problem))
    return problems


def _check_one(conn: Any, anchor: dict[str, Any], high: int, checkpoints: list[dict[str, Any]],
               gaps: dict[int, tuple[int, str, str]] | None = None) -> str | None:
    seq, digest = anchor.get("head_seq"), anchor.get("head_hash")
    if not seq:
        return None                                     # anchored an empty log: nothing to hold
    if seq > high:
        return (f"the log was truncated: it anchored {format_id(seq)}, but the log has only reached "
                f"{format_id(high)} since")
    row = conn.execute("SELECT hash FROM advice WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        sealed = [c for c in checkpoints if c.get("through_seq") == seq]
        if sealed:
            return None if sealed[0].get("anchor_hash") == digest else \
                f"{format_id(seq)} was pruned, and the checkpoint that seals it holds another hash"
        if any(isinstance(c.get("through_seq"), int) and c["through_seq"] >= seq for c in checkpoints):
            return None                                 # pruned by retention, inside a later checkpoint
        run = next(((first, *gap) for first, gap in (gaps or {}).items() if first <= seq <= gap[0]), None)
        if run is not None:                             # removed by a per-team prune that lists it
            return None if run[1] != seq or run[3] == digest else \
                f"{format_id(seq)} was pruned for its team, and the checkpoint listing it holds another hash"
        return f"{format_id(seq)} is missing: rows were deleted"
    if row[0] != digest:
        return f"{format_id(seq)} now has another hash: the log was rewritten from there or before"
    return None
