"""Retention for everything the Slack app keeps beside the audit log: the inbox (each question's text, user and
channel in its payload), conversation sessions, event-id claims, feedback votes and answered threads.

Why: `audit prune` removed the advice rows and left the rest. After pruning 1,120 advice rows, 1,090 inbox rows
still held the questions' text, and the event-id and session tables grew without bound. Now:
- `forget_payloads`: a finished job's payload (the question, where it came from, any response_url) is emptied
  `ADVISOR_INBOX_KEEP_HOURS` after it finished (24 by default); the row keeps its id, state, team, advice id and
  delivery, which `audit show` reports. The Slack app runs it every few minutes (bot/surfaces/slack/dbwatch.py);
- `forget_before` and `forget_team`: run by `audit prune` and `audit prune --team` in the same transaction as the
  advice rows, so what the audit log forgets is forgotten everywhere (open jobs, still to be answered, stay);
- `table_report`: rows and the oldest row of each table, for `doctor`.
The SQL is portable (SQLite and PostgreSQL): `conn` is a store's transaction, `?` placeholders.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.store.sessions import session_key

__all__ = ["forget_payloads", "forget_event_ids", "forget_before", "forget_team", "table_report", "TableSize", "EMPTY_PAYLOAD",
           "TIME_COLUMNS"]

EMPTY_PAYLOAD = "{}"
FINISHED = "state IN ('done', 'failed')"
# the tables of ADVISOR_DB and the column that dates a row (None: the table has no date)
TIME_COLUMNS = {"advice": "ts", "inbox": "received", "sessions": "updated", "slack_events": "ts", "feedback": "ts",
                "slack_prefs": "ts", "slack_threads": "ts", "team_settings": "updated", "slack_installations": None,
                "slack_bots": None, "slack_oauth_states": None}


@dataclass(frozen=True)
class TableSize:
    table: str
    rows: int
    oldest: str | None          # the oldest row's date (ISO-8601 UTC), None for an empty or undated table


def forget_payloads(conn: Any, finished_before: str) -> int:
    """Empty the payload of every job finished before `finished_before` (ISO-8601 UTC); returns how many."""
    cursor = conn.execute(f"UPDATE inbox SET payload = ? WHERE {FINISHED} AND updated < ? AND payload != ?",
                          (EMPTY_PAYLOAD, finished_before, EMPTY_PAYLOAD))
    return max(0, cursor.rowcount)


def forget_event_ids(conn: Any, before: str) -> int:
    """Event-id claims older than `before`: Slack retries within minutes, so a day later they dedupe nothing."""
    return _count(conn.execute("DELETE FROM slack_events WHERE ts < ?", (before,)))


def forget_before(conn: Any, cutoff: str) -> dict[str, int]:
    """Everything dated before `cutoff` outside the audit log: finished jobs, sessions, event ids, votes, threads."""
    gone = {"inbox": _count(conn.execute(f"DELETE FROM inbox WHERE {FINISHED} AND received < ?", (cutoff,)))}
    for table, column in (("sessions", "updated"), ("slack_events", "ts"), ("feedback", "ts"),
                          ("slack_threads", "ts")):
        gone[table] = _count(conn.execute(f"DELETE FROM {table} WHERE {column} < ?", (cutoff,)))
    return gone


def forget_team(conn: Any, team: str, cutoff: str) -> dict[str, int]:
    """One workspace's finished jobs (and their event ids), sessions and votes dated before `cutoff`."""
    ids = [r[0] for r in conn.execute(f"SELECT id FROM inbox WHERE team = ? AND {FINISHED} AND received < ?",
                                      (team, cutoff)).fetchall()]
    gone = {"inbox": _count(conn.execute(f"DELETE FROM inbox WHERE team = ? AND {FINISHED} AND received < ?",
                                         (team, cutoff))),
            "slack_events": 0}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        gone["slack_events"] += _count(conn.execute(
            f"DELETE FROM slack_events WHERE event_id IN ({', '.join('?' * len(chunk))})", tuple(chunk)))
    prefix = session_key("slack", team, "", "", "").rsplit(":", 3)[0] + ":"      # "slack:T01:"
    gone["sessions"] = _count(conn.execute("DELETE FROM sessions WHERE substr(key, 1, ?) = ? AND updated < ?",
                                           (len(prefix), prefix, cutoff)))
    gone["feedback"] = _count(conn.execute("DELETE FROM feedback WHERE team = ? AND ts < ?", (team, cutoff)))
    return gone


def table_report(conn: Any, tables: list[str]) -> list[TableSize]:
    """Rows and the oldest row of each table of `tables` that this module knows (for `doctor`)."""
    out = []
    for table in tables:
        if table not in TIME_COLUMNS:
            continue
        column = TIME_COLUMNS[table]
        if column:
            rows, oldest = conn.execute(f"SELECT count(*), min({column}) FROM {table}").fetchone()
        else:
            rows, oldest = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0], None
        out.append(TableSize(table, int(rows), str(oldest) if oldest is not None else None))
    return out


def _count(cursor: Any) -> int:
    return max(0, cursor.rowcount or 0)
