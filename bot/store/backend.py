"""Which store backend `ADVISOR_DB` names: an SQLite file (the embedded default: nothing to run) or, for a
`postgresql://` URL, a PostgreSQL server that several replicas share. Surfaces open their stores through these
functions, so neither they nor the stores' callers care which one it is.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bot.store.pg import DatabaseUrl, is_postgres_url

__all__ = ["is_postgres_url", "describe", "open_audit", "open_sessions", "open_inbox", "open_slack_state",
           "open_installations", "open_spool", "spool_folder"]

Target = str | os.PathLike


def describe(target: Target) -> str:
    """How to name the database in a message: the file path, or the URL without its password."""
    return str(DatabaseUrl(target)) if _pg(target) else str(target)


def _pg(target: Target) -> bool:
    return isinstance(target, str) and is_postgres_url(target)     # a DatabaseUrl's redacted text keeps its scheme


def open_audit(target: Target, **options: Any) -> Any:
    """The audit log (AuditLog or PgAuditLog: same methods)."""
    if _pg(target):
        from bot.store.pg_stores import PgAuditLog
        return PgAuditLog(target, **options)
    from bot.store.audit import AuditLog
    return AuditLog(Path(target), **options)


def open_sessions(target: Target, **options: Any) -> Any:
    """The session store (SessionStore or PgSessionStore)."""
    if _pg(target):
        from bot.store.pg_stores import PgSessionStore
        return PgSessionStore(target, **options)
    from bot.store.sessions import SessionStore
    return SessionStore(Path(target), **options)


def open_inbox(target: Target, **options: Any) -> Any:
    """The durable Slack inbox (Inbox or PgInbox)."""
    if _pg(target):
        from bot.store.pg_stores import PgInbox
        return PgInbox(target, **options)
    from bot.store.inbox import Inbox
    return Inbox(Path(target), **options)


def open_slack_state(target: Target, **options: Any) -> Any:
    """Feedback, preferences and threads (SlackState or PgSlackState)."""
    if _pg(target):
        from bot.store.pg_stores import PgSlackState
        return PgSlackState(target, **options)
    from bot.store.slack_state import SlackState
    return SlackState(Path(target), **options)


def open_installations(target: Target, cipher: Any, **options: Any) -> Any:
    """Slack installations and OAuth states, tokens sealed by `cipher` (Installations or PgInstallations)."""
    if _pg(target):
        from bot.store.pg_installations import PgInstallations
        return PgInstallations(target, cipher, **options)
    from bot.store.installations import Installations
    return Installations(Path(target), cipher, **options)


def spool_folder(target: Target, configured: str | os.PathLike | None = None) -> Path:
    """Where Slack requests wait while the database is away (bot/store/spool.py): `configured`
    (ADVISOR_SPOOL_DIR), else beside an SQLite file (`advisor.db.spool/`), else, for PostgreSQL, one folder per
    database under XDG_STATE_HOME (~/.local/state/gpu-advisor/spool-<hash of the URL>): the local disk, which
    does not fail with the server. In a container it must be a volume that outlives a restart (deploy/)."""
    if configured:
        return Path(configured).expanduser()
    if not _pg(target):
        path = Path(target)
        return path.with_name(path.name + ".spool")
    import hashlib
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    digest = hashlib.sha256(str(DatabaseUrl(target)).encode()).hexdigest()[:12]
    return base / "gpu-advisor" / f"spool-{digest}"


def open_spool(target: Target, configured: str | os.PathLike | None = None) -> Any:
    """The spool of the database at `target` (the folder is created on the first request kept)."""
    from bot.store.spool import Spool
    return Spool(spool_folder(target, configured))
