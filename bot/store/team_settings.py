"""Per-workspace settings: the default cloud, the display currency and the audit retention of one Slack team,
chosen on the App Home by the workspace's admins (bot/surfaces/slack/team_home.py).

Table `team_settings` (migration 6 on both backends): `team` (primary key), `provider` (a knowledge-base provider
id, or NULL: the server's ADVISOR_DEFAULT_PROVIDER), `currency` (an ISO code, or NULL: prices as published),
`retention_days` (whole days, or NULL: kept until pruned by hand), `updated` (ISO-8601 UTC) and `updated_by`
(the Slack user id who saved them). How they are used: a team's provider and currency are the defaults of every
answer in that workspace, below each user's own App Home choice and anything the question says; its retention is
what `gpu-advisor audit prune --team T` deletes by default. Mixed into SlackState and PgSlackState (portable SQL).
"""
from __future__ import annotations

from typing import Any

from bot.store.chain import iso_utc, utc_now

__all__ = ["TeamSettings", "FIELDS", "MAX_RETENTION_DAYS"]

FIELDS = ("provider", "currency", "retention_days")
MAX_RETENTION_DAYS = 3650


class TeamSettings:
    """team_settings(team) / set_team_settings(team, user, ...) on a store with `_read()` / `_write()`."""

    def team_settings(self, team: str | None) -> dict[str, Any]:
        """The team's settings that are set (missing keys: the server's defaults); {} for no team."""
        if not team:
            return {}
        with self._read() as conn:
            row = conn.execute("SELECT provider, currency, retention_days, updated, updated_by FROM team_settings "
                               "WHERE team = ?", (team,)).fetchone()
        if row is None:
            return {}
        return {k: v for k, v in zip((*FIELDS, "updated", "updated_by"), row) if v is not None}

    def set_team_settings(self, team: str, user: str, *, provider: str | None, currency: str | None,
                          retention_days: int | None) -> None:
        """Replace the team's three settings (None: back to the server's default for that one)."""
        if not team:
            raise ValueError("team settings need a Slack team id")
        if retention_days is not None and not 1 <= int(retention_days) <= MAX_RETENTION_DAYS:
            raise ValueError(f"retention_days must be 1 to {MAX_RETENTION_DAYS}, not {retention_days}")
        with self._write() as conn:
            conn.execute("INSERT INTO team_settings (team, provider, currency, retention_days, updated, updated_by) "
                         "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (team) DO UPDATE SET provider = excluded.provider, "
                         "currency = excluded.currency, retention_days = excluded.retention_days, "
                         "updated = excluded.updated, updated_by = excluded.updated_by",
                         (team, provider, currency, None if retention_days is None else int(retention_days),
                          iso_utc(utc_now()), user or None))
