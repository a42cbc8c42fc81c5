"""Schema versions of ADVISOR_DB: `PRAGMA user_version` says which steps a file has had; `migrate` runs the
missing ones, in order, in one write transaction (all or nothing), whichever store opens the file first.

Why: the file outlives releases (the audit log is kept for years), several stores share it (audit log,
sessions, Slack inbox, Slack state), and a second backend is planned (issue 22: PostgreSQL). One ordered list
of steps is what both can follow; a file written by a newer release is refused with a clear message instead of
being half-understood. Every step is idempotent (`IF NOT EXISTS`, sqlite-utils' `if_not_exists`), because files
from before versioning (user_version 0) already hold some of the tables.

Versions: 1 the audit log (advice, its triggers and view, slack_events, the prune lock); 2 sessions; 3 the Slack
inbox; 4 Slack state (feedback, App Home preferences, answered threads); 5 Slack installations and OAuth states
(many workspaces, bot/store/installations.py); 6 per-team settings (bot/store/team_settings.py); 7 the inbox
job's team (per-workspace retention, bot/store/retention.py); 8 the inbox job's not-before time (rate limits).
"""
from __future__ import annotations

from typing import Any, Callable

from bot.store.faults import StorageRefused
from bot.store.schema import SCHEMA, statements

__all__ = ["SCHEMA_VERSION", "STEPS", "migrate", "version_of"]

# The DDL of every table, here and not in the tables' own modules: they import this module to migrate the file, and
# this module imports none of them (bot/store/pg_schema.py is the same for PostgreSQL). A step never changes once
# released: a change to a table is a new step.
INBOX_TABLES = (
    """CREATE TABLE IF NOT EXISTS inbox (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        received TEXT NOT NULL,
        updated TEXT NOT NULL,
        advice_id TEXT,
        delivered INTEGER,
        parts_posted INTEGER NOT NULL DEFAULT 0,
        error TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS inbox_state ON inbox(state, received)",
    "CREATE TABLE IF NOT EXISTS slack_events (event_id TEXT PRIMARY KEY, ts TEXT NOT NULL)",
)
INSTALLATION_TABLES = (
    "CREATE TABLE IF NOT EXISTS slack_installations (enterprise_id TEXT NOT NULL, team_id TEXT NOT NULL, "
    "user_id TEXT NOT NULL, installed_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, secrets TEXT NOT NULL, "
    "PRIMARY KEY (enterprise_id, team_id, user_id))",
    "CREATE TABLE IF NOT EXISTS slack_bots (enterprise_id TEXT NOT NULL, team_id TEXT NOT NULL, "
    "installed_at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL, secrets TEXT NOT NULL, "
    "PRIMARY KEY (enterprise_id, team_id))",
    "CREATE TABLE IF NOT EXISTS slack_oauth_states (state TEXT PRIMARY KEY, expire_at DOUBLE PRECISION NOT NULL)",
)
TEAM_SETTINGS_TABLES = (
    "CREATE TABLE IF NOT EXISTS team_settings (team TEXT PRIMARY KEY, provider TEXT, currency TEXT, "
    "retention_days INTEGER, updated TEXT NOT NULL, updated_by TEXT)",
)


def _run(*ddl: str) -> Callable[[Any], None]:
    def step(db: Any) -> None:
        for statement in ddl:
            db.conn.execute(statement)
    return step


def _audit_log(db: Any) -> None:
    for statement in statements(SCHEMA):
        db.conn.execute(statement)


def _sessions(db: Any) -> None:
    db.conn.execute("CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, state TEXT NOT NULL, "
                    "updated TEXT NOT NULL, expires TEXT NOT NULL)")
    db.conn.execute("CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires)")


def _slack_state(db: Any) -> None:
    db["feedback"].create({"advice_id": str, "user": str, "team": str, "helpful": int, "ts": str},
                          pk=("advice_id", "user"), if_not_exists=True)
    db["slack_prefs"].create({"team": str, "user": str, "provider": str, "currency": str, "ts": str},
                             pk=("team", "user"), if_not_exists=True)
    db["slack_threads"].create({"channel": str, "thread_ts": str, "ts": str},
                               pk=("channel", "thread_ts"), if_not_exists=True)


def _inbox_team(db: Any) -> None:
    if "team" not in {c.name for c in db["inbox"].columns}:
        db.conn.execute("ALTER TABLE inbox ADD COLUMN team TEXT")
    db.conn.execute("UPDATE inbox SET team = json_extract(payload, '$.team') WHERE team IS NULL AND "
                    "json_valid(payload)")
    db.conn.execute("CREATE INDEX IF NOT EXISTS inbox_team ON inbox(team, received)")


def _inbox_not_before(db: Any) -> None:
    if "not_before" not in {c.name for c in db["inbox"].columns}:
        db.conn.execute("ALTER TABLE inbox ADD COLUMN not_before TEXT")


STEPS: list[tuple[int, str, Callable[[Any], None]]] = [
    (1, "audit log: advice, triggers, advice_readable, slack_events, audit_prune_lock", _audit_log),
    (2, "sessions", _sessions),
    (3, "Slack inbox", _run(*INBOX_TABLES)),
    (4, "Slack state: feedback, slack_prefs, slack_threads", _slack_state),
    (5, "Slack installations, bots and OAuth states (many workspaces)", _run(*INSTALLATION_TABLES)),
    (6, "per-team settings: default cloud, currency, retention", _run(*TEAM_SETTINGS_TABLES)),
    (7, "the inbox job's team (per-workspace retention of the inbox)", _inbox_team),
    (8, "the inbox job's not-before time (Slack's rate limits)", _inbox_not_before),
]
SCHEMA_VERSION = STEPS[-1][0]


def version_of(owner: Any) -> int:
    with owner._read() as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(owner: Any) -> int:
    """Bring the file of `owner` (a LockedDatabase) to SCHEMA_VERSION; returns the version it had."""
    with owner._write() as conn:
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if found > SCHEMA_VERSION:
            raise StorageRefused(f"{owner._path} was written by a newer gpu-advisor (schema version {found}; this "
                                 f"release knows versions up to {SCHEMA_VERSION})",
                                 fix="upgrade gpu-advisor, or point ADVISOR_DB at another file")
        for number, _what, step in STEPS:
            if number > found:
                step(owner.db)
        if found < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return found
