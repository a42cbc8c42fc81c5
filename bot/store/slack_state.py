"""What the Slack app remembers besides the audit log: feedback on advice, each user's App Home settings, and the
channel threads the bot has answered in (so a reply in such a thread needs no new @mention).

Three small tables in ADVISOR_DB, created with sqlite-utils by bot/store/migrations.py (step 4):
- `feedback`: one row per (advice id, user): `helpful` 1 or 0, `ts`; a second click replaces the first, so a
  person counts once per answer. The advice id ties it to the audit record (intent, week) for `audit stats`.
- `slack_prefs`: one row per (team, user): `provider` (a knowledge-base provider id) and `currency`.
- `slack_threads`: (channel, thread_ts) of every thread the bot answered a mention in.
- `team_settings` (bot/store/team_settings.py, step 6): each workspace's default cloud, currency and retention.
Only opaque Slack ids are stored, never names or tokens (as in the audit log).
"""
from __future__ import annotations

import os
from typing import Any

from bot.store.audit import iso_utc, utc_now
from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.store.migrations import migrate
from bot.store.team_settings import TeamSettings

__all__ = ["SlackState"]


class SlackState(TeamSettings, LockedDatabase):
    """Feedback, preferences and known threads; thread-safe, one per process (many may share the file)."""

    def __init__(self, path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT_S):
        self._open(path, timeout)
        migrate(self)                       # the three tables: bot/store/migrations.py, step 4 (sqlite-utils)

    # ----- feedback ---------------------------------------------------------------------------------------------
    def add_feedback(self, advice_id: str, user: str, team: str, helpful: bool) -> None:
        with self._write():
            self.db["feedback"].upsert({"advice_id": advice_id, "user": user, "team": team,
                                        "helpful": int(helpful), "ts": iso_utc(utc_now())},
                                       pk=("advice_id", "user"))

    def feedback(self) -> list[dict[str, Any]]:
        with self._read():
            return list(self.db["feedback"].rows)

    # ----- preferences -----------------------------------------------------------------------------------------
    def prefs(self, team: str, user: str) -> dict[str, Any]:
        with self._read():
            rows = list(self.db["slack_prefs"].rows_where("team = ? AND user = ?", [team, user]))
        return {k: v for k, v in rows[0].items() if k in ("provider", "currency") and v} if rows else {}

    def set_pref(self, team: str, user: str, **values: str | None) -> None:
        """Set (a value) or clear (None) one or more of provider, currency."""
        with self._write():
            current = next(iter(self.db["slack_prefs"].rows_where("team = ? AND user = ?", [team, user])), {})
            row = {"team": team, "user": user, "provider": current.get("provider"),
                   "currency": current.get("currency"), **values, "ts": iso_utc(utc_now())}
            self.db["slack_prefs"].upsert(row, pk=("team", "user"))

    # ----- threads -------------------------------------------------------------------------------------------
    def join_thread(self, channel: str, thread_ts: str) -> None:
        with self._write():
            self.db["slack_threads"].insert({"channel": channel, "thread_ts": thread_ts, "ts": iso_utc(utc_now())},
                                            pk=("channel", "thread_ts"), ignore=True)

    def in_thread(self, channel: str, thread_ts: str) -> bool:
        with self._read():
            return bool(self.db["slack_threads"].count_where("channel = ? AND thread_ts = ?", [channel, thread_ts]))
