"""`doctor`'s database check when ADVISOR_DB is a `postgresql://` URL: the server answers, the pool opens, the
schema migrations are current, and how many audit records there are. The URL is always shown without its password.
"""
from __future__ import annotations

from typing import Any, Iterator

__all__ = ["check_postgres"]


def check_postgres(url: str, check: Any, tables_line: Any) -> Iterator[Any]:
    """Checks (doctor's `Check` class and its table line are passed in, so this module does not import doctor
    back)."""
    from bot.store.pg import POOL_MAX, PgError, get_pool, redact_url, schema_status
    from bot.store.pg_schema import MIGRATIONS
    shown = redact_url(url)
    try:
        pool = get_pool(url)
        with pool.connection() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
        applied, pending = schema_status(url)
    except PgError as exc:
        yield check("fail", "database", exc.message, exc.fix or "")
        return
    known = {v for v, _, _ in MIGRATIONS}
    newer = sorted(set(applied) - known)
    if newer:
        yield check("fail", "database", f"{shown}: schema version(s) {newer} are newer than this gpu-advisor knows "
                                        f"(up to {max(known)})",
                    "run the same gpu-advisor version as the replicas that migrated it (upgrade this one)")
        return
    if pending:
        yield check("warn", "database", f"{shown}: PostgreSQL {version}, {len(pending)} schema migration(s) pending "
                                        f"({', '.join(map(str, pending))})",
                    "they are applied when the advisor first opens the database (e.g. `gpu-advisor audit verify`)")
        return
    from bot.store.retention import table_report
    with pool.connection() as conn:
        rows = conn.execute("SELECT seq FROM audit_head").fetchone()[0]
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                             "current_schema() AND table_type = 'BASE TABLE'").fetchall()]
        sizes = table_report(conn, sorted(tables))
    yield check("ok", "database", f"{shown} (ADVISOR_DB): PostgreSQL {version}, schema version {max(applied)} "
                                  f"(current), pool up to {POOL_MAX} connections, chain head at record {rows}")
    yield tables_line(sizes)
