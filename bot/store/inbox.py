"""The durable inbox: every Slack event, command and button click is written here before it is acknowledged.

Why: Slack does not redeliver an acknowledged event, so work held only in memory is lost when the process dies
(`kill -9` with 150 DMs in flight lost 100 of them). The Slack edge now writes a job (deduplicated by its keys:
the Slack event id, `msg:{channel}:{ts}`, the request signature...) in one transaction and only then answers
2xx; worker threads take jobs, run the turn, post the reply, and mark the job done with the reply's audit id
and whether Slack accepted it. On start, jobs not done are resumed. A job that keeps failing ends `failed` with
an apology posted to the user (the worker's part) and its error kept here.

Exactly-once replies, as far as Slack allows: the turn runs once per job (a resumed job whose audit row exists
reuses the recorded reply), and each posted message part is counted (`parts_posted`) as soon as Slack accepts
it, so a resumed job posts only what was not posted yet. The one window left is between Slack accepting a post
and that count being written (a few milliseconds); a crash exactly there posts that part again.

Table `inbox` (same SQLite file as the audit log): id, kind, payload (JSON), state (queued, running, done,
failed), attempts, received, updated, advice_id, delivered (1/0, NULL until tried), parts_posted, error, team,
not_before (a job Slack's rate limit put off waits until then).
A finished job's payload is emptied after a day (bot/store/retention.py: the question's text is not kept).
The dedupe keys share table `slack_events` with the older claims. The tables are created by bot/store/migrations.py
(SQLite) and bot/store/pg_schema.py (PostgreSQL), which import nothing from here. Pure: the standard library and
bot.store only.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from bot.store.chain import iso_utc, to_json_value, utc_now
from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.store.migrations import migrate

__all__ = ["Inbox", "Job", "OPEN_STATES"]

OPEN_STATES = ("queued", "running")
PROBE_KEY = "probe:writable"          # the key `probe(write=True)` adds and removes (never a Slack id)

_COLUMNS = ("id", "kind", "payload", "state", "attempts", "received", "updated", "advice_id", "delivered",
            "parts_posted", "error", "not_before")


@dataclass(frozen=True)
class Job:
    """One unit of Slack work as stored."""
    id: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    state: str = "queued"
    attempts: int = 0
    received: str = ""
    advice_id: str | None = None
    delivered: bool | None = None
    parts_posted: int = 0
    error: str | None = None
    not_before: str | None = None       # a job put off by Slack's rate limit waits until then (ISO-8601 UTC)


def _team(payload: dict[str, Any]) -> str | None:
    """The Slack workspace of a job, kept beside its payload: what `audit prune --team` deletes by, even after the
    payload itself was emptied (bot/store/retention.py)."""
    team = payload.get("team")
    return str(team) if team else None


def _job(row: tuple) -> Job:
    data = dict(zip(_COLUMNS, row))
    try:
        payload = json.loads(data["payload"])
    except ValueError:
        payload = {}
    delivered = None if data["delivered"] is None else bool(data["delivered"])
    return Job(data["id"], data["kind"], payload if isinstance(payload, dict) else {}, data["state"],
               data["attempts"], data["received"], data["advice_id"], delivered, data["parts_posted"], data["error"],
               data["not_before"])


class Inbox(LockedDatabase):
    """Jobs in the `inbox` table of one SQLite file. Thread-safe; several processes may share the file."""

    def __init__(self, path: str | os.PathLike, *, clock: Callable[[], dt.datetime] = utc_now,
                 timeout: float = DEFAULT_TIMEOUT_S):
        self.path = pathlib.Path(path)
        self._clock = clock
        self._open(self.path, timeout)
        migrate(self)                                   # the inbox table: bot/store/migrations.py, step 3

    def _now(self) -> str:
        return iso_utc(self._clock())

    def put(self, job_id: str, kind: str, payload: dict[str, Any], keys: Iterable[str] = ()) -> bool:
        """Record a job once: False (nothing written but the missing keys) when the id or any key was seen before.

        One transaction: when this returns, the job survives a crash, so the request may be acknowledged.
        """
        keys = [k for k in dict.fromkeys([job_id, *keys]) if k]
        now = self._now()
        text = json.dumps(to_json_value(payload), ensure_ascii=False, separators=(",", ":"))
        with self._write() as conn:
            seen = any(conn.execute("SELECT 1 FROM slack_events WHERE event_id = ?", (k,)).fetchone() for k in keys)
            seen = seen or conn.execute("SELECT 1 FROM inbox WHERE id = ?", (job_id,)).fetchone() is not None
            conn.executemany("INSERT OR IGNORE INTO slack_events (event_id, ts) VALUES (?, ?)",
                             [(k, now) for k in keys])
            if seen:
                return False
            conn.execute("INSERT INTO inbox (id, kind, payload, state, received, updated, team) "
                         "VALUES (?, ?, ?, 'queued', ?, ?, ?)", (job_id, kind, text, now, now, _team(payload)))
        return True

    def get(self, job_id: str) -> Job | None:
        with self._read() as conn:
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM inbox WHERE id = ?", (job_id,)).fetchone()
        return _job(row) if row else None

    def open_jobs(self) -> list[Job]:
        """Jobs not finished (queued, or running when the process stopped), oldest first: what to resume."""
        with self._read() as conn:
            rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM inbox WHERE state IN ('queued', 'running') "
                                "ORDER BY received, rowid").fetchall()
        return [_job(r) for r in rows]

    def reclaim(self, limit: int = 100) -> list[Job]:
        """Jobs a dead replica left, now this process's to run: none on SQLite. One host holds the file, and the
        process that restarts there resumes its own open jobs (`open_jobs` at start); the PostgreSQL inbox, shared
        by replicas on several hosts, claims them here (bot/store/pg_stores.py)."""
        return []

    def heartbeat(self) -> bool:
        """True: an SQLite inbox holds no lease to renew (see PgInbox.heartbeat)."""
        return True

    def start(self, job_id: str) -> Job | None:
        """Mark a job running and count the attempt; None when it is already finished (or unknown)."""
        with self._write() as conn:
            cursor = conn.execute("UPDATE inbox SET state = 'running', attempts = attempts + 1, updated = ? "
                                  "WHERE id = ? AND state IN ('queued', 'running')", (self._now(), job_id))
            if cursor.rowcount != 1:
                return None
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM inbox WHERE id = ?", (job_id,)).fetchone()
        return _job(row)

    def posted(self, job_id: str, parts: int, advice_id: str | None = None) -> None:
        """Count the message parts Slack accepted so far (a resumed job skips them)."""
        self._update(job_id, "parts_posted = max(parts_posted, ?), advice_id = coalesce(?, advice_id)",
                     (parts, advice_id))

    def defer(self, job_id: str, not_before: str, why: str, advice_id: str | None = None, *,
              posted_unknown: bool = False) -> None:
        """Back to the queue until `not_before` (ISO-8601 UTC): Slack asked to wait (429) or could not be reached.
        Not a failed attempt: the reply already recorded (`advice_id`) is reused and parts posted are not posted
        again. After a 429 nothing was posted, so the attempt is not counted; when the connection failed
        (`posted_unknown`) Slack may have taken the part, so the attempt stays counted and the next one looks in the
        conversation first (bot/surfaces/slack/outbound.py: find)."""
        undo = 0 if posted_unknown else 1
        self._update(job_id, "state = 'queued', attempts = max(attempts - ?, 0), not_before = ?, error = ?, "
                             "advice_id = coalesce(?, advice_id)", (undo, not_before, why[:2000], advice_id))

    def retry(self, job_id: str, error: str) -> None:
        """Back to the queue after a failed attempt (the error is kept for the operator)."""
        self._update(job_id, "state = 'queued', error = ?", (error[:2000],))

    def finish(self, job_id: str, *, advice_id: str | None, delivered: bool, error: str | None = None) -> None:
        """Done: the reply's audit id and whether Slack took it; the response_url (a capability) is forgotten."""
        self._update(job_id, "state = 'done', advice_id = coalesce(?, advice_id), delivered = ?, error = ?, "
                             "payload = json_remove(payload, '$.response_url')",
                     (advice_id, int(delivered), error and error[:2000]))

    def fail(self, job_id: str, error: str, *, delivered: bool) -> None:
        """Given up after the last attempt; `delivered` says whether the apology reached the user."""
        self._update(job_id, "state = 'failed', delivered = ?, error = ?, "
                             "payload = json_remove(payload, '$.response_url')", (int(delivered), error[:2000]))

    def _update(self, job_id: str, assignments: str, params: tuple) -> None:
        with self._write() as conn:
            conn.execute(f"UPDATE inbox SET {assignments}, updated = ? WHERE id = ?", (*params, self._now(), job_id))

    def probe(self, write: bool = False) -> dict[str, int]:
        """Jobs per state (as `counts`); with `write`, first prove the database takes a write (a probe key added
        and removed in one transaction): what tells a full disk cleared or a server back. Raises StorageError."""
        if write:
            with self._write() as conn:
                self._probe_write(conn)
        return self.counts()

    def _probe_write(self, conn: Any) -> None:
        conn.execute("DELETE FROM slack_events WHERE event_id = ?", (PROBE_KEY,))
        conn.execute("INSERT INTO slack_events (event_id, ts) VALUES (?, ?)", (PROBE_KEY, self._now()))
        conn.execute("DELETE FROM slack_events WHERE event_id = ?", (PROBE_KEY,))

    def housekeep(self, finished_before: str, events_before: str) -> tuple[int, int]:
        """Retention while serving (bot/store/retention.py): empty the payloads of jobs finished before
        `finished_before` and drop event-id claims older than `events_before` (ISO-8601 UTC); (jobs, ids)."""
        from bot.store.retention import forget_event_ids, forget_payloads
        with self._write() as conn:
            return forget_payloads(conn, finished_before), forget_event_ids(conn, events_before)

    def oldest_open(self) -> str | None:
        """When the oldest job not finished (queued or running) was received (ISO-8601 UTC), or None: what
        /metrics' gpu_advisor_inbox_oldest_job_age_seconds is measured from."""
        with self._read() as conn:
            row = conn.execute("SELECT min(received) FROM inbox WHERE state IN ('queued', 'running')").fetchone()
        return row[0] if row else None

    def counts(self) -> dict[str, int]:
        """Jobs per state, for /readyz and `doctor`."""
        with self._read() as conn:
            rows = conn.execute("SELECT state, count(*) FROM inbox GROUP BY state").fetchall()
        return {state: n for state, n in rows}

    def delivery(self, advice_id: str) -> Job | None:
        """The job whose reply is audit record `advice_id` (for `audit show`: was it delivered?)."""
        with self._read() as conn:
            row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM inbox WHERE advice_id = ? LIMIT 1",
                               (advice_id,)).fetchone()
        return _job(row) if row else None

