"""Where the Slack app is installed (many workspaces, through Slack's OAuth flow): each workspace's bot token and the
one-time `state` values of installs in progress, in ADVISOR_DB beside the audit log (SQLite or PostgreSQL).

Tables (migration 5 on both backends: bot/store/migrations.py, bot/store/pg_schema.py):
- `slack_installations`: the latest install by each user of each workspace, key (enterprise_id, team_id, user_id);
  `data` holds the non-secret fields as JSON (app, team and bot ids, scopes, when), `secrets` the tokens (bot,
  user, refresh tokens, the incoming-webhook URL) as one Fernet token (bot/store/tokens.py): no column ever holds
  a token in clear.
- `slack_bots`: the workspace's current bot, key (enterprise_id, team_id), the same two columns. This is what
  answers use: a reinstall by anyone replaces it.
- `slack_oauth_states`: state -> expiry (epoch seconds). `consume` deletes the row it accepts in the same
  statement, so a state works once, on any replica.
`enterprise_id` and `team_id` are '' rather than NULL when absent (an org-wide install has no team), so they can be
part of the primary key. Rows are dicts here; bot/surfaces/slack/oauth.py turns them into slack_sdk's objects.
"""
from __future__ import annotations

import json
import os
import secrets as random
import time
from typing import Any

from bot.store.db import DEFAULT_TIMEOUT_S, LockedDatabase
from bot.store.migrations import migrate
from bot.store.tokens import TokenCipher

__all__ = ["Installations", "SECRET_FIELDS"]

SECRET_FIELDS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token", "incoming_webhook_url")
STATE_TTL_S = 600                    # Slack's and Bolt's default: an install must finish within 10 minutes



def _ids(enterprise_id: str | None, team_id: str | None, org_install: bool | None = False) -> tuple[str, str]:
    """The key of a workspace: an org-wide install (or no team) is stored under team ''."""
    return enterprise_id or "", "" if org_install or not team_id else team_id


class Installations(LockedDatabase):
    """Installations, bots and OAuth states (SQLite; PgInstallations: the same on PostgreSQL)."""

    def __init__(self, path: str | os.PathLike, cipher: TokenCipher, timeout: float = DEFAULT_TIMEOUT_S):
        self.cipher = cipher
        self._open(path, timeout)
        migrate(self)

    # ----- rows <-> dicts -----------------------------------------------------------------------------------
    def _split(self, fields: dict[str, Any]) -> tuple[str, str]:
        """(data JSON, secrets encrypted) of an installation's or bot's fields."""
        hidden = {k: fields.get(k) for k in SECRET_FIELDS if fields.get(k) is not None}
        data = {k: v for k, v in fields.items() if k not in SECRET_FIELDS}
        return json.dumps(data, sort_keys=True, default=str), self.cipher.encrypt(json.dumps(hidden))

    def _join(self, data: str, sealed: str) -> dict[str, Any]:
        return {**json.loads(data), **json.loads(self.cipher.decrypt(sealed))}

    # ----- installations and bots ---------------------------------------------------------------------------
    def save_installation(self, fields: dict[str, Any]) -> None:
        """One user's install of one workspace (replacing their earlier one); its bot too, when it has a token."""
        ent, team = _ids(fields.get("enterprise_id"), fields.get("team_id"), fields.get("is_enterprise_install"))
        data, sealed = self._split(fields)
        with self._write() as conn:
            conn.execute("INSERT INTO slack_installations (enterprise_id, team_id, user_id, installed_at, data, "
                         "secrets) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (enterprise_id, team_id, user_id) DO UPDATE "
                         "SET installed_at = excluded.installed_at, data = excluded.data, secrets = excluded.secrets",
                         (ent, team, fields.get("user_id") or "", float(fields.get("installed_at") or time.time()),
                          data, sealed))
        if fields.get("bot_token"):
            bot = {k: fields.get(k) for k in _BOT_FIELDS}
            self.save_bot(bot)

    def save_bot(self, fields: dict[str, Any]) -> None:
        ent, team = _ids(fields.get("enterprise_id"), fields.get("team_id"), fields.get("is_enterprise_install"))
        data, sealed = self._split(fields)
        with self._write() as conn:
            conn.execute("INSERT INTO slack_bots (enterprise_id, team_id, installed_at, data, secrets) "
                         "VALUES (?, ?, ?, ?, ?) ON CONFLICT (enterprise_id, team_id) DO UPDATE SET "
                         "installed_at = excluded.installed_at, data = excluded.data, secrets = excluded.secrets",
                         (ent, team, float(fields.get("installed_at") or time.time()), data, sealed))

    def find_bot(self, enterprise_id: str | None, team_id: str | None, org_install: bool | None = False
                 ) -> dict[str, Any] | None:
        """The workspace's bot with its token decrypted; None when the app is not installed there."""
        with self._read() as conn:
            row = conn.execute("SELECT data, secrets FROM slack_bots WHERE enterprise_id = ? AND team_id = ?",
                               _ids(enterprise_id, team_id, org_install)).fetchone()
        return self._join(*row) if row else None

    def find_installation(self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
                          org_install: bool | None = False) -> dict[str, Any] | None:
        """That user's install (else the workspace's latest one), with the workspace's current bot token."""
        ent, team = _ids(enterprise_id, team_id, org_install)
        sql = ("SELECT data, secrets FROM slack_installations WHERE enterprise_id = ? AND team_id = ?"
               + (" AND user_id = ?" if user_id else "") + " ORDER BY installed_at DESC LIMIT 1")
        with self._read() as conn:
            row = conn.execute(sql, (ent, team, user_id) if user_id else (ent, team)).fetchone()
        if row is None:
            return None
        found = self._join(*row)
        bot = self.find_bot(ent, team)
        if bot is not None:                          # a later install by someone else renewed the bot token
            found.update({k: bot.get(k) for k in _BOT_FIELDS if k.startswith("bot_")})
        return found

    def delete_bot(self, enterprise_id: str | None, team_id: str | None) -> int:
        with self._write() as conn:
            return conn.execute("DELETE FROM slack_bots WHERE enterprise_id = ? AND team_id = ?",
                                _ids(enterprise_id, team_id)).rowcount

    def delete_installation(self, enterprise_id: str | None, team_id: str | None, user_id: str | None = None) -> int:
        ent, team = _ids(enterprise_id, team_id)
        with self._write() as conn:
            if user_id:
                return conn.execute("DELETE FROM slack_installations WHERE enterprise_id = ? AND team_id = ? AND "
                                    "user_id = ?", (ent, team, user_id)).rowcount
            return conn.execute("DELETE FROM slack_installations WHERE enterprise_id = ? AND team_id = ?",
                                (ent, team)).rowcount

    def workspaces(self) -> list[dict[str, Any]]:
        """Every workspace with a bot: enterprise_id, team_id, team_name, installed_at (no token), oldest first."""
        with self._read() as conn:
            rows = conn.execute("SELECT enterprise_id, team_id, installed_at, data FROM slack_bots "
                                "ORDER BY installed_at").fetchall()
        return [{"enterprise_id": e, "team_id": t, "installed_at": at, "team_name": json.loads(d).get("team_name")}
                for e, t, at, d in rows]

    # ----- keys ---------------------------------------------------------------------------------------------
    def check_keys(self) -> int:
        """How many stored rows the keys open; TokenKeyError at the first they do not (doctor, start-up)."""
        n = 0
        for table in ("slack_bots", "slack_installations"):
            with self._read() as conn:
                sealed = [r[0] for r in conn.execute(f"SELECT secrets FROM {table}").fetchall()]
            for text in sealed:
                self.cipher.decrypt(text)
                n += 1
        return n

    def rotate_keys(self) -> int:
        """Re-encrypt every row with the first key of ADVISOR_TOKEN_KEY, in one transaction; returns the rows."""
        n = 0
        with self._write() as conn:
            for table, key in (("slack_bots", "enterprise_id, team_id"),
                               ("slack_installations", "enterprise_id, team_id, user_id")):
                rows = conn.execute(f"SELECT {key}, secrets FROM {table}").fetchall()
                where = " AND ".join(f"{c.strip()} = ?" for c in key.split(","))
                for row in rows:
                    conn.execute(f"UPDATE {table} SET secrets = ? WHERE {where}",
                                 (self.cipher.rotate(row[-1]), *row[:-1]))
                    n += 1
        return n

    # ----- OAuth states ---------------------------------------------------------------------------------------
    def issue_state(self, ttl_s: float = STATE_TTL_S) -> str:
        """A new unguessable state, valid for `ttl_s` seconds (expired ones are deleted meanwhile)."""
        state = random.token_urlsafe(24)
        now = time.time()
        with self._write() as conn:
            conn.execute("DELETE FROM slack_oauth_states WHERE expire_at <= ?", (now,))
            conn.execute("INSERT INTO slack_oauth_states (state, expire_at) VALUES (?, ?)", (state, now + ttl_s))
        return state

    def consume_state(self, state: str | None) -> bool:
        """True once for a state issued here and not expired; the row goes in the same statement."""
        if not state:
            return False
        with self._write() as conn:
            return conn.execute("DELETE FROM slack_oauth_states WHERE state = ? AND expire_at > ?",
                                (state, time.time())).rowcount == 1


_BOT_FIELDS = ("app_id", "enterprise_id", "enterprise_name", "team_id", "team_name", "bot_token",
               "bot_id", "bot_user_id", "bot_scopes", "bot_refresh_token", "bot_token_expires_at",
               "is_enterprise_install", "installed_at")


def read_sealed(target: Any) -> list[str] | None:
    """The sealed token column of every stored bot and install, read without migrating or writing anything (for
    `doctor`); None when the database or its installation tables do not exist yet."""
    from bot.store.pg import is_postgres_url
    sql = "SELECT secrets FROM slack_bots UNION ALL SELECT secrets FROM slack_installations"
    if is_postgres_url(target):
        import psycopg
        with psycopg.connect(getattr(target, "secret", target), connect_timeout=5) as conn:
            if not conn.execute("SELECT to_regclass('slack_bots') IS NOT NULL").fetchone()[0]:
                return None
            return [r[0] for r in conn.execute(sql).fetchall()]
    import pathlib
    import sqlite3
    path = pathlib.Path(target)
    if not path.is_file():
        return None
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'slack_bots'").fetchone():
            return None
        return [r[0] for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()
