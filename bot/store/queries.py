"""Reading the audit log: one record, a filtered list, the count, every row a page at a time."""
from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any, Iterable, Iterator

from bot.store.chain import AuditError, day_start, decode, format_id, parse_id, select_columns


class AuditQueries:
    """Read methods of AuditLog (a mixin: `_read()` comes from LockedDatabase)."""

    @staticmethod
    def _rows(conn: sqlite3.Connection, sql: str, params: Iterable[Any] = ()) -> Iterator[dict[str, Any]]:
        cursor = conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        for values in cursor:
            yield dict(zip(names, values))

    # -- reading ------------------------------------------------------------------------------------------

    def get(self, id: str | int) -> dict[str, Any] | None:
        """The record with this id ('A000042', 'a42', 42), JSON columns decoded; None when there is none."""
        try:
            seq = parse_id(id)
        except ValueError:
            return None
        with self._read() as conn:
            row = next(self._rows(conn, f"SELECT {select_columns()} FROM advice WHERE seq = ?", (seq,)), None)
        return decode(row) if row else None

    def by_event(self, event_id: str) -> dict[str, Any] | None:
        """The record written for this Slack event / job id, JSON columns decoded; None when there is none."""
        with self._read() as conn:
            row = next(self._rows(conn, f"SELECT {select_columns()} FROM advice WHERE event_id = ?", (event_id,)),
                       None)
        return decode(row) if row else None

    def id_range(self) -> tuple[str, str] | None:
        """(first id, last id) present, for error messages; None when the log is empty."""
        with self._read() as conn:
            lo, hi = conn.execute("SELECT min(seq), max(seq) FROM advice").fetchone()
        return (format_id(lo), format_id(hi)) if lo is not None else None

    def list(self, limit: int | None = 20, user: str | None = None, since: dt.date | dt.datetime | None = None,
             session: str | None = None, team: str | None = None) -> list[dict[str, Any]]:
        """Newest first, JSON columns decoded. `since` is inclusive (a date means from its 00:00 UTC)."""
        where, params = [], []
        if team:
            where.append("team = ?")
            params.append(team)
        if user:
            where.append('"user" = ?')
            params.append(user)
        if session:
            where.append("session = ?")
            params.append(session)
        if since is not None:
            where.append("ts >= ?")
            params.append(day_start(since))
        sql = f"SELECT {select_columns()} FROM advice"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC"
        if limit is not None:
            if limit < 1:
                raise AuditError(f"limit must be at least 1, not {limit}")
            sql += f" LIMIT {int(limit)}"
        with self._read() as conn:
            return [decode(r) for r in self._rows(conn, sql, params)]

    def count(self) -> int:
        with self._read() as conn:
            return conn.execute("SELECT count(*) FROM advice").fetchone()[0]

    def iter_all(self, page: int = 500) -> Iterator[dict[str, Any]]:
        """Every row in chain order, decoded, fetched a page at a time (writers are not blocked meanwhile)."""
        after = 0
        while True:
            with self._read() as conn:
                batch = list(self._rows(conn, f"SELECT {select_columns()} FROM advice WHERE seq > ? "
                                              "ORDER BY seq LIMIT ?", (after, page)))
            if not batch:
                return
            for row in batch:
                yield decode(row)
            after = batch[-1]["seq"]

