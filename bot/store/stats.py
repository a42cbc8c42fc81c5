"""`gpu-advisor audit stats`: how the advice is used, by ISO week and intent.

Per (week, intent): turns, answers (status answer), questions asked back (status follow_up), follow-up turns
(every turn after the first of its conversation: a reply to a question, a refinement button, a thread reply),
and Helpful / Not helpful votes on that week's advice (table `feedback`, bot/store/slack_state.py; one vote per
person and answer). Read with sqlite-utils queries; the window function needs SQLite 3.25 or newer.
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import asdict, dataclass
from typing import Any

from bot.store.db import connect

_TURNS = """
SELECT a.id, a.ts, a.status, coalesce(a.intent, '-') AS intent,
       row_number() OVER (PARTITION BY coalesce(a.session, a.id) ORDER BY a.seq) AS turn
FROM advice a
WHERE a.surface != 'system' AND a.ts >= :since
"""
_VOTES = "SELECT advice_id, sum(helpful) AS helpful, sum(1 - helpful) AS not_helpful FROM feedback GROUP BY advice_id"


@dataclass
class WeekIntent:
    week: str                  # ISO week, e.g. 2026-W49
    intent: str
    turns: int = 0
    answers: int = 0
    asked_back: int = 0
    follow_ups: int = 0
    helpful: int = 0
    not_helpful: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def iso_week(ts: str) -> str:
    year, week, _ = dt.datetime.fromisoformat(ts).isocalendar()
    return f"{year}-W{week:02d}"


def usage_stats(path: str | os.PathLike, since: dt.date | None = None) -> list[WeekIntent]:
    """Rows sorted by week then intent; an empty list for an empty log."""
    db = connect(path)
    try:
        if "advice" not in db.table_names():
            return []
        votes = {r["advice_id"]: r for r in db.query(_VOTES)} if "feedback" in db.table_names() else {}
        groups: dict[tuple[str, str], WeekIntent] = {}
        for row in db.query(_TURNS, {"since": (since or dt.date(1970, 1, 1)).isoformat()}):
            key = (iso_week(row["ts"]), row["intent"])
            g = groups.setdefault(key, WeekIntent(*key))
            g.turns += 1
            g.answers += row["status"] == "answer"
            g.asked_back += row["status"] == "follow_up"
            g.follow_ups += row["turn"] > 1
            v = votes.get(row["id"])
            if v:
                g.helpful += int(v["helpful"] or 0)
                g.not_helpful += int(v["not_helpful"] or 0)
        return [groups[k] for k in sorted(groups)]
    finally:
        db.close()
