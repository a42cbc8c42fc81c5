"""Conversation state between turns, in the same SQLite file as the audit log (`ADVISOR_DB`).

Table `sessions`: `key` (TEXT primary key, see `session_key`), `state` (JSON: the dialogue state, slots known
so far), `updated` and `expires` (ISO-8601 UTC, seconds). A session expires `ttl_seconds` after its last save
(default 6 hours): `load` then answers None, as if there were none, and `purge_expired` deletes such rows.
The state is whatever the dialogue keeps (slots, the pending question); no tokens, no user names.

WAL mode and a busy timeout; one store may be shared by threads (a lock serialises its one connection), and
several processes may use the same file (every write is one `BEGIN IMMEDIATE` transaction).
Pure: sqlite-utils (through bot.db) and the standard library only.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import pathlib
from typing import Any, Callable

from bot.store.chain import iso_utc, to_json_value, utc_now
from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.store.migrations import migrate

__all__ = ["SessionStore", "session_key", "session_id", "SLACK_SURFACES", "DEFAULT_TTL_S"]

DEFAULT_TTL_S = 6 * 3600
SLACK_SURFACES = frozenset({"dm", "mention", "slash", "button", "shortcut", "slack"})



def _escape(part: Any) -> str:
    text = "-" if part is None or str(part) == "" else str(part)
    return text.replace("%", "%25").replace(":", "%3A")


def session_key(surface: str, team: str | None = None, channel: str | None = None, thread: str | None = None,
                user: str | None = None) -> str:
    """A stable key for one person's conversation in one place.

    All Slack surfaces (dm, mention, slash, button) share the namespace "slack", so that a button answering a
    follow-up continues the conversation of the message it belongs to; the CLI uses "cli" (thread: the session
    name, user: the local account). Missing parts are "-"; ':' and '%' inside parts are escaped, so the key
    splits back unambiguously. Example: "slack:T01:C02:1712345678.000100:U03".
    """
    surface = (surface or "").strip().lower()
    if not surface:
        raise ValueError("session_key needs a surface (dm, mention, slash, button or cli)")
    namespace = "slack" if surface in SLACK_SURFACES else surface
    return ":".join([_escape(namespace), *(_escape(p) for p in (team, channel, thread, user))])


def session_id(key: str) -> str:
    """The short readable form of a key, for JSON output and the audit log: "slack-3fa9c01b2e"."""
    namespace = key.split(":", 1)[0] or "session"
    return f"{namespace}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]}"


class SessionStore(LockedDatabase):
    """load / save / clear conversation state by key, with expiry. Thread-safe; many may share a file."""

    def __init__(self, path: str | os.PathLike, ttl_seconds: float = DEFAULT_TTL_S, *,
                 clock: Callable[[], dt.datetime] = utc_now, timeout: float = DEFAULT_TIMEOUT_S):
        if ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, not {ttl_seconds}")
        self.path = pathlib.Path(path)
        self.ttl = dt.timedelta(seconds=ttl_seconds)
        self._clock = clock
        self._open(self.path, timeout)
        migrate(self)                                   # the sessions table (bot/store/migrations.py, step 2)

    def _now(self) -> dt.datetime:
        return self._clock()

    def load(self, key: str) -> dict[str, Any] | None:
        """The saved state, or None when there is none or it has expired."""
        now = iso_utc(self._now())
        with self._read() as conn:
            row = conn.execute("SELECT state, expires FROM sessions WHERE key = ?", (key,)).fetchone()
        if row is None or row[1] <= now:
            return None
        try:
            state = json.loads(row[0])
        except ValueError:
            return None                                  # an unreadable state is as good as none
        return state if isinstance(state, dict) else None

    def save(self, key: str, state: dict[str, Any]) -> None:
        """Store `state` (JSON-able dict; pydantic models and dates are converted) and restart its expiry."""
        if not isinstance(state, dict):
            raise TypeError(f"session state must be a dict, not {type(state).__name__}")
        now = self._now()
        text = json.dumps(to_json_value(state), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (key, state, updated, expires) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET state = excluded.state, updated = excluded.updated, "
                "expires = excluded.expires",
                (key, text, iso_utc(now), iso_utc(now + self.ttl)))

    def clear(self, key: str) -> bool:
        """Forget one conversation; True when there was one."""
        with self._write() as conn:
            return conn.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

    def count(self) -> int:
        """Live (unexpired) sessions, for the operator's metrics."""
        with self._read() as conn:
            return conn.execute("SELECT count(*) FROM sessions WHERE expires > ?", (iso_utc(self._now()),)).fetchone()[0]

    def purge_expired(self) -> int:
        """Delete every expired session; returns how many."""
        with self._write() as conn:
            return conn.execute("DELETE FROM sessions WHERE expires <= ?", (iso_utc(self._now()),)).rowcount
